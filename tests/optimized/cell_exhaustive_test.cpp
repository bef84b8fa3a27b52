// THE CELL TEST's claim (optimized/error_bounds.h "ROUNDING TEST", THE CELL TEST; convert-inl.h
// same_cell) checked by exhaustion over all 2^32 binary32 bit patterns, for binary16 and bfloat16.
// With k the bits T drops (13, 16), the key of a pattern p is (p + 2^(k−1)) with its low k bits
// masked off; it names c, the pattern with those bits, read as a value of T (±∞ past T's largest
// finite value). For every non-NaN p of the claim's range (binary16: |p| ≥ kHalfCellFloorBits;
// bfloat16: all, binary32 subnormals and zeros included):
//  - p above its run's lower end (low k bits ≠ 2^(k−1)): RN_T(p) is the value c names;
//  - p the lower end: RN_T(p) is c's value, or p is a tie (exactly midway between two consecutive
//    values of T) and RN_T(p) is the value the run below names;
//  - every tie of T is a run's lower end.
// Hence two patterns with one key round to one value of T but at the lower-end tie. RN_T is taken
// twice, and the two must agree on every non-NaN pattern: the project's conversions
// (convert-inl.h float_to_half, float_to_bf16) and an independent one in binary64 arithmetic,
// (|v| + C) − C with C = 1.5·2^(e+53−p) rounding to T's spacing 2^(e+1−p) (e: v's binade, at least
// T's emin; p: T's precision), which also finds the ties as |v − RN_T(v)| = half that spacing.
// Teeth: binary16's claim fails in the run just below kHalfCellFloorBits (so the kernels' floor
// guard, ops_scalar-inl.h undecided_cells, is where it must be), and keys without the half-cell
// bias fail for both types.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "optimized/host_device.h"

namespace ropecheck::kernels::cell_exhaustive_isa {
#include "optimized/convert-inl.h"
}  // namespace ropecheck::kernels::cell_exhaustive_isa

