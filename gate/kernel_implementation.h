// A project kernel or a plugin, run in a child process (gate/isolation.h), as the identity
// catalog's implementation under test: `ropecheck props --impl scalar|avx2|avx512|cuda|auto`,
// `props --plugin`, and `run --props` use it.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "gate/compare.h"
#include "gate/isolation.h"
#include "proofs/implementation.h"

namespace ropecheck::gate {

// Its error claim (the catalog's tolerances are derived from it):
//  - a project kernel (Source::library): the kernel's own proven bound, optimized/error_bounds.h
//    `on_the_fly_bound` (proofs/formal: f32_kernel_bound and friends), in units of u·ρ·max(1, |g|);
//  - a plugin: the gate's default tolerance for the claimed model (gate/tolerance.cpp);
//  - an explicit `--tolerance e=N` overrides either.
// A call that crashes, hangs or errs throws, which RapidCheck records as that case's failure.
class KernelImplementation final : public proofs::Implementation {
 public:
  KernelImplementation(IsolatedKernel& kernel, Source source, std::string name, Model model,
                       std::optional<Tolerance> tolerance)
      : kernel_(kernel), source_(source), name_(std::move(name)), model_(model), tolerance_(std::move(tolerance)) {}

  std::string name() const override { return name_; }
  // Asked once per spec with a one-pair call: the kernel's own answer (unsupported or not).
  bool supports(const Spec& spec) const override;
  std::vector<double> apply(const Spec& spec, reference::Shape shape, std::span<const std::int64_t> positions,
                            std::span<const double> input) const override;
  proofs::ErrorClaim claim(const Spec& spec) const override;

 private:
  IsolatedKernel& kernel_;
  Source source_;
  std::string name_;
  Model model_;
  std::optional<Tolerance> tolerance_;
  mutable std::map<std::string, bool> supported_;
};

// The proven bound of the project's kernels for a spec (optimized/error_bounds.h on_the_fly_bound,
// proofs/formal f32/f16/bf16_kernel_bound and f64_rotation_bound), as a gate tolerance.
Tolerance project_kernel_bound(const Spec& spec);

// Which candidate `--impl NAME` / `--plugin PATH` names: a project kernel (scalar, avx2, avx512, cuda,
// auto), the reference self-check ("reference"), or a plugin. Throws UsageError (one line) for an
// unknown name, a kernel that does not run on this machine, or a missing plugin file.
struct Candidate {
  Source source = Source::library;
  std::string implementation = "auto";
  std::string plugin;
};
Candidate resolve_candidate(const std::string& implementation, const std::string& plugin);

}  // namespace ropecheck::gate
