// `ropecheck fused backward inputs|apply|check`: the fused operation's backward pass
// (fused/README.md "Backward") through files. `inputs` writes random forward inputs and incoming
// gradients, `apply` the exact gradients, `check` judges a candidate's gradients: the verdict text,
// exit 0 (pass), 1 (fail), 2 (bad input, one line).
//
// Files are .npz. Inputs: q [tokens, q_heads, head_dim], k [tokens, k_heads, head_dim], positions
// [tokens, components] (integers), q_weight and k_weight [head_dim] (a norm), dq_out and dk_out
// (the incoming gradients, shaped as q and k). Outputs: dq, dk (shaped as q and k), dq_weight and
// dk_weight [head_dim] (a norm); float16, float32 or float64 values.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "fused/backward.h"
#include "gate/commands/command.h"
#include "gate/report.h"
#include "judge/tolerance.h"
#include "tensorio/readers.h"
#include "tensorio/writers.h"

namespace ropecheck::gate {
namespace {

using fused::FusedBackwardOutputs;
using fused::FusedGradients;
using fused::FusedInputs;
using fused::FusedSpec;

constexpr std::uint64_t kMaxFileBytes = std::uint64_t{1} << 31;

FusedSpec backward_spec_of(const std::string& text) {
  try {
    FusedSpec spec = fused::parse_fused_spec(text);
    fused::check_backward_spec(spec);
    return spec;
  } catch (const InputError& e) {
    throw UsageError(std::string("--spec: ") + e.what());
  }
}

// One npz file's tensors by name, each read as float or integer values with one line naming the
// file and tensor when it is missing or of another kind.
class NpzFile {
 public:
  explicit NpzFile(std::string path)
      : path_(std::move(path)), map_(tensorio::parse_npz(tensorio::read_file_bytes(path_, kMaxFileBytes), path_)) {}

