// The pair rule (judge/pair_rule.h) on hand-made pairs: the metric, each decision of
// judge/README.md "The pair rule", and the domains. Expected values are worked out by hand from
// the formats' definitions (IEEE 754), never from the code under test.
#include "judge/pair_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ropecheck::judge {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

PairRule rule(Dtype dtype, double tolerance, bool strict_zeros = false) {
  PairRule r;
  r.dtype = dtype;
  r.tolerance = Tolerance{Tolerance::Kind::e, tolerance, 0, "test"};
  r.strict_zeros = strict_zeros;
  return r;
}

Pair pair(double x, double y, double a, double b, long double exact_a, long double exact_b, double rounded_a, double rounded_b) {
  Pair p;
  p.x = x, p.y = y, p.a = a, p.b = b;
  p.exact_a = exact_a, p.exact_b = exact_b;
  p.rounded_a = rounded_a, p.rounded_b = rounded_b;
  return p;
}

TEST(Metric, NormwiseInUnitsOfURho) {
  // Input (3, 4): ρ = 5. An error of 5·2^-24 in one component is e = 1 for f32 (dyadic values, exact).
  const double a = 0.75 + 5 * std::ldexp(1.0, -24);
  EXPECT_EQ(normwise_error(a, 0.5, 0.75L, 0.5L, 3.0, 4.0, Dtype::f32), 1.0);
  // The attention factor g scales the unit when |g| > 1.
  EXPECT_EQ(normwise_error(a, 0.5, 0.75L, 0.5L, 3.0, 4.0, Dtype::f32, 2.0), 0.5);
  // ρ = 0: exact zeros are e = 0, anything else is infinitely far.
  EXPECT_EQ(normwise_error(-0.0, 0.0, 0.0L, 0.0L, 0.0, 0.0, Dtype::f32), 0.0);
  EXPECT_EQ(normwise_error(0x1p-149, 0.0, 0.0L, 0.0L, 0.0, 0.0, Dtype::f32), kInf);
}

TEST(Domains, FromTheInputsAlone) {
  EXPECT_EQ(domain_of(1.0, kNaN, Dtype::f32, 1), Domain::special_input);
  EXPECT_EQ(domain_of(-kInf, 0.0, Dtype::f16, 1), Domain::special_input);
  // f16: largest 65504; √2·ρ above it is near overflow. (46000, 0): √2·46000 = 65054 < 65504;
  // (47000, 0): 66468 > 65504.
  EXPECT_EQ(domain_of(46000, 0, Dtype::f16, 1), Domain::ordinary);
  EXPECT_EQ(domain_of(47000, 0, Dtype::f16, 1), Domain::near_overflow);
  // ... and an attention factor g > 1 scales the outputs: (46000, 0) with g = 1.1 is near overflow.
  EXPECT_EQ(domain_of(46000, 0, Dtype::f16, 1.1), Domain::near_overflow);
  // f32's smallest normal is 2^-126: ρ below it is subnormal; ρ = 0 too.
  EXPECT_EQ(domain_of(0x1p-127, 0x1p-127, Dtype::f32, 1), Domain::subnormal);  // ρ = 2^-126.5
  EXPECT_EQ(domain_of(0x1p-126, 0, Dtype::f32, 1), Domain::ordinary);
  EXPECT_EQ(domain_of(0.0, -0.0, Dtype::f32, 1), Domain::subnormal);
}

TEST(PairRule, WithinToleranceAndOut) {
  // (3, 4) rotated to (0.75, 0.5)·... as above: e = 1 passes e <= 1 and fails e <= 0.5.
  const double a = 0.75 + 5 * std::ldexp(1.0, -24);
  const Pair p = pair(3, 4, a, 0.5, 0.75L, 0.5L, 0.75, 0.5);
  const PairVerdict ok = judge_pair(p, rule(Dtype::f32, 1));
  EXPECT_TRUE(ok.pass());
  EXPECT_TRUE(ok.measured);
  EXPECT_EQ(ok.e, 1.0);
  EXPECT_EQ(ok.domain, Domain::ordinary);
  const PairVerdict bad = judge_pair(p, rule(Dtype::f32, 0.5));
  EXPECT_EQ(bad.failure, Failure::tolerance);
  EXPECT_NE(bad.message.find("e = 1 > 0.5"), std::string::npos) << bad.message;
}

