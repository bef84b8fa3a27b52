// The verdict of a whole run (`check`, `run`, `sweep`, Python's check and gate, the GoogleTest
// matcher): written once here. A run fails when a group fails or an identity fails, and when
// nothing was judged — every group skipped and no identity run is not a pass.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "judge/group.h"

namespace ropecheck::judge {

// The note of a run that judged nothing (RunVerdict::judged_nothing): every report writes this one.
inline constexpr std::string_view kNothingJudgedNote = "nothing was judged: every test was skipped";

struct RunVerdict {
  bool pass = false;
  bool judged_nothing = false;  // every group skipped (unsupported, --skip-flags, --max-position) and no identity judged
};

// `identities_failed` / `identities_judged`: the identities of the catalog that ran (`--props`),
// not counting those that found no case the implementation supports.
RunVerdict run_verdict(std::span<const GroupResult> groups, int identities_failed = 0, int identities_judged = 0);

// What a run's failing groups are, said once per distinct explanation (judge/README.md
// "Explanation"): the line every route's summary prints — the CLI's text and JUnit, Python's
// summary and AssertionError, the GoogleTest matcher, the HTML's first box. Groups whose
// explanations share a headline (GroupDiagnosis::headline) are one line, "4 groups: your outputs
// are RoPE with base=10000 (expected 500000)"; a group alone keeps its whole sentence with its
// figures. Failing groups without an explanation are not listed. In order of each line's first
// group.
struct ExplanationLine {
  std::string text;
  std::vector<std::size_t> groups;  // indices into the run's groups
};
std::vector<ExplanationLine> distinct_explanations(std::span<const GroupResult> groups);

}  // namespace ropecheck::judge
