// The double-double cos/sin of the grid angles g·2π/1024 (g = 0..1023) that the f64 kernels'
// per-token table starts from (kernel_f64-inl.h; its error budget is in that file's header).
// Computed once per process with MPFR (baseline ISA); plain
// doubles for the per-ISA translation units.
#pragma once

namespace ropecheck::kernels {

// Grid points per turn of f64_grid_table (a power of two: the index is 10 bits of the phase).
inline constexpr int kF64GridBits = 10;
inline constexpr int kF64GridPoints = 1 << kF64GridBits;

// 4·kF64GridPoints doubles: for grid point g, [4g .. 4g + 3] = cos_hi, cos_lo, sin_hi, sin_lo of
// α_g = g·2π/1024 with hi = RN(v), lo = RN(v − hi) for v the 256-bit MPFR value, so
// |hi + lo − cos α_g|, |hi + lo − sin α_g| ≤ 2^-106 (kF64GridError). Thread-safe, never freed.
const double* f64_grid_table();
inline constexpr double kF64GridError = 0x1p-106;

// The f64 kernels' error budget (kernel_f64-inl.h steps 2–4), per unit of |A| and of |x| + |y|:
// the table's |ĉ − A cos φ|, |ŝ − A sin φ| beyond step 1's angle error (proofs/formal/gappa/
// f64_table.g: ≤ 4.7e-24 < 2^-77.49, the rest of the margin for A ≠ 1), and the double-double
// rotation's own error (proofs/formal/gappa/f64_rotation.g: ≤ 2^-102).
inline constexpr double kF64TableError = 0x1p-75;
inline constexpr double kF64RotationError = 0x1p-100;

}  // namespace ropecheck::kernels
