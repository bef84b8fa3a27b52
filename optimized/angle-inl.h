// The angle math of every kernel (CPU scalar/AVX2/AVX-512 and CUDA), per lane, written once:
// the exact fixed-point phase, the reduction to a quarter turn, the cos/sin polynomials, the
// quadrant and the signs. Templated on an Ops struct M (ops_scalar-inl.h: one lane, also the CUDA
// kernel's; ops_avx2-inl.h, ops_avx512-inl.h: 4 or 8 lanes) whose lane operations are IEEE
// binary64 / exact 64-bit integer operations, so every kernel computes the same bits.
// Included INSIDE each kernel's namespace after the Ops structs (no include guard, no #include);
// error_bounds.h derives the error of each step.

// Taylor coefficients of sin and cos (1/n!, each correctly rounded by the compiler). On the
// reduced range |r| ≤ π/4 the first omitted terms are r^19/19! < 8.3e-20 and r^20/20! < 3.3e-21,
// below 2^-63 (error_bounds.h, step 3).
constexpr double kSin3 = -1.0 / 6.0;
constexpr double kSin5 = 1.0 / 120.0;
constexpr double kSin7 = -1.0 / 5040.0;
constexpr double kSin9 = 1.0 / 362880.0;
constexpr double kSin11 = -1.0 / 39916800.0;
constexpr double kSin13 = 1.0 / 6227020800.0;
constexpr double kSin15 = -1.0 / 1307674368000.0;
constexpr double kSin17 = 1.0 / 355687428096000.0;
constexpr double kCos4 = 1.0 / 24.0;
constexpr double kCos6 = -1.0 / 720.0;
constexpr double kCos8 = 1.0 / 40320.0;
constexpr double kCos10 = -1.0 / 3628800.0;
constexpr double kCos12 = 1.0 / 479001600.0;
constexpr double kCos14 = -1.0 / 87178291200.0;
constexpr double kCos16 = 1.0 / 20922789888000.0;
constexpr double kCos18 = -1.0 / 6402373705728000.0;
// RN(2π)·2^-54: radians per unit of the fast path's reduced phase (2^-54 turn); the power-of-two
// scaling is exact, so this is RN(2π·2^-54).
constexpr double kRadiansPerFastUnit = 6.283185307179586476925286766559 * 0x1p-54;

// High 64 bits of the 128-bit product a·b.
ROPECHECK_HD inline std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  __extension__ typedef unsigned __int128 Wide;
  return static_cast<std::uint64_t>((static_cast<Wide>(a) * b) >> 64);
#endif
}

// Step 1 (exact integer arithmetic): the phase p·step mod 2^128 of a 0.128 fixed-point step, for a
// signed position p taken as a 128-bit two's complement number P = p_u − [p < 0]·2^64 (p_u = p
// mod 2^64):  P·step mod 2^128 = p_u·step_lo + 2^64·(p_u·step_hi − [p < 0]·step_lo)  (mod 2^128).
struct Phase {
  std::uint64_t high;
  std::uint64_t low;
};
ROPECHECK_HD inline Phase phase_of(std::int64_t position, std::uint64_t step_hi, std::uint64_t step_lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(position);
  Phase phase;
  phase.low = p * step_lo;
  phase.high = mul_high(p, step_lo) + p * step_hi - (position < 0 ? step_lo : 0);
  return phase;
}