TEST(PairRule, SignedZerosCompareEqualUnlessStrict) {
  // Input (1, 0) at an angle where the exact first component is 0 and the rounded one is +0: a
  // candidate's −0 is the same number.
  const Pair p = pair(1, 0, -0.0, 1.0, 0.0L, 1.0L, 0.0, 1.0);
  EXPECT_TRUE(judge_pair(p, rule(Dtype::f32, 4)).pass());
  const PairVerdict strict = judge_pair(p, rule(Dtype::f32, 4, true));
  EXPECT_EQ(strict.failure, Failure::signed_zero);
  EXPECT_NE(strict.message.find("--strict-zeros"), std::string::npos);
  // The same with special inputs: NaN in the other component.
  const Pair special = pair(kInf, 0, kInf, -0.0, 0.0L, 0.0L, kInf, 0.0);
  EXPECT_TRUE(judge_pair(special, rule(Dtype::f32, 4)).pass());
  EXPECT_EQ(judge_pair(special, rule(Dtype::f32, 4, true)).failure, Failure::signed_zero);
}

TEST(PairRule, SpecialInputsMustMatchTheClass) {
  const Pair nan_in = pair(kNaN, 1, kNaN, kNaN, 0.0L, 0.0L, kNaN, kNaN);
  EXPECT_TRUE(judge_pair(nan_in, rule(Dtype::f32, 4)).pass());
  Pair wrong = nan_in;
  wrong.b = 1.0;  // a number where the IEEE policy gives NaN
  const PairVerdict v = judge_pair(wrong, rule(Dtype::f32, 4));
  EXPECT_EQ(v.failure, Failure::special_value);
  EXPECT_EQ(v.domain, Domain::special_input);
  EXPECT_FALSE(v.measured);
  EXPECT_NE(v.message.find("special values disagree"), std::string::npos);
}

TEST(PairRule, OverflowAtTheThresholdIsJudgedByTheTolerance) {
  // f16: the largest value is 65504, and values from 65520 = 65504 + ulp/2 round to +Inf.
  // Input (46000, 0): ρ = 46000, u·ρ = 2^-11·46000 = 22.46. An exact 65510 rounds to 65504; +Inf
  // is within e = 4 of it (65510 + 4·22.46 ≥ 65520), not within e = 0.25 (65510 + 5.6 < 65520).
  const Pair inf = pair(46000, 0, kInf, 0, 65510.0L, 0.0L, 65504, 0);
  const PairVerdict ok = judge_pair(inf, rule(Dtype::f16, 4));
  EXPECT_TRUE(ok.pass()) << ok.message;
  EXPECT_TRUE(ok.measured);
  EXPECT_NEAR(ok.e, 10.0 / (46000 * std::ldexp(1.0, -11)), 1e-12);  // its least error: 65520 − 65510
  EXPECT_EQ(judge_pair(inf, rule(Dtype::f16, 0.25)).failure, Failure::special_value);
  // −Inf for a positive value never passes; +Inf far from the threshold neither.
  EXPECT_EQ(judge_pair(pair(46000, 0, -kInf, 0, 65510.0L, 0.0L, 65504, 0), rule(Dtype::f16, 4)).failure, Failure::special_value);
  EXPECT_EQ(judge_pair(pair(46000, 0, kInf, 0, 30000.0L, 0.0L, 30000, 0), rule(Dtype::f16, 4)).failure, Failure::special_value);
  // The other way round: the exact 65530 rounds to +Inf, a finite 65504 is 26 away: e = 1.16.
  const PairVerdict finite = judge_pair(pair(46000, 0, 65504, 0, 65530.0L, 0.0L, kInf, 0), rule(Dtype::f16, 4));
  EXPECT_TRUE(finite.pass()) << finite.message;
  EXPECT_NEAR(finite.e, 26.0 / (46000 * std::ldexp(1.0, -11)), 1e-12);
  EXPECT_EQ(judge_pair(pair(46000, 0, 65504, 0, 65530.0L, 0.0L, kInf, 0), rule(Dtype::f16, 1)).failure, Failure::tolerance);
}

TEST(PairRule, NaNWhereANumberIsExpectedIsASpecialValueFailure) {
  const PairVerdict v = judge_pair(pair(3, 4, kNaN, 0.5, 0.75L, 0.5L, 0.75, 0.5), rule(Dtype::f32, 1e30));
  EXPECT_EQ(v.failure, Failure::special_value);
  EXPECT_EQ(v.domain, Domain::ordinary);
  EXPECT_FALSE(v.measured);
}

