// An independent rounding oracle for the tests: MPFR's own IEEE emulation (mpfr_check_range +
// mpfr_subnormalize with the format's exponent range), never the project's round_to_format.
#pragma once

#include <mpfr.h>

#include "reference/multiprecision.h"
#include "reference/rounding.h"

namespace ropecheck::testing {

inline double oracle_round(const reference::Real& value, Dtype dtype) {
  const reference::Format f = reference::format_of(dtype);
  const mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
  // MPFR writes x = m·2^e with 1/2 ≤ |m| < 1: the smallest subnormal 2^(emin−p+1) has e = emin − p + 2,
  // the largest finite value has e = emax + 1.
  mpfr_set_emin(f.emin - f.precision + 2);
  mpfr_set_emax(f.emax + 1);
  mpfr_t rounded;
  mpfr_init2(rounded, f.precision);
  int inexact = mpfr_set(rounded, value.data(), MPFR_RNDN);
  inexact = mpfr_check_range(rounded, inexact, MPFR_RNDN);
  mpfr_subnormalize(rounded, inexact, MPFR_RNDN);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  const double out = mpfr_get_d(rounded, MPFR_RNDN);
  mpfr_clear(rounded);
  return out;
}

}  // namespace ropecheck::testing
