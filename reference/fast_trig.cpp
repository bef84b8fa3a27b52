// Double-double cos/sin of m·θ with a machine-checked error bound (fast_trig.h): the steps below are
// proven by proofs/formal/gappa/fast_trig.g (floating point, steps 1–5; the JMP bounds of the
// double-double operations are its stated hypotheses) and proofs/formal/coq/FastTrig.v (Taylor
// truncation, 1-Lipschitz, quadrant); the figures in [brackets] are the proven ones. Notation:
// u = 2^-53, ε = 2^-100 ≥ the JMP bound of every double-double operation used (double_double.h: add
// with a double 2u², add 3u² + 13u³, multiply 5u²; ε is ≥ 12× each; the proof uses the JMP bounds
// themselves, hence its sharper step 4).
//
// 1. The angle. φ = m·(t1 + t2 + t3). With |m| ≤ 2^53 (exact in a double):
//      m·t1 = a1 + b1 and m·t2 = a2 + b2 exactly (two_product), a3 = RN(m·t3).
//    |φ| ≤ 2^40 ⇒ |a1| < 2^40·(1+u), |b1| ≤ ulp(a1)/2 ≤ 2^-13, |a2| ≤ |m|·ulp(t1)/2·(1+u) ≤ 2^-13,
//    |b2| ≤ 2^-65, |a3| ≤ 2^-65. Dropped: RN error of a3 and the triple's own error
//    |θ − Σt| ≤ u³·|θ| (each word the rounded remainder), each ≤ 2^40·2^-159 = 2^-119.
// 2. The quadrant. k = nearbyint(RN(a1·RN(2/π))): |a1 − φ| ≤ 2^-12 and the product's rounding and
//    RN(2/π)'s ≤ 2^40·2^-52, so |φ·2/π − k| ≤ 1/2 + 2^-10 and |r| ≤ π/4 + 2^-9 < 0.788 for
//    r = φ − k·π/2; |k| < 2^40.
// 3. The reduction (Cody–Waite with π/2 = P1 + P2 + P3 + δ, three doubles, |δ| ≤ 2^-161).
//    k·P1 = c1 + d1, k·P2 = c2 + d2 exactly; c3 = RN(k·P3). Then, exactly,
//      r = (a1 − c1) + b1 − d1 + a2 − c2 + b2 − d2 − c3 + a3 + [dropped]
//    where two_sum(a1, −c1) is exact and each further term enters by one `add` (DWPlusFP) into a
//    double-double whose exact partial sums stay below 0.788 + 6·2^-13 < 0.8 in magnitude: error
//    ≤ 8·2u²(1+4u)·0.8 < 2^-102.3. Dropped: |k|·|P3|·u ≤ 2^-122 (c3's rounding), |k·δ| ≤ 2^-121,
//    and step 1's 2·2^-119. Reduction error E_r ≤ 2^-102 [2^-102.35; |r̂| ≤ 0.7866].
// 4. cos and sin of the double-double r̂ (|r̂| < 0.788), z = r̂² (one multiply: relative ε):
//      sin r̂ = r̂ + r̂·z·S(z), S = Σ_{i=1..12} (−1)^i z^(i−1)/(2i+1)!  (through r^25/25!),
//      cos r̂ = 1 + z·C(z),  C = Σ_{i=1..13} (−1)^i z^(i−1)/(2i)!     (through r^26/26!).
//    Truncation (alternating series with decreasing terms): ≤ 0.788^27/27! < 2^-102.4 for sin,
//    ≤ 0.788^28/28! < 2^-107.5 for cos [Coq: ≤ 1.48e-31 and ≤ 4.2e-33].
//    Horner p_i = c_i + z·p_{i+1} in double-double: consecutive coefficients shrink by
//    1/((2i+2)(2i+3)) ≤ 1/20 (S) and 1/((2i+1)(2i+2)) ≤ 1/12 (C), so |z·p_{i+1}| ≤ 0.06·|p_i|
//    and the relative error e of each p_i obeys e ≤ ε + u² + 0.06·(2ε + e), i.e. e ≤ 1.2ε (the
//    coefficients' double-double rounding is ≤ u²). sin: r̂·z (2ε), times S (4.2ε relative), of
//    magnitude ≤ 0.788·0.621·(1/6)·1.06 < 0.087: absolute 0.37ε; the final add: ≤ ε·|sin| < 0.71ε.
//    cos: z·C (3.2ε relative, magnitude ≤ 0.621·0.5·1.06 < 0.33): 1.06ε; the final add ≤ ε.
//    The tails from p_8 (sin, s_8 = −1/17!) and p_9 (cos, c_9 = 1/18!) on run in double (fma
//    Horner with z.hi for z): each step adds ≤ u (coefficient) + u (rounding) + 0.06·(e + u (z.hi)),
//    so the tail's relative error is ≤ 3u < 5u; it reaches sin as r·z^7·(p_8 error) ≤
//    0.788^15·5u/17! < 2^-104 and cos as z^8·(p_9 error) ≤ 0.788^18·5u/18! < 2^-109.
//    Evaluation error ≤ 2.1ε + 2^-104 < 2^-98.8 for each [with the JMP bounds instead of ε:
//    2^-103.8 for sin, 2^-103.35 for cos].
// 5. cos and sin are 1-Lipschitz, so the reduction error adds: total ≤ 2^-98.8 + 2^-102 + 2^-102.4
//    < 2^-98.4 for sin, < 2^-98.6 for cos [proven: ≤ 2^-101.13 for sin, ≤ 2^-101.70 for cos, so
//    kFastCosSinError = 2^-97 holds with a factor 17]. The quadrant's swaps and negations are exact.
// Exactness: two_product is exact here even for subnormal low words, since m and k are integers
// (the error is a multiple of 2^-1074). Underflow (JMP assume none; written, not in the proof): a
// result is returned only when |cos|, |sin| ≥ 2^-60, so |r̂| ≥ 2^-61 and every quantity of step 4
// exceeds 2^-300; an add of step 3 whose partial sum lies below 2^-969 errs by at most 2^-1074 more,
// far below the margin.
#include "reference/fast_trig.h"

