// The tolerance policy: the default bound for each claimed model, with its derivation, and the
// --tolerance override.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "base/errors.h"
#include "judge/tolerance.h"
#include "spec/schedule.h"
#include "spec/suggest.h"

namespace ropecheck::judge {

std::string_view name(Model model) {
  switch (model) {
    case Model::exact:
      return "exact";
    case Model::f32_angle:
      return "f32-angle";
    case Model::f32_recipe:
      return "f32-recipe";
  }
  return "exact";
}

std::string claim_text(Model model) {
  std::string what;
  switch (model) {
    case Model::exact:
      what = "the true rotation, held to a constant bound";
      break;
    case Model::f32_angle:
      what = "the angle computed in binary32, bound growing with the angle";
      break;
    case Model::f32_recipe:
      what = "the float32 recipe with theta correctly rounded";
      break;
  }
  return "model " + std::string(name(model)) + " (" + what + (model == kDefaultModel ? "; the default claim)" : ")");
}

Model parse_model(std::string_view text) {
  if (text == "exact") return Model::exact;
  if (text == "f32-angle") return Model::f32_angle;
  if (text == "f32-recipe") return Model::f32_recipe;
  throw UsageError("--model: expected exact, f32-angle or f32-recipe, got '" + std::string(text) + "'" +
                   did_you_mean(text, {"exact", "f32-angle", "f32-recipe"}));
}

bool judges_exact_values(Model model) { return model != Model::f32_recipe; }

// The careful rotation's roundings (Coq gate_exact_default, gate_f32_angle_default: 3); the
// f32-recipe model adds the golden recipe value's own (gate_recipe_default: 4).
int underflow_roundings(Model model) { return model == Model::f32_recipe ? 4 : 3; }

// Default for the exact model: what a careful implementation working in the output dtype itself
// achieves, so that every correct kernel passes whatever its internal format, and a wrong one (a
// float32 angle at large positions, a swapped layout) does not.
//
// Per output component, with the standard model fl(a∘b) = (a∘b)(1+δ) + η, |δ| ≤ u, |η| ≤ 2^(emin−p)
// (Higham, Accuracy and Stability of Numerical Algorithms, §2.1 eq. 2.8; η only on underflow),
// cos and sin each within 1 u (faithful), and the rotation a = fl(fl(x·ĉ) − fl(y·ŝ)) evaluated
// without FMA (the worst common case):
//   |x·ĉ − y·ŝ − A| ≤ u·(|x| + |y|)                    (cos/sin errors)
//   + u·|x| + u·|y|                                    (rounding of the two products)
//   + u·|A|                                            (rounding of the difference: the final rounding)
//   ≤ u·(2·(|x| + |y|) + ρ) ≤ u·ρ·(2√2 + 1) ≈ 3.83·u·ρ  (|x| + |y| ≤ √2·ρ)
// plus O(u²) terms, so e ≤ 4 (with one FMA the bound is 1 + √5 ≈ 3.24). Each of the three roundings
// may underflow and add η: the comparison allows an absolute 3·2^(emin−p) besides e·u·ρ
// (underflow_roundings). Machine-checked in proofs/formal/coq/GateTolerance.v for
// every u ≤ 2^-8, with each rounding |fl(v) − v| ≤ max(u·|v|, 2^(emin−p)) (gappa/rounding_*.g):
// careful_rotation_bound gives both components ≤ 3.5·u·ρ + 3·2^(emin−p) (the product roundings are
// u·(|x||C| + |y||S|) ≤ u·ρ, so the first-order constant is 2 + √2 ≈ 3.41, sharper than above),
// gate_exact_default the default e ≤ 4 with the same absolute 3·2^(emin−p), fma_rotation_bound
// ≤ 3.3·u·ρ + 2·2^(emin−p) with one FMA. An implementation that computes in a wider format and
// rounds once (the project's kernels: optimized/error_bounds.h) has e ≤ 1 + tiny; a correctly
// rounded one e ≤ 1.
//
// Attention factor g ≠ 1 (yarn, yarn-ggml, longrope): the comparison is relative to
// u·ρ·max(1, |g|), and a careful candidate scales cos and sin in the dtype, as HF transformers, vLLM
// and llama.cpp do: ĝ = fl(g), c' = fl(ĝ·ĉ), s' = fl(ĝ·ŝ). Then |c' − g·C| ≤ u·|g|·(2|C| + 1)
// to first order (g's rounding, ĉ's, the product's), so per component
//   u·|g|·(2(|x||C| + |y||S|) + |x| + |y|) + u·|g|·ρ + u·|g|·ρ ≤ (4 + √2)·u·|g|·ρ ≈ 5.41·u·|g|·ρ,
// and the default of 4 is not proven there (2·10^7 random f32 pairs with g = 1.208 and correctly
// rounded cos/sin reach e = 3.07, against 2.40 without g; a hill-climbing search with cos/sin off
// by 0.99·u, still faithful, reaches 3.84). Machine-checked for |g| ≥ 1
// (proofs/formal/coq/GateTolerance.v): gate_exact_scaled_default, ≤ 6·u·|g|·ρ + 3·2^(emin−p), so
// e ≤ 6; gate_recipe_scaled_default, ≤ 8·u·|g|·ρ + 4·2^(emin−p) under the f32-recipe model (6 plus
// the golden value's rounding, (1 + 2u), rounded up). The underflow of c', s' is absorbed in the
// relative part (2^emin ≤ 2^-14 in every dtype). A candidate that scales the outputs instead,
// fl(ĝ·fl(rotation)), is within (2 + √2) + 2 ≈ 5.41 by hand (not machine-checked; in deep
// underflow its absolute error grows with |g|).
//
// f32-recipe model: the golden value is the recipe's result correctly rounded (expected_f32_recipe),
// itself within u·|A_recipe| ≤ u·g·ρ of the recipe's exact result; a careful implementation of the
// recipe is within the exact-model bound of the latter, hence e ≤ 4 + 1 = 5 against the golden value.
// Machine-checked as gate_recipe_default (proofs/formal/coq/GateTolerance.v): ≤ 5·u·ρ + 4·2^(emin−p)
// for recipe cos/sin of norm ≤ 1 + 2u; the absolute part, one rounding more than the exact model's,
// is what underflow_roundings allows under this model (4).
namespace {
// e of a careful candidate under the exact model (above): Coq gate_exact_default (4) and, with an
// attention factor g ≠ 1, gate_exact_scaled_default (6). Also H1 of the attention bounds below.
double careful_bound(double attention_factor) { return attention_factor == 1.0 ? 4 : 6; }
}  // namespace

// f32-angle model (Coq f32_angle_error, gate_f32_angle_default, gate_f32_angle_scaled_default in
// proofs/formal/coq/GateTolerance.v). With w = 2^-24: the position rounded to binary32,
// |m̂ − m| ≤ w·|m|; the frequency within k binary32 ulps, |θ̂ − θ| ≤ 2k·w·|θ| (an ulp of a normal v is
// at most 2w·|v|); the angle rounded once, |φ̂ − m̂·θ̂| ≤ w·|m̂·θ̂|. So |φ̂ − φ| ≤ η·|φ| with
// η = (1 + w)^2·(1 + 2k·w) − 1. Rotating by φ̂ instead of φ moves each component by at most
// ‖R(φ̂)v − R(φ)v‖ = 2|sin((φ̂ − φ)/2)|·ρ ≤ |φ̂ − φ|·ρ (times |g|), and a careful rotation at φ̂ with
// cos/sin faithful in the data dtype is within e_c (4, or 6 with an attention factor) of the
// rotation by φ̂. Hence, in units of u·ρ·max(1, |g|):
//   e ≤ e_c + |φ|·η/u       (|g|/max(1, |g|) ≤ 1),
// e.g. k = 8, float32 data: η/u ≈ 18 per radian; bfloat16 data: 18·2^-16. The absolute allowance is
// the careful rotation's three roundings (3·2^(emin−p)). Below 2^24 the position is exact and the
// bound is looser than needed by w·|φ|/u; the class is not split for that.
double f32_angle_eta(double theta_ulps) {
  const long double w = std::ldexp(1.0L, -24);
  const long double eta = (1 + w) * (1 + w) * (1 + 2 * static_cast<long double>(theta_ulps) * w) - 1;
  return static_cast<double>(eta * (1 + std::ldexp(1.0L, -40)));  // rounded up past long double's rounding
}

Tolerance default_tolerance(Model model, const Spec& spec, double theta_ulps) {
  const double attention = attention_factor<double>(spec);
  const bool scaled = attention != 1.0;
  const double careful = careful_bound(attention);
  Tolerance t;
  t.kind = Tolerance::Kind::e;
  const std::string p = std::to_string(significand_bits(spec.dtype));
  if (model == Model::exact) {
    t.value = careful;
    t.source = std::string("default for the exact model: a careful implementation (faithful cos/sin") +
               (scaled ? " scaled by the attention factor in the dtype" : "") + ", rotation rounded in " +
               std::string(ropecheck::name(spec.dtype)) + ", u = 2^-" + p + ") is within " + (scaled ? "(4 + sqrt(2))" : "(2 + sqrt(2))") +
               "*u*rho*max(1,|g|) to first order (Coq " + (scaled ? "gate_exact_scaled_default" : "gate_exact_default") +
               ", proofs/formal/coq/GateTolerance.v; judge/tolerance.cpp)";
  } else if (model == Model::f32_angle) {
    t.value = careful;
    const double u = std::ldexp(1.0, -significand_bits(spec.dtype));
    t.per_radian = f32_angle_eta(theta_ulps) / u;
    char k[32];
    std::snprintf(k, sizeof k, "%g", theta_ulps);
    t.source = std::string("default for the f32-angle model: the angle rounded to binary32 from a frequency within ") + k +
               " binary32 ulps and the position rounded to binary32 (|angle error| <= eta*|phi|, eta = (1+2^-24)^2*(1+2*" + k +
               "*2^-24) - 1), faithful cos/sin, a careful rotation in " + std::string(ropecheck::name(spec.dtype)) +
               ": e <= " + (scaled ? "6" : "4") + " + |phi|*eta/u (Coq " +
               (scaled ? "gate_f32_angle_scaled_default" : "gate_f32_angle_default") +
               ", proofs/formal/coq/GateTolerance.v; judge/tolerance.cpp)";
  } else {
    t.value = scaled ? 8 : careful + 1;
    t.source = std::string("default for the f32-recipe model: ") + (scaled ? "6" : "4") +
               " for a careful implementation of the recipe + the rounding of the golden recipe value" + (scaled ? ", rounded up" : "") +
               " (Coq " + (scaled ? "gate_recipe_scaled_default" : "gate_recipe_default") +
               ", proofs/formal/coq/GateTolerance.v; judge/tolerance.cpp)";
  }
  return t;
}

// ---- Attention (golden kind "attention") ------------------------------------------------------
//
// Metrics (compare.h): score e = |ŝ − s_g| / (u·N), N = |c|·‖q_i‖·‖k_j‖, c = g²/√d (the golden's
// softmax scale 1/√d times the attention factor g, once for q and once for k); output e =
// |ô − o_g| / (u·V), V = max over the keys visible to query i of |v_j| (per head and component).
// u = 2^-p of the data dtype, s_g and o_g the golden values: the exact ones correctly rounded to
// the data dtype (golden/README.md), so |s_g − s| ≤ u·|s| and |o_g − o| ≤ u·|o|.
//
// Hypotheses on the candidate (stated in gate/README.md too):
//   H1 RoPE: its rotated q̃, k̃ meet the claim's default RoPE bound per pair (default_tolerance):
//      under exact e ≤ e_R (e_R = 4, or 6 when g ≠ 1: careful_bound); under f32-angle
//      e ≤ e_R + |φ_j|·η/u at the pair's angle φ_j = m·θ'_j (Coq gate_f32_angle_default), so
//      e ≤ e_t = e_R + Φ_t·η/u for every pair of token t, Φ_t = max_j |φ_j| its largest angle.
//      Each component is within e_t·u·max(1,|g|)·ρ of the exact g·R·x; pass-through dims exact.
//      Per pair the error vector is ≤ √2·e_t·u·max(1,|g|)·ρ long, so over the head
//      ‖q̃ − q'‖ ≤ ε_t·‖q'‖, q' = g·R·q (‖q'‖ = |g|·‖q‖), ε_t = √2·e_t·u·max(1,|g|)/|g|
//      (attention_rope_error); ε_q of the query token, ε_k of the key token.
//   H2 working precision: dot products, the scale, the softmax (max, differences, exp, sums,
//      division) and the PV products and sums are rounded to a binary format of unit roundoff w —
//      binary32 for f32/f16/bf16 data, binary64 for f64 data — with the standard model
//      fl(a∘b) = (a∘b)(1 + δ), |δ| ≤ w (Higham, Accuracy and Stability of Numerical Algorithms,
//      2nd ed., §2.2), and no underflow or overflow inside. γ_k = k·w/(1 − k·w) (Higham §3.1), and
//      products of k factors (1 + δ_i)^±1 stay within 1 ± γ_k (Lemma 3.1), γ_a + γ_b ≤ γ_{a+b} (Lemma 3.3).
//   H3 exp (or exp2) is within 2 ulp of the working format: relative error ≤ 4w (ulp(y) ≤ 2w·|y|).
//      The CUDA C++ Programming Guide's Mathematical Functions appendix lists expf at 2 ulp (full
//      range; a tested, not proven, figure); glibc's expf is within 1 ulp. Fast intrinsics such as
//      __expf (error growing with |x|) are outside H3.
//   H4 evaluation order: the scale 1/√d as a constant with ≤ 2 roundings and one multiplication;
//      the softmax either two-pass (max, exp, sum, normalise then PV, or PV then divide) or online
//      as FlashAttention (Dao et al. 2022, Alg. 1; FlashAttention-2's exp2 with log2 e folded in),
//      with at most n − 1 rescalings; the weights P may be rounded to the data dtype before the PV
//      product (FlashAttention feeds P to its tensor-core matmul in the data dtype).
//   H5 outputs (and reported scores) are rounded once to the data dtype, or not at all; the
//      softmax uses the working-precision scores.
//
// Scores. Cauchy–Schwarz with H1: |c⟨q̃,k̃⟩ − c⟨q',k'⟩| ≤ |c|(‖Δq‖‖k'‖ + ‖q'‖‖Δk‖ + ‖Δq‖‖Δk‖)
// ≤ (ε_q + ε_k + ε_q·ε_k)·N, where N = |c0|·‖q'‖·‖k'‖, c0 = 1/√d. The dot product in w errs by
// ≤ γ_d·Σ|q̃_x k̃_x| ≤ γ_d‖q̃‖‖k̃‖ (Higham eq. 3.5, any order, FMA or not), the scale adds 3
// roundings (H4): γ_{d+3}·(1 + ε_q)(1 + ε_k)·N. So the working score ŝ_w satisfies |ŝ_w − s| ≤ β_s·N,
//   β_s = ε_q + ε_k + ε_q·ε_k + γ_{d+3}·(1 + ε_q)(1 + ε_k)   (under exact ε_q = ε_k = ε_R),
// the reported ŝ = fl_u(ŝ_w) adds ≤ u·|ŝ_w| ≤ u·(1 + β_s)·N (|s| ≤ N), the golden value u·N:
//   score e ≤ T_s = β_s/u + (1 + β_s) + 1.
// E.g. f32, d = 64: ε_R = 5.66u, β_s ≈ (11.3 + 67)·u, T_s ≈ 80.3; bf16, d = 64 (w = 2^-24 ≪ u = 2^-8):
// T_s ≈ 13.5; f64, d = 16: T_s ≈ 32.3. The dot product's γ_{d+3} dominates when w = u.
// Under f32-angle ε_t grows with the position: f32 with θ'_0 = 1 at m = 4096 (k = 8, η ≈ 18·2^-24)
// gives e_t ≈ 4 + 4096·18 and T_s ≈ 2.1e5 — still far below the e ≈ 1/u of a wrong rotation.
//
// Outputs. Let σ = |c0|·‖q'_i‖·max_j ‖k'_j‖ (over visible keys), the largest N of the row, and β_s
// the score bound with ε_k the largest over the visible keys (β_s grows with ε_k). The
// weights are exp(s_j + τ_j − m)·(1 + α_j) for a common m: τ_j is the score error (≤ β_s·σ) plus
// the roundings of the exp argument — the difference, log2 e and its product, the online
// rescalings' arguments (whose magnitudes telescope): ≤ 4 roundings of quantities ≤ 2(1 + β_s)σ —
//   |τ_j| ≤ δ = σ·(β_s + 8w·(1 + β_s)),
// and the (1 + α_j), with the products, sums, rescalings and the division, are relative errors of
// each numerator term ≤ μ_n = γ_{6n} + u(1 + γ_{6n}) (exp 4, product 1, per rescaling 5, sums n − 1,
// division 1: 6n roundings, plus P rounded to the data dtype, H4) and of each denominator term
// ≤ μ_d = γ_{6n}. With P the softmax of s + τ and p that of s:
//   |N̂/D̂ − Σ_j P_j v_j| ≤ (μ_n + μ_d)·V/(1 − μ_d)   (Σ_j P_j v_j·(Σ E_j) = Σ E_j v_j),
//   |Σ_j (P_j − p_j) v_j| ≤ TV(P, p)·(max_j v_j − min_j v_j) ≤ 2·tanh(δ/2)·V,
// since Σ_j (P_j − p_j) = 0, and an exponential tilt by |τ_j| ≤ δ moves a distribution by at most
// TV = tanh(δ/2): with A = {j : P_j > p_j}, a = p(A), x = e^{2δ}, TV = P(A) − a ≤ ax/(ax + 1 − a) − a
// = a(1 − a)(x − 1)/(1 + a(x − 1)), whose maximum over a (at a = 1/(1 + √x)) is (√x − 1)/(√x + 1)
// = tanh(δ/2). (This is tighter than |P_j − p_j| ≤ (e^{2δ} − 1)·p_j, which gives (e^{2δ} − 1)·V.)
// With X = 2·tanh(δ/2) + (μ_n + μ_d)/(1 − μ_d), |ô_w − o| ≤ X·V; the final rounding adds
// ≤ u·(1 + X)·V (|o| ≤ V), the golden value u·V:
//   output e ≤ T_o = X/u + (1 + X) + 1.
// T_o grows with σ: a sharper softmax amplifies the same score error. E.g. f32, d = 64, n = 4,
// σ = 8: T_o ≈ 2·78.3·8/2 + 49 + 2 ≈ 680; bf16, σ = 8.6: δ ≈ 0.38, T_o ≈ 100 (0.39·V: loose — the
// bf16 rounding of q̃ and k̃ (H1) costs 11.3·u·N per score, which the softmax turns into output
// errors of that order). Both bounds are evaluated in long double and rounded up to a multiple of
// 2^-6, so their own rounding only adds slack.
namespace {

constexpr int kExpUlps = 2;  // H3

long double unit_roundoff(Dtype dtype) { return std::ldexp(1.0L, -significand_bits(dtype)); }
// H2: binary64 for f64 data, binary32 otherwise.
long double working_roundoff(Dtype dtype) { return dtype == Dtype::f64 ? std::ldexp(1.0L, -53) : std::ldexp(1.0L, -24); }
long double gamma(long double k, long double w) { return k * w / (1 - k * w); }
double round_up(long double v) { return static_cast<double>(std::ceil(v * 64) / 64); }

// β_s: |ŝ_w − s| ≤ β_s·N for the working-precision score.
long double score_beta(Dtype dtype, int head_dim, long double eps_q, long double eps_k) {
  const long double w = working_roundoff(dtype);
  return eps_q + eps_k + eps_q * eps_k + gamma(head_dim + 3, w) * (1 + eps_q) * (1 + eps_k);
}

// What H1 assumes of the rotation under `model`, for the sources' text.
std::string rope_hypothesis(Model model) {
  return model == Model::f32_angle ? "RoPE within the f32-angle bound (e <= 4 + |phi|*eta/u; 6 + |phi|*eta/u with an attention factor) at "
                                     "each token's largest angle, so the bound grows with the positions"
                                   : "RoPE within the gate's RoPE default (e <= 4; 6 with an attention factor)";
}

}  // namespace

double attention_rope_error(const Tolerance& rope, Dtype dtype, double attention_factor, double largest_angle) {
  const long double u = unit_roundoff(dtype);
  const long double g = std::fabs(static_cast<long double>(attention_factor));
  const long double e =
      static_cast<long double>(rope.value) + static_cast<long double>(rope.per_radian) * std::fabs(static_cast<long double>(largest_angle));
  // Rounded up past long double's own rounding, as f32_angle_eta is.
  return static_cast<double>(std::sqrt(2.0L) * e * u * std::max(1.0L, g) / g * (1 + std::ldexp(1.0L, -40)));
}

double attention_score_bound(Dtype dtype, int head_dim, double eps_q, double eps_k) {
  const long double u = unit_roundoff(dtype);
  const long double beta = score_beta(dtype, head_dim, eps_q, eps_k);
  return round_up(beta / u + (1 + beta) + 1);
}

double attention_output_bound(Dtype dtype, int head_dim, double eps_q, double eps_k, std::int64_t keys, double sigma) {
  const long double u = unit_roundoff(dtype), w = working_roundoff(dtype);
  const long double beta = score_beta(dtype, head_dim, eps_q, eps_k);
  const long double delta = static_cast<long double>(sigma) * (beta + 8 * w * (1 + beta));
  const long double roundings = 6.0L * static_cast<long double>(std::max<std::int64_t>(keys, 1));
  static_assert(kExpUlps == 2, "the 6n count of roundings assumes exp within 2 ulp (4w, counted as 4 roundings)");
  const long double mu_d = gamma(roundings, w);
  const long double mu_n = mu_d + u * (1 + mu_d);
  const long double x = 2 * std::tanh(delta / 2) + (mu_n + mu_d) / (1 - mu_d);
  return round_up(x / u + (1 + x) + 1);
}

std::string attention_score_source(Dtype dtype, int head_dim, Model model) {
  return "derived bound for attention scores (judge/tolerance.cpp): " + rope_hypothesis(model) + ", dot product and scale in " +
         std::string(dtype == Dtype::f64 ? "binary64" : "binary32") + " (gamma_" + std::to_string(head_dim + 3) + "), one rounding to " +
         std::string(ropecheck::name(dtype)) + ", +1 for the golden value's rounding";
}

std::string attention_output_source(Dtype dtype, Model model) {
  return "derived bound for attention outputs, per (query, head) row (judge/tolerance.cpp): " + rope_hypothesis(model) +
         ", score errors through the softmax (2 tanh(delta/2), delta from the row's sigma), exp within 2 ulp and 6n "
         "roundings in " +
         std::string(dtype == Dtype::f64 ? "binary64" : "binary32") + ", one rounding to " + std::string(ropecheck::name(dtype)) +
         ", +1 for the golden value's rounding";
}

namespace {

// A finite number >= 0 after "KEY=", or UsageError naming the key.
double parse_bound(std::string_view key, std::string_view value) {
  const std::string text(value);
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v) || v < 0) {
    throw UsageError("--tolerance: expected a finite number >= 0 after '" + std::string(key) + "=', got '" + text + "'");
  }
  return v;
}

}  // namespace