// PRECISE reduction (f64 data; one lane, scalar integer code): the nearest quarter turn is split
// off (quadrant), leaving a remainder in [−1/8, 1/8] turn kept as a signed count f of 2^-65 turns
// (floor: error < 2^-65 turn); then r = f·2π·2^-65 as a double-double (r_hi + r_lo, relative
// error < 2^-100). radians_hi + radians_lo = 2π·2^-65 (plan.cpp).
ROPECHECK_HD inline void reduce_precise(Phase phase, double radians_hi, double radians_lo, double& r_hi, double& r_lo,
                                        std::uint64_t& quadrant) {
  const std::uint64_t biased = phase.high + (std::uint64_t{1} << 61);  // phase + 2^125 (mod 2^128)
  quadrant = biased >> 62;
  // f + 2^62 = floor((phase + 2^125 − quadrant·2^126) / 2^63), which is < 2^63
  const std::uint64_t shifted = ((biased & ((std::uint64_t{1} << 62) - 1)) << 1) | (phase.low >> 63);
  const std::int64_t f = static_cast<std::int64_t>(shifted) - (std::int64_t{1} << 62);  // |f| ≤ 2^62
  const double f_hi = static_cast<double>(f);
  const double f_lo = static_cast<double>(f - static_cast<std::int64_t>(f_hi));  // exact, |.| ≤ 2^9
  const double hi = f_hi * radians_hi;
  const double product_error = ::fma(f_hi, radians_hi, -hi);  // exact
  r_hi = hi;
  r_lo = product_error + ::fma(f_hi, radians_lo, f_lo * radians_hi);
}

// FAST reduction (f32/f16/bf16 data; lanes of M): from the high 64 bits T of the phase (the phase
// truncated to 2^-64 turn), the quadrant q = (T + 2^61) >> 62 and the remainder
// U − 2^61 ∈ [−2^61, 2^61) units of 2^-64 turn, U = (T + 2^61) mod 2^62, rounded to units of
// 2^-54 turn: V = (U + 2^9) >> 10 ∈ [0, 2^52] (error ≤ 2^-55 turn). V converts to double exactly
// with the integer trick  bits(2^52) + V = bits(2^52 + V)  (also for V = 2^52), so
// d = (2^52 + V) − (2^52 + 2^51) = V − 2^51 exactly (both operands in [2^52, 2^53]), |d| ≤ 2^51,
// and r = RN(d·RN(2π·2^-54)), |r| ≤ π/4. Vectorizes on AVX2 (no 64-bit multiply or convert needed).
template <class M>
ROPECHECK_HD inline typename M::V reduce_fast(typename M::U phase_high, typename M::U& quadrant) {
  using U = typename M::U;
  using V = typename M::V;
  const U biased = M::add_u(phase_high, M::set_u(std::uint64_t{1} << 61));
  quadrant = M::template shr_u<62>(biased);
  const U remainder = M::and_u(biased, M::set_u((std::uint64_t{1} << 62) - 1));
  const U units = M::template shr_u<10>(M::add_u(remainder, M::set_u(std::uint64_t{1} << 9)));
  const V two52_plus_units = M::as_double(M::add_u(units, M::set_u(0x4330000000000000ull)));  // 2^52 + V
  const V d = M::sub(two52_plus_units, M::set(0x1.8p52));
  return M::mul(d, M::set(kRadiansPerFastUnit));
}

// Step 3: cos and sin of r (+ r_lo when kWithLow: the precise path's first-order correction) on
// |r| ≤ π/4 by Taylor polynomials with explicit fused operations.
template <class M, bool kWithLow>
ROPECHECK_HD inline void cos_sin_polynomials(typename M::V r, typename M::V r_lo, typename M::V& cosine,
                                             typename M::V& sine) {
  using V = typename M::V;
  const V r2 = M::mul(r, r);
  V ps = M::set(kSin17);
  ps = M::fmadd(ps, r2, M::set(kSin15));
  ps = M::fmadd(ps, r2, M::set(kSin13));
  ps = M::fmadd(ps, r2, M::set(kSin11));
  ps = M::fmadd(ps, r2, M::set(kSin9));
  ps = M::fmadd(ps, r2, M::set(kSin7));
  ps = M::fmadd(ps, r2, M::set(kSin5));
  ps = M::fmadd(ps, r2, M::set(kSin3));
  const V t = M::mul(r2, ps);  // sin r = r + r·t
  V pc = M::set(kCos18);
  pc = M::fmadd(pc, r2, M::set(kCos16));
  pc = M::fmadd(pc, r2, M::set(kCos14));
  pc = M::fmadd(pc, r2, M::set(kCos12));
  pc = M::fmadd(pc, r2, M::set(kCos10));
  pc = M::fmadd(pc, r2, M::set(kCos8));
  pc = M::fmadd(pc, r2, M::set(kCos6));
  pc = M::fmadd(pc, r2, M::set(kCos4));
  pc = M::fmadd(pc, r2, M::set(-0.5));
  if constexpr (kWithLow) {
    // sin(r + d) ≈ sin r + d·cos r, cos r ≈ 1 − r²/2 (the dropped d·r⁴/24 is < 2^-110)
    sine = M::add(r, M::fmadd(r, t, M::mul(r_lo, M::fmadd(r2, M::set(-0.5), M::set(1.0)))));
    // cos(r + d) ≈ cos r − d·sin r ≈ cos r − d·r
    cosine = M::add(M::set(1.0), M::fmsub(r2, pc, M::mul(r_lo, r)));
  } else {
    sine = M::add(r, M::mul(r, t));
    cosine = M::add(M::set(1.0), M::mul(r2, pc));
  }
}

