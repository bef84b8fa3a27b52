// The fused operation's tensors in files (fused/README.md "`ropecheck fused`"): one reader and one
// writer of the inputs and outputs for `fused inputs|apply|check`, `fused backward`, `apply` with a
// fused spec and the fused golden suites (gate/commands/fused_golden_command.cpp), where every
// tensor name carries the test's prefix (`SUITE/ID/`).
//
// Inputs: q [tokens, q_heads, head_dim], k [tokens, k_heads, head_dim], positions [tokens,
// components] (integers), q_weight and k_weight [head_dim] (a norm; [heads, head_dim] per head), slot_mapping [tokens] and
// num_blocks (paged). Outputs: q_out, k_out (contiguous) or k_cache [num_blocks, block_size, k_heads,
// head_dim] (paged), q_scale and k_scale (dynamic scales: [tokens], or [tokens, heads]). An output is
// float16, float32 or float64 values; FP8 outputs may be uint8 codes of the spec's format, and outputs
// of a bf16 or f16 data dtype uint16 bits of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fused/fused.h"
#include "tensorio/readers.h"
#include "tensorio/writers.h"

namespace ropecheck::gate {

// One file's tensors by name (`prefix` + name), each read as float or integer values with one line
// naming the file and the tensor when it is missing or of another kind.
class FusedTensors {
 public:
  FusedTensors(std::string path, tensorio::TensorMap map, std::string prefix = {})
      : path_(std::move(path)), map_(std::move(map)), prefix_(std::move(prefix)) {}
  // An .npz file read whole (at most 2^31 bytes); uint8/uint16 codes read where `codes` accepts them.
  static FusedTensors read_npz(const std::string& path, tensorio::UnsignedCodes codes);

  // The same tensors under another prefix (one test of a golden suite).
  FusedTensors with_prefix(std::string prefix) const { return {path_, map_, std::move(prefix)}; }
  bool has(const std::string& name) const { return map_.count(prefix_ + name) != 0; }
  const tensorio::Tensor& tensor(const std::string& name, const std::string& why) const;
  std::vector<double> floats(const std::string& name, const std::string& why) const;
  std::vector<std::int64_t> integers(const std::string& name, const std::string& why) const;
  // An output tensor's values: floats, FP8 codes (uint8, `quantized`) or bf16/f16 bits (uint16).
  std::vector<double> outputs(const fused::FusedSpec& spec, const std::string& name, const std::string& why, bool quantized) const;
  // "FILE: PREFIX" for a message about the file's tensors that fused/ gives without them.
  std::string where() const { return path_ + ": " + prefix_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  tensorio::TensorMap map_;
  std::string prefix_;
};

// The forward inputs of `spec` (checked by fused::check_inputs; an InputError names the file).
fused::FusedInputs read_fused_inputs(const fused::FusedSpec& spec, const FusedTensors& file);
// The outputs of `spec` for `in` (checked by fused::check_output_sizes).
fused::FusedOutputs read_fused_outputs(const fused::FusedSpec& spec, const fused::FusedInputs& in, const FusedTensors& file);

// The tensors of the inputs (with the spec's text as `spec` when `with_spec`) and of the outputs,
// named `prefix` + name; the data in its storage dtype, FP8 values and scales as float32.
std::vector<tensorio::OutTensor> fused_input_tensors(const fused::FusedSpec& spec, const fused::FusedInputs& in, const std::string& prefix,
                                                     bool with_spec);
std::vector<tensorio::OutTensor> fused_output_tensors(const fused::FusedSpec& spec, const fused::FusedInputs& in,
                                                      const fused::FusedOutputs& out, const std::string& prefix);

}  // namespace ropecheck::gate
