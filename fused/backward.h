// The backward pass of the fused operation for training kernels (fused/README.md "Backward"): the
// gradient through RoPE (the inverse rotation of the incoming gradient) and through RMSNorm → RoPE,
// its exact reference, and its judge with the bound derived there from the forward's pieces
// (fused/bounds.h: the rotation's error, the norm's constants, the output's rounding).
//
// With y = R(θ)·n, n = x̂ ⊙ w', x̂ = x/r, r = sqrt(mean(x²) + eps), w' = w or 1 + w, and dy the
// incoming gradient of y: g = R(−θ)·dy pair by pair (pass-through dims: g = dy); without a norm
// dx = g; with the norm before the rotation, h = w' ⊙ g, dx = (h − x̂·mean(h ⊙ x̂))/r and
// dw = Σ over tokens and heads of g ⊙ x̂. Specs with the norm after the rotation, FP8 or a paged
// destination have no backward here (an InputError names the key).
#pragma once

#include <cstdint>
#include <vector>

#include "fused/fused.h"

namespace ropecheck::fused {

struct FusedGradients {                // the incoming gradients, row-major
  std::vector<double> dq_out, dk_out;  // [tokens][q_heads|k_heads][head_dim], values of the data dtype
};

struct FusedBackwardOutputs {
  std::vector<double> dq, dk;                // [tokens][q_heads|k_heads][head_dim]
  std::vector<double> dq_weight, dk_weight;  // [head_dim] (norm only; empty without)
};

// Throws InputError naming the key when the spec has no backward here (norm=after, fp8, paged).
void check_backward_spec(const FusedSpec& spec);
// Throws InputError naming the tensor and the size expected.
void check_gradients(const FusedSpec& spec, const FusedInputs& inputs, const FusedGradients& gradients);
void check_backward_sizes(const FusedSpec& spec, const FusedInputs& inputs, const FusedBackwardOutputs& outputs);

// Gradients of the data dtype, uniform in [-1, 1). Same seed, same gradients.
FusedGradients random_gradients(const FusedSpec& spec, std::int64_t tokens, std::uint64_t seed);
// Exact: computed in high precision, each value correctly rounded to the data dtype.
FusedBackwardOutputs backward_reference(const FusedSpec& spec, const FusedInputs& inputs, const FusedGradients& gradients);

// Judges `outputs` against the exact gradients element by element with the bound of
// fused/README.md "Backward" (tensors dq, dk, dq_weight, dk_weight). f32-recipe is refused.
FusedJudgement judge_backward(const FusedSpec& spec, const FusedInputs& inputs, const FusedGradients& gradients,
                              const FusedBackwardOutputs& outputs, judge::Model model);

}  // namespace ropecheck::fused
