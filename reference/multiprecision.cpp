#include "reference/multiprecision.h"

#include <cmath>

namespace ropecheck::reference {
namespace {
std::recursive_mutex& precision_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}
}  // namespace

PrecisionScope::PrecisionScope(int bits)
    : lock_(precision_mutex()), previous_digits10_(Real::default_precision()) {
  // Boost sets a precision of digits10_2_2(d10) = ⌊1000·d10/301⌋ + 1 or 2 bits; choose d10 so that
  // this is at least `bits`.
  unsigned digits10 = static_cast<unsigned>(std::ceil(bits * 0.30103)) + 1;
  Real::default_precision(digits10);
}

PrecisionScope::~PrecisionScope() { Real::default_precision(previous_digits10_); }

int precision_bits(const Real& value) { return static_cast<int>(mpfr_get_prec(value.backend().data())); }

}  // namespace ropecheck::reference
