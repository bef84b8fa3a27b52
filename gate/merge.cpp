#include "gate/merge.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>

#include "judge/errors.h"

namespace ropecheck::gate {
namespace {

using ojson = nlohmann::ordered_json;

double metric(const ojson& v) {
  if (v.is_number()) return v.get<double>();
  return v == "nan" ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
}

ojson as_metric(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return "inf";
  return v;
}

const ojson& field(const std::string& file, const ojson& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw InputError(file + ": " + key + ": expected a field of a sweep report, got none");
  return j.at(key);
}

std::int64_t count(const std::string& file, const ojson& g, const char* key) {
  const ojson& v = field(file, g, key);
  if (!v.is_number_integer()) throw InputError(file + ": groups[0]." + key + ": expected an integer");
  return v.get<std::int64_t>();
}

// Checks a sweep report against everything merge_sweep_reports and sweep_text read, so that neither
// fails on it later (after --out is written): InputError naming the file and the field.
void check_sweep_report(const std::string& file, const ojson& r) {
  auto bad = [&](const std::string& where, const std::string& what) {
    throw InputError(file + ": " + where + ": expected " + what);
  };
  auto integer = [](const ojson& v, std::uint64_t limit = std::uint64_t{1} << 62) {
    return v.is_number_integer() && (!v.is_number_unsigned() || v.get<std::uint64_t>() <= limit) &&
           (v.is_number_unsigned() || v.get<std::int64_t>() <= static_cast<std::int64_t>(limit));
  };
  auto optional_of = [&](const ojson& o, const char* key, bool (ojson::*is)() const noexcept, const std::string& where,
                         const char* what) {
    if (o.contains(key) && !(o.at(key).*is)()) bad(where + key, what);
  };
  for (const char* key : {"implementation", "command", "schema"}) optional_of(r, key, &ojson::is_string, "", "a string");
  for (const char* key : {"summary", "sweep"}) {
    if (!field(file, r, key).is_object()) bad(key, "an object");
  }
  optional_of(r, "notes", &ojson::is_array, "", "an array");
  const ojson& sweep = r.at("sweep");
  if (!integer(field(file, sweep, "max_position"))) bad("sweep.max_position", "an integer");
  const ojson& shard = field(file, sweep, "shard");
  const bool shard_ok = shard.is_object() && shard.contains("index") && shard.contains("count") && integer(shard.at("index")) &&
                        integer(shard.at("count")) && shard.at("count").get<std::int64_t>() >= 1 &&
                        shard.at("count").get<std::int64_t>() <= 1 << 20 && shard.at("index").get<std::int64_t>() >= 0 &&
                        shard.at("index").get<std::int64_t>() < shard.at("count").get<std::int64_t>();
  if (!shard_ok) bad("sweep.shard", "{\"index\": K, \"count\": N} with 0 <= K < N");
  const ojson& groups = field(file, r, "groups");
  if (!groups.is_array() || groups.size() != 1 || !groups.at(0).is_object()) bad("groups", "one group");
  const ojson& g = groups.at(0);
  for (const char* key : {"spec", "verdict"}) optional_of(g, key, &ojson::is_string, "groups[0].", "a string");
  optional_of(g, "horizon_complete", &ojson::is_boolean, "groups[0].", "true or false");
  for (const char* key : {"tests", "tests_failed", "tests_skipped", "pairs_checked", "pairs_failed", "ordinary_checked",
                          "ordinary_failed", "special_checked", "special_failed", "edge_failed", "signed_zero_failed",
                          "passthrough_checked", "passthrough_failed", "whole_tests_failed", "beyond_required_failed"}) {
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
    if (!c.is_object() || !c.contains("e") || (c.contains("accuracy") && !c.at("accuracy").is_boolean())) {
      bad("groups[0].worst_cases[" + std::to_string(i) + "]", "an object with e and accuracy");
    }
  }
}

}  // namespace

bool is_sweep_report(const ojson& report) {
  auto text = [&](const char* key) {
    return report.contains(key) && report.at(key).is_string() ? report.at(key).get<std::string>() : std::string();
  };
  return report.is_object() && text("schema") == "ropecheck-report/1" && text("command") == "sweep";
}

ojson merge_sweep_reports(const std::vector<std::pair<std::string, ojson>>& reports) {
  if (reports.empty()) throw InputError("report merge: expected at least one report");
  for (const auto& [file, r] : reports) {
    if (!is_sweep_report(r)) throw InputError(file + ": schema: expected a ropecheck sweep --json report (ropecheck-report/1, command sweep)");
    check_sweep_report(file, r);
  }
  const auto& [first_file, first] = reports.front();
  ojson merged = first;
  const ojson& scope = field(first_file, first, "sweep");
  const int count_of_shards = field(first_file, scope, "shard").value("count", 0);
  std::set<int> shards;
  std::vector<ojson> points, cases;
  std::vector<ojson> failed, skipped;
  ojson group = field(first_file, first, "groups").at(0);
  const char* const sums[] = {"tests", "tests_failed", "tests_skipped", "pairs_checked", "pairs_failed", "ordinary_checked",
                              "ordinary_failed", "special_checked", "special_failed", "edge_failed", "signed_zero_failed",
                              "passthrough_checked", "passthrough_failed", "whole_tests_failed", "beyond_required_failed"};
  for (const char* key : sums) group[key] = 0;
  double worst_e = -1, worst_ulp = 0, worst_abs = 0, worst_margin = 0;
  std::int64_t max_position = -1;
  std::size_t keep = 0;
  bool any_judged = false;
  for (const auto& [file, r] : reports) {
    if (!is_sweep_report(r)) throw InputError(file + ": schema: expected a ropecheck sweep --json report (ropecheck-report/1, command sweep)");
    for (const char* key : {"implementation", "model"}) {
      if (field(file, r, key) != first.at(key)) throw InputError(file + ": " + key + ": expected " + first.at(key).dump() + " as in " + first_file);
    }
    const ojson& s = field(file, r, "sweep");
    for (const char* key : {"seed", "samples", "max_position"}) {
      if (field(file, s, key) != scope.at(key)) throw InputError(file + ": sweep." + key + ": expected " + scope.at(key).dump() + " as in " + first_file);
    }
    const ojson& shard = field(file, s, "shard");
    if (shard.value("count", 0) != count_of_shards) throw InputError(file + ": sweep.shard.count: expected " + std::to_string(count_of_shards));
    if (!shards.insert(shard.value("index", -1)).second) throw InputError(file + ": sweep.shard.index: expected each shard once, got it twice");
    const ojson& g = field(file, r, "groups").at(0);
    if (g.value("spec", "") != group.value("spec", "")) throw InputError(file + ": groups[0].spec: expected " + group.value("spec", ""));
    // The same rule: a merged report states one tolerance and one set of judging options, so the
    // shards must have been judged by them (else the merge is no run of the sweep).
    if (g.value("tolerance", ojson()) != group.value("tolerance", ojson())) {
      throw InputError(file + ": groups[0].tolerance: expected " + group.value("tolerance", ojson()).dump() + " as in " + first_file);
    }
    if (r.value("options", ojson()) != first.value("options", ojson())) {
      throw InputError(file + ": options: expected " + first.value("options", ojson()).dump() + " as in " + first_file);
    }
    for (const char* key : sums) group[key] = group[key].get<std::int64_t>() + count(file, g, key);
    if (g.value("verdict", "") != "skip") any_judged = true;
    const double e = metric(field(file, g, "worst_e"));
    if (e > worst_e) {
      worst_e = e;
      group["worst_e_position"] = g.at("worst_e_position");
    }
    worst_ulp = std::max(worst_ulp, metric(field(file, g, "worst_ulp")));
    worst_abs = std::max(worst_abs, metric(field(file, g, "worst_abs")));
    worst_margin = std::max(worst_margin, metric(field(file, g, "worst_margin")));
    max_position = std::max(max_position, count(file, g, "max_position"));
    for (const ojson& p : field(file, g, "points")) points.push_back(p);
    for (const ojson& c : field(file, g, "worst_cases")) cases.push_back(c);
    keep = std::max(keep, g.at("worst_cases").size());
    for (const ojson& id : field(file, g, "failed_tests")) failed.push_back(id);
    for (const ojson& t : field(file, g, "skipped_tests")) skipped.push_back(t);
    if (!group.contains("diagnosis") && g.contains("diagnosis")) group["diagnosis"] = g.at("diagnosis");
  }
  if (static_cast<int>(shards.size()) != count_of_shards) {
    throw InputError("report merge: sweep.shard: expected all " + std::to_string(count_of_shards) + " shards, got " +
                     std::to_string(shards.size()));
  }
  std::sort(points.begin(), points.end(), [](const ojson& l, const ojson& r) {
    return l.at(0).get<std::int64_t>() < r.at(0).get<std::int64_t>() ||
           (l.at(0) == r.at(0) && metric(l.at(1)) < metric(r.at(1)));
  });
  // The horizon from the points, as judge/group.cpp GroupTally::finish computes it.
  std::optional<std::int64_t> first_failing;
  for (const ojson& p : points) {
    if (!p.at(2).get<bool>()) {
      first_failing = p.at(0).get<std::int64_t>();
      break;
    }
  }
  std::optional<std::int64_t> horizon;
  for (const ojson& p : points) {
    const std::int64_t position = p.at(0).get<std::int64_t>();
    if (first_failing && position >= *first_failing) break;
    horizon = position;
  }
  // Accuracy cases first, each list worst first (judge/group.h).
  std::stable_sort(cases.begin(), cases.end(), [](const ojson& l, const ojson& r) {
    if (l.value("accuracy", false) != r.value("accuracy", false)) return l.value("accuracy", false);
    return metric(l.at("e")) > metric(r.at("e"));
  });
  if (cases.size() > keep) cases.resize(keep);
  std::sort(failed.begin(), failed.end());
  group["worst_e"] = as_metric(std::max(worst_e, 0.0));
  group["worst_ulp"] = as_metric(worst_ulp);
  group["worst_abs"] = as_metric(worst_abs);
  group["worst_margin"] = as_metric(worst_margin);
  group["max_position"] = max_position;
  group["horizon"] = horizon ? ojson(*horizon) : ojson(nullptr);
  group["horizon_complete"] = !first_failing && horizon.has_value();
  group["verdict"] = group["tests_failed"].get<std::int64_t>() > 0 ? "fail" : any_judged ? "pass" : "skip";
  group["points"] = points;
  group["worst_cases"] = cases;
  group["failed_tests"] = failed;
  group["skipped_tests"] = skipped;
  merged["groups"] = ojson::array({group});
  merged["verdict"] = group["verdict"] == "pass" ? "pass" : "fail";
  merged["summary"]["tests"] = group["tests"];
  merged["summary"]["tests_failed"] = group["tests_failed"];
  merged["summary"]["tests_skipped"] = group["tests_skipped"];
  merged["summary"]["groups_failed"] = group["verdict"] == "fail" ? 1 : 0;
  merged["sweep"]["shard"] = {{"index", 0}, {"count", 1}};
  merged["notes"].push_back("merged from " + std::to_string(reports.size()) + " shards");
  return merged;
}

std::string sweep_text(const ojson& report) {
  const ojson& g = report.at("groups").at(0);
  char line[512];
  std::string out = "implementation: " + report.value("implementation", "") + "\n";
  out += "spec: " + g.value("spec", "") + "\n";
  std::snprintf(line, sizeof line, "samples: %zu positions in [0, %lld]\n", g.at("points").size(),
                static_cast<long long>(report.at("sweep").value("max_position", std::int64_t{0})));
  out += line;
  std::snprintf(line, sizeof line, "worst e: %.6g at position %lld\n", metric(g.at("worst_e")),
                static_cast<long long>(g.value("worst_e_position", std::int64_t{-1})));
  out += line;
  if (g.at("horizon").is_null()) {
    out += "accuracy horizon: none\n";
  } else {
    out += "accuracy horizon: " + std::to_string(g.at("horizon").get<std::int64_t>()) +
           (g.value("horizon_complete", false) ? " (every sampled position)" : "") + "\n";
  }
  out += "result: " + g.value("verdict", "") + "\n";
  return out;
}

}  // namespace ropecheck::gate
