// The fuzz report: JSON (schema ropecheck-fuzz-report/1, documented in fuzz/README.md), its text
// form, and the merge of shard reports. Merging needs only the JSON, so `ropecheck report merge`
// works on files written on other machines.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
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
  j["model"] = report.model;
  j["seed"] = report.seed;
  j["shards"] = ordered_json::array({{{"index", report.shard_index}, {"count", report.shard_count}}});
  j["trials_requested"] = report.trials_requested ? ordered_json(*report.trials_requested) : ordered_json(nullptr);
  j["strict_zeros"] = report.strict_zeros;
  j["trials"] = report.trials_run;
  j["trials_unsupported"] = report.trials_unsupported;
  j["cases"] = report.cases;
  j["stopped_by_time"] = report.stopped_by_time;
  j["stopped_reason"] = report.stopped_reason;
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
  j["verdict"] = fuzz_verdict(j);
  return j;
}

std::int64_t judged_trials(const ordered_json& report) {
  return report.value("trials", std::int64_t{0}) - report.value("trials_unsupported", std::int64_t{0});
}

// The one rule of a fuzz report, as of every gate report (gate/report.cpp Report::decide): a
// violation fails it, and so does nothing judged (every trial's spec unsupported).
std::string fuzz_verdict(const ordered_json& report) {
  return report.at("violations").empty() && judged_trials(report) > 0 ? "pass" : "fail";
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
  if (report.contains("model") && report.at("model").is_string()) {
    out << "claim: model " << report.at("model").get<std::string>() << " (--model; judge/README.md \"Models\")\n";
  }
  if (report.contains("stopped_reason") && !report.at("stopped_reason").get<std::string>().empty()) {
    out << "stopped early: " << report.at("stopped_reason").get<std::string>() << "\n";
  }
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
  if (judged_trials(report) <= 0) out << "\nnothing was judged: every trial's spec was unsupported";
  out << "\n";
  // Why, before the verdict as in every summary: one line per violating spec explained.
  if (report.contains("explanations")) {
    for (const auto& x : report.at("explanations")) {
      out << "explanation (" << x.at("spec").get<std::string>() << "): " << x.at("explanation").get<std::string>() << "\n";
    }
  }
  out << "verdict: " << report.at("verdict").get<std::string>() << "\n";
  return out.str();
}

namespace {

// A JSON integer as int64 in [min, max] (nlohmann's get<std::int64_t> wraps 2^63 and above).
std::optional<std::int64_t> integer_in(const ordered_json& v, std::int64_t min, std::int64_t max) {
  std::int64_t out = 0;
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    out = static_cast<std::int64_t>(v.get<std::uint64_t>());
  } else if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
  } else {
    return std::nullopt;
  }
  if (out < min || out > max) return std::nullopt;
  return out;
}

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

