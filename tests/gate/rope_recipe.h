// An independent RoPE for the tests of the direct check and custom suites, written from
// docs/rope.md §1-2 and nothing in reference/ or optimized/: θ_j = base^(−2j/d), pair j is
// dims (2j, 2j + 1) (interleaved) or (j, j + d/2) (half), (x, y) → (x cos − y sin, x sin + y cos),
// dims past rotary_dim pass through. Angles and products in long double, rounded once to the
// output dtype (reference::round_to_format, the one borrowed piece: a rounding, not a rotation).
//
// Why it is close enough to stand for a correct candidate: for positions below 2^20 the long double
// angle's error is a few 2^-64·p ≈ 2^-44 rad, so the value before the last rounding is within
// 2^-40 of the exact one, far inside the gate's e ≤ 4 for f32 or f16. And it can plant the usual
// mistakes on purpose: the sine's sign flipped, positions off by one, the other pairing of dims.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/rounding.h"
#include "spec/spec.h"

namespace ropecheck::testing_recipe {

struct Recipe {
  bool half = true;  // half (NeoX) pairing, else interleaved
  int head_dim = 0, rotary_dim = 0;
  long double base = 10000;
  Dtype dtype = Dtype::f32;
  // Planted mistakes.
  bool flip_sin = false;
  std::int64_t position_shift = 0;
  bool swap_layout = false;
};

// input and result row-major [tokens, heads, head_dim], one position per token.
inline std::vector<double> rotate(const Recipe& r, const std::vector<std::int64_t>& positions, std::int64_t heads,
                                  const std::vector<double>& input) {
  std::vector<double> out(input);
  const int pairs = r.rotary_dim / 2;
  const bool half = r.half != r.swap_layout;
  std::vector<long double> c(static_cast<std::size_t>(pairs)), s(static_cast<std::size_t>(pairs));
  for (std::size_t t = 0; t < positions.size(); ++t) {
    const long double p = static_cast<long double>(positions[t] + r.position_shift);
    for (int j = 0; j < pairs; ++j) {
      const long double theta = std::pow(r.base, -2.0L * j / r.rotary_dim);
      c[static_cast<std::size_t>(j)] = std::cos(p * theta);
      s[static_cast<std::size_t>(j)] = (r.flip_sin ? -1 : 1) * std::sin(p * theta);
    }
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::size_t base = (t * static_cast<std::size_t>(heads) + static_cast<std::size_t>(h)) * static_cast<std::size_t>(r.head_dim);
      for (int j = 0; j < pairs; ++j) {
        const std::size_t a = base + static_cast<std::size_t>(half ? j : 2 * j);
        const std::size_t b = base + static_cast<std::size_t>(half ? j + pairs : 2 * j + 1);
        const long double x = input[a], y = input[b];
        const long double cj = c[static_cast<std::size_t>(j)], sj = s[static_cast<std::size_t>(j)];
        out[a] = reference::round_to_format(static_cast<double>(x * cj - y * sj), r.dtype);
        out[b] = reference::round_to_format(static_cast<double>(x * sj + y * cj), r.dtype);
      }
    }
  }
  return out;
}

// Inputs uniform in [−1, 1) from a fixed LCG, rounded to `dtype`: the tests' own draw.
inline std::vector<double> draw(std::size_t count, Dtype dtype, std::uint64_t state = 12345) {
  std::vector<double> v(count);
  for (double& x : v) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = reference::round_to_format(2 * (static_cast<double>(state >> 11) / 9007199254740992.0) - 1, dtype);
  }
  return v;
}

}  // namespace ropecheck::testing_recipe
