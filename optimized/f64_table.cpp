// f64_grid_table (f64_table.h): MPFR at 256 bits for the first quarter turn (cos and sin each
// correctly rounded to 256 bits, then split into two doubles), the other three quarters by the
// exact symmetries cos(qπ/2 + a), sin(qπ/2 + a) = (cos a, sin a), (−sin a, cos a), (−cos a, −sin a),
// (sin a, −cos a).
#include "optimized/f64_table.h"

#include <array>

#include <mpfr.h>

namespace ropecheck::kernels {
namespace {

// v (256 bits) as hi = RN(v), lo = RN(v − hi): |v − hi − lo| ≤ 2^-53·|v − hi| ≤ 2^-107·|v|.
void split(mpfr_t v, mpfr_t scratch, double& hi, double& lo) {
  hi = mpfr_get_d(v, MPFR_RNDN);
  mpfr_sub_d(scratch, v, hi, MPFR_RNDN);  // exact: v − hi has ≤ 256 significant bits
  lo = mpfr_get_d(scratch, MPFR_RNDN);
}

std::array<double, 4 * kF64GridPoints> build() {
  std::array<double, 4 * kF64GridPoints> table{};
  constexpr int kQuarter = kF64GridPoints / 4;
  mpfr_t angle;
  mpfr_t c;
  mpfr_t s;
  mpfr_t scratch;
  mpfr_inits2(256, angle, c, s, scratch, static_cast<mpfr_ptr>(nullptr));
  for (int k = 0; k < kQuarter; ++k) {
    mpfr_const_pi(angle, MPFR_RNDN);
    mpfr_mul_si(angle, angle, 2 * k, MPFR_RNDN);
    mpfr_div_si(angle, angle, kF64GridPoints, MPFR_RNDN);  // relative error ≤ 3·2^-256
    mpfr_sin_cos(s, c, angle, MPFR_RNDN);
    double ch;
    double cl;
    double sh;
    double sl;
    split(c, scratch, ch, cl);
    split(s, scratch, sh, sl);
    if (k == 0) {  // exactly 1 and 0
      ch = 1.0;
      cl = 0.0;
      sh = 0.0;
      sl = 0.0;
    }
    const double quarter[4][4] = {{ch, cl, sh, sl}, {-sh, -sl, ch, cl}, {-ch, -cl, -sh, -sl}, {sh, sl, -ch, -cl}};
    for (int q = 0; q < 4; ++q) {
      for (int i = 0; i < 4; ++i) table[static_cast<std::size_t>(4 * (q * kQuarter + k) + i)] = quarter[q][i];
    }
  }
  mpfr_clears(angle, c, s, scratch, static_cast<mpfr_ptr>(nullptr));
  return table;
}

}  // namespace

const double* f64_grid_table() {
  static const std::array<double, 4 * kF64GridPoints> table = build();
  return table.data();
}

}  // namespace ropecheck::kernels
