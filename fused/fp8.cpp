// FP8 codes and values (fused/fp8.h).
#include "fused/fp8.h"

namespace ropecheck::fused {

double decode_fp8(std::uint8_t code, Fp8 format) {
  const bool e5m2 = format == Fp8::e5m2;
  const int mantissa_bits = e5m2 ? 2 : 3;
  const int bias = e5m2 ? 15 : 7;
  const int exponent = (code & 0x7f) >> mantissa_bits;
  const int mantissa = code & ((1 << mantissa_bits) - 1);
  const double sign = (code & 0x80) != 0 ? -1.0 : 1.0;
  if (e5m2 && exponent == 31)
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (!e5m2 && exponent == 15 && mantissa == 7) return std::numeric_limits<double>::quiet_NaN();  // E4M3FN: S.1111.111
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias - mantissa_bits);
  return sign * std::ldexp((1 << mantissa_bits) + mantissa, exponent - bias - mantissa_bits);
}

std::uint8_t encode_fp8(double value, Fp8 format) {
  const bool e5m2 = format == Fp8::e5m2;
  const std::uint8_t sign = std::signbit(value) ? 0x80 : 0;
  if (std::isnan(value)) return static_cast<std::uint8_t>(sign | 0x7f);
  if (std::isinf(value) && e5m2) return static_cast<std::uint8_t>(sign | 0x7c);
  const double v = quantize_fp8(value, format, true);
  // The codes are ordered as their magnitudes: the code of |v| is the one among 0..max that decodes to it.
  for (int c = 0; c < 0x80; ++c) {
    if (decode_fp8(static_cast<std::uint8_t>(c), format) == std::fabs(v)) return static_cast<std::uint8_t>(sign | c);
  }
  return static_cast<std::uint8_t>(sign | 0x7f);
}

bool is_fp8_value(double value, Fp8 format) {
  if (std::isnan(value)) return true;
  if (std::isinf(value)) return format == Fp8::e5m2;
  if (std::fabs(value) > fp8_format(format).max) return false;
  return round_fp8_unbounded(value, fp8_format(format)) == value;
}

}  // namespace ropecheck::fused
