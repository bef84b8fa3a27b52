#include "gate/merge.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "base/errors.h"
#include "gate/report.h"
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

// A listed case's severity as judge/group.cpp ranks it: a pair judged by its value (a tolerance
// failure; a signed zero of finite inputs) by its measured e, or ulp under an ulp tolerance; any
// other case (special values, pass-through, a whole test) infinitely severe. NaN cannot be measured
// (judge/pair_rule.cpp); read as infinite, it cannot break the ordering.
double raw_severity(const ojson& c, bool e_kind) {
  const std::string kind = c.value("kind", "");
  const bool measured = kind == "tolerance" || (kind == "signed_zero" && c.value("domain", "") != "special_input");
  const double v = measured ? metric(c.at(e_kind ? "e" : "ulp")) : std::numeric_limits<double>::infinity();
  return std::isnan(v) ? std::numeric_limits<double>::infinity() : v;
}

// The position a diagnosis's "raised" explanation names ("... at position N (first failing
// position)", judge/inference.cpp FailedCalls::explain); -1 when it names none.
std::int64_t raised_position(const ojson& diagnosis) {
  const std::string text = diagnosis.contains("explanation") && diagnosis.at("explanation").is_string()
                               ? diagnosis.at("explanation").get<std::string>()
                               : std::string();
  const std::string tail = " (first failing position)";
  const std::size_t at = text.rfind(" at position ");
  if (at == std::string::npos || text.size() < tail.size() || text.compare(text.size() - tail.size(), tail.size(), tail) != 0) return -1;
  const std::string digits = text.substr(at + 13, text.size() - tail.size() - at - 13);
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

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

// The figures of a report against one another, as judge/group.cpp computes them from the same pairs:
// the verdict from the test counts, a failed test wherever a counted failure is, each position
// failing exactly where an accuracy failure is, and the worst e (ulp, under an ulp tolerance) the
// largest of the points'. A report with a figure edited (a worst e of 1e300 beside a pass) is
// refused, by the field.
void check_figures(const std::string& file, const ojson& g) {
  auto number = [&](const char* key) { return g.at(key).get<std::int64_t>(); };
  auto bad = [&](const std::string& where, const std::string& what) {
    throw InputError(file + ": groups[0]." + where + ": expected " + what);
  };
  const std::int64_t tests = number("tests"), failed = number("tests_failed"), skipped = number("tests_skipped");
  if (failed + skipped > tests)
    bad("tests", "at least tests_failed + tests_skipped = " + std::to_string(failed + skipped) + ", got " + std::to_string(tests));
  const std::string verdict(judge::name(judge::verdict_of(tests, failed, skipped)));
  if (g.at("verdict") != verdict) {
    bad("verdict", "\"" + verdict + "\" (tests " + std::to_string(tests) + ", tests_failed " + std::to_string(failed) + ", tests_skipped " +
                       std::to_string(skipped) + "), got " + g.at("verdict").dump());
  }
  const std::int64_t pair_failures =
      number("ordinary_failed") + number("special_failed") + number("signed_zero_failed") + number("edge_failed");
  if (number("pairs_failed") != pair_failures) {
    bad("pairs_failed", "ordinary_failed + special_failed + signed_zero_failed + edge_failed = " + std::to_string(pair_failures) +
                            ", got " + g.at("pairs_failed").dump());
  }
  if (number("beyond_required_failed") > number("ordinary_failed")) bad("beyond_required_failed", "at most ordinary_failed");
  const std::int64_t counted =
      pair_failures - number("beyond_required_failed") + number("passthrough_failed") + number("whole_tests_failed");
  if (counted > 0 && failed == 0) {
    bad("tests_failed", "at least 1: the report counts " + std::to_string(counted) + " failure(s) that fail a test, got 0");
  }
  const ojson& points = g.at("points");
  bool any_failing = false;
  double largest = 0;
  for (const ojson& p : points) {
    any_failing = any_failing || !p.at(2).get<bool>();
    const double e = metric(p.at(1));
    if (e > largest) largest = e;  // NaN is never measured (judge/pair_rule.cpp): it raises nothing
  }
  if (any_failing != (number("ordinary_failed") > 0)) {
    bad("points", std::string(any_failing ? "no failing position" : "a failing position") + " as ordinary_failed is " +
                      g.at("ordinary_failed").dump() + ", got " + (any_failing ? "one" : "none"));
  }
  const bool e_kind = g.at("tolerance").at("kind") == "e";
  const char* worst_key = e_kind ? "worst_e" : "worst_ulp";
  const double worst = metric(g.at(worst_key));
  if (!points.empty() && !(worst == largest)) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", largest);
    bad(worst_key,
        std::string("the largest ") + (e_kind ? "e" : "ulp") + " of groups[0].points, " + text + ", got " + g.at(worst_key).dump());
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

// A listed case with what ranks it among the shards' (judge/group.cpp GroupTally::finish).
struct Ranked {
  double severity;
  std::int64_t test_id;
  std::size_t index;  // in its report's list: the order the cases of one test were recorded in
  const ojson* c;
};

// What the shards' groups add up to, as judge/group.cpp computes it over all the calls: counts add
// up, worst values are maxima, points and test lists are joined, the listed cases await ranking.
struct ShardSums {
  std::map<std::string, std::int64_t> totals;
  double worst_e = 0, worst_ulp = 0, worst_abs = 0, worst_margin = 0;
  std::int64_t worst_e_position = -1, max_position = -1;
  std::vector<ojson> points, failed, skipped;
  std::vector<Ranked> lists[2];  // accuracy cases, edge cases
};

ShardSums sum_shards(const Reports& reports, bool e_kind) {
  ShardSums s;
  for (const auto& [file, r] : reports) {
    const ojson& g = r.at("groups").at(0);
    for (const char* key : kSummedCounts) s.totals[key] += count(file, g, key);
    // The first pair of the largest e in the order of the calls, i.e. of positions (judge/group.cpp).
    const std::int64_t position = g.at("worst_e_position").get<std::int64_t>();
    const double e = metric(g.at("worst_e"));
    if (position >= 0 && (s.worst_e_position < 0 || e > s.worst_e || (e == s.worst_e && position < s.worst_e_position))) {
      s.worst_e = e;
      s.worst_e_position = position;
    }
    s.worst_ulp = std::max(s.worst_ulp, metric(g.at("worst_ulp")));
    s.worst_abs = std::max(s.worst_abs, metric(g.at("worst_abs")));
    s.worst_margin = std::max(s.worst_margin, metric(g.at("worst_margin")));
    s.max_position = std::max(s.max_position, g.at("max_position").get<std::int64_t>());
    for (const ojson& p : g.at("points")) s.points.push_back(p);
    for (const ojson& id : g.at("failed_tests")) s.failed.push_back(id);
    for (const ojson& t : g.at("skipped_tests")) s.skipped.push_back(t);
    std::set<std::pair<int, std::int64_t>> seen;  // (list, test) whose worst case came
    const ojson& cases = g.at("worst_cases");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const ojson& c = cases[i];
      const int list = c.value("accuracy", false) ? 0 : 1;
      const std::int64_t test = c.at("test_id").get<std::int64_t>();
      double severity = raw_severity(c, e_kind);
      if (!seen.insert({list, test}).second) severity = judge::second_severity(severity);
      s.lists[list].push_back({severity, test, i, &c});
    }
  }
  std::sort(s.points.begin(), s.points.end(), [](const ojson& l, const ojson& r) {
    const std::int64_t a = l.at(0).get<std::int64_t>(), b = r.at(0).get<std::int64_t>();
    return a < b || (a == b && metric(l.at(1)) < metric(r.at(1)));
  });
  std::sort(s.failed.begin(), s.failed.end());
  std::stable_sort(s.skipped.begin(), s.skipped.end(),
                   [](const ojson& l, const ojson& r) { return l.at("id").get<std::int64_t>() < r.at("id").get<std::int64_t>(); });
  return s;
}

// Each list: the `keep` most severe, ties in recording order (by call, then within it).
ojson ranked_cases(std::vector<Ranked> (&lists)[2], std::size_t keep) {
  ojson cases = ojson::array();
  for (std::vector<Ranked>& list : lists) {
    std::sort(list.begin(), list.end(), [](const Ranked& a, const Ranked& b) {
      if (a.severity != b.severity) return a.severity > b.severity;
      return a.test_id != b.test_id ? a.test_id < b.test_id : a.index < b.index;
    });
    for (std::size_t i = 0; i < list.size() && i < keep; ++i) cases.push_back(*list[i].c);
  }
  return cases;
}

// The diagnosis is fitted on the same sample in every shard that needs one (runner/sweep.h), with
// the verdict it was given: a shard of the merged verdict's gives it; a failed call's explanation
// is the one at the lowest position. Null when no shard of that verdict has one.
const ojson* merged_diagnosis(const Reports& reports, judge::Verdict verdict) {
  const ojson* diagnosis = nullptr;
  std::int64_t diagnosis_position = 0;
  for (const auto& [file, r] : reports) {
    const ojson& g = r.at("groups").at(0);
    if (!g.contains("diagnosis") || (g.at("verdict") == "fail") != (verdict == judge::Verdict::fail)) continue;
    const ojson& d = g.at("diagnosis");
    const bool raised = d.value("explanation_kind", ojson()) == "raised";
    const std::int64_t at = raised ? raised_position(d) : std::numeric_limits<std::int64_t>::max();
    if (!diagnosis || at < diagnosis_position) {
      diagnosis = &d;
      diagnosis_position = at;
    }
  }
  return diagnosis;
}

// The merged group of verdict `verdict`: the shards' sums finished by the judge's rules (judge/group.h), in the order
// gate/report_json.cpp writes a group.
ojson merged_group(const Reports& reports, ShardSums& s, judge::Verdict verdict) {
  const ojson& first = reports.front().second;
  const ojson& first_group = first.at("groups").at(0);
  std::vector<std::int64_t> tested;
  std::optional<std::int64_t> first_failing;
  for (const ojson& p : s.points) {
    tested.push_back(p.at(0).get<std::int64_t>());
    if (!first_failing && !p.at(2).get<bool>()) first_failing = tested.back();
  }
  const std::optional<std::int64_t> horizon = judge::horizon_of(tested, first_failing);
  const bool horizon_complete = !first_failing && horizon.has_value();
  const ojson require = first.value("options", ojson::object()).value("require_horizon", ojson());
  const std::string verdict_reason =
      judge::require_horizon_reason(verdict, s.max_position, horizon_complete,
                                    require.is_number_integer() ? std::optional<std::int64_t>(require.get<std::int64_t>()) : std::nullopt);
  const auto keep = static_cast<std::size_t>(std::max<std::int64_t>(0, first.at("sweep").at("worst_cases").get<std::int64_t>()));
  const ojson* diagnosis = merged_diagnosis(reports, verdict);

  ojson group;
  for (const auto& [key, value] : first_group.items()) {
    if (key == "diagnosis") continue;
    if (key == "failed_tests" && diagnosis) group["diagnosis"] = *diagnosis;
    group[key] = value;
  }
  for (const char* key : kSummedCounts) group[key] = s.totals[key];
  group["verdict"] = std::string(judge::name(verdict));
  group["worst_e"] = as_metric(s.worst_e);
  group["worst_e_position"] = s.worst_e_position;
  group["worst_ulp"] = as_metric(s.worst_ulp);
  group["worst_abs"] = as_metric(s.worst_abs);
  group["max_position"] = s.max_position;
  group["horizon"] = horizon ? ojson(*horizon) : ojson(nullptr);
  group["horizon_complete"] = horizon_complete;
  group["verdict_reason"] = verdict_reason;
  group["worst_margin"] = as_metric(s.worst_margin);
  group["failed_tests"] = s.failed;
  group["skipped_tests"] = s.skipped;
  group["worst_cases"] = ranked_cases(s.lists, keep);
  group["points"] = s.points;
  return group;
}

// The report of the merged group as gate/report.cpp Report::decide would give it.
ojson merged_report(const ojson& first, ojson group, judge::Verdict verdict) {
  ojson merged = first;
  merged["verdict"] = verdict == judge::Verdict::pass ? "pass" : "fail";
  merged["summary"]["groups_failed"] = verdict == judge::Verdict::fail ? 1 : 0;
  for (const char* key : {"tests", "tests_failed", "tests_skipped"}) merged["summary"][key] = group.at(key);
  merged["groups"] = ojson::array({std::move(group)});
  const std::string nothing_judged(judge::kNothingJudgedNote);
  ojson notes = ojson::array();
  for (const ojson& n : first.value("notes", ojson::array())) {
    if (n != nothing_judged) notes.push_back(n);
  }
  if (verdict == judge::Verdict::skip) notes.push_back(nothing_judged);
  merged["notes"] = notes;
  merged["sweep"]["shard"] = {{"index", 0}, {"count", 1}};
  return merged;
}

}  // namespace

