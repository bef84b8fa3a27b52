// ropecheck's public C++ API (include/README.md): the exact RoPE, correctly rounded — the oracle
// every implementation is judged against (reference/README.md). Implemented in the library target
// ropecheck::ropecheck (reference/public_reference.cpp).
#pragma once

#include <ropecheck/spec.h>

#include <cstdint>
#include <span>
#include <vector>

namespace ropecheck {

// The rotation of `input` ([tokens, heads, head_dim] of `shape`, row-major) at `positions`
// (spec.position_components() values per token, row-major), computed exactly and correctly rounded
// to spec.dtype(); returned as doubles (every value of that dtype is one). Inputs should be values of
// spec.input_dtype(). Special values follow IEEE 754 arithmetic of the formula; pass-through dims are
// copied bit for bit. Throws std::invalid_argument when the sizes do not match the shape and spec.
std::vector<double> apply_exact(const RopeSpec& spec, TensorShape shape, std::span<const std::int64_t> positions,
                                std::span<const double> input);

}  // namespace ropecheck
