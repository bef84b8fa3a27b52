#include "runner/implementation.h"

#include <algorithm>

#include "spec/schedule.h"

namespace ropecheck::runner {

judge::CaseKind case_kind(ApplyResult::Status status) {
  switch (status) {
    case ApplyResult::Status::crash:
      return judge::CaseKind::crash;
    case ApplyResult::Status::timeout:
      return judge::CaseKind::timeout;
    case ApplyResult::Status::abi:
      return judge::CaseKind::abi;
    case ApplyResult::Status::load:
      return judge::CaseKind::load;
    case ApplyResult::Status::guard:
      return judge::CaseKind::guard;
    case ApplyResult::Status::missing:
      return judge::CaseKind::missing;
    case ApplyResult::Status::shape:
      return judge::CaseKind::shape;
    case ApplyResult::Status::unavailable:
      return judge::CaseKind::unavailable;
    case ApplyResult::Status::ok:
    case ApplyResult::Status::unsupported:
    case ApplyResult::Status::kernel_error:
      break;
  }
  return judge::CaseKind::status;
}

std::string_view kind_name(ApplyResult::Status status) {
  if (status == ApplyResult::Status::ok) return "ok";
  if (status == ApplyResult::Status::unsupported) return "unsupported";
  return judge::name(case_kind(status));
}

ErrorClaim ErrorClaim::from_tolerance(const judge::Tolerance& tolerance, const Spec& spec) {
  const reference::Format format = reference::format_of(spec.dtype);
  const double u = std::ldexp(1.0, -format.precision);
  const double scale = std::max(1.0, std::fabs(attention_factor<double>(spec)));
  ErrorClaim claim;
  claim.relative = tolerance.value * u * scale;
  claim.per_angle = tolerance.per_radian * u * scale;
  claim.absolute = std::ldexp(1.0, format.emin - format.precision + 1);
  return claim;
}

std::vector<double> Implementation::apply(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                          std::span<const double> input) const {
  ApplyResult r = run(spec, shape, positions, input);
  if (r.status != ApplyResult::Status::ok) throw ImplementationFailure(std::string(kind_name(r.status)) + ": " + r.message);
  return std::move(r.output);
}

bool Implementation::supports(const Spec& spec) const {
  const std::string key = to_string(spec);
  {
    std::lock_guard<std::mutex> lock(supported_mutex_);
    const auto it = supported_.find(key);
    if (it != supported_.end()) return it->second;
  }
  const std::vector<double> input(static_cast<std::size_t>(spec.head_dim), 0.5);
  const std::vector<std::int64_t> positions(static_cast<std::size_t>(position_components(spec)), 1);
  const bool ok = run(spec, Shape{1, 1, spec.head_dim}, positions, input).status != ApplyResult::Status::unsupported;
  std::lock_guard<std::mutex> lock(supported_mutex_);
  supported_[key] = ok;
  return ok;
}

judge::Tolerance Implementation::tolerance(const Spec& spec) const {
  if (claims_.tolerance) return *claims_.tolerance;
  if (std::optional<judge::Tolerance> proven = proven_bound(spec, claims_.model)) return *proven;
  return judge::default_tolerance(claims_.model, spec, claims_.theta_ulps);
}

ErrorClaim Implementation::claim(const Spec& spec) const {
  // An element-ULP tolerance says nothing about the pair's normwise error: the claim then comes
  // from the implementation's own bound or the model's default.
  if (claims_.tolerance && claims_.tolerance->kind == judge::Tolerance::Kind::e)
    return ErrorClaim::from_tolerance(*claims_.tolerance, spec);
  if (std::optional<ErrorClaim> own = own_claim(spec)) return *own;
  std::optional<judge::Tolerance> bound = proven_bound(spec, claims_.model);
  return ErrorClaim::from_tolerance(bound ? *bound : judge::default_tolerance(claims_.model, spec, claims_.theta_ulps), spec);
}

}  // namespace ropecheck::runner
