// `ropecheck fused inputs|apply|check`: the fused RMSNorm → RoPE → FP8 → KV cache operation
// (fused/README.md) through files. `inputs` writes random inputs for a fused spec, `apply` the exact
// reference's outputs for inputs, `check` judges a candidate's outputs: the verdict text, exit 0
// (pass), 1 (fail), 2 (bad input, one line).
//
// Files are .npz. Inputs: q [tokens, q_heads, head_dim], k [tokens, k_heads, head_dim], positions
// [tokens, components] (integers), q_weight and k_weight [head_dim] (a norm), slot_mapping [tokens]
// and num_blocks (paged). Outputs: q_out, k_out (contiguous) or k_cache [num_blocks, block_size,
// k_heads, head_dim] (paged), q_scale and k_scale (dynamic scales: [tokens], or [tokens, heads]).
// An output is float16, float32 or float64 values; FP8 outputs may be uint8 codes of the spec's
// format, and outputs of a bf16 or f16 data dtype uint16 bits of it.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fused/fp8.h"
#include "fused/fused.h"
#include "gate/commands/command.h"
#include "gate/commands/fused_plugin.h"
#include "gate/report.h"
#include "judge/tolerance.h"
#include "reference/rounding.h"
#include "tensorio/readers.h"
#include "tensorio/writers.h"

