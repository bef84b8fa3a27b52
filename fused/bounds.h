// The per-element bounds of the fused operation, derived in docs/fused-bounds.md and machine-checked
// in proofs/formal/coq/Fused.v (the steps) and proofs/formal/gappa/fp8_e4m3.g, fp8_e5m2.g (the FP8
// rounding). The judge (fused.cpp) applies them element by element; nothing here is picked.
#pragma once

#include <string>

#include "fused/fused.h"
#include "judge/tolerance.h"

namespace ropecheck::fused {

// §1 of docs/fused-bounds.md: the norm's relative errors for a head of d values in working
// precision w (binary32: 2^-24), the inverse square root within k_r = 4w.
struct NormConstants {
  double a = 0;    // the mean of squares: (1 + γ_{d+1})(1 + w)^j − 1 (j = 1 for d a power of two, else 2)
  double b = 0;    // + eps, rounded: (1 + w)(1 + a) − 1
  double e_r = 0;  // the inverse rms: (1 + b)(1 + k_r) − 1
  double nu = 0;   // each normalized element: (1 + w)²(1 + c_w)(1 + e_r) − 1, c_w = w for the 1 + w form
};
// `after`: the norm of the computed rotation, whose sum of squares gains (1 + 4√2·w)² − 1 (§2).
NormConstants norm_constants(int head_dim, NormWeight weight, double w, bool after);

// Every constant the bound of one spec under one claim needs.
struct FusedBound {
  NormPlace norm = NormPlace::none;
  double w = 0;     // working precision of the norm and the rotation (binary32; binary64 for f64 data)
  double mu_w = 0;  // half the working format's subnormal spacing (the rotation's underflow: 3·mu_w)
  NormConstants norm_c;
  double eta = 0;  // the f32-angle claim's relative angle error (judge/tolerance.h f32_angle_eta); 0: exact
  bool fp8 = false;
  double u_d = 0, mu_d = 0;         // the data dtype's rounding before the output (0 for FP8 with one rounding)
  double u8 = 0, mu8 = 0;           // FP8: half an ulp relative, half the subnormal spacing (gappa/fp8_*.g)
  double fp8_max = 0;               // M
  double overflow = 0;              // a scaled value past it is not finite without saturation (464, 61440)
  bool overflow_inclusive = false;  // E5M2: 61440 itself overflows (ties to 65536); E4M3: 464 gives 448
  double w_q = 0;                   // t = v/ŝ in binary32: (1 + 2^-24)² − 1, (1 + 2^-24)³ − 1 for a fixed scale (its own rounding)
  double w_s = 0;                   // the dynamic scale fl(amax/M): (1 + 2^-24)² − 1

  // E_i: the error of the computed (normalized) rotated element before the last roundings.
  // Norm none or before: ρ the exact output pair's norm (|Y_i| on pass-through dims, `rotated` false),
  // |φ| the pair's angle: (4w(1 + ν) + ν)·ρ + 3·mu_w + η·|φ|·(1 + ν)·ρ  (Fused.v norm_then_rotation,
  // norm_then_f32_angle_rotation).
  double before_error(double rho, double angle, bool rotated) const;
  // Norm after: ν'·|Y_i| + (1 + ν')·|w'_i|·(4w·ρ_z + 3·mu_w + η·|φ|·ρ_z)/r, ρ_z the exact rotated
  // pair's norm, r the exact rms (docs/fused-bounds.md §2, by hand).
  double after_error(double abs_y, double abs_weight, double rho_z, double rms, double angle, bool rotated) const;
  // The bound on |out − Y| (data dtype) or |q·ŝ − clamp(Y/ŝ, ±M)·ŝ| (FP8, at scale ŝ):
  // ((1 + u8)(1 + w_q)(1 + u_d) − 1)·|Y| + (1 + u8)(1 + w_q)((1 + u_d)·E + μ_d) + μ8·ŝ
  // (Fused.v fused_element_bound; u8 = w_q = μ8 = 0 without FP8).
  double element(double abs_y, double e, double scale) const;
  // The returned dynamic scale against amax|Y|/M: ((1 + w_s)(1 + u_d) − 1)·amax/M +
  // (1 + w_s)·max_i((1 + u_d)·E_i + μ_d)/M  (Fused.v dynamic_scale_bound).
  double scale(double amax, double max_e) const;
  // r = (1 + u8)(1 + w_q)(1 + u_d) − 1: the relative part of element().
  double relative() const;
};
// Throws InputError for the f32-recipe claim (no recipe of the fused operation is defined).
FusedBound fused_bound(const FusedSpec& spec, judge::Model model);
// The bound as one line with its numbers, and where it is derived.
std::string bound_text(const FusedBound& bound, const FusedSpec& spec);
std::string derivation_text(const FusedSpec& spec);

}  // namespace ropecheck::fused
