// The Spec: one complete RoPE variant (docs/design.md "Core vocabulary"; formulas in docs/rope.md).
// A small value type passed by value. Parsing, validation and canonical printing live in spec.cpp;
// the frequency schedule that turns a Spec into angles lives in schedule.h.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/errors.h"

namespace ropecheck {

enum class Layout { interleaved, half };
enum class Direction { forward, inverse };
enum class Dtype { f64, f32, f16, bf16 };
enum class ScalingType { none, linear, ntk, dynamic, yarn, yarn_ggml, llama3, longrope };
enum class AxesKind { none, two_d, mrope, imrope };

// Parameters of every scaling type, each named as in docs/rope.md. Only those of the chosen type are
// meaningful; the parser rejects the others. Decimal parameters stay exact decimal strings so that
// the reference can read them at any precision.
struct Scaling {
  ScalingType type = ScalingType::none;
  std::string factor;                      // linear, ntk, dynamic, yarn, llama3, longrope (optional)
  std::int64_t original_max_position = 0;  // L0: dynamic (Lmax), yarn, yarn-ggml, llama3, longrope
  std::int64_t seq_len = 0;                // dynamic, longrope: the sequence length the call serves
  // yarn (HF) and yarn-ggml
  std::string beta_fast = "32";
  std::string beta_slow = "1";
  bool truncate = true;                          // yarn (HF) only
  std::optional<std::string> attention_factor;   // yarn, longrope: explicit factor wins
  std::optional<std::string> mscale;             // yarn (HF)
  std::optional<std::string> mscale_all_dim;     // yarn (HF)
  // yarn-ggml (llama.cpp rope_yarn): freq_scale = 1/factor, ext_factor, attn_factor
  std::string freq_scale;
  std::string ext_factor = "1";
  std::string attn_factor = "1";
  // llama3
  std::string low_freq_factor = "1";
  std::string high_freq_factor = "4";
  // longrope (Phi-3): one factor per frequency
  std::vector<std::string> short_factor;
  std::vector<std::string> long_factor;

  friend bool operator==(const Scaling&, const Scaling&) = default;
};

// Multi-axis RoPE. two_d: 2-D RoPE (docs/rope.md §2), groups of 4 dims = pairs (2g, 2g+1) rotated by
// (m1·θ_g, m2·θ_g), each axis a 1-D RoPE over rotary_dim/2 dims. mrope: Qwen2-VL M-RoPE, the
// rotary_dim/2 frequencies split into consecutive sections, section k driven by position component k
// (ggml's four-section form t/h/w/e included, a zero section allowed). imrope: interleaved M-RoPE
// (Qwen3-VL; ggml's GGML_ROPE_TYPE_IMROPE), sections t/h/w[/e] and pairs assigned by ggml's sector
// rule. Which component drives pair j: schedule.h position_component; formulas in spec/README.md.
struct Axes {
  AxesKind kind = AxesKind::none;
  std::vector<int> sections;  // mrope, imrope: one count per position component, summing to rotary_dim/2
  friend bool operator==(const Axes&, const Axes&) = default;
};

struct Spec {
  Layout layout = Layout::interleaved;
  int head_dim = 0;
  int rotary_dim = 0;  // even, <= head_dim; dims [rotary_dim, head_dim) pass through unchanged
  std::string base = "10000";  // exact decimal, > 1
  Scaling scaling;
  Axes axes;
  Direction direction = Direction::forward;
  Dtype dtype = Dtype::f32;  // the OUTPUT dtype: what the reference rounds to, u of the error metric
  // The inputs' dtype when it differs from dtype (GPT-J: f16 inputs, f32 outputs); empty: the same.
  // Every input dtype value must be a value of dtype (validate): f16/bf16 -> f32 -> f64 only.
  // The parser leaves it empty when it equals dtype, so that equal specs compare equal.
  std::optional<Dtype> input_dtype;

  friend bool operator==(const Spec&, const Spec&) = default;
};

// Thrown for an invalid spec; the message names the field and what was expected. The project's one
// input error (base/errors.h), named for where it comes from.
using SpecError = InputError;

// Parses "key=value,key=value,...". rotary_dim defaults to head_dim. Lists (mrope sections,
// longrope factors) are '/'-separated. Throws SpecError.
Spec parse_spec(std::string_view text);
// The items of a `sep`-separated list as the spec text and the CLI's lists read them: empty items
// kept ("a,,b" → a, "", b; "a," → a, ""), so a caller can refuse them by name.
std::vector<std::string> split_list(const std::string& text, char sep);
// Parses the JSON form (an object with the same keys; golden files use it). Throws SpecError.
Spec parse_spec_json(std::string_view json_text);
// Canonical compact form: fixed key order, every relevant parameter explicit.
std::string to_string(const Spec& spec);
// Canonical JSON form (a compact single-line object).
std::string to_json(const Spec& spec);
// Throws SpecError when a field is out of range.
void validate(const Spec& spec);

// Position components per token: 1, 2 for two_d, sections.size() for mrope and imrope (ggml's
// four-section form: 4, as ggml passes 4 positions per token).
int position_components(const Spec& spec);
// The dtype of the inputs: spec.input_dtype when given, else spec.dtype.
inline Dtype input_dtype_of(const Spec& spec) { return spec.input_dtype.value_or(spec.dtype); }

std::string_view name(Layout v);
std::string_view name(Direction v);
std::string_view name(Dtype v);
std::string_view name(ScalingType v);
Dtype parse_dtype(std::string_view text);  // throws SpecError

// Significand bits p of each dtype (u = 2^-p, docs/design.md "Error metric").
constexpr int significand_bits(Dtype d) {
  switch (d) {
    case Dtype::f64: return 53;
    case Dtype::f32: return 24;
    case Dtype::f16: return 11;
    case Dtype::bf16: return 8;
  }
  return 0;
}

}  // namespace ropecheck
