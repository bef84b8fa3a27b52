// The command-line options of the judging commands, registered once (gate/judge_args.h holds them).
#pragma once

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
void add_report_options(CLI::App* cmd, ReportPaths& paths);

}  // namespace ropecheck::gate
