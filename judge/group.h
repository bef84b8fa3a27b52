// The per-group verdict: every judged pair of one golden group (or one sweep) goes through the pair
// rule (judge/pair_rule.h), and the group keeps what every report prints — worst e, worst element
// ULP, worst absolute error, the accuracy horizon, the failures that are not accuracy, the worst
// cases, the plot, and the verdict.
//
// Accuracy and edge cases are kept apart (judge/README.md "Horizon"): the worst e and the accuracy
// horizon come from ordinary pairs only (finite inputs in range: judge/pair_rule.h Domain); special
// values, near-overflow and subnormal pairs, pass-through dims and whole-test failures (crash,
// missing output, ...) still fail the verdict, and are counted and listed on their own.
//
// Attention tests (golden kind "attention", AttentionComparer) are judged on the scores
// [heads, q_tokens, k_tokens] and outputs [q_tokens, heads, v_dim] a candidate reports:
//   score e  = |ŝ − s| / (u·|c|·‖q_i‖·‖k_j‖),  c = g²/√head_dim, q_i, k_j the unrotated head vectors;
//   output e = |ô − o| / (u·max_j |v_j|)       over the keys visible to that query, per component;
// s, o the golden (correctly rounded) values; bounds derived in judge/tolerance.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "golden/golden.h"
#include "judge/call.h"
#include "judge/pair_rule.h"
#include "judge/settings.h"
#include "judge/tolerance.h"
#include "reference/rope.h"
#include "spec/spec.h"

