// The fuzz report: JSON (schema ropecheck-fuzz-report/1, documented in fuzz/README.md), its text
// form, and the merge of shard reports. Merging needs only the JSON, so `ropecheck report merge`
// works on files written on other machines.
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

#include "fuzz/search/search.h"
#include "reference/rounding.h"

namespace ropecheck::fuzz {
namespace {

using nlohmann::ordered_json;
using reference::to_hex;

constexpr std::string_view kSchema = "ropecheck-fuzz-report/1";
constexpr int kWorstCount = 10;
constexpr int kViolationsPerClass = 10;
constexpr Violation kClasses[] = {Violation::status, Violation::passthrough, Violation::special_value, Violation::signed_zero,
                                  Violation::tolerance, Violation::underflow};

// JSON has no infinity: non-finite e (a pair of zero norm judged by its underflow allowance) is
// written as the string "inf".
ordered_json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}
double number_of(const ordered_json& j) {
  if (j.is_number()) return j.get<double>();
  if (j == "inf") return HUGE_VAL;
  if (j == "-inf") return -HUGE_VAL;
  return std::nan("");
}

ordered_json finding_json(const Finding& f) {
  ordered_json j;
  j["trial"] = f.trial;
  j["spec"] = f.spec;
  j["case"] = case_text(f.fuzz_case);
  j["violation"] = std::string(name(f.outcome.violation));
  j["e"] = number(f.outcome.e);
  j["tolerance"] = f.tolerance;
  j["pair"] = f.outcome.worst_pair;
  j["input"] = {to_hex(f.outcome.x), to_hex(f.outcome.y)};
  j["got"] = {to_hex(f.outcome.got_a), to_hex(f.outcome.got_b)};
  j["expected"] = {to_hex(f.outcome.expected_a), to_hex(f.outcome.expected_b)};
  j["message"] = f.outcome.message;
  j["replay"] = f.replay;
  return j;
}

int class_rank(const ordered_json& finding) {
  const std::string v = finding.at("violation").get<std::string>();
  for (int i = 0; i < 5; ++i) {
    if (v == name(kClasses[i])) return i;
  }
  return 5;
}

void sort_worst(ordered_json& worst) {
  std::vector<ordered_json> items(worst.begin(), worst.end());
  std::stable_sort(items.begin(), items.end(), [](const ordered_json& a, const ordered_json& b) {
    const double ea = number_of(a.at("e")), eb = number_of(b.at("e"));
    if (ea != eb) return ea > eb;
    return a.at("trial").get<std::int64_t>() < b.at("trial").get<std::int64_t>();
  });
  if (items.size() > static_cast<std::size_t>(kWorstCount)) items.resize(kWorstCount);
  worst = ordered_json(items);
}

void sort_violations(ordered_json& violations) {
  std::vector<ordered_json> items(violations.begin(), violations.end());
  std::stable_sort(items.begin(), items.end(), [](const ordered_json& a, const ordered_json& b) {
    if (class_rank(a) != class_rank(b)) return class_rank(a) < class_rank(b);
    return a.at("trial").get<std::int64_t>() < b.at("trial").get<std::int64_t>();
  });
  std::vector<ordered_json> kept;
  int per_class[kViolationClasses] = {};
  for (const ordered_json& item : items) {
    if (per_class[class_rank(item)]++ < kViolationsPerClass) kept.push_back(item);
  }
  violations = ordered_json(kept);
}

std::string fixed(double v) {
  std::ostringstream out;
  out.precision(6);
  out << v;
  return out.str();
}

}  // namespace

