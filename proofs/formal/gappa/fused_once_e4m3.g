# fused_once_e4m3.g — the relative part r of the fused bound with one rounding at the end
# (docs/fused-bounds.md §3, fused/bounds.h FusedBound::relative; fused/README.md "The bounds the
# judge applies"): the kernel's binary32 value divided by the scale ŝ with one binary32 rounding,
# t = fl32(v/ŝ), then rounded to E4M3 (RN∞ as in fp8_e4m3.g).
#
# Proves, for the exact scaled value T = Y/ŝ in E4M3's normal range up to its largest value:
#   |RN8(fl32(T)) − T| ≤ 0.0625001·|T|      (r = (1 + 2^-4)(1 + 2^-24) − 1 = 0.06250006…).
# The judge's r is at least this (its w_q allows a second binary32 rounding: a reciprocal of ŝ, or
# a fixed ŝ rounded to binary32). Below 2^-6 the absolute μ8·ŝ of fp8_e4m3.g applies.

@rnd32 = float<ieee_32, ne>;
@rnd8 = float<4, -9, ne>;
t = rnd32(T);
q = rnd8(t);

{ T in [1b-6, 448] -> (q - T) / T in [-0.0625001, 0.0625001] }

# Relative errors compose: q/T = (q/t)·(t/T).
(q - T) / T -> (q - t) / t + (t - T) / T + ((q - t) / t) * ((t - T) / T);
