#include "gate/kernel_implementation.h"

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "gate/commands/command.h"

#include "optimized/error_bounds.h"
#include "spec/schedule.h"

namespace ropecheck::gate {

bool KernelImplementation::supports(const Spec& spec) const {
  const std::string key = to_string(spec);
  const auto it = supported_.find(key);
  if (it != supported_.end()) return it->second;
  std::vector<double> input(static_cast<std::size_t>(spec.head_dim), 0.5);
  std::vector<std::int64_t> positions(static_cast<std::size_t>(position_components(spec)), 1);
  const ApplyResult r = kernel_.apply(spec, reference::Shape{1, 1, spec.head_dim}, positions, input);
  const bool ok = r.status != ApplyResult::Status::unsupported;
  supported_[key] = ok;
  return ok;
}

std::vector<double> KernelImplementation::apply(const Spec& spec, reference::Shape shape,
                                                std::span<const std::int64_t> positions,
                                                std::span<const double> input) const {
  ApplyResult r = kernel_.apply(spec, shape, positions, input);
  if (r.status != ApplyResult::Status::ok) throw std::runtime_error(std::string(kind_name(r.status)) + ": " + r.message);
  return std::move(r.output);
}

proofs::ErrorClaim KernelImplementation::claim(const Spec& spec) const {
  const double attention = attention_factor<double>(spec);
  double units;
  if (tolerance_ && tolerance_->kind == Tolerance::Kind::e) {
    units = tolerance_->value;
  } else if (source_ == Source::library && model_ == Model::exact) {
    units = project_kernel_bound(spec).value;
  } else {
    units = default_tolerance(model_, spec).value;
  }
  return proofs::ErrorClaim::from_units(units * std::max(1.0, std::fabs(attention)), spec);
}

Tolerance project_kernel_bound(const Spec& spec) {
  Tolerance t;
  t.kind = Tolerance::Kind::e;
  t.value = kernels::on_the_fly_bound(spec.dtype, attention_factor<double>(spec) == 1.0);
  t.source = "the project kernel's proven bound (optimized/error_bounds.h, proofs/formal/coq/ErrorBound.v)";
  return t;
}

Candidate resolve_candidate(const std::string& implementation, const std::string& plugin) {
  Candidate candidate;
  candidate.implementation = implementation.empty() ? "auto" : implementation;
  candidate.plugin = plugin;
  if (!plugin.empty()) {
    candidate.source = Source::plugin;
    if (!std::filesystem::is_regular_file(plugin)) {
      throw UsageError("--plugin: expected an existing shared library, got '" + plugin + "'");
    }
    return candidate;
  }
  if (candidate.implementation == "reference") {
    candidate.source = Source::reference;
    return candidate;
  }
  bool known = candidate.implementation == "auto", available = known;
  std::string names = "reference, auto";
  for (const KernelInfo& k : project_kernels()) {
    names += ", " + k.name;
    if (k.name == candidate.implementation) {
      known = true;
      available = k.available;
    }
  }
  if (!known) throw UsageError("--impl: expected one of " + names + ", got '" + candidate.implementation + "'");
  if (!available) {
    throw UsageError("--impl " + candidate.implementation + ": expected a kernel that runs on this machine (it does not)");
  }
  return candidate;
}

}  // namespace ropecheck::gate
