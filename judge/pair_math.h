// The long double arithmetic of a rotated pair: the pair rule's norm (judge/pair_rule.cpp), the
// diagnosis's and the spec inference's angles (judge/diagnosis.cpp, judge/angle_fits.cpp), called
// per pair of a check (every pair, or a sample's 2^20 values) or per token and pair index. Each is
// arithmetic with its bound beside it, libm only on a cold path, so that a marginal pass or a
// failing check pays for arithmetic, not for libm calls:
// - wrap_to_pi: an angle into [−π, π], std::remainder's value bit for bit;
// - ulp32: one binary32 ulp of a value, exactly;
// - atan2_by_table: atan2 within 2^-60 (the angle of a pair's rotation);
// - pair_norm: |(a, b)| of doubles, in long double without hypot;
// - sort_by_position_magnitude: a pair's samples in the order its frequency fits unwrap them.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <vector>

#include "reference/rounding.h"

namespace ropecheck::judge {

namespace pair_math_detail {
inline constexpr long double kPi = 3.141592653589793238462643383279502884L;  // π to long double
inline constexpr long double kTwoPi = 2 * kPi;                                 // exact: a doubling
// 2π in two parts of 32 significant bits each: kTwoPiHigh keeps its bits down to 2^-29 (2π < 8),
// kTwoPiLow the rest (down to 2π's last bit, 2^-61), so an integer n below 2^30 times either is
// exact in the long double's 64-bit significand.
inline constexpr long double kTwoPiHigh = static_cast<long double>(static_cast<std::uint64_t>(kTwoPi * 0x1p29L)) * 0x1p-29L;
inline constexpr long double kTwoPiLow = kTwoPi - kTwoPiHigh;  // exact: the bits kTwoPiHigh left
// Adding then subtracting 1.5·2^63 rounds a long double below 2^62 in magnitude to an integer (to
// nearest, ties to even: the sum's last bit is the units' place).
inline constexpr long double kRoundToInteger = 0x1.8p63L;
}  // namespace pair_math_detail

// An angle a into [−π, π]: std::remainder(a, 2π), 2π the long double nearest it (the diagnosis's
// and the inference's one wrap), bit for bit remainder's value; a libm call only for a tie, a NaN,
// an infinity or |a| ≥ 2^32 (angles of positions up to 2^31 − 1 at frequencies up to 1 are below).
// - |a| ≤ π: the quotient rounds to 0 (a tie at exactly π to the even 0): a itself.
// - π < |a| ≤ 4π: the quotient is ±1 while |a ∓ 2π| < π, and a ∓ 2π is exact there (Sterbenz:
//   2π/2 ≤ |a| ≤ 2·2π), a zero with a's sign.
// - 4π < |a| < 2^32: n, the integer nearest the rounded quotient a·(1/2π) (so within 1/2 + 2^-30
//   of a/2π, |n| < 2^30), then (a − n·hi) − n·lo with 2π = hi + lo split into 32-bit halves. Both
//   products are exact (n's 30 bits times 32); |a − n·hi| ≤ |a − n·2π| + |n·lo| < π + 2^-27 + 2,
//   a multiple of ulp(a) ≥ 2^-60 below 8, so exact. When n is the integer nearest
//   a/2π, the last difference, a − n·2π itself, is a multiple of 2^-61 below π: exact, and
//   remainder's value. Otherwise (a quotient rounded across a half, or a tie) |a − n·2π| ≥ π, which
//   its rounding keeps (π as a long double is a bound it cannot round past): remainder gives it.
inline long double wrap_to_pi(long double a) {
  using namespace pair_math_detail;
  constexpr long double pi = kPi;
  const long double magnitude = std::fabs(a);
  if (magnitude <= pi) return a;
  long double r = 0;
  if (magnitude <= 2 * kTwoPi) {
    r = a > 0 ? a - kTwoPi : a + kTwoPi;
  } else if (magnitude < 0x1p32L) {
    const long double n = (a * (1 / kTwoPi) + kRoundToInteger) - kRoundToInteger;
    r = (a - n * kTwoPiHigh) - n * kTwoPiLow;
  } else {
    return std::remainder(a, kTwoPi);
  }
  if (std::fabs(r) < pi) return r == 0 ? std::copysign(0.0L, a) : r;  // remainder's zero has a's sign
  return std::remainder(a, kTwoPi);
}

// One binary32 ulp of |v|: 2^(e − 23) for 2^e ≤ |v| < 2^(e + 1), the subnormal spacing 2^-149
// below the normal range. Exact: read from the exponent's bits where long double is x87's 80-bit
// format, else (and for an infinity or NaN) through frexp.
inline long double ulp32(long double v) {
  v = std::fabs(v);
  if (v < 0x1p-126L) return 0x1p-149L;
#if LDBL_MANT_DIG == 64 && LDBL_MAX_EXP == 16384 && (defined(__x86_64__) || defined(__i386__))
  if (std::isfinite(v)) {
    // A normal v (here v ≥ 2^-126, positive) has e = biased − 16383; 2^(e − 23) has the integer
    // bit alone in its significand and the biased exponent less 23 (reference/rounding.h X87Fields).
    const unsigned biased = reference::x87_fields(v).sign_exponent & 0x7fffu;
    return reference::from_x87_fields({std::uint64_t{1} << 63, static_cast<std::uint16_t>(biased - 23)});
  }
#endif
  int e = 0;
  (void)std::frexp(v, &e);  // v = f·2^e, 0.5 ≤ f < 1
  return std::ldexp(1.0L, e - 24);
}

// atan(k/64), k = 0..64, correctly rounded to long double (MPFR's mpfr_atan at 64 bits, to
// nearest): atan2_by_table's table. tests/judge/pair_math_test.cpp checks every entry against MPFR.
inline constexpr long double kAtanOfSixtyFourths[65] = {
    0x0p+0L, 0x3.ffeaab776e5356fp-8L, 0x7.ff556eea5d892a1p-8L,
    0xb.fdc0c2186d14fcfp-8L, 0xf.faaddb967ef4e37p-8L, 0x1.3f59f0e7c559d6b2p-4L,
    0x1.7ee182602f10e8c2p-4L, 0x1.be39ebe6f07c37dep-4L, 0x1.fd5ba9aac2f6dc66p-4L,
    0x2.3c3f5f6086e4dc98p-4L, 0x2.7adddd18cc4d8b0cp-4L, 0x2.b93023c7d84d3becp-4L,
    0x2.f72f6979cb6044dp-4L, 0x3.34d51d2d90c4c3ap-4L, 0x3.721aea524c14408cp-4L,
    0x3.aefabbe40ae6ce34p-4L, 0x3.eb6ebf25901bac54p-4L, 0x4.277165f618d8963p-4L,
    0x4.62fd68c2fc5e0988p-4L, 0x4.9e0dc815fbd16f88p-4L, 0x4.d89dcdc1faf2f35p-4L,
    0x5.12a90db0abc26a28p-4L, 0x5.4c2b6654735276d8p-4L, 0x5.852100c273f8659p-4L,
    0x5.bd86507937bc23ap-4L, 0x5.f55812d8ecfdd6ap-4L, 0x6.2c934e5286c95b7p-4L,
    0x6.633551535ac619e8p-4L, 0x6.993bb0f308ff2dbp-4L, 0x6.cea44769971b1aep-4L,
    0x7.036d3253b27be34p-4L, 0x7.3794d0cb04d425dp-4L, 0x7.6b19c1586ed3da28p-4L,
    0x7.9dfadfc5d68d10e8p-4L, 0x7.d03742d50505f2ep-4L, 0x8.01ce39e0d205c9ap-4L,
    0x8.32bf4a6d9867e2ap-4L, 0x8.630a2dada1ed066p-4L, 0x8.92aecdfde9547b5p-4L,
    0x8.c1ad445f3e09b8cp-4L, 0x8.f005d5ef7f59f9bp-4L, 0x9.1db8f1664f350e2p-4L,
    0x9.4ac72c9847186f6p-4L, 0x9.7731420365e538cp-4L, 0x9.a2f80e671bdda2p-4L,
    0x9.ce1c8e6a0b8cdbap-4L, 0x9.f89fdc4f4b7a1edp-4L, 0xa.22832dbcadaae09p-4L,
    0xa.4bc7d1934f70924p-4L, 0xa.746f2ddb7602294p-4L, 0xa.9c7abdc4830f5c9p-4L,
    0xa.c3ec0fb997dd6a2p-4L, 0xa.eac4c38b4d8c08p-4L, 0xb.110688aebdc6f6ap-4L,
    0xb.36b31c91f043691p-4L, 0xb.5bcc49059ecc4bp-4L, 0xb.8053e2bc2319e74p-4L,
    0xb.a44bc7dd470782fp-4L, 0xb.c7b5deae98af281p-4L, 0xb.ea94144fd049aacp-4L,
    0xc.0ce85b8ac526641p-4L, 0xc.2eb4abb661628b6p-4L, 0xc.4ffaffabf8fbd55p-4L,
    0xc.70bd54ce602ee14p-4L, 0xc.90fdaa22168c235p-4L,
};

// atan2(y, x) in long double, the angle of a rotated pair (the diagnosis's own angle φ_c, the
// inference's observations): |atan2_by_table(y, x) − atan2(y, x)| ≤ 2^-60 (4 ulps of π;
// std::atan2's is within 1), and ≤ 2^-62·|atan2(y, x)| when x > 0 and |y| ≤ |x|/256 (a small
// angle keeps its relative accuracy). The angles it gives are compared with errors of at least
// 4u ≥ 2^-51 (judge/diagnosis.cpp): 2^-9 of the smallest. A zero, infinite or NaN operand, or one
// at 2^16000 or above, goes to std::atan2.
// The path (the octant reduction and table of Tang's atan, ACM TOMS 15(2), 1989): t = min/max of
// |y|, |x| in [0, 1]; c = k/64 with k = round(64t), so |t − c| ≤ 1/128; atan t = atan c +
// atan r, r = (t − c)/(1 + tc) = (min − c·max)/(max + c·min), |r| ≤ 2^-7; atan r by its series
// to r^11 (the first term left out, r^13/13, is below 2^-94·|r|); then π/2 − a where |y| > |x|,
// π − a where x < 0, the sign of y.
// Error, in units of 2^-64: c·max is rounded once (relative 1) and min − c·max is exact
// (Sterbenz: min and c·max within a factor 2 for k ≥ 1; for k = 0 nothing is subtracted), so r is
// within 1 + 3|r| ≤ 1.03 of its value; the series adds below 2^-6, atan c's rounding ≤ 0.5, the
// sum's ≤ 0.79 (a ≤ π/4): 2.3 in [0, π/4] (relative 2 for k = 0, where atan c = 0 and every step
// is relative). π/2 − a adds its rounding (≤ 1) and the constant's (0.47: the long double π is
// 2^-64.1 from π), π − a its rounding (≤ 2) and 0.94: 6.7 in all (2^-61.3), below 2^-60 with room;
// the test's worst over 400 000 angles is 2^-61.9.
inline long double atan2_by_table(long double y, long double x) {
  using namespace pair_math_detail;
  const long double ax = std::fabs(x), ay = std::fabs(y);
  if (!(ax > 0 && ay > 0 && ax < 0x1p16000L && ay < 0x1p16000L)) return std::atan2(y, x);
  const bool swap = ay > ax;
  const long double min = swap ? ax : ay, max = swap ? ay : ax;
  // k by way of a double (SSE's conversion; x87's to an integer reloads the control word twice):
  // t's rounding to 53 bits moves 64t by 2^-47 at most, so |t − c| ≤ 1/128 + 2^-53 still.
  const int k = static_cast<int>(static_cast<double>(min / max) * 64 + 0.5);  // 0..64
  const long double c = static_cast<long double>(k) * 0x1p-6L;
  const long double r = (min - c * max) / (max + c * min);
  const long double z = r * r;
  constexpr long double c3 = -1.0L / 3, c5 = 1.0L / 5, c7 = -1.0L / 7, c9 = 1.0L / 9, c11 = -1.0L / 11;
  long double a = kAtanOfSixtyFourths[k] + (r + r * z * (c3 + z * (c5 + z * (c7 + z * (c9 + z * c11)))));
  if (swap) a = kPi / 2 - a;
  if (x < 0) a = kPi - a;
  return y < 0 ? -a : a;
}

// |(a, b)| for a, b doubles (widened): the squares of doubles lie within 2^-2148 and 2^2048, far
// inside long double's range, so a·a + b·b neither overflows nor underflows and needs none of
// hypot's scaling: three roundings and the square root's, relative error below 2^-62.
inline long double pair_norm(long double a, long double b) { return std::sqrt(a * a + b * b); }

// A pair's samples (each with its position component m) in order of |m|, ties in the order given
// (row order): the order in which the frequency fits unwrap the angles (judge/diagnosis.cpp
// fit_pair, judge/angle_fits.cpp fit_frequency). A natural merge sort — the runs already in order,
// merged two by two (std::inplace_merge keeps ties in order): a check's or a sweep's sample is one
// run or a few (its positions arrive sorted, test by test: a chunk's sample, then the sample spread
// over the chunks), one pass each, where a general sort took a tenth of a sweep's diagnosis.
template <class Sample>
void sort_by_position_magnitude(std::vector<Sample>& samples) {
  const auto by_magnitude = [](const Sample& l, const Sample& r) { return std::fabs(l.m) < std::fabs(r.m); };
  std::vector<std::size_t> runs = {0};  // where each run begins, then the end
  for (std::size_t i = 1; i < samples.size(); ++i) {
    if (by_magnitude(samples[i], samples[i - 1])) runs.push_back(i);
  }
  runs.push_back(samples.size());
  while (runs.size() > 2) {
    std::vector<std::size_t> merged = {0};
    for (std::size_t k = 0; k + 1 < runs.size(); k += 2) {
      if (k + 2 < runs.size()) {
        std::inplace_merge(samples.begin() + static_cast<std::ptrdiff_t>(runs[k]), samples.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]),
                           samples.begin() + static_cast<std::ptrdiff_t>(runs[k + 2]), by_magnitude);
        merged.push_back(runs[k + 2]);
      } else {
        merged.push_back(runs[k + 1]);  // an odd run out, merged in the next round
      }
    }
    runs = std::move(merged);
  }
}

}  // namespace ropecheck::judge
