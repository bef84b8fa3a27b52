// The per-spec plan: everything a kernel needs that depends on the spec only, computed once
// (spec/schedule.h instantiated with 128-bit binary floating point) and shared by every token.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "optimized/kernel_types.h"
#include "spec/spec.h"

namespace ropecheck::kernels {

// The slow exact path's data for a spec (optimized/exact.cpp).
std::shared_ptr<const ExactPath> make_exact_path(const Spec& spec);

class Plan {
 public:
  explicit Plan(const Spec& spec);  // spec must be valid (spec::validate)

  const Spec& spec() const { return spec_; }
  // Plain view for the kernels (pointers into this object: keep it alive while in use).
  PlanView view() const;
  // θ'_j/2π as a 0.128 fixed-point fraction of a turn, for tests and the CUDA kernel.
  std::uint64_t step_hi(int pair) const { return step_hi_[static_cast<std::size_t>(pair)]; }
  std::uint64_t step_lo(int pair) const { return step_lo_[static_cast<std::size_t>(pair)]; }
  double attention_factor() const { return attention_; }
  // Every θ'_j ≤ kMaxProvenFrequency: the range for which the angle paths' error is proven
  // (proofs/formal/gappa/angle_fast.g, angle_precise.g). Outside it the kernels return
  // ROPECHECK_ERROR_UNSUPPORTED (reachable only with scaling factors far below 1).
  bool frequencies_in_proven_range() const { return frequencies_in_proven_range_; }
  static constexpr double kMaxProvenFrequency = 65536.0;  // 2^16 radians per position

 private:
  Spec spec_;
  std::vector<std::uint64_t> step_hi_;
  std::vector<std::uint64_t> step_lo_;
  std::vector<std::int32_t> component_;
  double attention_ = 1.0;
  double attention_lo_ = 0.0;       // A − attention_ (f64 data's double-double A)
  double max_frequency_ = 0.0;      // the largest θ'_j (f64 data's rounding test)
  bool attention_is_one_ = true;
  bool frequencies_in_proven_range_ = true;
  double radians_per_unit_hi_ = 0.0;
  double radians_per_unit_lo_ = 0.0;
  std::shared_ptr<const ExactPath> exact_;
};

}  // namespace ropecheck::kernels
