// Midpoint–radius ("ball") arithmetic over Real: the catalog's one mechanism for propagating the
// error bounds that implementations claim through the expressions an identity compares.
//
// A Ball {mid, rad} stands for every exact value X with |X − mid| ≤ rad. Each operation returns a
// ball that contains every exact result of operands taken from the input balls, plus the rounding of
// its own midpoint at the working precision P of the midpoint (≤ |mid|·2^-P, round to nearest).
// Radii are themselves computed in P-bit arithmetic; the factor (1 + 2^(4−P)) applied to each new
// radius covers their few roundings. This is the ball arithmetic of Arb (F. Johansson, "Arb: efficient
// arbitrary-precision midpoint-radius interval arithmetic", IEEE TC 2017; J. van der Hoeven, "Ball
// arithmetic", 2010). The rules and their one-line derivations:
//   a ± b:  rad = ra + rb                                   (triangle inequality)
//   a · b:  rad = |ma|·rb + |mb|·ra + ra·rb                  (XY − xy = x(Y−y) + y(X−x) + (X−x)(Y−y))
//   a / b:  rad = (ra + |ma/mb|·rb) / (|mb| − rb), |mb| > rb  (X/Y − x/y = ((X−x)y − x(Y−y))/(yY))
//   √a:     rad = min(√ra, ra/√ma)                           (|√X − √x| = |X−x|/(√X+√x) ≤ both)
//   eᵃ:     rad = e^ma·(e^ra − 1)                             (e^X − e^x = e^x(e^(X−x) − 1))
#pragma once

#include <cmath>

#include "reference/multiprecision.h"

namespace ropecheck::proofs {

using reference::Real;

struct Ball {
  Real mid;
  Real rad;
};

namespace ball_detail {
// 2^-P for the precision of `value` (the unit roundoff of its last rounding).
inline Real unit_roundoff(const Real& value) { return ldexp(Real(1), -reference::precision_bits(value)); }
inline Real widen(const Real& rad, const Real& mid) { return rad * (1 + 16 * unit_roundoff(mid)); }
inline Ball finish(Real mid, Real rad) {
  Real r = widen(rad + abs(mid) * unit_roundoff(mid), mid);
  return Ball{std::move(mid), std::move(r)};
}
}  // namespace ball_detail

inline Ball exact_ball(const Real& value) { return Ball{value, Real(0)}; }
inline Ball exact_ball(double value) { return Ball{Real(value), Real(0)}; }

inline Ball operator+(const Ball& a, const Ball& b) { return ball_detail::finish(a.mid + b.mid, a.rad + b.rad); }
inline Ball operator-(const Ball& a, const Ball& b) { return ball_detail::finish(a.mid - b.mid, a.rad + b.rad); }
inline Ball operator-(const Ball& a) { return Ball{Real(-a.mid), a.rad}; }
inline Ball operator*(const Ball& a, const Ball& b) {
  return ball_detail::finish(a.mid * b.mid, abs(a.mid) * b.rad + abs(b.mid) * a.rad + a.rad * b.rad);
}
inline Ball operator/(const Ball& a, const Ball& b) {
  const Real quotient = a.mid / b.mid;
  const Real margin = abs(b.mid) - b.rad;
  if (!(margin > 0)) return Ball{quotient, Real(std::numeric_limits<double>::infinity())};
  return ball_detail::finish(quotient, (a.rad + abs(quotient) * b.rad) / margin);
}
inline Ball sqrt(const Ball& a) {
  if (!(a.mid > 0)) {  // X ∈ [0, mid + rad]: √X ∈ [0, √(mid + rad)]
    const Real top = a.mid + a.rad;
    const Real half = top > 0 ? Real(sqrt(top) / 2) : Real(0);
    return ball_detail::finish(half, half);
  }
  const Real root = sqrt(a.mid);
  const Real by_root = a.rad / root;
  const Real by_sqrt = sqrt(a.rad);
  return ball_detail::finish(root, by_root < by_sqrt ? by_root : by_sqrt);
}
inline Ball exp(const Ball& a) {
  const Real value = exp(a.mid);
  return ball_detail::finish(value, value * expm1(a.rad));
}

// |X − Y| ≤ |mid_a − mid_b| + ra + rb for the exact values: two balls are consistent with X = Y iff
// they intersect. Returns the discrepancy |mid_a − mid_b| and the allowance ra + rb (widened for the
// rounding of the subtraction).
struct Comparison {
  Real discrepancy;
  Real allowed;
  bool holds() const { return discrepancy <= allowed; }
};
inline Comparison compare(const Ball& a, const Ball& b) {
  const Real difference = abs(a.mid - b.mid);
  return Comparison{difference, ball_detail::widen(a.rad + b.rad + difference * ball_detail::unit_roundoff(difference), difference)};
}

}  // namespace ropecheck::proofs
