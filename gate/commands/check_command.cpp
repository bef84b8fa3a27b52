// `ropecheck check`: the command line of gate/check.h run_check.
#include <memory>

#include "gate/check.h"
#include "gate/commands/command.h"
#include "gate/commands/judge_options.h"

namespace ropecheck::gate {

void add_check_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand("check", "Judge a candidate's outputs for the golden inputs: verdict, horizon, reports");
  auto args = std::make_shared<CheckArguments>();
  cmd->add_option("--golden", args->golden, "Golden suite file, or a folder of them")->required();
  cmd->add_option("--candidate", args->candidate,
                  "Candidate outputs: .npz/.npy/safetensors/JSON with tensors named SUITE/ID/output, or SUITE/ID/scores and "
                  "SUITE/ID/outputs for attention suites (gate/README.md)")
      ->required();
  add_judge_options(cmd, args->judge, {.allow_missing = true});
  add_report_options(cmd, args->reports);
  cmd->callback([args, &status] { status = run_check(*args); });
}

}  // namespace ropecheck::gate