namespace ropecheck::gate {
namespace {

using fused::FusedInputs;
using fused::FusedOutputs;
using fused::FusedSpec;

constexpr std::uint64_t kMaxFileBytes = std::uint64_t{1} << 31;

FusedSpec spec_of(const std::string& text) {
  try {
    return fused::parse_fused_spec(text);
  } catch (const InputError& e) {
    throw UsageError(std::string("--spec: ") + e.what());
  }
}

tensorio::TensorMap read_npz(const std::string& path) {
  return tensorio::parse_npz(tensorio::read_file_bytes(path, kMaxFileBytes), path, tensorio::UnsignedCodes::accepted);
}

const tensorio::Tensor* find(const tensorio::TensorMap& m, const std::string& name) {
  const auto it = m.find(name);
  return it == m.end() ? nullptr : &it->second;
}

const tensorio::Tensor& require(const tensorio::TensorMap& m, const std::string& path, const std::string& name, const std::string& why) {
  const tensorio::Tensor* t = find(m, name);
  if (t == nullptr) throw InputError(path + ": " + name + ": expected a tensor (" + why + "), got none");
  return *t;
}

std::vector<double> floats(const tensorio::Tensor& t, const std::string& path, const std::string& name) {
  if (t.dtype != "F16" && t.dtype != "F32" && t.dtype != "F64" && t.dtype != "BF16") {
    throw InputError(path + ": " + name + ": expected float16, float32 or float64 values, got " + t.dtype);
  }
  return t.values;
}

std::vector<std::int64_t> integers(const tensorio::Tensor& t, const std::string& path, const std::string& name) {
  if (t.dtype != "I64" && t.dtype != "I32") throw InputError(path + ": " + name + ": expected integers (int32 or int64), got " + t.dtype);
  return {t.values.begin(), t.values.end()};
}

FusedInputs read_inputs(const FusedSpec& spec, const std::string& path) {
  const tensorio::TensorMap m = read_npz(path);
  FusedInputs in;
  in.q = floats(require(m, path, "q", "[tokens, q_heads, head_dim]"), path, "q");
  in.k = floats(require(m, path, "k", "[tokens, k_heads, head_dim]"), path, "k");
  const tensorio::Tensor& positions = require(m, path, "positions", "[tokens, position components]");
  in.positions = integers(positions, path, "positions");
  in.tokens = positions.shape.empty() ? 1 : positions.shape.front();
  if (spec.norm != fused::NormPlace::none) {
    in.q_weight = floats(require(m, path, "q_weight", "[head_dim]: the spec has a norm"), path, "q_weight");
    in.k_weight = floats(require(m, path, "k_weight", "[head_dim]: the spec has a norm"), path, "k_weight");
  }
  if (spec.destination == fused::Destination::paged) {
    in.slot_mapping = integers(require(m, path, "slot_mapping", "[tokens]: the destination is paged"), path, "slot_mapping");
    const auto blocks = integers(require(m, path, "num_blocks", "one integer: the destination is paged"), path, "num_blocks");
    if (blocks.size() != 1) throw InputError(path + ": num_blocks: expected one integer, got " + std::to_string(blocks.size()) + " values");
    in.num_blocks = blocks.front();
  }
  try {
    fused::check_inputs(spec, in);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
  return in;
}

// An output tensor's values: floats, FP8 codes (uint8) or bf16/f16 bits (uint16).
std::vector<double> output_values(const FusedSpec& spec, const tensorio::Tensor& t, const std::string& path, const std::string& name,
                                  bool quantized) {
  if (t.dtype == "U8") {
    if (!quantized) throw InputError(path + ": " + name + ": expected float values (uint8 codes are FP8, and the spec has fp8=none)");
    std::vector<double> v(t.values.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = fused::decode_fp8(static_cast<std::uint8_t>(t.values[i]), spec.fp8);
    return v;
  }
  if (t.dtype == "U16") {
    const Dtype data = spec.rope.dtype;
    if (quantized || (data != Dtype::bf16 && data != Dtype::f16)) {
      throw InputError(path + ": " + name + ": expected " + (quantized ? "FP8 values or uint8 codes" : "float values") +
                       " (uint16 bits are of a bf16 or f16 data dtype without fp8)");
    }
    std::vector<double> v(t.values.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = reference::decode_bits(static_cast<std::uint64_t>(t.values[i]), data);
    return v;
  }
  return floats(t, path, name);
}

FusedOutputs read_outputs(const FusedSpec& spec, const FusedInputs& in, const std::string& path) {
  const tensorio::TensorMap m = read_npz(path);
  const bool fp8 = spec.fp8 != fused::Fp8::none;
  FusedOutputs out;
  out.q_out = output_values(spec, require(m, path, "q_out", "[tokens, q_heads, head_dim]"), path, "q_out", fp8);
  if (spec.destination == fused::Destination::paged) {
    out.k_cache = output_values(spec, require(m, path, "k_cache", "[num_blocks, block_size, k_heads, head_dim]"), path, "k_cache", fp8);
  } else {
    out.k_out = output_values(spec, require(m, path, "k_out", "[tokens, k_heads, head_dim]"), path, "k_out", fp8);
  }
  if (fp8 && spec.scale != fused::ScaleMode::fixed) {
    const char* shape = spec.scale == fused::ScaleMode::per_head ? "[tokens, heads]: scale=per_head" : "[tokens]: scale=per_token";
    out.q_scale = floats(require(m, path, "q_scale", shape), path, "q_scale");
    out.k_scale = floats(require(m, path, "k_scale", shape), path, "k_scale");
  }
  try {
    fused::check_output_sizes(spec, in, out);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
  return out;
}

std::vector<std::int64_t> dims(std::initializer_list<std::int64_t> list) { return list; }

tensorio::OutTensor integer_tensor(const std::string& name, std::vector<std::int64_t> shape, const std::vector<std::int64_t>& values) {
  return {name, "I64", std::move(shape), std::vector<double>(values.begin(), values.end()), {}};
}

std::string encode_inputs(const FusedSpec& spec, const FusedInputs& in) {
  const std::string dtype = tensorio::storage_dtype(input_dtype_of(spec.rope));
  const std::int64_t d = spec.rope.head_dim;
  std::vector<tensorio::OutTensor> t;
  t.push_back({"q", dtype, dims({in.tokens, spec.q_heads, d}), in.q, {}});
  t.push_back({"k", dtype, dims({in.tokens, spec.k_heads, d}), in.k, {}});
  t.push_back(integer_tensor("positions", dims({in.tokens, position_components(spec.rope)}), in.positions));
  if (spec.norm != fused::NormPlace::none) {
    t.push_back({"q_weight", dtype, dims({d}), in.q_weight, {}});
    t.push_back({"k_weight", dtype, dims({d}), in.k_weight, {}});
  }
  if (spec.destination == fused::Destination::paged) {
    t.push_back(integer_tensor("slot_mapping", dims({in.tokens}), in.slot_mapping));
    t.push_back(integer_tensor("num_blocks", {}, {in.num_blocks}));
  }
  t.push_back({"spec", "U", {}, {}, fused::to_string(spec)});
  return tensorio::encode_npz(t);
}

std::string encode_outputs(const FusedSpec& spec, const FusedInputs& in, const FusedOutputs& out) {
  // FP8 values and the binary32 scales are float32 values; the data dtype's in its storage dtype.
  const std::string dtype = spec.fp8 != fused::Fp8::none ? "F32" : tensorio::storage_dtype(spec.rope.dtype);
  const std::int64_t d = spec.rope.head_dim;
  std::vector<tensorio::OutTensor> t;
  t.push_back({"q_out", dtype, dims({in.tokens, spec.q_heads, d}), out.q_out, {}});
  if (spec.destination == fused::Destination::paged) {
    t.push_back({"k_cache", dtype, dims({in.num_blocks, spec.block_size, spec.k_heads, d}), out.k_cache, {}});
  } else {
    t.push_back({"k_out", dtype, dims({in.tokens, spec.k_heads, d}), out.k_out, {}});
  }
  if (!out.q_scale.empty()) {
    const bool per_head = spec.scale == fused::ScaleMode::per_head;
    t.push_back({"q_scale", "F32", per_head ? dims({in.tokens, spec.q_heads}) : dims({in.tokens}), out.q_scale, {}});
    t.push_back({"k_scale", "F32", per_head ? dims({in.tokens, spec.k_heads}) : dims({in.tokens}), out.k_scale, {}});
  }
  return tensorio::encode_npz(t);
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
    write_atomically(args->out, encode_inputs(spec, fused::random_inputs(spec, args->tokens, args->seed)), {});
    status = 0;
  });

  CLI::App* apply = fused_app->add_subcommand("apply", "Write the exact reference's outputs for an inputs .npz file");
  apply->add_option("--spec", args->spec, "The fused spec")->required();
  apply->add_option("inputs", args->inputs, "The inputs .npz file")->required();
  apply->add_option("-o,--out", args->out, "The outputs .npz file to write")->required();
  apply->callback([&status, args] {
    const FusedSpec spec = spec_of(args->spec);
    const FusedInputs in = read_inputs(spec, args->inputs);
    write_atomically(args->out, encode_outputs(spec, in, fused::fused_reference(spec, in)), {args->inputs});
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
