// The exact reference: the three forms agree, apply() is correctly rounded (against MPFR's own
// rounding of a 1024-bit evaluation), special values follow the documented IEEE policy, and the
// f32-recipe model matches an independent long-double evaluation of that recipe.
#include "reference/rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reference/rounding.h"
#include "tests/reference/mpfr_oracle.h"

namespace ropecheck {
namespace {

using reference::Real;

std::vector<double> random_inputs(std::size_t n, Dtype dtype, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> out(n);
  for (double& v : out) v = reference::round_to_format(uniform(rng) * scale, dtype);
  return out;
}

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// Largest |angle| over the tokens and pairs of a call (for the forms' error bound).
double largest_angle(const Spec& spec, const std::vector<std::int64_t>& positions) {
  double largest = 0;
  const int components = position_components(spec);
  for (std::size_t t = 0; t * components < positions.size(); ++t) {
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      std::span<const std::int64_t> tuple(positions.data() + t * components, components);
      largest = std::max(largest, std::fabs(static_cast<double>(reference::angle(spec, tuple, j, 64))));
    }
  }
  return largest;
}

struct FormsCase {
  std::string spec;
  std::vector<std::int64_t> positions;
};

class FormsAgree : public ::testing::TestWithParam<FormsCase> {};

// The three forms share only the frequency schedule. Each evaluates cos/sin of p·θ̃ (same θ̃) with
// relative errors ≈ 2^-P per operation; the angle route loses |a|·2^-P and the repeated squaring of
// the complex form ≈ 2·|a|·2^-P, so they agree within 2^-(P-8)·(1 + |a|)·ρ·(attention factor ≤ 2):
// the 2^8 covers the few roundings of each route and the sums of the matrix form.
TEST_P(FormsAgree, WithinTwoToTheMinusPMinus8) {
  const Spec spec = parse_spec(GetParam().spec);
  const auto& positions = GetParam().positions;
  const std::int64_t tokens = static_cast<std::int64_t>(positions.size()) / position_components(spec);
  const reference::Shape shape{tokens, 2, spec.head_dim};
  const std::vector<double> input = random_inputs(shape.elements(), Dtype::f64, 11);
  const double growth = 1 + largest_angle(spec, positions);
  for (int bits : {128, 256}) {
    const auto matrix = reference::rotate_exact(spec, shape, positions, input, bits, reference::Form::matrix);
    const auto complex = reference::rotate_exact(spec, shape, positions, input, bits, reference::Form::complex);
    const auto elementwise = reference::rotate_exact(spec, shape, positions, input, bits, reference::Form::elementwise);
    reference::PrecisionScope scope(bits);
    const Real tolerance = ldexp(Real(growth * 2), -(bits - 8));  // × ρ ≤ 2 for inputs in [-1, 1]²
    for (std::size_t i = 0; i < matrix.size(); ++i) {
      ASSERT_LE(abs(matrix[i] - elementwise[i]), tolerance) << "matrix vs elementwise at " << i << ", P=" << bits;
      ASSERT_LE(abs(complex[i] - elementwise[i]), tolerance) << "complex vs elementwise at " << i << ", P=" << bits;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Specs, FormsAgree,
    ::testing::Values(
        FormsCase{"layout=interleaved,head_dim=8,base=10000,dtype=f64", {0, 1, 2, 1000}},
        FormsCase{"layout=half,head_dim=10,rotary_dim=6,base=500000,dtype=f32", {3, 65535, 1 << 20}},
        FormsCase{"layout=half,head_dim=8,base=10000,dtype=f32,direction=inverse", {-5, 0, 77}},
        FormsCase{"layout=interleaved,head_dim=8,base=10000,dtype=f32,axes=2d", {1, 2, 30, 40}},
        FormsCase{"layout=half,head_dim=12,base=10000,dtype=bf16,axes=mrope,sections=1/2/3", {1, 2, 3, 7, 8, 9}},
        FormsCase{"layout=half,head_dim=8,base=1000000,dtype=f32,scaling=yarn,factor=4,original_max_position=32768",
                  {0, 5, 40000}}));

// apply() against an independent oracle: the elementwise form at 1024 bits rounded by MPFR.
void expect_correctly_rounded(const Spec& spec, const std::vector<std::int64_t>& positions,
                              const std::vector<double>& input, int precision = 256) {
  const std::int64_t tokens = static_cast<std::int64_t>(positions.size()) / position_components(spec);
  const std::int64_t heads = static_cast<std::int64_t>(input.size()) / (tokens * spec.head_dim);
  const reference::Shape shape{tokens, heads, spec.head_dim};
  reference::Options options;
  options.precision_bits = precision;
  const auto got = reference::apply(spec, shape, positions, input, options);
  const auto exact = reference::rotate_exact(spec, shape, positions, input, 1024, reference::Form::elementwise);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double expected = testing::oracle_round(exact[i], spec.dtype);
    ASSERT_TRUE(same_value(got[i], expected)) << to_string(spec) << " element " << i << " got "
                                              << reference::to_hex(got[i]) << " expected " << reference::to_hex(expected);
  }
}

TEST(Apply, CorrectlyRoundedEveryDtypeAndLayout) {
  for (const char* layout : {"interleaved", "half"}) {
    for (Dtype dtype : {Dtype::f64, Dtype::f32, Dtype::f16, Dtype::bf16}) {
      const Spec spec = parse_spec(std::string("layout=") + layout + ",head_dim=16,rotary_dim=12,base=10000,dtype=" +
                                   std::string(name(dtype)));
      const std::vector<std::int64_t> positions = {0, 1, 7, 4095, 65536, 2147483647, std::int64_t{1} << 40};
      expect_correctly_rounded(spec, positions, random_inputs(positions.size() * 3 * 16, dtype, 21));
    }
  }
}

TEST(Apply, LowWorkingPrecisionGivesTheSameRoundedResult) {
  // At 64 bits the fast path's bound is ≈ 2^-51 and the Ziv loop must raise the precision often.
  const Spec spec = parse_spec("layout=half,head_dim=32,base=500000,dtype=f32");
  const std::vector<std::int64_t> positions = {1, 1000000, 2000000000};
  expect_correctly_rounded(spec, positions, random_inputs(positions.size() * 32, Dtype::f32, 5), 64);
  const Spec f64 = parse_spec("layout=half,head_dim=8,base=10000,dtype=f64");
  expect_correctly_rounded(f64, {3, 123456789}, random_inputs(16, Dtype::f64, 6), 64);
}

TEST(Apply, ColdPathMagnitudesAndScalings) {
  // Magnitudes outside the fast path's range (|x| < 2^-900) go through the MPFR Ziv loop.
  const Spec f64 = parse_spec("layout=interleaved,head_dim=4,base=10000,dtype=f64");
  std::vector<double> tiny = random_inputs(8, Dtype::f64, 9);
  for (double& v : tiny) v = std::ldexp(v, -1000);
  expect_correctly_rounded(f64, {5, 6}, tiny);
  std::vector<double> huge = random_inputs(8, Dtype::f64, 10);
  for (double& v : huge) v = std::ldexp(v, 1000);
  expect_correctly_rounded(f64, {5, 6}, huge);
  // Subnormal f32 inputs and every scaling type.
  std::vector<double> subnormal = random_inputs(16, Dtype::f32, 12);
  for (double& v : subnormal) v = reference::round_to_format(std::ldexp(v, -130), Dtype::f32);
  expect_correctly_rounded(parse_spec("layout=half,head_dim=8,base=10000,dtype=f32"), {1, 99}, subnormal);
  for (const char* scaling :
       {"scaling=linear,factor=4", "scaling=ntk,factor=8", "scaling=dynamic,factor=2,original_max_position=4096,seq_len=9000",
        "scaling=yarn,factor=4,original_max_position=32768,mscale=0.707,mscale_all_dim=1",
        "scaling=yarn-ggml,freq_scale=0.25,original_max_position=4096,ext_factor=1",
        "scaling=llama3,factor=8,original_max_position=8192",
        "scaling=longrope,short_factor=1/1.5/2/3,long_factor=2/4/8/16,original_max_position=4096,seq_len=8000,factor=32"}) {
    const Spec spec = parse_spec(std::string("layout=half,head_dim=8,base=500000,dtype=bf16,") + scaling);
    expect_correctly_rounded(spec, {0, 17, 131072}, random_inputs(3 * 8, Dtype::bf16, 13));
  }
}

TEST(Apply, TiesAtPositionZeroRoundToEven) {
  // Inputs that are not values of the dtype land exactly on ties at position 0 (cos = 1, sin = 0):
  // the Ziv loop cannot decide and must fall back on the exact computed value.
  const Spec spec = parse_spec("layout=interleaved,head_dim=2,base=10000,dtype=f32");
  const double tie_down = 1.0 + std::ldexp(1.0, -24);      // between 1 and 1 + 2^-23: even is 1
  const double tie_up = 1.0 + 3 * std::ldexp(1.0, -24);    // between 1 + 2^-23 and 1 + 2^-22: even is the latter
  const auto out = reference::apply(spec, {1, 1, 2}, std::vector<std::int64_t>{0}, std::vector<double>{tie_down, tie_up});
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], 1.0 + std::ldexp(1.0, -22));
}

