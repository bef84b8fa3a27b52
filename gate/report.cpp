#include "gate/report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "judge/errors.h"
#include "reference/rounding.h"
#include "tensorio/readers.h"

#ifndef ROPECHECK_VERSION
#define ROPECHECK_VERSION "0"
#endif

namespace ropecheck::gate {
namespace {

using ojson = nlohmann::ordered_json;

// JSON has no Inf/NaN: such metrics are written as the strings "inf" / "nan".
ojson number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

std::string fixed(double v, int digits = 3) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[64];
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) {
    std::snprintf(buffer, sizeof buffer, "%.*e", digits - 1, v);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  }
  return buffer;
}

std::string metric_name(const GroupResult& g) { return g.tolerance.kind == Tolerance::Kind::e ? "e" : "ulp"; }

std::string describe(const Case& c) {
  std::ostringstream s;
  s << c.suite << " test " << c.test_id << " [" << c.kind << "]";
  if (!c.quantity.empty()) {
    s << ": " << c.message << "; expected " << reference::to_hex(c.expected_a) << " got " << reference::to_hex(c.got_a);
    if (c.kind == "tolerance") s << " (|got - expected| = " << reference::to_hex(c.abs) << ", unit " << reference::to_hex(c.unit) << ")";
    return s.str();
  }
  if (c.dim >= 0) {
    s << " token " << c.token << " head " << c.head << " dims (" << c.dim;
    if (c.second_dim >= 0) s << ", " << c.second_dim;
    s << ") position " << c.position;
  }
  s << ": " << c.message;
  if (c.dim >= 0 && c.kind != "passthrough") {
    s << "; input (" << reference::to_hex(c.input_x) << ", " << reference::to_hex(c.input_y) << ") expected ("
      << reference::to_hex(c.expected_a) << ", " << reference::to_hex(c.expected_b) << ") got ("
      << reference::to_hex(c.got_a) << ", " << reference::to_hex(c.got_b) << ")";
  }
  return s.str();
}

std::vector<std::int64_t> failed_ids(const GroupResult& g) {
  std::vector<std::int64_t> ids;
  for (const TestOutcome& o : g.outcomes) {
    if (o.status == "fail") ids.push_back(o.id);
  }
  return ids;
}

std::string join_ids(const std::vector<std::int64_t>& ids, std::size_t limit = 20) {
  std::string s;
  for (std::size_t i = 0; i < ids.size() && i < limit; ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > limit) s += ", ... (" + std::to_string(ids.size()) + " in all)";
  return s;
}

std::string group_name(const GroupResult& g) { return g.suite + "#" + std::to_string(g.index); }

// The HTML anchor of a group: its name without the '#', which a URL fragment may not contain
// (RFC 3986 §3.5).
std::string group_anchor(const GroupResult& g) { return "g-" + g.suite + "-" + std::to_string(g.index); }

// An attention group's four metric cells (score e, its bound, output e and its row's bound at the
// output closest to its bound), "-" for what the candidate did not give.
struct AttentionCells {
  std::string score_e = "-", score_tol = "-", output_e = "-", output_tol = "-", output_range = "-";
};
AttentionCells attention_cells(const AttentionStats& a) {
  AttentionCells c;
  if (a.scores_checked > 0) {
    c.score_e = fixed(a.worst_score_e);
    c.score_tol = fixed(a.score_tolerance);
  }
  if (a.outputs_checked > 0) {
    c.output_e = fixed(a.worst_output_margin_e);
    c.output_tol = fixed(a.worst_output_margin_tolerance);
    c.output_range = fixed(a.output_tolerance_min) + " .. " + fixed(a.output_tolerance_max);
  }
  return c;
}

// "e <= 4", or "e <= 4 + 12*|angle|" for a bound that grows with the angle.
std::string tolerance_text(const GroupResult& g) {
  std::string t = metric_name(g) + " <= " + fixed(g.tolerance.value);
  if (g.tolerance.per_radian != 0) t += " + " + fixed(g.tolerance.per_radian) + "*|angle|";
  return t;
}

// ": 12 by --skip-flags, 3 by --max-position" (nothing when none).
std::string skipped_detail(const JudgedScope& scope) {
  std::string out;
  if (scope.skipped_by_flags > 0) out += std::to_string(scope.skipped_by_flags) + " by --skip-flags";
  if (scope.skipped_by_position > 0) {
    out += (out.empty() ? "" : ", ") + std::to_string(scope.skipped_by_position) + " by --max-position";
  }
  return out.empty() ? out : ": " + out;
}

}  // namespace

void Report::decide() {
  bool any_fail = false, any_judged = false;
  for (const GroupResult& g : groups) {
    any_fail = any_fail || g.verdict == "fail";
    any_judged = any_judged || g.verdict == "pass";
  }
  for (const PropertyResult& p : properties) {
    // An identity that found no case the implementation supports (RapidCheck gave up) is skipped.
    if (p.gave_up && !p.holds) continue;
    any_fail = any_fail || !p.holds;
    any_judged = true;
  }
  if (!any_judged && !any_fail) notes.push_back("nothing was judged: every test was skipped");
  verdict = any_fail || !any_judged ? "fail" : "pass";
}

std::string rounded_inputs_note(const GroupResult& g) {
  if (g.inputs_rounded == 0) return "";
  const std::string dtype(ropecheck::name(input_dtype_of(parse_spec(g.spec))));
  return "input: " + std::to_string(g.inputs_rounded) + " value(s) were not values of " + dtype +
         " (the spec's input dtype) and were rounded to it (to nearest, ties to even) before judging, as a " + dtype +
         " kernel receives them";
}

std::string format_horizon(const GroupResult& g) {
  if (!g.horizon) return g.max_position < 0 ? "-" : "none";
  return (g.horizon_complete ? ">=" : "") + std::to_string(*g.horizon);
}

