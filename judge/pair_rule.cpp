#include "judge/pair_rule.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <limits>

#include "judge/pair_math.h"
#include "judge/pair_screen.h"
#include "reference/rounding.h"

namespace ropecheck::judge {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMaxDouble = std::numeric_limits<double>::max();

bool zero_signs_differ(double got, double expected) {
  return got == 0 && expected == 0 && std::signbit(got) != std::signbit(expected);
}

std::string pair_text(double a, double b) { return "(" + reference::to_hex(a) + ", " + reference::to_hex(b) + ")"; }

std::string short_number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

// 2^n exactly, for |n| ≤ 2·1022 (every exponent of the four dtypes and their underflow unit): the
// product of two normal doubles (ldexpl is a libm call).
constexpr long double pow2l(int n) {
  const int half = n / 2;
  auto pow2 = [](int k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52); };
  return static_cast<long double>(pow2(half)) * static_cast<long double>(pow2(n - half));
}

// What the rule compares with, per dtype, evaluated at compile time: the rule runs per pair, and
// working these out there (format_of, powers of two, the largest value) was a measurable part of a
// large check.
struct DtypeLimits {
  long double u;                  // 2^-p
  long double smallest_normal;    // 2^emin
  long double largest;            // the largest finite value
  long double overflow_boundary;  // the first value that rounds to ±Inf: the largest plus half its ulp
  long double underflow_quantum;  // 2^(emin−p)
};

constexpr DtypeLimits limits_of(Dtype dtype) {
  const reference::Format f = reference::format_of(dtype);
  return {pow2l(-f.precision), pow2l(f.emin), static_cast<long double>(reference::max_finite(dtype)),
          (2.0L - pow2l(-f.precision)) * pow2l(f.emax), pow2l(f.emin - f.precision)};
}

const DtypeLimits& limits(Dtype dtype) {
  static constexpr DtypeLimits kF64 = limits_of(Dtype::f64), kF32 = limits_of(Dtype::f32),
                               kF16 = limits_of(Dtype::f16), kBf16 = limits_of(Dtype::bf16);
  switch (dtype) {
    case Dtype::f64: return kF64;
    case Dtype::f32: return kF32;
    case Dtype::f16: return kF16;
    case Dtype::bf16: return kBf16;
  }
  return kF64;
}

// max(1, |g|): e is relative to g·ρ (std::max, not fmaxl: a libm call per pair; g is never NaN).
long double attention_scale(double attention_factor) {
  return std::max(1.0L, std::fabs(static_cast<long double>(attention_factor)));
}

// Element ULPs of an output against its correctly rounded value (±Inf is the neighbour of the
// largest value): the one expression judge_pair and screen_pair measure the ulp with.
double ulps_off(double got, double rounded, Dtype dtype) {
  if (got == rounded) return 0;  // most pairs: no ulp to work out
  return std::isinf(rounded) ? 1.0 : std::fabs(got - rounded) / reference::ulp(rounded, dtype);
}

// √2 rounded to long double (the value of std::sqrt(2.0L), without a call per pair).
constexpr long double kSqrt2 = 1.41421356237309504880168872420969808L;

// The domain of a pair with finite inputs, given ρ = √(x² + y²) (computed once per pair).
inline Domain finite_domain(long double rho, const DtypeLimits& limits, double attention_factor) {
  // |x·c| + |y·s| ≤ √2·ρ: below the largest value no careful evaluation overflows.
  if (kSqrt2 * rho * attention_scale(attention_factor) > limits.largest) return Domain::near_overflow;
  if (rho < limits.smallest_normal) return Domain::subnormal;
  return Domain::ordinary;
}

}  // namespace

double normwise_error(double a, double b, long double exact_a, long double exact_b, double x, double y, Dtype dtype,
                      double attention_factor) {
  const long double difference = std::max(std::fabs(a - exact_a), std::fabs(b - exact_b));
  const long double rho = pair_norm(x, y);
  if (rho == 0) return difference == 0 ? 0.0 : kInf;
  const long double u = limits(dtype).u;
  return static_cast<double>(difference / (u * rho * attention_scale(attention_factor)));
}

int value_class(double v) {
  if (std::isnan(v)) return 0;
  if (std::isinf(v)) return v > 0 ? 1 : 2;
  return 3;
}

std::string_view name(Domain domain) {
  switch (domain) {
    case Domain::ordinary: return "ordinary";
    case Domain::special_input: return "special_input";
    case Domain::near_overflow: return "near_overflow";
    case Domain::subnormal: return "subnormal";
  }
  return "ordinary";
}

