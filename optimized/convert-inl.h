// Scalar conversions between binary32 and the 16-bit formats, bit-exact with the x86 instructions
// the SIMD kernels use (vcvtps2ph with round-to-nearest-even, vcvtph2ps, and the bfloat16 integer
// rounding below), so that every kernel produces the same bits.
//
// Included INSIDE each kernel's namespace (no include guard, no #include): see kernel-inl.h. The
// CUDA kernel includes it too (ROPECHECK_HD from optimized/host_device.h): on the device the
// binary16 conversions of non-NaN values are the cvt instructions, which give the integer code's bits
// (checked bit for bit against the scalar kernel by optimized_cuda_test on a GPU); NaNs, whose
// bits the hardware canonicalizes, take the integer code there too.

ROPECHECK_HD inline float bits_to_float(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}
ROPECHECK_HD inline std::uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
#endif
}

// binary16 -> binary32: exact.
ROPECHECK_HD inline float half_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  // cvt.f32.f16 is exact too; only a NaN's bits differ (the device's canonical NaN), so NaNs take
  // the integer path below
  if ((h & 0x7C00u) != 0x7C00u || (h & 0x3FFu) == 0) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
  }
#endif
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {
    // zero or subnormal: mantissa · 2^-24, exact in binary32
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return (sign != 0) ? -magnitude : magnitude;
  }
  if (exponent == 31) return bits_to_float(sign | 0x7F800000u | (mantissa << 13) | (mantissa ? 0x400000u : 0u));
  return bits_to_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// binary32 -> binary16, round to nearest, ties to even; overflow to ±Inf; NaN stays NaN (quiet).
ROPECHECK_HD inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = float_to_bits(f);
#if defined(__CUDA_ARCH__)
  // cvt.rn.f16.f32 rounds to nearest even, subnormal results and overflow to ±Inf included (no
  // .ftz), as the integer code below does; only a NaN's bits differ, so NaNs take that code
  if ((x & 0x7FFFFFFFu) <= 0x7F800000u) {
    std::uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
  }
#endif
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t magnitude = x & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  // 65520 = 65504 + half an ulp: the tie goes to even, which is 2^16 = overflow.
  if (magnitude >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
  std::uint32_t quotient;
  std::uint32_t remainder;
  std::uint32_t halfway;
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal result, n = value / 2^-24
    const std::uint32_t exponent = magnitude >> 23;
    if (exponent < 102) return static_cast<std::uint16_t>(sign);  // below 2^-25: rounds to zero
    const std::uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126 - exponent;  // 14 .. 24
    quotient = significand >> shift;
    remainder = significand & ((1u << shift) - 1u);
    halfway = 1u << (shift - 1);
  } else {  // normal: re-bias the exponent (127 -> 15) and drop 13 mantissa bits
    const std::uint32_t rebiased = magnitude - 0x38000000u;
    quotient = rebiased >> 13;
    remainder = rebiased & 0x1FFFu;
    halfway = 0x1000u;
  }
  if (remainder > halfway || (remainder == halfway && (quotient & 1u))) ++quotient;
  return static_cast<std::uint16_t>(sign | quotient);
}

// binary64 → binary32 rounded to odd (truncated, the last bit set when inexact; NaNs as the
// conversion gives them): for the 16-bit formats RN_16(RO_32(v)) = RN_16(v), one correct rounding
// (binary32 has ≥ 2 more bits: Boldo and Melquiond, "Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008). The stores of 16-bit
// data from binary64 go through it (error_bounds.h "ROUNDING TEST").
ROPECHECK_HD inline float round_to_odd32(double v) {
  const float f = static_cast<float>(v);
  const double back = static_cast<double>(f);
  if (back == v || v != v) return f;
  std::uint32_t bits = float_to_bits(f);
  if (::fabs(back) > ::fabs(v)) bits -= 1;  // rounded away from zero: one step back toward it
  return bits_to_float(bits | 1u);
}

ROPECHECK_HD inline float bf16_to_float(std::uint16_t b) { return bits_to_float(static_cast<std::uint32_t>(b) << 16); }

// binary32 -> bfloat16, round to nearest, ties to even (add 0x7FFF plus the lowest kept bit, then
// truncate); overflow carries into the exponent and gives ±Inf; NaN stays NaN (quiet bit set).
ROPECHECK_HD inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = float_to_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

// The rounding cells of the 16-bit formats on binary32 bits (kernel-inl.h decide32's cell test,
// error_bounds.h "ROUNDING TEST", THE CELL TEST). For T with k dropped bits (binary16: 13 in its
// normal range, bfloat16: 16 everywhere), the key of a binary32 v is (bits(v) + 2^(k−1)) >> k: two
// values of one sign have the same key iff they lie in one half-open run [c − 2^(k−1), c + 2^(k−1))
// of bit patterns, and every value of such a run but its lower end (a midpoint of T, a tie) rounds
// to the same value of T. A key is the bits plus the bias; the caller compares keys with the low k
// bits masked off (kHalfCellMask, kBf16CellMask), which also compares the signs.
inline constexpr std::uint32_t kHalfCellBias = 0x1000u;
inline constexpr std::uint32_t kHalfCellMask = 0xFFFFE000u;
inline constexpr std::uint32_t kBf16CellBias = 0x8000u;
inline constexpr std::uint32_t kBf16CellMask = 0xFFFF0000u;
// binary16's runs are its rounding cells only at magnitudes ≥ 2^-14 − 2^-26 (these bits): below,
// its subnormal spacing 2^-24 is coarser than 2^13 binary32 ulps. The run of 2^-14, which starts
// there, lies inside 2^-14's cell [2^-14 − 2^-25, 2^-14 + 2^-25].
inline constexpr std::uint32_t kHalfCellFloorBits = 0x387FF000u;
ROPECHECK_HD inline bool same_cell(std::uint32_t lo_bits, std::uint32_t hi_bits, std::uint32_t bias, std::uint32_t mask) {
  return (((lo_bits + bias) ^ (hi_bits + bias)) & mask) == 0;
}
