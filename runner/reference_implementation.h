// The reference as an implementation under test (runner/implementation.h), and the error bounds of
// its three exact forms. The bounds are derived here, at the claim, from the error bounds that
// reference/rope.cpp states for its computation.
#pragma once

#include <memory>
#include <mutex>

#include "runner/implementation.h"
#include "reference/rope.h"

namespace ropecheck::runner {

// Error bound of reference::rotate_exact(…, precision_bits, form) in the ErrorClaim sense. With
// P = precision_bits and g = |attention factor|:
//
// matrix and elementwise: reference/rope.cpp bounds cos and sin (times g) each within
//   E = g·(|φ|·2^(13−P) + 2^(3−P))   (the schedule's θ'_j within 2^(13−P) relative, so the angle
//   within |φ|·2^(13−P); MPFR's cos/sin and the product with g add 2^(3−P)).
//   An output component c̃·x − s̃·y is then within E·(|x| + |y|) ≤ √2·E·ρ of the exact one, and its
//   own evaluation rounds two nonzero products and their sum (every other term of the matrix row is
//   an exact zero; the elementwise form has the same two products): ≤ 3·2^-P·(|c̃x| + |s̃y|) ≤
//   3·√2·2^-P·g·ρ·(1 + E). Altogether ≤ g·ρ·2^-P·(√2·2^13·|φ| + √2·8 + 3·√2 + tiny)
//   ≤ g·ρ·(2^(14−P)·|φ| + 2^(4−P)).
// complex: (e^{iθ})^|m| by repeated squaring (RoFormer §3.2.1). The starting value cos θ + i sin θ
//   is within ε₁ = √2·2^-P of e^{iθ} (relative, |·| ≈ 1), and each complex product in P-bit
//   arithmetic adds μ = 2√2·2^-P relative (Higham, Accuracy and Stability, §3.6). By induction
//   over the square-and-multiply chain, w^n carries relative error ≤ n·(ε₁ + μ) − μ (a squaring
//   doubles the exponent and the error and adds μ; a product adds both errors and μ), so
//   ≤ |m|·3√2·2^-P ≤ |m|·2^(3−P) — independent of θ, unlike the angle-based forms. θ'_j's own
//   error enters as in the other forms (|m|·θ·2^(13−P) = |φ|·2^(13−P)). Then as above:
//   ≤ g·ρ·(2^(14−P)·|φ| + 2^(3−P)·|m| + 2^(4−P)).
ErrorClaim exact_form_claim(const Spec& spec, int precision_bits, reference::Form form);

// |attention factor| of the spec, rounded up (1 for schemes without one).
double attention_magnitude(const Spec& spec);

// The reference under test. Three variants (runner/registry.cpp names them):
// - `reference-exact` (Output::exact, Model::exact): rotate_exact in matrix form at `precision_bits`;
//   claim as above; discrepancies reported in bits of agreement. Its run() gives the correctly
//   rounded outputs.
// - `reference` (Output::rounded, Model::exact): reference::apply, correctly rounded to spec.dtype: each component
//   within half an ulp, ≤ u·|A| ≤ u·g·ρ in the normal range, ≤ 2^(emin−p) when subnormal.
// - `reference-f32-recipe` (Output::rounded, Model::f32_recipe): the float32 recipe (reference/rope.h): the angle
//   φ̂ = RN32(RN32(m)·RN32(θ)) = φ·(1+e₁)(1+e₂)(1+e₃), |eᵢ| ≤ 2^-24, so |φ̂ − φ| ≤ γ₃·|φ| with
//   γ₃ = 3·2^-24/(1 − 3·2^-24) (Higham Lemma 3.1); rotating by φ̂ instead of φ moves each component
//   by at most ‖R(φ̂)x − R(φ)x‖ = 2ρ|sin((φ̂−φ)/2)| ≤ ρ·|φ̂ − φ| (times g), then one correct
//   rounding as above: |a − A| ≤ g·ρ·(u + γ₃·|φ|) + 2^(emin−p). The eᵢ model assumes no overflow:
//   specs whose binary32 angle could reach 2^128 at |m| ≤ 2^40 (θ'_j > 2^87) are declined (supports).
class ReferenceImplementation final : public Implementation {
 public:
  enum class Output { exact, rounded };
  ReferenceImplementation(int precision_bits, reference::Model model, Output output, Claims claims = {});

  std::string name() const override;
  std::string selector() const override { return "--impl " + name(); }
  bool supports(const Spec& spec) const override;
  std::int64_t max_position() const override { return std::int64_t{1} << 40; }
  bool supports_negative_positions() const override { return true; }
  ApplyResult run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                  std::span<const double> input) const override;
  std::optional<std::vector<Real>> apply_exact(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                               std::span<const double> input) const override;
  int exact_precision_bits() const override { return output_ == Output::exact ? precision_bits_ : 0; }

  int precision_bits() const { return precision_bits_; }

 protected:
  std::optional<judge::Tolerance> proven_bound(const Spec& spec, judge::Model model) const override;
  std::optional<ErrorClaim> own_claim(const Spec& spec) const override;

 private:
  // The plan of the last spec run (apply's MPFR schedule once per spec, not once per call: a sweep
  // runs one spec call after call). Shared, so that a call holds its plan while another replaces it.
  std::shared_ptr<const reference::ApplyPlan> plan_for(const Spec& spec) const;

  int precision_bits_;
  reference::Model model_;
  Output output_;
  mutable std::mutex plan_mutex_;
  mutable std::shared_ptr<const reference::ApplyPlan> plan_;
};

}  // namespace ropecheck::runner