std::string edge_summary(const GroupResult& g) {
  std::vector<std::string> parts;
  auto add = [&](std::int64_t n, const char* what) {
    if (n > 0) parts.push_back(std::to_string(n) + " " + what);
  };
  add(g.special_failed, "special-value pair(s) (NaN/Inf inputs, or NaN/Inf outputs where numbers are expected)");
  add(g.edge_failed, "near-overflow or subnormal pair(s) out of tolerance");
  add(g.signed_zero_failed, "signed zero(s) (--strict-zeros)");
  add(g.passthrough_failed, "pass-through dim(s) changed");
  add(g.whole_tests_failed, "test(s) without usable output (crash, missing, wrong size, ...)");
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

std::string format_table(const Report& r) {
  std::ostringstream s;
  s << "ropecheck " << r.command << ": " << r.implementation << " (model " << name(r.model) << ")\n";
  std::size_t width = 5;
  for (const GroupResult& g : r.groups) width = std::max(width, group_name(g).size());
  for (const GroupResult& g : r.groups) {
    if (g.attention) width = std::max(width, std::string("attention group").size());
  }
  char line[512];
  bool any_rope = false, any_attention = false;
  for (const GroupResult& g : r.groups) (g.attention ? any_attention : any_rope) = true;
  if (any_rope || !any_attention) {
    std::snprintf(line, sizeof line, "%-*s  %-6s %7s %6s %6s %11s %11s %12s %6s  %s\n", static_cast<int>(width), "group", "dtype",
                  "tests", "failed", "skip", "worst e", "worst ulp", "horizon", "edge", "verdict");
    s << line;
  }
  for (const GroupResult& g : r.groups) {
    if (g.attention) continue;
    std::snprintf(line, sizeof line, "%-*s  %-6s %7lld %6lld %6lld %11s %11s %12s %6lld  %s\n", static_cast<int>(width),
                  group_name(g).c_str(), std::string(ropecheck::name(g.dtype)).c_str(), static_cast<long long>(g.tests),
                  static_cast<long long>(g.tests_failed), static_cast<long long>(g.tests_skipped), fixed(g.worst_e).c_str(),
                  fixed(g.worst_ulp).c_str(), format_horizon(g).c_str(), static_cast<long long>(g.edge_failures()),
                  g.verdict.c_str());
    s << line;
  }
  if (any_attention) {
    // Attention groups: the worst score e against the group's score bound, and the output closest
    // to its own (per-row) bound, with that bound.
    std::snprintf(line, sizeof line, "%-*s  %-6s %7s %6s %6s %11s %10s %11s %10s  %s\n", static_cast<int>(width), "attention group",
                  "dtype", "tests", "failed", "skip", "score e", "score tol", "output e", "output tol", "verdict");
    s << line;
    for (const GroupResult& g : r.groups) {
      if (!g.attention) continue;
      const AttentionCells c = attention_cells(*g.attention);
      std::snprintf(line, sizeof line, "%-*s  %-6s %7lld %6lld %6lld %11s %10s %11s %10s  %s\n", static_cast<int>(width),
                    group_name(g).c_str(), std::string(ropecheck::name(g.dtype)).c_str(), static_cast<long long>(g.tests),
                    static_cast<long long>(g.tests_failed), static_cast<long long>(g.tests_skipped), c.score_e.c_str(),
                    c.score_tol.c_str(), c.output_e.c_str(), c.output_tol.c_str(), g.verdict.c_str());
      s << line;
    }
  }
  for (const PropertyResult& p : r.properties) {
    const bool skipped = p.gave_up && !p.holds;
    s << "identity " << p.name << ": " << (skipped ? "skipped (no supported case)" : p.holds ? "holds" : "FAILS") << " (" << p.cases << " cases, worst "
      << fixed(p.worst_units) << " u" << (p.proof.empty() ? std::string() : "; proven for all inputs: proofs/formal/coq/" + p.proof)
      << ")\n";
  }
  std::int64_t tests = 0, failed = 0, skipped = 0, groups_failed = 0;
  for (const GroupResult& g : r.groups) {
    tests += g.tests;
    failed += g.tests_failed;
    skipped += g.tests_skipped;
    groups_failed += g.verdict == "fail";
  }
  for (const GroupResult& g : r.groups) {
    if (g.verdict != "fail") continue;
    if (g.attention) {
      s << "FAIL " << group_name(g) << " (" << g.spec << "; attention: score e <= " << fixed(g.attention->score_tolerance)
        << ", output e <= its row's bound " << attention_cells(*g.attention).output_range << "): tests "
        << join_ids(failed_ids(g)) << "\n";
    } else {
      s << "FAIL " << group_name(g) << " (" << g.spec << "; tolerance " << tolerance_text(g) << "): tests "
        << join_ids(failed_ids(g)) << "\n";
      // Edge failures first, as one line, so that they are never missed; then the accuracy
      // figures; then the cases, ordinary inputs before edge cases.
      const std::string edge = edge_summary(g);
      if (!edge.empty()) s << "  edge cases: " << edge << " (listed after the accuracy cases)\n";
      if (g.ordinary_failed > 0) {
        s << "  accuracy: " << g.ordinary_failed << " of " << g.ordinary_checked << " ordinary pairs out of tolerance; worst e "
          << fixed(g.worst_e) << " at position " << g.worst_e_position << "; horizon " << format_horizon(g) << "\n";
      }
    }
    if (!g.verdict_reason.empty()) s << "  " << g.verdict_reason << "\n";
    if (g.diagnosis) {
      for (const std::string& line : g.diagnosis->lines) s << "  diagnosis: " << line << "\n";
    }
    for (std::size_t i = 0; i < g.worst.size() && static_cast<int>(i) < r.worst_listed; ++i) s << "  " << describe(g.worst[i]) << "\n";
  }
  for (const GroupResult& g : r.groups) {
    if (g.verdict == "fail" || !g.diagnosis) continue;
    s << "marginal " << group_name(g) << " (" << g.spec << "): e reaches " << fixed(g.worst_margin) << " of its bound\n";
    for (const std::string& line : g.diagnosis->lines) s << "  diagnosis: " << line << "\n";
  }
  for (const GroupResult& g : r.groups) {
    if (g.verdict == "fail" || g.verdict_reason.empty()) continue;
    s << "note: " << group_name(g) << ": " << g.verdict_reason << "\n";
  }
  for (const GroupResult& g : r.groups) {
    if (g.verdict == "fail" || g.beyond_required_failed == 0) continue;
    s << "note: " << group_name(g) << ": " << g.beyond_required_failed << " ordinary pair(s) out of tolerance above --require-horizon "
      << *r.scope.require_horizon << " (horizon " << format_horizon(g) << ")\n";
  }
  for (const std::string& n : r.notes) s << "note: " << n << "\n";
  s << "verdict: " << r.verdict << " (" << r.groups.size() << " groups, " << groups_failed << " failed; " << tests << " tests, "
    << failed << " failed, " << skipped << " skipped" << skipped_detail(r.scope) << ")\n";
  return s.str();
}

std::string to_json(const Report& r) {
  ojson j;
  j["schema"] = "ropecheck-report/1";
  j["tool"] = {{"name", "ropecheck"}, {"version", ROPECHECK_VERSION}};
  j["command"] = r.command;
  j["implementation"] = r.implementation;
  j["candidate"] = r.candidate;
  j["model"] = std::string(name(r.model));
  j["golden"] = r.golden_files;
  j["verdict"] = r.verdict;
  std::int64_t tests = 0, failed = 0, skipped = 0, groups_failed = 0;
  ojson groups = ojson::array();
  for (const GroupResult& g : r.groups) {
    tests += g.tests;
    failed += g.tests_failed;
    skipped += g.tests_skipped;
    groups_failed += g.verdict == "fail";
    ojson o;
    o["kind"] = g.kind;
    o["suite"] = g.suite;
    o["group"] = g.index;
    o["spec"] = g.spec;
    o["dtype"] = std::string(ropecheck::name(g.dtype));
    o["verdict"] = g.verdict;
    o["tolerance"] = {{"kind", metric_name(g)}, {"value", g.tolerance.value}, {"per_radian", g.tolerance.per_radian},
                      {"source", g.tolerance.source}};
    o["attention_magnitude"] = g.attention_magnitude;
    o["tests"] = g.tests;
    o["tests_failed"] = g.tests_failed;
    o["tests_skipped"] = g.tests_skipped;
    o["pairs_checked"] = g.pairs_checked;
    o["pairs_failed"] = g.pairs_failed;
    o["passthrough_checked"] = g.passthrough_checked;
    o["passthrough_failed"] = g.passthrough_failed;
    o["special_checked"] = g.special_checked;
    o["special_failed"] = g.special_failed;
    o["ordinary_checked"] = g.ordinary_checked;
    o["ordinary_failed"] = g.ordinary_failed;
    o["edge_failed"] = g.edge_failed;
    o["signed_zero_failed"] = g.signed_zero_failed;
    o["whole_tests_failed"] = g.whole_tests_failed;
    o["beyond_required_failed"] = g.beyond_required_failed;
    o["skipped_by_flags"] = g.skipped_by_flags;
    o["skipped_by_position"] = g.skipped_by_position;
    o["tokens_beyond_max_position"] = g.tokens_beyond_max_position;
    o["worst_e"] = number(g.worst_e);
    o["worst_e_position"] = g.worst_e_position;
    o["worst_ulp"] = number(g.worst_ulp);
    o["worst_abs"] = number(g.worst_abs);
    o["max_position"] = g.max_position;
    o["horizon"] = g.horizon ? ojson(*g.horizon) : ojson(nullptr);
    o["horizon_complete"] = g.horizon_complete;
    o["verdict_reason"] = g.verdict_reason;
    o["worst_margin"] = number(g.worst_margin);
    if (g.diagnosis) {
      const judge::GroupDiagnosis& d = *g.diagnosis;
      o["diagnosis"] = {{"lines", d.lines},
                        {"mistake", d.mistake.empty() ? ojson(nullptr) : ojson(d.mistake)},
                        {"mistake_within", d.mistake_within},
                        {"mistake_identical", d.mistake_identical},
                        {"angle_error_rad", number(d.angle_error_rad)},
                        {"angle_error_ulps", number(d.angle_error_ulps)},
                        {"frequency_error_ulps", number(d.frequency_error_ulps)},
                        {"frequency_error_pair", d.frequency_error_pair},
                        {"frequency_growth", d.frequency_growth},
                        {"position_offset", d.position_offset},
                        {"rotation_e", number(d.rotation_e)},
                        {"explanation", d.explanation.empty() ? ojson(nullptr) : ojson(d.explanation)},
                        {"explanation_kind", d.explanation_kind.empty() ? ojson(nullptr) : ojson(d.explanation_kind)}};
      ojson frequencies = ojson::array();
      for (const judge::GroupDiagnosis::Frequency& f : d.frequencies) {
        frequencies.push_back({{"pair", f.pair}, {"expected", number(f.expected)}, {"fitted", std::isnan(f.fitted) ? ojson(nullptr) : ojson(number(f.fitted))}});
      }
      o["diagnosis"]["frequencies"] = frequencies;
    }
    o["failed_tests"] = failed_ids(g);
    ojson skips = ojson::array();
    for (const TestOutcome& t : g.outcomes) {
      if (t.status == "skip") skips.push_back({{"id", t.id}, {"reason", t.reason}});
    }
    o["skipped_tests"] = skips;
    ojson worst = ojson::array();
    for (const Case& c : g.worst) {
      ojson w;
      w["test_id"] = c.test_id;
      w["kind"] = c.kind;
      w["accuracy"] = c.accuracy;
      if (!c.domain.empty()) w["domain"] = c.domain;
      if (!c.quantity.empty()) w["quantity"] = c.quantity;
      w["message"] = c.message;
      w["position"] = c.position;
      w["token"] = c.token;
      w["head"] = c.head;
      w["dims"] = c.dim < 0 ? ojson::array() : (c.second_dim < 0 ? ojson::array({c.dim}) : ojson::array({c.dim, c.second_dim}));
      if (c.quantity.empty()) {
        w["input"] = {reference::to_hex(c.input_x), reference::to_hex(c.input_y)};
        w["expected"] = {reference::to_hex(c.expected_a), reference::to_hex(c.expected_b)};
        w["got"] = {reference::to_hex(c.got_a), reference::to_hex(c.got_b)};
      } else {  // one attention value: no input pair
        w["input"] = ojson::array();
        w["expected"] = {reference::to_hex(c.expected_a)};
        w["got"] = {reference::to_hex(c.got_a)};
        w["unit"] = number(c.unit);
        w["tolerance"] = number(c.tolerance);
      }
      w["e"] = number(c.e);
      w["ulp"] = number(c.ulp);
      w["abs"] = number(c.abs);
      worst.push_back(w);
    }
    o["worst_cases"] = worst;
    ojson points = ojson::array();
    for (const Point& p : g.points) points.push_back({p.position, number(p.e), p.pass});
    o["points"] = points;
    if (g.attention) {
      const AttentionStats& a = *g.attention;
      o["attention"] = {{"score_tolerance", a.score_tolerance},
                        {"score_tolerance_source", a.score_source},
                        {"output_tolerance_min", a.output_tolerance_min},
                        {"output_tolerance_max", a.output_tolerance_max},
                        {"output_tolerance_source", a.output_source},
                        {"scores_checked", a.scores_checked},
                        {"scores_failed", a.scores_failed},
                        {"scores_masked", a.scores_masked},
                        {"outputs_checked", a.outputs_checked},
                        {"outputs_failed", a.outputs_failed},
                        {"worst_score_e", number(a.worst_score_e)},
                        {"worst_output_e", number(a.worst_output_e)},
                        {"worst_output_margin", number(a.worst_output_margin)},
                        {"worst_output_margin_e", number(a.worst_output_margin_e)},
                        {"worst_output_margin_tolerance", number(a.worst_output_margin_tolerance)}};
    }
    groups.push_back(o);
  }
  j["summary"] = {{"groups", r.groups.size()}, {"groups_failed", groups_failed}, {"tests", tests},
                  {"tests_failed", failed}, {"tests_skipped", skipped},
                  {"skipped_by_flags", r.scope.skipped_by_flags}, {"skipped_by_position", r.scope.skipped_by_position}};
  j["options"] = {{"max_position", r.scope.max_position ? ojson(*r.scope.max_position) : ojson(nullptr)},
                  {"require_horizon", r.scope.require_horizon ? ojson(*r.scope.require_horizon) : ojson(nullptr)},
                  {"skip_flags", r.scope.skip_flags},
                  {"strict_zeros", r.scope.strict_zeros}};
  j["groups"] = groups;
  ojson props = ojson::array();
  for (const PropertyResult& p : r.properties) {
    props.push_back({{"name", p.name}, {"formula", p.formula}, {"proof", p.proof}, {"holds", p.holds}, {"cases", p.cases},
                     {"gave_up", p.gave_up}, {"worst_units", number(p.worst_units)}, {"failure", p.failure},
                     {"counterexample", p.counterexample}});
  }
  j["properties"] = props;
  j["notes"] = r.notes;
  if (r.sweep) {
    j["sweep"] = {{"seed", r.sweep->seed},
                  {"samples", r.sweep->samples},
                  {"max_position", r.sweep->max_position},
                  {"shard", {{"index", r.sweep->shard_index}, {"count", r.sweep->shard_count}}}};
  }
  // File and implementation names are bytes, not always UTF-8: invalid sequences become U+FFFD
  // instead of failing the report (nlohmann's type_error.316).
  return j.dump(1, ' ', false, ojson::error_handler_t::replace) + "\n";
}

std::string xml_escape(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // XML 1.0 allows only TAB, LF, CR below 0x20; bytes >= 0x80 are replaced (inputs are ASCII,
        // and a stray byte must not make the file unreadable).
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') out += '?';
        else if (c >= 0x80) out += '?';
        else out += ch;
    }
  }
  return out;
}