namespace ropecheck::judge {

// What a test or a group comes to (reports print name(Verdict)).
enum class Verdict { pass, fail, skip };
std::string_view name(Verdict verdict);

// What a listed case is: a pair the pair rule fails (judge/pair_rule.h Failure), a wrong
// pass-through element, or a test as a whole: no output (missing), one of the wrong size (shape),
// or a call that gave none (runner/implementation.h ApplyResult::Status). Reports print name().
enum class CaseKind {
  tolerance,
  special_value,
  signed_zero,
  passthrough,
  missing,
  shape,
  status,
  crash,
  timeout,
  abi,
  load,
  guard,
  unavailable
};
std::string_view name(CaseKind kind);

// One bad element or test, as listed in reports (the worst first).
struct Case {
  std::string suite;
  std::int64_t test_id = 0;
  CaseKind kind = CaseKind::tolerance;
  // An ordinary pair out of tolerance: it is an accuracy case (worst e, horizon). Every other case
  // (special values, signed zeros, near-overflow or subnormal pairs, pass-through, whole tests) is an
  // edge case.
  bool accuracy = false;
  std::optional<Domain> domain;  // of the pair (judge/pair_rule.h); none for whole tests
  std::string quantity;       // attention cases: "score" or "output"; empty for RoPE pairs and whole tests
  std::string message;        // one line
  std::int64_t position = 0;  // largest position component of the token
  std::int64_t token = 0, head = 0;
  int dim = -1;  // first dim of the pair (or the element), -1 for whole tests
  int second_dim = -1;
  double input_x = 0, input_y = 0;
  double expected_a = 0, expected_b = 0;  // correctly rounded expected values
  double got_a = 0, got_b = 0;
  double e = 0, ulp = 0, abs = 0;
  double unit = 0, tolerance = 0;  // attention cases: the error unit and the bound; pairs: the bound
  double severity = 0;             // for ordering within its list: e (or ulp) of the case
};

struct Point {
  std::int64_t position = 0;
  double e = 0;  // worst e (or ulp) over the ordinary pairs of one (test, token); attention: worst e/tolerance
  bool pass = true;
};

struct TestOutcome {
  std::int64_t id = 0;
  Verdict status = Verdict::pass;
  std::string reason;  // for fail and skip: one line
};

// What an attention group measured (GroupResult::attention).
struct AttentionStats {
  // The group's largest score bound: under exact its head_dim and dtype fix it; under f32-angle it
  // grows with the positions' angles (each score is held to its own). Or the override.
  double score_tolerance = 0;
  std::string score_source;
  // The output bound is per (query, head) row: it grows with the row's σ (judge/tolerance.cpp).
  double output_tolerance_min = 0, output_tolerance_max = 0;
  std::string output_source;
  std::int64_t scores_checked = 0, scores_failed = 0;
  std::int64_t scores_masked = 0;  // masked scores given as −inf (accepted, not measured)
  std::int64_t outputs_checked = 0, outputs_failed = 0;
  double worst_score_e = 0, worst_output_e = 0;
  // The output closest to its own bound: its e and that bound (e/tol is what passes or fails).
  double worst_output_margin = 0, worst_output_margin_e = 0, worst_output_margin_tolerance = 0;
};

// Why a group fails (judge/diagnosis.h computes it; every report shows `lines`).
struct GroupDiagnosis {
  std::vector<std::string> lines;   // one line each: the mistake, the angle, the rotation
  std::string mistake;              // the usual mistake that reproduces the outputs; empty when none does
  double mistake_within = 0;        // share of ordinary pairs within the f32-angle model's bound of it
  double mistake_identical = 0;     // share of rotated values it gives bit for bit
  double angle_error_rad = 0;       // largest |φ_c − φ| over the ordinary pairs
  double angle_error_ulps = 0;      // ... in binary32 ulps of φ
  double frequency_error_ulps = 0;  // largest fitted |frequency error|, binary32 ulps of θ'_j
  int frequency_error_pair = -1;    // its pair index
  std::string frequency_growth;     // "pair index", "constant" or "" (not resolved above the output's rounding)
  double position_offset = 0;       // the angle error over θ'_j, when it does not grow with the position
  double rotation_e = 0;            // largest |s − 1|/u: the error at the candidate's own angle
  // Share of the sampled ordinary pairs of the spec as given within the f32-angle model's bound
  // (judge/inference.h infer_spec); -1 when not measured. On a group failing the exact claim, 0.99
  // or more says the weaker f32-angle claim fits it (the summary says so).
  double f32_angle_share = -1;
  // The spec inference (judge/inference.h): one sentence saying what the outputs are — the smallest
  // change of the spec that reproduces them, a memory fault, a call that raised — or that no single
  // change does. Empty when nothing is named (a passing group never names anything).
  std::string explanation;
  std::string explanation_kind;  // base, layout, scaling, ... (judge/README.md "Explanation"); empty: none
  // The explanation without the figures of its group (shares, token lists): what groups failing
  // the same way have in common, so that a summary says it once for all of them
  // (judge/verdict.h distinct_explanations). Empty exactly when `explanation` is.
  std::string headline;
  // Per pair index: θ'_j of the spec and θ̂_j fitted from the candidate's own angles (NaN where the
  // angles do not resolve it): the plot of the HTML report.
  struct Frequency {
    int pair = 0;
    double expected = 0, fitted = 0;
  };
  std::vector<Frequency> frequencies;
};

struct GroupResult {
  golden::Kind kind = golden::Kind::rope;  // the golden file's kind
  std::string suite;
  int index = 0;     // group index in the suite file
  std::string spec;  // canonical spec text
  Dtype dtype = Dtype::f32;
  Tolerance tolerance;
  double attention_magnitude = 1;  // max(1, |g|): e is relative to g·ρ
  double max_frequency = 0;        // largest θ'_j: where a tolerance growing with the angle grows fastest
  std::int64_t tests = 0, tests_failed = 0, tests_skipped = 0;
  std::int64_t skipped_by_flags = 0, skipped_by_position = 0;  // of tests_skipped
  std::int64_t tokens_beyond_max_position = 0;                 // not judged (--max-position)
  std::int64_t pairs_checked = 0, pairs_failed = 0;
  std::int64_t ordinary_checked = 0, ordinary_failed = 0;  // the accuracy figures' pairs
  std::int64_t special_checked = 0, special_failed = 0;    // special inputs, or special outputs
  std::int64_t edge_failed = 0;                            // near-overflow or subnormal pairs out of tolerance
  std::int64_t signed_zero_failed = 0;                     // --strict-zeros only
  std::int64_t passthrough_checked = 0, passthrough_failed = 0;
  std::int64_t whole_tests_failed = 0;      // crash, missing output, wrong size, ...
  std::string first_whole_test_failure;     // "test ID: KIND: MESSAGE" of the first of them (the summary names it)
  std::int64_t beyond_required_failed = 0;  // ordinary pairs out of tolerance above --require-horizon
  // Direct checks (runner/tensor_judge.h): input values that were not values of the spec's input
  // dtype, rounded to it before judging (the values a kernel of that dtype receives).
  std::int64_t inputs_rounded = 0;
  // Accuracy figures, over ordinary pairs: never infinite.
  double worst_e = 0, worst_ulp = 0, worst_abs = 0;
  std::int64_t worst_e_position = -1;
  int worst_e_pair = -1;                    // pair index j of the worst e
  std::int64_t max_position = -1;           // largest position with an ordinary pair judged (−1: none)
  std::optional<std::int64_t> horizon;      // largest such position below the first accuracy failure
  bool horizon_complete = false;            // no accuracy failure: the horizon is every tested position
  Verdict verdict = Verdict::pass;
  std::string verdict_reason;               // one line when the verdict is not what the tests alone say
  std::vector<Case> worst;                  // accuracy cases (worst first), then edge cases (worst first)
  std::vector<Point> points;                // one per (test, token) with ordinary pairs: the plot
  std::vector<TestOutcome> outcomes;        // one per test
  std::optional<AttentionStats> attention;  // attention groups only
  double worst_margin = 0;                  // largest e/allowed over the ordinary pairs (≥ 1: out of tolerance)
  std::optional<GroupDiagnosis> diagnosis;  // failing or marginal RoPE groups (judge/diagnosis.h)

