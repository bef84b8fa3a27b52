#include "gate/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "gate/report_parts.h"
#include "reference/rounding.h"

namespace ropecheck::gate {
using namespace report_detail;

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

// One group in full: its spec, tolerance, diagnosis, plot and worst cases.
void group_section(std::ostringstream& s, const GroupResult& g) {
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
    << "</code>.</p>\n";
  // The first screen says what failed: the summary grid, the identities, the failing groups' links;
  // then each failing group in full; every other group and the inputs folded below.
  std::vector<const GroupResult*> failing, others;
  for (const GroupResult& g : r.groups) (g.verdict == "fail" ? failing : others).push_back(&g);
  if (r.groups.size() > 1) {
    const SummaryGrid grid = summary_grid(r);
    s << "<table>\n<tr><th class=\"l\">groups</th>";
    for (Dtype d : grid.dtypes) s << "<th>" << xml_escape(std::string(ropecheck::name(d))) << "</th>";
    s << "</tr>\n";
    for (std::size_t i = 0; i < grid.rows.size(); ++i) {
      s << "<tr><td class=\"l\">" << xml_escape(grid.rows[i]) << "</td>";
      for (const std::string& cell : grid.cells[i]) {
        const char* kind = cell.rfind("FAIL", 0) == 0 ? "fail" : cell.rfind("ok", 0) == 0 ? "pass" : "skip";
        s << "<td class=\"" << kind << "\">" << xml_escape(cell) << "</td>";
      }
      s << "</tr>\n";
    }
    s << "</table>\n";
  }
  if (!failing.empty()) {
    s << "<p>Failing groups:";
    for (const GroupResult* g : failing) {
      s << " <a href=\"#" << xml_escape(group_anchor(*g)) << "\">" << xml_escape(group_name(*g)) << "</a>";
    }
    s << "</p>\n";
  }
  for (const PropertyResult& p : r.properties) {
    const bool skipped = p.gave_up && !p.holds;
    s << "<p>identity <code>" << xml_escape(p.name) << "</code>: <span class=\"" << (skipped ? "skip" : p.holds ? "pass" : "fail") << "\">"
      << (skipped ? "skipped" : p.holds ? "holds" : "fails") << "</span> (" << p.cases << " cases) " << xml_escape(p.failure) << "</p>\n";
    if (!p.replay.empty()) s << "<p>replay: <code>" << xml_escape(p.replay) << "</code></p>\n";
  }
  for (const GroupResult* g : failing) group_section(s, *g);
  s << "<details><summary>Every group (" << r.groups.size() << ") and what was read</summary>\n";
  s << "<p>e = max(|a &#8722; A|, |b &#8722; B|) / (u&#183;&#961;&#183;max(1, |g|)) per rotated pair (docs/design.md, Error metric); "
       "horizon = largest tested position up to which every check passed; worst ulp only where the group is judged in ulp.</p>\n";
  s << "<p>golden: <code>";
  for (std::size_t i = 0; i < r.golden_files.size(); ++i) s << (i ? ", " : "") << xml_escape(r.golden_files[i]);
  s << "</code></p>\n";
  bool any_rope = false, any_attention = false;
  for (const GroupResult& g : r.groups) (g.attention ? any_attention : any_rope) = true;
  if (any_rope) {
    s << "<table>\n<tr><th class=\"l\">group</th><th class=\"l\">spec</th><th>tests</th><th>failed</th><th>skipped</th><th>worst e</th>"
         "<th>worst ulp</th><th>horizon</th><th>verdict</th></tr>\n";
    for (const GroupResult& g : r.groups) {
      if (g.attention) continue;
      s << "<tr><td class=\"l\"><a href=\"#" << xml_escape(group_anchor(g)) << "\">" << xml_escape(group_name(g)) << "</a></td><td class=\"l spec\"><code>"
        << xml_escape(g.spec) << "</code></td><td>" << g.tests << "</td><td>" << g.tests_failed << "</td><td>" << g.tests_skipped
        << "</td><td>" << xml_escape(fixed(g.worst_e)) << "</td><td>" << xml_escape(worst_ulp_text(g)) << "</td><td>"
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
  for (const GroupResult* g : others) group_section(s, *g);
  s << "</details>\n";
  for (const std::string& n : r.notes) s << "<p>note: " << xml_escape(n) << "</p>\n";
  s << "</body>\n</html>\n";
  return s.str();
}

}  // namespace ropecheck::gate