std::string to_junit(const Report& r) {
  std::int64_t cases = 0, failures = 0, skipped = 0;
  std::ostringstream body;
  for (const GroupResult& g : r.groups) {
    ++cases;
    body << "  <testcase classname=\"ropecheck." << xml_escape(g.suite) << "\" name=\"" << xml_escape(group_name(g) + " " + g.spec)
         << "\" time=\"0\">\n";
    if (g.verdict == "fail") {
      ++failures;
      const auto ids = failed_ids(g);
      std::string text;
      for (const Case& c : g.worst) text += describe(c) + "\n";
      std::string worst = "worst " + metric_name(g) + " " + fixed(g.worst_e) + ", tolerance " + tolerance_text(g) + ", horizon " +
                          format_horizon(g);
      const std::string edge = edge_summary(g);
      if (!edge.empty()) worst += "; edge cases: " + edge;
      if (!g.verdict_reason.empty()) worst += "; " + g.verdict_reason;
      if (g.diagnosis) {
        for (const std::string& line : g.diagnosis->lines) worst += "; diagnosis: " + line;
      }
      if (g.attention) {
        const AttentionCells c = attention_cells(*g.attention);
        worst = "worst score e " + c.score_e + " (tolerance " + c.score_tol + "), output e " + c.output_e +
                " (its row's tolerance " + c.output_tol + ")";
      }
      body << "   <failure type=\"accuracy\" message=\""
           << xml_escape(std::to_string(ids.size()) + " failing test(s): " + join_ids(ids) + "; " + worst) << "\">"
           << xml_escape(text) << "</failure>\n";
    } else if (g.verdict == "skip") {
      ++skipped;
      std::string reason = g.outcomes.empty() ? "no tests" : g.outcomes.front().reason;
      body << "   <skipped message=\"" << xml_escape(reason) << "\"/>\n";
    }
    const std::string summary =
        g.attention ? "tests " + std::to_string(g.tests) + ", worst score e " + fixed(g.attention->worst_score_e) + " (" +
                          g.attention->score_source + "), worst output e " + fixed(g.attention->worst_output_e) +
                          ", output bounds " + attention_cells(*g.attention).output_range + " (" + g.attention->output_source + ")"
                    : "tests " + std::to_string(g.tests) + ", worst e " + fixed(g.worst_e) + ", worst ulp " + fixed(g.worst_ulp) +
                          ", horizon " + format_horizon(g) + ", tolerance " + g.tolerance.source;
    body << "   <system-out>" << xml_escape(summary) << "</system-out>\n  </testcase>\n";
  }
  for (const PropertyResult& p : r.properties) {
    ++cases;
    body << "  <testcase classname=\"ropecheck.identities\" name=\"" << xml_escape(p.name) << "\" time=\"0\">\n";
    if (p.gave_up && !p.holds) {
      ++skipped;
      body << "   <skipped message=\"no case the implementation supports\"/>\n";
    } else if (!p.holds) {
      ++failures;
      body << "   <failure type=\"identity\" message=\"" << xml_escape(p.failure) << "\">" << xml_escape(p.counterexample)
           << "</failure>\n";
    }
    body << "  </testcase>\n";
  }
  std::ostringstream s;
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s << "<testsuites name=\"ropecheck\" tests=\"" << cases << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\"" << skipped
    << "\">\n";
  s << " <testsuite name=\"" << xml_escape("ropecheck " + r.command + " " + r.implementation) << "\" tests=\"" << cases
    << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\"" << skipped << "\">\n";
  s << body.str();
  s << " </testsuite>\n</testsuites>\n";
  return s.str();
}