ordered_json to_json(const FuzzReport& report) {
  ordered_json j;
  j["schema"] = std::string(kSchema);
  j["implementation"] = report.implementation;
  j["selector"] = report.selector;
  j["seed"] = report.seed;
  j["shards"] = ordered_json::array({{{"index", report.shard_index}, {"count", report.shard_count}}});
  j["trials"] = report.trials_run;
  j["trials_unsupported"] = report.trials_unsupported;
  j["cases"] = report.cases;
  j["stopped_by_time"] = report.stopped_by_time;
  ordered_json specs = ordered_json::array();
  for (std::size_t i = 0; i < report.specs.size(); ++i) {
    specs.push_back({{"spec", report.specs[i]}, {"tolerance", report.tolerances[i]},
                     {"tolerance_source", report.tolerance_sources[i]}});
  }
  j["specs"] = specs;
  ordered_json counts;
  for (Violation v : kClasses) counts[std::string(name(v))] = report.violation_counts[static_cast<int>(v)];
  j["violation_counts"] = counts;
  ordered_json worst = ordered_json::array();
  for (const Finding& f : report.worst) worst.push_back(finding_json(f));
  j["worst"] = worst;
  ordered_json violations = ordered_json::array();
  for (const Finding& f : report.violations) violations.push_back(finding_json(f));
  j["violations"] = violations;
  j["verdict"] = report.violations.empty() ? "pass" : "fail";
  return j;
}

int verdict_status(const ordered_json& report) { return report.value("verdict", "fail") == "pass" ? 0 : 1; }

std::string to_text(const ordered_json& report) {
  std::ostringstream out;
  std::string shards;
  for (const auto& s : report.at("shards")) {
    shards += (shards.empty() ? "" : ",") + std::to_string(s.at("index").get<int>()) + "/" +
              std::to_string(s.at("count").get<int>());
  }
  out << "ropecheck fuzz: " << report.at("implementation").get<std::string>() << " ("
      << report.at("selector").get<std::string>() << "), seed " << report.at("seed").get<std::uint64_t>() << ", shard "
      << shards << ": " << report.at("trials").get<std::int64_t>() << " trials ("
      << report.at("trials_unsupported").get<std::int64_t>() << " on unsupported specs), "
      << report.at("cases").get<std::int64_t>() << " cases over " << report.at("specs").size() << " specs"
      << (report.at("stopped_by_time").get<bool>() ? ", stopped by --seconds" : "") << "\n";
  out << "worst cases (largest e first; e = max(|a-A|,|b-B|)/(u*rho), judge/pair_rule.h):\n";
  int rank = 0;
  for (const auto& f : report.at("worst")) {
    out << "  " << ++rank << ". e = " << fixed(number_of(f.at("e"))) << " (tolerance " << fixed(f.at("tolerance").get<double>())
        << "), trial " << f.at("trial").get<std::int64_t>() << ", pair " << f.at("pair").get<int>() << ", "
        << f.at("case").get<std::string>() << "\n"
        << "     spec " << f.at("spec").get<std::string>() << "\n"
        << "     input (" << f.at("input")[0].get<std::string>() << ", " << f.at("input")[1].get<std::string>() << ") got ("
        << f.at("got")[0].get<std::string>() << ", " << f.at("got")[1].get<std::string>() << ") expected ("
        << f.at("expected")[0].get<std::string>() << ", " << f.at("expected")[1].get<std::string>() << ")\n"
        << "     replay: " << f.at("replay").get<std::string>() << "\n";
  }
  if (report.at("violations").empty()) {
    out << "violations: none\n";
  } else {
    out << "violations (each shrunk to a minimal case; seed " << report.at("seed").get<std::uint64_t>() << "):\n";
    for (const auto& f : report.at("violations")) {
      out << "  [" << f.at("violation").get<std::string>() << "] trial " << f.at("trial").get<std::int64_t>() << ": "
          << f.at("message").get<std::string>() << "\n"
          << "     spec " << f.at("spec").get<std::string>() << "\n"
          << "     replay: " << f.at("replay").get<std::string>() << "\n";
    }
  }
  out << "cases violating, by class:";
  for (const auto& [key, value] : report.at("violation_counts").items()) out << " " << key << " " << value.get<std::int64_t>();
  out << "\nverdict: " << report.at("verdict").get<std::string>() << "\n";
  return out.str();
}

