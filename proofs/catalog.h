// The identity catalog (docs/design.md "Identities"): each identity of RoPE written once, as a
// RapidCheck property generic over the implementation under test (runner/implementation.h).
//
// Every property generates its case with the generators of proofs/generators.h, asks the
// implementation for outputs, turns each output into a ball around the exact value using the error
// bound the implementation claims (proofs/ball.h), evaluates both sides of the identity in ball
// arithmetic and requires the balls to intersect. The tolerance of every check is therefore the
// claimed bound propagated through the identity's expression — derived, never tuned. The formula,
// the seed it comes from and the derivation of each check sit next to its code in catalog.cpp.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "runner/implementation.h"

namespace ropecheck::proofs {

// The implementation under test and what it claims (runner/implementation.h).
using runner::Real;
using runner::Shape;
using runner::ErrorClaim;
using runner::Implementation;

// The worst discrepancy one identity met over every comparison it made (successful and shrinking
// runs alike). Discrepancies are relative to each comparison's natural scale (the input pair norm
// ρ times the attention factor for rotated values, Σρ_q·ρ_k for dot products, …).
struct Tally {
  long cases = 0;              // property evaluations that reached a verdict (not discarded)
  long comparisons = 0;
  double worst_relative = 0;   // max |lhs − rhs| / scale
  double worst_units = 0;      // the same divided by u = 2^-p of each case's dtype (u·ρ units)
  double worst_fraction = 0;   // max |lhs − rhs| / allowed (≤ 1 when the identity holds)
};

struct Identity {
  std::string_view name;
  std::string_view formula;
  std::string_view source;  // seed file or paper
  // The Coq theorem of the same name that proves the identity for all inputs over the reals
  // (proofs/formal/README.md), as "file.v" under proofs/formal/coq/; empty: tested here only.
  std::string_view proof;
  // The RapidCheck property body: generates with operator* on generators, throws RapidCheck's
  // failure (with a description) on a violated check, discards cases the implementation does not
  // support. Updates `tally` on every evaluation.
  void (*property)(const Implementation& implementation, Tally& tally);
};

// Every identity, in docs/design.md's order.
std::span<const Identity> catalog();
// nullptr when no identity has this name.
const Identity* find_identity(std::string_view name);

}  // namespace ropecheck::proofs
