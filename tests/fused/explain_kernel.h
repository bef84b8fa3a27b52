// A careful fused kernel in float32 for the explanation's tests (tests/fused/explain_test.cpp), with
// the fused bugs of fused/explain.h switchable one by one or together: inv_freq = 1/base^(2j/r),
// the angle float(m)·inv_freq, cos/sin of that float angle, the norm's sum of squares in order,
// 1/sqrt(mean + eps), the rotation's products and sums in float32, then one rounding to the data
// dtype or t = v/ŝ in float32 quantized to FP8 with ŝ = amax/M per token (or the fixed scale).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fused/fp8.h"
#include "fused/fused.h"
#include "reference/rounding.h"

namespace ropecheck::fused::testing {

struct Bugs {
  bool swap_weights = false;    // q normalized with k_weight and k with q_weight
  bool norm_moved = false;      // the norm after the rotation where the spec says before, and back
  float eps = -1;               // >= 0: this eps in place of the spec's
  bool weight_flipped = false;  // x̂·w for x̂·(1 + w), and back
  double scale_factor = 1;      // the returned scale this many times the one the values were quantized at
  bool saturation_flipped = false;
  std::int64_t slot_shift = 0;  // k written at slot + shift (mod the cache's slots)
  bool pairing_mixed = false;   // interleaved pairs for half, and back
  bool partial_lost = false;    // every dim rotated
};

struct CarefulKernel {
  const FusedSpec& spec;
  Bugs bug;

  void normalize(std::vector<float>& v, const std::vector<double>& weight) const {
    const int d = spec.rope.head_dim;
    float sum = 0;
    for (float a : v) sum += a * a;
    const float eps = bug.eps >= 0 ? bug.eps : std::stof(spec.eps);
    const float r = 1.0f / std::sqrt(sum / static_cast<float>(d) + eps);
    const bool one_plus = (spec.weight == NormWeight::one_plus) != bug.weight_flipped;
    for (int i = 0; i < d; ++i) {
      const float w = one_plus ? 1.0f + static_cast<float>(weight[i]) : static_cast<float>(weight[i]);
      v[i] = (v[i] * r) * w;
    }
  }

  void rotate(std::vector<float>& v, std::int64_t position) const {
    const int d = spec.rope.head_dim;
    const bool half = (spec.rope.layout == Layout::half) != bug.pairing_mixed;
    const int rot = bug.partial_lost ? d : spec.rope.rotary_dim;
    const float base = std::stof(spec.rope.base);
    for (int j = 0; j < rot / 2; ++j) {
      const float inv_freq = 1.0f / std::pow(base, static_cast<float>(2 * j) / static_cast<float>(rot));
      const float angle = static_cast<float>(position) * inv_freq;
      const float c = static_cast<float>(std::cos(static_cast<double>(angle)));
      const float s = static_cast<float>(std::sin(static_cast<double>(angle)));
      const int f = half ? j : 2 * j, g = half ? j + rot / 2 : 2 * j + 1;
      const float a = v[f] * c - v[g] * s;
      const float b = v[f] * s + v[g] * c;
      v[f] = a;
      v[g] = b;
    }
  }

  std::vector<float> head(const FusedInputs& in, bool is_k, std::int64_t t, std::int64_t h) const {
    const int d = spec.rope.head_dim;
    const std::int64_t heads = is_k ? spec.k_heads : spec.q_heads;
    const std::vector<double>& x = is_k ? in.k : in.q;
    const std::vector<double>& weight = (is_k != bug.swap_weights) ? in.k_weight : in.q_weight;
    std::vector<float> v(d);
    for (int i = 0; i < d; ++i) v[i] = static_cast<float>(x[(t * heads + h) * d + i]);
    NormPlace norm = spec.norm;
    if (bug.norm_moved && norm != NormPlace::none) norm = norm == NormPlace::before ? NormPlace::after : NormPlace::before;
    if (norm == NormPlace::before) normalize(v, weight);
    rotate(v, in.positions[t]);
    if (norm == NormPlace::after) normalize(v, weight);
    return v;
  }

  // One tensor: the stored values and the per-token scales.
  void tensor(const FusedInputs& in, bool is_k, std::vector<double>& out, std::vector<double>& scales) const {
    const int d = spec.rope.head_dim;
    const std::int64_t heads = is_k ? spec.k_heads : spec.q_heads;
    for (std::int64_t t = 0; t < in.tokens; ++t) {
      std::vector<std::vector<float>> rows;
      float amax = 0;
      for (std::int64_t h = 0; h < heads; ++h) {
        rows.push_back(head(in, is_k, t, h));
        for (float a : rows.back()) amax = std::max(amax, std::fabs(a));
      }
      const float max = spec.fp8 == Fp8::none ? 1.0f : static_cast<float>(fp8_format(spec.fp8).max);
      const float scale = spec.scale == ScaleMode::fixed ? std::stof(spec.scale_value) : amax / max;
      if (spec.fp8 != Fp8::none && spec.scale == ScaleMode::per_token) scales.push_back(bug.scale_factor * scale);
      const bool saturate = spec.saturate != bug.saturation_flipped;
      for (const auto& row : rows) {
        for (int i = 0; i < d; ++i) {
          if (spec.fp8 == Fp8::none) {
            out.push_back(static_cast<double>(reference::round_to_format(static_cast<double>(row[i]), spec.rope.dtype)));
          } else {
            out.push_back(quantize_fp8(static_cast<double>(row[i] / scale), spec.fp8, saturate));
          }
        }
      }
    }
  }

  FusedOutputs run(const FusedInputs& in) const {
    FusedOutputs out;
    tensor(in, false, out.q_out, out.q_scale);
    std::vector<double> k;
    tensor(in, true, k, out.k_scale);
    if (spec.destination == Destination::contiguous) {
      out.k_out = k;
      return out;
    }
    const std::int64_t row = spec.k_heads * spec.rope.head_dim;
    const std::int64_t slots = in.num_blocks * spec.block_size;
    out.k_cache.assign(static_cast<std::size_t>(slots * row), 0.0);
    for (std::int64_t t = 0; t < in.tokens; ++t) {
      std::int64_t s = in.slot_mapping[t];
      if (s < 0) continue;
      s = ((s + bug.slot_shift) % slots + slots) % slots;
      std::copy(k.begin() + t * row, k.begin() + (t + 1) * row, out.k_cache.begin() + s * row);
    }
    return out;
  }
};

}  // namespace ropecheck::fused::testing
