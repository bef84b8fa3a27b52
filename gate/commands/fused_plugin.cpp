#include "gate/commands/fused_plugin.h"

#include <cstdio>
#include <string>

#include "gate/commands/judge_options.h"
#include "runner/fused_plugin.h"

namespace ropecheck::gate {

void add_fused_plugin_options(CLI::App* check, FusedPluginOptions& options) {
  check
      ->add_option("--plugin", options.plugin,
                   "A shared library exporting ropecheck_fused_v1 (include/ropecheck/fused.h): called on the inputs "
                   "file, or on --tokens random inputs, and judged (no outputs file)")
      ->check(CLI::ExistingFile);
  add_child_options(check, options.timeout_seconds, options.memory_limit_mib);
  check->add_flag("--no-isolate", options.no_isolate, "Call the plugin in this process (default: a child process per call)");
}

int check_fused_plugin(const fused::FusedSpec& spec, const fused::FusedInputs& inputs, judge::Model model,
                       const FusedPluginOptions& options) {
  const runner::ChildLimits limits{options.timeout_seconds, options.memory_limit_mib};
  const runner::FusedCallResult call = runner::call_fused_plugin(options.plugin, spec, inputs, !options.no_isolate, limits);
  if (call.status != runner::ApplyResult::Status::ok) {
    std::printf("fused: FAIL under %s: nothing judged: %s: %s\n", judge::claim_text(model).c_str(),
                std::string(runner::kind_name(call.status)).c_str(), call.message.c_str());
    return 1;
  }
  const fused::FusedJudgement j = fused::judge_fused(spec, inputs, call.outputs, model);
  std::fputs(fused::fused_report_text(j).c_str(), stdout);
  return j.verdict == judge::Verdict::pass ? 0 : 1;
}

}  // namespace ropecheck::gate
