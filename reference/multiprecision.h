// The high-precision number type of the reference: Boost.Multiprecision over MPFR.
#pragma once

#include <mutex>

#include <boost/multiprecision/mpfr.hpp>

namespace ropecheck::reference {

// Expression templates off: values are plain objects, safe with auto and in generic code
// (spec/schedule.h is instantiated with this type).
using Real = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<0>,
                                           boost::multiprecision::et_off>;

// Sets the working precision (at least `bits` bits) of new Real values for its lifetime and restores
// the previous one after. Boost 1.74 keeps that default in one process-wide variable, so a scope
// also holds a process-wide recursive lock: reference computations on several threads take turns
// instead of changing each other's precision. This scope is the only place the reference touches
// Boost's default precision. Scopes nest on one thread.
class PrecisionScope {
 public:
  explicit PrecisionScope(int bits);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  std::unique_lock<std::recursive_mutex> lock_;
  unsigned previous_digits10_;
};

// Bits of a Real's precision (mpfr_get_prec).
int precision_bits(const Real& value);

}  // namespace ropecheck::reference
