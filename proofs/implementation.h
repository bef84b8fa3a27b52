// The implementation under test, as the identity catalog sees it (DESIGN.md "Identities"): anything
// that applies a Spec to a [tokens, heads, head_dim] tensor at given positions — the reference at
// any precision and rounding model, the project's kernels (optimized/, C ABI), external plugins.
//
// An implementation also states the error bound it claims (ErrorClaim). Every tolerance in the
// catalog is derived from these claims by ball arithmetic (proofs/ball.h), never tuned.
//
// Writing an adapter (a kernel, a plugin) takes name(), supports(), apply() and claim(): convert the
// doubles to the kernel's dtype buffer, call it, convert back, and return the kernel's bound from
// optimized/error_bounds.h as ErrorClaim::from_units(e, spec). See proofs/README.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reference/multiprecision.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/spec.h"

namespace ropecheck::proofs {

using reference::Real;
using reference::Shape;

// What an implementation promises about each rotated pair of its output. For an input pair (x, y)
// with ρ = √(x² + y²), whose exact result is (A, B) = g·R(φ)·(x, y) (g the spec's attention factor,
// φ = the pair's angle m·θ'_j, sign included for the inverse direction), each output component obeys
//
//     |a − A| ≤ ρ · (relative + per_angle·|φ| + per_position·|m|) + absolute.
//
// A dtype implementation with a normwise bound e (DESIGN.md "Error metric": e = max|a−A|/(u·ρ))
// claims relative = e·u; `absolute` covers gradual underflow (results in the subnormal range carry an
// absolute error up to half the smallest quantum, 2^(emin−p), which no multiple of u·ρ bounds when ρ
// is itself subnormal; a kernel that computes in a wider format and rounds once meets that too). The reference at P bits claims terms in 2^-P (proofs/reference_implementation.h).
// Pass-through dims are claimed bit-identical by every implementation.
struct ErrorClaim {
  double relative = 0;
  double per_angle = 0;
  double per_position = 0;
  double absolute = 0;

  // The usual dtype claim: |a − A| ≤ e·u·ρ + one subnormal quantum, u = 2^-p of spec.dtype. A kernel
  // whose intermediate products can underflow separately raises `absolute` (a quantum per rounding).
  static ErrorClaim from_units(double e, const Spec& spec) {
    const reference::Format format = reference::format_of(spec.dtype);
    ErrorClaim claim;
    claim.relative = e * std::ldexp(1.0, -format.precision);
    // Half the smallest quantum, 2^(emin−p), is not a double for f64 (2^-1075); the full quantum
    // 2^(emin−p+1) is, for every dtype, and bounds the subnormal rounding error too.
    claim.absolute = std::ldexp(1.0, format.emin - format.precision + 1);
    return claim;
  }
};

class Implementation {
 public:
  virtual ~Implementation() = default;

  // Shown in reports and in the replay command (`--impl NAME`).
  virtual std::string name() const = 0;

  // False for a spec this implementation does not handle (e.g. a kernel without bf16): the catalog
  // then discards the generated case instead of judging it.
  virtual bool supports(const Spec& spec) const = 0;

  // Largest |position| the implementation accepts (DESIGN.md: positions up to 2^31 at least).
  virtual std::int64_t max_position() const { return std::int64_t{1} << 31; }
  // Whether negative positions are meaningful (R_{−m} = R_mᵀ); the reference accepts them.
  virtual bool supports_negative_positions() const { return false; }

  // Outputs in spec.dtype, as doubles (every dtype value is one); row-major [tokens, heads, head_dim];
  // positions: position_components(spec) per token. Inputs are values of spec.dtype.
  virtual std::vector<double> apply(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                    std::span<const double> input) const = 0;

  // Unrounded outputs, for implementations that have them (the reference). When present, the
  // catalog judges these instead of apply()'s and reports discrepancies in bits of agreement.
  virtual std::optional<std::vector<Real>> apply_exact(const Spec& /*spec*/, Shape /*shape*/,
                                                       std::span<const std::int64_t> /*positions*/,
                                                       std::span<const double> /*input*/) const {
    return std::nullopt;
  }
  // Working precision of apply_exact's values in bits; 0 when there is no apply_exact.
  virtual int exact_precision_bits() const { return 0; }

  // The bound the implementation claims for outputs of this spec (of apply_exact when it has one).
  virtual ErrorClaim claim(const Spec& spec) const = 0;
};

}  // namespace ropecheck::proofs
