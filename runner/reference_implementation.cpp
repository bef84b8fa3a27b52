#include "runner/reference_implementation.h"

#include <cmath>
#include <stdexcept>

#include "spec/schedule.h"

namespace ropecheck::runner {

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

ReferenceImplementation::ReferenceImplementation(int precision_bits, reference::Model model, Output output, Claims claims)
    : Implementation(std::move(claims)), precision_bits_(precision_bits), model_(model), output_(output) {
  if (precision_bits < 64) throw std::invalid_argument("precision: expected >= 64 bits, got " + std::to_string(precision_bits));
  if (output == Output::exact && model != reference::Model::exact) {
    throw std::invalid_argument("model: the f32 recipe has no exact outputs (it is judged rounded to its dtype)");
  }
}

std::string ReferenceImplementation::name() const {
  if (output_ == Output::exact) return "reference-exact";
  return model_ == reference::Model::exact ? "reference" : "reference-f32-recipe";
}

// The f32 recipe's claim (reference_implementation.h) holds while its binary32 angle
// RN32(RN32(m)·RN32(θ'_j)) is finite: past that the angle is ±Inf and the recipe's outputs NaN, which
// no bound describes. With |m| ≤ max_position() = 2^40 the product stays below 2^128 when every
// RN32(θ'_j) < 2^88; θ'_j ≤ 2^87 (long double: 2^-60 relative) is that with room. Above it (linear
// factor below about 6e-27) the recipe variant declines the spec.
bool ReferenceImplementation::supports(const Spec& spec) const {
  if (model_ != reference::Model::f32_recipe) return true;
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    if (!(frequency<long double>(spec, j) <= 0x1p87L)) return false;
  }
  return true;
}

std::shared_ptr<const reference::ApplyPlan> ReferenceImplementation::plan_for(const Spec& spec) const {
  const std::lock_guard<std::mutex> lock(plan_mutex_);
  if (!plan_ || plan_->spec() != spec) {
    plan_ = std::make_shared<const reference::ApplyPlan>(spec, reference::Options{precision_bits_, model_});
  }
  return plan_;
}

ApplyResult ReferenceImplementation::run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                         std::span<const double> input) const {
  ApplyResult result;
  if (!supports(spec)) {
    result.status = ApplyResult::Status::unsupported;
    result.message = "the f32 recipe's binary32 angle overflows for this spec (a frequency above 2^87)";
    return result;
  }
  try {
    result.output = plan_for(spec)->apply(shape, positions, input);
  } catch (const std::exception& e) {
    result.status = ApplyResult::Status::kernel_error;
    result.message = e.what();
  }
  return result;
}

std::optional<judge::Tolerance> ReferenceImplementation::proven_bound(const Spec&, judge::Model model) const {
  // Correctly rounded: half an ulp of A is at most u·|A| ≤ u·ρ·|g|, so e ≤ 1 (judge/pair_rule.h).
  if (output_ == Output::exact || !judge::judges_exact_values(model) || model_ != reference::Model::exact) return std::nullopt;
  return judge::Tolerance{judge::Tolerance::Kind::e, 1.0, 0.0, "correct rounding: half an ulp of A is at most u*|A| <= u*rho*g"};
}

std::optional<std::vector<Real>> ReferenceImplementation::apply_exact(const Spec& spec, Shape shape,
                                                                      std::span<const std::int64_t> positions,
                                                                      std::span<const double> input) const {
  if (output_ != Output::exact) return std::nullopt;
  return reference::rotate_exact(spec, shape, positions, input, precision_bits_, reference::Form::matrix);
}

std::optional<ErrorClaim> ReferenceImplementation::own_claim(const Spec& spec) const {
  if (output_ == Output::exact) return exact_form_claim(spec, precision_bits_, reference::Form::matrix);
  const double g = attention_magnitude(spec);
  ErrorClaim claim;  // one correct rounding: u·g·ρ, one subnormal quantum
  claim.relative = g * std::ldexp(1.0, -significand_bits(spec.dtype));
  claim.absolute = std::ldexp(1.0, reference::format_of(spec.dtype).emin - significand_bits(spec.dtype) + 1);
  if (model_ == reference::Model::f32_recipe) {
    const double u32 = 0x1p-24;
    claim.per_angle = g * 3 * u32 / (1 - 3 * u32) * (1 + 0x1p-40);  // γ₃, see the header
  }
  return claim;
}

}  // namespace ropecheck::runner
