// Attention with RoPE, the sinusoidal encoding and the long-term decay quantities.
#include "reference/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace ropecheck {
namespace {

using ld = long double;

TEST(Attention, AtPositionZeroIsPlainSoftmaxAttention) {
  // R_0 = I, so with every position 0 the result is softmax(QKᵀ/√d)V, computed here in long double
  // (≤ 2^-50 relative for these well-conditioned sizes: a few dozen operations of 2^-64 each).
  const Spec spec = parse_spec("layout=half,head_dim=4,base=10000,dtype=f64");
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  const int q_tokens = 2, k_tokens = 3, heads = 2, d = 4, v_dim = 3;
  std::vector<double> q(q_tokens * heads * d), k(k_tokens * heads * d), v(k_tokens * heads * v_dim);
  for (auto* vec : {&q, &k, &v}) for (double& x : *vec) x = u(rng);
  const std::vector<std::int64_t> qp(q_tokens, 0), kp(k_tokens, 0);
  const auto result = reference::attention_exact(spec, q_tokens, k_tokens, heads, v_dim, qp, kp, q, k, v, false, 128);
  for (int h = 0; h < heads; ++h) {
    for (int i = 0; i < q_tokens; ++i) {
      std::vector<ld> w(k_tokens);
      ld total = 0;
      for (int j = 0; j < k_tokens; ++j) {
        ld dot = 0;
        for (int x = 0; x < d; ++x) dot += static_cast<ld>(q[(i * heads + h) * d + x]) * k[(j * heads + h) * d + x];
        EXPECT_LE(std::fabs(static_cast<ld>(result.scores[(h * q_tokens + i) * k_tokens + j]) - dot / 2), 0x1p-50L);
        w[j] = std::exp(dot / 2);
        total += w[j];
      }
      for (int x = 0; x < v_dim; ++x) {
        ld out = 0;
        for (int j = 0; j < k_tokens; ++j) out += w[j] / total * v[(j * heads + h) * v_dim + x];
        EXPECT_LE(std::fabs(static_cast<ld>(result.outputs[(i * heads + h) * v_dim + x]) - out), 0x1p-50L);
      }
    }
  }
}

TEST(Attention, CausalMaskHidesLaterKeysAndRoundedMatchesExact) {
  const Spec spec = parse_spec("layout=interleaved,head_dim=4,base=10000,dtype=f32");
  const std::vector<double> q = {1, 0, 0, 1, 0.5, 0.5, -1, 0};
  const std::vector<double> k = {0, 1, 1, 0, 1, 1, 0, 0};
  const std::vector<double> v = {1, 2, 3, 4};
  const std::vector<std::int64_t> qp = {0, 1}, kp = {0, 1};
  const auto rounded = reference::attention(spec, 2, 2, 1, 2, qp, kp, q, k, v, true);
  // Query 0 sees only key 0: its output is exactly v_0.
  EXPECT_EQ(rounded.outputs[0], 1.0);
  EXPECT_EQ(rounded.outputs[1], 2.0);
  const auto exact = reference::attention_exact(spec, 2, 2, 1, 2, qp, kp, q, k, v, true, 256);
  for (std::size_t i = 0; i < rounded.outputs.size(); ++i) {
    EXPECT_LE(std::fabs(rounded.outputs[i] - static_cast<double>(exact.outputs[i])), std::ldexp(std::fabs(rounded.outputs[i]), -24));
  }
}

TEST(Sinusoidal, MatchesTheFormula) {
  for (std::int64_t p : {0, 1, 17, 1000}) {
    for (int i = 0; i < 16; ++i) {
      const ld angle = p / std::pow(10000.0L, 2.0L * (i / 2) / 16);
      const ld expected = i % 2 == 0 ? std::sin(angle) : std::cos(angle);
      EXPECT_LE(std::fabs(static_cast<ld>(reference::sinusoidal(p, i, 16, 128)) - expected), 0x1p-52L);
    }
  }
}

TEST(Decay, BoundHoldsAndAverageDecays) {
  const Spec spec = parse_spec("layout=interleaved,head_dim=128,base=10000,dtype=f64");
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> q(128), k(128);
  for (int trial = 0; trial < 5; ++trial) {
    for (double& x : q) x = u(rng);
    for (double& x : k) x = u(rng);
    for (std::int64_t r : {1, 10, 100, 1000}) {
      const auto bound = reference::decay_bound(spec, r, q, k, 128);
      EXPECT_LE(bound.lhs, bound.rhs) << "distance " << r;
    }
  }
  // At distance 0 every S_j = j, so the average is (1/n)·Σ j = (n + 1)/2; it decays with distance.
  EXPECT_LE(std::fabs(static_cast<double>(reference::decay_average(spec, 0, 128)) - 32.5), 1e-12);
  EXPECT_LT(reference::decay_average(spec, 100, 128), reference::decay_average(spec, 10, 128));
  EXPECT_LT(reference::decay_average(spec, 10, 128), reference::decay_average(spec, 1, 128));
}

}  // namespace
}  // namespace ropecheck
