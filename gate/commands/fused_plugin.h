// `ropecheck fused check --plugin LIB`: a fused plugin (include/ropecheck/fused.h) called on fused
// inputs by runner/fused_plugin.h (a child process per call unless --no-isolate) and its outputs
// judged by fused::judge_fused. The options are added to `fused check` by
// gate/commands/fused_command.cpp; the inputs are its inputs file, or drawn (--tokens, --seed).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "fused/fused.h"
#include "judge/tolerance.h"
#include "runner/isolation.h"

namespace ropecheck::gate {

struct FusedPluginOptions {
  std::string plugin;  // empty: no plugin (the outputs file is judged)
  double timeout_seconds = 10;
  std::int64_t memory_limit_mib = runner::kDefaultMemoryLimitMiB;
  bool no_isolate = false;
};

// --plugin, --timeout, --memory-limit, --no-isolate.
void add_fused_plugin_options(CLI::App* check, FusedPluginOptions& options);

// Calls the plugin on `inputs`, prints the verdict text (fused::fused_report_text, or the one line
// of a call that gave no outputs) and returns the exit status: 0 pass, 1 fail (a failed call, or a
// spec the plugin reports as unsupported: nothing judged is no pass).
int check_fused_plugin(const fused::FusedSpec& spec, const fused::FusedInputs& inputs, judge::Model model,
                       const FusedPluginOptions& options);

}  // namespace ropecheck::gate
