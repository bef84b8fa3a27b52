/* The example plugin's conversions (examples/plugin/rope_plugin.c, included here for its static
 * functions) against independent ones: every binary16 pattern decoded by its IEEE fields, and
 * long double values rounded to binary16 and bfloat16 by integer arithmetic on their 64-bit
 * significand (round to nearest, ties to even; subnormals; overflow to infinity). The values
 * include ties, and values a long double ulp off a tie, which a rounding through float first
 * (double rounding) gets wrong. Needs the x87 long double (64-bit significand): exit 77 (skipped)
 * elsewhere. */
#include <float.h>
#include <stdio.h>

#include "rope_plugin.c"

#if LDBL_MANT_DIG == 64

static uint64_t state = 0x9e3779b97f4a7c15u;
static uint64_t next(void) { /* xorshift64 */
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

/* The value of binary16 bits h, from its fields (IEEE 754-2008 §3.4). */
static long double half_from_fields(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const long double magnitude = e == 0x1f ? (m ? (long double)NAN : (long double)INFINITY)
                                : e == 0  ? (long double)m / 16777216.0L /* m·2^-24 */
                                          : ldexpl(1.0L + (long double)m / 1024.0L, e - 15);
  return (h & 0x8000) ? -magnitude : magnitude;
}

/* |v| = M·2^(e−64) with 2^63 ≤ M < 2^64, rounded to p significand bits with least normal exponent
 * emin and largest finite binade emax: the kept bits of M, plus one when the dropped bits exceed
 * half a quantum, or equal it and the kept bits are odd; 2^(emax+1) or more is infinity. */
static long double reference_round(uint64_t M, int e, int p, int emin, int emax) {
  const int leading = e - 1;
  const int quantum = (leading > emin ? leading : emin) - (p - 1);
  const int shift = quantum - (e - 64); /* bits of M dropped */
  uint64_t q, rem, half;
  long double r;
  if (shift > 64) return 0.0L;
  q = shift == 64 ? 0 : M >> shift;
  rem = shift == 64 ? M : M & ((UINT64_C(1) << shift) - 1);
  half = UINT64_C(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  r = ldexpl((long double)q, quantum);
  return r >= ldexpl(1.0L, emax + 1) ? (long double)INFINITY : r;
}

static int check(uint64_t M, int e, int negative, long* failures) {
  const long double v = (negative ? -1.0L : 1.0L) * ldexpl((long double)M, e - 64); /* exact */
  const long double want16 = (negative ? -1.0L : 1.0L) * reference_round(M, e, 11, -14, 15);
  const long double wantb = (negative ? -1.0L : 1.0L) * reference_round(M, e, 8, -126, 127);
  const long double got16 = half_from_fields(half_bits(v));
  const uint32_t bits = (uint32_t)bfloat16_bits(v) << 16;
  float gotb;
  memcpy(&gotb, &bits, sizeof gotb);
  if (got16 != want16 || !signbit(got16) != !signbit(want16)) {
    if ((*failures)++ < 10) printf("binary16 of %La: got %La, expected %La\n", v, got16, want16);
  }
  if ((long double)gotb != wantb || !signbit(gotb) != !signbit(wantb)) {
    if ((*failures)++ < 10) printf("bfloat16 of %La: got %a, expected %La\n", v, gotb, wantb);
  }
  return 0;
}

int main(void) {
  long failures = 0, i;
  int h;
  for (h = 0; h < 0x10000; ++h) { /* every binary16 pattern decodes as its fields say */
    const long double a = half_value((uint16_t)h), b = half_from_fields((uint16_t)h);
    if (!(a == b && !signbit(a) == !signbit(b)) && !(isnan(a) && isnan(b))) {
      if (failures++ < 10) printf("binary16 bits %04x: got %La, expected %La\n", h, a, b);
    }
  }
  for (i = 0; i < 2000000; ++i) {
    const uint64_t top = UINT64_C(1) << 63;
    const int e = (int)(next() % 320) - 160; /* bfloat16's and binary16's subnormals to overflow */
    uint64_t M = top | next();
    switch (i % 4) {
      case 0: break; /* random */
      case 1: M = (M & ~((UINT64_C(1) << 55) - 1)) | (UINT64_C(1) << 54); break; /* a binary16 tie (11 kept bits) */
      case 2: M = (M & ~((UINT64_C(1) << 56) - 1)) | (UINT64_C(1) << 55); break; /* a bfloat16 tie (8 kept bits) */
      default: M = ((M & ~((UINT64_C(1) << 56) - 1)) | (UINT64_C(1) << 55)) + ((next() & 1) ? 1 : -1); break; /* off a tie */
    }
    check(M | top, e, (int)(next() & 1), &failures);
  }
  /* zeros, infinities and NaN keep their kind and sign */
  if (half_bits(0.0L) != 0x0000 || half_bits(-0.0L) != 0x8000 || bfloat16_bits(-0.0L) != 0x8000 ||
      half_bits(-INFINITY) != 0xfc00 || bfloat16_bits(INFINITY) != 0x7f80 || (half_bits(NAN) & 0x7fff) <= 0x7c00 ||
      (bfloat16_bits(NAN) & 0x7fff) <= 0x7f80) {
    printf("zeros, infinities or NaN encoded wrongly\n");
    ++failures;
  }
  printf("%ld failures\n", failures);
  return failures == 0 ? 0 : 1;
}

#else
int main(void) {
  printf("skipped: long double is not the x87 format (LDBL_MANT_DIG %d)\n", LDBL_MANT_DIG);
  return 77;
}
#endif