// Checks a report against everything merge_reports and to_text read, so that neither can fail on
// it later (after --out is written): one InputError-style std::invalid_argument naming the field.
void check_report(const std::string& file, const ordered_json& j) {
  auto bad = [&](const std::string& field, const std::string& what) {
    throw std::invalid_argument(file + ": " + field + ": expected " + what);
  };
  if (!j.is_object() || !j.contains("schema") || !j.at("schema").is_string() || j.at("schema").get<std::string>() != kSchema) {
    bad("schema", "\"" + std::string(kSchema) + "\"");
  }
  auto field = [&](const char* name) -> const ordered_json& {
    if (!j.contains(name)) bad(name, "a value, got none");
    return j.at(name);
  };
  for (const char* name : {"implementation", "selector"}) {
    if (!field(name).is_string()) bad(name, "a string");
  }
  if (!field("seed").is_number_unsigned()) bad("seed", "a non-negative integer");
  for (const char* name : {"trials", "trials_unsupported", "cases"}) {
    if (!integer_in(field(name), 0, kMaxInt64)) bad(name, "a count (an integer from 0 to 2^63 - 1)");
  }
  for (const char* name : {"shards", "specs", "worst", "violations"}) {
    if (!field(name).is_array()) bad(name, "an array");
  }
  if (!field("stopped_by_time").is_boolean()) bad("stopped_by_time", "true or false");
  if (j.contains("model") && !j.at("model").is_string()) bad("model", "a string");
  if (j.contains("stopped_reason") && !j.at("stopped_reason").is_string()) bad("stopped_reason", "a string");
  if (!field("violation_counts").is_object()) bad("violation_counts", "an object");
  for (const auto& [key, value] : j.at("violation_counts").items()) {
    if (!integer_in(value, 0, kMaxInt64)) bad("violation_counts." + key, "a count (an integer from 0 to 2^63 - 1)");
  }
  const auto& shards = j.at("shards");
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const std::string where = "shards[" + std::to_string(i) + "]";
    const auto& s = shards[i];
    const auto count = s.is_object() && s.contains("count") ? integer_in(s.at("count"), 1, kMaxInt) : std::nullopt;
    const auto index = count && s.contains("index") ? integer_in(s.at("index"), 0, *count - 1) : std::nullopt;
    if (!index) bad(where, "{\"index\": K, \"count\": N} with 0 <= K < N");
  }
  auto check_finding = [&](const std::string& where, const ordered_json& f, bool worst) {
    auto text = [&](const char* name) {
      if (!f.contains(name) || !f.at(name).is_string()) bad(where + "." + name, "a string");
    };
    if (!f.is_object()) bad(where, "an object");
    if (!f.contains("trial") || !integer_in(f.at("trial"), 0, kMaxInt64)) bad(where + ".trial", "an integer >= 0");
    for (const char* name : {"violation", "spec", "replay"}) text(name);
    if (!worst) {
      text("message");
      return;
    }
    text("case");
    if (!f.contains("e") || !(f.at("e").is_number() || f.at("e").is_string())) bad(where + ".e", "a number or \"inf\"");
    if (!f.contains("tolerance") || !f.at("tolerance").is_number()) bad(where + ".tolerance", "a number");
    if (!f.contains("pair") || !integer_in(f.at("pair"), -1, kMaxInt)) bad(where + ".pair", "an integer >= -1");
    for (const char* name : {"input", "got", "expected"}) {
      const bool pair = f.contains(name) && f.at(name).is_array() && f.at(name).size() == 2 && f.at(name)[0].is_string() &&
                        f.at(name)[1].is_string();
      if (!pair) bad(where + "." + name, "two hex-float strings");
    }
  };
  for (std::size_t i = 0; i < j.at("worst").size(); ++i) check_finding("worst[" + std::to_string(i) + "]", j.at("worst")[i], true);
  if (j.contains("explanations")) {
    if (!j.at("explanations").is_array()) bad("explanations", "an array");
    for (std::size_t i = 0; i < j.at("explanations").size(); ++i) {
      const auto& x = j.at("explanations")[i];
      const bool ok = x.is_object() && x.contains("spec") && x.at("spec").is_string() && x.contains("explanation") &&
                      x.at("explanation").is_string();
      if (!ok) bad("explanations[" + std::to_string(i) + "]", "{\"spec\": TEXT, \"explanation\": TEXT}");
    }
  }
  for (std::size_t i = 0; i < j.at("violations").size(); ++i) {
    check_finding("violations[" + std::to_string(i) + "]", j.at("violations")[i], false);
  }
}

// a + b for counts, refusing a total past 2^63 - 1 (it would wrap negative).
ordered_json checked_sum(const std::string& file, const std::string& field, const ordered_json& a, const ordered_json& b) {
  std::int64_t total = 0;
  if (__builtin_add_overflow(*integer_in(a, 0, kMaxInt64), *integer_in(b, 0, kMaxInt64), &total)) {
    throw std::invalid_argument(file + ": " + field + ": expected a total below 2^63 with the other reports, got more");
  }
  return total;
}

}  // namespace