namespace ropecheck::kernels::testing {
namespace {

namespace cv = cell_exhaustive_isa;

struct Format {
  const char* name;
  int precision;           // p, significand bits with the leading one
  int emin;                // exponent of the smallest normal value
  int emax;                // exponent of the largest finite value
  int dropped;             // k = 24 − p
  std::uint32_t bias;      // the kernels' half cell, 2^(k−1)
  std::uint32_t mask;      // the kernels' key mask
  std::uint32_t floor;     // smallest magnitude pattern the claim is made for
};

inline double project_half(float f) { return cv::half_to_float(cv::float_to_half(f)); }
inline double project_bf16(float f) { return cv::bf16_to_float(cv::float_to_bf16(f)); }

const Format kHalf{"binary16", 11, -14, 15, 13, cv::kHalfCellBias, cv::kHalfCellMask, cv::kHalfCellFloorBits};
const Format kBf16{"bfloat16", 8, -126, 127, 16, cv::kBf16CellBias, cv::kBf16CellMask, 0u};

double bits_value(std::uint32_t bits) { return static_cast<double>(cv::bits_to_float(bits)); }

// RN_T(v) and whether v is a tie, by binary64 arithmetic (v a binary32 value, not NaN), with the
// constants of v's binade e (at least T's emin).
struct Rounded {
  double value;
  bool tie;
};
struct Binade {
  double c;      // 1.5·2^(e+53−p): ulp(c) = 2^(e+1−p), T's spacing
  double half;   // half of it
  double limit;  // 2^(emax+1)
};
Binade binade_of(const Format& t, int e) {
  e = std::max(e, t.emin);
  return {std::ldexp(1.5, e + 53 - t.precision), std::ldexp(1.0, e - t.precision), std::ldexp(1.0, t.emax + 1)};
}
inline Rounded round_in(const Binade& b, double v) {
  const double a = std::fabs(v);
  if (std::isinf(a)) return {v, false};
  const double r = (a + b.c) - b.c;  // one rounding, ties to even
  const bool tie = a < b.limit && std::fabs(a - r) == b.half;
  return {std::copysign(r >= b.limit ? INFINITY : r, v), tie};
}
Rounded round_independent(const Format& t, double v) {
  return round_in(binade_of(t, v == 0 ? t.emin : std::ilogb(v)), v);
}

// The value of T the key names: c read as T, ±∞ at and past 2^(emax+1).
inline double named(double limit, std::uint32_t key) {
  const double c = bits_value(key);
  return std::fabs(c) >= limit ? std::copysign(INFINITY, c) : c;
}

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

struct Tally {
  std::uint64_t checked = 0;
  std::uint64_t ties = 0;               // in the claim's range, each one a run's lower end
  std::uint64_t conversion_mismatch = 0;  // project ≠ independent
  std::uint64_t claim_failures = 0;     // in the claim's range
  std::uint64_t below_floor_failures = 0;
  std::uint32_t largest_failing_below_floor = 0;  // magnitude pattern
  std::uint32_t first_failure = 0;
  bool any_failure = false;
};

// Whether the claim holds at pattern p (not NaN) for the key p + bias masked by mask.
inline bool claim_holds(const Format& t, double limit, std::uint32_t p, std::uint32_t bias, std::uint32_t mask,
                        const Rounded& rn) {
  const std::uint32_t key = (p + bias) & mask;
  const std::uint32_t half = std::uint32_t{1} << (t.dropped - 1);
  const bool lower_end = (p & ((half << 1) - 1)) == half;
  if (rn.tie && !lower_end) return false;
  if (same(rn.value, named(limit, key))) return true;
  if (!lower_end || !rn.tie) return false;
  // the run below: the same sign, c one run lower (a tie is not a zero, so the key is not one)
  return same(rn.value, named(limit, key - (half << 1)));
}

// The patterns of one sign and exponent field (2^23 of them; the all-ones field: ±∞ only, the rest
// NaN), whose binade constants are shared.
// The patterns of one sign and exponent field (2^23 of them; the all-ones field: ±∞ only, the rest
// NaN), whose binade constants are shared. The claim is evaluated from the run below the floor up
// (binades wholly below it only compare the conversions).
template <bool kIsHalf>
void sweep(const Format& t, std::uint32_t sign_and_field, Tally& out) {
  const std::uint32_t field = sign_and_field & 0xFFu;
  const std::uint32_t count = field == 0xFFu ? 1u : (1u << 23);
  const Binade b = binade_of(t, field == 0 ? -126 : static_cast<int>(field) - 127);
  const std::uint32_t run = std::uint32_t{1} << t.dropped;
  const bool claim = ((field << 23) | 0x7FFFFFu) + run >= t.floor;
  for (std::uint32_t m = 0; m < count; ++m) {
    const std::uint32_t p = (sign_and_field << 23) | m;
    const float f = cv::bits_to_float(p);
    const Rounded rn = round_in(b, f);
    out.conversion_mismatch += same(rn.value, kIsHalf ? project_half(f) : project_bf16(f)) ? 0 : 1;
    if (!claim) continue;
    const std::uint32_t magnitude = p & 0x7FFFFFFFu;
    out.ties += (magnitude >= t.floor && rn.tie) ? 1 : 0;
    const bool lower_end = (p & (run - 1)) == (run >> 1);
    if (same(rn.value, named(b.limit, (p + t.bias) & t.mask)) && (!rn.tie || lower_end)) continue;
    if (claim_holds(t, b.limit, p, t.bias, t.mask, rn)) continue;
    if (magnitude < t.floor) {
      ++out.below_floor_failures;
      out.largest_failing_below_floor = std::max(out.largest_failing_below_floor, magnitude);
      continue;
    }
    ++out.claim_failures;
    if (!out.any_failure) out.first_failure = p;
    out.any_failure = true;
  }
  out.checked += count;
}

// The 2^31 patterns of one sign (0 or 1), by exponent field over the available threads; the tallies
// merge the same way whatever the thread count.
template <bool kIsHalf>
Tally sweep_sign(const Format& t, std::uint32_t sign) {
  constexpr unsigned kChunks = 256;
  std::vector<Tally> tallies(kChunks);
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      for (unsigned c = w; c < kChunks; c += threads) sweep<kIsHalf>(t, (sign << 8) | c, tallies[c]);
    });
  }
  for (auto& th : pool) th.join();
  Tally all;
  for (const Tally& c : tallies) {
    all.checked += c.checked;
    all.ties += c.ties;
    all.conversion_mismatch += c.conversion_mismatch;
    all.claim_failures += c.claim_failures;
    all.below_floor_failures += c.below_floor_failures;
    all.largest_failing_below_floor = std::max(all.largest_failing_below_floor, c.largest_failing_below_floor);
    if (c.any_failure && !all.any_failure) all.first_failure = c.first_failure;
    all.any_failure = all.any_failure || c.any_failure;
  }
  std::printf("%s, sign %u: %llu patterns, %llu ties (all lower ends), %llu failures below the floor (largest 0x%08X)\n", t.name,
              sign, static_cast<unsigned long long>(all.checked), static_cast<unsigned long long>(all.ties),
              static_cast<unsigned long long>(all.below_floor_failures), all.largest_failing_below_floor);
  return all;
}

