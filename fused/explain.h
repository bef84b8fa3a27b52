// What a failing fused candidate computes (fused/README.md "Explanation"): the one change of the
// fused spec or of its inputs that reproduces its outputs, or that no single change does.
//
// Each candidate change is a modified FusedSpec, FusedInputs or returned scales; the outputs are
// judged against the exact reference under it (judge_fused, with the derived bound of the changed
// spec: fused/bounds.h), and a change is named only where they pass under it. The changes, in the
// order they are tried: the q and k norm weights swapped; the norm after the rotation where the
// spec says before (and before where it says after); the other weight form (x̂·w for x̂·(1 + w), and
// back); eps fitted from the outputs; the values quantized at the returned scale divided by a
// factor fitted from the outputs (a fixed scale: the spec's scale_value divided by it); saturation
// the other way; the slot mapping one slot or one block off; the other pairing (layout); every dim
// rotated (rotary_dim = head_dim). Where none reproduces the outputs and the fused spec is a
// rotation alone (no norm, no FP8), judge/'s RoPE inference (judge/inference.h infer_spec) names
// what the outputs are in the rotation's own words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fused/fused.h"

namespace ropecheck::fused {

enum class ChangeKind { weights_swapped, norm_place, norm_weight, eps, scale_factor, saturation, slot_offset, layout, rotary_dim };
std::string_view name(ChangeKind kind);

// A change judged against the outputs: how well it fits them.
struct FusedChange {
  ChangeKind kind = ChangeKind::weights_swapped;
  std::string change;       // in the spec's words: "norm=after (expected before)"
  std::int64_t judged = 0;  // values judged under the change (every output tensor)
  std::int64_t within = 0;  // ... of them within the bound of the changed spec
  double worst_e = 0;       // the worst e under the change
  bool reproduces = false;  // every value within: the outputs pass under the change
};

struct FusedExplanation {
  std::optional<FusedChange> named;    // the change that reproduces the outputs (the best fit of those that do)
  std::optional<FusedChange> closest;  // none does: the best fit, said beside "no single change explains this"
  std::string rope;                    // judge/'s RoPE inference, where it applies and names something
  std::string text;                    // one sentence (empty when the outputs pass)
};

// The tokens a failing judgement is explained on: at most this many, spread over the tokens.
inline constexpr std::int64_t kExplainTokens = 64;

// Explains outputs that fail judge_fused under `spec` (a passing judgement gets nothing named and
// an empty text). Inputs and outputs must have passed check_inputs and check_output_sizes.
FusedExplanation explain_fused(const FusedSpec& spec, const FusedInputs& inputs, const FusedOutputs& outputs, judge::Model model);

// The hook of judge_fused: explain_fused's text for a failing judgement (its sample holds the
// judgement's first failing token); empty for a passing one, and while a candidate change is being
// judged (the candidates' own judgements explain nothing).
std::string explain_failure(const FusedSpec& spec, const FusedInputs& inputs, const FusedOutputs& outputs, judge::Model model,
                            const FusedJudgement& judgement);

}  // namespace ropecheck::fused