  std::int64_t edge_failures() const { return special_failed + edge_failed + signed_zero_failed + passthrough_failed + whole_tests_failed; }
};

// The rules GroupTally::finish applies to what a group recorded, for a caller that merges finished
// groups (gate/merge.cpp merges the reports of a sweep's shards):
// the verdict from the test counts: fail when a test failed, skip when every test was skipped;
Verdict verdict_of(std::int64_t tests, std::int64_t failed, std::int64_t skipped);
// the accuracy horizon: the largest tested position below the first failing one (none failing:
// every tested position);
std::optional<std::int64_t> horizon_of(std::span<const std::int64_t> tested, std::optional<std::int64_t> first_failing);
// why a verdict is not what the tests alone say when --require-horizon lies beyond every tested
// position and nothing failed; empty when it does not;
std::string require_horizon_reason(Verdict verdict, std::int64_t max_position, bool horizon_complete,
                                   std::optional<std::int64_t> require_horizon);
// a listed case's severity when its test already has a worse one listed: half (and finite, so that
// a test's second whole-test failure ranks below another test's first).
double second_severity(double severity);

namespace detail {  // shared by the two comparers (group.cpp, attention.cpp)
// What a comparer accumulates for one group: the result, the worst cases, and the tested positions
// with the first failing one (for the horizon).
class GroupTally {
 public:
  explicit GroupTally(Settings settings) : settings_(std::move(settings)) {}

  GroupResult result;
  const Settings& settings() const { return settings_; }

