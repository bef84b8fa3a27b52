// The test by the bits of f32 data (optimized/error_bounds.h "ROUNDING TEST", "f32 data, BY THE
// BITS"; kernel-inl.h Decide64) checked at every binade's edges: for w normal in binary64 with
// 2^-126 ≤ |w| (binary32's normal range, its overflow threshold 2^128 − 2^103 and every binade past
// it up to binary64's largest), both signs, part (ii)'s claim
//     q = (bits(w) + 2^28 − M − 1) mod 2^29 ≤ 2^29 − 2M − 2   (M = 2^16)
//  ⇒ RN32(X) = RN32(w) for every real X with |X − w| < M·ulp64(w),
// on the w that decide it: d = (bits(w) + 2^28) mod 2^29 (the binary64 ulps from the binary32
// rounding boundary below w) at the limits M + 1 and 2^29 − M − 1 and just outside them, d = 0
// (w a boundary) and 2^28 (w a binary32 value), the binade's first and last patterns, the overflow
// threshold and its neighbours, and random patterns (fixed seed). RN32 is MPFR's (mpfr_get_flt on
// the exact X, 256 bits), and RN32(X) is checked at X = w ± (M·ulp64(w) − 2^-40·ulp64(w)), the
// window's ends (RN32 is monotonic, so the ends decide the window). Teeth: below 2^128, at the
// limits, X = w moved (M + 1)·ulp64(w) + 2^-40·ulp64(w) toward the limit's boundary rounds elsewhere.
// ScalarOps::decided_by_bits32 is checked to take exactly this condition and |w| > E'.
#include <gtest/gtest.h>

#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "optimized/host_device.h"
#include "optimized/kernel_types.h"

namespace ropecheck::kernels::bits_window_isa {
#include "optimized/convert-inl.h"
#include "optimized/ops_scalar-inl.h"
}  // namespace ropecheck::kernels::bits_window_isa

namespace ropecheck::kernels::testing {
namespace {

constexpr std::uint64_t kM = std::uint64_t{1} << 16;
constexpr std::uint64_t kCell = std::uint64_t{1} << 29;
constexpr std::uint64_t kOffset = (std::uint64_t{1} << 28) - kM - 1;
constexpr std::uint64_t kMost = kCell - 2 * kM - 2;
constexpr std::uint64_t kHalves = 0x100000001ull;  // the kernels hold offset and most in both halves

double from_bits(std::uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}
std::uint64_t to_bits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// The condition as the comment states it, and its form in d.
bool condition_q(std::uint64_t bits) { return ((bits + kOffset) % kCell) <= kMost; }
bool condition_d(std::uint64_t bits) {
  const std::uint64_t d = (bits + (kCell >> 1)) % kCell;
  return d >= kM + 1 && d <= kCell - kM - 1;
}

class Exact {
 public:
  Exact() {
    mpfr_init2(w_, 256);
    mpfr_init2(x_, 256);
    mpfr_init2(step_, 256);
  }
  ~Exact() {
    mpfr_clear(w_);
    mpfr_clear(x_);
    mpfr_clear(step_);
  }
  Exact(const Exact&) = delete;
  Exact& operator=(const Exact&) = delete;

  // RN32(w + sign·(ulps·ulp64(w) + tiny·2^-40·ulp64(w))), exactly.
  float rn32_moved(double w, int sign, std::uint64_t ulps, int tiny) {
    const int e = std::ilogb(w);  // w normal in binary64: ulp64(w) = 2^(e−52)
    mpfr_set_d(w_, w, MPFR_RNDN);
    mpfr_set_ui(step_, static_cast<unsigned long>(ulps), MPFR_RNDN);
    mpfr_mul_2si(step_, step_, 40, MPFR_RNDN);
    if (tiny >= 0) {
      mpfr_add_ui(step_, step_, static_cast<unsigned long>(tiny), MPFR_RNDN);
    } else {
      mpfr_sub_ui(step_, step_, static_cast<unsigned long>(-tiny), MPFR_RNDN);
    }
    mpfr_mul_2si(step_, step_, e - 52 - 40, MPFR_RNDN);  // exact: 256 bits hold every term
    if (sign > 0) {
      mpfr_add(x_, w_, step_, MPFR_RNDN);
    } else {
      mpfr_sub(x_, w_, step_, MPFR_RNDN);
    }
    return mpfr_get_flt(x_, MPFR_RNDN);
  }