TEST(Apply, ExactZeroOutputsAtPositionZeroAreSignedAndFast) {
  // (0, y) at position 0: the first output is 0·1 − y·(+0) = +0 − (±0), exactly zero, IEEE sign;
  // the second is 0·(+0) + y·1 = y. With an attention factor the nonzero one is rounded.
  const Spec spec = parse_spec("layout=interleaved,head_dim=4,rotary_dim=2,base=10000,dtype=f32");
  const std::vector<double> input = {0.0, 3.0, -0.0, -0.0, 5.0, -0.0, -0.0, 2.5};
  const auto out = reference::apply(spec, {1, 2, 4}, std::vector<std::int64_t>{0}, input);
  EXPECT_TRUE(same_value(out[0], 0.0));   // +0 − (3·+0) = +0 − +0 = +0
  EXPECT_EQ(out[1], 3.0);
  EXPECT_TRUE(same_value(out[2], -0.0));  // pass-through dims unchanged
  EXPECT_TRUE(same_value(out[4], 5.0));
  EXPECT_TRUE(same_value(out[5], 0.0));   // 5·(+0) + (−0)·1 = +0 + −0 = +0
  EXPECT_TRUE(same_value(out[6], -0.0));
  EXPECT_EQ(out[7], 2.5);
  const Spec scaled = parse_spec(
      "layout=interleaved,head_dim=2,base=10000,dtype=bf16,scaling=yarn,factor=4,original_max_position=4096");
  expect_correctly_rounded(scaled, {0, 0}, {0.0, 3.0, -2.0, -0.0});
}