ToleranceOverrides parse_tolerance(std::string_view text) {
  ToleranceOverrides out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq == std::string_view::npos ? 0 : eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    if (key == "attention_scores" || key == "attention_outputs") {
      if ((key == "attention_scores" ? out.attention_scores : out.attention_outputs)) {
        throw UsageError("--tolerance: expected " + std::string(key) + "= once, got '" + std::string(text) + "'");
      }
      (key == "attention_scores" ? out.attention_scores : out.attention_outputs) = parse_bound(key, value);
    } else if (key == "theta_ulps") {
      if (out.theta_ulps) throw UsageError("--tolerance: expected theta_ulps= once, got '" + std::string(text) + "'");
      out.theta_ulps = parse_bound(key, value);
    } else if (key == "e" || key == "ulp") {
      if (out.rope) throw UsageError("--tolerance: expected one of e= and ulp=, got '" + std::string(text) + "'");
      Tolerance t;
      t.kind = key == "e" ? Tolerance::Kind::e : Tolerance::Kind::ulp;
      t.value = parse_bound(key, value);
      t.source = "--tolerance " + std::string(item);
      out.rope = t;
    } else {
      throw UsageError(
          "--tolerance: expected e=N, ulp=N, theta_ulps=K, attention_scores=N or attention_outputs=N (comma-separated), got '" +
          std::string(item) + "'");
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace ropecheck::judge
