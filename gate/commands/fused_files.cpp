// The fused operation's tensors in files (gate/commands/fused_files.h).
#include "gate/commands/fused_files.h"

#include "fused/fp8.h"
#include "reference/rounding.h"

namespace ropecheck::gate {
namespace {

constexpr std::uint64_t kMaxFileBytes = std::uint64_t{1} << 31;

std::vector<std::int64_t> dims(std::initializer_list<std::int64_t> list) { return list; }

tensorio::OutTensor integer_tensor(const std::string& name, std::vector<std::int64_t> shape, const std::vector<std::int64_t>& values) {
  return {name, "I64", std::move(shape), std::vector<double>(values.begin(), values.end()), {}};
}

}  // namespace

FusedTensors FusedTensors::read_npz(const std::string& path, tensorio::UnsignedCodes codes) {
  return {path, tensorio::parse_npz(tensorio::read_file_bytes(path, kMaxFileBytes), path, codes)};
}

const tensorio::Tensor& FusedTensors::tensor(const std::string& name, const std::string& why) const {
  const auto it = map_.find(prefix_ + name);
  if (it == map_.end()) throw InputError(path_ + ": " + prefix_ + name + ": expected a tensor (" + why + "), got none");
  return it->second;
}

std::vector<double> FusedTensors::floats(const std::string& name, const std::string& why) const {
  const tensorio::Tensor& t = tensor(name, why);
  if (t.dtype != "F16" && t.dtype != "F32" && t.dtype != "F64" && t.dtype != "BF16") {
    throw InputError(path_ + ": " + prefix_ + name + ": expected float16, float32 or float64 values, got " + t.dtype);
  }
  return t.values;
}

std::vector<std::int64_t> FusedTensors::integers(const std::string& name, const std::string& why) const {
  const tensorio::Tensor& t = tensor(name, why);
  if (t.dtype != "I64" && t.dtype != "I32") {
    throw InputError(path_ + ": " + prefix_ + name + ": expected integers (int32 or int64), got " + t.dtype);
  }
  return {t.values.begin(), t.values.end()};
}

std::vector<double> FusedTensors::outputs(const fused::FusedSpec& spec, const std::string& name, const std::string& why,
                                          bool quantized) const {
  const tensorio::Tensor& t = tensor(name, why);
  const std::string label = path_ + ": " + prefix_ + name;
  if (t.dtype == "U8") {
    if (!quantized) throw InputError(label + ": expected float values (uint8 codes are FP8, and the spec has fp8=none)");
    std::vector<double> v(t.values.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = fused::decode_fp8(static_cast<std::uint8_t>(t.values[i]), spec.fp8);
    return v;
  }
  if (t.dtype == "U16") {
    const Dtype data = spec.rope.dtype;
    if (quantized || (data != Dtype::bf16 && data != Dtype::f16)) {
      throw InputError(label + ": expected " + (quantized ? "FP8 values or uint8 codes" : "float values") +
                       " (uint16 bits are of a bf16 or f16 data dtype without fp8)");
    }
    std::vector<double> v(t.values.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = reference::decode_bits(static_cast<std::uint64_t>(t.values[i]), data);
    return v;
  }
  return floats(name, why);
}

fused::FusedInputs read_fused_inputs(const fused::FusedSpec& spec, const FusedTensors& file) {
  fused::FusedInputs in;
  in.q = file.floats("q", "[tokens, q_heads, head_dim]");
  in.k = file.floats("k", "[tokens, k_heads, head_dim]");
  const tensorio::Tensor& positions = file.tensor("positions", "[tokens, position components]");
  in.positions = file.integers("positions", "[tokens, position components]");
  in.tokens = positions.shape.empty() ? 1 : positions.shape.front();
  if (spec.norm != fused::NormPlace::none) {
    const bool per_head = spec.weight_shape == fused::WeightShape::per_head;
    in.q_weight =
        file.floats("q_weight", per_head ? "[q_heads, head_dim]: the spec has a per-head norm" : "[head_dim]: the spec has a norm");
    in.k_weight =
        file.floats("k_weight", per_head ? "[k_heads, head_dim]: the spec has a per-head norm" : "[head_dim]: the spec has a norm");
  }
  if (spec.destination == fused::Destination::paged) {
    in.slot_mapping = file.integers("slot_mapping", "[tokens]: the destination is paged");
    const auto blocks = file.integers("num_blocks", "one integer: the destination is paged");
    if (blocks.size() != 1) {
      throw InputError(file.where() + "num_blocks: expected one integer, got " + std::to_string(blocks.size()) + " values");
    }
    in.num_blocks = blocks.front();
  }
  try {
    fused::check_inputs(spec, in);
  } catch (const InputError& e) {
    throw InputError(file.where() + e.what());
  }
  return in;
}

fused::FusedOutputs read_fused_outputs(const fused::FusedSpec& spec, const fused::FusedInputs& in, const FusedTensors& file) {
  const bool fp8 = spec.fp8 != fused::Fp8::none;
  fused::FusedOutputs out;
  out.q_out = file.outputs(spec, "q_out", "[tokens, q_heads, head_dim]", fp8);
  if (spec.destination == fused::Destination::paged) {
    out.k_cache = file.outputs(spec, "k_cache", "[num_blocks, block_size, k_heads, head_dim]", fp8);
  } else {
    out.k_out = file.outputs(spec, "k_out", "[tokens, k_heads, head_dim]", fp8);
  }
  if (fp8 && spec.scale != fused::ScaleMode::fixed) {
    const char* shape = spec.scale == fused::ScaleMode::per_head ? "[tokens, heads]: scale=per_head" : "[tokens]: scale=per_token";
    out.q_scale = file.floats("q_scale", shape);
    out.k_scale = file.floats("k_scale", shape);
  }
  try {
    fused::check_output_sizes(spec, in, out);
  } catch (const InputError& e) {
    throw InputError(file.where() + e.what());
  }
  return out;
}

std::vector<tensorio::OutTensor> fused_input_tensors(const fused::FusedSpec& spec, const fused::FusedInputs& in, const std::string& prefix,
                                                     bool with_spec) {
  const std::string dtype = tensorio::storage_dtype(input_dtype_of(spec.rope));
  const std::int64_t d = spec.rope.head_dim;
  std::vector<tensorio::OutTensor> t;
  t.push_back({prefix + "q", dtype, dims({in.tokens, spec.q_heads, d}), in.q, {}});
  t.push_back({prefix + "k", dtype, dims({in.tokens, spec.k_heads, d}), in.k, {}});
  t.push_back(integer_tensor(prefix + "positions", dims({in.tokens, position_components(spec.rope)}), in.positions));
  if (spec.norm != fused::NormPlace::none) {
    const bool per_head = spec.weight_shape == fused::WeightShape::per_head;
    t.push_back({prefix + "q_weight", dtype, per_head ? dims({spec.q_heads, d}) : dims({d}), in.q_weight, {}});
    t.push_back({prefix + "k_weight", dtype, per_head ? dims({spec.k_heads, d}) : dims({d}), in.k_weight, {}});
  }
  if (spec.destination == fused::Destination::paged) {
    t.push_back(integer_tensor(prefix + "slot_mapping", dims({in.tokens}), in.slot_mapping));
    t.push_back(integer_tensor(prefix + "num_blocks", {}, {in.num_blocks}));
  }
  if (with_spec) t.push_back({prefix + "spec", "U", {}, {}, fused::to_string(spec)});
  return t;
}

std::vector<tensorio::OutTensor> fused_output_tensors(const fused::FusedSpec& spec, const fused::FusedInputs& in,
                                                      const fused::FusedOutputs& out, const std::string& prefix) {
  // FP8 values and the binary32 scales are float32 values; the data dtype's in its storage dtype.
  const std::string dtype = spec.fp8 != fused::Fp8::none ? "F32" : tensorio::storage_dtype(spec.rope.dtype);
  const std::int64_t d = spec.rope.head_dim;
  std::vector<tensorio::OutTensor> t;
  t.push_back({prefix + "q_out", dtype, dims({in.tokens, spec.q_heads, d}), out.q_out, {}});
  if (spec.destination == fused::Destination::paged) {
    t.push_back({prefix + "k_cache", dtype, dims({in.num_blocks, spec.block_size, spec.k_heads, d}), out.k_cache, {}});
  } else {
    t.push_back({prefix + "k_out", dtype, dims({in.tokens, spec.k_heads, d}), out.k_out, {}});
  }
  if (!out.q_scale.empty()) {
    const bool per_head = spec.scale == fused::ScaleMode::per_head;
    t.push_back({prefix + "q_scale", "F32", per_head ? dims({in.tokens, spec.q_heads}) : dims({in.tokens}), out.q_scale, {}});
    t.push_back({prefix + "k_scale", "F32", per_head ? dims({in.tokens, spec.k_heads}) : dims({in.tokens}), out.k_scale, {}});
  }
  return t;
}

}  // namespace ropecheck::gate