  // Keeps the worst `worst_cases` of each list (accuracy, edge), a test's worst case at its severity
  // and its others at half theirs: a CI reader needs the list of failing tests more than the
  // tenth-worst element of one test. The lists depend only on the cases recorded (ties: the first
  // recorded first), not on how they were split: finish() ranks the `worst_cases` worst of each
  // test, ties kept in recording order.
  void record_case(Case c);
  // Whether record_case would keep a case of this list, test and severity (skip building it if not).
  bool keeps(bool accuracy, std::int64_t test_id, double severity) const;
  // A case of test `test_id` of this group at `position`; the caller fills in the rest.
  Case new_case(std::int64_t test_id, CaseKind kind, std::int64_t position) const;
  // Records a case against test `test_id` as a whole (no element to point at), without counting
  // the test.
  void record_whole_test_case(std::int64_t test_id, CaseKind kind, std::string message, std::int64_t position);
  // A position whose ordinary pairs were judged; `accurate`: all of them within tolerance.
  void record_position(std::int64_t position, bool accurate);
  // A test without a usable output (missing, wrong size, crash, ...) fails as a whole; it is an edge
  // case: it does not move the horizon.
  void fail_test(std::int64_t test_id, std::int64_t lowest, CaseKind kind, std::string message);
  void skip_test(std::int64_t test_id, std::string reason);
  // Adds what `part` (a tally of later tokens or tests of this group, with the same settings)
  // recorded: the same result as recording it here directly, in order.
  void merge(GroupTally&& part);
  // Counts the tokens of the cases kept from `first_token`: this tally judged a part of a test
  // (a direct check's chunk) whose token 0 is the test's token first_token.
  void offset_tokens(std::int64_t first_token);
  // Verdict, horizon (the largest tested position below the first accuracy failure; all of them
  // when none fails), --require-horizon, and the plot's order.
  GroupResult finish();

 private:
  std::size_t case_limit() const;  // worst_cases, as a size (a negative one keeps none)
  struct Listed {
    Case c;
    std::uint64_t order = 0;  // recording order: ties of severity keep it
  };
  // Per list (accuracy, edge), per test id: its worst `worst_cases` cases, worst first.
  using Buckets = std::map<std::int64_t, std::vector<Listed>>;
  Settings settings_;
  Buckets accuracy_cases_, edge_cases_;
  std::uint64_t recorded_ = 0;
  std::optional<std::int64_t> first_failing_position_;
  std::vector<std::int64_t> tested_positions_;
};
}  // namespace detail

// The values a RoPE test is judged against: the exact outputs (long double) and the correctly
// rounded ones (IEEE policy). Independent of the candidate, so callers may compute them for many
// tests in parallel (runner/golden_run.cpp).
struct Expected {
  std::vector<long double> exact;
  std::vector<double> rounded;
};
// Under Model::exact and f32_angle: rounded = the golden expected values, exact from reference::rotate_exact at
// `precision_bits` (error ≤ 2^(14−P)·min(|φ|, 2^41)·ρ ≪ u·ρ at any angle, reference/README.md "Huge
// angles"; non-finite inputs replaced by 0: those pairs are judged by class). Under
// Model::f32_recipe: the recipe's correctly rounded result (golden expected_f32_recipe), as both.
Expected expected_values(const Spec& spec, const Call& test, Model model, int precision_bits = 128);

// Accumulates the calls of one group (judge/call.h): a golden group's tests, a sweep's calls, a
// direct check's chunks — every call of the spec `spec`.
class GroupComparer {
 public:
  GroupComparer(std::string suite, int index, const Spec& spec, Model model, Tolerance tolerance, Settings settings);

  // Judges one call's candidate output (row-major [tokens, heads, head_dim], any dtype's values).
  void add(const Call& test, std::span<const double> output, const Expected& expected);
  // The same for a test whose expected values are not computed yet (a sidecar test, a direct
  // check's chunk): its tokens are split over `threads`, each thread judging chunks of
  // kChunkValues values whose exact values (and correctly rounded ones, unless the exact models
  // find them in test.expected) come from reference::evaluate into a workspace reused chunk after
  // chunk. The verdict, figures and cases are add's with expected_values' values; memory is the
  // test's arrays plus a few chunks, not the test's expected values.
  void add_evaluated(const Call& test, std::span<const double> output, int threads);
  static constexpr std::int64_t kChunkValues = std::int64_t{1} << 18;
  // add_evaluated in two steps, for a caller that judges several tests at once: judge_evaluated
  // reads only the comparer's settings (safe on several threads at once) and add_judged records
  // what it found; tests added in the same order give add_evaluated's result.
  struct JudgedTest {
    detail::GroupTally part;
    bool test_pass = true, judged_any = false;
    double test_worst = 0;
    // Adds what judging later tokens of the same test found (a test judged in parts).
    void combine(JudgedTest&& later);
  };
  JudgedTest judge_evaluated(const Call& test, std::span<const double> output, int threads) const;
  // Builds what judge_evaluated needs first (the reference's constants), which its first call
  // would: a caller may do it on a thread that is idle before the first test is ready.
  void prepare_evaluation() const { (void)evaluation_plan(); }
  void add_judged(const Call& test, std::span<const double> output, JudgedTest&& judged);
  // One test judged in parts (a direct check's tensor, streamed in chunks: judge_evaluated on each
  // chunk, combined in token order, each chunk's case tokens offset to the tensor's): recorded as
  // the one test `test_id`, as add_judged records a test. The caller checked every part's sizes.
  void add_judged_parts(std::int64_t test_id, JudgedTest&& judged);
  // Records a test that produced no usable output (missing, wrong size, crash, timeout, status).
  void fail(const Call& test, CaseKind kind, std::string message);
  // Records the test `id` as not judged (unsupported spec, --skip-flags, --max-position).
  void skip(std::int64_t id, std::string reason);