ordered_json merge_reports(const std::vector<std::pair<std::string, ordered_json>>& reports) {
  if (reports.empty()) throw std::invalid_argument("report merge: expected at least one report");
  ordered_json merged;
  std::set<std::pair<std::int64_t, std::int64_t>> shards_seen;
  for (const auto& [file, j] : reports) {
    check_report(file, j);
    for (const auto& s : j.at("shards")) {
      const std::int64_t index = *integer_in(s.at("index"), 0, kMaxInt), count = *integer_in(s.at("count"), 1, kMaxInt);
      if (!shards_seen.insert({index, count}).second) {
        throw std::invalid_argument(file + ": shards: expected each shard once, got shard " + std::to_string(index) + "/" +
                                    std::to_string(count) + " again");
      }
    }
    if (merged.is_null()) {
      merged = j;
      if (!merged.contains("stopped_reason")) merged["stopped_reason"] = "";
      continue;
    }
    for (const char* field : {"implementation", "selector", "model", "seed", "specs", "trials_requested", "strict_zeros"}) {
      if (j.value(field, ordered_json(nullptr)) != merged.value(field, ordered_json(nullptr))) {
        throw std::invalid_argument(file + ": " + field + ": expected the same as " + reports.front().first +
                                    " (reports of one search), got a different one");
      }
    }
    for (const auto& s : j.at("shards")) merged["shards"].push_back(s);
    for (const char* field : {"trials", "trials_unsupported", "cases"}) {
      merged[field] = checked_sum(file, field, merged.at(field), j.at(field));
    }
    merged["stopped_by_time"] = merged.at("stopped_by_time").get<bool>() || j.at("stopped_by_time").get<bool>();
    if (merged.at("stopped_reason").get<std::string>().empty() && j.contains("stopped_reason")) {
      merged["stopped_reason"] = j.at("stopped_reason");
    }
    for (const auto& [key, value] : j.at("violation_counts").items()) {
      merged["violation_counts"][key] = checked_sum(file, "violation_counts." + key,
                                                    merged["violation_counts"].value(key, ordered_json(0)), value);
    }
    for (const auto& f : j.at("worst")) merged["worst"].push_back(f);
    for (const auto& f : j.at("violations")) merged["violations"].push_back(f);
    // Each spec explained once: shards that met the same violating spec explain it alike.
    if (j.contains("explanations")) {
      if (!merged.contains("explanations")) merged["explanations"] = ordered_json::array();
      for (const auto& x : j.at("explanations")) {
        const bool seen = std::any_of(merged["explanations"].begin(), merged["explanations"].end(),
                                      [&](const ordered_json& y) { return y.at("spec") == x.at("spec"); });
        if (!seen) merged["explanations"].push_back(x);
      }
    }
  }
  std::vector<ordered_json> shards(merged["shards"].begin(), merged["shards"].end());
  std::sort(shards.begin(), shards.end(), [](const ordered_json& a, const ordered_json& b) {
    return std::make_pair(a.at("count").get<std::int64_t>(), a.at("index").get<std::int64_t>()) <
           std::make_pair(b.at("count").get<std::int64_t>(), b.at("index").get<std::int64_t>());
  });
  // The shards of one search, all of them: K/N for every K < N, one N (0/2 alone, or 0/2 with 0/3,
  // would add up to no run of the search).
  const std::int64_t count = shards.front().at("count").get<std::int64_t>();
  std::set<std::int64_t> indices;
  for (const ordered_json& s : shards) {
    if (s.at("count").get<std::int64_t>() != count) {
      throw std::invalid_argument("report merge: shards: expected shards of one split (every K/" + std::to_string(count) +
                                  "), got " + std::to_string(s.at("index").get<std::int64_t>()) + "/" +
                                  std::to_string(s.at("count").get<std::int64_t>()));
    }
    indices.insert(s.at("index").get<std::int64_t>());
  }
  for (std::int64_t k = 0; k < count; ++k) {
    if (!indices.count(k)) {
      throw std::invalid_argument("report merge: shards: expected every shard K/" + std::to_string(count) + ", 0 <= K < " +
                                  std::to_string(count) + ", got no shard " + std::to_string(k) + "/" + std::to_string(count));
    }
  }
  merged["shards"] = ordered_json(shards);
  sort_worst(merged["worst"]);
  sort_violations(merged["violations"]);
  merged["verdict"] = fuzz_verdict(merged);
  return merged;
}

}  // namespace ropecheck::fuzz