std::string_view name(Failure failure) {
  switch (failure) {
    case Failure::none: return "none";
    case Failure::tolerance: return "tolerance";
    case Failure::special_value: return "special_value";
    case Failure::signed_zero: return "signed_zero";
  }
  return "none";
}

Domain domain_of(double x, double y, Dtype dtype, double attention_factor) {
  if (!std::isfinite(x) || !std::isfinite(y)) return Domain::special_input;
  return finite_domain(pair_norm(x, y), limits(dtype), attention_factor);
}

PairVerdict judge_pair(const Pair& p, const PairRule& rule) {
  PairVerdict v;
  const bool finite_inputs = std::isfinite(p.x) && std::isfinite(p.y);
  const long double rho = finite_inputs ? pair_norm(p.x, p.y) : 0.0L;
  const DtypeLimits& dtype_limits = limits(rule.dtype);
  v.domain = finite_inputs ? finite_domain(rho, dtype_limits, rule.attention_factor) : Domain::special_input;
  const double got[2] = {p.a, p.b};
  const double rounded[2] = {p.rounded_a, p.rounded_b};
  const bool strict_zero_failure =
      rule.strict_zeros && (zero_signs_differ(got[0], rounded[0]) || zero_signs_differ(got[1], rounded[1]));
  if (v.domain == Domain::special_input) {
    if (value_class(got[0]) != value_class(rounded[0]) || value_class(got[1]) != value_class(rounded[1])) {
      v.failure = Failure::special_value;
      if (rule.messages) v.message = "special values disagree: expected " + pair_text(rounded[0], rounded[1]) + ", got " + pair_text(got[0], got[1]);
    } else if (strict_zero_failure) {
      v.failure = Failure::signed_zero;
      if (rule.messages) v.message = "signed zero (--strict-zeros): expected " + pair_text(rounded[0], rounded[1]) + ", got " + pair_text(got[0], got[1]);
    }
    return v;
  }

  const long double unit = dtype_limits.u * rho * attention_scale(rule.attention_factor);
  const bool e_kind = rule.tolerance.kind == Tolerance::Kind::e;
  const double tol = rule.tolerance.at(p.angle);
  v.allowed = tol;
  const long double overflow_boundary = dtype_limits.overflow_boundary;
  const long double exact[2] = {p.exact_a, p.exact_b};
  long double difference = 0;
  double ulp = 0;
  std::string special;
  for (int k = 0; k < 2; ++k) {
    const long double magnitude = std::fabs(exact[k]);
    if (std::isnan(got[k])) {
      special = "NaN where a number is expected";
      continue;
    }
    if (std::isinf(got[k])) {
      // Overflow at the threshold: a value within the tolerance of the exact one rounds to this
      // infinity. Its least error consistent with that enters e.
      const bool same_sign = (got[k] > 0) == (exact[k] > 0);
      const bool reachable = e_kind ? magnitude + tol * unit >= overflow_boundary : std::isinf(rounded[k]);
      if (same_sign && reachable) {
        difference = std::max(difference, std::max(0.0L, overflow_boundary - magnitude));
        ulp = std::max(ulp, got[k] == rounded[k] ? 0.0 : 1.0);  // ±Inf is the neighbour of the largest value
        continue;
      }
      special = std::string(got[k] > 0 ? "+Inf" : "-Inf") + " where the exact value is " +
                short_number(static_cast<double>(exact[k])) + " (largest finite " + short_number(reference::max_finite(rule.dtype)) +
                ")";
      continue;
    }
    difference = std::max(difference, std::fabs(got[k] - exact[k]));
    ulp = std::max(ulp, ulps_off(got[k], rounded[k], rule.dtype));
  }
  if (!special.empty()) {
    v.failure = Failure::special_value;
    if (rule.messages) v.message = special + ": expected " + pair_text(rounded[0], rounded[1]) + ", got " + pair_text(got[0], got[1]);
    return v;
  }
  v.measured = true;
  v.abs = static_cast<double>(difference);
  v.e = unit > 0 ? static_cast<double>(difference / unit) : (difference == 0 ? 0.0 : kInf);
  v.ulp = ulp;
  const long double underflow = rule.underflow_roundings * dtype_limits.underflow_quantum;
  const bool within = e_kind ? v.e <= tol || difference <= static_cast<long double>(tol) * unit + underflow : ulp <= tol;
  if (!within) {
    v.failure = Failure::tolerance;
    if (rule.messages) v.message = (e_kind ? "e = " + short_number(v.e) : "ulp = " + short_number(ulp)) + " > " + short_number(tol) +
                ": expected " + pair_text(rounded[0], rounded[1]) + ", got " + pair_text(got[0], got[1]);
  } else if (strict_zero_failure) {
    v.failure = Failure::signed_zero;
    if (rule.messages) v.message = "signed zero (--strict-zeros): expected " + pair_text(rounded[0], rounded[1]) + ", got " + pair_text(got[0], got[1]);
  }
  return v;
}

