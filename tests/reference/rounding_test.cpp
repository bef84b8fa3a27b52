// Correct rounding to f64/f32/f16/bf16 on constructed hard cases, checked against MPFR's own
// IEEE emulation (mpfr_subnormalize), and the bit encodings against IEEE 754 facts.
#include "reference/rounding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "reference/multiprecision.h"
#include "tests/reference/mpfr_oracle.h"

namespace ropecheck {
namespace {

using reference::Real;

const Dtype kDtypes[] = {Dtype::f64, Dtype::f32, Dtype::f16, Dtype::bf16};

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// Hard cases for one format: exact ties between neighbours (normal, subnormal, at the overflow
// threshold), the same ± 2^-100 relative, the subnormal/normal boundary and the smallest values.
std::vector<Real> hard_cases(Dtype dtype) {
  const reference::Format f = reference::format_of(dtype);
  std::vector<Real> cases;
  auto add_around = [&](const Real& x) {
    for (int sign : {1, -1}) {
      const Real v = x * sign;
      cases.push_back(v);
      cases.push_back(v + abs(v) * ldexp(Real(1), -100));
      cases.push_back(v - abs(v) * ldexp(Real(1), -100));
    }
  };
  const Real one(1);
  const Real quantum_at_one = ldexp(one, 1 - f.precision);
  add_around(one + quantum_at_one / 2);          // tie, lower neighbour even (1.0)
  add_around(one + quantum_at_one * 3 / 2);      // tie, upper neighbour even
  add_around(one - quantum_at_one / 4);          // tie just below a power of two (half-width q/4)
  const Real min_normal = ldexp(one, f.emin);
  const Real min_subnormal = ldexp(one, f.emin - f.precision + 1);
  add_around(min_normal);
  add_around(min_normal - min_subnormal / 2);    // tie between the largest subnormal and min normal
  add_around(min_subnormal);
  add_around(min_subnormal / 2);                 // tie between 0 and the smallest subnormal
  add_around(min_subnormal * 3 / 2);             // tie between the two smallest subnormals
  add_around(min_subnormal / 4);
  const Real max = Real(reference::max_finite(dtype));
  add_around(max);
  add_around(max + ldexp(one, f.emax - f.precision));  // overflow threshold: the tie rounds to Inf
  add_around(max + ldexp(one, f.emax - f.precision + 1));
  return cases;
}

TEST(Rounding, HardCasesMatchMpfr) {
  reference::PrecisionScope scope(512);
  for (Dtype dtype : kDtypes) {
    for (const Real& value : hard_cases(dtype)) {
      const double expected = testing::oracle_round(value, dtype);
      const double got = static_cast<double>(reference::round_to_format(value, dtype));
      EXPECT_TRUE(same_value(got, expected)) << name(dtype) << " value " << value.str(40, std::ios_base::scientific)
                                             << " got " << reference::to_hex(got) << " expected "
                                             << reference::to_hex(expected);
      // The double instantiation (with its bit-level f32 / bf16 paths) on every case a double holds:
      // the ties, the binade and subnormal boundaries, the overflow threshold.
      const double as_double = static_cast<double>(value);
      if (Real(as_double) == value) {
        EXPECT_TRUE(same_value(reference::round_to_format(as_double, dtype), expected))
            << name(dtype) << " double " << reference::to_hex(as_double);
      }
    }
  }
}

TEST(Rounding, RandomValuesMatchMpfr) {
  reference::PrecisionScope scope(200);
  std::mt19937_64 rng(12345);
  for (Dtype dtype : kDtypes) {
    const reference::Format f = reference::format_of(dtype);
    for (int i = 0; i < 20000; ++i) {
      // Random 200-bit significand, exponent spanning subnormals to overflow.
      Real m(0);
      for (int w = 0; w < 4; ++w) m = ldexp(m, 50) + Real(static_cast<double>(rng() >> 14));
      m = ldexp(m, -200);
      const int exponent = static_cast<int>(rng() % (f.emax - f.emin + 2 * f.precision + 4)) + f.emin - f.precision - 2;
      Real value = ldexp(m, exponent);
      if (rng() & 1) value = -value;
      const double expected = testing::oracle_round(value, dtype);
      const double got = static_cast<double>(reference::round_to_format(value, dtype));
      ASSERT_TRUE(same_value(got, expected)) << name(dtype) << " " << value.str(60, std::ios_base::scientific);
    }
  }
}

// The long double instantiation (the diagnosis's scorer; its x87 conversions and bit-level path)
// against MPFR: every hard case a long double holds, the same cases moved by one long double ulp
// either way (a tie's neighbours, which a double cannot tell apart from the tie), and random long
// doubles of every 64-bit significand from below half the smallest subnormal to past the overflow
// threshold.
TEST(Rounding, LongDoubleInstantiationMatchesMpfr) {
  reference::PrecisionScope scope(512);
  const auto check = [](long double value, Dtype dtype) {
    const double expected = testing::oracle_round(Real(value), dtype);
    const double got = static_cast<double>(reference::round_to_format(value, dtype));
    EXPECT_TRUE(same_value(got, expected)) << name(dtype) << " long double " << std::hexfloat << value << " got "
                                           << reference::to_hex(got) << " expected " << reference::to_hex(expected);
  };
  const long double inf = std::numeric_limits<long double>::infinity();
  std::mt19937_64 rng(20261127);
  for (Dtype dtype : kDtypes) {
    const reference::Format f = reference::format_of(dtype);
    int held = 0;
    for (const Real& value : hard_cases(dtype)) {
      const auto as_long = static_cast<long double>(value);
      if (Real(as_long) != value) continue;
      ++held;
      check(as_long, dtype);
      check(std::nextafter(as_long, inf), dtype);
      check(std::nextafter(as_long, -inf), dtype);
    }
    EXPECT_GT(held, 20) << name(dtype);  // the ties, boundaries and smallest values, not a few
    for (int i = 0; i < 100000 && !HasFailure(); ++i) {
      const long double m = std::ldexp(static_cast<long double>(rng() | (std::uint64_t{1} << 63)), -64);  // [1/2, 1)
      const int exponent = static_cast<int>(rng() % (f.emax - f.emin + 2 * f.precision + 8)) + f.emin - f.precision - 4;
      const long double value = std::ldexp(m, exponent);
      check((rng() & 1) != 0 ? -value : value, dtype);
    }
  }
  // zeros keep their sign; far outside every format's range
  for (Dtype dtype : kDtypes) {
    for (long double value : {0.0L, -0.0L, 0x1p-16400L, -0x1p-16400L, 0x1p16000L, -0x1p16000L, 0x1p-1100L}) check(value, dtype);
  }
}

// round_finite_to_format over a buffer: each finite double rounded as MPFR rounds it (the oracle),
// NaN (with its payload) and ±Inf kept bit for bit — doubles of every magnitude, random patterns.
TEST(Rounding, BuffersRoundTheirFiniteValuesOnly) {
  std::mt19937_64 rng(777);
  std::vector<double> values;
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t bits = rng();
    if (i % 5 == 0) bits = (bits & 0x800fffffffffffffULL) | (std::uint64_t{rng() % 300 + 900} << 52);  // near 1
    double v;
    std::memcpy(&v, &bits, sizeof v);
    values.push_back(v);
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (double special : {0.0, -0.0, inf, -inf, std::nan(""), 0x1p-1074, 65520.0, 0x1.fffffffp127}) values.push_back(special);
  reference::PrecisionScope scope(128);
  for (Dtype dtype : kDtypes) {
    std::vector<double> rounded = values;
    const std::int64_t changed = reference::round_finite_to_format(rounded, dtype);
    std::int64_t expected_changed = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double expected = std::isfinite(values[i]) ? testing::oracle_round(Real(values[i]), dtype) : values[i];
      ASSERT_EQ(std::memcmp(&rounded[i], &expected, sizeof expected), 0)
          << name(dtype) << " " << reference::to_hex(values[i]) << " gave " << reference::to_hex(rounded[i]);
      if (std::isfinite(values[i]) && expected != values[i]) ++expected_changed;
    }
    // The count of values changed: the finite ones the oracle moves (none for f64).
    EXPECT_EQ(changed, expected_changed) << name(dtype);
    if (dtype != Dtype::f64) {
      EXPECT_GT(changed, 1000) << name(dtype);
    }
  }
}

TEST(Rounding, DoubleAndRealInstantiationsAgree) {
  // The fast path rounds doubles with the same template: compare with MPFR on random doubles.
  reference::PrecisionScope scope(64);
  std::mt19937_64 rng(7);
  for (Dtype dtype : {Dtype::f32, Dtype::f16, Dtype::bf16}) {
    for (int i = 0; i < 100000; ++i) {
      std::uint64_t bits = rng();
      double v;
      std::memcpy(&v, &bits, 8);
      if (!std::isfinite(v)) continue;
      int exponent = 0;
      v = std::ldexp(std::frexp(v, &exponent), static_cast<int>(rng() % 300) - 170);
      ASSERT_TRUE(same_value(reference::round_to_format(v, dtype), testing::oracle_round(Real(v), dtype)))
          << reference::to_hex(v);
    }
  }
}

TEST(Rounding, RoundIfDecidedRefusesStraddlingIntervals) {
  reference::PrecisionScope scope(256);
  const Real tie = Real(1) + ldexp(Real(1), -24);  // midpoint of two f32 neighbours
  EXPECT_FALSE(reference::round_if_decided(tie, ldexp(Real(1), -80), Dtype::f32).has_value());
  const auto above = reference::round_if_decided(Real(tie + ldexp(Real(1), -60)), ldexp(Real(1), -80), Dtype::f32);
  ASSERT_TRUE(above.has_value());
  EXPECT_EQ(*above, 1.0 + std::ldexp(1.0, -23));
}

// Just above a power of two the rounding interval is a full q/2 wide (only the binade below has the
// finer quantum): 1 + 3q/8 rounds to 1 in every dtype, and 1 − 3q/16 (inside 1's q/4 below) too,
// while 1 + 5q/8 rounds up and 1 − 5q/16 down. Both tests must decide all four (declining the first
// sent 1 value in 500 of a bf16 rotation to the MPFR cold path).
TEST(Rounding, DoubleDoubleTestsDecideBothSidesOfAPowerOfTwo) {
  for (Dtype dtype : kDtypes) {
    const double q = reference::ulp(1.0, dtype);  // quantum of [1, 2)
    const double error = 0x1p-90;
    // 1 + offset as a double-double (1 and the offset: exact for f64 too).
    const struct {
      double offset, rounded;
    } cases[] = {{3 * q / 8, 1.0}, {-3 * q / 16, 1.0}, {5 * q / 8, 1 + q}, {-5 * q / 16, 1 - q / 2}};
    for (const auto& c : cases) {
      for (const double sign : {1.0, -1.0}) {
        const reference::DoubleDouble v = reference::fast_two_sum(sign, sign * c.offset);
        const std::optional<double> fast = reference::round_if_decided_fast(v, error, dtype);
        const std::optional<double> generic = reference::round_if_decided(v, error, dtype);
        ASSERT_TRUE(fast.has_value()) << name(dtype) << " " << reference::to_hex(v.hi);
        ASSERT_TRUE(generic.has_value()) << name(dtype) << " " << reference::to_hex(v.hi);
        EXPECT_EQ(*fast, sign * c.rounded) << name(dtype) << " " << reference::to_hex(v.hi);
        EXPECT_EQ(*generic, sign * c.rounded) << name(dtype) << " " << reference::to_hex(v.hi);
      }
    }
    // 1 + q/2 is a tie and 1 − q/4 one below: neither test may decide an interval around them.
    for (const double offset : {q / 2, -q / 4}) {
      const reference::DoubleDouble tie = reference::fast_two_sum(1, offset);
      EXPECT_FALSE(reference::round_if_decided_fast(tie, error, dtype).has_value()) << name(dtype);
      EXPECT_FALSE(reference::round_if_decided(tie, error, dtype).has_value()) << name(dtype);
    }
  }
}

// The double-double rounding tests of the fast paths (generic and bit-level): whenever one decides
// a value r, every x with |x − (hi + lo)| ≤ error rounds to r (MPFR's IEEE emulation on the two
// ends of the interval, exact at 256 bits). Values are drawn around the dtype's rounding boundaries
// (midpoints and representable values, ± small offsets) across subnormals, normals and overflow.
TEST(Rounding, DoubleDoubleTestsDecideOnlyWhatTheIntervalDecides) {
  reference::PrecisionScope scope(256);
  std::mt19937_64 rng(2024);
  for (Dtype dtype : kDtypes) {
    const reference::Format f = reference::format_of(dtype);
    int fast_decided = 0, generic_decided = 0, cases = 0;
    for (int i = 0; i < 60000; ++i) {
      // A dtype value (random significand, exponent from below the subnormals to the top binade).
      const int exponent = static_cast<int>(rng() % (f.emax - f.emin + f.precision + 3)) + f.emin - f.precision - 1;
      const double significand = 1 + static_cast<double>(rng() >> 11) * 0x1p-53;
      const double base = reference::round_to_format(std::ldexp(significand, exponent), dtype);
      if (!std::isfinite(base) || base == 0) continue;
      const double q = reference::ulp(base, dtype);
      // hi: the value, its upper midpoint, or anywhere within a quantum, nudged by a few ulps of hi.
      double hi = base;
      switch (rng() % 3) {
        case 0: break;
        case 1: hi = base + q / 2; break;
        default: hi = base + q * (static_cast<double>(rng() >> 11) * 0x1p-53 - 0.5); break;
      }
      if (dtype != Dtype::f64 || rng() % 2) hi = std::nextafter(hi, (rng() & 1) ? 1e308 : -1e308);
      if (rng() & 1) hi = -hi;
      // A subnormal base nudged down may round to zero (ilogb(0) is INT_MIN) or past the top to infinity.
      if (hi == 0 || !std::isfinite(hi)) continue;
      const int hi_exponent = std::ilogb(hi);
      const double lo = std::ldexp(static_cast<double>(rng() >> 11) * 0x1p-53 - 0.5, hi_exponent - 52);
      const reference::DoubleDouble v = reference::fast_two_sum(hi, lo);
      const double error = (rng() % 4 == 0) ? 0.0 : std::ldexp(q, -static_cast<int>(rng() % 64));
      const Real exact = Real(v.hi) + Real(v.lo);
      const double low = testing::oracle_round(Real(exact - Real(error)), dtype);
      const double high = testing::oracle_round(Real(exact + Real(error)), dtype);
      const std::optional<double> fast = reference::round_if_decided_fast(v, error, dtype);
      const std::optional<double> generic = reference::round_if_decided(v, error, dtype);
      ++cases;
      for (const std::optional<double>& decided : {fast, generic}) {
        if (!decided) continue;
        ASSERT_TRUE(same_value(*decided, low) && same_value(*decided, high))
            << name(dtype) << " hi " << reference::to_hex(v.hi) << " lo " << reference::to_hex(v.lo) << " error "
            << reference::to_hex(error) << " decided " << reference::to_hex(*decided) << " interval rounds to "
            << reference::to_hex(low) << ", " << reference::to_hex(high);
      }
      fast_decided += fast.has_value();
      generic_decided += generic.has_value();
    }
    // Both tests decide most cases (a third of the values sit on midpoints, a quarter of the
    // rest have errors near a quantum): a test that declines everything would pass the loop above.
    EXPECT_GT(fast_decided, cases / 3) << name(dtype);
    EXPECT_GT(generic_decided, cases / 3) << name(dtype);
  }
}

TEST(Encoding, KnownBitPatterns) {
  // IEEE 754-2008 binary16 / bfloat16 facts.
  EXPECT_EQ(reference::decode_bits(0x3c00, Dtype::f16), 1.0);
  EXPECT_EQ(reference::decode_bits(0x7bff, Dtype::f16), 65504.0);
  EXPECT_EQ(reference::decode_bits(0x0001, Dtype::f16), std::ldexp(1.0, -24));
  EXPECT_EQ(reference::decode_bits(0x0400, Dtype::f16), std::ldexp(1.0, -14));
  EXPECT_EQ(reference::decode_bits(0xc000, Dtype::f16), -2.0);
  EXPECT_TRUE(std::isinf(reference::decode_bits(0x7c00, Dtype::f16)));
  EXPECT_TRUE(std::isnan(reference::decode_bits(0x7e00, Dtype::f16)));
  EXPECT_EQ(reference::decode_bits(0x3f80, Dtype::bf16), 1.0);
  EXPECT_EQ(reference::decode_bits(0x7f7f, Dtype::bf16), reference::max_finite(Dtype::bf16));
  EXPECT_EQ(reference::decode_bits(0x0001, Dtype::bf16), std::ldexp(1.0, -133));
  EXPECT_EQ(reference::max_finite(Dtype::f16), 65504.0);
  EXPECT_EQ(reference::max_finite(Dtype::f32), static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_TRUE(std::signbit(reference::decode_bits(0x8000, Dtype::f16)));
}

// IEEE 754 binary32 / bfloat16 decoding written out (sign, biased exponent, fraction; gradual
// underflow): the formula the bit-level fast paths of encode_bits / decode_bits must agree with.
double binary32_formula(std::uint32_t word) {
  const int exponent = static_cast<int>((word >> 23) & 0xff);
  const double fraction = static_cast<double>(word & 0x7fffff);
  const double magnitude = exponent == 0 ? std::ldexp(fraction, -149) : std::ldexp(fraction + 0x1p23, exponent - 150);
  return (word >> 31) ? -magnitude : magnitude;
}

TEST(Encoding, Binary32AndBfloat16PatternsFollowTheFormula) {
  std::mt19937_64 rng(7);
  std::vector<std::uint32_t> words = {0, 0x80000000u, 1, 0x007fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u};
  for (int i = 0; i < (1 << 20); ++i) words.push_back(static_cast<std::uint32_t>(rng()));
  for (std::uint32_t word : words) {
    if ((word & 0x7f800000u) == 0x7f800000u && (word & 0x7fffffu) != 0) {
      ASSERT_TRUE(std::isnan(reference::decode_bits(word, Dtype::f32)));
      continue;
    }
    const double expected = (word & 0x7f800000u) == 0x7f800000u ? ((word >> 31) ? -HUGE_VAL : HUGE_VAL) : binary32_formula(word);
    const double v = reference::decode_bits(word, Dtype::f32);
    ASSERT_TRUE(same_value(v, expected)) << std::hex << word;
    ASSERT_EQ(reference::encode_bits(v, Dtype::f32), word) << std::hex << word;
    ASSERT_TRUE(same_value(reference::round_to_format(v, Dtype::f32), v)) << std::hex << word;
  }
  for (std::uint32_t half = 0; half < 65536; ++half) {
    const std::uint32_t word = half << 16;
    if ((word & 0x7f800000u) == 0x7f800000u) continue;  // ±Inf and NaN: KnownBitPatterns, EveryNarrowPatternRoundTrips
    ASSERT_TRUE(same_value(reference::decode_bits(half, Dtype::bf16), binary32_formula(word))) << std::hex << half;
  }
}

TEST(Encoding, Binary16PatternsFollowTheFormula) {
  // Every finite binary16 pattern (sign, 5-bit exponent biased by 15, 10-bit fraction; gradual
  // underflow below 2^-14), written out, and the generic field decoder's value.
  for (std::uint32_t half = 0; half < 65536; ++half) {
    const int exponent = static_cast<int>((half >> 10) & 0x1f);
    if (exponent == 31) continue;  // ±Inf and NaN: KnownBitPatterns, EveryNarrowPatternRoundTrips
    const double fraction = static_cast<double>(half & 0x3ff);
    const double magnitude = exponent == 0 ? std::ldexp(fraction, -24) : std::ldexp(fraction + 1024, exponent - 25);
    const double expected = (half >> 15) ? -magnitude : magnitude;
    ASSERT_TRUE(same_value(reference::decode_bits(half, Dtype::f16), expected)) << std::hex << half;
    ASSERT_TRUE(same_value(reference::decode_bits_by_fields(half, Dtype::f16), expected)) << std::hex << half;
  }
}

TEST(Encoding, EveryNarrowPatternRoundTrips) {
  for (Dtype dtype : {Dtype::f16, Dtype::bf16}) {
    for (std::uint64_t bits = 0; bits < 65536; ++bits) {
      const double v = reference::decode_bits(bits, dtype);
      if (std::isnan(v)) continue;
      ASSERT_EQ(reference::encode_bits(v, dtype), bits) << name(dtype);
      ASSERT_TRUE(reference::representable(v, dtype));
    }
  }
  // f32 patterns agree with the hardware's float.
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const std::uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(reference::encode_bits(f, Dtype::f32), bits);
    ASSERT_TRUE(same_value(reference::decode_bits(bits, Dtype::f32), f));
  }
}

TEST(HexFloat, RoundTripsAndSpellsSpecials) {
  EXPECT_EQ(reference::to_hex(0.75), "0x1.8p-1");
  EXPECT_EQ(reference::to_hex(-0.0), "-0x0p+0");
  EXPECT_EQ(reference::to_hex(INFINITY), "inf");
  EXPECT_EQ(reference::to_hex(-INFINITY), "-inf");
  EXPECT_EQ(reference::to_hex(NAN), "nan");
  EXPECT_TRUE(std::signbit(reference::parse_float("-0x0p+0")));
  EXPECT_EQ(reference::parse_float("0x1.8p-1"), 0.75);
  EXPECT_THROW(reference::parse_float("0x1.8q"), std::invalid_argument);
  EXPECT_THROW(reference::parse_float(""), std::invalid_argument);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 10000; ++i) {
    std::uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, 8);
    if (std::isnan(v)) continue;
    ASSERT_TRUE(same_value(reference::parse_float(reference::to_hex(v)), v));
  }
}

