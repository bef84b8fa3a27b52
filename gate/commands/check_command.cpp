// `ropecheck check`: the command line of gate/check.h run_check.
#include <memory>

#include "gate/check.h"
#include "gate/commands/command.h"
#include "gate/commands/fused_golden_command.h"
#include "gate/commands/judge_options.h"
#include "gate/commands/spec_options.h"

namespace ropecheck::gate {

void add_check_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand(
      "check", "Judge a candidate's outputs: for the golden inputs (--golden), or for your own tensors (--spec --positions --input)");
  auto args = std::make_shared<CheckArguments>();
  auto* golden = cmd->add_option("--golden", args->golden, "Golden suite file, or a folder of them");
  cmd->add_option("--candidate", args->candidate,
                  "Candidate outputs: .npz/.npy/safetensors/JSON with tensors named SUITE/ID/output, or SUITE/ID/scores and "
                  "SUITE/ID/outputs for attention suites (gate/README.md); with --spec, the output tensor [tokens, heads, "
                  "head_dim] (.npy or one-tensor safetensors stream; npz/JSON: the tensor 'output' or the only one)")
      ->required();
  // Instead of --golden: your own tensors for --spec or --hf-config (runner/tensor_judge.h).
  auto spec = std::make_shared<SpecOptions>();
  add_spec_options(cmd, *spec, SpecCount::one);
  cmd->get_option("--spec")->excludes(golden);
  cmd->get_option("--hf-config")->excludes(golden);
  auto* positions = cmd->add_option("--positions", args->positions,
                                    "With --spec: one position per token: a list (3,5,8), a range START:STOP[:STEP], or a .npy/.json file "
                                    "([tokens], [tokens, components] or [components, tokens])");
  auto* input = cmd->add_option("--input", args->input, "With --spec: the input tensor [tokens, heads, head_dim] the candidate rotated (values not of the "
                                "spec's input dtype are rounded to it, with a note)");
  auto* heads = cmd->add_option("--heads", args->heads, "With --spec: heads per token (default: from the sizes)");
  add_judge_options(cmd, args->judge, {.allow_missing = true});
  add_report_options(cmd, args->reports);
  cmd->callback([args, spec, positions, input, heads, &status] {
    // A fused suite (golden/README.md "Fused suites") is judged by the fused judge, its own text.
    if (!args->golden.empty() && is_fused_golden_file(args->golden)) {
      if (!args->reports.json.empty() || !args->reports.junit.empty() || !args->reports.html.empty() || !args->judge.tolerance.empty() ||
          !args->judge.skip_flags.empty()) {
        throw UsageError(
            "--golden: a fused suite is judged with its derived bounds and printed as text: expected no --json, --junit, "
            "--html, --tolerance or --skip-flags, got one");
      }
      status = check_fused_golden(args->golden, args->candidate, judge::parse_model(args->judge.model), args->judge.settings.allow_missing);
      return;
    }
    args->spec = resolve_optional_spec(*spec, {positions, input, heads}, "a check of your own tensors");
    status = run_check(*args);
  });
}

}  // namespace ropecheck::gate
