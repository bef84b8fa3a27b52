// The high-precision number type of the reference: `Real`, a value over MPFR's mpfr_t in which every
// operation is MPFR's correctly rounded one (round to nearest, MPFR_RNDN), and `PrecisionScope`,
// which sets the precision of new values for the calling thread.
//
// Why not Boost.Multiprecision's mpfr_float: Boost 1.74 keeps the default precision of that type in
// one process-wide static, and its arithmetic operators change it for the duration of each operation
// (boost/multiprecision/detail/precision.hpp, scoped_default_precision), so two threads computing
// with it at once change each other's precision. Here the working precision is one `thread_local`
// (set by PrecisionScope) and every value carries its own precision: reference computations on
// several threads run in parallel without any lock, and give the results they give on one thread.
// MPFR itself keeps its caches, flags and exponent range per thread (a thread-safe build,
// mpfr_buildopt_tls_p, which tests/reference/multiprecision_test.cpp checks).
//
// Precision of results (the rules of Boost's mpfr_float with expression templates off, counted
// here in bits where Boost counts decimal digits):
//   - a value made from nothing (0), an integer, a floating-point value or a decimal string: the
//     calling thread's working precision (PrecisionScope; kDefaultPrecisionBits where none is active);
//   - a copy, or the target of an assignment: the source's precision;
//   - Real ∘ Real (+ − · /, pow, compound assignment): the larger of the operands' precisions;
//     Real ∘ scalar and scalar ∘ Real: the Real's (the scalar enters exactly);
//   - a function of one Real (sqrt, sin, −x, floor, ldexp, …): the argument's precision.
#pragma once

#include <compare>
#include <concepts>
#include <cstdint>  // before mpfr.h: declares mpfr_set_sj and mpfr_get_sj (intmax_t)
#include <ios>
#include <limits>
#include <string>

#include <mpfr.h>

namespace ropecheck::reference {

// The working precision where no PrecisionScope is active, and the reference's default
// (Options::precision_bits in reference/rope.h).
inline constexpr int kDefaultPrecisionBits = 256;

// The calling thread's working precision in bits.
int working_precision();

// Sets the calling thread's working precision to `bits` (MPFR_PREC_MIN … MPFR_PREC_MAX, else
// std::invalid_argument) for its lifetime and restores the previous one after. Scopes nest; one
// thread's scope does not affect another thread. Takes no lock.
class PrecisionScope {
 public:
  explicit PrecisionScope(int bits);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  mpfr_prec_t previous_;
};

// Built-in arithmetic types that a Real can hold exactly at 64 bits: integers up to 64 bits,
// float, double and long double (x87 extended: 64-bit significand). bool is not a number here.
template <class T>
concept Scalar = (std::integral<T> && !std::same_as<T, bool> && sizeof(T) <= 8) || std::floating_point<T>;

namespace real_detail {

// A scalar as an mpfr_t on the stack (MPFR's custom interface: no allocation), exact: 64 bits hold
// every Scalar. Real ∘ scalar is then the Real ∘ Real operation with one correct rounding.
class ExactScalar {
 public:
  template <Scalar T>
  explicit ExactScalar(T value) {
    mpfr_custom_init(limbs_, kBits);
    mpfr_custom_init_set(value_, MPFR_ZERO_KIND, 0, kBits, limbs_);
    set(value_, value);
  }
  ExactScalar(const ExactScalar&) = delete;
  ExactScalar& operator=(const ExactScalar&) = delete;
  mpfr_srcptr get() const { return value_; }

  // Sets `target` to `value` rounded to target's precision (exact when it has ≥ 64 bits).
  template <Scalar T>
  static void set(mpfr_ptr target, T value) {
    if constexpr (std::same_as<T, long double>) {
      mpfr_set_ld(target, value, MPFR_RNDN);
    } else if constexpr (std::floating_point<T>) {
      mpfr_set_d(target, static_cast<double>(value), MPFR_RNDN);
    } else if constexpr (std::signed_integral<T>) {
      mpfr_set_sj(target, static_cast<std::intmax_t>(value), MPFR_RNDN);
    } else {
      mpfr_set_uj(target, static_cast<std::uintmax_t>(value), MPFR_RNDN);
    }
  }