TEST(PairRule, GradualUnderflowAllowance) {
  // f32, ρ = 2^-140 (subnormal): exact (2^-140, 0). Quanta 2^(emin−p) = 2^-150: three of them
  // (the careful evaluation's two products and difference) are allowed besides e·u·ρ = 4·2^-164.
  const double x = 0x1p-140;
  const long double exact = 0x1p-140L;
  const PairVerdict within = judge_pair(pair(x, 0, x + 0x1p-149, 0, exact, 0.0L, x, 0), rule(Dtype::f32, 4));
  EXPECT_TRUE(within.pass()) << within.message;  // 2^-149 = 2 quanta
  EXPECT_EQ(within.domain, Domain::subnormal);
  const PairVerdict beyond = judge_pair(pair(x, 0, x + 0x1p-147, 0, exact, 0.0L, x, 0), rule(Dtype::f32, 4));
  EXPECT_EQ(beyond.failure, Failure::tolerance);  // 2^-147 = 8 quanta
  // Four quanta pass under the f32-recipe model's four roundings, not under the exact model's three.
  PairRule recipe = rule(Dtype::f32, 4);
  recipe.underflow_roundings = underflow_roundings(Model::f32_recipe);
  const Pair four = pair(x, 0, x + 0x1p-148, 0, exact, 0.0L, x, 0);
  EXPECT_EQ(judge_pair(four, rule(Dtype::f32, 4)).failure, Failure::tolerance);
  EXPECT_TRUE(judge_pair(four, recipe).pass());
}

TEST(PairRule, ToleranceGrowingWithTheAngle) {
  PairRule r = rule(Dtype::f32, 1);
  r.tolerance.per_radian = 0.5;
  const double a = 0.75 + 10 * std::ldexp(1.0, -24);  // e = 2
  Pair p = pair(3, 4, a, 0.5, 0.75L, 0.5L, 0.75, 0.5);
  p.angle = 1;  // allowed 1.5
  EXPECT_EQ(judge_pair(p, r).failure, Failure::tolerance);
  p.angle = -2;  // |angle|: allowed 2
  EXPECT_TRUE(judge_pair(p, r).pass());
  EXPECT_EQ(judge_pair(p, r).allowed, 2.0);
}

TEST(PassThrough, BitForBitWithZerosEqualUnlessStrict) {
  EXPECT_TRUE(passthrough_matches(1.5, 1.5, Dtype::f32, false));
  EXPECT_FALSE(passthrough_matches(1.5, 0x1.8p0 + 0x1p-23, Dtype::f32, false));
  EXPECT_TRUE(passthrough_matches(kNaN, kNaN, Dtype::bf16, false));
  EXPECT_TRUE(passthrough_matches(-0.0, 0.0, Dtype::f16, false));
  EXPECT_FALSE(passthrough_matches(-0.0, 0.0, Dtype::f16, true));
  // not a value of the dtype: never the input
  EXPECT_FALSE(passthrough_matches(1 + 0x1p-30, 1.0, Dtype::f32, false));
}

}  // namespace
}  // namespace ropecheck::judge

