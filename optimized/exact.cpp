// The slow exact path of the kernels (exact.h). MPFR through Boost.Multiprecision's fixed-precision
// mpfr_float_backend (each value carries its own precision; no process-wide default precision is
// read or changed: that problem of Boost 1.74, reference/multiprecision.h, is the variable-precision
// type's). No lock: every value is this call's own, and MPFR keeps its caches, flags and exponent
// range per thread (a thread-safe build, mpfr_buildopt_tls_p: tests/reference/multiprecision_test.cpp),
// so threads take this path at once and get the bits they get alone.
#include "optimized/exact.h"

#include "optimized/host_device.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include <boost/multiprecision/mpfr.hpp>

#include "optimized/plan.h"
#include "spec/schedule.h"

namespace ropecheck::kernels {

struct ExactPath {
  Spec spec;
};

std::shared_ptr<const ExactPath> make_exact_path(const Spec& spec) {
  auto path = std::make_shared<ExactPath>();
  path->spec = spec;
  return path;
}

namespace {

std::atomic<std::uint64_t> second_outputs{0};
std::atomic<std::uint64_t> exact_outputs{0};

template <unsigned kDigits>
using Fixed = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<kDigits>, boost::multiprecision::et_off>;

// v rounded to binary64 with round-to-odd (truncate, then set the last bit when inexact): for a
// format of p ≤ 51 bits RN_p(RO_53(v)) = RN_p(v) (Boldo and Melquiond, "Emulation of FMA and
// correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 2008), and RO is
// monotonic, as RN is.
double round_to_odd(mpfr_srcptr v) {
  double d = mpfr_get_d(v, MPFR_RNDZ);
  if (std::isfinite(d) && mpfr_cmp_d(v, d) != 0) {
    std::uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    bits |= 1;
    std::memcpy(&d, &bits, sizeof d);
  }
  return d;
}

// The F16/BF16 conversions and round_to_odd32 of the kernels (convert-inl.h), for the baseline ISA.
#include "optimized/convert-inl.h"

// RN of d to the dtype (d a round-to-odd binary64 value, or exact), as a binary64 value; the bits
// are the stores' (convert-inl.h) for every value, NaNs included.
double round_to_dtype(double d, DtypeCode dtype) {
  switch (dtype) {
    case DtypeCode::f64:
      return d;
    case DtypeCode::f32:
      return static_cast<double>(static_cast<float>(d));
    case DtypeCode::f16:
      return static_cast<double>(half_to_float(float_to_half(round_to_odd32(d))));
    case DtypeCode::bf16:
      return static_cast<double>(bf16_to_float(float_to_bf16(round_to_odd32(d))));
  }
  return d;
}

// RN of v to the dtype, as a binary64 value: binary64 directly (round-to-odd to 53 bits first would
// be a second rounding), the narrower formats through round_to_odd.
double rounded(mpfr_srcptr v, DtypeCode dtype) {
  return dtype == DtypeCode::f64 ? mpfr_get_d(v, MPFR_RNDN) : round_to_dtype(round_to_odd(v), dtype);
}

bool same_bits(double a, double b) {
  std::uint64_t x;
  std::uint64_t y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x == y;
}

// One attempt at P = digits(Fixed<kDigits>) bits. Every operation is MPFR's, correctly rounded
// (relative error ≤ 2^-P each): θ'_j and A from the schedule, relative error ≤ 2^(13−P) as in the
// reference (reference/README.md: 2^-243 at 256 bits); φ = m·θ'_j one more rounding; cos and sin
// of φ then carry |φ|·2^(14−P) + 2^-P; the two products, the sum and the factor A four roundings
// more. Per output, in units of (|x| + |y|)·|A|: ≤ (|φ| + 1)·2^(15−P) + 2^(14−P) ≤ (|φ| + 8)·2^(16−P),
// the bound taken below (a factor ≥ 2 to spare). Decided when both ends of [v − E, v + E] (rounded
// outward) round to the same value of the dtype (RN is monotonic); `last`: no test (an exact tie).
template <unsigned kDigits>
bool attempt(const Spec& spec, int j, std::int64_t m, double x, double y, DtypeCode dtype, bool last, double& a, double& b) {
  using R = Fixed<kDigits>;
  const int precision = std::numeric_limits<R>::digits;
  const R theta = frequency<R>(spec, j);
  const R attention = attention_factor<R>(spec);
  const R phi = theta * R(m);
  const R c = cos(phi);
  const R s = sin(phi);
  const R first = attention * (R(x) * c - R(y) * s);
  const R second = attention * (R(x) * s + R(y) * c);
  R error = (abs(phi) + 8) * abs(attention) * (R(std::fabs(x)) + R(std::fabs(y)));
  error = ldexp(error, 16 - precision);
  double results[2];
  const R* values[2] = {&first, &second};
  for (int k = 0; k < 2; ++k) {
    const R& v = *values[k];
    if (last) {
      results[k] = rounded(v.backend().data(), dtype);
      continue;
    }
    R lo;
    R hi;
    mpfr_sub(lo.backend().data(), v.backend().data(), error.backend().data(), MPFR_RNDD);
    mpfr_add(hi.backend().data(), v.backend().data(), error.backend().data(), MPFR_RNDU);
    const double rounded_lo = rounded(lo.backend().data(), dtype);
    const double rounded_hi = rounded(hi.backend().data(), dtype);
    if (!same_bits(rounded_lo, rounded_hi)) return false;
    results[k] = rounded_lo;
  }
  a = results[0];
  b = results[1];
  return true;
}

// RN64 of cos(φ)·A and sin(φ)·A (φ ≠ 0), decided as in `attempt` (the bound per unit of |A|).
template <unsigned kDigits>
bool attempt_ieee(const Spec& spec, int j, std::int64_t m, bool last, double& c_out, double& s_out) {
  using R = Fixed<kDigits>;
  const int precision = std::numeric_limits<R>::digits;
  const R theta = frequency<R>(spec, j);
  const R attention = attention_factor<R>(spec);
  const R phi = theta * R(m);
  const R c = attention * cos(phi);
  const R s = attention * sin(phi);
  const R error = ldexp((abs(phi) + 8) * abs(attention), 16 - precision);
  const R* values[2] = {&c, &s};
  double results[2];
  for (int k = 0; k < 2; ++k) {
    const R& v = *values[k];
    if (last) {
      results[k] = mpfr_get_d(v.backend().data(), MPFR_RNDN);
      continue;
    }
    R lo;
    R hi;
    mpfr_sub(lo.backend().data(), v.backend().data(), error.backend().data(), MPFR_RNDD);
    mpfr_add(hi.backend().data(), v.backend().data(), error.backend().data(), MPFR_RNDU);
    const double rounded_lo = mpfr_get_d(lo.backend().data(), MPFR_RNDN);
    if (!same_bits(rounded_lo, mpfr_get_d(hi.backend().data(), MPFR_RNDN))) return false;
    results[k] = rounded_lo;
  }
  c_out = results[0];
  s_out = results[1];
  return true;
}

// The reference's binary64 cos·A and sin·A for the IEEE special values (reference/rope.cpp
// fast_pair_trig and settle_ieee): at angle 0, A and ±0·A (−0 for the inverse direction).
void ieee_cos_sin(const Spec& spec, int j, std::int64_t m, bool inverse, double& c, double& s) {
  if (m == 0) {
    if (!attempt_ieee<80>(spec, j, 0, false, c, s) && !attempt_ieee<320>(spec, j, 0, false, c, s)) {
      attempt_ieee<1240>(spec, j, 0, true, c, s);
    }
    s = (inverse ? -0.0 : 0.0) * c;
    return;
  }
  if (!attempt_ieee<80>(spec, j, m, false, c, s) && !attempt_ieee<320>(spec, j, m, false, c, s)) {
    attempt_ieee<1240>(spec, j, m, true, c, s);
  }
}

}  // namespace

void exact_pair(const PlanView& plan, const std::int64_t* position_row, int j, double x, double y, double& a, double& b) {
  exact_outputs.fetch_add(2, std::memory_order_relaxed);
  const Spec& spec = plan.exact->spec;
  const std::int64_t p = position_row[plan.component[j]];
  // the angle's multiplier: −p for the inverse direction (p ≤ 2^40 in magnitude: no overflow)
  const std::int64_t m = plan.inverse ? -p : p;
  const bool special = !std::isfinite(x) || !std::isfinite(y) || (x == 0 && y == 0);
  const bool first_zero = m == 0 && x == 0;  // at angle 0 an output is exactly zero when its input is
  const bool second_zero = m == 0 && y == 0;
  if (special || first_zero || second_zero) {
    double c;
    double s;
    ieee_cos_sin(spec, j, m, plan.inverse, c, s);
    const double first = x * c - y * s;
    const double second = x * s + y * c;
    if (special) {
      a = round_to_dtype(first, plan.dtype);
      b = round_to_dtype(second, plan.dtype);
      return;
    }
    double ra = 0;
    double rb = 0;
    if (!attempt<80>(spec, j, m, x, y, plan.dtype, false, ra, rb) && !attempt<320>(spec, j, m, x, y, plan.dtype, false, ra, rb)) {
      attempt<1240>(spec, j, m, x, y, plan.dtype, true, ra, rb);
    }
    a = first_zero ? first : ra;
    b = second_zero ? second : rb;
    return;
  }
  if (!attempt<80>(spec, j, m, x, y, plan.dtype, false, a, b) && !attempt<320>(spec, j, m, x, y, plan.dtype, false, a, b)) {
    attempt<1240>(spec, j, m, x, y, plan.dtype, true, a, b);
  }
}

std::uint64_t second_path_outputs() { return second_outputs.load(std::memory_order_relaxed); }
std::uint64_t exact_path_outputs() { return exact_outputs.load(std::memory_order_relaxed); }
// Counted per thread and added to the shared counter once per call (flush_path_counts): a locked
// addition per failing vector would also drain the pending non-temporal stores.
thread_local std::uint64_t pending_second_outputs = 0;
void count_second_path(std::uint64_t outputs) { pending_second_outputs += outputs; }
void flush_path_counts() {
  if (pending_second_outputs != 0) {
    second_outputs.fetch_add(pending_second_outputs, std::memory_order_relaxed);
    pending_second_outputs = 0;
  }
}

}  // namespace ropecheck::kernels
