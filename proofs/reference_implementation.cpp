#include "proofs/reference_implementation.h"

#include <cmath>
#include <stdexcept>

#include "spec/schedule.h"

namespace ropecheck::proofs {

double attention_magnitude(const Spec& spec) {
  // long double carries ≥ 64 bits; the factor 1 + 2^-40 covers its rounding in the schedule.
  return static_cast<double>(std::fabs(attention_factor<long double>(spec))) * (1 + 0x1p-40);
}

ErrorClaim exact_form_claim(const Spec& spec, int precision_bits, reference::Form form) {
  const double g = attention_magnitude(spec);
  ErrorClaim claim;
  claim.relative = g * std::ldexp(1.0, 4 - precision_bits);
  claim.per_angle = g * std::ldexp(1.0, 14 - precision_bits);
  if (form == reference::Form::complex) claim.per_position = g * std::ldexp(1.0, 3 - precision_bits);
  return claim;
}

ReferenceImplementation::ReferenceImplementation(int precision_bits, reference::Model model, Output output)
    : precision_bits_(precision_bits), model_(model), output_(output) {
  if (precision_bits < 64) throw std::invalid_argument("precision: expected >= 64 bits, got " + std::to_string(precision_bits));
  if (output == Output::exact && model != reference::Model::exact) {
    throw std::invalid_argument("model: the f32 recipe has no exact outputs (it is judged rounded to its dtype)");
  }
}

std::string ReferenceImplementation::name() const {
  if (output_ == Output::exact) return "reference";
  return model_ == reference::Model::exact ? "reference-rounded" : "reference-f32-recipe";
}

bool ReferenceImplementation::supports(const Spec&) const { return true; }

std::vector<double> ReferenceImplementation::apply(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                                   std::span<const double> input) const {
  return reference::apply(spec, shape, positions, input, reference::Options{precision_bits_, model_});
}

std::optional<std::vector<Real>> ReferenceImplementation::apply_exact(const Spec& spec, Shape shape,
                                                                      std::span<const std::int64_t> positions,
                                                                      std::span<const double> input) const {
  if (output_ != Output::exact) return std::nullopt;
  return reference::rotate_exact(spec, shape, positions, input, precision_bits_, reference::Form::matrix);
}

ErrorClaim ReferenceImplementation::claim(const Spec& spec) const {
  if (output_ == Output::exact) return exact_form_claim(spec, precision_bits_, reference::Form::matrix);
  const double g = attention_magnitude(spec);
  ErrorClaim claim = ErrorClaim::from_units(g, spec);  // one correct rounding: u·g·ρ, 2^(emin−p)
  if (model_ == reference::Model::f32_recipe) {
    const double u32 = 0x1p-24;
    claim.per_angle = g * 3 * u32 / (1 - 3 * u32) * (1 + 0x1p-40);  // γ₃, see the header
  }
  return claim;
}

}  // namespace ropecheck::proofs