namespace ropecheck::judge {
namespace {

// screen_pair (pair_rule.h) against judge_pair on random pairs of every 16- and 32-bit dtype:
// rotations of random inputs at random angles, the exact values in long double, candidates
// correctly rounded, a few ulps off, or far off, tolerances around their e, attention factors,
// both tolerance kinds. Whenever it is sure, judge_pair passes an ordinary, measured pair; its
// bounds always hold; its ulp and allowed are judge_pair's; and it is sure of most careful pairs.
// Whenever it is sure of a failure, judge_pair finds that tolerance failure.
TEST(PairScreen, NeverDisagreesWithTheRuleAndBoundsWhatItMeasures) {
  std::uint64_t state = 0x5eed;
  const auto next = [&state] {  // SplitMix64
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  const auto unit = [&next] { return static_cast<double>(next() >> 11) * 0x1p-53; };
  const auto round_to = [](long double v, Dtype dtype) {
    const double d = static_cast<double>(v);
    if (dtype == Dtype::f32) return static_cast<double>(static_cast<float>(v));
    const int p = dtype == Dtype::f16 ? 11 : 8;  // normal range only: the inputs below stay there
    int e = 0;
    std::frexp(d, &e);
    return std::ldexp(std::nearbyint(std::ldexp(d, p - e)), e - p);
  };
  int sure = 0, sure_fail = 0, careful = 0;
  for (int i = 0; i < 200000; ++i) {
    const Dtype dtype = i % 3 == 0 ? Dtype::f32 : (i % 3 == 1 ? Dtype::bf16 : Dtype::f16);
    const double magnitude = std::ldexp(1.0, static_cast<int>(next() % 12) - 6);
    const double x = round_to(magnitude * (2 * unit() - 1), dtype), y = round_to(magnitude * (2 * unit() - 1), dtype);
    const long double angle = 7.0L * unit(), g = i % 7 == 0 ? 1.5L : 1.0L;
    const long double exact_a = (x * std::cos(angle) - y * std::sin(angle)) * g;
    const long double exact_b = (x * std::sin(angle) + y * std::cos(angle)) * g;
    const double rounded_a = round_to(exact_a, dtype), rounded_b = round_to(exact_b, dtype);
    const int kind = static_cast<int>(next() % 4);  // correctly rounded, a few ulps off, far off, one output NaN
    const double u = std::ldexp(1.0, dtype == Dtype::f32 ? -24 : (dtype == Dtype::bf16 ? -8 : -11));
    double a = rounded_a, b = rounded_b;
    if (kind == 1) a = round_to(rounded_a + (static_cast<double>(next() % 7) - 3) * u * std::fabs(rounded_a), dtype);
    if (kind == 2) b = round_to(rounded_b + 40 * u * magnitude, dtype);
    if (kind == 3) a = std::numeric_limits<double>::quiet_NaN();
    PairRule r;
    r.dtype = dtype;
    r.attention_factor = static_cast<double>(g);
    const bool ulp_kind = next() % 5 == 0;
    r.tolerance = Tolerance{ulp_kind ? Tolerance::Kind::ulp : Tolerance::Kind::e, static_cast<double>(next() % 8) * 0.5,
                            next() % 2 ? 0.25 : 0.0, "test"};
    Pair p = pair(x, y, a, b, exact_a, exact_b, rounded_a, rounded_b);
    p.angle = static_cast<double>(angle);
    const PairVerdict v = judge_pair(p, r);
    const PairScreen s = screen_pair(x, y, a, b, static_cast<double>(exact_a), static_cast<double>(exact_b), rounded_a,
                                     rounded_b, p.angle, r);
    ASSERT_FALSE(s.sure_pass && s.sure_fail) << i;
    if (s.sure_pass) {
      ++sure;
      ASSERT_TRUE(v.pass() && v.ordinary() && v.measured) << i << ": " << v.message;
    }
    if (s.sure_fail) {
      ++sure_fail;
      ASSERT_TRUE(v.failure == Failure::tolerance && v.ordinary() && v.measured) << i << ": " << v.message;
    }
    if (v.measured && v.ordinary() && kind != 3) {
      ASSERT_LE(v.e, s.e_high) << i;
      ASSERT_GE(v.e, s.e_low) << i;
      ASSERT_LE(v.abs, s.abs_high) << i;
      ASSERT_EQ(v.ulp, s.ulp) << i;
      ASSERT_EQ(v.allowed, s.allowed) << i;
      // Not vacuous: within 2^-19 + 2^-29·e of the rule's e.
      ASSERT_LE(s.e_high - v.e, 0x1p-19 + 0x1p-29 * v.e) << i;
    }
    if (kind == 0 && !ulp_kind && r.tolerance.value >= 1.5) {
      ++careful;
      EXPECT_TRUE(s.sure_pass) << i << " a correctly rounded pair, e = " << v.e << " <= " << v.allowed;
    }
  }
  EXPECT_GT(careful, 10000);
  EXPECT_GT(sure, 40000);
  EXPECT_GT(sure_fail, 10000);
  // f64 data and non-finite values are judge_pair's.
  PairRule f64 = rule(Dtype::f64, 4);
  EXPECT_FALSE(screen_pair(3, 4, 0.75, 0.5, 0.75, 0.5, 0.75, 0.5, 0, f64).sure_pass);
  PairRule f32 = rule(Dtype::f32, 4);
  EXPECT_TRUE(screen_pair(3, 4, 0.75, 0.5, 0.75, 0.5, 0.75, 0.5, 0, f32).sure_pass);
  EXPECT_FALSE(screen_pair(kInf, 4, 0.75, 0.5, 0.75, 0.5, 0.75, 0.5, 0, f32).sure_pass);
  EXPECT_FALSE(screen_pair(3, 4, kInf, 0.5, 0.75, 0.5, 0.75, 0.5, 0, f32).sure_pass);
  EXPECT_FALSE(screen_pair(3, 4, 0.75, 0.5, 0.75, 0.5, 0.75, kNaN, 0, f32).sure_pass);
  // Domain boundaries: f32's smallest normal (the screen leaves a pair at it to the rule), f16 near overflow.
  EXPECT_FALSE(screen_pair(0x1p-126, 0, 0x1p-126, 0, 0x1p-126, 0, 0x1p-126, 0, 0, f32).sure_pass);
  EXPECT_FALSE(screen_pair(47000, 0, 47000, 0, 47000, 0, 47000, 0, 0, rule(Dtype::f16, 4)).sure_pass);
  // Strict zeros that differ.
  EXPECT_FALSE(screen_pair(1, 0, -0.0, 1, 0.0, 1, 0.0, 1, 0, rule(Dtype::f32, 4, true)).sure_pass);
}

}  // namespace
}  // namespace ropecheck::judge
