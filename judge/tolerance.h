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
//  - exact: the true rotation; judged against the exact values;
//  - f32_recipe: the float32 recipe with θ'_j correctly rounded to binary32 (reference/rope.h
//    Model::f32_recipe); judged against that recipe's correctly rounded result.
enum class Model { exact, f32_recipe };
std::string_view name(Model model);
// "exact" | "f32-recipe"; throws UsageError naming --model.
Model parse_model(std::string_view text);

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
// whether it has an attention factor g ≠ 1), with its derivation in `source`.
Tolerance default_tolerance(Model model, const Spec& spec);

// Roundings that may each underflow and add up to 2^(emin−p) absolute, besides the relative bound:
// a careful evaluation's two products and difference (Coq gate_exact_default: 3), and under
// f32-recipe also the golden recipe value's own rounding (gate_recipe_default: 4).
int underflow_roundings(Model model);

// `--tolerance`, for every command: comma-separated e=N | ulp=N (RoPE), attention_scores=N and
// attention_outputs=N (attention suites: constant bounds in place of the derived ones). Numbers are
// finite and >= 0. Throws UsageError naming --tolerance and what was expected.
struct ToleranceOverrides {
  std::optional<Tolerance> rope;
  std::optional<double> attention_scores;
  std::optional<double> attention_outputs;
  bool empty() const { return !rope && !attention_scores && !attention_outputs; }
};
ToleranceOverrides parse_tolerance(std::string_view text);

// Attention bounds (derived in judge/tolerance.cpp, with their hypotheses). g is the spec's
// attention factor; `keys` the test's k_tokens; `sigma` = |c|·‖q_i‖·max_j ‖k_j‖ over the keys
// visible to query i (the largest |score| Cauchy–Schwarz allows in that row).
double attention_score_bound(Dtype dtype, int head_dim, double attention_factor);
double attention_output_bound(Dtype dtype, int head_dim, double attention_factor, std::int64_t keys, double sigma);
// One line each, printed in reports as the tolerances' source.
std::string attention_score_source(Dtype dtype, int head_dim);
std::string attention_output_source(Dtype dtype);

}  // namespace ropecheck::judge
