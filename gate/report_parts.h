// What the report formats share (gate/report_*.cpp): number and case formatting, group names,
// tolerance and attention cells. Internal to gate/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/report.h"

#ifndef ROPECHECK_VERSION
#define ROPECHECK_VERSION "0"
#endif

namespace ropecheck::gate::report_detail {

using ojson = nlohmann::ordered_json;

// JSON has no Inf/NaN: such metrics are written as the strings "inf" / "nan".
ojson number(double v);
// 3 digits, fixed or scientific (below 1e-3 and from 1e6 on).
std::string fixed(double v, int digits = 3);
std::string metric_name(const GroupResult& g);
// One case on one line: where, what, and its input, expected and got values in hex floats.
std::string describe(const Case& c);
std::vector<std::int64_t> failed_ids(const GroupResult& g);
std::string join_ids(const std::vector<std::int64_t>& ids, std::size_t limit = 20);
std::string group_name(const GroupResult& g);
// The HTML anchor of a group: its name without the '#', which a URL fragment may not contain
// (RFC 3986 §3.5).
std::string group_anchor(const GroupResult& g);
// An attention group's four metric cells (score e, its bound, output e and its row's bound at the
// output closest to its bound), "-" for what the candidate did not give.
struct AttentionCells {
  std::string score_e = "-", score_tol = "-", output_e = "-", output_tol = "-", output_range = "-";
};
AttentionCells attention_cells(const AttentionStats& a);
// "e <= 4", or "e <= 4 + 12*|angle|" for a bound that grows with the angle.
std::string tolerance_text(const GroupResult& g);
// A group's worst element ulp where it means something: under a ulp tolerance. Under the e metric
// it is "-": the ulp of a component near zero (cancellation in x·cos − y·sin) makes a correct
// output read as billions of ulps; the JSON report keeps the figure.
std::string worst_ulp_text(const GroupResult& g);
// The summary grid: one row per family of suites (a suite's name without its dtype and base
// tokens, cut to its first word when other suites share that word: "scaling-yarn" → "scaling"),
// one column per dtype; a cell is "ok N" (N groups judged, all passed), "FAIL F/N", "skip N"
// (none judged) or "-" (no group).
struct SummaryGrid {
  std::vector<Dtype> dtypes = {Dtype::f64, Dtype::f32, Dtype::f16, Dtype::bf16};
  std::vector<std::string> rows;
  std::vector<std::vector<std::string>> cells;  // [row][dtype]
};
SummaryGrid summary_grid(const Report& r);
// ": 12 by --skip-flags, 3 by --max-position" (nothing when none).
std::string skipped_detail(const JudgedScope& scope);

}  // namespace ropecheck::gate::report_detail
