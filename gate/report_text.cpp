#include "gate/report.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "gate/report_parts.h"
#include "judge/verdict.h"
#include "reference/rounding.h"

namespace ropecheck::gate {
using namespace report_detail;

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
                  worst_ulp_text(g).c_str(), format_horizon(g).c_str(), static_cast<long long>(g.edge_failures()),
                  std::string(judge::name(g.verdict)).c_str());
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
                    static_cast<long long>(g.tests_failed), static_cast<long long>(g.tests_skipped), c.score_e.c_str(), c.score_tol.c_str(),
                    c.output_e.c_str(), c.output_tol.c_str(), std::string(judge::name(g.verdict)).c_str());
      s << line;
    }
  }
  for (const PropertyResult& p : r.properties) {
    const bool skipped = p.gave_up && !p.holds;
    s << "identity " << p.name << ": " << (skipped ? "skipped (no supported case)" : p.holds ? "holds" : "FAILS") << " (" << p.cases << " cases, worst "
      << fixed(p.worst_units) << " u" << (p.proof.empty() ? std::string() : "; proven for all inputs: proofs/formal/coq/" + p.proof)
      << ")\n";
    if (!p.replay.empty()) s << "  replay: " << p.replay << "\n";
  }
  std::int64_t tests = 0, failed = 0, skipped = 0, groups_failed = 0;
  for (const GroupResult& g : r.groups) {
    tests += g.tests;
    failed += g.tests_failed;
    skipped += g.tests_skipped;
    groups_failed += g.verdict == judge::Verdict::fail;
  }
  for (const GroupResult& g : r.groups) {
    if (g.verdict != judge::Verdict::fail) continue;
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
    if (g.verdict == judge::Verdict::fail || !g.diagnosis) continue;
    s << "marginal " << group_name(g) << " (" << g.spec << "): e reaches " << fixed(g.worst_margin) << " of its bound\n";
    for (const std::string& line : g.diagnosis->lines) s << "  diagnosis: " << line << "\n";
  }
  for (const GroupResult& g : r.groups) {
    if (g.verdict == judge::Verdict::fail || g.verdict_reason.empty()) continue;
    s << "note: " << group_name(g) << ": " << g.verdict_reason << "\n";
  }
  for (const GroupResult& g : r.groups) {
    if (g.verdict == judge::Verdict::fail || g.beyond_required_failed == 0) continue;
    s << "note: " << group_name(g) << ": " << g.beyond_required_failed << " ordinary pair(s) out of tolerance above --require-horizon "
      << *r.scope.require_horizon << " (horizon " << format_horizon(g) << ")\n";
  }
  for (const std::string& n : r.notes) s << "note: " << n << "\n";
  s << "verdict: " << judge::name(r.verdict) << " (" << r.groups.size() << " groups, " << groups_failed << " failed; " << tests
    << " tests, " << failed << " failed, " << skipped << " skipped" << skipped_detail(r.scope) << ")\n";
  return s.str();
}

namespace {

constexpr std::size_t kSummaryFailingGroups = 20;  // failing groups named on the summary, at most
constexpr std::size_t kSummaryDetailedGroups = 3;  // with their explanation and worst case, at most

}  // namespace

namespace {

// Why the failing groups fail, one line per distinct explanation (judge/verdict.h
// distinct_explanations), then what no explanation covers, then whether another claim would have
// decided otherwise (judge/README.md "Models").
std::string explanation_lines(const Report& r, const std::vector<const GroupResult*>& failing) {
  std::ostringstream s;
  std::size_t explained = 0;
  for (const judge::ExplanationLine& line : judge::distinct_explanations(r.groups)) {
    explained += line.groups.size();
    s << "explanation: " << (line.groups.size() == 1 ? group_name(r.groups[line.groups.front()]) + ": " : std::string())
      << line.text << "\n";
  }
  if (failing.size() > explained && failing.size() > kSummaryDetailedGroups) {
    s << "unexplained: " << failing.size() - explained << " failing group(s) (--verbose: their diagnosis)\n";
  }
  // Failing the exact claim with (nearly) every sampled pair within the f32-angle bound: the
  // weaker claim of code that computes its angle in binary32 fits these groups.
  std::size_t weaker = 0;
  for (const GroupResult* g : failing) {
    weaker += r.model == judge::Model::exact && g->diagnosis && g->diagnosis->explanation.empty() &&
              g->diagnosis->f32_angle_share >= 0.99;
  }
  if (weaker > 0) {
    s << "note: under the weaker claim --model f32-angle (an angle computed in binary32) " << weaker << " of the "
      << failing.size() << " failing group(s) are within the bound in 99% or more of the sampled pairs\n";
  }
  return s.str();
}

}  // namespace

