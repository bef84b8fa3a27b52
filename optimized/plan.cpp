// Plan construction. The schedule (spec/schedule.h) is evaluated in 128-bit binary floating point
// (Boost.Multiprecision cpp_bin_float, header-only), not in long double: the phase step must be
// accurate to ~2^-100 turn so that position·step stays accurate for f64 outputs at large positions
// (error_bounds.h, step 1). The decision and its reason are in optimized/README.md.
#include "optimized/plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/multiprecision/cpp_bin_float.hpp>

#include "optimized/error_bounds.h"
#include "optimized/f64_table.h"
#include "spec/schedule.h"

namespace ropecheck::kernels {
namespace {

// 128 significand bits, expression templates off (spec/schedule.h uses auto-free plain code).
using Wide = boost::multiprecision::number<
    boost::multiprecision::cpp_bin_float<128, boost::multiprecision::digit_base_2>, boost::multiprecision::et_off>;

// frac(v) as a 0.128 fixed-point fraction, rounded to nearest (v ≥ 0).
void to_fixed_point(Wide v, std::uint64_t& hi, std::uint64_t& lo) {
  using boost::multiprecision::floor;
  using boost::multiprecision::ldexp;
  v = v - floor(v);
  const Wide scaled_hi = ldexp(v, 64);
  const Wide hi_part = floor(scaled_hi);
  const Wide scaled_lo = ldexp(scaled_hi - hi_part, 64);
  Wide lo_part = floor(scaled_lo + Wide(0.5));
  hi = hi_part.convert_to<std::uint64_t>();
  if (lo_part >= ldexp(Wide(1), 64)) {  // rounding carried into the high word
    lo = 0;
    hi += 1;  // wraps to 0 at a full turn, which is frac = 0 again
  } else {
    lo = lo_part.convert_to<std::uint64_t>();
  }
}

}  // namespace

Plan::Plan(const Spec& spec) : spec_(spec) {
  const int pairs = spec.rotary_dim / 2;
  step_hi_.resize(static_cast<std::size_t>(pairs));
  step_lo_.resize(static_cast<std::size_t>(pairs));
  component_.resize(static_cast<std::size_t>(pairs));
  const Wide two_pi = 2 * boost::multiprecision::acos(Wide(-1));
  for (int j = 0; j < pairs; ++j) {
    const Wide theta = frequency<Wide>(spec, j);
    if (!(theta <= Wide(kMaxProvenFrequency))) frequencies_in_proven_range_ = false;
    max_frequency_ = std::max(max_frequency_, theta.convert_to<double>());
    Wide turns = theta / two_pi;
    if (turns < 0) turns = turns + boost::multiprecision::ceil(-turns);  // frequencies are > 0; defensive
    to_fixed_point(turns, step_hi_[static_cast<std::size_t>(j)], step_lo_[static_cast<std::size_t>(j)]);
    component_[static_cast<std::size_t>(j)] = position_component(spec, j);
  }
  const Wide attention = ropecheck::attention_factor<Wide>(spec);
  attention_ = attention.convert_to<double>();
  attention_is_one_ = attention == 1;
  attention_lo_ = Wide(attention - Wide(attention_)).convert_to<double>();
  // 2π·2^-65 as hi + lo doubles: hi = RN(2π)·2^-65, lo = RN(2π − RN(2π))·2^-65.
  const double hi = two_pi.convert_to<double>();
  const double lo = Wide(two_pi - Wide(hi)).convert_to<double>();
  radians_per_unit_hi_ = std::ldexp(hi, -65);
  radians_per_unit_lo_ = std::ldexp(lo, -65);
  exact_ = make_exact_path(spec);
}

PlanView Plan::view() const {
  PlanView v;
  v.head_dim = spec_.head_dim;
  v.rotary_dim = spec_.rotary_dim;
  v.pairs = spec_.rotary_dim / 2;
  v.layout = spec_.layout == Layout::half ? LayoutCode::half : LayoutCode::interleaved;
  v.dtype = static_cast<DtypeCode>(static_cast<int>(spec_.dtype));
  v.inverse = spec_.direction == Direction::inverse;
  v.components = position_components(spec_);
  v.step_hi = step_hi_.data();
  v.step_lo = step_lo_.data();
  v.component = component_.data();
  v.attention = attention_;
  v.attention_is_one = attention_is_one_;
  v.radians_per_unit_hi = radians_per_unit_hi_;
  v.radians_per_unit_lo = radians_per_unit_lo_;
  v.precise_angles = spec_.dtype == Dtype::f64;  // error_bounds.h: f64 data needs the precise path
  // error_bounds.h "16-bit data": a binary32 rotation is within the 16-bit bounds; for bfloat16 (the
  // exponent range of binary32) only with |A| ≤ 1, where no product y·s can overflow binary32.
  // With the rounding test's per-output margin (error_bounds.h "ROUNDING TEST") the binary32
  // rotation decides nearly every output (bench/README.md "kernel_bench": second_share).
  v.rotate_binary32 = spec_.dtype == Dtype::f16 || (spec_.dtype == Dtype::bf16 && std::fabs(attention_) <= 1.0);
  // error_bounds.h "ROUNDING TEST": S = max(1, |A|) (A as the kernels hold it: one rounding, within
  // the bounds' margins); K·S rounded upward (proofs/formal/gappa/rounding_test.g takes S = 1)
  const double scale = std::max(1.0, std::fabs(attention_));
  const double up = std::numeric_limits<double>::infinity();
  v.decide_k64 = std::nextafter(kDecideBinary64 * scale, up);
  v.decide_k64_table = std::nextafter(kDecideTableByRotation * scale, up);
  v.decide_floor64 = kDecideFloorBinary64;
  // the binary32 rotation's weights: K32·|c| (relative to the binary32 entry: no S) + K_τ·S
  v.decide_k32 = kDecideBinary32;
  v.decide_table32 = std::nextafter(kDecideTable32 * scale, up);
  v.decide_floor32 = kDecideFloorBinary32;
  v.correctly_rounded = true;
  // f64 data (kernel_f64-inl.h): K ≥ (table + step 1's angle, |p| < 2^40 + rotation)·S, rounded up
  v.f64_grid = spec_.dtype == Dtype::f64 ? f64_grid_table() : nullptr;
  v.attention_lo = attention_lo_;
  const double angle_error = 0x1p40 * (0x1p-126 + max_frequency_ * 0x1p-120 * (1.0 + 0x1p-50));
  v.decide_k_f64 = std::nextafter((kF64TableError + angle_error + kF64RotationError) * scale * (1.0 + 0x1p-50), up);
  // |x| + |y| < 2^1020/S: every product and sum of kernel_f64-inl.h f64_rotate (≤ 4·S·(|x| + |y|)) and
  // the outputs stay below 2^1022 (finite, and the TwoProd and TwoSum errors exact or in E's floor)
  v.f64_sum_limit = 0x1p1020 / scale;
  v.exact = exact_.get();
  return v;
}

}  // namespace ropecheck::kernels
