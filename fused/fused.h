// The fused operation RMSNorm → RoPE → FP8 → (paged) KV cache: its spec, its exact reference and its
// judge (fused/README.md; the bounds derived in docs/fused-bounds.md and fused/bounds.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/group.h"
#include "judge/tolerance.h"
#include "spec/spec.h"

namespace ropecheck::fused {

enum class NormPlace { none, before, after };  // RMSNorm of q and k before or after the rotation
enum class NormWeight { plain, one_plus };     // x̂·w, or x̂·(1+w) (Gemma-style)
enum class Fp8 { none, e4m3, e5m2 };
enum class ScaleMode { fixed, per_token, per_head };  // fixed: the spec's scale; else returned by the kernel
enum class Rounding { once, intermediate };           // one rounding at the end, or rounded to the data dtype before the quantization
enum class Destination { contiguous, paged };

inline constexpr int kMaxBlockSize = 1 << 16;
inline constexpr int kMaxHeads = 4096;

struct FusedSpec {
  Spec rope;  // the rotation; rope.dtype = the data dtype (bf16, f16, f32)
  NormPlace norm = NormPlace::none;
  NormWeight weight = NormWeight::plain;
  std::string eps = "1e-6";  // exact decimal, >= 0
  Fp8 fp8 = Fp8::none;
  bool saturate = true;
  ScaleMode scale = ScaleMode::fixed;
  std::string scale_value = "1";  // exact decimal, > 0 (fixed scale)
  Rounding rounding = Rounding::once;
  Destination destination = Destination::contiguous;
  int block_size = 16;
  int q_heads = 1, k_heads = 1;

  friend bool operator==(const FusedSpec&, const FusedSpec&) = default;
};

// The spec text plus the keys norm=none|before|after, norm_weight=plain|one_plus, eps=,
// fp8=none|e4m3|e5m2, saturate=true|false, scale=fixed|per_token|per_head, scale_value=,
// rounding=once|intermediate, destination=contiguous|paged, block_size=, q_heads=, k_heads=.
// Throws InputError naming the key and what was expected.
FusedSpec parse_fused_spec(std::string_view text);
// Canonical: the rotation's canonical spec, then every fused key in the order above;
// parse_fused_spec(to_string(s)) == s.
std::string to_string(const FusedSpec& spec);
// Whether the spec text holds any of the fused keys (a caller routes it to the fused judge).
bool has_fused_keys(std::string_view spec_text);
// Throws InputError naming the field when a value is out of range (parse_fused_spec calls it).
void validate(const FusedSpec& spec);

std::string_view name(NormPlace v);
std::string_view name(NormWeight v);
std::string_view name(Fp8 v);
std::string_view name(ScaleMode v);
std::string_view name(Rounding v);
std::string_view name(Destination v);

struct FusedInputs {  // row-major
  std::int64_t tokens = 0;
  std::vector<double> q, k;                // [tokens][q_heads|k_heads][head_dim], values of rope.input dtype
  std::vector<std::int64_t> positions;     // [tokens][position_components]
  std::vector<double> q_weight, k_weight;  // [head_dim] (norm only)
  std::vector<std::int64_t> slot_mapping;  // [tokens] (paged only; -1 = skip the token)
  std::int64_t num_blocks = 0;             // paged only
};

struct FusedOutputs {
  std::vector<double> q_out, k_out;      // values as stored (FP8 values decoded, NOT multiplied by the scale)
  std::vector<double> q_scale, k_scale;  // per_token: [tokens]; per_head: [tokens][heads]; fixed: empty
  std::vector<double> k_cache;           // paged: [num_blocks][block_size][k_heads][head_dim], k_out empty
};

// Throws InputError naming the tensor and the size expected when `inputs` do not fit `spec`
// (sizes, finite values, slots in range and distinct).
void check_inputs(const FusedSpec& spec, const FusedInputs& inputs);
// Throws InputError naming the tensor and the size expected when `outputs` do not fit.
void check_output_sizes(const FusedSpec& spec, const FusedInputs& inputs, const FusedOutputs& outputs);

// Inputs of the spec's input dtype, uniform in [-4, 4) (weights in [0.5, 1.5), or [-0.5, 0.5) for
// the 1 + w form), positions 0 .. tokens−1 in every component, and for a paged destination a
// shuffled slot mapping into enough blocks (one token in eight skipped). Same seed, same inputs.
FusedInputs random_inputs(const FusedSpec& spec, std::int64_t tokens, std::uint64_t seed);
// Exact: each composition computed in high precision, correctly rounded per the spec's rounding
// (fused/README.md "The reference").
FusedOutputs fused_reference(const FusedSpec& spec, const FusedInputs& inputs);

// Worst e (|got − target| in units of the element's bound) and counts of one output tensor.
struct TensorResult {
  std::string tensor;  // "q_out", "k_out", "k_cache", "q_scale", "k_scale"
  double worst_e = 0;
  std::int64_t judged = 0;
  std::int64_t failed = 0;
};
struct FailingElement {
  std::string tensor;
  std::int64_t token = -1, head = -1, dim = -1;  // head, dim: -1 for a per-token scale
  double got = 0, expected = 0, bound = 0;       // expected: the exact target (scaled units for FP8)
  double e = 0;
};
struct FusedJudgement {
  judge::Verdict verdict = judge::Verdict::pass;
  judge::Model model = judge::kDefaultModel;
  std::vector<TensorResult> tensors;
  std::optional<FailingElement> first_failure;
  std::string bound;        // the bound used, as a formula with its numbers
  std::string derivation;   // where it comes from (docs/fused-bounds.md, the Coq and Gappa proofs)
  std::string explanation;  // optional: what a failing candidate computes
};
// Judges `outputs` against the exact values of `spec` for `inputs` under `model` (exact or
// f32-angle; f32-recipe is refused with an InputError). Throws InputError for sizes.
FusedJudgement judge_fused(const FusedSpec& spec, const FusedInputs& inputs, const FusedOutputs& outputs, judge::Model model);
std::string fused_report_text(const FusedJudgement& judgement);

}  // namespace ropecheck::fused
