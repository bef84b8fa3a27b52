#include "reference/rounding.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace ropecheck::reference {

void round_finite_to_format(std::span<double> values, Dtype dtype) {
  switch (dtype) {
    case Dtype::f64:
      return;  // every finite double is a value of binary64: round_to_format gives it back
    case Dtype::f32:  // the dtype a constant of the loop: round_to_format is the hardware conversion
      for (double& v : values) {
        if (std::isfinite(v)) v = round_to_format(v, Dtype::f32);
      }
      return;
    default:
      for (double& v : values) {
        if (std::isfinite(v)) v = round_to_format(v, dtype);
      }
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
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", value);
  return buffer;
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
