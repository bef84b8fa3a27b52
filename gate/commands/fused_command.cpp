// `ropecheck fused inputs|apply|check`: the fused RMSNorm → RoPE → FP8 → KV cache operation
// (fused/README.md) through files. `inputs` writes random inputs for a fused spec, `apply` the exact
// reference's outputs for inputs, `check` judges a candidate's outputs: the verdict text, exit 0
// (pass), 1 (fail), 2 (bad input, one line).
//
// Files are .npz, their tensors those of gate/commands/fused_files.h.
#include <cstdio>
#include <string>
#include <vector>

#include "fused/fused.h"
#include "gate/commands/command.h"
#include "gate/commands/fused_files.h"
#include "gate/commands/fused_plugin.h"
#include "gate/report.h"
#include "judge/tolerance.h"
#include "tensorio/readers.h"
#include "tensorio/writers.h"

namespace ropecheck::gate {
namespace {

using fused::FusedInputs;
using fused::FusedOutputs;
using fused::FusedSpec;

FusedSpec spec_of(const std::string& text) {
  try {
    return fused::parse_fused_spec(text);
  } catch (const InputError& e) {
    throw UsageError(std::string("--spec: ") + e.what());
  }
}

FusedInputs read_inputs(const FusedSpec& spec, const std::string& path) {
  return read_fused_inputs(spec, FusedTensors::read_npz(path, tensorio::UnsignedCodes::accepted));
}

FusedOutputs read_outputs(const FusedSpec& spec, const FusedInputs& in, const std::string& path) {
  return read_fused_outputs(spec, in, FusedTensors::read_npz(path, tensorio::UnsignedCodes::accepted));
}

}  // namespace

void add_fused_command(CLI::App& root, int& status) {
  CLI::App* fused_app = root.add_subcommand("fused", "The fused RMSNorm -> RoPE -> FP8 -> KV cache operation: inputs, apply, check");
  fused_app->require_subcommand(1);
  struct Args {
    std::string spec, out, inputs, outputs, model = std::string(judge::name(judge::kDefaultModel));
    std::int64_t tokens = 16;
    std::uint64_t seed = 1;
    FusedPluginOptions plugin;  // check --plugin (gate/commands/fused_plugin.h)
  };
  auto args = std::make_shared<Args>();

  CLI::App* inputs = fused_app->add_subcommand("inputs", "Write random inputs of a fused spec to an .npz file");
  inputs->add_option("--spec", args->spec, "The fused spec (the rotation's spec text plus the fused keys)")->required();
  inputs->add_option("--tokens", args->tokens, "Tokens (default 16)")->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  inputs->add_option("--seed", args->seed, "Seed of the inputs (default 1)");
  inputs->add_option("-o,--out", args->out, "The .npz file to write")->required();
  inputs->callback([&status, args] {
    const FusedSpec spec = spec_of(args->spec);
    write_atomically(args->out,
                     tensorio::encode_npz(fused_input_tensors(spec, fused::random_inputs(spec, args->tokens, args->seed), "", true)), {});
    status = 0;
  });

  CLI::App* apply = fused_app->add_subcommand("apply", "Write the exact reference's outputs for an inputs .npz file");
  apply->add_option("--spec", args->spec, "The fused spec")->required();
  apply->add_option("inputs", args->inputs, "The inputs .npz file")->required();
  apply->add_option("-o,--out", args->out, "The outputs .npz file to write")->required();
  apply->callback([&status, args] {
    const FusedSpec spec = spec_of(args->spec);
    const FusedInputs in = read_inputs(spec, args->inputs);
    write_atomically(args->out, tensorio::encode_npz(fused_output_tensors(spec, in, fused::fused_reference(spec, in), "")), {args->inputs});
    status = 0;
  });

  CLI::App* check = fused_app->add_subcommand("check", "Judge a candidate's outputs .npz for an inputs .npz file");
  check->add_option("--spec", args->spec, "The fused spec")->required();
  check->add_option("--model", args->model, "The claim: f32-angle (default) or exact");
  check->add_option("inputs", args->inputs, "The inputs .npz file (with --plugin: optional, else --tokens random inputs)");
  check->add_option("outputs", args->outputs, "The candidate's outputs .npz file (none with --plugin)");
  check->add_option("--tokens", args->tokens, "With --plugin and no inputs file: tokens of the random inputs (default 16)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  check->add_option("--seed", args->seed, "With --plugin and no inputs file: seed of the random inputs (default 1)");
  add_fused_plugin_options(check, args->plugin);
  check->callback([&status, args] {
    const FusedSpec spec = spec_of(args->spec);
    const judge::Model model = judge::parse_model(args->model);
    if (model == judge::Model::f32_recipe) throw UsageError("--model: expected exact or f32-angle for a fused spec, got f32-recipe");
    if (!args->plugin.plugin.empty()) {
      if (!args->outputs.empty())
        throw UsageError("outputs: expected none with --plugin (the plugin's outputs are judged), got " + args->outputs);
      const FusedInputs in = args->inputs.empty() ? fused::random_inputs(spec, args->tokens, args->seed) : read_inputs(spec, args->inputs);
      status = check_fused_plugin(spec, in, model, args->plugin);
      return;
    }
    if (args->inputs.empty() || args->outputs.empty()) {
      throw UsageError("check: expected an inputs .npz and an outputs .npz file, or --plugin LIB");
    }
    const FusedInputs in = read_inputs(spec, args->inputs);
    const FusedOutputs out = read_outputs(spec, in, args->outputs);
    const fused::FusedJudgement j = fused::judge_fused(spec, in, out, model);
    std::fputs(fused::fused_report_text(j).c_str(), stdout);
    status = j.verdict == judge::Verdict::pass ? 0 : 1;
  });

  add_fused_backward_command(*fused_app, status);
}

}  // namespace ropecheck::gate
