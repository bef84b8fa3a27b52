#include "gate/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "gate/report_parts.h"
#include "reference/rounding.h"

namespace ropecheck::gate {
using namespace report_detail;

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
    if (g.verdict == judge::Verdict::fail) {
      ++failures;
      const auto ids = failed_ids(g);
      std::string text;
      for (const Case& c : g.worst) text += describe(c) + "\n";
      std::string worst = "worst " + metric_name(g) + " " + fixed(g.worst_e) + ", tolerance " + tolerance_text(g) + ", horizon " +
                          format_horizon(g);
      const std::string edge = edge_summary(g);
      if (!edge.empty()) worst += "; edge cases: " + edge;
      if (!g.verdict_reason.empty()) worst += "; " + g.verdict_reason;
      // Why, first: the explanation where one accounts for the outputs (judge/README.md "Explanation").
      std::string why;
      if (g.diagnosis && !g.diagnosis->explanation.empty()) why = g.diagnosis->explanation + "; ";
      if (g.diagnosis) {
        for (const std::string& line : g.diagnosis->lines) {
          if (line != g.diagnosis->explanation) worst += "; diagnosis: " + line;
        }
      }
      if (g.attention) {
        const AttentionCells c = attention_cells(*g.attention);
        worst = "worst score e " + c.score_e + " (tolerance " + c.score_tol + "), output e " + c.output_e +
                " (its row's tolerance " + c.output_tol + ")";
      }
      body << "   <failure type=\"accuracy\" message=\""
           << xml_escape(why + std::to_string(ids.size()) + " failing test(s): " + join_ids(ids) + "; " + worst + " (model " +
                         std::string(judge::name(r.model)) + ")")
           << "\">"
           << xml_escape(text) << "</failure>\n";
    } else if (g.verdict == judge::Verdict::skip) {
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
           << (p.replay.empty() ? std::string() : xml_escape("replay: " + p.replay + "\n")) << "</failure>\n";
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

}  // namespace ropecheck::gate
