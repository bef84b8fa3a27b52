// The command-line options of the judging commands, registered once (gate/judge_args.h holds them;
// settings_of parses them once into judge/settings.h Settings).
#pragma once

#include <cstdint>

#include <CLI/CLI.hpp>

#include "gate/check.h"
#include "gate/judge_args.h"

namespace ropecheck::gate {

// Which of the common options a command takes.
struct JudgeOptionSet {
  bool skip_flags = true;       // golden suites only
  bool allow_missing = false;   // candidate files only
  bool max_position = true;     // sweep registers its own (the largest position sampled)
};

void add_judge_options(CLI::App* cmd, JudgeArguments& args, JudgeOptionSet which = {});
void add_report_options(CLI::App* cmd, ReportPaths& paths, bool verbose_flag = true);

// A number in [min, max] for a floating-point option. NaN is refused: CLI11's Range and
// PositiveNumber compare with < and >, which NaN passes (`--timeout nan` then never timed out).
CLI::Validator number_in(double min, double max);

// --timeout and --memory-limit of the commands that run an implementation in a child process
// (runner/isolation.h), with the defaults of runner/registry.h.
void add_child_options(CLI::App* cmd, double& timeout_seconds, std::int64_t& memory_limit_mib);

}  // namespace ropecheck::gate
