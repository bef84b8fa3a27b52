// The gate's reports: the verdict table on stdout, and the --json (schema gate/schema/report.schema.json),
// --junit (one testcase per group) and --html (one self-contained page with an SVG plot per group)
// files, each written atomically and never onto an input file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/group.h"
#include "judge/tolerance.h"

namespace ropecheck::gate {

using judge::AttentionStats;
using judge::Case;
using judge::GroupResult;
using judge::Model;
using judge::Point;
using judge::TestOutcome;
using judge::Tolerance;

// One identity of the catalog run with `run --props`.
struct PropertyResult {
  std::string name;
  std::string formula;
  std::string proof;  // the Coq file proving it for all inputs (proofs/catalog.h), empty if none
  bool holds = false;
  int cases = 0;
  bool gave_up = false;
  double worst_units = 0;  // worst discrepancy in u·ρ units
  std::string failure;
  std::string counterexample;
  std::string replay;  // a failure's command that runs this identity alone on the same cases; else empty
};

// The options that change what was judged, shown in every report.
struct JudgedScope {
  std::optional<std::int64_t> max_position;
  std::optional<std::int64_t> require_horizon;
  std::vector<std::string> skip_flags;
  bool strict_zeros = false;
  std::int64_t skipped_by_flags = 0, skipped_by_position = 0;
};

// What a sweep sampled (its JSON report's `sweep` object): what its shards must share to merge,
// and the cases kept per list (--worst, judge/group.h) that the merge ranks again.
struct SweepScope {
  std::uint64_t seed = 1;
  std::int64_t samples = 0, max_position = 0;
  int shard_index = 0, shard_count = 1;
  int worst_cases = 10;
};

struct Report {
  std::string command;         // "check", "run" or "sweep"
  std::string implementation;  // which kernel ran: the resolved kernel name, the plugin, or the candidate file
  std::string candidate;       // candidate file (check) or plugin path / --impl name (run)
  Model model = Model::exact;
  std::vector<std::string> golden_files;
  std::vector<GroupResult> groups;
  std::vector<PropertyResult> properties;
  std::vector<std::string> notes;  // e.g. suites not gated, and why
  JudgedScope scope;
  std::optional<SweepScope> sweep;  // `sweep` reports only
  int worst_listed = 10;           // cases printed per failing group on stdout (--worst)
  judge::Verdict verdict = judge::Verdict::fail;  // pass or fail (decide)
  std::string tool_version;  // the ropecheck that judged; empty: this one (a merged report keeps its shards')

  // pass when no group and no property fails and something was judged (judge/verdict.h); notes
  // judge::kNothingJudgedNote once when nothing was, so that deciding a merged report again keeps one.
  void decide();
};

// Text forms. The summary (what the commands print by default): a grid of families × dtypes
// counting passing and failing groups, the identities in one line, one line per failing group (the
// first 20; with the explanation and worst case when there are at most 3), the notes, the verdict.
// The table (--verbose) lists one row per group, every identity and every failing and marginal
// group's cases and diagnosis. `format_horizon` prints "≥N" when nothing failed.
std::string format_summary(const Report& report);
std::string format_table(const Report& report);
// What emit_reports prints on stdout.
enum class TextForm { summary, table, explanation };
std::string format_horizon(const GroupResult& group);
// One line counting a group's edge failures by kind ("" when none): special values, near-overflow
// or subnormal pairs, signed zeros, pass-through dims, whole tests.
std::string edge_summary(const GroupResult& group);
// Where a worst e stands against its bound at its pair's angle (GroupResult::worst_margin: e over
// the bound): "within the bound: at most 0.243 of it" or "out of the bound: 3.10 times it". Under
// f32-angle the bound grows with the angle, so e alone does not say pass or fail.
std::string margin_text(double worst_margin);
// The note of a direct check whose inputs were rounded to the spec's input dtype
// (GroupResult::inputs_rounded; "" when none were): the check command and Python's check add it.
std::string rounded_inputs_note(const GroupResult& group);
std::string to_json(const Report& report);
std::string to_junit(const Report& report);
std::string to_html(const Report& report);

// Writes `content` to `path` through a temporary file in the same folder and a rename, so a reader
// never sees a half-written report. Throws UsageError when `path` is one of `inputs` (same file) or a
// folder, InputError when it cannot be written.
// `exclusive`: `path` must not exist when the file is put in place (link, not rename): a file
// created meanwhile is never replaced, and of two writers to one new path one fails.
void write_atomically(const std::string& path, const std::string& content, const std::vector<std::string>& inputs,
                      bool exclusive = false);
// The same for content produced in pieces (a golden sidecar of gigabytes): `produce` calls the
// writer once per piece; nothing is visible at `path` until every piece is written.
using ChunkWriter = std::function<void(std::string_view)>;
void write_atomically_streamed(const std::string& path, const std::vector<std::string>& inputs,
                               const std::function<void(const ChunkWriter&)>& produce, bool exclusive = false);

// Checks the non-empty report paths before the work that fills them, so that a long run does not
// end in "cannot write": distinct, not a folder, not one of `inputs`, in an existing folder that
// this process may write. Throws UsageError or InputError (exit 2) naming the path.
void check_report_paths(const std::vector<std::string>& paths, const std::vector<std::string>& inputs);

// Prints the summary, the table or format_explanation on stdout and writes each report
// whose path is non-empty (atomically, never onto one of `inputs`). Report paths are all checked
// (check_report_paths) before anything is written.
void emit_reports(const Report& report, const std::string& json_path, const std::string& junit_path,
                  const std::string& html_path, const std::vector<std::string>& inputs, TextForm text = TextForm::summary);
// `ropecheck explain`'s output: the verdict, then per failing group its explanation and diagnosis.
std::string format_explanation(const Report& report);

// Escapes text for XML/HTML attribute and element content; drops characters XML 1.0 forbids.
std::string xml_escape(std::string_view text);

}  // namespace ropecheck::gate
