#include "gate/merge.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>

#include "base/errors.h"
#include "gate/report.h"
#include "gate/report_parts.h"
#include "gate/report_read.h"
#include "judge/group_parts.h"
#include "judge/inference.h"
#include "judge/verdict.h"
#include "runner/sweep.h"
#include "spec/spec.h"

namespace ropecheck::gate {
namespace {

using ojson = nlohmann::ordered_json;

// The counts a sweep report's group holds, which add up over its shards.
constexpr const char* kSummedCounts[] = {"tests",
                                         "tests_failed",
                                         "tests_skipped",
                                         "pairs_checked",
                                         "pairs_failed",
                                         "ordinary_checked",
                                         "ordinary_failed",
                                         "special_checked",
                                         "special_failed",
                                         "edge_failed",
                                         "signed_zero_failed",
                                         "passthrough_checked",
                                         "passthrough_failed",
                                         "whole_tests_failed",
                                         "beyond_required_failed",
                                         "skipped_by_flags",
                                         "skipped_by_position",
                                         "tokens_beyond_max_position"};

const ojson& field(const std::string& file, const ojson& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw InputError(file + ": " + key + ": expected a field of a sweep report, got none");
  return j.at(key);
}

// Checks a sweep report against everything merge_sweep_reports and sweep_text read, so that neither
// fails on it later (after --out is written): InputError naming the file and the field.
void check_sweep_report(const std::string& file, const ojson& r) {
  auto bad = [&](const std::string& where, const std::string& what) { throw InputError(file + ": " + where + ": expected " + what); };
  auto integer = [](const ojson& v, std::uint64_t limit = std::uint64_t{1} << 62) {
    return v.is_number_integer() && (!v.is_number_unsigned() || v.get<std::uint64_t>() <= limit) &&
           (v.is_number_unsigned() || v.get<std::int64_t>() <= static_cast<std::int64_t>(limit));
  };
  auto optional_of = [&](const ojson& o, const char* key, bool (ojson::*is)() const noexcept, const std::string& where, const char* what) {
    if (o.contains(key) && !(o.at(key).*is)()) bad(where + key, what);
  };
  for (const char* key : {"implementation", "model"}) {
    if (!field(file, r, key).is_string()) bad(key, "a string");
  }
  for (const char* key : {"summary", "sweep", "tool"}) {
    if (!field(file, r, key).is_object()) bad(key, "an object");
  }
  optional_of(r, "notes", &ojson::is_array, "", "an array");
  optional_of(r, "options", &ojson::is_object, "", "an object");
  const ojson& sweep = r.at("sweep");
  for (const char* key : {"max_position", "samples", "worst_cases"}) {
    if (!integer(field(file, sweep, key))) bad(std::string("sweep.") + key, "an integer");
  }
  if (!field(file, sweep, "seed").is_number_unsigned()) bad("sweep.seed", "an integer >= 0");
  const ojson& shard = field(file, sweep, "shard");
  const bool shard_ok = shard.is_object() && shard.contains("index") && shard.contains("count") && integer(shard.at("index")) &&
                        integer(shard.at("count")) && shard.at("count").get<std::int64_t>() >= 1 &&
                        shard.at("count").get<std::int64_t>() <= 1 << 20 && shard.at("index").get<std::int64_t>() >= 0 &&
                        shard.at("index").get<std::int64_t>() < shard.at("count").get<std::int64_t>();
  if (!shard_ok) bad("sweep.shard", "{\"index\": K, \"count\": N} with 0 <= K < N");
  const ojson& groups = field(file, r, "groups");
  if (!groups.is_array() || groups.size() != 1 || !groups.at(0).is_object()) bad("groups", "one group");
  const ojson& g = groups.at(0);
  for (const char* key : {"spec", "verdict"}) {
    if (!field(file, g, key).is_string()) bad(std::string("groups[0].") + key, "a string");
  }
  const ojson& tolerance = field(file, g, "tolerance");
  if (!tolerance.is_object() || !tolerance.contains("kind") || (tolerance.at("kind") != "e" && tolerance.at("kind") != "ulp")) {
    bad("groups[0].tolerance", "an object whose kind is \"e\" or \"ulp\"");
  }
  for (const char* key : {"worst_e", "worst_ulp", "worst_abs", "worst_margin"}) {
    const ojson& v = field(file, g, key);
    if (!v.is_number() && !v.is_string()) bad(std::string("groups[0].") + key, "a number, \"inf\" or \"nan\"");
  }
  if (g.contains("diagnosis")) {
    const ojson& d = g.at("diagnosis");
    if (!d.is_object() || (d.contains("explanation") && !d.at("explanation").is_string() && !d.at("explanation").is_null())) {
      bad("groups[0].diagnosis", "an object whose explanation is a string or null");
    }
  }
  optional_of(g, "horizon_complete", &ojson::is_boolean, "groups[0].", "true or false");
  for (const char* key : kSummedCounts) {
    // Counts up to 2^40 each: a sum over at most 2^20 shards cannot wrap around.
    if (!integer(field(file, g, key), std::uint64_t{1} << 40) || g.at(key).get<std::int64_t>() < 0) {
      bad(std::string("groups[0].") + key, "a count from 0 to 2^40");
    }
  }
  for (const char* key : {"max_position", "worst_e_position"}) {
    if (!integer(field(file, g, key))) bad(std::string("groups[0].") + key, "an integer");
  }
  for (const char* key : {"points", "worst_cases", "failed_tests", "skipped_tests"}) {
    if (!field(file, g, key).is_array()) bad(std::string("groups[0].") + key, "an array");
  }
  for (std::size_t i = 0; i < g.at("points").size(); ++i) {
    const ojson& p = g.at("points")[i];
    if (!p.is_array() || p.size() != 3 || !integer(p[0]) || !(p[1].is_number() || p[1].is_string()) || !p[2].is_boolean()) {
      bad("groups[0].points[" + std::to_string(i) + "]", "[position, e, pass]");
    }
  }
  for (std::size_t i = 0; i < g.at("worst_cases").size(); ++i) {
    const ojson& c = g.at("worst_cases")[i];
    auto metric_field = [&](const char* key) { return c.contains(key) && (c.at(key).is_number() || c.at(key).is_string()); };
    if (!c.is_object() || !metric_field("e") || !metric_field("ulp") || !c.contains("accuracy") || !c.at("accuracy").is_boolean() ||
        !c.contains("test_id") || !integer(c.at("test_id")) || !c.contains("kind") || !c.at("kind").is_string() ||
        (c.contains("domain") && !c.at("domain").is_string())) {
      bad("groups[0].worst_cases[" + std::to_string(i) + "]", "an object with test_id, kind, e, ulp and accuracy");
    }
  }
  for (std::size_t i = 0; i < g.at("failed_tests").size(); ++i) {
    if (!integer(g.at("failed_tests")[i])) bad("groups[0].failed_tests[" + std::to_string(i) + "]", "a test id");
  }
  for (std::size_t i = 0; i < g.at("skipped_tests").size(); ++i) {
    const ojson& t = g.at("skipped_tests")[i];
    if (!t.is_object() || !t.contains("id") || !integer(t.at("id")))
      bad("groups[0].skipped_tests[" + std::to_string(i) + "]", "an object with an id");
  }
}

}  // namespace

bool is_sweep_report(const ojson& report) {
  auto text = [&](const char* key) {
    return report.contains(key) && report.at(key).is_string() ? report.at(key).get<std::string>() : std::string();
  };
  return report.is_object() && text("schema") == "ropecheck-report/1" && text("command") == "sweep";
}

namespace {

// The shard schedule of the sweep every report is a shard of (runner/sweep.h): its sampled
// positions and calls, recomputed from the spec and sampling the reports share.
struct Schedule {
  std::vector<std::int64_t> positions;
  runner::SweepCalls calls;
  std::int64_t shard_count = 1;
};

Schedule schedule_of(const std::string& file, const ojson& report) {
  const ojson& sweep = report.at("sweep");
  Spec spec;
  try {
    spec = parse_spec(report.at("groups").at(0).at("spec").get<std::string>());
  } catch (const std::exception& e) {
    throw InputError(file + ": groups[0].spec: expected the spec text a sweep writes (" + e.what() + ")");
  }
  runner::SweepOptions options;
  options.max_position = sweep.at("max_position").get<std::int64_t>();
  options.samples = sweep.at("samples").get<std::int64_t>();
  options.seed = sweep.at("seed").get<std::uint64_t>();
  if (options.max_position < 0 || options.samples < 1 || options.samples > runner::kMaxSweepSamples) {
    throw InputError(file + ": sweep.samples: expected 1 to " + std::to_string(runner::kMaxSweepSamples) +
                     " samples of positions from 0 to sweep.max_position, got " + std::to_string(options.samples) + " up to " +
                     std::to_string(options.max_position));
  }
  Schedule s;
  s.positions = runner::sample_positions(options.max_position, options.samples, options.seed);
  s.calls = runner::sweep_calls(spec, options);
  s.shard_count = sweep.at("shard").at("count").get<std::int64_t>();
  return s;
}

// A report holds shard K's calls and nothing else (runner/sweep.h shard_of_call): as many tests as
// the shard makes, test ids and points of its calls only. A report whose shard index was edited
// names another shard's calls.
void check_schedule(const std::string& file, const ojson& r, const Schedule& s) {
  const std::int64_t index = r.at("sweep").at("shard").at("index").get<std::int64_t>();
  const std::string shard = std::to_string(index) + "/" + std::to_string(s.shard_count);
  const std::string calls_of_shard =
      "shard " + shard + " (calls c with c mod " + std::to_string(s.shard_count) + " = " + std::to_string(index) + ")";
  const ojson& g = r.at("groups").at(0);
  const std::int64_t tests = runner::shard_call_count(s.calls, index, s.shard_count);
  if (g.at("tests").get<std::int64_t>() != tests) {
    throw InputError(file + ": groups[0].tests: expected " + std::to_string(tests) + ", the calls of " + calls_of_shard + ", got " +
                     g.at("tests").dump());
  }
  auto check_id = [&](const std::string& where, const ojson& id) {
    const std::int64_t call = id.get<std::int64_t>() - runner::test_id_of_call(0);
    if (call < 0 || call >= s.calls.calls || runner::shard_of_call(call, s.shard_count) != index) {
      throw InputError(file + ": " + where + ": expected the test id of a call of " + calls_of_shard + ", got test " + id.dump() +
                       (call >= 0 && call < s.calls.calls
                            ? " (call " + std::to_string(call) + ", shard " + std::to_string(runner::shard_of_call(call, s.shard_count)) +
                                  "/" + std::to_string(s.shard_count) + ")"
                            : " (the sweep makes " + std::to_string(s.calls.calls) + " calls)"));
    }
  };
  for (std::size_t i = 0; i < g.at("failed_tests").size(); ++i)
    check_id("groups[0].failed_tests[" + std::to_string(i) + "]", g.at("failed_tests")[i]);
  for (std::size_t i = 0; i < g.at("skipped_tests").size(); ++i) {
    check_id("groups[0].skipped_tests[" + std::to_string(i) + "].id", g.at("skipped_tests")[i].at("id"));
  }
  for (std::size_t i = 0; i < g.at("worst_cases").size(); ++i) {
    check_id("groups[0].worst_cases[" + std::to_string(i) + "].test_id", g.at("worst_cases")[i].at("test_id"));
  }
  for (std::size_t i = 0; i < g.at("points").size(); ++i) {
    const std::int64_t position = g.at("points")[i].at(0).get<std::int64_t>();
    const auto it = std::lower_bound(s.positions.begin(), s.positions.end(), position);
    const std::string where = "groups[0].points[" + std::to_string(i) + "]";
    if (it == s.positions.end() || *it != position) {
      throw InputError(file + ": " + where + ": expected a position the sweep samples, got " + std::to_string(position));
    }
    const std::int64_t call = (it - s.positions.begin()) / s.calls.per_call;
    if (runner::shard_of_call(call, s.shard_count) != index) {
      throw InputError(file + ": " + where + ": expected a position sampled by a call of " + calls_of_shard + ", got position " +
                       std::to_string(position) + " of call " + std::to_string(call) + " (shard " +
                       std::to_string(runner::shard_of_call(call, s.shard_count)) + "/" + std::to_string(s.shard_count) + ")");
    }
  }
}

// The figures of a shard's group against one another, as the judge's rules give them (judge/group.h
// verdict_of; the failure counts of GroupResult): the verdict from the test counts, a failed test
// wherever a counted failure is, each position failing exactly where an accuracy failure is, and
// the worst e (ulp, under an ulp tolerance) the largest of the points'. A report with a figure
// edited (a worst e of 1e300 beside a pass) is refused, by the field.
void check_figures(const std::string& file, const GroupResult& g) {
  auto bad = [&](const std::string& where, const std::string& what) {
    throw InputError(file + ": groups[0]." + where + ": expected " + what);
  };
  if (g.tests_failed + g.tests_skipped > g.tests) {
    bad("tests",
        "at least tests_failed + tests_skipped = " + std::to_string(g.tests_failed + g.tests_skipped) + ", got " + std::to_string(g.tests));
  }
  const judge::Verdict verdict = judge::verdict_of(g.tests, g.tests_failed, g.tests_skipped);
  if (g.verdict != verdict) {
    bad("verdict", "\"" + std::string(judge::name(verdict)) + "\" (tests " + std::to_string(g.tests) + ", tests_failed " +
                       std::to_string(g.tests_failed) + ", tests_skipped " + std::to_string(g.tests_skipped) + "), got \"" +
                       std::string(judge::name(g.verdict)) + "\"");
  }
  const std::int64_t pair_failures = g.ordinary_failed + g.special_failed + g.signed_zero_failed + g.edge_failed;
  if (g.pairs_failed != pair_failures) {
    bad("pairs_failed", "ordinary_failed + special_failed + signed_zero_failed + edge_failed = " + std::to_string(pair_failures) +
                            ", got " + std::to_string(g.pairs_failed));
  }
  if (g.beyond_required_failed > g.ordinary_failed) bad("beyond_required_failed", "at most ordinary_failed");
  const std::int64_t counted = pair_failures - g.beyond_required_failed + g.passthrough_failed + g.whole_tests_failed;
  if (counted > 0 && g.tests_failed == 0) {
    bad("tests_failed", "at least 1: the report counts " + std::to_string(counted) + " failure(s) that fail a test, got 0");
  }
  bool any_failing = false;
  double largest = 0;
  for (const judge::Point& p : g.points) {
    any_failing = any_failing || !p.pass;
    if (p.e > largest) largest = p.e;  // NaN is never measured (judge/pair_rule.cpp): it raises nothing
  }
  if (any_failing != (g.ordinary_failed > 0)) {
    bad("points", std::string(any_failing ? "no failing position" : "a failing position") + " as ordinary_failed is " +
                      std::to_string(g.ordinary_failed) + ", got " + (any_failing ? "one" : "none"));
  }
  const bool e_kind = g.tolerance.kind == judge::Tolerance::Kind::e;
  const double worst = e_kind ? g.worst_e : g.worst_ulp;
  if (!g.points.empty() && !(worst == largest)) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", largest);
    bad(e_kind ? "worst_e" : "worst_ulp", std::string("the largest ") + (e_kind ? "e" : "ulp") + " of groups[0].points, " + text +
                                              ", got " + report_detail::number(worst).dump());
  }
}

using Reports = std::vector<std::pair<std::string, ojson>>;

// What every shard must share: one sweep (implementation, tool, judging model, spec, sampling,
// shard count, tolerance, judging options), each shard once, or the merge would be no run of it.
// Returns the shards' indices.
std::set<std::int64_t> check_one_sweep(const Reports& reports) {
  // Not a structured binding: the lambda below captures the name (clang before 16 cannot).
  const std::string& first_file = reports.front().first;
  const ojson& first = reports.front().second;
  const ojson& scope = first.at("sweep");
  const ojson& first_group = first.at("groups").at(0);
  auto same = [&](const std::string& file, const std::string& where, const ojson& value, const ojson& expected) {
    if (value != expected)
      throw InputError(file + ": " + where + ": expected " + expected.dump() + " as in " + first_file + ", got " + value.dump());
  };
  std::set<std::int64_t> shards;
  for (const auto& [file, r] : reports) {
    for (const char* key : {"implementation", "tool", "model"}) same(file, key, r.at(key), first.at(key));
    const ojson& s = r.at("sweep");
    for (const char* key : {"seed", "samples", "max_position", "worst_cases"})
      same(file, std::string("sweep.") + key, s.at(key), scope.at(key));
    same(file, "sweep.shard.count", s.at("shard").at("count"), scope.at("shard").at("count"));
    const std::int64_t index = s.at("shard").at("index").get<std::int64_t>();
    if (!shards.insert(index).second) {
      throw InputError(file + ": sweep.shard.index: expected each shard once, got shard " + std::to_string(index) + "/" +
                       std::to_string(scope.at("shard").at("count").get<std::int64_t>()) + " again");
    }
    const ojson& g = r.at("groups").at(0);
    same(file, "groups[0].spec", g.at("spec"), first_group.at("spec"));
    // The same rule: a merged report states one tolerance and one set of judging options.
    same(file, "groups[0].tolerance", g.at("tolerance"), first_group.at("tolerance"));
    same(file, "options", r.value("options", ojson()), first.value("options", ojson()));
  }
  return shards;
}

void check_every_shard(const std::set<std::int64_t>& shards, std::int64_t count_of_shards) {
  for (std::int64_t k = 0; k < count_of_shards; ++k) {
    if (!shards.count(k)) {
      throw InputError("report merge: sweep.shard: expected every shard K/" + std::to_string(count_of_shards) + ", 0 <= K < " +
                       std::to_string(count_of_shards) + ", got no shard " + std::to_string(k) + "/" + std::to_string(count_of_shards));
    }
  }
}

// The diagnosis is fitted on the same sample in every shard that needs one (runner/sweep.h), with
// the verdict it was given: a shard of the merged verdict's gives it; a failed call's explanation
// is the one at the lowest position (judge/inference.h FailedCalls). None when no shard of that
// verdict has one.
std::optional<judge::GroupDiagnosis> merged_diagnosis(const std::vector<Report>& shards, judge::Verdict verdict) {
  const judge::GroupDiagnosis* diagnosis = nullptr;
  std::int64_t diagnosis_position = 0;
  for (const Report& r : shards) {
    const GroupResult& g = r.groups.front();
    if (!g.diagnosis || (g.verdict == judge::Verdict::fail) != (verdict == judge::Verdict::fail)) continue;
    const std::int64_t at = judge::FailedCalls::explained_position(*g.diagnosis).value_or(std::numeric_limits<std::int64_t>::max());
    if (!diagnosis || at < diagnosis_position) {
      diagnosis = &*g.diagnosis;
      diagnosis_position = at;
    }
  }
  return diagnosis ? std::optional(*diagnosis) : std::nullopt;
}

}  // namespace

