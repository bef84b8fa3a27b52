// RoPE inside attention, the sinusoidal encoding and the long-term-decay quantities (docs/rope.md §3–4).
#include "reference/attention.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::reference {
namespace {

void check_size(std::string_view what, std::size_t got, std::int64_t expected) {
  if (static_cast<std::int64_t>(got) != expected) {
    throw std::invalid_argument(std::string(what) + ": expected " + std::to_string(expected) + " values, got " +
                                std::to_string(got));
  }
}

}  // namespace

AttentionResult attention_exact(const Spec& spec, std::int64_t q_tokens, std::int64_t k_tokens, std::int64_t heads,
                                std::int64_t v_dim, std::span<const std::int64_t> q_positions,
                                std::span<const std::int64_t> k_positions, std::span<const double> q,
                                std::span<const double> k, std::span<const double> v, bool causal,
                                int precision_bits) {
  const std::int64_t d = spec.head_dim;
  check_size("q", q.size(), q_tokens * heads * d);
  check_size("k", k.size(), k_tokens * heads * d);
  check_size("v", v.size(), k_tokens * heads * v_dim);
  if (causal && position_components(spec) != 1) throw std::invalid_argument("causal mask needs a single-axis spec");
  const std::vector<Real> q_rotated =
      rotate_exact(spec, Shape{q_tokens, heads, d}, q_positions, q, precision_bits, Form::elementwise);
  const std::vector<Real> k_rotated =
      rotate_exact(spec, Shape{k_tokens, heads, d}, k_positions, k, precision_bits, Form::elementwise);
  PrecisionScope scope(precision_bits);
  AttentionResult result;
  result.scores.assign(static_cast<std::size_t>(heads * q_tokens * k_tokens), Real(0));
  result.outputs.assign(static_cast<std::size_t>(q_tokens * heads * v_dim), Real(0));
  const Real scale = 1 / sqrt(Real(d));
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t i = 0; i < q_tokens; ++i) {
      std::vector<Real> weights(static_cast<std::size_t>(k_tokens), Real(0));
      std::vector<bool> visible(static_cast<std::size_t>(k_tokens), true);
      bool any_visible = false;
      Real largest(0);
      for (std::int64_t j = 0; j < k_tokens; ++j) {
        Real dot(0);
        for (std::int64_t x = 0; x < d; ++x) dot += q_rotated[(i * heads + h) * d + x] * k_rotated[(j * heads + h) * d + x];
        const Real score = dot * scale;
        result.scores[(h * q_tokens + i) * k_tokens + j] = score;
        visible[j] = !causal || k_positions[j] <= q_positions[i];
        if (visible[j] && (!any_visible || score > largest)) largest = score;
        any_visible = any_visible || visible[j];
      }
      if (!any_visible) {  // softmax over an all-masked row: 0/0, NaN as in IEEE arithmetic
        for (std::int64_t x = 0; x < v_dim; ++x) {
          result.outputs[(i * heads + h) * v_dim + x] = Real(std::numeric_limits<double>::quiet_NaN());
        }
        continue;
      }
      Real total(0);
      for (std::int64_t j = 0; j < k_tokens; ++j) {
        if (!visible[j]) continue;
        weights[j] = exp(result.scores[(h * q_tokens + i) * k_tokens + j] - largest);
        total += weights[j];
      }
      for (std::int64_t x = 0; x < v_dim; ++x) {
        Real sum(0);
        for (std::int64_t j = 0; j < k_tokens; ++j) {
          if (visible[j]) sum += weights[j] * Real(v[(j * heads + h) * v_dim + x]);
        }
        result.outputs[(i * heads + h) * v_dim + x] = sum / total;
      }
    }
  }
  return result;
}

