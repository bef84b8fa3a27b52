// The scaling parameters, one row each: the spec key, the member of Scaling that holds it (its
// type is the value's type, and Scaling{}'s value there its default), its range, HF transformers'
// name for it, and its meaning (docs/rope.md §2). Parsing, validation and canonical printing
// (spec.cpp), the C ABI's decoded fields (optimized/c_spec.cpp), hfconfig's rope keys and
// spec/README.md's table (tests/spec/scaling_params_test.cpp) all read these two tables.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "spec/spec.h"

namespace ropecheck {

// What validation requires of a parameter's value (spec/README.md "Ranges").
enum class ParamRange {
  positive,          // a finite decimal > 0
  non_negative,      // a decimal >= 0
  any_decimal,       // any decimal
  positive_integer,  // an integer >= 1
  boolean,           // true|false
  positive_list,     // '/'-separated finite decimals > 0, one per frequency
};

using ScalingMember = std::variant<std::string Scaling::*, std::int64_t Scaling::*, bool Scaling::*, std::optional<std::string> Scaling::*,
                                   std::vector<std::string> Scaling::*>;

struct ScalingParam {
  std::string_view key;
  ScalingMember member;
  ParamRange range;
  std::string_view hf_key;  // the key hfconfig reads it from in a rope object; empty: not an HF key
  std::string_view meaning;
};

// In Scaling's member order; all_keys' order after the general keys (did_you_mean's candidates).
inline constexpr std::array<ScalingParam, 16> kScalingParams = {{
    {"factor", &Scaling::factor, ParamRange::positive, "factor", "f, the context-extension factor"},
    {"original_max_position", &Scaling::original_max_position, ParamRange::positive_integer, "original_max_position_embeddings",
     "L0, the pretraining context (dynamic: Lmax)"},
    {"seq_len", &Scaling::seq_len, ParamRange::positive_integer, "", "the sequence length the call serves (dynamic's L')"},
    {"beta_fast", &Scaling::beta_fast, ParamRange::positive, "beta_fast", "β_fast: YaRN's ramp edge, in rotations over L0"},
    {"beta_slow", &Scaling::beta_slow, ParamRange::positive, "beta_slow", "β_slow: YaRN's other ramp edge"},
    {"truncate", &Scaling::truncate, ParamRange::boolean, "truncate", "floor/ceil YaRN's correction range (HF)"},
    {"attention_factor", &Scaling::attention_factor, ParamRange::positive, "attention_factor",
     "the attention factor, given (else computed)"},
    {"mscale", &Scaling::mscale, ParamRange::any_decimal, "mscale", "the attention factor's numerator mscale (DeepSeek)"},
    {"mscale_all_dim", &Scaling::mscale_all_dim, ParamRange::any_decimal, "mscale_all_dim", "the attention factor's denominator mscale (DeepSeek)"},
    {"freq_scale", &Scaling::freq_scale, ParamRange::positive, "", "llama.cpp's freq_scale = 1/factor"},
    {"ext_factor", &Scaling::ext_factor, ParamRange::non_negative, "", "llama.cpp's ext_factor, the ramp's weight (0: no ramp)"},
    {"attn_factor", &Scaling::attn_factor, ParamRange::positive, "", "llama.cpp's attn_factor, the attention factor's multiplier"},
    {"low_freq_factor", &Scaling::low_freq_factor, ParamRange::positive, "low_freq_factor", "Llama 3's low-frequency factor"},
    {"high_freq_factor", &Scaling::high_freq_factor, ParamRange::positive, "high_freq_factor", "Llama 3's high-frequency factor"},
    {"short_factor", &Scaling::short_factor, ParamRange::positive_list, "short_factor", "LongRoPE's factors up to L0 tokens"},
    {"long_factor", &Scaling::long_factor, ParamRange::positive_list, "long_factor", "LongRoPE's factors beyond L0 tokens"},
}};

// How a scaling type takes a parameter. required: absent is an error. defaulted: absent reads as
// `type_default`, else as Scaling{}'s value; always printed. optional: absent stays unset (an
// empty string, no value) and is printed only when set.
enum class ParamNeed { required, defaulted, optional };

struct ParamUse {
  const ScalingParam* param;
  ParamNeed need;
  std::string_view type_default = {};
};

// The parameters a scaling type accepts, in canonical order (parsing, validation, printing, and the
// "accepted:" list of an error); every other parameter is refused for that type.
std::span<const ParamUse> scaling_params_of(ScalingType type);

// The row of `key`, or nullptr.
const ScalingParam* scaling_param(std::string_view key);

}  // namespace ropecheck