 private:
  static constexpr mpfr_prec_t kBits = 64;
  static_assert(std::numeric_limits<long double>::digits <= kBits && std::numeric_limits<std::uintmax_t>::digits <= kBits);
  mp_limb_t limbs_[(kBits + GMP_NUMB_BITS - 1) / GMP_NUMB_BITS];
  mpfr_t value_;
};

}  // namespace real_detail

class Real {
 public:
  // +0 at the working precision.
  Real() : Real(Precision{working_precision()}) { mpfr_set_zero(value_, 1); }
  // The scalar rounded to the working precision (exact from 64 bits up). Implicit, as between the
  // built-in types: `Real r = 1;`, and a scalar may be passed where a const Real& is expected.
  template <Scalar T>
  Real(T value) : Real(Precision{working_precision()}) {
    real_detail::ExactScalar::set(value_, value);
  }
  // A decimal number ("0.1", "1e-3", "-2.5E+4"), correctly rounded to the working precision.
  // Throws std::invalid_argument unless the whole text is one.
  explicit Real(const char* decimal);
  explicit Real(const std::string& decimal) : Real(decimal.c_str()) {}

  Real(const Real& other) : Real(Precision{mpfr_get_prec(other.value_)}) { mpfr_set(value_, other.value_, MPFR_RNDN); }
  // Takes the limbs; the moved-from value may only be destroyed or assigned to.
  Real(Real&& other) noexcept {
    value_[0] = other.value_[0];
    other.value_->_mpfr_d = nullptr;
  }
  Real& operator=(const Real& other) {
    if (this == &other) return *this;
    const mpfr_prec_t p = mpfr_get_prec(other.value_);
    if (value_->_mpfr_d == nullptr) {
      mpfr_init2(value_, p);
    } else if (mpfr_get_prec(value_) != p) {
      mpfr_set_prec(value_, p);
    }
    mpfr_set(value_, other.value_, MPFR_RNDN);
    return *this;
  }
  Real& operator=(Real&& other) noexcept {
    mpfr_swap(value_, other.value_);
    return *this;
  }
  ~Real() {
    if (value_->_mpfr_d != nullptr) mpfr_clear(value_);
  }

  // Bits of this value's precision.
  int precision() const { return static_cast<int>(mpfr_get_prec(value_)); }
  // The MPFR value, for calling MPFR directly.
  mpfr_srcptr data() const { return value_; }
  mpfr_ptr data() { return value_; }

  // Conversions round to nearest (floating point) or toward zero (integers), as C++'s own do.
  explicit operator float() const { return mpfr_get_flt(value_, MPFR_RNDN); }
  explicit operator double() const { return mpfr_get_d(value_, MPFR_RNDN); }
  explicit operator long double() const { return mpfr_get_ld(value_, MPFR_RNDN); }
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  explicit operator T() const {
    if constexpr (std::signed_integral<T>) {
      return static_cast<T>(mpfr_get_sj(value_, MPFR_RNDZ));
    } else {
      return static_cast<T>(mpfr_get_uj(value_, MPFR_RNDZ));
    }
  }
  template <class T>
  T convert_to() const {
    return static_cast<T>(*this);
  }

  // Decimal text: `digits` significant digits (0: as many as MPFR needs to read the value back),
  // in scientific notation when `flags` has std::ios_base::scientific, else the shorter of both.
  std::string str(std::streamsize digits = 0, std::ios_base::fmtflags flags = {}) const;
  // str() with the stream's precision and floatfield flags.
  friend std::ostream& operator<<(std::ostream& out, const Real& x);

  Real operator-() const { return unary(mpfr_neg); }
  Real operator+() const { return *this; }

