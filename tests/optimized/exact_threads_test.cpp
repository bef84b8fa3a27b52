// optimized/exact.h exact_pair takes no lock: two threads calling it at once get the bits one
// thread gets, for every dtype (scripts/ci-sanitize runs this under ThreadSanitizer too).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "optimized/exact.h"
#include "optimized/plan.h"
#include "spec/spec.h"

namespace ropecheck::kernels {
namespace {

// Pairs of one token each near 2^31 (every pair index, inputs of the dtype), `shift` apart per thread.
std::vector<double> outputs(const PlanView& view, int shift) {
  std::vector<double> out;
  for (int i = 0; i < 300; ++i) {
    const std::int64_t position = 2147483647 - std::int64_t{i} * 7919 - shift;
    double a = 0, b = 0;
    exact_pair(view, &position, i % 64, 1.0 + i / 256.0, -0.25, a, b);
    out.push_back(a);
    out.push_back(b);
  }
  return out;
}

TEST(ExactPair, ThreadsAtOnceGetTheBitsOfOne) {
  const std::pair<const char*, DtypeCode> dtypes[] = {
      {"bf16", DtypeCode::bf16}, {"f16", DtypeCode::f16}, {"f32", DtypeCode::f32}, {"f64", DtypeCode::f64}};
  for (const auto& [dtype, code] : dtypes) {
    SCOPED_TRACE(dtype);
    const Spec spec = parse_spec(
        std::string("layout=half,head_dim=128,base=500000,scaling=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,"
                    "original_max_position=8192,dtype=") +
        dtype);
    const std::shared_ptr<const ExactPath> path = make_exact_path(spec);
    const std::vector<std::int32_t> component(64, 0);
    PlanView view{};
    view.exact = path.get();
    view.component = component.data();
    view.dtype = code;
    const std::vector<double> alone0 = outputs(view, 0), alone1 = outputs(view, 1);
    std::vector<double> together0, together1;
    std::thread first([&] { together0 = outputs(view, 0); });
    std::thread second([&] { together1 = outputs(view, 1); });
    first.join();
    second.join();
    EXPECT_EQ(together0, alone0);
    EXPECT_EQ(together1, alone1);
  }
}

}  // namespace
}  // namespace ropecheck::kernels
