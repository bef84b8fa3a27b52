// A Hugging Face transformers config.json as the rotations its model applies: one Spec per
// distinct rotation, with the decoder layers it covers, mapped as the model type's own code
// computes it (hfconfig/README.md lists every model type, field read, default and refusal).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/spec.h"

namespace ropecheck::hfconfig {

// What a group of decoder layers does with positions, as the config's layer pattern names it.
enum class LayerKind {
  kAll,     // the one rotation of every layer that rotates (NoPE layers, if any, listed apart)
  kGlobal,  // full-attention layers of a model with several kinds (Gemma-3's global layers)
  kLocal,   // sliding-window layers with their own rotation (Gemma-3's local layers; Command-R7B's,
            // whose global layers apply none)
  kNoRope,  // layers that apply no rotation (SmolLM3's no_rope_layers, Llama-4's NoPE layers)
};

// "all", "global", "local", "nope": the names `--layer KIND` and the output use.
std::string_view layer_kind_name(LayerKind kind);
std::optional<LayerKind> parse_layer_kind(std::string_view name);

// The layers of one kind, and their rotation.
struct LayerRotation {
  LayerKind kind = LayerKind::kAll;
  std::optional<Spec> spec;          // empty for kNoRope: the layers rotate nothing
  std::vector<std::int64_t> layers;  // 0-based decoder layer indices, ascending
};

struct ModelRotations {
  std::string model_type;                // the config's model_type ("" when absent)
  std::int64_t num_layers = 0;           // num_hidden_layers (0 when the config does not say)
  std::vector<LayerRotation> rotations;  // one per kind, in layer order of first appearance
  std::vector<std::string> notes;        // what was assumed, said in the output (a default dtype, ...)
  std::string layer_pattern;             // the config field the layer pattern was read from ("" when uniform)
};

// "0-4,6-10,12": ascending layer indices as ranges, as the output and messages print them.
std::string layer_ranges(const std::vector<std::int64_t>& layers);

// Every rotation of the config in `json_text`. `seq_len` is the sequence length served: required
// by the rope types whose rotation depends on it (dynamic, longrope), ignored by the others.
// Throws SpecError with one line "FILE: field 'NAME': expected ..., got ..." (`file_name` only
// names the file in messages) for a malformed config, a model type, rope type or parameter that
// ropecheck does not model (refused by name, never approximated), or a spec that does not validate.
ModelRotations rotations_from_hf_config(std::string_view json_text, std::optional<std::int64_t> seq_len, std::string_view file_name);

// Which rotation of a model a command judges: a layer index or a layer kind; neither: the model's
// one rotation (NoPE layers aside).
struct LayerSelector {
  std::optional<std::int64_t> layer;
  std::optional<LayerKind> kind;
};

// The one Spec `selector` picks from a model's rotations. Throws SpecError naming the choices
// ("layers rotate differently: give --layer N or --layer global|local") when the config has several
// rotations and none is selected, and when the selection is a NoPE layer or out of range.
Spec select_rotation(const ModelRotations& model, const LayerSelector& selector, std::string_view file_name);

// rotations_from_hf_config, then select_rotation.
Spec spec_from_hf_config(std::string_view json_text, std::optional<std::int64_t> seq_len, std::string_view file_name,
                         const LayerSelector& selector = {});

}  // namespace ropecheck::hfconfig
