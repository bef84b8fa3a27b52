// `ropecheck report merge` of `sweep --shard K/N` reports (the fuzz search's reports merge in
// fuzz/search/report.cpp): one group whose points, counts, worst e and worst cases are the shards'
// together, the horizon recomputed from the points — what the unsharded sweep reports, since each
// sampled position is judged the same way in whichever shard holds it (judge/sweep.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ropecheck::gate {

// Whether a parsed report is a `ropecheck sweep --json` report.
bool is_sweep_report(const nlohmann::ordered_json& report);

// Throws InputError naming the file and the field of a report that does not fit (another
// implementation, spec, seed, sample count or model; a shard given twice or missing).
nlohmann::ordered_json merge_sweep_reports(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& reports);

// The sweep's text lines of a merged report (implementation, samples, worst e, horizon, result).
std::string sweep_text(const nlohmann::ordered_json& report);

}  // namespace ropecheck::gate
