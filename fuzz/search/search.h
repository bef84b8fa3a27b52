// `ropecheck fuzz`: a deterministic search for the inputs where an implementation is least accurate
// (docs/design.md use 3; docs/rope.md §5 lists the pitfalls the generators aim at).
//
// A case is one token, one head: a spec, a position tuple, a target pair j with its input (x, y),
// and a background seed that fills the other dims (0: zeros). It is judged pair by pair by THE pair
// rule (judge/pair_rule.h judge_pair, as check and run judge) against the exact rotation
// (reference::rotate_exact at 128 bits: error ≤ 2^(14−128)·|φ|·ρ, far below u·ρ for |φ| < 2^40)
// and the reference's special-value policy (reference/README.md "Special values"). The
// implementation under fuzz is any runner::Implementation (runner/registry.h names them).
//
// The search is a list of trials; trial t draws 16 edge cases (fuzz/search/generators.h) and then
// hill-climbs 24 rounds of 8 mutations each (position, input bits, pair index) toward larger e
// (fewer cases where head_dim is large: at most 2^18 values per trial, fuzz/README.md "Budgets").
// Each trial depends only on (seed, t), so `--shard K/N` (trials t ≡ K mod N) partitions the work
// and merging the shards' reports gives the unsharded run's report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/implementation.h"
#include "spec/spec.h"

namespace ropecheck::fuzz {

struct FuzzCase {
  std::vector<std::int64_t> position;  // position_components(spec) values
  int pair = 0;                        // target pair j in [0, rotary_dim/2)
  double x = 0;                        // the target pair's inputs (values of the dtype)
  double y = 0;
  std::uint64_t background = 0;        // seed of the other dims' values; 0 = zeros

  friend bool operator==(const FuzzCase&, const FuzzCase&) = default;
};

// "position=P[:P2...];pair=J;x=HEX;y=HEX;background=N" (the --replay argument), and back.
std::string case_text(const FuzzCase& c);
// Throws std::invalid_argument naming the field.
FuzzCase parse_case(const std::string& text, const Spec& spec);

// What is wrong with a case, most severe first (judge/pair_rule.h Failure and Domain): status: the
// call failed; passthrough; special_value: a special-value disagreement; signed_zero: a zero of the
// wrong sign (--strict-zeros only); tolerance: out of tolerance; underflow: out of tolerance with a
// subnormal input norm.
enum class Violation { none, status, passthrough, special_value, signed_zero, tolerance, underflow };
inline constexpr int kViolationClasses = 7;  // values of Violation, none included
std::string_view name(Violation v);

struct Outcome {
  bool unsupported = false;  // the candidate returned ROPECHECK_ERROR_UNSUPPORTED for the spec
  Violation violation = Violation::none;
  double e = 0;              // worst e over the ordinary pairs (judge/pair_rule.h Domain)
  double bound = 0;          // the tolerance at that pair's angle (judge/tolerance.h Tolerance::at)
  int worst_pair = -1;       // the pair of `e` (or of the violation)
  double x = 0, y = 0;       // that pair's inputs
  double got_a = 0, got_b = 0;            // the candidate's outputs
  double expected_a = 0, expected_b = 0;  // correctly rounded exact results
  std::string message;       // one line, for violations
};

// Evaluates cases of one spec in one call of the implementation.
std::vector<Outcome> evaluate(const runner::Implementation& implementation, const Spec& spec, const judge::Tolerance& tolerance,
                              const std::vector<FuzzCase>& cases, bool strict_zeros = false);

struct FuzzOptions {
  std::vector<Spec> specs;                 // the edge list when empty (default_specs())
  std::uint64_t seed = 1;
  std::optional<std::int64_t> trials;      // total trials over all shards
  std::optional<double> seconds;           // wall-clock cap (the report says when it was hit)
  int shard_index = 0;
  int shard_count = 1;
  bool strict_zeros = false;               // judge/pair_rule.h
  int worst_count = 10;
  int violations_per_class = 10;
};

// The built-in edge specs: bases 2 to 1e9, rotary_dim 2, head_dim up to 512, both layouts and
// directions, every dtype, every scaling type with positions and pairs at its band edges, 2-D RoPE,
// M-RoPE and interleaved M-RoPE (ggml IMROPE).
std::vector<Spec> default_specs();

struct Finding {
  std::int64_t trial = 0;
  std::string spec;  // canonical text
  FuzzCase fuzz_case;
  Outcome outcome;
  double tolerance = 0;
  std::string replay;  // the command that evaluates exactly this case again
};

struct FuzzReport {
  std::string implementation;
  std::string selector;
  std::string model;  // the claim judged (judge/tolerance.h name)
  std::uint64_t seed = 0;
  int shard_index = 0, shard_count = 1;
  // The search's own options (shards of one search agree on them: report merge checks).
  std::optional<std::int64_t> trials_requested;
  bool strict_zeros = false;
  std::int64_t trials_run = 0;
  std::int64_t trials_unsupported = 0;
  std::int64_t cases = 0;
  bool stopped_by_time = false;
  // Why the search stopped early besides --seconds (the implementation's circuit breaker after
  // consecutive timeouts, runner/isolation.h): "" when it did not.
  std::string stopped_reason;
  std::vector<std::string> specs;
  std::vector<std::string> tolerance_sources;  // per spec
  std::vector<double> tolerances;              // per spec
  std::vector<Finding> worst;                  // the trials' best cases, largest e first
  std::vector<Finding> violations;             // shrunk, per class in trial order
  std::int64_t violation_counts[kViolationClasses] = {};       // cases seen per Violation value
};

// The tolerance of each spec is the implementation's (runner/implementation.h tolerance()).
FuzzReport run_fuzz(const runner::Implementation& candidate, const FuzzOptions& options);

// Shrinks a violating case toward a minimal one of the same class (background to zeros, smaller
// pair index, smaller positions with fewer set bits, inputs with fewer significant bits).
FuzzCase shrink(const runner::Implementation& candidate, const Spec& spec, const judge::Tolerance& tolerance, FuzzCase c,
                Violation violation, bool strict_zeros = false);

std::string replay_command(const runner::Implementation& candidate, const Spec& spec, const FuzzCase& c, bool strict_zeros = false);

// The JSON report (schema "ropecheck-fuzz-report/1", fuzz/README.md) and its text form.
nlohmann::ordered_json to_json(const FuzzReport& report);
std::string to_text(const nlohmann::ordered_json& report);
// Combines reports of one search (same implementation and seed; shards, or repeated runs) into
// one: trials and cases add up, worst cases and violations are re-ranked. Throws
// std::invalid_argument naming the file and field of a report that does not fit.
nlohmann::ordered_json merge_reports(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& reports);
// The exit status a report implies: 0 pass, 1 when it records a violation.
// "pass" or "fail": a violation fails, and so does nothing judged (every trial unsupported).
std::string fuzz_verdict(const nlohmann::ordered_json& report);
int verdict_status(const nlohmann::ordered_json& report);

}  // namespace ropecheck::fuzz
