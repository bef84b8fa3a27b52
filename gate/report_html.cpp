#include "gate/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "gate/report_parts.h"
#include "judge/verdict.h"
#include "reference/rounding.h"

namespace ropecheck::gate {
using namespace report_detail;

namespace {

// ---- Numbers ------------------------------------------------------------------------------------

// The shortest decimal that reads back as `v` in the format it is a value of: binary32 for a value
// of an f32, f16 or bf16 group that binary32 holds, binary64 otherwise (std::to_chars' shortest
// round trip). "NaN", "+inf", "-inf"; a negative zero is "-0".
std::string decimal(double v, Dtype dtype) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
  char buffer[64];
  const std::to_chars_result r = dtype != Dtype::f64 && static_cast<double>(static_cast<float>(v)) == v
                                     ? std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(v))
                                     : std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, r.ptr);
}

// One value in a table: its decimal, never broken across lines (class n), with the exact hex float
// and, for a value of the group's dtype, its bit pattern on hover.
std::string number_html(double v, Dtype dtype) {
  std::string title = reference::to_hex(v);
  if (!std::isnan(v) && reference::representable(v, dtype)) {
    const int digits = dtype == Dtype::f64 ? 16 : dtype == Dtype::f32 ? 8 : 4;
    char bits[40];
    std::snprintf(bits, sizeof bits, "%0*llx", digits, static_cast<unsigned long long>(reference::encode_bits(v, dtype)));
    title += " = " + std::string(ropecheck::name(dtype)) + " bits 0x" + bits;
  }
  return "<span class=\"n\" title=\"" + xml_escape(title) + "\">" + xml_escape(decimal(v, dtype)) + "</span>";
}

// A spec, breakable only after its commas (never inside a field or a number).
std::string spec_html(const std::string& spec) {
  std::string out;
  for (const char ch : spec) out += ch == ',' ? std::string(",<wbr/>") : xml_escape(std::string(1, ch));
  return out;
}

std::string pair_html(double a, double b, Dtype dtype) { return number_html(a, dtype) + ", " + number_html(b, dtype); }

// ---- What differs where the pair rule measures no e ---------------------------------------------

std::string signed_infinity(double v) { return v > 0 ? "+inf" : "-inf"; }

// What separates a got value from the expected one when no error is measured (judge/pair_rule.h:
// special values, signed zeros with --strict-zeros, pass-through dims): "" when they agree.
std::string what_differs(double expected, double got) {
  const bool expected_nan = std::isnan(expected), got_nan = std::isnan(got);
  if (expected_nan && got_nan) return "";
  if (expected_nan) return "NaN expected, got " + (std::isinf(got) ? signed_infinity(got) : std::string("finite"));
  if (got_nan) return (std::isinf(expected) ? signed_infinity(expected) : std::string("finite")) + " expected, got NaN";
  if (std::isinf(expected) && std::isinf(got)) return expected == got ? "" : "sign of infinity differs";
  if (std::isinf(expected)) return signed_infinity(expected) + " expected, got finite";
  if (std::isinf(got)) return "finite expected, got " + signed_infinity(got);
  if (expected == got) return std::signbit(expected) != std::signbit(got) ? "sign of zero differs" : "";
  return "value differs";
}