std::string format_summary(const Report& r) {
  std::ostringstream s;
  s << "ropecheck " << r.command << ": " << r.implementation << ", judged under " << judge::claim_text(r.model) << "\n";
  // The grid: families × dtypes, when there is more than one group.
  if (r.groups.size() > 1) {
    const SummaryGrid grid = summary_grid(r);
    std::size_t width = 6;
    for (const std::string& row : grid.rows) width = std::max(width, row.size());
    char line[256];
    std::snprintf(line, sizeof line, "%-*s", static_cast<int>(width), "groups");
    s << line;
    for (Dtype d : grid.dtypes) {
      std::snprintf(line, sizeof line, "  %-10s", std::string(ropecheck::name(d)).c_str());
      s << line;
    }
    s << "\n";
    for (std::size_t i = 0; i < grid.rows.size(); ++i) {
      std::snprintf(line, sizeof line, "%-*s", static_cast<int>(width), grid.rows[i].c_str());
      s << line;
      for (const std::string& cell : grid.cells[i]) {
        std::snprintf(line, sizeof line, "  %-10s", cell.c_str());
        s << line;
      }
      s << "\n";
    }
  }
  if (!r.properties.empty()) {
    int hold = 0, skipped = 0;
    for (const PropertyResult& p : r.properties) {
      if (p.gave_up && !p.holds) ++skipped;
      else if (p.holds) ++hold;
    }
    s << "identities: " << hold << " of " << r.properties.size() << " hold";
    if (skipped > 0) s << ", " << skipped << " skipped (no supported case)";
    s << "\n";
    for (const PropertyResult& p : r.properties) {
      if (p.holds || p.gave_up) continue;
      s << "FAIL identity " << p.name << " (" << p.cases << " cases, worst " << fixed(p.worst_units) << " u): " << p.failure << "\n";
      if (!p.replay.empty()) s << "  replay: " << p.replay << "\n";
    }
  }
  std::vector<const GroupResult*> failing;
  int marginal = 0;
  for (const GroupResult& g : r.groups) {
    if (g.verdict == judge::Verdict::fail) {
      failing.push_back(&g);
    } else if (g.diagnosis) {
      ++marginal;
    }
  }
  for (std::size_t i = 0; i < failing.size() && i < kSummaryFailingGroups; ++i) {
    const GroupResult& g = *failing[i];
    s << "FAIL " << group_name(g) << " (" << g.spec << "): ";
    if (g.attention) {
      s << "attention, score e " << attention_cells(*g.attention).score_e << " (bound " << fixed(g.attention->score_tolerance)
        << "), tests " << join_ids(failed_ids(g), 5);
    } else {
      const std::string edge = edge_summary(g);
      if (g.ordinary_failed > 0) {
        s << "worst e " << fixed(g.worst_e) << " > " << tolerance_text(g) << " at position " << g.worst_e_position << ", horizon "
          << format_horizon(g) << (edge.empty() ? "" : "; ");
      }
      if (!edge.empty()) s << "edge cases: " << edge;
      if (g.ordinary_failed == 0 && edge.empty()) s << g.verdict_reason;
    }
    s << "\n";
    if (failing.size() > kSummaryDetailedGroups) continue;
    // A group no explanation covers gets its first diagnosis line; the explanations follow below.
    if (g.diagnosis && !g.diagnosis->lines.empty() && g.diagnosis->explanation.empty()) {
      s << "  diagnosis: " << g.diagnosis->lines.front() << "\n";
    }
    if (!g.worst.empty() && r.worst_listed > 0) s << "  worst: " << describe(g.worst.front()) << "\n";
  }
  if (failing.size() > kSummaryFailingGroups) {
    s << "... and " << failing.size() - kSummaryFailingGroups << " more failing groups (--verbose or the reports list each)\n";
  }
  s << explanation_lines(r, failing);
  if (marginal > 0) {
    s << "note: " << marginal << " passing group(s) come within a factor 2 of their bound (--verbose: their diagnosis)\n";
  }
  for (const GroupResult& g : r.groups) {
    if (g.verdict == judge::Verdict::fail || g.beyond_required_failed == 0) continue;
    s << "note: " << group_name(g) << ": " << g.beyond_required_failed << " ordinary pair(s) out of tolerance above --require-horizon "
      << *r.scope.require_horizon << " (horizon " << format_horizon(g) << ")\n";
  }
  for (const std::string& n : r.notes) s << "note: " << n << "\n";
  std::int64_t tests = 0, failed = 0, skipped = 0;
  for (const GroupResult& g : r.groups) {
    tests += g.tests;
    failed += g.tests_failed;
    skipped += g.tests_skipped;
  }
  s << "verdict: " << judge::name(r.verdict) << " (" << r.groups.size() << " groups, " << failing.size() << " failed; " << tests
    << " tests, " << failed << " failed, " << skipped << " skipped" << skipped_detail(r.scope) << ")\n";
  return s.str();
}

std::string format_explanation(const Report& report) {
  std::string s = "verdict: " + std::string(judge::name(report.verdict)) + " (model " + std::string(judge::name(report.model)) + ")\n";
  for (const GroupResult& g : report.groups) {
    if (g.verdict != judge::Verdict::fail) continue;
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
  if (report.verdict == judge::Verdict::pass) s += "nothing to explain: the outputs pass\n";
  return s;
}

}  // namespace ropecheck::gate
