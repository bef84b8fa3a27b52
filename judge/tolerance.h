// The verdict models, the tolerance every judged value is held to, and the one `--tolerance`
// grammar of every command. Each default is derived in judge/tolerance.cpp from a written bound and
// machine-checked in proofs/formal/coq/GateTolerance.v (gate_check_test ties the numbers to it).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "spec/spec.h"

namespace ropecheck::judge {

// What the implementation under test claims to compute (judge/README.md "Models"):
//  - exact: the true rotation; judged against the exact values with a constant bound;
//  - f32_angle: the class of implementations that compute the angle in binary32 — frequencies
//    within k ulps of θ'_j, the position and the angle rounded to binary32, faithful cos/sin of that
//    angle, a careful rotation in the data dtype — judged against the exact values with a bound
//    that grows with the angle (e ≤ e_c + |φ|·η/u, Coq gate_f32_angle_default);
//  - f32_recipe: the float32 recipe with θ'_j correctly rounded to binary32 (reference/rope.h
//    Model::f32_recipe), judged against that recipe's correctly rounded result. No common library
//    computes θ'_j correctly rounded (torch's pow-then-reciprocal is up to 6 ulps off, ggml's running
//    product up to 45: peers/README.md); it fits an implementation fed a correctly rounded θ table.
enum class Model { exact, f32_angle, f32_recipe };
// The claim every judging route applies when the user names none: f32-angle, the class a careful
// float32 implementation (HF-style cached cos/sin, fused, float64 then cast) belongs to, so that
// such code passes on default settings (judge/README.md "Models"). The project's own kernels are
// gated on the exact claim, named explicitly (scripts/run).
inline constexpr Model kDefaultModel = Model::f32_angle;
std::string_view name(Model model);
// The claim in a user's words, for the first line of every summary: "model f32-angle (the angle
// computed in binary32; the default claim)".
std::string claim_text(Model model);
// "exact" | "f32-angle" | "f32-recipe"; throws UsageError naming --model.
Model parse_model(std::string_view text);
// Whether the model judges against the exact values (exact, f32-angle) or a recipe's (f32-recipe).
bool judges_exact_values(Model model);

// The f32-angle model's default bound on the frequencies: k = 8 ulps of binary32. It covers torch's
// `1.0 / base ** (arange(0, d, 2).float() / d)`, measured up to 6.25 ulps off θ'_j for head dims 80
// and 96 at bases up to 1e7 and at most 1.31 ulps for power-of-two head dims (peers/theta_ulps.py);
// a running product θ *= r (ggml) reaches 34 ulps at pair 63 of head_dim 128 and fails it.
inline constexpr double kDefaultThetaUlps = 8;

// The bound one rotated pair (or element) is held to.
struct Tolerance {
  enum class Kind { e, ulp };
  Kind kind = Kind::e;
  // e: in units of u·ρ·max(1, |g|) (judge/pair_rule.h); ulp: element ULPs against the correctly
  // rounded value.
  double value = 0;
  // e added per radian of the pair's angle |m·θ'_j| (a bound that grows with the angle; 0 for the
  // constant bounds).
  double per_radian = 0;
  std::string source;  // where the number comes from, printed in reports

  double at(double angle) const { return value + per_radian * std::fabs(angle); }
};

// The default tolerance of a careful implementation under `model` for `spec` (its dtype, and
// whether it has an attention factor g ≠ 1), with its derivation in `source`. `theta_ulps`: the
// f32-angle model's k.
Tolerance default_tolerance(Model model, const Spec& spec, double theta_ulps = kDefaultThetaUlps);
// η of the f32-angle model: the angle φ̂ = RN32(RN32(m)·θ̂) with θ̂ within k ulps of θ'_j satisfies
// |φ̂ − m·θ'_j| ≤ η·|m·θ'_j|, η = (1 + 2^-24)^2·(1 + 2k·2^-24) − 1 (Coq f32_angle_error), rounded up.
double f32_angle_eta(double theta_ulps);

// Roundings that may each underflow and add up to 2^(emin−p) absolute, besides the relative bound:
// a careful evaluation's two products and difference (Coq gate_exact_default: 3), and under
// f32-recipe also the golden recipe value's own rounding (gate_recipe_default: 4).
int underflow_roundings(Model model);

// `--tolerance`, for every command: comma-separated e=N | ulp=N (RoPE: a constant bound in place of
// the model's), theta_ulps=K (the f32-angle model's k), attention_scores=N and attention_outputs=N
// (attention suites: constant bounds in place of the derived ones). Numbers are finite and >= 0.
// Throws UsageError naming --tolerance and what was expected.
struct ToleranceOverrides {
  std::optional<Tolerance> rope;
  std::optional<double> theta_ulps;
  std::optional<double> attention_scores;
  std::optional<double> attention_outputs;
  bool empty() const { return !rope && !theta_ulps && !attention_scores && !attention_outputs; }
};
ToleranceOverrides parse_tolerance(std::string_view text);

// Attention bounds (derived in judge/tolerance.cpp, with their hypotheses). H1 holds the rotated
// q and k to the RoPE bound `rope` of the claim (default_tolerance: constant under exact, growing
// with the angle under f32-angle); attention_rope_error turns it into ε_R, the relative error of a
// token's rotated vector, from the largest angle |m·θ'_j| of its pairs (0 for a constant bound).
// g is the spec's attention factor; ε_q and ε_k those of the query and key (for an output row, the
// key's largest over the visible keys); `keys` the test's k_tokens; `sigma` = |c|·‖q_i‖·max_j ‖k_j‖
// over the keys visible to query i (the largest |score| Cauchy–Schwarz allows in that row).
double attention_rope_error(const Tolerance& rope, Dtype dtype, double attention_factor, double largest_angle);
double attention_score_bound(Dtype dtype, int head_dim, double eps_q, double eps_k);
double attention_output_bound(Dtype dtype, int head_dim, double eps_q, double eps_k, std::int64_t keys, double sigma);
// One line each, printed in reports as the tolerances' source.
std::string attention_score_source(Dtype dtype, int head_dim, Model model);
std::string attention_output_source(Dtype dtype, Model model);

}  // namespace ropecheck::judge
