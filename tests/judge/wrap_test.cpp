// The diagnosis's one wrap (judge/inference.h wrap_to_pi): the value of std::remainder(a, 2π) for
// every a, bit for bit, whether its fast path or remainder gives it. The cases: the boundaries of
// the fast path (±π, the ties ±3π, 4π) and the long doubles next to them, random angles within
// ±5π, within ±2^40 and of every exponent, zeros, infinities and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "judge/inference.h"

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
  for (long double edge : {0.0L, pi, 3 * pi, 2 * kTwoPi, kTwoPi, pi / 2, 5 * pi, 0x1p-16400L, 0x1p63L}) {
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

}  // namespace