// One codec, two grammars: parse_hex reads golden files strictly, parse_float the command line's
// numbers leniently (strtod); both read glibc's subnormal form and the normalised one to_hex writes.
TEST(HexFloat, StrictGoldenGrammarAndLenientCommandLineGrammar) {
  for (const char* text : {"1.5", "0X1.8P+0", "0x1.8", "NaN", "Infinity", "+inf"}) {
    EXPECT_FALSE(reference::parse_hex(text).has_value()) << text;
    EXPECT_NO_THROW((void)reference::parse_float(text)) << text;
  }
  EXPECT_EQ(reference::parse_float("0x1.8"), 1.5);
  EXPECT_EQ(reference::to_hex(std::ldexp(1.0, -1074)), "0x1p-1074");
  EXPECT_EQ(reference::parse_hex("0x0.0000000000001p-1022"), std::ldexp(1.0, -1074));
  EXPECT_EQ(reference::parse_float("0x0.0000000000001p-1022"), std::ldexp(1.0, -1074));
  EXPECT_EQ(reference::parse_hex("0x1p-1074"), std::ldexp(1.0, -1074));
  EXPECT_EQ(reference::parse_float("0x1p-1074"), std::ldexp(1.0, -1074));
}

}  // namespace
}  // namespace ropecheck
