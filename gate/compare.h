// Comparison of a candidate's outputs with the golden expectations (DESIGN.md "Error metric"), the
// tolerance policy, and the per-group statistics every report prints: worst e, worst element ULP,
// worst absolute error, the verdict and the accuracy horizon.
//
// Per rotated pair (x, y) → candidate (a, b), exact (A, B), ρ = √(x² + y²) (exact):
//   e   = max(|a − A|, |b − B|) / (u·ρ·max(1, |g|)), u = 2^-p of the spec's dtype, g the attention
//         factor — computed by reference/error_metric.h's pair_error, the one place e is defined;
//   ulp = max over the two elements of |a − Â| / ulp(Â), Â the correctly rounded expected value;
//   abs = max(|a − A|, |b − B|).
// Pass-through dims must be bit-identical to the input. Special values form their own class: where
// an input of the pair is NaN/±Inf, or the correctly rounded expected element is NaN/±Inf (overflow),
// the candidate's element must be of the same class (NaN; +Inf; −Inf; finite).
//
// Attention tests (golden kind "attention", AttentionComparer below) are judged on the scores
// [heads, q_tokens, k_tokens] and outputs [q_tokens, heads, v_dim] a candidate reports:
//   score e  = |ŝ − s| / (u·|c|·‖q_i‖·‖k_j‖),  c = g²/√head_dim, q_i, k_j the unrotated head vectors;
//   output e = |ô − o| / (u·max_j |v_j|)       over the keys visible to that query, per component;
// s, o the golden (correctly rounded) values; tolerances derived in gate/tolerance.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "golden/golden.h"
#include "spec/spec.h"

namespace ropecheck::gate {

// The rounding model the candidate claims to follow (reference/rope.h): `exact` — judged against
// the exact rotation; `f32_recipe` — judged against the correctly rounded result of the common
// float32 recipe (golden expected_f32_recipe).
enum class Model { exact, f32_recipe };
std::string_view name(Model model);

struct Tolerance {
  enum class Kind { e, ulp };
  Kind kind = Kind::e;
  double value = 0;
  std::string source;  // where the number comes from (printed in reports)
};

// The default tolerance for a model and a spec (its dtype, and whether it has an attention factor
// g ≠ 1), with its derivation in `source` (gate/tolerance.cpp).
Tolerance default_tolerance(Model model, const Spec& spec);
// "e=3" or "ulp=4"; throws UsageError naming --tolerance.
Tolerance parse_tolerance(std::string_view text);

// Attention bounds (gate/tolerance.cpp derives them, with their hypotheses). g is the spec's
// attention factor; `keys` the test's k_tokens; `sigma` = |c|·‖q_i‖·max_j ‖k_j‖ over the keys
// visible to query i (the largest |score| Cauchy–Schwarz allows in that row).
double attention_score_bound(Dtype dtype, int head_dim, double attention_factor);
double attention_output_bound(Dtype dtype, int head_dim, double attention_factor, std::int64_t keys, double sigma);
// One line each, printed in reports as the tolerances' source.
std::string attention_score_source(Dtype dtype, int head_dim);
std::string attention_output_source(Dtype dtype);

// `--tolerance` of `check`: a comma-separated list of e=N | ulp=N (RoPE suites) and
// attention_scores=N | attention_outputs=N (attention suites: constant bounds in place of the
// derived ones). Throws UsageError naming --tolerance.
struct ToleranceOverrides {
  std::optional<Tolerance> rope;
  std::optional<double> attention_scores;
  std::optional<double> attention_outputs;
};
ToleranceOverrides parse_tolerances(std::string_view text);

// One bad element or test, as listed in reports (the worst first).
struct Case {
  std::string suite;
  std::int64_t test_id = 0;
  std::string kind;  // tolerance | special | passthrough | missing | shape | crash | timeout | status | abi
  std::string quantity;  // attention cases: "score" or "output"; empty for RoPE pairs and whole tests
  std::string message;                     // one line
  std::int64_t position = 0;               // largest position component of the token
  std::int64_t token = 0, head = 0;
  int dim = -1;                            // first dim of the pair (or the element), -1 for whole tests
  int second_dim = -1;
  double input_x = 0, input_y = 0;
  double expected_a = 0, expected_b = 0;   // correctly rounded expected values
  double got_a = 0, got_b = 0;
  double e = 0, ulp = 0, abs = 0;
  double unit = 0, tolerance = 0;  // attention cases: the error unit (u·|c|·‖q_i‖·‖k_j‖ or u·max|v_j|) and the bound
  double severity = 0;  // for ordering: e (or ulp) of the case, +inf for whole-test failures
};

struct Point {
  std::int64_t position = 0;
  double e = 0;  // worst e (or ulp) over the pairs of one (test, token); attention: worst e/tolerance of one (test, query)
  bool pass = true;
};

struct TestOutcome {
  std::int64_t id = 0;
  std::string status;  // pass | fail | skip
  std::string reason;  // for fail and skip: one line
};

// What an attention group measured (GroupResult::attention).
struct AttentionStats {
  double score_tolerance = 0;  // the group's score bound (its head_dim and dtype fix it), or the override
  std::string score_source;
  // The output bound is per (query, head) row: it grows with the row's σ (gate/tolerance.cpp).
  double output_tolerance_min = 0, output_tolerance_max = 0;
  std::string output_source;
  std::int64_t scores_checked = 0, scores_failed = 0;
  std::int64_t scores_masked = 0;  // masked scores given as −inf (accepted, not measured)
  std::int64_t outputs_checked = 0, outputs_failed = 0;
  double worst_score_e = 0, worst_output_e = 0;
  // The output closest to its own bound: its e and that bound (e/tol is what passes or fails).
  double worst_output_margin = 0, worst_output_margin_e = 0, worst_output_margin_tolerance = 0;
};

struct GroupResult {
  std::string kind = "rope";  // rope | attention (the golden file's kind)
  std::string suite;
  int index = 0;        // group index in the suite file
  std::string spec;     // canonical spec text
  Dtype dtype = Dtype::f32;
  Tolerance tolerance;
  double attention_magnitude = 1;  // max(1, |g|): the tolerance is relative to g·ρ
  std::int64_t tests = 0, tests_failed = 0, tests_skipped = 0;
  std::int64_t pairs_checked = 0, pairs_failed = 0;
  std::int64_t passthrough_checked = 0, passthrough_failed = 0;
  std::int64_t special_checked = 0, special_failed = 0;
  double worst_e = 0, worst_ulp = 0, worst_abs = 0;
  std::int64_t max_position = -1;       // largest position tested (−1: none)
  std::optional<std::int64_t> horizon;  // largest tested position up to which every check passed
  std::string verdict;                  // pass | fail | skip
  std::vector<Case> worst;              // up to CompareOptions::worst_cases, worst first
  std::vector<Point> points;            // one per (test, token): the plot
  std::vector<TestOutcome> outcomes;    // one per test
  std::optional<AttentionStats> attention;  // attention groups only
};

struct CompareOptions {
  Model model = Model::exact;
  std::optional<Tolerance> tolerance;  // overrides the default
  // The candidate's own claimed bound for a spec, used instead of the default when set (the
  // project's kernels claim their proven bounds, optimized/error_bounds.h); `tolerance` wins.
  std::function<std::optional<Tolerance>(const Spec&)> claimed_bound;
  // Attention suites: constant bounds in place of the derived ones (--tolerance attention_scores=N,...).
  std::optional<double> attention_scores, attention_outputs;
  int worst_cases = 10;
  int precision_bits = 128;  // of the exact values (rotate_exact): error ≤ 2^(14−P)·|φ|·ρ ≪ u·ρ
};

namespace detail {  // shared by the two comparers (compare.cpp, compare_attention.cpp)
// What a comparer accumulates for one group: the result, the worst cases, and the tested positions
// with the first failing one (for the horizon).
class GroupTally {
 public:
  explicit GroupTally(int worst_cases) : worst_cases_(worst_cases) {}