AttentionRounded attention(const Spec& spec, std::int64_t q_tokens, std::int64_t k_tokens, std::int64_t heads,
                           std::int64_t v_dim, std::span<const std::int64_t> q_positions,
                           std::span<const std::int64_t> k_positions, std::span<const double> q,
                           std::span<const double> k, std::span<const double> v, bool causal, int precision_bits) {
  // Ziv-style: accept when the results at P and 2P bits round alike in every element. Attention
  // has no closed-form error bound here (softmax conditioning depends on the data), so agreement of
  // two precisions that differ by P bits stands in for it; the loop stops at 8192 bits.
  auto round_all = [&](const std::vector<Real>& values) {
    std::vector<double> out;
    out.reserve(values.size());
    for (const Real& value : values) {
      out.push_back(isnan(value) ? std::numeric_limits<double>::quiet_NaN()
                                 : static_cast<double>(round_to_format(value, spec.dtype)));
    }
    return out;
  };
  auto same = [](const std::vector<double>& a, const std::vector<double>& b) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return false;
      if (!std::isnan(a[i]) && (a[i] != b[i] || std::signbit(a[i]) != std::signbit(b[i]))) return false;
    }
    return true;
  };
  AttentionRounded previous;
  for (int bits = precision_bits;; bits *= 2) {
    const AttentionResult exact =
        attention_exact(spec, q_tokens, k_tokens, heads, v_dim, q_positions, k_positions, q, k, v, causal, bits);
    AttentionRounded current{round_all(exact.scores), round_all(exact.outputs)};
    if (bits > precision_bits && same(current.scores, previous.scores) && same(current.outputs, previous.outputs)) {
      return current;
    }
    if (bits >= 8192) return current;
    previous = std::move(current);
  }
}

Real sinusoidal(std::int64_t position, int dim_index, int model_dim, int precision_bits) {
  PrecisionScope scope(precision_bits);
  const int i = dim_index / 2;
  const Real a = Real(static_cast<long long>(position)) / pow(Real(10000), Real(2 * i) / model_dim);
  return dim_index % 2 == 0 ? sin(a) : cos(a);
}

namespace {
// S_j = Σ_{k<j} e^{i r θ_k} for j = 0..n (S_0 = 0), as (re, im).
std::vector<std::pair<Real, Real>> partial_sums(const Spec& spec, std::int64_t distance) {
  const int n = spec.rotary_dim / 2;
  std::vector<std::pair<Real, Real>> sums(n + 1, {Real(0), Real(0)});
  for (int j = 0; j < n; ++j) {
    const Real a = Real(static_cast<long long>(distance)) * frequency<Real>(spec, j);
    sums[j + 1] = {sums[j].first + cos(a), sums[j].second + sin(a)};
  }
  return sums;
}
}  // namespace

Real decay_average(const Spec& spec, std::int64_t distance, int precision_bits) {
  validate(spec);
  PrecisionScope scope(precision_bits);
  const auto sums = partial_sums(spec, distance);
  const int n = spec.rotary_dim / 2;
  Real total(0);
  for (int j = 1; j <= n; ++j) total += sqrt(sums[j].first * sums[j].first + sums[j].second * sums[j].second);
  return total / n;
}

DecayBound decay_bound(const Spec& spec, std::int64_t distance, std::span<const double> q, std::span<const double> k,
                       int precision_bits) {
  validate(spec);
  check_size("q", q.size(), spec.head_dim);
  check_size("k", k.size(), spec.head_dim);
  PrecisionScope scope(precision_bits);
  const int n = spec.rotary_dim / 2;
  const auto sums = partial_sums(spec, distance);
  // h_i = (q_a + i q_b)·conj(k_a + i k_b) for pair i's dims (a, b); h_n = 0.
  std::vector<std::pair<Real, Real>> h(n + 1, {Real(0), Real(0)});
  for (int i = 0; i < n; ++i) {
    const PairDims pd = pair_dims(spec, i);
    const Real qa(q[pd.first]), qb(q[pd.second]), ka(k[pd.first]), kb(k[pd.second]);
    h[i] = {qa * ka + qb * kb, qb * ka - qa * kb};
  }
  Real lhs_re(0), lhs_im(0), largest_step(0), sum_abs(0);
  for (int i = 0; i < n; ++i) {
    const Real a = Real(static_cast<long long>(distance)) * frequency<Real>(spec, i);
    const Real c = cos(a), s = sin(a);
    lhs_re += h[i].first * c - h[i].second * s;
    lhs_im += h[i].first * s + h[i].second * c;
    const Real dr = h[i + 1].first - h[i].first, di = h[i + 1].second - h[i].second;
    const Real step = sqrt(dr * dr + di * di);
    if (step > largest_step) largest_step = step;
    sum_abs += sqrt(sums[i + 1].first * sums[i + 1].first + sums[i + 1].second * sums[i + 1].second);
  }
  return {sqrt(lhs_re * lhs_re + lhs_im * lhs_im), largest_step * sum_abs};
}

}  // namespace ropecheck::reference
