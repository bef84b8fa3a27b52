#include "judge/verdict.h"

namespace ropecheck::judge {

RunVerdict run_verdict(std::span<const GroupResult> groups, int identities_failed, int identities_judged) {
  bool any_fail = identities_failed > 0, any_judged = identities_judged > 0;
  for (const GroupResult& g : groups) {
    any_fail = any_fail || g.verdict == Verdict::fail;
    any_judged = any_judged || g.verdict == Verdict::pass;
  }
  RunVerdict v;
  v.judged_nothing = !any_judged && !any_fail;
  v.pass = !any_fail && any_judged;
  return v;
}

std::vector<ExplanationLine> distinct_explanations(std::span<const GroupResult> groups) {
  std::vector<ExplanationLine> lines;
  std::vector<const std::string*> headlines;  // of each line
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GroupResult& g = groups[i];
    if (g.verdict != Verdict::fail || !g.diagnosis || g.diagnosis->explanation.empty()) continue;
    const std::string& headline = g.diagnosis->headline.empty() ? g.diagnosis->explanation : g.diagnosis->headline;
    std::size_t k = 0;
    while (k < lines.size() && *headlines[k] != headline) ++k;
    if (k == lines.size()) {
      lines.push_back({g.diagnosis->explanation, {}});
      headlines.push_back(&headline);
    }
    lines[k].groups.push_back(i);
  }
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (lines[k].groups.size() > 1) lines[k].text = std::to_string(lines[k].groups.size()) + " groups: " + *headlines[k];
  }
  return lines;
}

}  // namespace ropecheck::judge
