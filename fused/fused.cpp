// The fused operation's inputs and exact reference (fused/fused.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "base/random.h"
#include "fused/exact.h"
#include "fused/fp8.h"
#include "reference/rounding.h"

namespace ropecheck::fused {
namespace {

using reference::Real;

// The largest tensor the fused judge holds (values): its exact values take 32 bytes each and more.
constexpr std::int64_t kMaxValues = std::int64_t{1} << 26;

void expect_size(const char* tensor, std::size_t got, std::int64_t expected, const std::string& what) {
  if (static_cast<std::int64_t>(got) != expected) {
    throw InputError(std::string(tensor) + ": expected " + std::to_string(expected) + " values (" + what + "), got " + std::to_string(got));
  }
}

void expect_finite(const char* tensor, const std::vector<double>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]))
      throw InputError(std::string(tensor) + ": expected finite values, got a non-finite value at index " + std::to_string(i));
  }
}

std::int64_t cache_values(const FusedSpec& spec, const FusedInputs& in) {
  return in.num_blocks * spec.block_size * spec.k_heads * spec.rope.head_dim;
}

// The stored value of exact (or data-dtype rounded) v at scale s: FP8 of v/s.
double quantize(const FusedSpec& spec, const Real& v, const Real& s) { return quantize_fp8(Real(v / s), spec.fp8, spec.saturate); }

// The values of one tensor as the reference stores them, and its dynamic scales.
void round_tensor(const FusedSpec& spec, const ExactTensor& exact, std::int64_t tokens, std::vector<double>& out,
                  std::vector<double>& scales) {
  const Dtype data = spec.rope.dtype;
  out.resize(exact.y.size());
  if (spec.fp8 == Fp8::none) {
    for (std::size_t i = 0; i < exact.y.size(); ++i) out[i] = static_cast<double>(reference::round_to_format(exact.y[i], data));
    return;
  }
  reference::PrecisionScope scope(kExactBits);
  // v: the exact value (one rounding at the end) or its rounding to the data dtype (intermediate).
  std::vector<Real> v;
  v.reserve(exact.y.size());
  for (const Real& y : exact.y) v.push_back(spec.rounding == Rounding::once ? y : reference::round_to_format(y, data));
  const std::int64_t d = spec.rope.head_dim, heads = exact.heads;
  if (spec.scale == ScaleMode::fixed) {
    const Real s(spec.scale_value);
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = quantize(spec, v[i], s);
    return;
  }
  // Dynamic: ŝ = fl32(amax|v|/M) over the token (or the token's head), returned as the kernel does;
  // a group of zeros gets ŝ = 1 (its values are 0 at any scale).
  const std::int64_t groups = spec.scale == ScaleMode::per_head ? tokens * heads : tokens;
  std::vector<Real> amax(static_cast<std::size_t>(groups), Real(0));
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      Real& m = amax[scale_group(spec, t, h, heads)];
      for (std::int64_t i = 0; i < d; ++i) m = std::max(m, Real(abs(v[(t * heads + h) * d + i])));
    }
  }
  scales.resize(static_cast<std::size_t>(groups));
  const double max = fp8_format(spec.fp8).max;
  for (std::int64_t g = 0; g < groups; ++g) {
    const double s = static_cast<double>(reference::round_to_format(Real(amax[g] / max), Dtype::f32));
    scales[g] = s > 0 ? s : 1.0;
  }
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const Real s(scales[scale_group(spec, t, h, heads)]);
      for (std::int64_t i = 0; i < d; ++i) out[(t * heads + h) * d + i] = quantize(spec, v[(t * heads + h) * d + i], s);
    }
  }
}

}  // namespace

void check_inputs(const FusedSpec& spec, const FusedInputs& in) {
  const std::int64_t d = spec.rope.head_dim;
  if (in.tokens < 1 || in.tokens > kMaxValues / d / std::max(spec.q_heads, spec.k_heads)) {
    throw InputError("tokens: expected from 1 to " + std::to_string(kMaxValues / d / std::max(spec.q_heads, spec.k_heads)) +
                     " (q and k at most 2^26 values), got " + std::to_string(in.tokens));
  }
  expect_size("q", in.q.size(), in.tokens * spec.q_heads * d, "[tokens][q_heads][head_dim]");
  expect_size("k", in.k.size(), in.tokens * spec.k_heads * d, "[tokens][k_heads][head_dim]");
  expect_size("positions", in.positions.size(), in.tokens * position_components(spec.rope), "[tokens][position components]");
  expect_finite("q", in.q);
  expect_finite("k", in.k);
  for (auto p : in.positions) {
    if (p > (std::int64_t{1} << 62) || p < -(std::int64_t{1} << 62)) {
      throw InputError("positions: expected values within ±2^62, got " + std::to_string(p));
    }
  }
  if (spec.norm != NormPlace::none) {
    expect_size("q_weight", in.q_weight.size(), d, "[head_dim]: the spec has a norm");
    expect_size("k_weight", in.k_weight.size(), d, "[head_dim]: the spec has a norm");
    expect_finite("q_weight", in.q_weight);
    expect_finite("k_weight", in.k_weight);
  }
  if (spec.destination != Destination::paged) return;
  expect_size("slot_mapping", in.slot_mapping.size(), in.tokens, "[tokens]: the destination is paged");
  if (in.num_blocks < 1 || in.num_blocks > kMaxValues / spec.block_size / spec.k_heads / d) {
    throw InputError("num_blocks: expected from 1 to " + std::to_string(kMaxValues / spec.block_size / spec.k_heads / d) +
                     " (the cache at most 2^26 values), got " + std::to_string(in.num_blocks));
  }
  const std::int64_t slots = in.num_blocks * spec.block_size;
  std::vector<char> used(static_cast<std::size_t>(slots), 0);
  for (std::int64_t t = 0; t < in.tokens; ++t) {
    const std::int64_t s = in.slot_mapping[t];
    if (s == -1) continue;
    if (s < 0 || s >= slots) {
      throw InputError("slot_mapping: expected -1 or a slot in [0, num_blocks·block_size = " + std::to_string(slots) + "), got " +
                       std::to_string(s) + " at token " + std::to_string(t));
    }
    if (used[s]++) throw InputError("slot_mapping: expected distinct slots, got slot " + std::to_string(s) + " twice");
  }
}