namespace {

// e (or ULP) against position, both on log scales: x = log2(1 + position), y = log10(metric) clamped
// to [10^-2, 10^8] (attention: e / tolerance in [10^-4, 10^8]); the tolerance is a dashed line;
// failing points are red.
// The explanation's frequency plot: θ'_j of the spec (a line) and θ̂_j fitted from the candidate's
// own angles (points; red where they differ by more than 1 %), against the pair index j, θ on a
// log scale. Empty when no frequency was fitted.
std::string svg_frequency_plot(const judge::GroupDiagnosis& d) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const judge::GroupDiagnosis::Frequency& f : d.frequencies) {
    for (double v : {f.expected, f.fitted}) {
      if (!(v > 0) || !std::isfinite(v)) continue;
      lo = any ? std::min(lo, std::log10(v)) : std::log10(v);
      hi = any ? std::max(hi, std::log10(v)) : std::log10(v);
      any = true;
    }
  }
  bool fitted = false;
  for (const judge::GroupDiagnosis::Frequency& f : d.frequencies) fitted |= f.fitted > 0 && std::isfinite(f.fitted);
  if (!any || !fitted || d.frequencies.size() < 2) return "";
  lo = std::floor(lo), hi = std::max(lo + 1, std::ceil(hi));
  const double width = 640, height = 220, left = 60, right = 12, top = 12, bottom = 36;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const double n = static_cast<double>(d.frequencies.size() - 1);
  auto px = [&](double j) { return left + plot_w * j / n; };
  auto py = [&](double v) { return top + plot_h * (1 - (std::log10(v) - lo) / (hi - lo)); };
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width
    << " " << height << "\" role=\"img\" class=\"frequencies\">\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << plot_h << "\" fill=\"#fafafa\" stroke=\"#999\"/>\n";
  for (int k = static_cast<int>(lo); k <= static_cast<int>(hi); ++k) {
    s << "<text x=\"" << left - 4 << "\" y=\"" << py(std::pow(10.0, k)) + 4 << "\" font-size=\"10\" text-anchor=\"end\">1e" << k << "</text>\n";
  }
  s << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 4
    << "\" font-size=\"11\" text-anchor=\"middle\">pair index j (0 .. " << d.frequencies.size() - 1
    << "); line: the spec's theta_j, points: fitted from the outputs</text>\n";
  s << "<polyline fill=\"none\" stroke=\"#36c\" points=\"";
  for (const judge::GroupDiagnosis::Frequency& f : d.frequencies) {
    if (f.expected > 0) s << px(f.pair) << "," << py(f.expected) << " ";
  }
  s << "\"/>\n";
  for (const judge::GroupDiagnosis::Frequency& f : d.frequencies) {
    if (!(f.fitted > 0) || !std::isfinite(f.fitted)) continue;
    const bool off = std::fabs(f.fitted / f.expected - 1) > 0.01;
    s << "<circle cx=\"" << px(f.pair) << "\" cy=\"" << std::clamp(py(f.fitted), top, top + plot_h) << "\" r=\"2.5\" fill=\""
      << (off ? "#d22" : "#2a7") << "\"/>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string svg_plot(const GroupResult& g) {
  const double width = 640, height = 240, left = 60, right = 12, top = 12, bottom = 36;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  double max_x = 1;
  for (const Point& p : g.points) max_x = std::max(max_x, std::log2(1.0 + std::max<std::int64_t>(p.position, 0)));
  max_x = std::ceil(max_x);
  // Attention groups plot e / tolerance, well below 1 for a good candidate: a lower floor.
  const double y_min = g.attention ? -4 : -2, y_max = 8;
  auto px = [&](double position) { return left + plot_w * std::log2(1.0 + std::max(position, 0.0)) / max_x; };
  auto py = [&](double metric) {
    double l = metric > 0 ? std::log10(metric) : y_min;
    if (!std::isfinite(l)) l = y_max;
    l = std::clamp(l, y_min, y_max);
    return top + plot_h * (1 - (l - y_min) / (y_max - y_min));
  };
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width
    << " " << height << "\" role=\"img\">\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << plot_h
    << "\" fill=\"#fafafa\" stroke=\"#999\"/>\n";
  for (int k = static_cast<int>(y_min); k <= static_cast<int>(y_max); k += 2) {
    s << "<text x=\"" << left - 4 << "\" y=\"" << py(std::pow(10.0, k)) + 4 << "\" font-size=\"10\" text-anchor=\"end\">1e" << k
      << "</text>\n";
  }
  const int step = std::max(1, static_cast<int>(max_x) / 8);
  for (int k = 0; k <= static_cast<int>(max_x); k += step) {
    const double x = left + plot_w * k / max_x;
    s << "<text x=\"" << x << "\" y=\"" << height - bottom + 14 << "\" font-size=\"10\" text-anchor=\"middle\">2^" << k << "</text>\n";
  }
  s << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 4
    << "\" font-size=\"11\" text-anchor=\"middle\">position + 1 (log scale)</text>\n";
  // Attention groups plot e / tolerance (scores and outputs, each against its own bound): the line is 1.
  const std::string y_label = g.attention ? "e / tolerance" : metric_name(g);
  s << "<text x=\"12\" y=\"" << top + plot_h / 2 << "\" font-size=\"11\" transform=\"rotate(-90 12 " << top + plot_h / 2
    << ")\" text-anchor=\"middle\">" << xml_escape(y_label) << " (log scale)</text>\n";
  // The tolerance (e is already relative to u·ρ·max(1, |g|)); a bound growing with the angle is drawn
  // for the group's largest frequency, where it grows fastest: value + per_radian·θ_max·position.
  const double tol_value = g.attention ? 1.0 : g.tolerance.value;
  const double tol_y = py(tol_value);
  if (!g.attention && g.tolerance.per_radian > 0 && g.max_frequency > 0) {
    s << "<polyline fill=\"none\" stroke=\"#c60\" stroke-dasharray=\"6 3\" points=\"";
    for (int i = 0; i <= 64; ++i) {
      const double position = std::exp2(max_x * i / 64.0) - 1;
      s << px(position) << "," << py(tol_value + g.tolerance.per_radian * g.max_frequency * position) << " ";
    }
    s << "\"/>\n";
  } else {
    s << "<line x1=\"" << left << "\" y1=\"" << tol_y << "\" x2=\"" << left + plot_w << "\" y2=\"" << tol_y
      << "\" stroke=\"#c60\" stroke-dasharray=\"6 3\"/>\n";
  }
  s << "<text x=\"" << left + plot_w - 4 << "\" y=\"" << tol_y - 3 << "\" font-size=\"10\" text-anchor=\"end\" fill=\"#c60\">tolerance "
    << xml_escape(fixed(tol_value)) << "</text>\n";
  for (const Point& p : g.points) {
    s << "<circle cx=\"" << px(static_cast<double>(p.position)) << "\" cy=\"" << py(p.e) << "\" r=\"2.5\" fill=\""
      << (p.pass ? "#2a7" : "#d22") << "\"/>\n";
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace

std::string to_html(const Report& r) {
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  s << "<title>" << xml_escape("ropecheck " + r.command + ": " + r.implementation) << "</title>\n";
  // Readable down to 900 px: long specs and hex floats wrap inside their cells, wide tables scroll
  // instead of widening the page, the plots scale down.
  s << "<style>body{font-family:sans-serif;margin:1em;max-width:1100px}table{border-collapse:collapse;font-size:13px;"
       "display:block;overflow-x:auto;max-width:100%}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
       "td.l,th.l{text-align:left}td.spec{max-width:360px;word-break:break-all}code{font-size:12px;word-break:break-all}"
       "svg{max-width:100%;height:auto}.pass{color:#2a7}.fail{color:#d22;font-weight:bold}.skip{color:#888}"
       "ul.diagnosis{background:#fff6e0;padding:6px 6px 6px 24px}</style>\n</head>\n<body>\n";
  s << "<h1>ropecheck " << xml_escape(r.command) << ": <span class=\"" << xml_escape(r.verdict) << "\">" << xml_escape(r.verdict)
    << "</span></h1>\n";
  s << "<p>Implementation: <code>" << xml_escape(r.implementation) << "</code>; model <code>" << xml_escape(std::string(name(r.model)))
    << "</code>; golden: <code>";
  for (std::size_t i = 0; i < r.golden_files.size(); ++i) s << (i ? ", " : "") << xml_escape(r.golden_files[i]);
  s << "</code></p>\n";
  s << "<p>e = max(|a &#8722; A|, |b &#8722; B|) / (u&#183;&#961;) per rotated pair (docs/design.md, Error metric); horizon = largest "
       "tested position up to which every check passed.</p>\n";
  bool any_rope = false, any_attention = false;
  for (const GroupResult& g : r.groups) (g.attention ? any_attention : any_rope) = true;
  if (any_rope) {
    s << "<table>\n<tr><th class=\"l\">group</th><th class=\"l\">spec</th><th>tests</th><th>failed</th><th>skipped</th><th>worst e</th>"
         "<th>worst ulp</th><th>horizon</th><th>verdict</th></tr>\n";
    for (const GroupResult& g : r.groups) {
      if (g.attention) continue;
      s << "<tr><td class=\"l\"><a href=\"#" << xml_escape(group_anchor(g)) << "\">" << xml_escape(group_name(g)) << "</a></td><td class=\"l spec\"><code>"
        << xml_escape(g.spec) << "</code></td><td>" << g.tests << "</td><td>" << g.tests_failed << "</td><td>" << g.tests_skipped
        << "</td><td>" << xml_escape(fixed(g.worst_e)) << "</td><td>" << xml_escape(fixed(g.worst_ulp)) << "</td><td>"
        << xml_escape(format_horizon(g)) << "</td><td class=\"" << xml_escape(g.verdict) << "\">" << xml_escape(g.verdict)
        << "</td></tr>\n";
    }
    s << "</table>\n";
  }
  if (any_attention) {
    s << "<p>Attention: score e = |&#349; &#8722; s| / (u&#183;|c|&#183;&#8214;q<sub>i</sub>&#8214;&#183;&#8214;k<sub>j</sub>&#8214;), "
         "c = g&#178;/&#8730;d; output e = |&#244; &#8722; o| / (u&#183;max<sub>j</sub>|v<sub>j</sub>|) over the visible keys; "
         "the output bound is per (query, head) row (gate/README.md).</p>\n";
    s << "<table>\n<tr><th class=\"l\">attention group</th><th class=\"l\">spec</th><th>tests</th><th>failed</th><th>skipped</th>"
         "<th>score e</th><th>score tol</th><th>output e</th><th>output tol</th><th>verdict</th></tr>\n";
    for (const GroupResult& g : r.groups) {
      if (!g.attention) continue;
      const AttentionCells c = attention_cells(*g.attention);
      s << "<tr><td class=\"l\"><a href=\"#" << xml_escape(group_anchor(g)) << "\">" << xml_escape(group_name(g)) << "</a></td><td class=\"l spec\"><code>"
        << xml_escape(g.spec) << "</code></td><td>" << g.tests << "</td><td>" << g.tests_failed << "</td><td>" << g.tests_skipped
        << "</td><td>" << xml_escape(c.score_e) << "</td><td>" << xml_escape(c.score_tol) << "</td><td>" << xml_escape(c.output_e)
        << "</td><td>" << xml_escape(c.output_tol) << "</td><td class=\"" << xml_escape(g.verdict) << "\">" << xml_escape(g.verdict)
        << "</td></tr>\n";
    }
    s << "</table>\n";
  }
  for (const PropertyResult& p : r.properties) {
    const bool skipped = p.gave_up && !p.holds;
    s << "<p>identity <code>" << xml_escape(p.name) << "</code>: <span class=\"" << (skipped ? "skip" : p.holds ? "pass" : "fail") << "\">"
      << (skipped ? "skipped" : p.holds ? "holds" : "fails") << "</span> (" << p.cases << " cases) " << xml_escape(p.failure) << "</p>\n";
  }
  for (const GroupResult& g : r.groups) {
    s << "<h2 id=\"" << xml_escape(group_anchor(g)) << "\">" << xml_escape(group_name(g)) << " <span class=\"" << xml_escape(g.verdict)
      << "\">" << xml_escape(g.verdict) << "</span></h2>\n";
    if (g.attention) {
      s << "<p><code>" << xml_escape(g.spec) << "</code><br/>score e &#8804; " << xml_escape(fixed(g.attention->score_tolerance)) << " ("
        << xml_escape(g.attention->score_source) << ")<br/>output e &#8804; its row's bound, "
        << xml_escape(attention_cells(*g.attention).output_range) << " (" << xml_escape(g.attention->output_source) << ")</p>\n";
    } else {
      s << "<p><code>" << xml_escape(g.spec) << "</code><br/>tolerance " << xml_escape(tolerance_text(g)) << " ("
        << xml_escape(g.tolerance.source) << ")";
      const std::string edge = edge_summary(g);
      if (!edge.empty()) s << "<br/>edge cases: " << xml_escape(edge);
      if (!g.verdict_reason.empty()) s << "<br/>" << xml_escape(g.verdict_reason);
      s << "</p>\n";
      if (g.diagnosis) {
        s << "<ul class=\"diagnosis\">";
        for (const std::string& line : g.diagnosis->lines) s << "<li>" << xml_escape(line) << "</li>";
        s << "</ul>\n";
        if (g.verdict == "fail") s << svg_frequency_plot(*g.diagnosis);
      }
    }
    s << svg_plot(g);
    if (!g.worst.empty()) {
      s << "<table>\n<tr><th>test</th><th class=\"l\">kind</th><th>position</th><th>token</th><th>head</th><th>dims</th>"
           "<th class=\"l\">input</th><th class=\"l\">expected</th><th class=\"l\">got</th><th>e</th><th>ulp</th></tr>\n";
      for (const Case& c : g.worst) {
        s << "<tr><td>" << c.test_id << "</td><td class=\"l\">" << xml_escape(c.kind) << "</td><td>" << c.position << "</td><td>"
          << c.token << "</td><td>" << c.head << "</td><td>"
          << (c.dim < 0 ? std::string("-") : std::to_string(c.dim) + (c.second_dim >= 0 ? "," + std::to_string(c.second_dim) : ""))
          << "</td>";
        if (c.dim < 0) {
          s << "<td class=\"l\" colspan=\"5\">" << xml_escape(c.message) << "</td></tr>\n";
          continue;
        }
        if (!c.quantity.empty()) {  // one attention value
          s << "<td class=\"l\">" << xml_escape(c.message) << "</td><td class=\"l\"><code>" << xml_escape(reference::to_hex(c.expected_a))
            << "</code></td><td class=\"l\"><code>" << xml_escape(reference::to_hex(c.got_a)) << "</code></td><td>"
            << xml_escape(fixed(c.e)) << "</td><td>-</td></tr>\n";
          continue;
        }
        s << "<td class=\"l\"><code>" << xml_escape(reference::to_hex(c.input_x) + " " + reference::to_hex(c.input_y))
          << "</code></td><td class=\"l\"><code>" << xml_escape(reference::to_hex(c.expected_a) + " " + reference::to_hex(c.expected_b))
          << "</code></td><td class=\"l\"><code>" << xml_escape(reference::to_hex(c.got_a) + " " + reference::to_hex(c.got_b))
          << "</code></td><td>" << xml_escape(fixed(c.e)) << "</td><td>" << xml_escape(fixed(c.ulp)) << "</td></tr>\n";
      }
      s << "</table>\n";
    }
  }
  for (const std::string& n : r.notes) s << "<p>note: " << xml_escape(n) << "</p>\n";
  s << "</body>\n</html>\n";
  return s.str();
}

namespace {
void check_output_path(const std::string& path, const std::vector<std::string>& inputs);

// The folder a report file goes into ("." for a bare file name).
std::filesystem::path folder_of(const std::string& path) {
  const std::filesystem::path target(path);
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}
}  // namespace

void check_report_paths(const std::vector<std::string>& paths, const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (paths[i].empty()) continue;
    for (std::size_t k = i + 1; k < paths.size(); ++k) {
      if (paths[k] == paths[i]) throw UsageError(paths[i] + ": report path: expected a different file for each report");
    }
    check_output_path(paths[i], inputs);
    const std::filesystem::path folder = folder_of(paths[i]);
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec) || ::access(folder.c_str(), W_OK | X_OK) != 0) {
      throw InputError(paths[i] + ": file: expected a writable folder " + folder.string());
    }
  }
}