  const tensorio::Tensor& tensor(const std::string& name, const std::string& why) const {
    const auto it = map_.find(name);
    if (it == map_.end()) throw InputError(path_ + ": " + name + ": expected a tensor (" + why + "), got none");
    return it->second;
  }
  std::vector<double> floats(const std::string& name, const std::string& why) const {
    const tensorio::Tensor& t = tensor(name, why);
    if (t.dtype != "F16" && t.dtype != "F32" && t.dtype != "F64" && t.dtype != "BF16") {
      throw InputError(path_ + ": " + name + ": expected float16, float32 or float64 values, got " + t.dtype);
    }
    return t.values;
  }
  std::vector<std::int64_t> integers(const std::string& name, const std::string& why) const {
    const tensorio::Tensor& t = tensor(name, why);
    if (t.dtype != "I64" && t.dtype != "I32")
      throw InputError(path_ + ": " + name + ": expected integers (int32 or int64), got " + t.dtype);
    return {t.values.begin(), t.values.end()};
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  tensorio::TensorMap map_;
};

struct BackwardInputs {
  FusedInputs in;
  FusedGradients gradients;
};

BackwardInputs read_backward_inputs(const FusedSpec& spec, const std::string& path) {
  const NpzFile f(path);
  BackwardInputs r;
  r.in.q = f.floats("q", "[tokens, q_heads, head_dim]");
  r.in.k = f.floats("k", "[tokens, k_heads, head_dim]");
  const tensorio::Tensor& positions = f.tensor("positions", "[tokens, position components]");
  r.in.positions = f.integers("positions", "[tokens, position components]");
  r.in.tokens = positions.shape.empty() ? 1 : positions.shape.front();
  if (spec.norm != fused::NormPlace::none) {
    r.in.q_weight = f.floats("q_weight", "[head_dim]: the spec has a norm");
    r.in.k_weight = f.floats("k_weight", "[head_dim]: the spec has a norm");
  }
  r.gradients.dq_out = f.floats("dq_out", "[tokens, q_heads, head_dim]: the incoming gradient of q's output");
  r.gradients.dk_out = f.floats("dk_out", "[tokens, k_heads, head_dim]: the incoming gradient of k's output");
  try {
    fused::check_inputs(spec, r.in);
    fused::check_gradients(spec, r.in, r.gradients);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
  return r;
}

FusedBackwardOutputs read_backward_outputs(const FusedSpec& spec, const FusedInputs& in, const std::string& path) {
  const NpzFile f(path);
  FusedBackwardOutputs out;
  out.dq = f.floats("dq", "[tokens, q_heads, head_dim]");
  out.dk = f.floats("dk", "[tokens, k_heads, head_dim]");
  if (spec.norm != fused::NormPlace::none) {
    out.dq_weight = f.floats("dq_weight", "[head_dim]: the spec has a norm");
    out.dk_weight = f.floats("dk_weight", "[head_dim]: the spec has a norm");
  }
  try {
    fused::check_backward_sizes(spec, in, out);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
  return out;
}

std::vector<std::int64_t> dims(std::initializer_list<std::int64_t> list) { return list; }

std::string encode_backward_inputs(const FusedSpec& spec, const FusedInputs& in, const FusedGradients& g) {
  const std::string dtype = tensorio::storage_dtype(input_dtype_of(spec.rope));
  const std::string data = tensorio::storage_dtype(spec.rope.dtype);
  const std::int64_t d = spec.rope.head_dim;
  std::vector<tensorio::OutTensor> t;
  t.push_back({"q", dtype, dims({in.tokens, spec.q_heads, d}), in.q, {}});
  t.push_back({"k", dtype, dims({in.tokens, spec.k_heads, d}), in.k, {}});
  t.push_back({"positions",
               "I64",
               dims({in.tokens, position_components(spec.rope)}),
               std::vector<double>(in.positions.begin(), in.positions.end()),
               {}});
  if (spec.norm != fused::NormPlace::none) {
    t.push_back({"q_weight", dtype, dims({d}), in.q_weight, {}});
    t.push_back({"k_weight", dtype, dims({d}), in.k_weight, {}});
  }
  t.push_back({"dq_out", data, dims({in.tokens, spec.q_heads, d}), g.dq_out, {}});
  t.push_back({"dk_out", data, dims({in.tokens, spec.k_heads, d}), g.dk_out, {}});
  t.push_back({"spec", "U", {}, {}, fused::to_string(spec)});
  return tensorio::encode_npz(t);
}

std::string encode_backward_outputs(const FusedSpec& spec, const FusedInputs& in, const FusedBackwardOutputs& out) {
  const std::string dtype = tensorio::storage_dtype(spec.rope.dtype);
  const std::int64_t d = spec.rope.head_dim;
  std::vector<tensorio::OutTensor> t;
  t.push_back({"dq", dtype, dims({in.tokens, spec.q_heads, d}), out.dq, {}});
  t.push_back({"dk", dtype, dims({in.tokens, spec.k_heads, d}), out.dk, {}});
  if (spec.norm != fused::NormPlace::none) {
    t.push_back({"dq_weight", dtype, dims({d}), out.dq_weight, {}});
    t.push_back({"dk_weight", dtype, dims({d}), out.dk_weight, {}});
  }
  return tensorio::encode_npz(t);
}

}  // namespace

void add_fused_backward_command(CLI::App& fused_app, int& status) {
  CLI::App* backward = fused_app.add_subcommand("backward", "The fused operation's backward pass: inputs, apply, check");
  backward->require_subcommand(1);
  struct Args {
    std::string spec, out, inputs, outputs, model = std::string(judge::name(judge::kDefaultModel));
    std::int64_t tokens = 16;
    std::uint64_t seed = 1;
  };
  auto args = std::make_shared<Args>();

  CLI::App* inputs = backward->add_subcommand("inputs", "Write random inputs and incoming gradients of a fused spec to an .npz file");
  inputs->add_option("--spec", args->spec, "The fused spec (norm=none|before, no fp8, contiguous)")->required();
  inputs->add_option("--tokens", args->tokens, "Tokens (default 16)")->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  inputs->add_option("--seed", args->seed, "Seed of the inputs (default 1)");
  inputs->add_option("-o,--out", args->out, "The .npz file to write")->required();
  inputs->callback([&status, args] {
    const FusedSpec spec = backward_spec_of(args->spec);
    const FusedInputs in = fused::random_inputs(spec, args->tokens, args->seed);
    write_atomically(args->out, encode_backward_inputs(spec, in, fused::random_gradients(spec, args->tokens, args->seed)), {});
    status = 0;
  });

  CLI::App* apply = backward->add_subcommand("apply", "Write the exact gradients for an inputs .npz file");
  apply->add_option("--spec", args->spec, "The fused spec")->required();
  apply->add_option("inputs", args->inputs, "The inputs .npz file")->required();
  apply->add_option("-o,--out", args->out, "The gradients .npz file to write")->required();
  apply->callback([&status, args] {
    const FusedSpec spec = backward_spec_of(args->spec);
    const BackwardInputs b = read_backward_inputs(spec, args->inputs);
    write_atomically(args->out, encode_backward_outputs(spec, b.in, fused::backward_reference(spec, b.in, b.gradients)), {args->inputs});
    status = 0;
  });

  CLI::App* check = backward->add_subcommand("check", "Judge a candidate's gradients .npz for an inputs .npz file");
  check->add_option("--spec", args->spec, "The fused spec")->required();
  check->add_option("--model", args->model, "The claim: f32-angle (default) or exact");
  check->add_option("inputs", args->inputs, "The inputs .npz file")->required();
  check->add_option("outputs", args->outputs, "The candidate's gradients .npz file")->required();
  check->callback([&status, args] {
    const FusedSpec spec = backward_spec_of(args->spec);
    const judge::Model model = judge::parse_model(args->model);
    if (model == judge::Model::f32_recipe) throw UsageError("--model: expected exact or f32-angle for a fused spec, got f32-recipe");
    const BackwardInputs b = read_backward_inputs(spec, args->inputs);
    const FusedBackwardOutputs out = read_backward_outputs(spec, b.in, args->outputs);
    const fused::FusedJudgement j = fused::judge_backward(spec, b.in, b.gradients, out, model);
    std::fputs(fused::fused_report_text(j).c_str(), stdout);
    status = j.verdict == judge::Verdict::pass ? 0 : 1;
  });
}

}  // namespace ropecheck::gate
