// THE error metric of ropecheck (DESIGN.md "Error metric"), in exactly one function: every test,
// the sweep command and the gate's reports call pair_error; nothing else computes e.
//
// Rotation preserves each pair's norm, so a component can be tiny after rotation while its inputs
// are large (cancellation); element-wise ULP error then says nothing useful. The metric is normwise,
// per rotated pair:
//
//     e = max(|a − A|, |b − B|) / (u · ρ · max(1, |g|)),   ρ = sqrt(x² + y²),  u = 2^-p
//
// (a, b) the candidate's output pair, (A, B) the expected pair, (x, y) the input pair,
// p = 53, 24, 11, 8 for f64, f32, f16, bf16, and g the spec's attention factor (outputs are scaled
// by g, so their rounding errors are too; g = 1 for most specs).
//
// Which "expected": pass the EXACT result (e.g. reference::rotate_exact converted to long double,
// whose 64-bit significand adds at most 2^-64·|A| — below 2^-10 in e for every dtype) to measure the
// candidate's true error; a correctly rounded result itself then has e ≤ 1 (half an ulp of A is at
// most u·|A| ≤ u·ρ·|g|). Passing the correctly rounded expected value instead measures the distance
// to it, which is at most the true error + 1.
#pragma once

#include <cmath>
#include <limits>

#include "reference/rounding.h"
#include "spec/spec.h"

namespace ropecheck::reference {

// e for one pair (see above). Special cases, so that one number also carries IEEE conformance:
//  - any of x, y, A, B not finite: each component must match the correctly rounded expected value
//    exactly (NaN matches NaN; ±Inf must have the expected sign): 0 when both do, +Inf otherwise;
//  - an expected component that rounds to ±Inf in `dtype` (overflow) must be that infinity, and
//    the pair's other component is measured as usual;
//  - a non-finite candidate component where a finite one is expected: +Inf;
//  - ρ = 0: 0 when the candidate equals the expected values (zeros of either sign), +Inf otherwise.
// Below the normal range of `dtype` (|A| or |B| subnormal) e is not a relative measure: absolute
// rounding errors of half the smallest subnormal can exceed any relative bound. Callers testing
// subnormal outputs compare with the correctly rounded value instead.
inline double pair_error(double a, double b, long double expected_a, long double expected_b, double x, double y,
                         Dtype dtype, double attention_factor = 1.0) {
  constexpr double infinity = std::numeric_limits<double>::infinity();
  auto matches_rounded = [dtype](double candidate, long double expected) {
    if (std::isnan(expected)) return std::isnan(candidate);
    const long double rounded = std::isinf(expected) ? expected : round_to_format(expected, dtype);
    if (std::isnan(candidate)) return false;
    return static_cast<long double>(candidate) == rounded;
  };
  const bool special_inputs = !std::isfinite(x) || !std::isfinite(y) || !std::isfinite(expected_a) ||
                              !std::isfinite(expected_b);
  if (special_inputs) return matches_rounded(a, expected_a) && matches_rounded(b, expected_b) ? 0.0 : infinity;
  // Overflow: a component whose exact value rounds to ±Inf must be that infinity; the other
  // component of the pair is measured as usual.
  const bool overflow_a = std::isinf(round_to_format(expected_a, dtype));
  const bool overflow_b = std::isinf(round_to_format(expected_b, dtype));
  if (overflow_a && !matches_rounded(a, expected_a)) return infinity;
  if (overflow_b && !matches_rounded(b, expected_b)) return infinity;
  if ((!overflow_a && !std::isfinite(a)) || (!overflow_b && !std::isfinite(b))) return infinity;
  const long double lx = x;
  const long double ly = y;
  const long double rho = std::sqrt(lx * lx + ly * ly);
  const long double difference = std::fmax(overflow_a ? 0.0L : std::fabs(a - expected_a),
                                            overflow_b ? 0.0L : std::fabs(b - expected_b));
  if (rho == 0) return difference == 0 ? 0.0 : infinity;
  const long double u = std::ldexp(1.0L, -significand_bits(dtype));
  const long double scale = std::fmax(1.0L, std::fabs(static_cast<long double>(attention_factor)));
  return static_cast<double>(difference / (u * rho * scale));
}

}  // namespace ropecheck::reference