PairScreenRule::PairScreenRule(const PairRule& r) : rule(r) {
  const DtypeLimits& dtype_limits = limits(r.dtype);
  u = static_cast<double>(dtype_limits.u);
  smallest_normal = static_cast<double>(dtype_limits.smallest_normal);
  largest = static_cast<double>(dtype_limits.largest);
  scale = std::max(1.0, std::fabs(r.attention_factor));
  underflow = r.underflow_roundings * static_cast<double>(dtype_limits.underflow_quantum);
}

double sure_ordinary_unit(double rho, const PairScreenRule& screen) {
  const double scale = screen.scale;
  // Ordinary for certain: ρ 2^-40 inside both domain boundaries (finite_domain). A NaN ρ fails both.
  if (screen.rule.dtype == Dtype::f64 || !(rho * (1 - 0x1p-40) >= screen.smallest_normal) ||
      !(static_cast<double>(kSqrt2) * rho * scale * (1 + 0x1p-40) <= screen.largest)) {
    return 0;
  }
  return screen.u * rho * scale;
}

PairScreen screen_pair(double x, double y, double a, double b, double exact_a, double exact_b, double rounded_a,
                       double rounded_b, double angle, const PairScreenRule& screen) {
  PairScreen s;
  const PairRule& rule = screen.rule;
  // Non-finite values and NaN fail these comparisons (an infinite x makes ρ infinite below).
  if (!(std::fabs(a) <= kMaxDouble) || !(std::fabs(b) <= kMaxDouble) || !(std::fabs(rounded_a) <= kMaxDouble) ||
      !(std::fabs(rounded_b) <= kMaxDouble)) {
    return s;
  }
  const double scale = screen.scale;
  const double rho = std::sqrt(x * x + y * y);  // x, y values of a 16- or 32-bit dtype: no overflow
  const double unit = sure_ordinary_unit(rho, screen);
  if (unit == 0) return s;
  const double difference = std::max(std::fabs(a - exact_a), std::fabs(b - exact_b));
  s.e_high = screen_e_high(difference, unit);
  s.e_low = (difference / unit - 0x1p-20) * (1 - 0x1p-30);
  s.abs_high = (difference + 0x1p-50 * (rho * scale + difference)) * (1 + 0x1p-50);
  s.ulp = std::max(ulps_off(a, rounded_a, rule.dtype), ulps_off(b, rounded_b, rule.dtype));
  s.allowed = rule.tolerance.at(angle);
  const bool e_kind = rule.tolerance.kind == Tolerance::Kind::e;
  // A failure of the tolerance takes precedence over a signed zero's (judge_pair); a pass is sure
  // only where no zero's sign differs under --strict-zeros.
  const bool zeros_differ = rule.strict_zeros && (zero_signs_differ(a, rounded_a) || zero_signs_differ(b, rounded_b));
  s.sure_pass = !zeros_differ && (e_kind ? s.e_high <= s.allowed : s.ulp <= s.allowed);
  if (e_kind) {
    // e_low ≤ e_high: within the tolerance, the pair cannot fail it by any allowance (and the
    // allowance's division is skipped for most pairs).
    s.sure_fail = !(s.e_high <= s.allowed) && s.e_low > s.allowed + screen.underflow / unit * (1 + 0x1p-30);
  } else {
    s.sure_fail = s.ulp > s.allowed;
  }
  return s;
}

PairScreen screen_pair(double x, double y, double a, double b, double exact_a, double exact_b, double rounded_a,
                       double rounded_b, double angle, const PairRule& rule) {
  return screen_pair(x, y, a, b, exact_a, exact_b, rounded_a, rounded_b, angle, PairScreenRule(rule));
}

bool passthrough_matches(double got, double input, Dtype dtype, bool strict_zeros) {
  if (std::isnan(got) || std::isnan(input)) return std::isnan(got) && std::isnan(input);
  if (!reference::representable(got, dtype)) return false;
  if (got == 0 && input == 0) return !strict_zeros || std::signbit(got) == std::signbit(input);
  return reference::encode_bits(got, dtype) == reference::encode_bits(input, dtype);
}

}  // namespace ropecheck::judge