TEST(Apply, IssueExampleCosSinOfOne) {
  // cos(1) and sin(1) rounded to binary64 (values from the issue; any libm agrees).
  const Spec spec = parse_spec("layout=interleaved,head_dim=2,base=10000,dtype=f64");
  const auto out = reference::apply(spec, {1, 1, 2}, std::vector<std::int64_t>{1}, std::vector<double>{1.0, 0.0});
  EXPECT_EQ(out[0], 0x1.14a280fb5068cp-1);
  EXPECT_EQ(out[1], 0x1.aed548f090ceep-1);
}

TEST(Apply, SpecialValuesFollowIeeeArithmeticOfTheFormula) {
  const Spec spec = parse_spec("layout=interleaved,head_dim=6,rotary_dim=4,base=10000,dtype=f32");
  const double inf = INFINITY, nan = NAN;
  // token 0 at position 0, token 1 at position 1.
  const std::vector<double> input = {nan, 1.0, inf, 1.0, -0.0, nan,    //
                                     -0.0, 0.0, 0.0, -inf, 2.0, -0.0};
  const auto out = reference::apply(spec, {2, 1, 6}, std::vector<std::int64_t>{0, 1}, input);
  EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1]));  // NaN in a pair ⇒ NaN in both outputs
  EXPECT_EQ(out[2], inf);                                  // inf·cos0 − 1·sin0 = inf
  EXPECT_TRUE(std::isnan(out[3]));                         // inf·sin0 = inf·0 = NaN
  EXPECT_TRUE(same_value(out[4], -0.0));                   // pass-through: bit for bit
  EXPECT_TRUE(std::isnan(out[5]));
  // (−0, +0) at angle 1: out0 = (−0)c − (+0)s = −0 − +0 = −0; out1 = (−0)s + (+0)c = −0 + +0 = +0.
  EXPECT_TRUE(same_value(out[6], -0.0));
  EXPECT_TRUE(same_value(out[7], 0.0));
  // (0, −inf) at angle θ_1·1 (cos, sin > 0): out0 = 0 − (−inf)s = +inf, out1 = 0 + (−inf)c = −inf.
  EXPECT_EQ(out[8], inf);
  EXPECT_EQ(out[9], -inf);
  EXPECT_TRUE(same_value(out[10], 2.0));
  EXPECT_TRUE(same_value(out[11], -0.0));
}