#include <cmath>
#include <cstdint>
#include <iterator>

namespace ropecheck::reference {
namespace {

// π/2 = kHalfPi[0] + kHalfPi[1] + kHalfPi[2] + δ, |δ| ≤ 2^-161 (each word the rounded remainder,
// from MPFR at 1000 bits; tests/reference/fast_trig_test.cpp checks the results against MPFR).
constexpr double kHalfPi[3] = {0x1.921fb54442d18p+0, 0x1.1a62633145c07p-54, -0x1.f1976b7ed8fbcp-110};
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;

// (−1)^i/(2i+1)! for i = 1..12 (sin) and (−1)^i/(2i)! for i = 1..13 (cos), as double-doubles
// rounded to nearest (relative error ≤ u²). Checked against MPFR by the test.
constexpr DoubleDouble kSinCoefficients[12] = {
    {-0x1.5555555555555p-3, -0x1.5555555555555p-57}, {0x1.1111111111111p-7, 0x1.1111111111111p-63},
    {-0x1.a01a01a01a01ap-13, -0x1.a01a01a01a01ap-73}, {0x1.71de3a556c734p-19, -0x1.c154f8ddc6cp-73},
    {-0x1.ae64567f544e4p-26, 0x1.c062e06d1f209p-80}, {0x1.6124613a86d09p-33, 0x1.f28e0cc748ebep-87},
    {-0x1.ae7f3e733b81fp-41, -0x1.1d8656b0ee8cbp-97}, {0x1.952c77030ad4ap-49, 0x1.ac981465ddc6cp-103},
    {-0x1.2f49b46814157p-57, -0x1.2650f61dbdcb4p-112}, {0x1.71b8ef6dcf572p-66, -0x1.d043ae40c4647p-120},
    {-0x1.761b41316381ap-75, 0x1.3423c7d91404fp-130}, {0x1.3f3ccdd165fa9p-84, -0x1.58ddadf344487p-139},
};
constexpr DoubleDouble kCosCoefficients[13] = {
    {-0x1p-1, 0}, {0x1.5555555555555p-5, 0x1.5555555555555p-59},
    {-0x1.6c16c16c16c17p-10, 0x1.f49f49f49f49fp-65}, {0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-76},
    {-0x1.27e4fb7789f5cp-22, -0x1.cbbc05b4fa99ap-76}, {0x1.1eed8eff8d898p-29, -0x1.2aec959e14c06p-83},
    {-0x1.93974a8c07c9dp-37, -0x1.05d6f8a2efd1fp-92}, {0x1.ae7f3e733b81fp-45, 0x1.1d8656b0ee8cbp-101},
    {-0x1.6827863b97d97p-53, -0x1.eec01221a8b0bp-107}, {0x1.e542ba4020225p-62, 0x1.ea72b4afe3c2fp-120},
    {-0x1.0ce396db7f853p-70, 0x1.aebcdbd20331cp-124}, {0x1.f2cf01972f578p-80, -0x1.9ada5fcc1ab14p-135},
    {-0x1.88e85fc6a4e5ap-89, 0x1.71c37ebd1654p-143},
};

// Horner's scheme for S and C together (two independent chains, interleaved for the pipeline):
// the tail from kDoubleFrom* on in double with z.hi (step 4's tail bound), the rest in double-double.
constexpr int kSinDoubleFrom = 7;  // s_8 = 1/17!: sin's terms from r^17 on
constexpr int kCosDoubleFrom = 8;  // c_9 = 1/18!: cos's terms from r^18 on
struct Polynomials {
  DoubleDouble sin;  // S(z)
  DoubleDouble cos;  // C(z)
};
// Inlined into cos_sin_of_multiple, so that its FMA clone (ROPECHECK_FMA_CLONES) computes it with
// the FMA instruction: called out of line it was built for baseline x86-64, every std::fma a libm call.
[[gnu::always_inline]] inline Polynomials horner(DoubleDouble z) {
  constexpr int sin_last = std::size(kSinCoefficients) - 1, cos_last = std::size(kCosCoefficients) - 1;
  double sin_tail = kSinCoefficients[sin_last].hi;
  for (int i = sin_last - 1; i >= kSinDoubleFrom; --i) sin_tail = std::fma(z.hi, sin_tail, kSinCoefficients[i].hi);
  double cos_tail = kCosCoefficients[cos_last].hi;
  for (int i = cos_last - 1; i >= kCosDoubleFrom; --i) cos_tail = std::fma(z.hi, cos_tail, kCosCoefficients[i].hi);
  DoubleDouble p_sin{sin_tail, 0}, p_cos{cos_tail, 0};
  for (int i = kCosDoubleFrom - 1; i >= 0; --i) {
    p_cos = add(kCosCoefficients[i], multiply(z, p_cos));
    if (i < kSinDoubleFrom) p_sin = add(kSinCoefficients[i], multiply(z, p_sin));
  }
  return {p_sin, p_cos};
}

DoubleDouble negate(DoubleDouble x) { return {-x.hi, -x.lo}; }

}  // namespace

ROPECHECK_FMA_CLONES std::optional<CosSinDD> cos_sin_of_multiple(double m, const std::array<double, 3>& theta) {
  if (!(std::fabs(m) <= 0x1p53) || !(std::fabs(theta[0]) >= 0x1p-800) || m == 0) return std::nullopt;
  // Step 1.
  const DoubleDouble p1 = two_product(m, theta[0]);
  if (!(std::fabs(p1.hi) <= kFastAngleLimit)) return std::nullopt;
  const DoubleDouble p2 = two_product(m, theta[1]);
  const double a3 = m * theta[2];
  // Step 2.
  const double k = std::nearbyint(p1.hi * kTwoOverPi);
  // Step 3.
  const DoubleDouble q1 = two_product(k, kHalfPi[0]);
  const DoubleDouble q2 = two_product(k, kHalfPi[1]);
  const double c3 = k * kHalfPi[2];
  DoubleDouble r = two_sum(p1.hi, -q1.hi);
  r = add(r, p1.lo);
  r = add(r, -q1.lo);
  r = add(r, p2.hi);
  r = add(r, -q2.hi);
  r = add(r, p2.lo);
  r = add(r, -q2.lo);
  r = add(r, -c3);
  r = add(r, a3);
  // Step 4.
  const DoubleDouble z = multiply(r, r);
  const Polynomials p = horner(z);
  const DoubleDouble sin_r = add(r, multiply(multiply(r, z), p.sin));
  const DoubleDouble cos_r = add(multiply(z, p.cos), 1.0);
  // φ = k·π/2 + r: rotate by the quadrant (k mod 4, two's complement keeps negative k right).
  CosSinDD out;
  switch (static_cast<std::int64_t>(k) & 3) {
    case 0: out = {cos_r, sin_r}; break;
    case 1: out = {negate(sin_r), cos_r}; break;
    case 2: out = {negate(cos_r), negate(sin_r)}; break;
    default: out = {sin_r, negate(cos_r)}; break;
  }
  if (!(std::fabs(out.cos.hi) >= 0x1p-60) || !(std::fabs(out.sin.hi) >= 0x1p-60)) return std::nullopt;
  return out;
}

}  // namespace ropecheck::reference