// Ties of T of one sign: one below each finite nonzero value of T (the midpoint with its
// predecessor, +0 for the smallest subnormal) and the overflow threshold, midway between T's largest
// value and 2^(emax+1): as many as T's finite nonnegative values, 2^(p−1) per exponent field but the
// all-ones one, which is 2^(16−p) − 1 fields in a 16-bit format.
std::uint64_t ties_per_sign(const Format& t) {
  const std::uint64_t fields = (std::uint64_t{1} << (16 - t.precision)) - 1;
  return fields << (t.precision - 1);
}

// One sign's patterns (one ctest test each: the sweeps are long).
void check_half(std::uint32_t sign) {
  ASSERT_EQ(kHalf.floor & 0x1FFFu, kHalf.bias) << "the floor is a run's lower end";
  const Tally all = sweep_sign<true>(kHalf, sign);
  EXPECT_EQ(all.checked, (std::uint64_t{1} << 31) - ((std::uint64_t{1} << 23) - 1));
  EXPECT_EQ(all.conversion_mismatch, 0u) << "float_to_half differs from RN16 by binary64 arithmetic";
  EXPECT_EQ(all.claim_failures, 0u) << "first failing pattern 0x" << std::hex << all.first_failure;
  // teeth: the claim fails in the run just below the floor, so the guard cannot move down a run
  EXPECT_GT(all.below_floor_failures, 0u);
  EXPECT_GE(all.largest_failing_below_floor, kHalf.floor - 0x2000u);
  // ties at and above the floor (2^-14 − 2^-26, above 2^-14's lower tie 2^-14 − 2^-25): all but the
  // 2^10 below the subnormals and 2^-14
  EXPECT_EQ(all.ties, ties_per_sign(kHalf) - 1024);
}
void check_bf16(std::uint32_t sign) {
  const Tally all = sweep_sign<false>(kBf16, sign);
  EXPECT_EQ(all.checked, (std::uint64_t{1} << 31) - ((std::uint64_t{1} << 23) - 1));
  EXPECT_EQ(all.conversion_mismatch, 0u) << "float_to_bf16 differs from RNbf16 by binary64 arithmetic";
  EXPECT_EQ(all.claim_failures, 0u) << "first failing pattern 0x" << std::hex << all.first_failure;
  EXPECT_EQ(all.below_floor_failures, 0u);
  EXPECT_EQ(all.ties, ties_per_sign(kBf16));
}

TEST(CellExhaustive, Binary16PositiveRunsAreCellsDownToTheFloor) { check_half(0); }
TEST(CellExhaustive, Binary16NegativeRunsAreCellsDownToTheFloor) { check_half(1); }
TEST(CellExhaustive, Bfloat16PositiveRunsAreCellsEverywhere) { check_bf16(0); }
TEST(CellExhaustive, Bfloat16NegativeRunsAreCellsEverywhere) { check_bf16(1); }

// The kernels' constants are the claim's: bias 2^(k−1), the low k bits masked, binary16's floor
// 2^-14 − 2^-26.
TEST(CellExhaustive, ConstantsAreTheClaims) {
  for (const Format* t : {&kHalf, &kBf16}) {
    EXPECT_EQ(t->bias, 1u << (t->dropped - 1)) << t->name;
    EXPECT_EQ(t->mask, ~((1u << t->dropped) - 1)) << t->name;
  }
  EXPECT_EQ(bits_value(kHalf.floor), 0x1p-14 - 0x1p-26);
}

// Teeth for the key itself: without the half-cell bias (truncated bits) the runs are not cells.
TEST(CellExhaustive, KeysWithoutTheBiasFail) {
  for (const Format* t : {&kHalf, &kBf16}) {
    std::uint64_t failures = 0;
    for (std::uint32_t magnitude = 0x3F800000u; magnitude < 0x3F800000u + (1u << 20); ++magnitude) {
      const Rounded rn = round_independent(*t, bits_value(magnitude));
      failures += claim_holds(*t, std::ldexp(1.0, t->emax + 1), magnitude, 0u, t->mask, rn) ? 0 : 1;
    }
    EXPECT_GT(failures, 0u) << t->name;
  }
}

}  // namespace
}  // namespace ropecheck::kernels::testing