TEST(Apply, F16OverflowFromSqrtTwoGrowth) {
  // x = y = 60000 at an angle near π/4: x·sin + y·cos ≈ 84853 > 65504 rounds to +Inf (docs/rope.md §5).
  const Spec spec = parse_spec("layout=interleaved,head_dim=2,base=10000,dtype=f16");
  std::int64_t position = 0;
  double best = 0;
  for (std::int64_t p = 1; p < 1000; ++p) {
    const double score = std::cos(static_cast<double>(p) - M_PI / 4);
    if (score > best) best = score, position = p;
  }
  ASSERT_GT(best, 0.99);
  const std::vector<double> input = {60000.0, 60000.0};
  const auto out = reference::apply(spec, {1, 1, 2}, std::vector<std::int64_t>{position}, input);
  EXPECT_EQ(out[1], INFINITY);
  expect_correctly_rounded(spec, {position}, input);
}

TEST(Apply, F32RecipeMatchesAnIndependentLongDoubleRecipe) {
  // The recipe: θ in f32, p in f32, RN32(p·θ), exact cos/sin of that angle, one final rounding.
  // Here cos/sin are long double (error ≤ 2^-62 for these angles), so the reference must be within
  // half an f32 ulp of the long-double rotation plus 2^-60·ρ.
  const Spec spec = parse_spec("layout=interleaved,head_dim=8,base=10000,dtype=f32");
  const std::vector<std::int64_t> positions = {1, 100, 70000, 1000003};
  const auto input = random_inputs(positions.size() * 8, Dtype::f32, 31);
  reference::Options recipe;
  recipe.model = reference::Model::f32_recipe;
  const auto got = reference::apply(spec, {4, 1, 8}, positions, input, recipe);
  const auto exact = reference::apply(spec, {4, 1, 8}, positions, input);
  double largest_difference = 0;
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (int j = 0; j < 4; ++j) {
      const float theta = static_cast<float>(std::pow(10000.0L, -2.0L * j / 8));
      const float angle = static_cast<float>(positions[t]) * theta;  // one f32 rounding of the product
      const long double c = std::cos(static_cast<long double>(angle));
      const long double s = std::sin(static_cast<long double>(angle));
      const double x = input[t * 8 + 2 * j], y = input[t * 8 + 2 * j + 1];
      const long double rho = std::sqrt(static_cast<long double>(x) * x + static_cast<long double>(y) * y);
      const long double a = x * c - y * s, b = x * s + y * c;
      EXPECT_LE(std::fabs(got[t * 8 + 2 * j] - a), reference::ulp(got[t * 8 + 2 * j], Dtype::f32) / 2 + rho * 0x1p-60L);
      EXPECT_LE(std::fabs(got[t * 8 + 2 * j + 1] - b), reference::ulp(got[t * 8 + 2 * j + 1], Dtype::f32) / 2 + rho * 0x1p-60L);
      largest_difference = std::max(largest_difference, std::fabs(got[t * 8 + 2 * j] - exact[t * 8 + 2 * j]));
    }
  }
  // At position 1000003 the f32 angle is off by up to ≈ 2^-5 rad: the models must differ visibly.
  EXPECT_GT(largest_difference, 1e-4);
}

TEST(Apply, RejectsMismatchedSizes) {
  const Spec spec = parse_spec("layout=half,head_dim=4,base=10000");
  EXPECT_THROW(reference::apply(spec, {1, 1, 4}, std::vector<std::int64_t>{0}, std::vector<double>(3)),
               std::invalid_argument);
  EXPECT_THROW(reference::apply(spec, {2, 1, 4}, std::vector<std::int64_t>{0}, std::vector<double>(8)),
               std::invalid_argument);
  EXPECT_THROW(reference::apply(spec, {1, 1, 6}, std::vector<std::int64_t>{0}, std::vector<double>(6)),
               std::invalid_argument);
}

}  // namespace
}  // namespace ropecheck
