// The exact values of the fused operation for one of q and k (internal to fused/: the reference
// rounds them, the judge measures against them).
#pragma once

#include <cstdint>
#include <vector>

#include "fused/fused.h"
#include "reference/multiprecision.h"

namespace ropecheck::fused {

// The working precision of the exact values: the reference's (reference/rope.h Options).
inline constexpr int kExactBits = reference::kDefaultPrecisionBits;

enum class Which { q, k };

struct ExactTensor {
  std::int64_t heads = 0;
  std::vector<reference::Real> y;  // [tokens][heads][head_dim]: the exact composed value Y
  // For the judge (fused/bounds.h): per element, ρ: the exact output pair's norm (norm none or
  // before) or the exact rotated pair's norm before the norm (after); |Y| on pass-through dims.
  std::vector<double> rho;
  std::vector<double> rms;    // [tokens][heads]: the exact rms of the normalized vector (norm only)
  std::vector<double> angle;  // [tokens][rotary_dim/2]: |m·θ'_j|
};

// Inputs must have passed check_inputs.
ExactTensor exact_tensor(const FusedSpec& spec, const FusedInputs& inputs, Which which);

// The elements of one tensor that share a dynamic scale: (token, head) → its group index, and the
// number of groups ([tokens] per token, [tokens][heads] per head).
inline std::int64_t scale_group(const FusedSpec& spec, std::int64_t token, std::int64_t head, std::int64_t heads) {
  return spec.scale == ScaleMode::per_head ? token * heads + head : token;
}

}  // namespace ropecheck::fused