// The same for a case: per component, named by its dim when the case is a pair; the rule's own
// message when no component differs by class (it then says why the case failed).
std::string case_differs(const Case& c) {
  std::vector<std::string> parts;
  const double expected[2] = {c.expected_a, c.expected_b}, got[2] = {c.got_a, c.got_b};
  const int dims[2] = {c.dim, c.second_dim};
  for (int k = 0; k < (c.second_dim >= 0 ? 2 : 1); ++k) {
    const std::string d = what_differs(expected[k], got[k]);
    if (d.empty()) continue;
    parts.push_back(c.second_dim >= 0 ? "dim " + std::to_string(dims[k]) + ": " + d : d);
  }
  if (parts.empty()) return c.message;
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

// ---- Plots --------------------------------------------------------------------------------------

// An SVG plot: the frame, its axes (tick values, grid lines, titles) and a legend right of the plot
// area. Ticks are placed at fractions of the axis, 0 at the left or bottom.
struct Frame {
  double width = 960, height = 250, left = 68, right = 330, top = 12, bottom = 46;
  double plot_w() const { return width - left - right; }
  double plot_h() const { return height - top - bottom; }
  double x(double fraction) const { return left + plot_w() * fraction; }
  double y(double fraction) const { return top + plot_h() * (1 - fraction); }
};
struct Tick {
  double at = 0;
  std::string label;  // XML text (entities allowed)
};
enum class Mark { line, dashed, dot };
struct LegendItem {
  Mark mark = Mark::dot;
  std::string colour, label;  // XML text
  std::string detail;         // XML text, a second line under the label ("" for none)
};

// "0.01", "1", "100" for decades within 10^±2, "1e-4", "1e8" beyond.
std::string decade_label(int k) {
  if (k >= 0 && k <= 2) return std::to_string(static_cast<int>(std::lround(std::pow(10.0, k))));
  if (k == -1) return "0.1";
  if (k == -2) return "0.01";
  return "1e" + std::to_string(k);
}

void open_svg(std::ostringstream& s, const Frame& f, const std::string& css_class, const std::string& label) {
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << f.width << "\" height=\"" << f.height << "\" viewBox=\"0 0 " << f.width
    << " " << f.height << "\" role=\"img\" class=\"" << css_class << "\" aria-label=\"" << xml_escape(label) << "\">\n";
  s << "<rect x=\"" << f.left << "\" y=\"" << f.top << "\" width=\"" << f.plot_w() << "\" height=\"" << f.plot_h()
    << "\" fill=\"#fafafa\" stroke=\"#888\"/>\n";
}

void draw_axes(std::ostringstream& s, const Frame& f, const std::vector<Tick>& x_ticks, const std::string& x_title,
               const std::vector<Tick>& y_ticks, const std::string& y_title) {
  const double bottom = f.top + f.plot_h();
  for (const Tick& t : x_ticks) {
    const double x = f.x(t.at);
    s << "<line x1=\"" << x << "\" y1=\"" << f.top << "\" x2=\"" << x << "\" y2=\"" << bottom + 4 << "\" stroke=\"#e2e2e2\"/><line x1=\""
      << x << "\" y1=\"" << bottom << "\" x2=\"" << x << "\" y2=\"" << bottom + 4 << "\" stroke=\"#666\"/>\n<text x=\"" << x << "\" y=\""
      << bottom + 16 << "\" font-size=\"11\" text-anchor=\"middle\">" << t.label << "</text>\n";
  }
  for (const Tick& t : y_ticks) {
    const double y = f.y(t.at);
    s << "<line x1=\"" << f.left - 4 << "\" y1=\"" << y << "\" x2=\"" << f.left + f.plot_w() << "\" y2=\"" << y
      << "\" stroke=\"#e2e2e2\"/><line x1=\"" << f.left - 4 << "\" y1=\"" << y << "\" x2=\"" << f.left << "\" y2=\"" << y
      << "\" stroke=\"#666\"/>\n<text x=\"" << f.left - 7 << "\" y=\"" << y + 4 << "\" font-size=\"11\" text-anchor=\"end\">" << t.label
      << "</text>\n";
  }
  s << "<text class=\"axis\" x=\"" << f.x(0.5) << "\" y=\"" << f.height - 6 << "\" font-size=\"12\" text-anchor=\"middle\">" << x_title
    << "</text>\n";
  const double mid = f.top + f.plot_h() / 2;
  s << "<text class=\"axis\" x=\"14\" y=\"" << mid << "\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 " << mid
    << ")\">" << y_title << "</text>\n";
}

// The legend, one item per line right of the plot area.
void draw_legend(std::ostringstream& s, const Frame& f, const std::vector<LegendItem>& items) {
  const double x = f.left + f.plot_w() + 16;
  double y = f.top + 12;
  for (const LegendItem& item : items) {
    if (item.mark == Mark::dot) {
      s << "<circle cx=\"" << x + 9 << "\" cy=\"" << y - 4 << "\" r=\"3\" fill=\"" << item.colour << "\"/>";
    } else {
      s << "<line x1=\"" << x << "\" y1=\"" << y - 4 << "\" x2=\"" << x + 18 << "\" y2=\"" << y - 4 << "\" stroke=\"" << item.colour
        << "\" stroke-width=\"2\"" << (item.mark == Mark::dashed ? " stroke-dasharray=\"6 3\"" : "") << "/>";
    }
    s << "<text x=\"" << x + 24 << "\" y=\"" << y << "\" font-size=\"12\">" << item.label << "</text>\n";
    if (!item.detail.empty()) {
      y += 15;
      s << "<text x=\"" << x + 24 << "\" y=\"" << y << "\" font-size=\"11\" fill=\"#555\">" << item.detail << "</text>\n";
    }
    y += 20;
  }
}

// The explanation's frequency plot: θ'_j of the spec (a line) and θ̂_j fitted from the candidate's
// own angles (points; red where they differ by more than 1 %), against the pair index j, θ on a
// log scale. Empty when no frequency was fitted.
std::string svg_frequency_plot(const judge::GroupDiagnosis& d) {
  double lo = 0, hi = 0;
  bool any = false, fitted = false;
  for (const judge::GroupDiagnosis::Frequency& f : d.frequencies) {
    fitted |= f.fitted > 0 && std::isfinite(f.fitted);
    for (double v : {f.expected, f.fitted}) {
      if (!(v > 0) || !std::isfinite(v)) continue;
      lo = any ? std::min(lo, std::log10(v)) : std::log10(v);
      hi = any ? std::max(hi, std::log10(v)) : std::log10(v);
      any = true;
    }
  }
  if (!any || !fitted || d.frequencies.size() < 2) return "";
  lo = std::floor(lo), hi = std::max(lo + 1, std::ceil(hi));
  const Frame f;
  const double n = static_cast<double>(d.frequencies.size() - 1);
  auto px = [&](double j) { return f.x(j / n); };
  auto py = [&](double v) { return std::clamp(f.y((std::log10(v) - lo) / (hi - lo)), f.top, f.top + f.plot_h()); };
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  open_svg(s, f, "frequencies", "frequency per pair index: the spec's and the one fitted from the outputs");
  std::vector<Tick> x_ticks, y_ticks;
  int x_step = 1;
  while (n / x_step > 8) x_step *= 2;
  for (int j = 0; j <= static_cast<int>(n); j += x_step) x_ticks.push_back({j / n, std::to_string(j)});
  const int y_step = std::max(1, static_cast<int>(std::ceil((hi - lo) / 8)));
  for (int k = static_cast<int>(lo); k <= static_cast<int>(hi); k += y_step) y_ticks.push_back({(k - lo) / (hi - lo), decade_label(k)});
  draw_axes(s, f, x_ticks, "pair index j", y_ticks,
            "&#952;<tspan font-size=\"9\" dy=\"3\">j</tspan><tspan dy=\"-3\"> (radians per position, log scale)</tspan>");
  draw_legend(s, f,
              {{Mark::line, "#36c", "the spec's &#952;&#8242;<tspan font-size=\"9\" dy=\"3\">j</tspan>", ""},
               {Mark::dot, "#2a7", "fitted from the outputs, within 1 %", "from the candidate's own angles"},
               {Mark::dot, "#d22", "fitted, off by more than 1 %", ""}});
  s << "<polyline fill=\"none\" stroke=\"#36c\" stroke-width=\"1.5\" points=\"";
  for (const judge::GroupDiagnosis::Frequency& q : d.frequencies) {
    if (q.expected > 0) s << px(q.pair) << "," << py(q.expected) << " ";
  }
  s << "\"/>\n";
  for (const judge::GroupDiagnosis::Frequency& q : d.frequencies) {
    if (!(q.fitted > 0) || !std::isfinite(q.fitted)) continue;
    const bool off = std::fabs(q.fitted / q.expected - 1) > 0.01;
    s << "<circle cx=\"" << px(q.pair) << "\" cy=\"" << py(q.fitted) << "\" r=\"2.5\" fill=\"" << (off ? "#d22" : "#2a7") << "\"/>\n";
  }
  s << "</svg>\n";
  return s.str();
}

// The bound's legend item. A bound growing with the angle (f32-angle, judge/tolerance.h) is
// e ≤ e_c + |φ|·η/u, φ = m·θ'_j: drawn for the group's largest frequency, where it grows fastest.
LegendItem bound_legend(const GroupResult& g) {
  LegendItem item{Mark::dashed, "#c60", "", ""};
  if (g.attention) {
    item.label = "bound: e / its bound = 1";
  } else if (g.tolerance.per_radian > 0) {
    item.label =
        "bound " + metric_name(g) + " &#8804; e<tspan font-size=\"9\" dy=\"3\">c</tspan><tspan dy=\"-3\"> + |&#966;|&#183;&#951;/u</tspan>";
    item.detail = "= " + fixed(g.tolerance.value) + " + " + fixed(g.tolerance.per_radian) +
                  "&#183;|&#966;|, drawn for the largest &#952;<tspan font-size=\"8\" dy=\"3\">j</tspan>";
  } else {
    item.label = "bound " + metric_name(g) + " &#8804; " + fixed(g.tolerance.value);
  }
  return item;
}

// e (or ULP) against position, both on log scales: x = log2(1 + position), y = log10(metric) clamped
// to [10^-2, 10^8] (attention: e / bound in [10^-4, 10^8]); the bound is a dashed line; failing
// points are red; where accuracy first fails, the horizon is a vertical line.
std::string svg_plot(const GroupResult& g) {
  const Frame f;
  double max_x = 1;
  for (const Point& p : g.points) max_x = std::max(max_x, std::log2(1.0 + std::max<std::int64_t>(p.position, 0)));
  max_x = std::ceil(max_x);
  const double y_min = g.attention ? -4 : -2, y_max = 8;
  auto px = [&](double position) { return f.x(std::log2(1.0 + std::max(position, 0.0)) / max_x); };
  auto py = [&](double metric) {
    double l = metric > 0 ? std::log10(metric) : y_min;
    if (!std::isfinite(l)) l = y_max;
    return f.y((std::clamp(l, y_min, y_max) - y_min) / (y_max - y_min));
  };
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  const std::string metric = g.attention ? "e / bound" : metric_name(g);
  open_svg(s, f, "errors", metric + " against position");
  std::vector<Tick> x_ticks, y_ticks;
  const int step = std::max(1, static_cast<int>(std::ceil(max_x / 8)));
  for (int k = 0; k <= static_cast<int>(max_x); k += step) x_ticks.push_back({k / max_x, "2^" + std::to_string(k)});
  for (int k = static_cast<int>(y_min); k <= static_cast<int>(y_max); k += 2) {
    y_ticks.push_back({(k - y_min) / (y_max - y_min), decade_label(k)});
  }
  const std::string y_title = g.attention     ? "score or output e / its bound (log scale)"
                              : metric == "e" ? "worst e per token, in u&#183;&#961; (log scale)"
                                              : "worst ulp per token (log scale)";
  draw_axes(s, f, x_ticks, "position + 1 (log scale)", y_ticks, y_title);
  std::vector<LegendItem> legend{bound_legend(g), {Mark::dot, "#2a7", "within the bound", ""}, {Mark::dot, "#d22", "out of the bound", ""}};
  const bool horizon_line = !g.attention && g.horizon && !g.horizon_complete;
  if (horizon_line) legend.push_back({Mark::line, "#777", "horizon " + std::to_string(*g.horizon), "accuracy holds up to this position"});
  draw_legend(s, f, legend);
  const double value = g.attention ? 1.0 : g.tolerance.value;
  if (!g.attention && g.tolerance.per_radian > 0 && g.max_frequency > 0) {
    s << "<polyline fill=\"none\" stroke=\"#c60\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\" points=\"";
    for (int i = 0; i <= 64; ++i) {
      const double position = std::exp2(max_x * i / 64.0) - 1;
      s << px(position) << "," << py(value + g.tolerance.per_radian * g.max_frequency * position) << " ";
    }
    s << "\"/>\n";
  } else {
    s << "<line x1=\"" << f.left << "\" y1=\"" << py(value) << "\" x2=\"" << f.left + f.plot_w() << "\" y2=\"" << py(value)
      << "\" stroke=\"#c60\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"/>\n";
  }
  if (horizon_line) {
    const double x = px(static_cast<double>(*g.horizon));
    s << "<line x1=\"" << x << "\" y1=\"" << f.top << "\" x2=\"" << x << "\" y2=\"" << f.top + f.plot_h() << "\" stroke=\"#777\"/>\n";
  }
  for (const Point& p : g.points) {
    s << "<circle cx=\"" << px(static_cast<double>(p.position)) << "\" cy=\"" << py(p.e) << "\" r=\"2.5\" fill=\""
      << (p.pass ? "#2a7" : "#d22") << "\"/>\n";
  }
  s << "</svg>\n";
  return s.str();
}

// ---- Groups -------------------------------------------------------------------------------------

// One worst case as a table row: test, kind, position, token, head, dims, then input, expected,
// got, e, ulp. A whole-test case (no element) is its message across the five value columns; a
// case without a measured error (special values, signed zeros, pass-through) says what differs
// across e and ulp, the rule's message on hover.
void case_row(std::ostringstream& s, const Case& c, Dtype dtype) {
  s << "<tr><td>" << c.test_id << "</td><td class=\"l\">" << xml_escape(std::string(judge::name(c.kind))) << "</td><td>" << c.position
    << "</td><td>" << c.token << "</td><td>" << c.head << "</td><td>"
    << (c.dim < 0 ? std::string("-") : std::to_string(c.dim) + (c.second_dim >= 0 ? "," + std::to_string(c.second_dim) : "")) << "</td>";
  if (c.dim < 0) {
    s << "<td class=\"l\" colspan=\"5\">" << xml_escape(c.message) << "</td></tr>\n";
    return;
  }
  const bool measured = c.kind == judge::CaseKind::tolerance;
  auto differs = [&] {
    s << "<td class=\"l differs\" colspan=\"2\" title=\"" << xml_escape(c.message) << "\">" << xml_escape(case_differs(c))
      << "</td></tr>\n";
  };
  if (!c.quantity.empty()) {  // one attention value
    s << "<td class=\"l\">" << xml_escape(c.message) << "</td><td class=\"l\">" << number_html(c.expected_a, dtype)
      << "</td><td class=\"l\">" << number_html(c.got_a, dtype) << "</td>";
    if (!measured) return differs();
    s << "<td>" << xml_escape(fixed(c.e)) << "</td><td>-</td></tr>\n";
    return;
  }
  if (c.second_dim < 0) {  // one element: a pass-through dim
    s << "<td class=\"l\">" << number_html(c.input_x, dtype) << "</td><td class=\"l\">" << number_html(c.expected_a, dtype)
      << "</td><td class=\"l\">" << number_html(c.got_a, dtype) << "</td>";
  } else {
    s << "<td class=\"l\">" << pair_html(c.input_x, c.input_y, dtype) << "</td><td class=\"l\">"
      << pair_html(c.expected_a, c.expected_b, dtype) << "</td><td class=\"l\">" << pair_html(c.got_a, c.got_b, dtype) << "</td>";
  }
  if (!measured) return differs();
  s << "<td>" << xml_escape(fixed(c.e)) << "</td><td>" << xml_escape(fixed(c.ulp)) << "</td></tr>\n";
}

// One group in full: its spec and bound, diagnosis, plots and worst cases.
void group_section(std::ostringstream& s, const GroupResult& g) {
  s << "<h2 id=\"" << xml_escape(group_anchor(g)) << "\">" << xml_escape(group_name(g)) << " <span class=\""
    << xml_escape(std::string(judge::name(g.verdict))) << "\">" << xml_escape(std::string(judge::name(g.verdict))) << "</span></h2>\n";
  if (g.attention) {
    s << "<p><code class=\"spec\">" << spec_html(g.spec) << "</code><br/>score e &#8804; "
      << xml_escape(fixed(g.attention->score_tolerance)) << " (" << xml_escape(g.attention->score_source)
      << ")<br/>output e &#8804; its row's bound, " << xml_escape(attention_cells(*g.attention).output_range) << " ("
      << xml_escape(g.attention->output_source) << ")</p>\n";
  } else {
    s << "<p><code class=\"spec\">" << spec_html(g.spec) << "</code><br/>tolerance " << xml_escape(tolerance_text(g)) << " ("
      << xml_escape(g.tolerance.source) << ")";
    const std::string edge = edge_summary(g);
    if (!edge.empty()) s << "<br/>edge cases: " << xml_escape(edge);
    if (!g.verdict_reason.empty()) s << "<br/>" << xml_escape(g.verdict_reason);
    s << "</p>\n";
    if (g.diagnosis) {
      s << "<ul class=\"diagnosis\">";
      for (const std::string& line : g.diagnosis->lines) s << "<li>" << xml_escape(line) << "</li>";
      s << "</ul>\n";
    }
  }
  s << svg_plot(g);
  if (g.diagnosis && g.verdict == judge::Verdict::fail) s << svg_frequency_plot(*g.diagnosis);
  if (g.worst.empty()) return;
  s << "<table class=\"cases\">\n<tr><th>test</th><th class=\"l\">kind</th><th>position</th><th>token</th><th>head</th><th>dims</th>"
       "<th class=\"l\">input</th><th class=\"l\">expected</th><th class=\"l\">got</th><th>e</th><th>ulp</th></tr>\n";
  for (const Case& c : g.worst) case_row(s, c, g.dtype);
  s << "</table>\n";
}

// ---- The first screen ---------------------------------------------------------------------------

// What the claim holds the outputs to (judge/tolerance.h Model), one sentence.
const char* claim_html(Model model) {
  switch (model) {
    case Model::exact:
      return "the true rotation: every output within a constant bound of the exact value";
    case Model::f32_angle:
      return "the angle computed in binary32 (frequencies within k ulps of &#952;&#8242;<sub>j</sub>, position and angle rounded to "
             "binary32, faithful cos/sin, a careful rotation): every output within e &#8804; e<sub>c</sub> + "
             "|&#966;|&#183;&#951;/u of the exact value, a bound that grows with the angle &#966; = m&#183;&#952;&#8242;<sub>j</sub>";
    case Model::f32_recipe:
      return "the float32 recipe with &#952;&#8242;<sub>j</sub> correctly rounded to binary32: every output within a constant "
             "bound of that recipe's correctly rounded result";
  }
  return "";
}

std::string group_link(const GroupResult& g) {
  return "<a href=\"#" + xml_escape(group_anchor(g)) + "\">" + xml_escape(group_name(g)) + "</a>";
}

constexpr std::size_t kUnexplainedListed = 3;   // failing groups without an explanation listed one per line, at most
constexpr std::size_t kUnexplainedLinked = 10;  // ... linked from their one line when there are more

// What fails in a group that no explanation names: its first diagnosis line, else its edge
// failures, else why its verdict is what it is.
std::string failure_summary(const GroupResult& g) {
  const std::string edge = edge_summary(g);
  if (g.ordinary_failed == 0 && !edge.empty()) return edge;
  if (g.diagnosis && !g.diagnosis->lines.empty()) return g.diagnosis->lines.front();
  if (!edge.empty()) return edge;
  if (!g.verdict_reason.empty()) return g.verdict_reason;
  return std::to_string(g.tests_failed) + " failing test(s): " + join_ids(failed_ids(g));
}

// Why the run fails: one line per distinct explanation (judge/verdict.h) with the groups it
// covers; the failing groups no explanation covers; the identities that fail.
void explanation_box(std::ostringstream& s, const Report& r) {
  s << "<div class=\"explain\">\n<h2>Why it fails</h2>\n<ul>\n";
  std::vector<bool> explained(r.groups.size(), false);
  for (const judge::ExplanationLine& line : judge::distinct_explanations(r.groups)) {
    s << "<li>" << xml_escape(line.text) << " <span class=\"covers\">(";
    for (std::size_t k = 0; k < line.groups.size(); ++k) {
      s << (k ? ", " : "") << group_link(r.groups[line.groups[k]]);
      explained[line.groups[k]] = true;
    }
    s << ")</span></li>\n";
  }
  std::vector<const GroupResult*> unexplained;
  for (std::size_t i = 0; i < r.groups.size(); ++i) {
    if (r.groups[i].verdict == judge::Verdict::fail && !explained[i]) unexplained.push_back(&r.groups[i]);
  }
  // Failing groups no explanation names: each with what fails in it when they are few, else in one line.
  if (!unexplained.empty() && unexplained.size() <= kUnexplainedListed) {
    for (const GroupResult* g : unexplained) s << "<li>" << group_link(*g) << ": " << xml_escape(failure_summary(*g)) << "</li>\n";
  } else if (!unexplained.empty()) {
    s << "<li>" << unexplained.size() << " failing groups with no explanation named; their diagnosis and worst cases are below (";
    for (std::size_t k = 0; k < unexplained.size() && k < kUnexplainedLinked; ++k) s << (k ? ", " : "") << group_link(*unexplained[k]);
    if (unexplained.size() > kUnexplainedLinked) s << ", ... " << unexplained.size() - kUnexplainedLinked << " more";
    s << ")</li>\n";
  }
  for (const PropertyResult& p : r.properties) {
    if (p.holds || p.gave_up) continue;
    s << "<li>identity <code>" << xml_escape(p.name) << "</code> fails: " << xml_escape(p.failure) << "</li>\n";
  }
  s << "</ul>\n</div>\n";
}

// The figures of the "what was checked" box, summed over the groups.
struct Checked {
  std::int64_t groups = 0, attention = 0, judged = 0, failed = 0, skipped = 0;
  std::int64_t tests = 0, tests_failed = 0, tests_skipped = 0;
  std::int64_t max_position = -1;
  const GroupResult* lowest_horizon = nullptr;  // the judged group whose accuracy fails lowest
  const GroupResult* closest = nullptr;         // the judged RoPE group whose error comes closest to its bound
  bool every_horizon_complete = true;
  std::map<std::string, std::map<Dtype, int>> bounds;  // tolerance text -> judged RoPE groups held to it, per dtype
};

Checked checked_figures(const Report& r) {
  Checked c;
  for (const GroupResult& g : r.groups) {
    ++c.groups;
    c.attention += g.attention ? 1 : 0;
    c.tests += g.tests, c.tests_failed += g.tests_failed, c.tests_skipped += g.tests_skipped;
    if (g.verdict == judge::Verdict::skip) {
      ++c.skipped;
      continue;
    }
    ++c.judged;
    c.failed += g.verdict == judge::Verdict::fail;
    c.max_position = std::max(c.max_position, g.max_position);
    if (g.attention) continue;
    if (g.ordinary_checked > 0 && (!c.closest || g.worst_margin > c.closest->worst_margin)) c.closest = &g;
    ++c.bounds[tolerance_text(g)][g.dtype];
    if (g.max_position < 0 || g.horizon_complete) continue;
    c.every_horizon_complete = false;
    const std::int64_t h = g.horizon.value_or(-1);
    if (!c.lowest_horizon || h < c.lowest_horizon->horizon.value_or(-1)) c.lowest_horizon = &g;
  }
  return c;
}

// "1 golden file (interleaved-f32-base10000.json)": the files' names when there are at most 3.
std::string golden_files_text(const Report& r) {
  std::string text = std::to_string(r.golden_files.size()) + " golden file(s)";
  if (r.golden_files.empty() || r.golden_files.size() > 3) return text;
  text += " (";
  for (std::size_t i = 0; i < r.golden_files.size(); ++i) {
    const std::string& path = r.golden_files[i];
    text += (i ? ", " : "") + path.substr(path.find_last_of('/') + 1);
  }
  return xml_escape(text + ")");
}

// What was judged, on every page: the groups and tests, the positions and horizon, the claim and
// its bounds, the identities, the options that narrowed the judging.
void checked_box(std::ostringstream& s, const Report& r) {
  const Checked c = checked_figures(r);
  s << "<div class=\"checked\">\n<h2>What was checked</h2>\n<ul>\n";
  s << "<li><b>" << c.groups << " group(s)</b>" << (c.attention > 0 ? " (" + std::to_string(c.attention) + " of attention)" : "")
    << " from " << golden_files_text(r) << ": " << c.judged << " judged, " << c.failed << " failed, " << c.skipped << " skipped</li>\n";
  s << "<li><b>" << c.tests << " test(s)</b>: " << c.tests - c.tests_failed - c.tests_skipped << " passed, " << c.tests_failed
    << " failed, " << c.tests_skipped << " skipped" << xml_escape(skipped_detail(r.scope)) << "</li>\n";
  if (c.max_position >= 0) {
    s << "<li><b>positions up to " << c.max_position << "</b>; ";
    if (c.every_horizon_complete) {
      s << "horizon: every judged position is within its bound in every group</li>\n";
    } else if (c.lowest_horizon->horizon) {
      s << "horizon: accuracy holds in every group up to position " << *c.lowest_horizon->horizon << " (first failure above it in "
        << group_link(*c.lowest_horizon) << ")</li>\n";
    } else {
      s << "horizon: none, accuracy fails at the lowest judged position of " << group_link(*c.lowest_horizon) << "</li>\n";
    }
  }
  if (c.closest) {
    s << "<li><b>closest to the bound</b>: " << group_link(*c.closest) << ", its largest " << metric_name(*c.closest) << " / bound "
      << xml_escape(fixed(c.closest->worst_margin)) << " (over " << c.closest->ordinary_checked << " ordinary pairs)</li>\n";
  }
  s << "<li><b>claim " << xml_escape(std::string(name(r.model))) << "</b>: " << claim_html(r.model);
  for (const auto& [bound, per_dtype] : c.bounds) {
    int groups = 0;
    std::string dtypes;
    for (const auto& [dtype, count] : per_dtype) {
      groups += count;
      dtypes += (dtypes.empty() ? "" : ", ") + std::string(ropecheck::name(dtype)) + " " + std::to_string(count);
    }
    s << "<br/><code>" << xml_escape(bound) << "</code>: " << groups << " group(s) (" << xml_escape(dtypes) << ")";
  }
  s << "</li>\n";
  if (r.properties.empty()) {
    s << "<li><b>identities</b>: none run</li>\n";
  } else {
    int hold = 0, skipped = 0;
    for (const PropertyResult& p : r.properties) {
      if (p.gave_up && !p.holds)
        ++skipped;
      else if (p.holds)
        ++hold;
    }
    s << "<li><b>identities</b>: " << hold << " of " << r.properties.size() << " hold"
      << (skipped > 0 ? ", " + std::to_string(skipped) + " skipped" : "") << "</li>\n";
  }
  std::vector<std::string> options;
  if (r.scope.max_position) options.push_back("--max-position " + std::to_string(*r.scope.max_position));
  if (r.scope.require_horizon) options.push_back("--require-horizon " + std::to_string(*r.scope.require_horizon));
  for (const std::string& flag : r.scope.skip_flags) options.push_back("--skip-flags " + flag);
  if (r.scope.strict_zeros) options.push_back("--strict-zeros");
  if (!options.empty()) {
    s << "<li><b>options</b>:";
    for (const std::string& o : options) s << " <code>" << xml_escape(o) << "</code>";
    s << "</li>\n";
  }
  s << "</ul>\n</div>\n";
}

// "identity NAME: holds|fails|skipped (N cases) FAILURE".
void identity_line(std::ostringstream& s, const PropertyResult& p) {
  const bool skipped = p.gave_up && !p.holds;
  const char* status = skipped ? "skip" : p.holds ? "pass" : "fail";
  const char* word = skipped ? "skipped" : p.holds ? "holds" : "fails";
  s << "<p class=\"identity\">identity <code>" << xml_escape(p.name) << "</code>: <span class=\"" << status << "\">" << word << "</span> ("
    << p.cases << " cases) " << xml_escape(p.failure) << "</p>\n";
  if (!p.replay.empty()) s << "<p>replay: <code>" << xml_escape(p.replay) << "</code></p>\n";
}

void summary_grid_table(std::ostringstream& s, const Report& r) {
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

// ---- Every group, folded ------------------------------------------------------------------------

void group_tables(std::ostringstream& s, const Report& r) {
  bool any_rope = false, any_attention = false;
  for (const GroupResult& g : r.groups) (g.attention ? any_attention : any_rope) = true;
  if (any_rope) {
    s << "<table>\n<tr><th class=\"l\">group</th><th class=\"l\">spec</th><th>tests</th><th>failed</th><th>skipped</th><th>worst e</th>"
         "<th>worst ulp</th><th>horizon</th><th>verdict</th></tr>\n";
    for (const GroupResult& g : r.groups) {
      if (g.attention) continue;
      s << "<tr><td class=\"l\">" << group_link(g) << "</td><td class=\"l spec\"><code class=\"spec\">" << spec_html(g.spec)
        << "</code></td><td>" << g.tests << "</td><td>" << g.tests_failed << "</td><td>" << g.tests_skipped << "</td><td>"
        << xml_escape(fixed(g.worst_e)) << "</td><td>" << xml_escape(worst_ulp_text(g)) << "</td><td>" << xml_escape(format_horizon(g))
        << "</td><td class=\"" << xml_escape(std::string(judge::name(g.verdict))) << "\">"
        << xml_escape(std::string(judge::name(g.verdict))) << "</td></tr>\n";
    }
    s << "</table>\n";
  }
  if (!any_attention) return;
  s << "<p>Attention: score e = |&#349; &#8722; s| / (u&#183;|c|&#183;&#8214;q<sub>i</sub>&#8214;&#183;&#8214;k<sub>j</sub>&#8214;), "
       "c = g&#178;/&#8730;d; output e = |&#244; &#8722; o| / (u&#183;max<sub>j</sub>|v<sub>j</sub>|) over the visible keys; "
       "the output bound is per (query, head) row (gate/README.md).</p>\n";
  s << "<table>\n<tr><th class=\"l\">attention group</th><th class=\"l\">spec</th><th>tests</th><th>failed</th><th>skipped</th>"
       "<th>score e</th><th>score tol</th><th>output e</th><th>output tol</th><th>verdict</th></tr>\n";
  for (const GroupResult& g : r.groups) {
    if (!g.attention) continue;
    const AttentionCells c = attention_cells(*g.attention);
    s << "<tr><td class=\"l\">" << group_link(g) << "</td><td class=\"l spec\"><code class=\"spec\">" << spec_html(g.spec)
      << "</code></td><td>" << g.tests << "</td><td>" << g.tests_failed << "</td><td>" << g.tests_skipped << "</td><td>"
      << xml_escape(c.score_e) << "</td><td>" << xml_escape(c.score_tol) << "</td><td>" << xml_escape(c.output_e) << "</td><td>"
      << xml_escape(c.output_tol) << "</td><td class=\"" << xml_escape(std::string(judge::name(g.verdict))) << "\">"
      << xml_escape(std::string(judge::name(g.verdict))) << "</td></tr>\n";
  }
  s << "</table>\n";
}

// Readable down to 900 px: numbers never break inside (class n, nowrap), long specs wrap at any
// character, wide tables scroll instead of widening the page, the plots scale down.
constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:1em;max-width:1100px}table{border-collapse:collapse;font-size:13px;"
    "display:block;overflow-x:auto;max-width:100%}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}"
    "td.l,th.l{text-align:left;white-space:normal}td.spec{max-width:360px;white-space:normal}code.spec{overflow-wrap:normal}code{font-size:"
    "12px}"
    ".n{white-space:nowrap;font-family:monospace;font-size:12px}td.differs{color:#a20;white-space:normal;min-width:14em}"
    "svg{max-width:100%;height:auto;display:block;margin:6px 0}.pass{color:#2a7}.fail{color:#d22;font-weight:bold}.skip{color:#888}"
    "div.explain{background:#fdecea;border-left:4px solid #d22;padding:4px 12px;margin:8px 0}"
    "div.checked{background:#eef5ee;border-left:4px solid #2a7;padding:4px 12px;margin:8px 0}"
    "div.explain h2,div.checked h2{font-size:16px;margin:6px 0}span.covers{color:#555;font-size:13px}"
    "p.identity{margin:2px 0}ul.diagnosis{background:#fff6e0;padding:6px 6px 6px 24px}";

}  // namespace

std::string to_html(const Report& r) {
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  s << "<title>" << xml_escape("ropecheck " + r.command + ": " + r.implementation) << "</title>\n";
  s << "<style>" << kStyle << "</style>\n</head>\n<body>\n";
  // The first screen: the verdict, the claim judged, why it fails (one line per distinct
  // explanation), what was checked; then each failing group in full, its plot first; every other
  // group and the inputs folded below.
  s << "<h1>ropecheck " << xml_escape(r.command) << ": <span class=\"" << xml_escape(std::string(judge::name(r.verdict))) << "\">"
    << xml_escape(std::string(judge::name(r.verdict))) << "</span></h1>\n";
  s << "<p>Implementation: <code>" << xml_escape(r.implementation) << "</code>; claim (model) <code>"
    << xml_escape(std::string(name(r.model))) << "</code>.</p>\n";
  std::vector<const GroupResult*> failing, others;
  for (const GroupResult& g : r.groups) (g.verdict == judge::Verdict::fail ? failing : others).push_back(&g);
  if (r.verdict == judge::Verdict::fail) explanation_box(s, r);
  checked_box(s, r);
  if (r.groups.size() > 1) summary_grid_table(s, r);
  if (!failing.empty()) {
    s << "<p>Failing groups:";
    for (const GroupResult* g : failing) s << " " << group_link(*g);
    s << "</p>\n";
  }
  for (const PropertyResult& p : r.properties) identity_line(s, p);
  for (const GroupResult* g : failing) group_section(s, *g);
  s << "<h2>Every group</h2>\n<p>e = max(|a &#8722; A|, |b &#8722; B|) / (u&#183;&#961;&#183;max(1, |g|)) per rotated pair "
       "(docs/design.md, Error metric); horizon = largest tested position up to which every check passed; worst ulp only where "
       "the group is judged in ulp. Values in the case tables are shortest decimals of their dtype; hover one for its hex float "
       "and bits.</p>\n";
  group_tables(s, r);
  if (!others.empty()) {
    s << "<details><summary>" << others.size() << " passing or skipped group(s) in full: plots and cases</summary>\n";
    for (const GroupResult* g : others) group_section(s, *g);
    s << "</details>\n";
  }
  for (const std::string& n : r.notes) s << "<p>note: " << xml_escape(n) << "</p>\n";
  s << "</body>\n</html>\n";
  return s.str();
}

}  // namespace ropecheck::gate