ordered_json merge_reports(const std::vector<std::pair<std::string, ordered_json>>& reports) {
  if (reports.empty()) throw std::invalid_argument("report merge: expected at least one report");
  auto require = [](const std::string& file, const ordered_json& j, const char* field, auto check, const char* what) {
    if (!j.is_object() || !j.contains(field) || !check(j.at(field))) {
      throw std::invalid_argument(file + ": " + field + ": expected " + what);
    }
  };
  const auto is_string = [](const ordered_json& v) { return v.is_string(); };
  const auto is_count = [](const ordered_json& v) { return v.is_number_integer() && v.get<std::int64_t>() >= 0; };
  const auto is_array = [](const ordered_json& v) { return v.is_array(); };
  ordered_json merged;
  std::set<std::pair<int, int>> shards_seen;
  for (const auto& [file, j] : reports) {
    if (!j.is_object() || j.value("schema", "") != kSchema) {
      throw std::invalid_argument(file + ": schema: expected \"" + std::string(kSchema) + "\"");
    }
    require(file, j, "implementation", is_string, "a string");
    require(file, j, "selector", is_string, "a string");
    require(file, j, "seed", [](const ordered_json& v) { return v.is_number_unsigned(); }, "a non-negative integer");
    for (const char* field : {"trials", "trials_unsupported", "cases"}) require(file, j, field, is_count, "a count");
    for (const char* field : {"shards", "specs", "worst", "violations"}) require(file, j, field, is_array, "an array");
    require(file, j, "violation_counts", [](const ordered_json& v) { return v.is_object(); }, "an object");
    require(file, j, "stopped_by_time", [](const ordered_json& v) { return v.is_boolean(); }, "true or false");
    try {
      for (const auto& f : j.at("worst")) {
        (void)number_of(f.at("e"));
        (void)f.at("trial").get<std::int64_t>();
        (void)f.at("violation").get<std::string>();
      }
      for (const auto& f : j.at("violations")) {
        (void)f.at("trial").get<std::int64_t>();
        (void)f.at("violation").get<std::string>();
      }
      for (const auto& s : j.at("shards")) {
        if (!shards_seen.insert({s.at("index").get<int>(), s.at("count").get<int>()}).second) {
          throw std::invalid_argument(file + ": shards: expected each shard once, got shard " +
                                      std::to_string(s.at("index").get<int>()) + "/" +
                                      std::to_string(s.at("count").get<int>()) + " again");
        }
      }
    } catch (const ordered_json::exception&) {
      throw std::invalid_argument(file + ": worst/violations/shards: expected the entries ropecheck fuzz writes");
    }
    if (merged.is_null()) {
      merged = j;
      continue;
    }
    for (const char* field : {"implementation", "selector", "seed", "specs"}) {
      if (j.at(field) != merged.at(field)) {
        throw std::invalid_argument(file + ": " + field + ": expected the same as " + reports.front().first +
                                    " (reports of one search), got a different one");
      }
    }
    for (const auto& s : j.at("shards")) merged["shards"].push_back(s);
    for (const char* field : {"trials", "trials_unsupported", "cases"}) {
      merged[field] = merged.at(field).get<std::int64_t>() + j.at(field).get<std::int64_t>();
    }
    merged["stopped_by_time"] = merged.at("stopped_by_time").get<bool>() || j.at("stopped_by_time").get<bool>();
    for (const auto& [key, value] : j.at("violation_counts").items()) {
      merged["violation_counts"][key] = merged["violation_counts"].value(key, std::int64_t{0}) + value.get<std::int64_t>();
    }
    for (const auto& f : j.at("worst")) merged["worst"].push_back(f);
    for (const auto& f : j.at("violations")) merged["violations"].push_back(f);
  }
  std::vector<ordered_json> shards(merged["shards"].begin(), merged["shards"].end());
  std::sort(shards.begin(), shards.end(), [](const ordered_json& a, const ordered_json& b) {
    return std::make_pair(a.at("count").get<int>(), a.at("index").get<int>()) <
           std::make_pair(b.at("count").get<int>(), b.at("index").get<int>());
  });
  merged["shards"] = ordered_json(shards);
  sort_worst(merged["worst"]);
  sort_violations(merged["violations"]);
  merged["verdict"] = merged["violations"].empty() ? "pass" : "fail";
  return merged;
}

}  // namespace ropecheck::fuzz
