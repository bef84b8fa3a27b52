#include "reference/rounding.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace ropecheck::reference {

std::int64_t round_finite_to_format(std::span<double> values, Dtype dtype) {
  std::int64_t changed = 0;
  switch (dtype) {
    case Dtype::f64:
      return 0;  // every finite double is a value of binary64: round_to_format gives it back
    case Dtype::f32: {  // the dtype a constant of the loop: round_to_format is the hardware conversion
      double* const data = values.data();
      for (std::size_t i = 0; i < values.size(); ++i) {
        const double v = data[i];
        const double r = static_cast<double>(static_cast<float>(v));  // NaN and ±Inf: not kept (below)
        const bool finite = std::fabs(v) <= std::numeric_limits<double>::max();
        changed += static_cast<std::int64_t>(finite && r != v);
        data[i] = finite ? r : v;
      }
      return changed;
    }
    default:
      for (double& v : values) {
        if (!std::isfinite(v)) continue;
        const double r = round_to_format(v, dtype);
        changed += static_cast<std::int64_t>(r != v);
        v = r;
      }
      return changed;
  }
}

std::uint64_t encode_bits(double value, Dtype dtype) {
  if (dtype == Dtype::f64) {
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  }
  // binary32 and bfloat16 values are binary32 values (bfloat16: the upper half of their bits), so
  // for a representable non-NaN value the conversion to float is exact and its bits are the answer;
  // the generic path below keeps the project's NaN encoding and handles f16.
  if ((dtype == Dtype::f32 || dtype == Dtype::bf16) && !std::isnan(value)) {
    const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(value));
    return dtype == Dtype::f32 ? bits : bits >> 16;
  }
  const Format f = format_of(dtype);
  const int exponent_bits = dtype == Dtype::f16 ? 5 : 8;
  const int mantissa_bits = f.precision - 1;
  const int total_bits = 1 + exponent_bits + mantissa_bits;
  const std::uint64_t sign = std::signbit(value) ? (std::uint64_t{1} << (total_bits - 1)) : 0;
  const std::uint64_t exponent_all_ones = (std::uint64_t{1} << exponent_bits) - 1;
  if (std::isnan(value)) return sign | (exponent_all_ones << mantissa_bits) | (std::uint64_t{1} << (mantissa_bits - 1));
  if (std::isinf(value)) return sign | (exponent_all_ones << mantissa_bits);
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return sign;
  int e = 0;
  (void)std::frexp(magnitude, &e);  // magnitude in [2^(e−1), 2^e)
  const int unbiased = e - 1;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  if (unbiased < f.emin) {  // subnormal: magnitude = m·2^(emin − mantissa_bits)
    const double m = std::ldexp(magnitude, -(f.emin - mantissa_bits));
    return sign | static_cast<std::uint64_t>(m);
  }
  const double m = std::ldexp(magnitude, mantissa_bits - unbiased) - std::ldexp(1.0, mantissa_bits);
  return sign | (static_cast<std::uint64_t>(unbiased + bias) << mantissa_bits) | static_cast<std::uint64_t>(m);
}

double decode_bits_by_fields(std::uint64_t bits, Dtype dtype) {
  const Format f = format_of(dtype);
  const int exponent_bits = dtype == Dtype::f16 ? 5 : 8;
  const int mantissa_bits = f.precision - 1;
  const int total_bits = 1 + exponent_bits + mantissa_bits;
  const bool negative = (bits >> (total_bits - 1)) & 1;
  const std::uint64_t exponent_field = (bits >> mantissa_bits) & ((std::uint64_t{1} << exponent_bits) - 1);
  const std::uint64_t mantissa = bits & ((std::uint64_t{1} << mantissa_bits) - 1);
  const int bias = (1 << (exponent_bits - 1)) - 1;
  double magnitude;
  if (exponent_field == (std::uint64_t{1} << exponent_bits) - 1) {
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exponent_field == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), f.emin - mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (std::uint64_t{1} << mantissa_bits)),
                           static_cast<int>(exponent_field) - bias - mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

bool representable(double value, Dtype dtype) {
  if (!std::isfinite(value)) return true;
  const double rounded = round_to_format(value, dtype);
  return rounded == value;
}

double ulp(double value, Dtype dtype) {
  const Format f = format_of(dtype);
  double magnitude = std::fabs(value);
  if (!std::isfinite(magnitude)) magnitude = max_finite(dtype);
  if (magnitude == 0) return std::ldexp(1.0, f.emin - f.precision + 1);
  // frexp's exponent e (magnitude = m·2^e, m in [1/2, 1)) from the bits for a normal double, and
  // 2^k built from bits when normal: the judge calls this per element (libm's frexp/ldexp cost
  // a tenth of a large check).
  const auto bits = std::bit_cast<std::uint64_t>(magnitude);
  const int biased = static_cast<int>(bits >> 52);
  int e = biased - 1022;
  if (biased == 0) (void)std::frexp(magnitude, &e);
  const int k = std::max(e - f.precision, f.emin - f.precision + 1);
  if (k >= -1022) return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
  return std::ldexp(1.0, k);
}

