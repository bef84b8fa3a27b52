// The OCP 8-bit floating-point formats (E4M3 = E4M3FN: no infinity, NaN 0x7f/0xff; E5M2: IEEE-like
// with ±Inf) and the quantization to them: round to nearest, ties to even, with subnormals, then
// saturation to ±max or the format's overflow (NaN for E4M3, ±Inf for E5M2). Constants as in
// docs/fused-bounds.md's table and proofs/formal/gappa/fp8_e4m3.g, fp8_e5m2.g.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "fused/fused.h"

namespace ropecheck::fused {

struct Fp8Format {
  int precision;  // significand bits with the hidden one
  int emin;       // exponent of the smallest normal
  double max;     // largest finite value
};
constexpr Fp8Format fp8_format(Fp8 f) { return f == Fp8::e5m2 ? Fp8Format{3, -14, 57344.0} : Fp8Format{4, -6, 448.0}; }

// RN∞: round to nearest even at the format's precision and exponent floor, exponent unbounded
// above (Gappa's float<p, emin−p+1, ne>). T: double or reference::Real (frexp, ldexp, floor).
template <class T>
T round_fp8_unbounded(const T& value, Fp8Format f) {
  using std::floor;
  using std::frexp;
  using std::ldexp;
  if (value == 0) return value;
  const bool negative = value < 0;
  const T magnitude = negative ? T(-value) : value;
  int e = 0;
  (void)frexp(magnitude, &e);  // magnitude = m·2^e, 0.5 ≤ m < 1
  const int q = e - f.precision > f.emin - f.precision + 1 ? e - f.precision : f.emin - f.precision + 1;
  const T t = ldexp(magnitude, -q);
  T n = floor(t);
  const T fraction = t - n;
  const T half = T(1) / 2;
  if (fraction > half) {
    n = n + 1;
  } else if (fraction == half) {
    const T halved = n / 2;
    if (floor(halved) != halved) n = n + 1;
  }
  const T result = ldexp(n, q);
  return negative ? T(-result) : result;
}

// The stored FP8 value of the scaled value t (finite): RN∞(t), then clamped to ±max when
// saturating; not saturating, a value past max is NaN (E4M3) or ±Inf (E5M2). A NaN t gives NaN.
template <class T>
double quantize_fp8(const T& t, Fp8 format, bool saturate) {
  const Fp8Format f = fp8_format(format);
  if (!(t == t)) return std::numeric_limits<double>::quiet_NaN();
  const double r = static_cast<double>(round_fp8_unbounded(t, f));  // exact: at most 4 bits
  if (std::fabs(r) <= f.max) return r;
  if (saturate) return r < 0 ? -f.max : f.max;
  if (format == Fp8::e4m3) return std::numeric_limits<double>::quiet_NaN();
  return r < 0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
}

// The value of an FP8 code (sign, exponent, mantissa fields).
double decode_fp8(std::uint8_t code, Fp8 format);
// The code of an FP8 value (NaN: 0x7f with the sign; E5M2 ±Inf: 0x7c / 0xfc); the value must be one
// of the format (is_fp8_value), else the code of its RN∞ saturated.
std::uint8_t encode_fp8(double value, Fp8 format);
bool is_fp8_value(double value, Fp8 format);

}  // namespace ropecheck::fused