std::string format_explanation(const Report& report) {
  std::string s = "verdict: " + report.verdict + " (model " + std::string(judge::name(report.model)) + ")\n";
  for (const GroupResult& g : report.groups) {
    if (g.verdict != "fail") continue;
    s += g.suite + "[" + std::to_string(g.index) + "] " + g.spec + "\n";
    if (!g.diagnosis) {
      s += "  explanation: none (" + (g.verdict_reason.empty() ? std::string("no output to infer from") : g.verdict_reason) + ")\n";
      continue;
    }
    if (!g.diagnosis->explanation.empty()) s += "  explanation: " + g.diagnosis->explanation + "\n";
    for (const std::string& line : g.diagnosis->lines) {
      if (line != g.diagnosis->explanation) s += "  diagnosis: " + line + "\n";
    }
  }
  if (report.verdict == "pass") s += "nothing to explain: the outputs pass\n";
  return s;
}

void emit_reports(const Report& report, const std::string& json_path, const std::string& junit_path,
                  const std::string& html_path, const std::vector<std::string>& inputs, bool explanation_only) {
  check_report_paths({json_path, junit_path, html_path}, inputs);
  // Every report is rendered before anything is written or printed: a failure leaves no half.
  const std::string json = json_path.empty() ? "" : to_json(report);
  const std::string junit = junit_path.empty() ? "" : to_junit(report);
  const std::string html = html_path.empty() ? "" : to_html(report);
  std::fputs((explanation_only ? format_explanation(report) : format_table(report)).c_str(), stdout);
  std::fflush(stdout);
  if (!json_path.empty()) write_atomically(json_path, json, inputs);
  if (!junit_path.empty()) write_atomically(junit_path, junit, inputs);
  if (!html_path.empty()) write_atomically(html_path, html, inputs);
}

