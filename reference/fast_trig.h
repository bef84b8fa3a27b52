// The fast path of the reference's cos/sin (CORE-MATH's shape): cos and sin of an angle m·θ in
// double-double with a proven absolute error bound, for the angles RoPE meets (|m·θ| ≤ 2^40); the
// caller falls back to MPFR (rope.cpp) outside that domain. Derivation of the bound: the comments
// in fast_trig.cpp, step by step, and reference/README.md "The fast cos/sin".
#pragma once

#include <array>
#include <optional>

#include "reference/double_double.h"

namespace ropecheck::reference {

// |computed − exact| of each of cos and sin returned by cos_sin_of_multiple (absolute; both lie
// in [−1, 1]). fast_trig.cpp derives ≤ 2^-98.4; the constant keeps a factor 2.6 of margin.
inline constexpr double kFastCosSinError = 0x1p-97;

// Largest |m·θ| of the fast domain: the reduction's error terms are bounded for it (fast_trig.cpp).
inline constexpr double kFastAngleLimit = 0x1p40;

struct CosSinDD {
  DoubleDouble cos;
  DoubleDouble sin;
};

// cos and sin of φ = m·θ, θ = theta[0] + theta[1] + theta[2] a normalised triple-double
// (|theta[k+1]| ≤ ulp(theta[k])/2) and m a double (an integer position, or 1 with θ the whole angle).
// Nothing (the caller takes the MPFR path) when m = 0 (the caller handles a zero angle), |m| > 2^53,
// |theta[0]| < 2^-800 (the lower words could underflow), |m·θ| > kFastAngleLimit, or |cos| or
// |sin| < 2^-60 (so that the sign and nonzeroness of each result are certain: the bound is ≪ 2^-60).
std::optional<CosSinDD> cos_sin_of_multiple(double m, const std::array<double, 3>& theta);

}  // namespace ropecheck::reference
