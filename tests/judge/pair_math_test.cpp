// The pair arithmetic of the judge (judge/pair_math.h), each fast path against an independent oracle:
// - wrap_to_pi: the value of std::remainder(a, 2π) for every a, bit for bit, whether a fast path or
//   remainder gives it. The cases: the boundaries of the fast paths (±π, the ties ±3π, 4π, 2^32)
//   and the long doubles next to them, quotients near a half ((n + 1/2)·2π, where the split
//   path's rounded quotient may be off by one), multiples of 2π, random angles within ±5π, within ±2^40 and of every
//   exponent, zeros, infinities and NaN;
// - ulp32: the frexp/ldexp definition, exactly, over every exponent and the powers of two;
// - atan2_by_table: MPFR's atan2 at 256 bits, within the bound written beside it (2^-60, and
//   2^-62 relative for a small angle), over the table's points and midpoints, every octant, the
//   pairs the diagnosis forms (x·b − y·a, x·a + y·b of doubles), extreme magnitudes; std::atan2's
//   value bit for bit on the cold path (zeros, infinities, NaN);
// - pair_norm: MPFR's √(a² + b²) within 2^-62 relative, doubles of every exponent (no overflow,
//   no underflow) and zeros;
// - sort_by_position_magnitude: std::stable_sort's order (ties in the order given), for samples in
//   order, in a few runs, reversed, random with many ties, one and none.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "judge/pair_math.h"

