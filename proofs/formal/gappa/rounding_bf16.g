# rounding_bf16.g — the final rounding of the bf16 kernel: outbf = RNbf16(out32), bfloat16 RNE
# (8-bit significand, binary32's exponent range, smallest subnormal 2^-133: float<8,-133,ne>).
#
# Proves |RNbf16(v) − v| ≤ 2^-8·max(|v|, 2^-126):
#   relative ≤ 2^-8 for 2^-126 ≤ |v| ≤ 2^127,
#   absolute ≤ 2^-134 = 2^-8·2^-126 for |v| ≤ 2^-126.
# Justifies: hypothesis Hbf of bf16_rotation_bound in coq/ErrorBound.v (e_bf16 ≤ 1.001 for
# ρ ≥ 2^-126), hence the bf16 constant in optimized/error_bounds.h.
# Also justifies: the cache-entry premise |e − v| ≤ 2^-8·max(|v|, 2^-126) of the bf16 cache format
# and the final RNbf16 of bf16_cache_bound (coq/ErrorBound.v, cache mode), hence cache_mode_bound.

@rndbf = float<8, -133, ne>;
h = rndbf(v);

{ (v in [1b-126, 1b127] -> (h - v) / v in [-1b-8, 1b-8])
  /\ (v in [-1b127, -1b-126] -> (h - v) / v in [-1b-8, 1b-8])
  /\ (v in [-1b-126, 1b-126] -> h - v in [-1b-134, 1b-134]) }