// The angle is r + q·π/2: q = 0 (c, s), 1 (−s, c), 2 (−c, −s), 3 (s, −c); sin_flip = 2^63 negates
// sin for the inverse direction; then the attention factor A (one rounding each, skipped when
// A = 1). Swaps and negations (sign-bit flips) are exact.
template <class M>
ROPECHECK_HD inline void place_in_quadrant(typename M::U quadrant, typename M::U sin_flip, bool attention_is_one,
                                           double attention, typename M::V cosine, typename M::V sine,
                                           typename M::V& c, typename M::V& s) {
  using U = typename M::U;
  using V = typename M::V;
  const U odd = M::template shl_u<63>(quadrant);
  const V swapped_cos = M::select(odd, sine, cosine);
  const V swapped_sin = M::select(odd, cosine, sine);
  const U cos_negated = M::template shl_u<63>(M::xor_u(quadrant, M::template shr_u<1>(quadrant)));  // q = 1, 2
  const U sin_negated = M::xor_u(M::template shl_u<63>(M::template shr_u<1>(quadrant)), sin_flip);   // q = 2, 3
  c = M::as_double(M::xor_u(M::as_bits(swapped_cos), cos_negated));
  s = M::as_double(M::xor_u(M::as_bits(swapped_sin), sin_negated));
  if (!attention_is_one) {
    c = M::mul(c, M::set(attention));
    s = M::mul(s, M::set(attention));
  }
}

// 2^63 when the plan's direction is inverse (sin negated), else 0.
ROPECHECK_HD inline std::uint64_t sin_flip_of(const PlanView& plan) {
  return plan.inverse ? (std::uint64_t{1} << 63) : 0;
}

// cos and sin of pair j at `position` (one lane): exactly what the CPU kernels' loops compute for
// that pair (they run the same steps, vectorized). The CUDA kernel calls this.
ROPECHECK_HD inline void pair_cos_sin(const PlanView& plan, std::int64_t position, int j, double& c, double& s) {
  using M = ScalarOps;
  const Phase phase = phase_of(position, plan.step_hi[j], plan.step_lo[j]);
  double cosine;
  double sine;
  std::uint64_t quadrant;
  if (plan.precise_angles) {
    double r_hi;
    double r_lo;
    reduce_precise(phase, plan.radians_per_unit_hi, plan.radians_per_unit_lo, r_hi, r_lo, quadrant);
    cos_sin_polynomials<M, true>(r_hi, r_lo, cosine, sine);
  } else {
    const double r = reduce_fast<M>(phase.high, quadrant);
    cos_sin_polynomials<M, false>(r, 0.0, cosine, sine);
  }
  place_in_quadrant<M>(quadrant, sin_flip_of(plan), plan.attention_is_one, plan.attention, cosine, sine, c, s);
}

// Step 4: the rotation of one pair in binary64 (a = x·c − y·s, b = x·s + y·c, each one product
// rounded then one fused operation); used by the SIMD bodies, the scalar tails and the CUDA kernel.
template <class M>
ROPECHECK_HD inline void rotate(typename M::V x, typename M::V y, typename M::V c, typename M::V s, typename M::V& a,
                                typename M::V& b) {
  a = M::fmsub(x, c, M::mul(y, s));
  b = M::fmadd(x, s, M::mul(y, c));
}