ojson merge_sweep_reports(const Reports& reports) {
  if (reports.empty()) throw InputError("report merge: expected at least one report");
  for (const auto& [file, r] : reports) {
    if (!is_sweep_report(r))
      throw InputError(file + ": schema: expected a ropecheck sweep --json report (ropecheck-report/1, command sweep)");
    check_sweep_report(file, r);
  }
  const std::set<std::int64_t> shards = check_one_sweep(reports);
  const ojson& first = reports.front().second;
  const Schedule schedule = schedule_of(reports.front().first, first);
  for (const auto& [file, r] : reports) {
    check_schedule(file, r, schedule);
    check_figures(file, r.at("groups").at(0));
  }
  check_every_shard(shards, first.at("sweep").at("shard").at("count").get<std::int64_t>());
  const bool e_kind = first.at("groups").at(0).at("tolerance").value("kind", "e") == "e";
  ShardSums sums = sum_shards(reports, e_kind);
  const judge::Verdict verdict = judge::verdict_of(sums.totals["tests"], sums.totals["tests_failed"], sums.totals["tests_skipped"]);
  return merged_report(first, merged_group(reports, sums, verdict), verdict);
}

std::string sweep_text(const ojson& report) {
  const ojson& g = report.at("groups").at(0);
  char line[512];
  std::string out = "implementation: " + report.value("implementation", "") + "\n";
  out += "claim: model " + report.value("model", "") + "\n";
  out += "spec: " + g.value("spec", "") + "\n";
  std::snprintf(line, sizeof line, "samples: %zu positions in [0, %lld]\n", g.at("points").size(),
                static_cast<long long>(report.at("sweep").value("max_position", std::int64_t{0})));
  out += line;
  const double margin = g.contains("worst_margin") ? metric(g.at("worst_margin")) : 0;
  std::snprintf(line, sizeof line, "worst e: %.6g at position %lld (%s)\n", metric(g.at("worst_e")),
                static_cast<long long>(g.value("worst_e_position", std::int64_t{-1})), margin_text(margin).c_str());
  out += line;
  if (g.at("horizon").is_null()) {
    out += "accuracy horizon: none\n";
  } else {
    out += "accuracy horizon: " + std::to_string(g.at("horizon").get<std::int64_t>()) +
           (g.value("horizon_complete", false) ? " (every sampled position)" : "") + "\n";
  }
  if (g.contains("diagnosis") && g.at("diagnosis").is_object()) {
    const ojson& d = g.at("diagnosis");
    if (d.contains("explanation") && d.at("explanation").is_string()) {
      out += "explanation: " + d.at("explanation").get<std::string>() + "\n";
    }
  }
  out += "result: " + g.value("verdict", "") + "\n";
  return out;
}

}  // namespace ropecheck::gate
