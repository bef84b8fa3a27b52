// `ropecheck explain`: the direct check of gate/check.h run_check on your own tensors, printing what
// the outputs are (judge/inference.h: the change of the spec that reproduces them) instead of the
// verdict table. Judged under f32-angle unless --model says otherwise; exit 0 pass, 1 fail.
#include <memory>

#include "gate/check.h"
#include "gate/commands/command.h"
#include "gate/commands/judge_options.h"
#include "gate/commands/spec_options.h"

namespace ropecheck::gate {

void add_explain_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand("explain",
                                  "Say what a candidate's outputs are: the change of the spec (base, layout, scaling, precision, "
                                  "positions, memory) that reproduces them (--spec|--hf-config --positions --input --candidate)");
  auto args = std::make_shared<CheckArguments>();
  args->judge.model = "f32-angle";
  args->reports.text = TextForm::explanation;
  auto spec = std::make_shared<SpecOptions>();
  add_spec_options(cmd, *spec, SpecCount::one);
  cmd->add_option("--positions", args->positions, "One position per token: a list (3,5,8), a range START:STOP[:STEP], or a .npy/.json file")
      ->required();
  cmd->add_option("--input", args->input, "The input tensor [tokens, heads, head_dim] the candidate rotated")->required();
  cmd->add_option("--candidate", args->candidate, "The candidate's output tensor (.npy, safetensors, .npz or JSON)")->required();
  cmd->add_option("--heads", args->heads, "Heads per token (default: from the sizes)");
  add_judge_options(cmd, args->judge, {.allow_missing = false});
  add_report_options(cmd, args->reports);
  cmd->callback([args, spec, &status] {
    args->spec = resolve_optional_spec(*spec, {}, "explain");
    if (!args->spec) throw UsageError("explain: expected --spec TEXT or --hf-config FILE");
    status = run_check(*args);
  });
}

}  // namespace ropecheck::gate