Report merge_sweep_reports(const Reports& reports) {
  if (reports.empty()) throw InputError("report merge: expected at least one report");
  std::vector<Report> shards;
  for (const auto& [file, r] : reports) {
    if (!is_sweep_report(r))
      throw InputError(file + ": schema: expected a ropecheck sweep --json report (ropecheck-report/1, command sweep)");
    check_sweep_report(file, r);
    shards.push_back(report_from_json(file, r));
  }
  const std::set<std::int64_t> shard_indices = check_one_sweep(reports);
  const Schedule schedule = schedule_of(reports.front().first, reports.front().second);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    check_schedule(reports[i].first, reports[i].second, schedule);
    check_figures(reports[i].first, shards[i].groups.front());
  }
  check_every_shard(shard_indices, schedule.shard_count);
  Report merged = shards.front();
  judge::Settings options;
  options.worst_cases = merged.sweep->worst_cases;
  options.strict_zeros = merged.scope.strict_zeros;
  options.max_position = merged.scope.max_position;
  options.require_horizon = merged.scope.require_horizon;
  std::vector<GroupResult> parts;
  for (const Report& r : shards) parts.push_back(r.groups.front());
  GroupResult group = judge::join_group_parts(parts, options);
  group.diagnosis = merged_diagnosis(shards, group.verdict);
  merged.groups = {std::move(group)};
  merged.sweep->shard_index = 0;
  merged.sweep->shard_count = 1;
  merged.decide();
  return merged;
}

std::string sweep_text(const Report& report) {
  const GroupResult& g = report.groups.at(0);
  char line[512];
  std::string out = "implementation: " + report.implementation + "\n";
  out += "claim: model " + std::string(judge::name(report.model)) + "\n";
  out += "spec: " + g.spec + "\n";
  std::snprintf(line, sizeof line, "samples: %zu positions in [0, %lld]\n", g.points.size(),
                static_cast<long long>(report.sweep ? report.sweep->max_position : 0));
  out += line;
  std::snprintf(line, sizeof line, "worst e: %.6g at position %lld (%s)\n", g.worst_e, static_cast<long long>(g.worst_e_position),
                margin_text(g.worst_margin).c_str());
  out += line;
  if (!g.horizon) {
    out += "accuracy horizon: none\n";
  } else {
    out += "accuracy horizon: " + std::to_string(*g.horizon) + (g.horizon_complete ? " (every sampled position)" : "") + "\n";
  }
  if (g.diagnosis && !g.diagnosis->explanation.empty()) out += "explanation: " + g.diagnosis->explanation + "\n";
  out += "result: " + std::string(judge::name(g.verdict)) + "\n";
  return out;
}

}  // namespace ropecheck::gate
