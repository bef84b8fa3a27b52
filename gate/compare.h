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

// The default tolerance for a model and dtype, with its derivation in `source` (gate/tolerance.cpp).
Tolerance default_tolerance(Model model, Dtype dtype);
// "e=3" or "ulp=4"; throws UsageError naming --tolerance.
Tolerance parse_tolerance(std::string_view text);

// One bad element or test, as listed in reports (the worst first).
struct Case {
  std::string suite;
  std::int64_t test_id = 0;
  std::string kind;  // tolerance | special | passthrough | missing | shape | crash | timeout | status | abi
  std::string message;                     // one line
  std::int64_t position = 0;               // largest position component of the token
  std::int64_t token = 0, head = 0;
  int dim = -1;                            // first dim of the pair (or the element), -1 for whole tests
  int second_dim = -1;
  double input_x = 0, input_y = 0;
  double expected_a = 0, expected_b = 0;   // correctly rounded expected values
  double got_a = 0, got_b = 0;
  double e = 0, ulp = 0, abs = 0;
  double severity = 0;  // for ordering: e (or ulp) of the case, +inf for whole-test failures
};

struct Point {
  std::int64_t position = 0;
  double e = 0;  // worst e (or ulp) over the pairs of one (test, token)
  bool pass = true;
};

struct TestOutcome {
  std::int64_t id = 0;
  std::string status;  // pass | fail | skip
  std::string reason;  // for fail and skip: one line
};

struct GroupResult {
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
};

struct CompareOptions {
  Model model = Model::exact;
  std::optional<Tolerance> tolerance;  // overrides the default
  // The candidate's own claimed bound for a spec, used instead of the default when set (the
  // project's kernels claim their proven bounds, optimized/error_bounds.h); `tolerance` wins.
  std::function<std::optional<Tolerance>(const Spec&)> claimed_bound;
  int worst_cases = 10;
  int precision_bits = 128;  // of the exact values (rotate_exact): error ≤ 2^(14−P)·|φ|·ρ ≪ u·ρ
};

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
  void record_case(Case c);
  void record_position(std::int64_t position, bool pass);

  const golden::Group& group_;
  CompareOptions options_;
  double attention_ = 1;  // the spec's attention factor g
  GroupResult result_;
  std::optional<std::int64_t> first_failing_position_;
  std::vector<std::int64_t> tested_positions_;
};

// Largest component of token t's position tuple.
std::int64_t token_position(const golden::RopeTest& test, const Spec& spec, std::int64_t token);

}  // namespace ropecheck::gate
