// RoPE inside attention and the companion quantities the identity catalog needs (docs/rope.md §3–4).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reference/rope.h"

namespace ropecheck::reference {

// Multi-head attention with RoPE on Q and K (RoFormer, 004):
//   out_h = softmax(RoPE(Q_h) RoPE(K_h)ᵀ / √head_dim + M) V_h, per head h independently.
// Q: [q_tokens, heads, head_dim], K: [k_tokens, heads, head_dim], V: [k_tokens, heads, v_dim].
// `causal`: M[i][j] = −∞ where k_position[j] > q_position[i] (single-axis specs).
struct AttentionResult {
  std::vector<Real> scores;   // [heads, q_tokens, k_tokens], before softmax (mask not applied)
  std::vector<Real> outputs;  // [q_tokens, heads, v_dim]
};
AttentionResult attention_exact(const Spec& spec, std::int64_t q_tokens, std::int64_t k_tokens,
                                std::int64_t heads, std::int64_t v_dim,
                                std::span<const std::int64_t> q_positions,
                                std::span<const std::int64_t> k_positions, std::span<const double> q,
                                std::span<const double> k, std::span<const double> v, bool causal,
                                int precision_bits);

// Correctly rounded (to spec.dtype) scores and outputs; a Ziv-style loop raises the precision until
// two precisions round alike.
struct AttentionRounded {
  std::vector<double> scores;
  std::vector<double> outputs;
};
AttentionRounded attention(const Spec& spec, std::int64_t q_tokens, std::int64_t k_tokens,
                           std::int64_t heads, std::int64_t v_dim,
                           std::span<const std::int64_t> q_positions,
                           std::span<const std::int64_t> k_positions, std::span<const double> q,
                           std::span<const double> k, std::span<const double> v, bool causal,
                           int precision_bits = 256);

// Sinusoidal absolute encoding (the sinusoidal encoding of Vaswani et al., Attention Is All You Need): P[p, 2i] = sin(p/10000^(2i/d)), P[p, 2i+1] = cos(…).
Real sinusoidal(std::int64_t position, int dim_index, int model_dim, int precision_bits);

// Long-term decay (RoFormer §3.4.3, RoFormer) for relative distance r = m − n and frequencies θ_j:
//   S_j = Σ_{k<j} e^{i r θ_k},  average = (1/(d/2)) Σ_{j=1}^{d/2} |S_j|.
Real decay_average(const Spec& spec, std::int64_t distance, int precision_bits);
// The two sides of |Σ_i h_i e^{i r θ_i}| ≤ (max_i |h_{i+1} − h_i|)·Σ_j |S_{j+1}| (Abel summation),
// h_i = q_[2i:2i+1]·conj(k_[2i:2i+1]) as complex numbers, with h_{d/2} = 0.
struct DecayBound {
  Real lhs;
  Real rhs;
};
DecayBound decay_bound(const Spec& spec, std::int64_t distance, std::span<const double> q,
                       std::span<const double> k, int precision_bits);

}  // namespace ropecheck::reference
