# rounding_f64.g — the binary64 round-to-nearest-even facts of the kernels' rotation
# (optimized/kernel-inl.h, rotate(): a = RN64(fma(x, c, −RN64(y·s))), b = RN64(fma(x, s, RN64(y·c)))).
#
# Proves |RN64(v) − v| ≤ 2^-53·|v| for 2^-1022 ≤ |v| ≤ 2^1023 and ≤ 2^-1075 below 2^-1022, i.e.
# |RN64(v) − v| ≤ eps64·|v| + mu64 (eps64 = 2^-53, mu64 = 2^-1075).
# Justifies: hypotheses Hp2, Ha of f64_rotation_bound in coq/ErrorBound.v, hence kOnTheFlyF64 in
# optimized/error_bounds.h (and, through it, kOnTheFlyF32, kOnTheFlyF16, kOnTheFlyBF16).
# Also justifies: the rotation's binary64 roundings and the f64 cache-entry premise
# |e − v| ≤ 2^-53·max(|v|, 2^-1022) of the cache theorems (coq/ErrorBound.v, cache mode), hence
# cache_mode_bound.

@rnd64 = float<ieee_64, ne>;
w = rnd64(v);

# Gappa proves the relative bound on three sub-ranges (over one range this wide its interval
# reasoning loses the correlation between w − v and v), for v > 0; negative v follow because round
# to nearest even is odd, RN(−v) = −RN(v) (checked separately by rounding_f64_negative.g); the subnormal range is
# rounding_f64_subnormal.g.
{ (v in [1b-1022, 1b-1000] -> (w - v) / v in [-1b-53, 1b-53])
  /\ (v in [1b-1000, 1b1000] -> (w - v) / v in [-1b-53, 1b-53])
  /\ (v in [1b1000, 1b1023] -> (w - v) / v in [-1b-53, 1b-53]) }