  friend Real operator+(const Real& a, const Real& b) { return binary(mpfr_add, a, b); }
  friend Real operator-(const Real& a, const Real& b) { return binary(mpfr_sub, a, b); }
  friend Real operator*(const Real& a, const Real& b) { return binary(mpfr_mul, a, b); }
  friend Real operator/(const Real& a, const Real& b) { return binary(mpfr_div, a, b); }
  template <Scalar T>
  friend Real operator+(const Real& a, T b) { return with_scalar(mpfr_add, a, real_detail::ExactScalar(b).get(), a); }
  template <Scalar T>
  friend Real operator-(const Real& a, T b) { return with_scalar(mpfr_sub, a, real_detail::ExactScalar(b).get(), a); }
  template <Scalar T>
  friend Real operator*(const Real& a, T b) { return with_scalar(mpfr_mul, a, real_detail::ExactScalar(b).get(), a); }
  template <Scalar T>
  friend Real operator/(const Real& a, T b) { return with_scalar(mpfr_div, a, real_detail::ExactScalar(b).get(), a); }
  template <Scalar T>
  friend Real operator+(T a, const Real& b) { return with_scalar(mpfr_add, real_detail::ExactScalar(a).get(), b, b); }
  template <Scalar T>
  friend Real operator-(T a, const Real& b) { return with_scalar(mpfr_sub, real_detail::ExactScalar(a).get(), b, b); }
  template <Scalar T>
  friend Real operator*(T a, const Real& b) { return with_scalar(mpfr_mul, real_detail::ExactScalar(a).get(), b, b); }
  template <Scalar T>
  friend Real operator/(T a, const Real& b) { return with_scalar(mpfr_div, real_detail::ExactScalar(a).get(), b, b); }

  Real& operator+=(const Real& b) { return compound(mpfr_add, b); }
  Real& operator-=(const Real& b) { return compound(mpfr_sub, b); }
  Real& operator*=(const Real& b) { return compound(mpfr_mul, b); }
  Real& operator/=(const Real& b) { return compound(mpfr_div, b); }
  template <Scalar T>
  Real& operator+=(T b) { return compound_scalar(mpfr_add, real_detail::ExactScalar(b).get()); }
  template <Scalar T>
  Real& operator-=(T b) { return compound_scalar(mpfr_sub, real_detail::ExactScalar(b).get()); }
  template <Scalar T>
  Real& operator*=(T b) { return compound_scalar(mpfr_mul, real_detail::ExactScalar(b).get()); }
  template <Scalar T>
  Real& operator/=(T b) { return compound_scalar(mpfr_div, real_detail::ExactScalar(b).get()); }

  // IEEE comparisons: NaN is unordered (every comparison false but !=). The reversed forms
  // (scalar ∘ Real) come from C++20's rewritten candidates.
  friend bool operator==(const Real& a, const Real& b) { return mpfr_equal_p(a.value_, b.value_) != 0; }
  friend std::partial_ordering operator<=>(const Real& a, const Real& b) { return order(a.value_, b.value_); }
  template <Scalar T>
  friend bool operator==(const Real& a, T b) { return mpfr_equal_p(a.value_, real_detail::ExactScalar(b).get()) != 0; }
  template <Scalar T>
  friend std::partial_ordering operator<=>(const Real& a, T b) { return order(a.value_, real_detail::ExactScalar(b).get()); }

