// `ropecheck report merge` of `sweep --shard K/N` reports (the fuzz search's reports merge in
// fuzz/search/report.cpp): the unsharded sweep's report, byte for byte. A shard makes whole calls
// of the unsharded sweep, each the same test with the same id (runner/sweep.h), so each shard's
// report is read back into the judge's result types (gate/report_read.h) and the shards' groups
// are joined by the judge's tally (judge/group_parts.h join_group_parts: counts add up, worst values
// are maxima, the horizon and verdict follow from the points, the worst cases are ranked again);
// the diagnosis (fitted on one sample in every shard) is taken from a shard of the merged verdict.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/report.h"

namespace ropecheck::gate {

// Whether a parsed report is a `ropecheck sweep --json` report.
bool is_sweep_report(const nlohmann::ordered_json& report);

// Throws InputError naming the file and the field of a report that does not fit (another
// implementation, ropecheck version, judging model, spec, seed, sample count, maximum position,
// --worst, shard count, tolerance or judging options; a shard given twice or missing), and a
// report whose figures contradict its shard (test ids and points of another shard's calls,
// runner/sweep.h shard_of_call) or one another (a verdict its counts do not give, a worst e that
// is not the largest of its points).
// The merged report is decided (Report::decide) and written by to_json like any other.
Report merge_sweep_reports(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& reports);

// The sweep's text lines of a merged report (implementation, samples, worst e, horizon, result).
std::string sweep_text(const Report& report);

}  // namespace ropecheck::gate
