// The reference on consecutive positions (a range, a sweep, a sequence of one head): cos·A and sin·A
// of every pair by angle addition in double-double, with a proven bound and apply's rounding test,
// so that every position of a range can be checked (reference/README.md "Consecutive positions").
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "reference/double_double.h"
#include "reference/rope.h"
#include "spec/spec.h"

namespace ropecheck::reference {

// Positions advanced from one seed before the next (the seed: fast_trig.h's cos_sin_of_multiple at
// the block's first position, within 1449·2^-106·|A| as a point of the plane). The state's error
// grows by at most 12.76·2^-106·|A| a step (proofs/formal/coq/Consecutive.v `consecutive_run`):
// after the K − 1 steps of a block it is ≤ (1449 + 12.76·1023)·2^-106·|A| < 2^-92·|A|. A seed costs
// about one present-path angle, so the seeds' share of the time is about 1/K (the measured figure:
// bench/README.md "reference_consecutive").
inline constexpr std::int64_t kConsecutiveBlock = 1024;
// |computed − exact| of cos·A and sin·A on the consecutive path, per unit of |A| (Consecutive.v
// `consecutive_block_bound`).
inline constexpr double kConsecutiveError = 0x1p-92;

// Where a call's positions went.
struct ConsecutiveStats {
  std::int64_t tokens = 0;           // positions evaluated
  std::int64_t fallback_tokens = 0;  // positions taken whole by the present path (ApplyPlan): the
                                     // zero angle, seeds outside fast_trig's domain, |cos| or |sin|
                                     // below 2^-60·|A|, the f32 recipe, |A| outside [2^-500, 2^500]
  std::int64_t general_pairs = 0;    // pairs of the others handed to apply's general rules (special
                                     // values; roundings the test leaves undecided: the MPFR cold path)
  ConsecutiveStats& operator+=(const ConsecutiveStats& o) {
    tokens += o.tokens;
    fallback_tokens += o.fallback_tokens;
    general_pairs += o.general_pairs;
    return *this;
  }
};

// apply's correctly rounded outputs (and evaluate's exact values) of tokens at consecutive positions
// first, first + 1, …: the same bits as ApplyPlan(spec, {model}) (correct rounding is unique).
// A token's position tuple is (p, …, p) for multi-axis specs (every component the position: the
// text tokens of M-RoPE). Under Model::f32_recipe (its angle RN32(RN32(p)·RN32(θ)) does not add up)
// every token takes the present path. Reads only its constants: threads may share one.
class ConsecutiveReference {
 public:
  // Throws std::invalid_argument for an invalid spec (as ApplyPlan).
  explicit ConsecutiveReference(const Spec& spec, Model model = Model::exact);

  const Spec& spec() const { return plan_.spec(); }
  const ApplyPlan& plan() const { return plan_; }

  // Tokens at positions first … first + count − 1, `heads` rows of head_dim values each:
  // input [count][heads][head_dim] into out (the same size; out may be input). |positions| ≤ 2^62.
  // Throws std::invalid_argument on sizes or positions out of range.
  void apply_into(std::int64_t first, std::int64_t count, std::int64_t heads, std::span<const double> input, std::span<double> out,
                  ConsecutiveStats* stats = nullptr) const;
  // The same with evaluate's exact values (ApplyPlan::evaluate_into's contract).
  void evaluate_into(std::int64_t first, std::int64_t count, std::int64_t heads, std::span<const double> input, std::span<double> rounded,
                     std::span<long double> exact, ConsecutiveStats* stats = nullptr) const;
  // The same for the unit probes of `ropecheck certify` (runner/certify.h): per token two heads,
  // head 0 every pair (1, 0) and head 1 every pair (0, 1), pass-through dims 1 — into rounded and
  // exact, count·2·head_dim values each; stats as evaluate_into's over those two heads. Head 0 is
  // evaluated and head 1 is its image: the rotation of (0, 1) is (−sin·A, cos·A), that of (1, 0)
  // (cos·A, sin·A), and RN and the reference's exact values are odd (RN(−v) = −RN(v)); where a
  // sine is zero (the angle 0: position 0) the sign of that zero is not, and the run of positions
  // holding position 0 evaluates both heads.
  void evaluate_unit_probes(std::int64_t first, std::int64_t count, std::span<double> rounded, std::span<long double> exact,
                            ConsecutiveStats* stats = nullptr) const;

 private:
  void run(std::int64_t first, std::int64_t count, std::int64_t heads, std::span<const double> input, std::span<double> out,
           long double* exact, ConsecutiveStats* stats) const;

  ApplyPlan plan_;
  bool additive_ = false;                     // the consecutive path applies (exact model, every step and A usable)
  std::vector<std::array<double, 3>> theta_;  // θ'_j as triple-doubles (the seeds)
  DoubleDouble attention_{0, 0};
  std::vector<double> step_c_hi_, step_c_lo_, step_s_hi_, step_s_lo_;  // ±one position's cos θ'_j, sin θ'_j
};

}  // namespace ropecheck::reference
