// The options every judging command takes (judge/README.md "Options every judging command takes"),
// as the command line gives them, and their one conversion into the judge's types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gate/report.h"
#include "judge/tolerance.h"
#include "runner/golden_run.h"
#include "runner/implementation.h"

namespace ropecheck::gate {

struct JudgeArguments {
  std::string model = std::string(judge::name(judge::kDefaultModel));  // judge/tolerance.h
  std::string tolerance;  // the one grammar: judge/tolerance.h parse_tolerance
  std::optional<std::int64_t> max_position;
  std::string skip_flags;  // comma-separated golden flags
  std::optional<std::int64_t> require_horizon;
  int threads = 0;
  bool strict_zeros = false;
  int worst = 10;
  bool allow_missing = false;
};

// Each throws UsageError naming the option and what was expected.
runner::Claims claims_of(const JudgeArguments& args);
runner::JudgeOptions judge_options_of(const JudgeArguments& args);
std::vector<std::string> split_list(const std::string& text);
// What the report shows of the options and of what they skipped.
JudgedScope scope_of(const JudgeArguments& args, std::int64_t skipped_by_flags, std::int64_t skipped_by_position);

}  // namespace ropecheck::gate