  // Functions found by argument-dependent lookup (generic code writes `using std::sqrt; sqrt(x)`).
  friend Real abs(const Real& x) { return x.unary(mpfr_abs); }
  friend Real fabs(const Real& x) { return x.unary(mpfr_abs); }
  friend Real sqrt(const Real& x) { return x.unary(mpfr_sqrt); }
  friend Real sin(const Real& x) { return x.unary(mpfr_sin); }
  friend Real cos(const Real& x) { return x.unary(mpfr_cos); }
  // sin(x) into s and cos(x) into c, each correctly rounded at x's precision (as sin and cos give
  // them), with one argument reduction (mpfr_sin_cos): for a huge angle that is most of the cost.
  friend void sin_cos(const Real& x, Real& s, Real& c) {
    const mpfr_prec_t p = mpfr_get_prec(x.value_);
    s = Real(Precision{p});
    c = Real(Precision{p});
    mpfr_sin_cos(s.value_, c.value_, x.value_, MPFR_RNDN);
  }
  friend Real acos(const Real& x) { return x.unary(mpfr_acos); }
  friend Real exp(const Real& x) { return x.unary(mpfr_exp); }
  friend Real expm1(const Real& x) { return x.unary(mpfr_expm1); }
  friend Real log(const Real& x) { return x.unary(mpfr_log); }
  friend Real floor(const Real& x) { return x.unary(mpfr_floor); }
  friend Real ceil(const Real& x) { return x.unary(mpfr_ceil); }
  friend Real trunc(const Real& x) { return x.unary(mpfr_trunc); }
  friend Real pow(const Real& x, const Real& y) { return binary(mpfr_pow, x, y); }
  template <Scalar T>
  friend Real pow(const Real& x, T y) { return with_scalar(mpfr_pow, x, real_detail::ExactScalar(y).get(), x); }
  // x·2^e, exact (MPFR's exponent range is far beyond any double's).
  friend Real ldexp(const Real& x, int e) {
    Real r(Precision{mpfr_get_prec(x.value_)});
    mpfr_mul_2si(r.value_, x.value_, e, MPFR_RNDN);
    return r;
  }
  // m with x = m·2^e and 0.5 ≤ |m| < 1; for x = 0, m = x and e = 0.
  friend Real frexp(const Real& x, int* e) {
    Real r(Precision{mpfr_get_prec(x.value_)});
    mpfr_exp_t exponent = 0;
    mpfr_frexp(&exponent, r.value_, x.value_, MPFR_RNDN);
    *e = static_cast<int>(exponent);
    return r;
  }
  friend bool isnan(const Real& x) { return mpfr_nan_p(x.value_) != 0; }

 private:
  using Binary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);
  using Unary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
  using Integral = int (*)(mpfr_ptr, mpfr_srcptr);  // mpfr_floor and its kin: no rounding mode

  struct Precision {
    mpfr_prec_t bits;
  };
  explicit Real(Precision p) { mpfr_init2(value_, p.bits); }

  Real unary(Unary f) const {
    Real r(Precision{mpfr_get_prec(value_)});
    f(r.value_, value_, MPFR_RNDN);
    return r;
  }
  Real unary(Integral f) const {
    Real r(Precision{mpfr_get_prec(value_)});
    f(r.value_, value_);
    return r;
  }
  static Real binary(Binary f, const Real& a, const Real& b) {
    const mpfr_prec_t pa = mpfr_get_prec(a.value_), pb = mpfr_get_prec(b.value_);
    Real r(Precision{pa > pb ? pa : pb});
    f(r.value_, a.value_, b.value_, MPFR_RNDN);
    return r;
  }
  // One operand a scalar: the result has the precision of `real`, the other operand.
  static Real with_scalar(Binary f, mpfr_srcptr a, mpfr_srcptr b, const Real& real) {
    Real r(Precision{mpfr_get_prec(real.value_)});
    f(r.value_, a, b, MPFR_RNDN);
    return r;
  }
  static Real with_scalar(Binary f, const Real& a, mpfr_srcptr b, const Real& real) { return with_scalar(f, a.value_, b, real); }
  static Real with_scalar(Binary f, mpfr_srcptr a, const Real& b, const Real& real) { return with_scalar(f, a, b.value_, real); }
  Real& compound(Binary f, const Real& b) {
    if (mpfr_get_prec(b.value_) > mpfr_get_prec(value_)) return *this = binary(f, *this, b);
    f(value_, value_, b.value_, MPFR_RNDN);
    return *this;
  }
  Real& compound_scalar(Binary f, mpfr_srcptr b) {
    f(value_, value_, b, MPFR_RNDN);
    return *this;
  }
  static std::partial_ordering order(mpfr_srcptr a, mpfr_srcptr b) {
    if (mpfr_unordered_p(a, b)) return std::partial_ordering::unordered;
    const int c = mpfr_cmp(a, b);
    return c < 0 ? std::partial_ordering::less : c > 0 ? std::partial_ordering::greater : std::partial_ordering::equivalent;
  }

  mpfr_t value_;
};

// Bits of a Real's precision.
inline int precision_bits(const Real& value) { return value.precision(); }

}  // namespace ropecheck::reference
