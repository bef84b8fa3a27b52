// RapidCheck generators for the identity catalog: specs, positions and input values.
//
// RapidCheck's own floating-point generators never produce ±0, subnormals or values near the
// overflow threshold, which is where RoPE implementations break (docs/rope.md §5); inputs here are
// built from random bit patterns of the spec's dtype, weighted toward those classes. Positions are
// weighted toward 0, 1, 2^k ± 1 and toward angles near multiples of π/2 (where cos or sin is
// near 0 and cancellation in x·cos − y·sin is worst). Failing values are shown as hex floats.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include "spec/spec.h"

namespace ropecheck {
// RapidCheck shows counterexamples through showValue (found by argument-dependent lookup).
void showValue(const Spec& spec, std::ostream& os);
}  // namespace ropecheck

namespace ropecheck::proofs {

// A tensor of input values; shown as C99 hex floats in counterexamples.
struct Values {
  std::vector<double> data;
};
void showValue(const Values& values, std::ostream& os);

namespace gen {

enum class AxesChoice { any, single, multi };

struct SpecOptions {
  AxesChoice axes = AxesChoice::any;
  // Bias toward partial rotary (rotary_dim < head_dim) for the pass-through identity.
  bool partial_rotary = false;
  // Upper bound on rotary_dim/2 (the cost of the reference grows with it). head_dim ≤ 256 always.
  int max_pairs = 128;
};

// Valid specs (validate() passes): both layouts, even dims 2..256 (biased small), partial rotary,
// bases 2..1e7, every scaling type with valid parameters, 2-D RoPE and M-RoPE, both directions,
// every dtype.
rc::Gen<Spec> spec(SpecOptions options = {});

// One position in [0, max_position] (negated with probability 1/5 when allow_negative): biased to
// 0, 1, 2^k ± 1 and to m with m·θ'_j near a multiple of π/2 for a random pair j of `spec`.
rc::Gen<std::int64_t> position(const Spec& spec, std::int64_t max_position, bool allow_negative);
// One position tuple (position_components(spec) components).
rc::Gen<std::vector<std::int64_t>> position_tuple(const Spec& spec, std::int64_t max_position, bool allow_negative);

// A finite value of `dtype` from a random bit pattern, weighted toward ±0, subnormals, values near
// the largest finite one, values near 1, and any finite pattern.
rc::Gen<double> value(Dtype dtype);
// A finite value of `dtype` with |v| in [2^-6, 2^6] or 0 (for attention, where softmax of huge
// scores only measures the exponent range).
rc::Gen<double> moderate_value(Dtype dtype);
rc::Gen<Values> values(Dtype dtype, std::size_t count);
rc::Gen<Values> moderate_values(Dtype dtype, std::size_t count);

}  // namespace gen
}  // namespace ropecheck::proofs