  GroupResult finish();

  // The worst e over the ordinary pairs judged so far (to keep the chunk that shows it).
  double worst_e() const { return tally_.result.worst_e; }

 private:
  // An empty tally for one test's tokens (merged into tally_ by finish_test).
  detail::GroupTally test_tally() const;
  // Whether the output has the test's size; records the shape failure if not.
  bool output_fits(const Call& test, std::span<const double> output);
  // After every token of `test` was judged into `part`: merges it and records the test's outcome.
  void finish_test(std::int64_t test_id, detail::GroupTally&& part, bool test_pass, bool judged_any, double test_worst);

  Spec spec_;
  Model model_;
  PairRule rule_;
  std::vector<long double> theta_;  // θ'_j, for a tolerance that grows with the angle
  // The reference's constants for this group's spec and model, built by the first judge_evaluated
  // (an MPFR schedule: built once per group, not per call and thread, bench/README.md
  // "A sweep's serial part: plan"; a group judged by add alone never needs them). Empty when the
  // spec does not validate: evaluation then
  // throws as reference::evaluate_into does.
  struct EvaluationPlan {
    std::once_flag built;
    std::optional<reference::ApplyPlan> plan;
  };
  const reference::ApplyPlan* evaluation_plan() const;
  std::unique_ptr<EvaluationPlan> evaluation_ = std::make_unique<EvaluationPlan>();
  detail::GroupTally tally_;
};

// Accumulates the tests of one attention group (golden kind "attention").
class AttentionComparer {
 public:
  // `rope`: the claim's RoPE bound, which hypothesis H1 of the attention bounds assumes of the
  // rotated q and k (judge/tolerance.cpp); under f32-angle it grows with each token's angles.
  AttentionComparer(std::string suite, int index, const golden::Group& group, Model model, Tolerance rope, Settings settings);

  // Judges one test. `scores` ([heads, q_tokens, k_tokens]) and `outputs` ([q_tokens, heads,
  // v_dim]), row-major, are null when the candidate gave none (sizes are the caller's check);
  // `missing` names absent tensors that fail the test (empty under --allow-missing).
  void add(const golden::AttentionTest& test, const std::vector<double>* scores, const std::vector<double>* outputs,
           const std::vector<std::string>& missing);
  void fail(const golden::AttentionTest& test, CaseKind kind, std::string message);
  void skip(const golden::AttentionTest& test, std::string reason);

  GroupResult finish();

 private:
  const golden::Group& group_;
  Tolerance rope_;
  std::vector<long double> theta_;  // θ'_j per pair
  detail::GroupTally tally_;
};

// Largest component of token t's position tuple (`positions` row-major [tokens,
// position_components(spec)]; 0 past its end).
std::int64_t token_position(std::span<const std::int64_t> positions, const Spec& spec, std::int64_t token);
inline std::int64_t token_position(const Call& call, const Spec& spec, std::int64_t token) {
  return token_position(call.positions, spec, token);
}

}  // namespace ropecheck::judge
