// Position sweep per kernel: every small position, then log-spaced ones (2^k − 1, 2^k, 2^k + 1)
// and random ones up to 2^31 − 1, every pair index of a Llama-3-like head (head_dim 128,
// base 500000). The error must stay within optimized/error_bounds.h's bound at every position —
// i.e. it does not grow with position, unlike the float32 recipe (docs/rope.md §5).
#include <gtest/gtest.h>

#include <random>

#include "tests/optimized/kernel_test_support.h"

namespace ropecheck::kernels::testing {
namespace {

std::vector<std::int64_t> sweep_positions() {
  std::vector<std::int64_t> p;
  for (std::int64_t i = 0; i < 64; ++i) p.push_back(i);
  for (int k = 6; k <= 31; ++k) {
    const std::int64_t power = std::int64_t{1} << k;
    p.push_back(power - 1);
    if (k < 31) {
      p.push_back(power);
      p.push_back(power + 1);
    }
  }
  std::mt19937_64 rng(20240531);
  std::uniform_int_distribution<std::int64_t> any(0, 2147483647);
  for (int i = 0; i < 60; ++i) p.push_back(any(rng));
  return p;
}

class Sweep : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(Sweep, ErrorStaysWithinBoundUpToPosition2To31) {
  const auto& [implementation, dtype] = GetParam();
  if (unavailable(implementation)) GTEST_SKIP() << unavailable_message(implementation);
  Case c;
  c.spec_text = "layout=half,head_dim=128,base=500000,dtype=" + dtype;
  c.positions = sweep_positions();
  c.tokens = static_cast<std::int64_t>(c.positions.size());
  const KernelRun run = run_case(c, implementation);
  ASSERT_EQ(run.status, ROPECHECK_OK);
  check_against_exact(c, run);
}

INSTANTIATE_TEST_SUITE_P(All, Sweep,
                         ::testing::Combine(::testing::Values("scalar", "avx2", "avx512", "avx512bf16", "cuda"),
                                            ::testing::Values("f32", "bf16", "f16", "f64")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
}  // namespace ropecheck::kernels::testing