std::string to_hex(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  std::string out = std::signbit(value) ? "-" : "";
  if (value == 0) return out + "0x0p+0";
  int exponent = 0;
  // |value| = m·2^exponent with 1 ≤ m < 2; m·2^52 is an exact integer below 2^53 (for subnormal
  // doubles too, since frexp normalises them).
  const double m = std::frexp(std::fabs(value), &exponent) * 2;
  exponent -= 1;
  auto bits = static_cast<std::uint64_t>(std::ldexp(m, 52));
  std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  out += "0x1";
  if (fraction != 0) {
    out += '.';
    static constexpr char digits[] = "0123456789abcdef";
    int count = 13;
    while ((fraction & 0xf) == 0) {
      fraction >>= 4;
      --count;
    }
    for (int i = count - 1; i >= 0; --i) out += digits[(fraction >> (4 * i)) & 0xf];
  }
  out += 'p';
  out += exponent < 0 ? '-' : '+';
  out += std::to_string(exponent < 0 ? -exponent : exponent);
  return out;
}

std::optional<double> parse_hex(std::string_view text) {
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  std::size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) ++i;
  if (text.substr(i, 2) != "0x") return std::nullopt;
  i += 2;
  auto hex_value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  // Significand digits: leading zeros skipped, at most 15 significant hex digits kept (60 bits;
  // an exact double needs 53), trailing zeros of the fraction only shift the exponent.
  std::uint64_t mantissa = 0;
  int significant_digits = 0;
  long long shift = 0;  // value = mantissa · 2^(shift + exponent)
  int integer_digits = 0;
  int fraction_digits = 0;
  bool seen_point = false;
  int pending_zeros = 0;  // zeros after the last nonzero digit, not yet folded into the mantissa
  for (; i < text.size() && text[i] != 'p'; ++i) {
    if (text[i] == '.') {
      if (seen_point) return std::nullopt;
      seen_point = true;
      continue;
    }
    const int d = hex_value(text[i]);
    if (d < 0) return std::nullopt;
    (seen_point ? fraction_digits : integer_digits) += 1;
    if (seen_point) shift -= 4;
    if (d == 0) {
      if (significant_digits > 0) ++pending_zeros;
      continue;
    }
    if (significant_digits + pending_zeros + 1 > 15) return std::nullopt;  // not an exact double
    for (; pending_zeros > 0; --pending_zeros) {
      mantissa <<= 4;
      ++significant_digits;
    }
    mantissa = (mantissa << 4) | static_cast<std::uint64_t>(d);
    ++significant_digits;
  }
  shift += 4LL * pending_zeros;
  if (integer_digits == 0 || (seen_point && fraction_digits == 0)) return std::nullopt;
  if (i >= text.size() || text[i] != 'p') return std::nullopt;
  ++i;
  bool exponent_negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    exponent_negative = text[i] == '-';
    ++i;
  }
  if (i >= text.size()) return std::nullopt;
  long long exponent = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    exponent = exponent * 10 + (text[i] - '0');
    if (exponent > 100000) return std::nullopt;
  }
  if (exponent_negative) exponent = -exponent;
  if (mantissa == 0) return negative ? -0.0 : 0.0;
  if (mantissa >= (std::uint64_t{1} << 53)) {
    // More than 53 significant bits can still be exact when the low bits are zero.
    while ((mantissa & 1) == 0) {
      mantissa >>= 1;
      ++shift;
    }
    if (mantissa >= (std::uint64_t{1} << 53)) return std::nullopt;
  }
  const long long total = shift + exponent;
  if (total > 2000 || total < -2200) return std::nullopt;
  const double value = std::ldexp(static_cast<double>(mantissa), static_cast<int>(total));
  // Exactness: no overflow, and no bits lost to gradual underflow.
  if (std::isinf(value) || value == 0) return std::nullopt;
  if (static_cast<std::uint64_t>(std::ldexp(value, static_cast<int>(-total))) != mantissa) return std::nullopt;
  return negative ? -value : value;
}

double parse_float(const std::string& text) {
  if (text == "nan" || text == "NaN" || text == "-nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf" || text == "+inf" || text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-inf" || text == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) {
    throw std::invalid_argument("expected a hex or decimal float, got '" + text + "'");
  }
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || std::isnan(value) || std::isinf(value)) {
    throw std::invalid_argument("expected a hex or decimal float, got '" + text + "'");
  }
  return value;
}

}  // namespace ropecheck::reference

namespace ropecheck::reference {

std::optional<double> round_if_decided(DoubleDouble v, double error, Dtype dtype) {
  if (!std::isfinite(v.hi)) return std::nullopt;
  const double r = round_to_format(v.hi, dtype);
  if (r == 0 || !std::isfinite(r) || std::fabs(r) >= max_finite(dtype)) return std::nullopt;
  const double q = ulp(r, dtype);
  int e = 0;
  const bool power_of_two = std::frexp(std::fabs(r), &e) == 0.5;
  // v.hi − r is exact: both are multiples of ulp(v.hi)'s binade below and within q/2 of each other.
  // The sum with v.lo rounds once (relative 2^-53).
  const double distance = (v.hi - r) + v.lo;
  if (inside_rounding_interval(r, distance, error, q / 2, power_of_two)) return r;
  return std::nullopt;
}

}  // namespace ropecheck::reference
