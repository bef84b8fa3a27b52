// The fast path's double-double cos/sin (reference/fast_trig.h) against MPFR at 512 bits: every
// result within kFastCosSinError of the exact cos/sin of m·(t1 + t2 + t3), over random frequencies
// and positions, angles next to multiples of π/2 (where the reduction cancels most), the whole
// angle as one double (the f32 recipe's form), and the domain's edges.
#include "reference/fast_trig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "reference/multiprecision.h"

namespace ropecheck {
namespace {

using reference::CosSinDD;
using reference::DoubleDouble;
using reference::Real;

constexpr int kBits = 512;

std::array<double, 3> split(const Real& value) {
  const double t1 = static_cast<double>(value);
  const Real rest = value - t1;
  const double t2 = static_cast<double>(rest);
  return {t1, t2, static_cast<double>(Real(rest - t2))};
}

// |(hi + lo) − exact| as a double (exact at kBits).
double deviation(DoubleDouble v, const Real& exact) {
  return static_cast<double>(abs(Real(Real(v.hi) + Real(v.lo) - exact)));
}

struct Worst {
  double error = 0;
  int checked = 0;
};

// Checks one (m, θ); returns false when the fast path declined.
bool check(double m, const std::array<double, 3>& theta, Worst& worst) {
  const std::optional<CosSinDD> cs = reference::cos_sin_of_multiple(m, theta);
  if (!cs) return false;
  const Real angle = Real(m) * (Real(theta[0]) + Real(theta[1]) + Real(theta[2]));
  const double cos_error = deviation(cs->cos, cos(angle));
  const double sin_error = deviation(cs->sin, sin(angle));
  EXPECT_LE(cos_error, reference::kFastCosSinError) << "m " << m << " theta " << theta[0] << " angle " << angle.str(30);
  EXPECT_LE(sin_error, reference::kFastCosSinError) << "m " << m << " theta " << theta[0] << " angle " << angle.str(30);
  // Normalised double-doubles (rotate_component's bound assumes |lo| ≤ ulp(hi)/2).
  EXPECT_LE(std::fabs(cs->cos.lo), std::ldexp(1.0, std::ilogb(cs->cos.hi) - 53));
  EXPECT_LE(std::fabs(cs->sin.lo), std::ldexp(1.0, std::ilogb(cs->sin.hi) - 53));
  worst.error = std::max({worst.error, cos_error, sin_error});
  ++worst.checked;
  return true;
}

TEST(FastTrig, RandomFrequenciesAndPositionsWithinTheBound) {
  reference::PrecisionScope scope(kBits);
  std::mt19937_64 rng(18);
  Worst worst;
  int declined = 0;
  for (int i = 0; i < 20000; ++i) {
    // θ = base^(−u), u ∈ [0, 1), base up to 10^12 (the schedules' range), sometimes scaled up to 64.
    const Real u(static_cast<double>(rng() >> 11) * 0x1p-53);
    Real theta = pow(Real(10), Real(-12 * u));
    if (rng() % 8 == 0) theta = theta * Real(static_cast<double>(rng() % 64 + 1));
    std::int64_t m = static_cast<std::int64_t>(rng() % ((std::uint64_t{1} << (rng() % 32)) + 1));
    if (rng() & 1) m = -m;
    if (m == 0) continue;
    if (!check(static_cast<double>(m), split(theta), worst)) ++declined;
  }
  // Declined only where |cos| or |sin| < 2^-60: essentially never on random angles.
  EXPECT_LE(declined, 2);
  std::printf("random: %d checked, worst error 2^%.2f (bound 2^%.0f)\n", worst.checked, std::log2(worst.error),
              std::log2(reference::kFastCosSinError));
}

TEST(FastTrig, AnglesNextToMultiplesOfHalfPiWithinTheBound) {
  // θ = (k·π/2 + δ)/m for m up to 2^40/θ: r = δ after the reduction, with cancellation of up to
  // 40 + 55 bits between m·θ and k·π/2.
  reference::PrecisionScope scope(kBits);
  std::mt19937_64 rng(1818);
  const Real half_pi = acos(Real(-1)) / 2;
  Worst worst;
  for (int i = 0; i < 20000; ++i) {
    const int m_bits = static_cast<int>(rng() % 41);
    const std::int64_t m = static_cast<std::int64_t>(rng() % (std::uint64_t{1} << m_bits)) + 1;
    const std::int64_t k = static_cast<std::int64_t>(rng() % (std::uint64_t{1} << (rng() % 39))) + 1;
    Real delta = ldexp(Real(static_cast<double>(rng() >> 11) * 0x1p-53 - 0.5), -static_cast<int>(rng() % 56));
    const Real theta = (Real(static_cast<double>(k)) * half_pi + delta) / Real(static_cast<double>(m));
    const double sign = (rng() & 1) ? 1.0 : -1.0;
    check(sign * static_cast<double>(m), split(theta), worst);
  }
  EXPECT_GT(worst.checked, 15000);
  std::printf("near k*pi/2: %d checked, worst error 2^%.2f\n", worst.checked, std::log2(worst.error));
}

TEST(FastTrig, WholeAngleAsOneDoubleWithinTheBound) {
  // The f32 recipe passes m = 1 and θ = (φ, 0, 0) with φ an f32 value up to 2^40.
  reference::PrecisionScope scope(kBits);
  std::mt19937_64 rng(81);
  Worst worst;
  for (int i = 0; i < 20000; ++i) {
    const double phi = static_cast<float>(std::ldexp(static_cast<double>(rng() >> 11) * 0x1p-53, static_cast<int>(rng() % 60) - 20));
    check(1.0, {(rng() & 1) ? phi : -phi, 0, 0}, worst);
  }
  EXPECT_GT(worst.checked, 19000);
  std::printf("one double: %d checked, worst error 2^%.2f\n", worst.checked, std::log2(worst.error));
}

TEST(FastTrig, DeclinesOutsideTheDomain) {
  EXPECT_FALSE(reference::cos_sin_of_multiple(0x1p53 * 2, {1e-10, 0, 0}).has_value());   // |m| > 2^53
  EXPECT_FALSE(reference::cos_sin_of_multiple(0x1p41, {1.0, 0, 0}).has_value());         // |m·θ| > 2^40
  EXPECT_FALSE(reference::cos_sin_of_multiple(1.0, {0x1p-900, 0, 0}).has_value());       // θ too small
  EXPECT_FALSE(reference::cos_sin_of_multiple(0.0, {1.0, 0, 0}).has_value());            // zero angle
  EXPECT_FALSE(reference::cos_sin_of_multiple(1.0, {0x1p-70, 0, 0}).has_value());        // |sin| < 2^-60
  EXPECT_TRUE(reference::cos_sin_of_multiple(0x1p39, {1.0, 0, 0}).has_value());
}

}  // namespace
}  // namespace ropecheck