namespace {

constexpr long double kTwoPi = 2 * 3.141592653589793238462643383279502884L;

// Equal as values, zeros by sign, every NaN equal to every NaN.
bool same(long double got, long double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

void expect_remainder(long double a) {
  const long double want = std::remainder(a, kTwoPi);
  const long double got = ropecheck::judge::wrap_to_pi(a);
  EXPECT_TRUE(same(got, want)) << "a = " << static_cast<double>(a) << " (" << std::hexfloat << static_cast<double>(a)
                               << "): wrap_to_pi " << static_cast<double>(got) << ", remainder " << static_cast<double>(want);
}

TEST(WrapToPi, BoundariesAndTheirNeighbours) {
  const long double pi = kTwoPi / 2;
  const long double inf = std::numeric_limits<long double>::infinity();
  for (long double edge : {0.0L, pi, 3 * pi, 2 * kTwoPi, kTwoPi, pi / 2, 5 * pi, 0x1p-16400L, 0x1p32L, 0x1p63L}) {
    for (long double sign : {1.0L, -1.0L}) {
      long double below = sign * edge, above = sign * edge;
      for (int k = 0; k < 64; ++k) {
        expect_remainder(below);
        expect_remainder(above);
        below = std::nextafter(below, -inf);
        above = std::nextafter(above, inf);
      }
    }
  }
  // 3π as the tie remainder rounds to even: the long double nearest 1.5·2π, and its sum computed
  expect_remainder(kTwoPi + pi);
  expect_remainder(-(kTwoPi + pi));
  expect_remainder(inf);
  expect_remainder(-inf);
  expect_remainder(std::numeric_limits<long double>::quiet_NaN());
  expect_remainder(-0.0L);
}

TEST(WrapToPi, RandomAngles) {
  std::mt19937_64 rng(20261127);
  std::uniform_real_distribution<double> near(-5 * 3.14159265358979, 5 * 3.14159265358979);
  std::uniform_real_distribution<double> far(-0x1p40, 0x1p40);
  std::uniform_int_distribution<int> exponent(-200, 200);
  for (int i = 0; i < 200000; ++i) {
    // a long double with bits below a double's too
    const long double tail = static_cast<long double>(near(rng)) * 0x1p-60L;
    expect_remainder(static_cast<long double>(near(rng)) + tail);
    expect_remainder(static_cast<long double>(far(rng)) + tail);
    expect_remainder(std::ldexp(static_cast<long double>(near(rng)), exponent(rng)));
    if (HasFailure()) return;
  }
}

TEST(WrapToPi, QuotientsNearAHalf) {
  // a = (n + 1/2)·2π as long doubles and their neighbours: a/2π within an ulp or so of a half,
  // where the rounded quotient may pick either integer.
  std::mt19937_64 rng(20261128);
  std::uniform_int_distribution<std::int64_t> turns(2, std::int64_t{1} << 29);
  for (int i = 0; i < 20000; ++i) {
    const auto n = static_cast<long double>(turns(rng));
    for (long double sign : {1.0L, -1.0L}) {
      long double a = sign * (n + 0.5L) * kTwoPi;
      for (int k = 0; k < 4; ++k) a = std::nextafter(a, 0.0L);
      for (int k = 0; k < 8; ++k, a = std::nextafter(a, sign * 0x1p40L)) expect_remainder(a);
    }
    if (HasFailure()) return;
  }
}

TEST(WrapToPi, MultiplesOfTwoPi) {
  // n·2π rounded: a remainder of zero (a's sign) or of a few ulps.
  for (std::int64_t n = 1; n < (std::int64_t{1} << 30); n = n * 3 + 1) {
    for (long double sign : {1.0L, -1.0L}) {
      long double a = sign * static_cast<long double>(n) * kTwoPi;
      for (int k = 0; k < 4; ++k) a = std::nextafter(a, 0.0L);
      for (int k = 0; k < 8; ++k, a = std::nextafter(a, sign * 0x1p40L)) expect_remainder(a);
    }
  }
}

// ---- ulp32 -------------------------------------------------------------------------------------

long double ulp32_by_frexp(long double v) {
  v = std::fabs(v);
  if (v < 0x1p-126L) return 0x1p-149L;
  int e = 0;
  (void)std::frexp(v, &e);
  return std::ldexp(1.0L, e - 24);
}

TEST(Ulp32, EqualsTheFrexpDefinition) {
  const long double inf = std::numeric_limits<long double>::infinity();
  std::vector<long double> values = {0.0L, -0.0L, 0x1p-149L, 0x1p-127L, std::numeric_limits<long double>::max(),
                                     std::numeric_limits<long double>::denorm_min(), std::numeric_limits<long double>::min()};
  for (int e = -16382; e <= 16383; ++e) {
    const long double p = std::ldexp(1.0L, e);
    values.insert(values.end(), {p, std::nextafter(p, 0.0L), std::nextafter(p, inf), -p});
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.5, 1.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int i = 0; i < 100000; ++i) {
    values.push_back(std::ldexp(static_cast<long double>(unit(rng)) + static_cast<long double>(unit(rng)) * 0x1p-60L, exponent(rng)));
  }
  for (const long double v : values) {
    const long double want = ulp32_by_frexp(v), got = ropecheck::judge::ulp32(v);
    ASSERT_TRUE(same(got, want)) << std::hexfloat << static_cast<double>(v) << ": ulp32 " << static_cast<double>(got) << ", frexp's "
                                 << static_cast<double>(want);
  }
  EXPECT_EQ(ropecheck::judge::ulp32(1.0L), 0x1p-23L);
  EXPECT_EQ(ropecheck::judge::ulp32(3.0L), 0x1p-22L);
  EXPECT_EQ(ropecheck::judge::ulp32(-0x1p-126L), 0x1p-149L);
  EXPECT_EQ(ropecheck::judge::ulp32(std::nextafter(0x1p-126L, 0.0L)), 0x1p-149L);
}

// ---- atan2_by_table ----------------------------------------------------------------------------

// |got − atan2(y, x)| from MPFR at 256 bits, as a long double (the error, not the angle, rounded).
struct Mpfr {
  mpfr_t exact, y, x, error;
  Mpfr() { mpfr_inits2(256, exact, y, x, error, static_cast<mpfr_ptr>(nullptr)); }
  ~Mpfr() { mpfr_clears(exact, y, x, error, static_cast<mpfr_ptr>(nullptr)); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
  // The error of `got` and the exact angle (rounded).
  std::pair<long double, long double> error_of(long double got, long double yv, long double xv) {
    mpfr_set_ld(y, yv, MPFR_RNDN);  // exact: 256 bits hold a long double
    mpfr_set_ld(x, xv, MPFR_RNDN);
    mpfr_atan2(exact, y, x, MPFR_RNDN);
    mpfr_set_ld(error, got, MPFR_RNDN);
    mpfr_sub(error, error, exact, MPFR_RNDN);
    return {std::fabs(mpfr_get_ld(error, MPFR_RNDN)), mpfr_get_ld(exact, MPFR_RNDN)};
  }
};

class Atan2ByTable : public ::testing::Test {
 protected:
  Mpfr mpfr_;
  long double worst_ = 0, worst_relative_ = 0;
  long long checked_ = 0;
  void check(long double y, long double x) {
    const long double got = ropecheck::judge::atan2_by_table(y, x);
    const auto [error, exact] = mpfr_.error_of(got, y, x);
    ++checked_;
    worst_ = std::max(worst_, error);
    ASSERT_LE(error, 0x1p-60L) << std::hexfloat << "atan2_by_table(" << static_cast<double>(y) << ", " << static_cast<double>(x)
                               << ") = " << static_cast<double>(got);
    if (x > 0 && std::fabs(y) <= std::fabs(x) / 256 && exact != 0) {
      worst_relative_ = std::max(worst_relative_, error / std::fabs(exact));
      ASSERT_LE(error, 0x1p-62L * std::fabs(exact)) << std::hexfloat << "atan2_by_table(" << static_cast<double>(y) << ", "
                                                     << static_cast<double>(x) << "): relative";
    }
  }
  // Every sign of (y, x) and both orders (the eight octants).
  void check_octants(long double y, long double x) {
    for (long double sy : {1.0L, -1.0L}) {
      for (long double sx : {1.0L, -1.0L}) {
        check(sy * y, sx * x);
        check(sy * x, sx * y);
      }
    }
  }
  void TearDown() override {
    std::printf("%lld angles: worst error 2^%.2f, worst relative error of small angles 2^%.2f\n", checked_,
                worst_ > 0 ? static_cast<double>(std::log2(worst_)) : -999.0,
                worst_relative_ > 0 ? static_cast<double>(std::log2(worst_relative_)) : -999.0);
  }
};

TEST_F(Atan2ByTable, TableIsCorrectlyRounded) {
  mpfr_t k64, atan_k;
  mpfr_inits2(64, k64, atan_k, static_cast<mpfr_ptr>(nullptr));
  for (int k = 0; k <= 64; ++k) {
    mpfr_set_si(k64, k, MPFR_RNDN);
    mpfr_div_si(k64, k64, 64, MPFR_RNDN);  // exact
    mpfr_atan(atan_k, k64, MPFR_RNDN);     // to 64 bits, to nearest: the long double nearest
    EXPECT_EQ(ropecheck::judge::kAtanOfSixtyFourths[k], mpfr_get_ld(atan_k, MPFR_RNDN)) << "atan(" << k << "/64)";
  }
  mpfr_clears(k64, atan_k, static_cast<mpfr_ptr>(nullptr));
}

TEST_F(Atan2ByTable, TablePointsAndMidpoints) {
  // Ratios at k/64 and (k + 1/2)/64 and their long double neighbours: k's choice flips there.
  const long double inf = std::numeric_limits<long double>::infinity();
  for (int k2 = 0; k2 <= 128; ++k2) {
    const long double ratio = static_cast<long double>(k2) / 128;
    for (long double x : {1.0L, 0.7L, 3.0e5L, 1.0e-7L}) {
      long double y = ratio * x;
      for (int i = 0; i < 3; ++i) y = std::nextafter(y, 0.0L);
      for (int i = 0; i < 7; ++i, y = std::nextafter(y, inf)) {
        if (y > 0) check_octants(y, x);
      }
    }
  }
}

TEST_F(Atan2ByTable, PairsAsTheDiagnosisFormsThem) {
  // (x·a + y·b, x·b − y·a) of doubles: an input pair and its rotation by an angle, perturbed by a
  // few ulps as a candidate's rounding would.
  std::mt19937_64 rng(20261127);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> angle(-3.2, 3.2);
  std::uniform_int_distribution<int> ulps(-8, 8);
  std::uniform_int_distribution<int> exponent(-40, 40);
  for (int i = 0; i < 100000; ++i) {
    const double x = std::ldexp(normal(rng), exponent(rng)), y = std::ldexp(normal(rng), exponent(rng));
    const double phi = angle(rng);
    double a = x * std::cos(phi) - y * std::sin(phi), b = x * std::sin(phi) + y * std::cos(phi);
    a += ulps(rng) * std::ldexp(std::numeric_limits<double>::epsilon(), std::ilogb(a));
    b += ulps(rng) * std::ldexp(std::numeric_limits<double>::epsilon(), std::ilogb(b));
    const long double lx = x, ly = y, la = a, lb = b;
    check(lx * lb - ly * la, lx * la + ly * lb);
    if (HasFatalFailure()) return;
  }
}

TEST_F(Atan2ByTable, EveryOctantAndMagnitude) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> exponent(-16000, 15990);
  std::uniform_int_distribution<int> spread(-80, 80);
  for (int i = 0; i < 25000; ++i) {
    const int e = exponent(rng);
    // y/x of every size: 2^-80 (a tiny angle, or one near ±π/2 or ±π) up to 1
    const long double x = std::ldexp(0.5L + static_cast<long double>(unit(rng)) / 2 + static_cast<long double>(unit(rng)) * 0x1p-60L, e);
    const long double y = std::ldexp(static_cast<long double>(unit(rng)) + static_cast<long double>(unit(rng)) * 0x1p-62L,
                                     e + std::min(0, spread(rng)));
    if (y > 0) check_octants(y, x);
    if (HasFatalFailure()) return;
  }
}

TEST_F(Atan2ByTable, ColdPathIsStdAtan2) {
  const long double inf = std::numeric_limits<long double>::infinity();
  const long double nan = std::numeric_limits<long double>::quiet_NaN();
  const std::vector<long double> special = {0.0L, -0.0L, inf, -inf, nan, 1.0L, -1.0L, 0x1p16000L, -0x1p16001L, 0x1p-16400L};
  for (const long double y : special) {
    for (const long double x : special) {
      const long double want = std::atan2(y, x), got = ropecheck::judge::atan2_by_table(y, x);
      if (std::fabs(y) == 1 && std::fabs(x) == 1) {
        check(y, x);  // the fast path, here for the signs
      } else {
        EXPECT_TRUE(same(got, want)) << std::hexfloat << "atan2_by_table(" << static_cast<double>(y) << ", " << static_cast<double>(x)
                                     << ") = " << static_cast<double>(got) << ", std::atan2's " << static_cast<double>(want);
      }
    }
  }
}

// ---- pair_norm ---------------------------------------------------------------------------------

TEST(PairNorm, WithinTwoToTheMinus62OfMpfr) {
  mpfr_t a, b, norm;
  mpfr_inits2(256, a, b, norm, static_cast<mpfr_ptr>(nullptr));
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-1070, 1023);
  std::vector<std::pair<double, double>> pairs = {{0.0, 0.0}, {-0.0, 0.0}, {3.0, 4.0}, {0x1p-1074, 0.0}, {0x1p-1074, 0x1p-1074},
                                                  {std::numeric_limits<double>::max(), std::numeric_limits<double>::max()}};
  for (int i = 0; i < 100000; ++i) pairs.emplace_back(std::ldexp(unit(rng), exponent(rng)), std::ldexp(unit(rng), exponent(rng)));
  for (const auto& [x, y] : pairs) {
    mpfr_set_d(a, x, MPFR_RNDN);
    mpfr_set_d(b, y, MPFR_RNDN);
    mpfr_hypot(norm, a, b, MPFR_RNDN);
    const long double want = mpfr_get_ld(norm, MPFR_RNDN), got = ropecheck::judge::pair_norm(x, y);
    ASSERT_LE(std::fabs(got - want), 0x1p-62L * want) << std::hexfloat << x << ", " << y;
  }
  mpfr_clears(a, b, norm, static_cast<mpfr_ptr>(nullptr));
}

// ---- sort_by_position_magnitude -----------------------------------------------------------------

struct Sample {
  long double m;
  int order;  // where it was given: ties must keep it
};

void expect_stable_sort_order(std::vector<Sample> samples) {
  std::vector<Sample> want = samples;
  std::stable_sort(want.begin(), want.end(), [](const Sample& l, const Sample& r) { return std::fabs(l.m) < std::fabs(r.m); });
  ropecheck::judge::sort_by_position_magnitude(samples);
  ASSERT_EQ(samples.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(samples[i].m == want[i].m && samples[i].order == want[i].order) << "at " << i << " of " << want.size();
  }
}

TEST(SortByPositionMagnitude, StableSortsOrder) {
  std::mt19937_64 rng(3);
  const auto make = [&](std::vector<long double> ms) {
    std::vector<Sample> v;
    for (const long double m : ms) v.push_back({m, static_cast<int>(v.size())});
    return v;
  };
  expect_stable_sort_order({});
  expect_stable_sort_order(make({5}));
  expect_stable_sort_order(make({0, 1, 1, 2, 3, 3, 3, 9}));          // one run, ties
  expect_stable_sort_order(make({4, 5, 6, 0, 1, 2, 3, 7, -1, -5}));  // a few runs, |m| for a negative one
  std::vector<long double> descending;
  for (int i = 100; i > 0; --i) descending.push_back(i % 7);
  expect_stable_sort_order(make(descending));  // many runs of one
  for (int runs = 1; runs <= 9; ++runs) {
    // a check's sample: sorted runs (a chunk's tokens, the spread's), each m repeated (the heads)
    std::vector<long double> ms;
    std::uniform_int_distribution<int> position(-50, 4095);
    for (int r = 0; r < runs; ++r) {
      std::vector<long double> run;
      for (int t = 0; t < 300; ++t) run.push_back(position(rng));
      std::sort(run.begin(), run.end(), [](long double l, long double r) { return std::fabs(l) < std::fabs(r); });
      for (const long double m : run) ms.insert(ms.end(), {m, m, m});
    }
    expect_stable_sort_order(make(ms));
  }
  std::uniform_int_distribution<int> few(0, 20);
  for (int n : {2, 3, 17, 1000, 4097}) {
    std::vector<long double> ms;
    for (int i = 0; i < n; ++i) ms.push_back(few(rng) - 10);
    expect_stable_sort_order(make(ms));
  }
}

}  // namespace