namespace {

// What is at `path` now, when it may not be replaced: a report replaces a regular file only, never
// a device (`--json /dev/null` run as root), a FIFO, a socket, a folder or a symbolic link. lstat:
// the final component itself, not what a link points to.
void refuse_existing_non_regular(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  if (S_ISDIR(st.st_mode)) throw UsageError(path + ": report path: expected a file name, got a folder");
  throw UsageError(path + ": report path: expected a regular file or a new name, got " + tensorio::file_kind(st.st_mode) +
                   " (never replaced)");
}

void check_output_path(const std::string& path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  refuse_existing_non_regular(path);
  std::error_code ec;
  const fs::path target(path);
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    const bool same = fs::exists(target, ec) && fs::exists(input, ec) ? fs::equivalent(target, input, ec)
                                                                      : fs::weakly_canonical(target, ec) == fs::weakly_canonical(input, ec);
    if (same) throw UsageError(path + ": report path: expected a file that is not an input (it is " + input + ")");
    // A *.json file in a --golden folder would be read as a suite by the next run.
    if (target.extension() == ".json" && fs::is_directory(input, ec) && fs::equivalent(folder_of(path), input, ec)) {
      throw UsageError(path + ": report path: expected a file outside the golden folder " + input +
                       " (its *.json files are read as suites)");
    }
  }
}

