// The fused operation's bounds (fused/bounds.h), each formula as docs/fused-bounds.md writes it.
#include "fused/bounds.h"

#include <cmath>
#include <cstdio>

#include "fused/fp8.h"

namespace ropecheck::fused {
namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace

NormConstants norm_constants(int head_dim, NormWeight weight, double w, bool after) {
  NormConstants c;
  const double n = head_dim + 1;
  const double gamma = n * w / (1 - n * w);  // γ_{d+1} (Higham §3.1; Fused.v gamma_pow)
  const bool power_of_two = (head_dim & (head_dim - 1)) == 0;
  // The mean: a division by d (or × 1/d, exact for a power of two: one rounding), else × fl(1/d): two.
  c.a = (1 + gamma) * std::pow(1 + w, power_of_two ? 1 : 2) - 1;
  // Norm after the rotation: the squares are of the computed rotation, ‖ẑ − z‖ ≤ 4√2·w·‖x‖ (§2).
  if (after) c.a += std::pow(1 + 4 * std::sqrt(2.0) * w, 2) - 1;
  c.b = (1 + w) * (1 + c.a) - 1;                              // Fused.v rms_scale_bound: + eps, rounded
  const double k_r = 4 * w;                                   // F3: the rsqrt within 2 ulps
  c.e_r = (1 + c.b) * (1 + k_r) - 1;                          // inv_sqrt_perturb (needs b ≤ 1/2)
  const double c_w = weight == NormWeight::one_plus ? w : 0;  // fl(1 + w_i)
  c.nu = (1 + w) * (1 + w) * (1 + c_w) * (1 + c.e_r) - 1;     // rmsnorm_element_bound
  return c;
}

FusedBound fused_bound(const FusedSpec& spec, judge::Model model) {
  if (model == judge::Model::f32_recipe) {
    throw InputError("--model: expected exact or f32-angle for a fused spec, got f32-recipe");
  }
  FusedBound b;
  b.norm = spec.norm;
  const bool f64 = spec.rope.dtype == Dtype::f64;
  b.w = f64 ? 0x1p-53 : 0x1p-24;
  b.mu_w = f64 ? 0x1p-1074 : 0x1p-150;  // binary64: 2^-1075 rounded up to a double
  if (spec.norm != NormPlace::none) {
    b.norm_c = norm_constants(spec.rope.head_dim, spec.weight, b.w, spec.norm == NormPlace::after);
  }
  b.eta = model == judge::Model::f32_angle ? judge::f32_angle_eta(judge::kDefaultThetaUlps) : 0;
  const int p = significand_bits(spec.rope.dtype);
  const int emin = spec.rope.dtype == Dtype::f64 ? -1022 : spec.rope.dtype == Dtype::f16 ? -14 : -126;
  b.fp8 = spec.fp8 != Fp8::none;
  if (!b.fp8 || spec.rounding == Rounding::intermediate) {
    b.u_d = std::ldexp(1.0, -p);
    b.mu_d = std::ldexp(1.0, emin - p);
  }
  if (b.fp8) {
    const Fp8Format f = fp8_format(spec.fp8);
    b.u8 = std::ldexp(1.0, -f.precision);
    b.mu8 = std::ldexp(1.0, f.emin - f.precision);
    b.fp8_max = f.max;
    b.overflow = spec.fp8 == Fp8::e4m3 ? 464 : 61440;  // gappa/fp8_e4m3.g, fp8_e5m2.g: last clauses
    b.overflow_inclusive = spec.fp8 == Fp8::e5m2;
    const double w32 = 0x1p-24;
    b.w_q = std::pow(1 + w32, spec.scale == ScaleMode::fixed ? 3 : 2) - 1;
    b.w_s = (1 + w32) * (1 + w32) - 1;
  }
  return b;
}

double FusedBound::before_error(double rho, double angle, bool rotated) const {
  const double nu = norm_c.nu;
  if (!rotated) return nu * rho;
  return (4 * w * (1 + nu) + nu) * rho + 3 * mu_w + eta * std::fabs(angle) * (1 + nu) * rho;
}

double FusedBound::after_error(double abs_y, double abs_weight, double rho_z, double rms, double angle, bool rotated) const {
  const double nu = norm_c.nu;
  if (!rotated) return nu * abs_y;
  return nu * abs_y + (1 + nu) * abs_weight * (4 * w * rho_z + 3 * mu_w + eta * std::fabs(angle) * rho_z) / rms;
}

double FusedBound::relative() const { return (1 + u8) * (1 + w_q) * (1 + u_d) - 1; }

double FusedBound::element(double abs_y, double e, double scale_value) const {
  return relative() * abs_y + (1 + u8) * (1 + w_q) * ((1 + u_d) * e + mu_d) + mu8 * scale_value;
}

double FusedBound::scale(double amax, double max_e) const {
  return ((1 + w_s) * (1 + u_d) - 1) * amax / fp8_max + (1 + w_s) * max_e / fp8_max;
}

std::string bound_text(const FusedBound& b, const FusedSpec& spec) {
  std::string text = b.fp8 ? "|q·ŝ − clamp(Y/ŝ, ±" + number(b.fp8_max) + ")·ŝ| ≤ " : "|out − Y| ≤ ";
  text += number(b.relative()) + "·|Y| + " + number((1 + b.u8) * (1 + b.w_q)) + "·(" + number(1 + b.u_d) + "·E + " + number(b.mu_d) + ")";
  if (b.fp8) text += " + " + number(b.mu8) + "·ŝ";
  const double nu = b.norm_c.nu;
  switch (spec.norm) {
    case NormPlace::after:
      text += "; E = ν·|Y| + (1 + ν)·|w'|·(" + number(4 * b.w) + "·ρ_z + " + number(b.eta) + "·|φ|·ρ_z)/rms";
      break;
    default:
      text += "; E = " + number(4 * b.w * (1 + nu) + nu) + "·ρ";
      if (b.eta > 0) text += " + " + number(b.eta * (1 + nu)) + "·|φ|·ρ";
      break;
  }
  if (spec.norm != NormPlace::none) text += ", ν = " + number(nu) + " (" + number(nu / b.w) + "w)";
  if (b.fp8 && spec.scale != ScaleMode::fixed) {
    text +=
        "; returned scale within " + number((1 + b.w_s) * (1 + b.u_d) - 1) + "·amax/M + " + number(1 + b.w_s) + "·max E'/M of amax|Y|/M";
  }
  return text;
}

std::string derivation_text(const FusedSpec& spec) {
  std::string text = "docs/fused-bounds.md; proofs/formal/coq/Fused.v (fused_element_bound";
  if (spec.scale != ScaleMode::fixed) text += ", dynamic_scale_bound";
  text += ")";
  if (spec.fp8 != Fp8::none) text += std::string(", proofs/formal/gappa/fp8_") + std::string(name(spec.fp8)) + ".g";
  return text;
}

}  // namespace ropecheck::fused
