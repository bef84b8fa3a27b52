// The options every judging command takes (judge/README.md "Options every judging command takes"),
// as the command line (gate/commands/judge_options.h) and Python's keywords (python/) give them,
// and their one parse into the judge's settings (judge/settings.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gate/report.h"
#include "judge/settings.h"
#include "judge/tolerance.h"

namespace ropecheck::gate {

// The words settings_of parses, and the settings the options that need no parsing are written into
// (--max-position, --require-horizon, --threads, --strict-zeros, --worst, --allow-missing).
// The words are kept as given: the replay line of `check` repeats them.
struct JudgeArguments {
  std::string model = std::string(judge::name(judge::kDefaultModel));  // judge/tolerance.h parse_model
  std::string tolerance;                                               // the one grammar: judge/tolerance.h parse_tolerance
  std::string skip_flags;  // comma-separated golden flags
  judge::Settings settings;
};

// The settings of a judgement: `args.settings` with the claims, the attention bounds and the skip
// flags of the words, each option checked against its range. Throws UsageError naming the option
// and what was expected. Called once per command, before any work.
judge::Settings settings_of(const JudgeArguments& args);
std::vector<std::string> split_list(const std::string& text);
// What the report shows of the settings and of what they skipped.
JudgedScope scope_of(const judge::Settings& settings, std::int64_t skipped_by_flags, std::int64_t skipped_by_position);

}  // namespace ropecheck::gate
