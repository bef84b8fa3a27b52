// Double-double ("double-word") arithmetic: a value hi + lo with |lo| ≤ ulp(hi)/2, and the
// error-free transformations it is built on. Error bounds are those of Joldes, Muller, Popescu,
// "Tight and rigorous error bounds for basic building blocks of double-word arithmetic", ACM TOMS
// 44(2), 2017 (JMP below), u = 2^-53, for results away from underflow (|result| ≥ 2^-969) and
// overflow. Every function is pure: no state, no rounding-mode change, so any thread may call it.
#pragma once

#include <cmath>

// The error-free product needs a fused multiply-add. Built for baseline x86-64 (no -mfma), std::fma
// is a libm call in every two_product; hot functions are therefore compiled twice, with and without
// the FMA instruction set, and the loader picks one (GCC/Clang target_clones, glibc ifunc). Both
// give the same bits: std::fma is correctly rounded either way. Not under a sanitizer: the loader
// runs an instrumented ifunc resolver before the sanitizer's runtime is set up (ThreadSanitizer
// builds crashed at start-up).
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__FMA__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define ROPECHECK_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define ROPECHECK_FMA_CLONES
#endif

namespace ropecheck::reference {

struct DoubleDouble {
  double hi;
  double lo;
};

// a + b exactly as s + e (Knuth's 2Sum, any order of magnitudes).
inline DoubleDouble two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
// a + b exactly as s + e when |a| ≥ |b| or a = 0 (Dekker's Fast2Sum).
inline DoubleDouble fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}
// a·b exactly as p + e (2Prod with an FMA).
inline DoubleDouble two_product(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

// x + y, x double-double, y double: JMP Algorithm 4 (DWPlusFP), relative error ≤ 2u²/(1 − 2u).
inline DoubleDouble add(DoubleDouble x, double y) {
  const DoubleDouble s = two_sum(x.hi, y);
  return fast_two_sum(s.hi, x.lo + s.lo);
}
// x + y: JMP Algorithm 6 (AccurateDWPlusDW), relative error ≤ 3u² + 13u³.
inline DoubleDouble add(DoubleDouble x, DoubleDouble y) {
  const DoubleDouble s = two_sum(x.hi, y.hi);
  const DoubleDouble t = two_sum(x.lo, y.lo);
  const DoubleDouble v = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(v.hi, t.lo + v.lo);
}
// x·y: JMP Algorithm 12 (DWTimesDW3), relative error ≤ 5u².
inline DoubleDouble multiply(DoubleDouble x, DoubleDouble y) {
  const DoubleDouble c = two_product(x.hi, y.hi);
  const double t = std::fma(x.hi, y.lo, x.lo * y.lo);
  return fast_two_sum(c.hi, c.lo + std::fma(x.lo, y.hi, t));
}

}  // namespace ropecheck::reference
