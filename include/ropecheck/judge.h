// ropecheck's public C++ API (include/README.md): a RoPE function judged over golden suites by the
// gate's own rule — the same golden loop, pair rule and default tolerances as `ropecheck check` and
// `ropecheck run` (judge/README.md). <ropecheck/gtest.h> turns the verdict into a GoogleTest
// assertion. Implemented in the library target ropecheck::ropecheck (runner/public_judge.cpp).
#pragma once

#include <ropecheck/spec.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ropecheck {

// The implementation under test: its outputs for `input` ([tokens, heads, head_dim] of `shape`,
// row-major, values of spec.input_dtype()) at `positions` (spec.position_components() per token),
// as doubles in the same layout. Called once per golden test, one call at a time. An exception
// fails that test, with its message.
using RopeFunction = std::function<std::vector<double>(const RopeSpec& spec, TensorShape shape,
                                                       std::span<const std::int64_t> positions,
                                                       std::span<const double> input)>;

// The options of every judging command (judge/README.md "Options every judging command takes").
struct GoldenOptions {
  // exact | f32-angle | f32-recipe (judge/README.md "Models"); empty: the default claim, f32-angle
  std::string model;
  std::string tolerance;                    // "e=N", "ulp=N", "theta_ulps=K" (comma-separated); empty: the model's default
  bool strict_zeros = false;                // require the correctly rounded result's sign of zero
  std::optional<std::int64_t> max_position; // tokens above it are not judged (your context length)
  std::vector<std::string> skip_flags;      // golden tests carrying one of these flags are not judged
  int threads = 0;                          // threads for the exact values (0: all cores)
};

// One failing case: a pair out of tolerance, a special value, a whole test that failed, ...
struct GoldenCase {
  std::int64_t test_id = 0;
  std::string kind;  // tolerance | special_value | signed_zero | passthrough | missing | shape | crash | ...
  std::int64_t position = 0;
  std::string message;  // one line
};

// One golden group (a spec of a suite) and its verdict.
struct GoldenGroup {
  std::string suite;
  int index = 0;       // the group's index in the suite file
  std::string spec;    // its canonical spec text
  std::string verdict; // pass | fail | skip
  std::string tolerance_kind = "e";  // e: normwise (docs/design.md "Error metric"); ulp: element ulps
  double tolerance = 0;              // the bound at angle 0 ...
  double tolerance_per_radian = 0;   // ... plus this per radian of the pair's angle (f32-angle)
  double worst_e = 0;                // over ordinary pairs
  std::optional<std::int64_t> horizon;  // the accuracy horizon; empty when the first position fails
  std::vector<GoldenCase> worst;        // accuracy cases (worst first), then edge cases
  std::string explanation;              // why it fails, when a change of the spec or a fault explains it
};

struct GoldenVerdict {
  bool passed = false;  // no group failed, and some group was judged (every group skipped fails)
  std::vector<GoldenGroup> groups;
  std::string model;                  // the claim judged
  // One line per distinct explanation of the failing groups, with how many groups it covers
  // ("4 groups: your outputs are RoPE with base=10000 (expected 500000)").
  std::vector<std::string> explanations;
  std::vector<std::string> notes;
};

// Judges `rope` over a golden file, or every *.json file of a folder. Throws std::invalid_argument
// with one line naming the file and field, or the option, and what was expected, for an unreadable
// or invalid golden file and for bad options.
GoldenVerdict judge_golden_file(const std::string& golden_file_or_folder, const RopeFunction& rope,
                                const GoldenOptions& options = {});

}  // namespace ropecheck