// An unnamed file in `folder` (O_TMPFILE), or a named one where the filesystem has none; `temp`
// is then its name.
int open_temporary(const std::filesystem::path& folder, const std::string& file_name, std::string& temp) {
  const int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  temp = (folder / ("." + file_name + ".tmp.XXXXXX")).string();
  return ::mkstemp(temp.data());
}

// Gives the unnamed file `fd` the name `temp` (a fresh one beside the target).
bool name_temporary(int fd, const std::filesystem::path& folder, const std::string& file_name, std::string& temp) {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  for (unsigned attempt = 0; attempt < 100; ++attempt) {
    temp = (folder / ("." + file_name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(attempt))).string();
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
    if (errno == EEXIST) continue;
    // Without /proc: the same through AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH).
    if (::linkat(fd, "", AT_FDCWD, temp.c_str(), AT_EMPTY_PATH) == 0) return true;
    if (errno != EEXIST) return false;
  }
  return false;
}

}  // namespace

void write_atomically(const std::string& path, const std::string& content, const std::vector<std::string>& inputs,
                      bool exclusive) {
  write_atomically_streamed(path, inputs, [&](const ChunkWriter& write) { write(content); }, exclusive);
}

void write_atomically_streamed(const std::string& path, const std::vector<std::string>& inputs,
                               const std::function<void(const ChunkWriter&)>& produce, bool exclusive) {
  namespace fs = std::filesystem;
  check_output_path(path, inputs);
  const fs::path target(path);
  const fs::path folder = folder_of(path);
  const std::string file_name = target.filename().string();
  // Written unnamed where the filesystem allows (O_TMPFILE): a run killed while writing leaves no
  // temporary file behind; it is named only for the rename into place.
  std::string temp;
  const int fd = open_temporary(folder, file_name, temp);
  if (fd < 0) throw InputError(path + ": file: expected a writable folder " + folder.string());
  auto discard = [&] {
    if (!temp.empty()) ::unlink(temp.c_str());
  };
  std::uint64_t total = 0;
  bool short_write = false;
  const ChunkWriter write = [&](std::string_view chunk) {
    std::size_t written = 0;
    while (written < chunk.size() && !short_write) {
      const ssize_t n = ::write(fd, chunk.data() + written, chunk.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) short_write = true;
      else written += static_cast<std::size_t>(n);
    }
    total += written;
  };
  try {
    produce(write);
  } catch (...) {
    ::close(fd);
    discard();
    throw;
  }
  const bool ok = !short_write && ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  const bool named = ok && (!temp.empty() || name_temporary(fd, folder, file_name, temp));
  ::close(fd);
  if (!named) {
    discard();
    throw InputError(path + ": file: expected " +
                     (ok ? std::string("a temporary name in ") + folder.string()
                         : "every byte written (" + std::to_string(total) + " written before an error; disk full?)"));
  }
  try {
    refuse_existing_non_regular(path);  // again: what is there may have changed while writing
  } catch (...) {
    discard();
    throw;
  }
  if (exclusive) {
    // link() fails on an existing name where rename() would replace it.
    const int linked = ::link(temp.c_str(), path.c_str());
    const int error = errno;
    discard();
    if (linked != 0) {
      throw InputError(path + (error == EEXIST ? ": file: expected a new file, got one created while this one was written"
                                               : ": file: expected to put the file in place (" + std::string(std::strerror(error)) + ")"));
    }
    return;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    discard();
    throw InputError(path + ": file: expected to rename the temporary file into place");
  }
}

}  // namespace ropecheck::gate
