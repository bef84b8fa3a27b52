// A Hugging Face transformers config.json as a Spec: the rotation the model's attention applies,
// mapped as transformers' modeling_rope_utils.py computes it (hfconfig/README.md lists every
// field read, every default and every refusal).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "spec/spec.h"

namespace ropecheck::hfconfig {

// The spec of the config in `json_text`. `seq_len` is the sequence length the rotation serves: it
// is required by the rope types whose rotation depends on it (dynamic, longrope) and ignored by the
// others. Throws SpecError with one line "FILE: field 'NAME': expected ..., got ..." (`file_name`
// only names the file in messages) for a malformed config, a rope type or parameter that ropecheck
// does not model (refused by name, never approximated), or a spec that does not validate.
Spec spec_from_hf_config(std::string_view json_text, std::optional<std::int64_t> seq_len, std::string_view file_name);

}  // namespace ropecheck::hfconfig
