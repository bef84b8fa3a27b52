#include "gate/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <cstdio>
#include <sstream>

#include "gate/report_parts.h"
#include "judge/verdict.h"
#include "reference/rounding.h"

namespace ropecheck::gate {
namespace report_detail {


// JSON has no Inf/NaN: such metrics are written as the strings "inf" / "nan".
ojson number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

std::string fixed(double v, int digits) {
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
  s << c.suite << " test " << c.test_id << " [" << judge::name(c.kind) << "]";
  if (!c.quantity.empty()) {
    s << ": " << c.message << "; expected " << reference::to_hex(c.expected_a) << " got " << reference::to_hex(c.got_a);
    if (c.kind == judge::CaseKind::tolerance)
      s << " (|got - expected| = " << reference::to_hex(c.abs) << ", unit " << reference::to_hex(c.unit) << ")";
    return s.str();
  }
  if (c.dim >= 0) {
    s << " token " << c.token << " head " << c.head << " dims (" << c.dim;
    if (c.second_dim >= 0) s << ", " << c.second_dim;
    s << ") position " << c.position;
  }
  s << ": " << c.message;
  if (c.dim >= 0 && c.kind != judge::CaseKind::passthrough) {
    s << "; input (" << reference::to_hex(c.input_x) << ", " << reference::to_hex(c.input_y) << ") expected ("
      << reference::to_hex(c.expected_a) << ", " << reference::to_hex(c.expected_b) << ") got ("
      << reference::to_hex(c.got_a) << ", " << reference::to_hex(c.got_b) << ")";
  }
  return s.str();
}

std::vector<std::int64_t> failed_ids(const GroupResult& g) {
  std::vector<std::int64_t> ids;
  for (const TestOutcome& o : g.outcomes) {
    if (o.status == judge::Verdict::fail) ids.push_back(o.id);
  }
  return ids;
}

std::string join_ids(const std::vector<std::int64_t>& ids, std::size_t limit) {
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

std::string worst_ulp_text(const GroupResult& g) {
  return g.tolerance.kind == Tolerance::Kind::ulp ? fixed(g.worst_ulp) : std::string("-");
}

// The row a group is counted in on the summary grid: its suite's name without dtype and base
// tokens ("half-f32-base10000" → "half"), cut to its first word when other suites of the report
// share that word ("scaling-yarn", "scaling-ntk" → "scaling").
std::vector<std::string> summary_families(const Report& r) {
  auto words = [](const std::string& name) {
    std::vector<std::string> kept;
    std::size_t begin = 0;
    while (begin <= name.size()) {
      const std::size_t end = std::min(name.find('-', begin), name.size());
      const std::string word = name.substr(begin, end - begin);
      const bool dtype = word == "f64" || word == "f32" || word == "f16" || word == "bf16";
      const bool base = word.rfind("base", 0) == 0 && word.size() > 4 && std::isdigit(static_cast<unsigned char>(word[4]));
      if (!word.empty() && !dtype && !base) kept.push_back(word);
      begin = end + 1;
    }
    return kept;
  };
  std::map<std::string, std::set<std::string>> names_by_first_word;
  std::vector<std::vector<std::string>> group_words;
  for (const GroupResult& g : r.groups) {
    group_words.push_back(words(g.suite));
    std::string joined;
    for (const std::string& w : group_words.back()) joined += (joined.empty() ? "" : "-") + w;
    if (!group_words.back().empty()) names_by_first_word[group_words.back().front()].insert(joined);
  }
  std::vector<std::string> families;
  for (const std::vector<std::string>& w : group_words) {
    if (w.empty()) {
      families.push_back("tensors");
      continue;
    }
    if (names_by_first_word[w.front()].size() > 1) {
      families.push_back(w.front());
      continue;
    }
    std::string joined;
    for (const std::string& word : w) joined += (joined.empty() ? "" : "-") + word;
    families.push_back(joined);
  }
  return families;
}

// "ok 12" (every judged group passed), "FAIL 2/12", "skip 3" (none judged), "-" (none).
std::string grid_cell(int judged, int failed, int skipped) {
  if (judged + skipped == 0) return "-";
  if (failed > 0) return "FAIL " + std::to_string(failed) + "/" + std::to_string(judged);
  if (judged == 0) return "skip " + std::to_string(skipped);
  return "ok " + std::to_string(judged);
}

SummaryGrid summary_grid(const Report& r) {
  SummaryGrid grid;
  const std::vector<std::string> families = summary_families(r);
  struct Counts {
    int judged = 0, failed = 0, skipped = 0;
  };
  std::map<std::pair<std::string, Dtype>, Counts> counts;
  for (std::size_t i = 0; i < r.groups.size(); ++i) {
    const GroupResult& g = r.groups[i];
    if (std::find(grid.rows.begin(), grid.rows.end(), families[i]) == grid.rows.end()) grid.rows.push_back(families[i]);
    Counts& c = counts[{families[i], g.dtype}];
    if (g.verdict == judge::Verdict::skip) {
      ++c.skipped;
    } else {
      ++c.judged;
    }
    if (g.verdict == judge::Verdict::fail) ++c.failed;
  }
  for (const std::string& row : grid.rows) {
    std::vector<std::string> cells;
    for (Dtype d : grid.dtypes) {
      const auto it = counts.find({row, d});
      const Counts c = it == counts.end() ? Counts{} : it->second;
      cells.push_back(grid_cell(c.judged, c.failed, c.skipped));
    }
    grid.cells.push_back(std::move(cells));
  }
  return grid;
}

}  // namespace report_detail

void Report::decide() {
  int identities_failed = 0, identities_judged = 0;
  for (const PropertyResult& p : properties) {
    // An identity that found no case the implementation supports (RapidCheck gave up) is skipped.
    if (p.gave_up && !p.holds) continue;
    ++identities_judged;
    identities_failed += !p.holds;
  }
  const judge::RunVerdict v = judge::run_verdict(groups, identities_failed, identities_judged);
  std::erase(notes, judge::kNothingJudgedNote);  // decided again: merged reports may carry it
  if (v.judged_nothing) notes.emplace_back(judge::kNothingJudgedNote);
  verdict = v.pass ? judge::Verdict::pass : judge::Verdict::fail;
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

std::string margin_text(double worst_margin) {
  return worst_margin <= 1 ? "within the bound: at most " + report_detail::fixed(worst_margin) + " of it"
                           : "out of the bound: " + report_detail::fixed(worst_margin) + " times it";
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
  if (!g.first_whole_test_failure.empty()) out += "; first: " + g.first_whole_test_failure;
  return out;
}

}  // namespace ropecheck::gate