void check_output_sizes(const FusedSpec& spec, const FusedInputs& in, const FusedOutputs& out) {
  const std::int64_t d = spec.rope.head_dim;
  expect_size("q_out", out.q_out.size(), in.tokens * spec.q_heads * d, "[tokens][q_heads][head_dim]");
  if (spec.destination == Destination::paged) {
    expect_size("k_cache", out.k_cache.size(), cache_values(spec, in), "[num_blocks][block_size][k_heads][head_dim]");
  } else {
    expect_size("k_out", out.k_out.size(), in.tokens * spec.k_heads * d, "[tokens][k_heads][head_dim]");
  }
  if (spec.fp8 == Fp8::none || spec.scale == ScaleMode::fixed) return;
  const bool per_head = spec.scale == ScaleMode::per_head;
  expect_size("q_scale", out.q_scale.size(), in.tokens * (per_head ? spec.q_heads : 1), per_head ? "[tokens][q_heads]" : "[tokens]");
  expect_size("k_scale", out.k_scale.size(), in.tokens * (per_head ? spec.k_heads : 1), per_head ? "[tokens][k_heads]" : "[tokens]");
}

FusedInputs random_inputs(const FusedSpec& spec, std::int64_t tokens, std::uint64_t seed) {
  SplitMix64 rng(seed);
  FusedInputs in;
  in.tokens = tokens;
  const std::int64_t d = spec.rope.head_dim;
  const Dtype input = input_dtype_of(spec.rope);
  auto draw = [&](std::size_t n, double low, double high) {
    std::vector<double> v(n);
    for (double& x : v) x = static_cast<double>(reference::round_to_format(low + (high - low) * rng.unit(), input));
    return v;
  };
  in.q = draw(static_cast<std::size_t>(tokens * spec.q_heads * d), -4, 4);
  in.k = draw(static_cast<std::size_t>(tokens * spec.k_heads * d), -4, 4);
  in.positions.resize(static_cast<std::size_t>(tokens * position_components(spec.rope)));
  for (auto& p : in.positions) p = rng.range(0, 8191);
  if (spec.norm != NormPlace::none) {
    const bool one_plus = spec.weight == NormWeight::one_plus;
    in.q_weight = draw(static_cast<std::size_t>(d), one_plus ? -0.5 : 0.5, one_plus ? 0.5 : 1.5);
    in.k_weight = draw(static_cast<std::size_t>(d), one_plus ? -0.5 : 0.5, one_plus ? 0.5 : 1.5);
  }
  if (spec.destination == Destination::paged) {
    in.num_blocks = (tokens + spec.block_size - 1) / spec.block_size + 1;
    std::vector<std::int64_t> slots(static_cast<std::size_t>(in.num_blocks * spec.block_size));
    for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<std::int64_t>(i);
    for (std::size_t i = slots.size(); i > 1; --i) std::swap(slots[i - 1], slots[rng.below(i)]);  // Fisher–Yates
    in.slot_mapping.assign(slots.begin(), slots.begin() + tokens);
    for (auto& s : in.slot_mapping) {
      if (rng.chance(1, 8)) s = -1;
    }
  }
  return in;
}

FusedOutputs fused_reference(const FusedSpec& spec, const FusedInputs& in) {
  check_inputs(spec, in);
  FusedOutputs out;
  round_tensor(spec, exact_tensor(spec, in, Which::q), in.tokens, out.q_out, out.q_scale);
  std::vector<double> k;
  round_tensor(spec, exact_tensor(spec, in, Which::k), in.tokens, k, out.k_scale);
  if (spec.destination == Destination::contiguous) {
    out.k_out = std::move(k);
    return out;
  }
  // Paged: slot s is row s % block_size of block s / block_size, i.e. row s of the cache viewed as
  // [num_blocks·block_size][k_heads][head_dim]; unwritten slots hold 0.
  const std::int64_t row = spec.k_heads * spec.rope.head_dim;
  out.k_cache.assign(static_cast<std::size_t>(cache_values(spec, in)), 0.0);
  for (std::int64_t t = 0; t < in.tokens; ++t) {
    const std::int64_t s = in.slot_mapping[t];
    if (s >= 0) std::copy(k.begin() + t * row, k.begin() + (t + 1) * row, out.k_cache.begin() + s * row);
  }
  return out;
}

}  // namespace ropecheck::fused