  GroupResult result;

  // Keeps the worst `worst_cases` cases, but lets every failing test appear once before a test
  // appears twice: a CI reader needs the list of failing tests more than the tenth-worst element of
  // one test.
  void record_case(Case c);
  // A case of test `test_id` of this group at `position`; the caller fills in the rest.
  Case new_case(std::int64_t test_id, std::string kind, std::int64_t position) const;
  // Records a case against test `test_id` as a whole (no element to point at: e and severity
  // infinite), without counting the test.
  void record_whole_test_case(std::int64_t test_id, std::string kind, std::string message, std::int64_t position);
  void record_position(std::int64_t position, bool pass);
  // A test without a usable output (missing, wrong size, crash, ...) fails as a whole at `lowest`,
  // its lowest position.
  void fail_test(std::int64_t test_id, std::int64_t lowest, std::string kind, std::string message);
  void skip_test(std::int64_t test_id, std::string reason);
  // Verdict, horizon (the largest tested position below the first failing one; all of them when
  // none fails) and the plot's order.
  GroupResult finish();

 private:
  int worst_cases_;
  std::optional<std::int64_t> first_failing_position_;
  std::vector<std::int64_t> tested_positions_;
};
}  // namespace detail

// Accumulates the tests of one golden group.
class GroupComparer {
 public:
  GroupComparer(std::string suite, int index, const golden::Group& group, CompareOptions options);

  // Judges one test's candidate output (row-major [tokens, heads, head_dim], any dtype's values).
  void add(const golden::RopeTest& test, std::span<const double> output);
  // Records a test that produced no usable output (missing, wrong size, crash, timeout, status).
  void fail(const golden::RopeTest& test, std::string kind, std::string message);
  // Records a test that was not judged (e.g. the implementation reports the spec as unsupported).
  void skip(const golden::RopeTest& test, std::string reason);

  GroupResult finish();

 private:
  const golden::Group& group_;
  CompareOptions options_;
  double attention_ = 1;  // the spec's attention factor g
  detail::GroupTally tally_;
};

// Accumulates the tests of one attention group (golden kind "attention").
class AttentionComparer {
 public:
  AttentionComparer(std::string suite, int index, const golden::Group& group, CompareOptions options);

  // Judges one test. `scores` ([heads, q_tokens, k_tokens]) and `outputs` ([q_tokens, heads,
  // v_dim]), row-major, are null when the candidate gave none (sizes are the caller's check);
  // `missing` names absent tensors that fail the test (empty under --allow-missing).
  void add(const golden::AttentionTest& test, const std::vector<double>* scores, const std::vector<double>* outputs,
           const std::vector<std::string>& missing);
  void fail(const golden::AttentionTest& test, std::string kind, std::string message);
  void skip(const golden::AttentionTest& test, std::string reason);

  GroupResult finish();

 private:
  const golden::Group& group_;
  CompareOptions options_;
  detail::GroupTally tally_;
};


// Largest component of token t's position tuple.
std::int64_t token_position(const golden::RopeTest& test, const Spec& spec, std::int64_t token);

}  // namespace ropecheck::gate