 private:
  mpfr_t w_;
  mpfr_t x_;
  mpfr_t step_;
};

bool same_float(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

struct Counts {
  long kept = 0;
  long teeth = 0;
};

// One w: the condition's two forms agree, decided_by_bits32 takes it (with E' below |w|) and
// rejects |w| ≤ E', and where it holds the window's ends round as w; at the limits the wider
// window's end on the limit's side does not.
void check_w(Exact& exact, double w, Counts& counts) {
  using Ops = bits_window_isa::ScalarOps;
  const std::uint64_t bits = to_bits(w);
  const bool holds = condition_q(bits);
  ASSERT_EQ(holds, condition_d(bits)) << std::hexfloat << w;
  const double a = std::fabs(w);
  const double other = 1.5;  // kept: bits 0x3FF8…0, d = 2^28
  const double below = std::nextafter(std::fmin(a, other), 0.0);  // E' just below both outputs
  ASSERT_EQ(Ops::decided_by_bits32(below, w, other, kOffset * kHalves, kMost * kHalves), holds) << std::hexfloat << w;
  ASSERT_EQ(Ops::decided_by_bits32(below, other, w, kOffset * kHalves, kMost * kHalves), holds) << std::hexfloat << w;
  ASSERT_EQ(Ops::decided_by_bits32(0.0, w, w, kOffset * kHalves, kMost * kHalves), holds) << std::hexfloat << w;
  ASSERT_FALSE(Ops::decided_by_bits32(a, w, other, kOffset * kHalves, kMost * kHalves)) << std::hexfloat << w;
  ASSERT_FALSE(Ops::decided_by_bits32(std::nextafter(a, INFINITY), other, w, kOffset * kHalves, kMost * kHalves));
  ASSERT_FALSE(Ops::decided_by_bits32(std::numeric_limits<double>::quiet_NaN(), w, w, kOffset * kHalves,
                                      kMost * kHalves));
  const float target = exact.rn32_moved(w, 1, 0, 0);
  ASSERT_TRUE(same_float(target, static_cast<float>(w))) << std::hexfloat << w;
  if (!holds) return;
  ++counts.kept;
  for (const int sign : {-1, 1}) {
    ASSERT_TRUE(same_float(exact.rn32_moved(w, sign, kM, -1), target))
        << std::hexfloat << w << " side " << sign;
  }
  // past binary32's overflow threshold every X rounds to ±∞: no boundary, no teeth (|w| ≥ 2^128)
  if (a >= 0x1p128) return;
  const std::uint64_t d = (bits + (kCell >> 1)) % kCell;
  // the limit's side in w's direction of magnitude: d counts from the boundary below |w|
  const int toward_zero = w > 0 ? -1 : 1;
  if (d == kM + 1) {
    ++counts.teeth;
    EXPECT_FALSE(same_float(exact.rn32_moved(w, toward_zero, kM + 1, 1), target)) << std::hexfloat << w;
  }
  if (d == kCell - kM - 1) {
    ++counts.teeth;
    EXPECT_FALSE(same_float(exact.rn32_moved(w, -toward_zero, kM + 1, 1), target)) << std::hexfloat << w;
  }
}

// Significands (52 bits) of one binade that decide the claim: for each high part h among the
// binade's first, second, last and next-to-last binary32 cell and a random one, low parts at and
// around d's limits, d = 0 and d = 2^28; the binade's first and last patterns; random ones.
std::vector<std::uint64_t> significands(std::mt19937_64& rng) {
  std::vector<std::uint64_t> out{0, (std::uint64_t{1} << 52) - 1};
  constexpr std::uint64_t kHighs = std::uint64_t{1} << 23;
  const std::uint64_t highs[] = {0, 1, kHighs - 2, kHighs - 1, rng() % kHighs};
  const std::uint64_t ds[] = {0, 1, kM - 1, kM, kM + 1, kM + 2, kCell / 2, kCell - kM - 2, kCell - kM - 1,
                              kCell - kM, kCell - kM + 1, kCell - 1};
  for (const std::uint64_t h : highs) {
    for (const std::uint64_t d : ds) {
      // bits + 2^28 ≡ d (mod 2^29): low = d − 2^28 mod 2^29, the high part's cell below its boundary
      const std::uint64_t low = (d + kCell - (kCell >> 1)) % kCell;
      out.push_back((h << 29) | low);
    }
  }
  for (int i = 0; i < 32; ++i) out.push_back(rng() & ((std::uint64_t{1} << 52) - 1));
  return out;
}

TEST(BitsWindow, EveryBinadeFromBinary32sNormalRange) {
  Exact exact;
  Counts counts;
  std::mt19937_64 rng(20261203);
  for (int e = -126; e <= 1023; ++e) {
    for (const std::uint64_t m : significands(rng)) {
      const std::uint64_t bits = (static_cast<std::uint64_t>(e + 1023) << 52) | m;
      for (const std::uint64_t sign : {std::uint64_t{0}, std::uint64_t{1} << 63}) {
        check_w(exact, from_bits(sign | bits), counts);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  // the overflow threshold 2^128 − 2^103 (d = 0, not kept) and the w at the limits beside it
  for (const double t : {0x1.ffffffp127, -0x1.ffffffp127}) {
    const std::uint64_t bits = to_bits(t);
    EXPECT_EQ((bits + (kCell >> 1)) % kCell, 0u);
    for (const std::uint64_t k : {kM, kM + 1, kM + 2}) {
      check_w(exact, from_bits(bits + k), counts);
      check_w(exact, from_bits(bits - k), counts);
    }
  }
  std::printf("%ld w kept, %ld limits with teeth\n", counts.kept, counts.teeth);
  // both limits of 5 cells, both signs, in each of the 254 binades below 2^128, and the threshold's
  EXPECT_GE(counts.teeth, 254 * 5 * 2 * 2 + 4);
}

// NaN and infinite outputs are never kept (part (iii)): E' is NaN or +Inf, or |w| is.
TEST(BitsWindow, NanAndInfinityAreNotKept) {
  using Ops = bits_window_isa::ScalarOps;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(Ops::decided_by_bits32(0x1p-125, nan, 1.5, kOffset * kHalves, kMost * kHalves));
  EXPECT_FALSE(Ops::decided_by_bits32(0x1p-125, 1.5, -nan, kOffset * kHalves, kMost * kHalves));
  EXPECT_FALSE(Ops::decided_by_bits32(inf, 1.5, 1.5, kOffset * kHalves, kMost * kHalves));
  EXPECT_FALSE(Ops::decided_by_bits32(nan, 1.5, 1.5, kOffset * kHalves, kMost * kHalves));
  EXPECT_TRUE(Ops::decided_by_bits32(0x1p-125, 1.5, 1.5, kOffset * kHalves, kMost * kHalves));
}

}  // namespace
}  // namespace ropecheck::kernels::testing
