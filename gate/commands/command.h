// How a `ropecheck` subcommand plugs into the CLI: one add_*_command function per subcommand, each
// in its own file under gate/commands/, listed in gate/main.cpp and gate/CMakeLists.txt.
// A subcommand's callback stores its exit status in `status` (0 pass, 1 fail); bad arguments or bad
// input are reported by throwing UsageError / InputError (base/errors.h), which main prints as one
// line, exit 2. The judging commands are functions (gate/check.h run_check, run_implementation;
// sweep, props): their files here only fill the arguments.
#pragma once

#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "base/errors.h"

namespace ropecheck::gate {

void add_apply_command(CLI::App& root, int& status);
void add_golden_command(CLI::App& root, int& status);
void add_props_command(CLI::App& root, int& status);
void add_check_command(CLI::App& root, int& status);
void add_explain_command(CLI::App& root, int& status);
void add_run_command(CLI::App& root, int& status);
void add_fuzz_command(CLI::App& root, int& status);
void add_report_merge_command(CLI::App& root, int& status);
void add_sweep_command(CLI::App& root, int& status);
void add_certify_command(CLI::App& root, int& status);
void add_spec_command(CLI::App& root, int& status);
// `fused inputs|apply|check` (gate/commands/fused_command.cpp): the fused operation of fused/.
void add_fused_command(CLI::App& root, int& status);
// `golden export` (gate/commands/golden_export_command.cpp), added under `golden` by add_golden_command.
void add_golden_export_command(CLI::App& golden, int& status);
// `fused backward inputs|apply|check` (gate/commands/fused_backward_command.cpp), added under `fused`
// by add_fused_command.
void add_fused_backward_command(CLI::App& fused, int& status);

}  // namespace ropecheck::gate
