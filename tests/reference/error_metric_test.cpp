// The error metric's rules (reference/error_metric.h), on hand-made pairs.
#include "reference/error_metric.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ropecheck {
namespace {

TEST(ErrorMetric, NormwiseInUnitsOfURho) {
  // Input (3, 4): ρ = 5. An error of 5·2^-24 in one component is e = 1 for f32 (dyadic values, exact).
  const double a = 0.75 + 5 * std::ldexp(1.0, -24);
  EXPECT_EQ(reference::pair_error(a, 0.5, 0.75L, 0.5L, 3.0, 4.0, Dtype::f32), 1.0);
  // The attention factor g scales the unit when |g| > 1.
  EXPECT_EQ(reference::pair_error(a, 0.5, 0.75L, 0.5L, 3.0, 4.0, Dtype::f32, 2.0), 0.5);
}

TEST(ErrorMetric, OverflowedComponentMustBeInfinityTheOtherIsMeasured) {
  // f16: exact (70000, 1000) overflows in the first component only.
  const double x = 60000, y = 30000;
  const double finite_off_by_one_ulp = 1000 + 0.5;  // f16 ulp at 1000 is 0.5
  const double e = reference::pair_error(INFINITY, finite_off_by_one_ulp, 70000.0L, 1000.0L, x, y, Dtype::f16);
  EXPECT_NEAR(e, 0.5 / (std::ldexp(1.0, -11) * std::hypot(x, y)), 1e-12);  // ≈ 0.0153
  EXPECT_EQ(reference::pair_error(65504.0, 1000.0, 70000.0L, 1000.0L, x, y, Dtype::f16), INFINITY);
  EXPECT_EQ(reference::pair_error(INFINITY, INFINITY, 70000.0L, 1000.0L, x, y, Dtype::f16), INFINITY);
}

TEST(ErrorMetric, SpecialValuesMatchExactly) {
  EXPECT_EQ(reference::pair_error(NAN, NAN, NAN, NAN, NAN, 1.0, Dtype::f32), 0.0);
  EXPECT_EQ(reference::pair_error(1.0, NAN, NAN, NAN, NAN, 1.0, Dtype::f32), INFINITY);
  EXPECT_EQ(reference::pair_error(0.0, 0.0, 0.0L, 0.0L, 0.0, 0.0, Dtype::f32), 0.0);
  EXPECT_EQ(reference::pair_error(0x1p-149, 0.0, 0.0L, 0.0L, 0.0, 0.0, Dtype::f32), INFINITY);
}

}  // namespace
}  // namespace ropecheck
