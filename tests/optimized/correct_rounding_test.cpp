// Correct rounding of the kernels (optimized/error_bounds.h "ROUNDING TEST"): on the fly, f32, f16
// and bf16 data, every output is the reference's correctly rounded one, bit for bit.
//  - Sweep: every scaling type the kernels accept, both layouts, the three dtypes, every CPU kernel
//    (and CUDA where a device exists), positions 0–15, 2^k − 1, 2^k, 2^k + 1 and random ones up to
//    2^31 − 1 (check_against_exact asserts the bits for these cases).
//  - CellTest: the 16-bit kernels' rounding test at small and large magnitudes and at ties.
//  - ExactPair: the slow exact path itself (optimized/exact.h) against reference::apply on pairs the
//    fast path rarely sends it: ties at position 0 (A = 1.5: A·x is often a midpoint), exact zeros at
//    angle 0, (0, 0) pairs, IEEE special values, subnormal and large inputs, inverse direction.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "optimized/exact.h"
#include "optimized/plan.h"
#include "tests/optimized/kernel_test_support.h"

namespace ropecheck::kernels::testing {
namespace {

std::vector<std::int64_t> sampled_positions() {
  std::vector<std::int64_t> p;
  for (std::int64_t i = 0; i < 16; ++i) p.push_back(i);
  for (int k = 4; k <= 31; ++k) {
    const std::int64_t power = std::int64_t{1} << k;
    p.push_back(power - 1);
    if (k < 31) {
      p.push_back(power);
      p.push_back(power + 1);
    }
  }
  std::mt19937_64 rng(20261203);
  std::uniform_int_distribution<std::int64_t> any(0, 2147483647);
  for (int i = 0; i < 24; ++i) p.push_back(any(rng));
  return p;
}

std::vector<std::string> scalings() {
  std::string factors_short;
  std::string factors_long;
  for (int j = 0; j < 64; ++j) {
    factors_short += (j ? "/" : "") + std::to_string(1.0 + j * 0.01).substr(0, 4);
    factors_long += (j ? "/" : "") + std::to_string(1.0 + j * 0.25).substr(0, 5);
  }
  return {"scaling=none",
          "scaling=linear,factor=4",
          "scaling=ntk,factor=2",
          "scaling=dynamic,factor=2,original_max_position=4096,seq_len=16384",
          "scaling=yarn,factor=8,original_max_position=4096",
          "scaling=yarn,factor=16,original_max_position=4096,mscale=1,mscale_all_dim=0.5",
          "scaling=yarn,factor=8,original_max_position=4096,attention_factor=0.75",
          "scaling=yarn-ggml,freq_scale=0.25,original_max_position=4096",
          "scaling=llama3,factor=8,original_max_position=8192",
          "scaling=longrope,short_factor=" + factors_short + ",long_factor=" + factors_long + ",original_max_position=4096,seq_len=131072"};
}

class Sweep : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::string>> {};

TEST_P(Sweep, ReferenceBitsAtPositionsUpTo2To31) {
  const auto& [implementation, layout, dtype] = GetParam();
  if (unavailable(implementation)) GTEST_SKIP() << unavailable_message(implementation);
  for (const std::string& scaling : scalings()) {
    Case c;
    c.spec_text = "layout=" + layout + ",head_dim=128,base=500000," + scaling + ",dtype=" + dtype;
    c.positions = sampled_positions();
    c.tokens = static_cast<std::int64_t>(c.positions.size());
    c.heads = 2;
    SCOPED_TRACE(c.spec_text);
    const KernelRun run = run_case(c, implementation);
    ASSERT_EQ(run.status, ROPECHECK_OK);
    ASSERT_TRUE(is_correctly_rounded(c));
    check_against_exact(c, run);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Sweep,
                         ::testing::Combine(::testing::Values("scalar", "avx2", "avx512", "avx512bf16", "cuda"),
                                            ::testing::Values("half", "interleaved"), ::testing::Values("f32", "bf16", "f16", "f64")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" + std::get<2>(info.param);
                         });

// The spec texts of the small-case tests below: both layouts, the inverse direction, A = 0.75.
const char* const kSmallCaseSpecs[] = {
    "layout=half,base=500000", "layout=interleaved,base=10000,direction=inverse",
    "layout=half,base=500000,scaling=yarn,factor=8,original_max_position=4096,attention_factor=0.75"};

// Runs `c` (spec_text rest + head_dim 128 + dtype, sampled positions, 2 heads) on `implementation`
// and asserts the reference's bits on every output.
void check_small_case(Case c, const std::string& implementation, const std::string& rest, const std::string& dtype) {
  c.spec_text = rest + ",head_dim=128,dtype=" + dtype;
  c.positions = sampled_positions();
  c.tokens = static_cast<std::int64_t>(c.positions.size());
  c.heads = 2;
  SCOPED_TRACE(implementation + " " + c.spec_text + " e=" + std::to_string(c.magnitude_exponent));
  const KernelRun run = run_case(c, implementation);
  ASSERT_EQ(run.status, ROPECHECK_OK);
  ASSERT_TRUE(is_correctly_rounded(c));
  check_against_exact(c, run);
}

// The 16-bit kernels' cell test (optimized/error_bounds.h "ROUNDING TEST", THE CELL TEST) where its
// runs of binary32 patterns and the dtype's rounding cells part or meet: binary16 outputs around
// 2^-14 and among its subnormals (the kernels take the conversions' test there), bfloat16 outputs
// among binary32's subnormals and near 2^127, and ties at position 0 (A = 0.75: A·x is often a
// midpoint of the dtype, the lower or upper end of a run). Inputs scaled by 2^±e in alternate
// pairs (Case::magnitude_exponent; e keeps the large half finite). Every CPU kernel gives the
// reference's bits.
TEST(CellTest, ReferenceBitsAtTheEndsOfTheRanges) {
  for (const char* implementation : {"scalar", "avx2", "avx512", "avx512bf16"}) {
    if (unavailable(implementation)) continue;
    for (const char* dtype : {"f16", "bf16"}) {
      const std::vector<int> exponents = std::string(dtype) == "f16" ? std::vector<int>{10, 12, 14} : std::vector<int>{120, 126};
      for (const int e : exponents) {
        for (const char* rest : kSmallCaseSpecs) {
          Case c;
          c.magnitude_exponent = e;
          check_small_case(c, implementation, rest, dtype);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// Signed zero inputs (padding rows): every kernel gives the reference's signed zeros, whether
// kernel-inl.h zero_pair decides them from the table's signs or the exact path does (angle 0).
TEST(ZeroInputs, ReferenceBitsOfSignedZeros) {
  std::vector<double> zeros(128);
  for (std::size_t i = 0; i < zeros.size(); ++i) zeros[i] = (i * 7 / 3) % 2 ? -0.0 : 0.0;
  for (const char* implementation : {"scalar", "avx2", "avx512", "avx512bf16"}) {
    if (unavailable(implementation)) continue;
    for (const char* dtype : {"f32", "bf16", "f16", "f64"}) {
      for (const char* rest : kSmallCaseSpecs) {
        Case c;
        c.fixed_input = zeros;
        check_small_case(c, implementation, rest, dtype);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Inputs of the dtype that reach the exact path's special branches, and random ones.
std::vector<double> hard_inputs(Dtype dtype, std::mt19937_64& rng) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 0.75, 3.0, 1.0 / 3.0, inf, -inf, std::nan(""), 0x1p-20, 65504.0, 1e-6};
  std::uniform_real_distribution<double> uniform(-4.0, 4.0);
  for (int i = 0; i < 24; ++i) v.push_back(uniform(rng));
  for (double& x : v) x = reference::round_to_format(x, dtype);
  return v;
}

TEST(ExactPair, GivesTheReferenceBits) {
  std::mt19937_64 rng(53);
  for (const char* dtype : {"f32", "bf16", "f16", "f64"}) {
    for (const char* spec_text : {"layout=half,head_dim=4,base=10000", "layout=half,head_dim=4,base=10000,direction=inverse",
                                  "layout=interleaved,head_dim=4,base=500000,scaling=yarn,factor=8,"
                                  "original_max_position=4096,attention_factor=1.5",
                                  "layout=half,head_dim=4,base=500000,scaling=llama3,factor=8,original_max_position=8192"}) {
      const Spec spec = parse_spec(std::string(spec_text) + ",dtype=" + dtype);
      SCOPED_TRACE(to_string(spec));
      const Plan plan(spec);
      const PlanView view = plan.view();
      const std::vector<double> inputs = hard_inputs(spec.dtype, rng);
      for (std::int64_t position : {std::int64_t{0}, std::int64_t{1}, std::int64_t{4097}, std::int64_t{2147483647}}) {
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          for (std::size_t k = 0; k < inputs.size(); k += 3) {
            const double x = inputs[i];
            const double y = inputs[(i + k) % inputs.size()];
            // one token, one head: pair 0 is (x, y), pair 1 is (y, x) in both layouts
            const std::vector<double> input = {x, y, y, x};
            const std::vector<std::int64_t> positions = {position};
            const std::vector<double> expected = reference::apply(spec, {1, 1, 4}, positions, input);
            for (int j = 0; j < 2; ++j) {
              const auto dims = reference::pair_dims(spec, j);
              double a = 0;
              double b = 0;
              exact_pair(view, positions.data(), j, input[static_cast<std::size_t>(dims.first)],
                         input[static_cast<std::size_t>(dims.second)], a, b);
              EXPECT_TRUE(same_value(a, expected[static_cast<std::size_t>(dims.first)]) &&
                          same_value(b, expected[static_cast<std::size_t>(dims.second)]))
                  << "pair " << j << " at position " << position << ": (" << reference::to_hex(a) << ", " << reference::to_hex(b)
                  << ") instead of (" << reference::to_hex(expected[dims.first]) << ", " << reference::to_hex(expected[dims.second])
                  << ") for (" << reference::to_hex(input[dims.first]) << ", " << reference::to_hex(input[dims.second]) << ")";
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ropecheck::kernels::testing
