# rounding_f16.g — the final rounding of the f16 kernel: out16 = RN16(out32), binary16 RNE
# (11-bit significand, smallest subnormal 2^-24: float<11,-24,ne>).
#
# Proves |RN16(v) − v| ≤ 2^-11·max(|v|, 2^-14):
#   relative ≤ 2^-11 for 2^-14 ≤ |v| ≤ 65504 (normal range, no overflow),
#   absolute ≤ 2^-25 = 2^-11·2^-14 for |v| ≤ 2^-14 (subnormal range).
# Justifies: hypothesis H16 of f16_rotation_bound in coq/ErrorBound.v (e16 ≤ 1.001 for
# 2^-14 ≤ ρ), hence the f16 constant in optimized/error_bounds.h.
# Also justifies: the cache-entry premise |e − v| ≤ 2^-11·max(|v|, 2^-14) of the f16 cache format
# and the final RN16 of f16_cache_bound (coq/ErrorBound.v, cache mode), hence cache_mode_bound.

@rnd16 = float<11, -24, ne>;
h = rnd16(v);

{ (v in [1b-14, 65504] -> (h - v) / v in [-1b-11, 1b-11])
  /\ (v in [-65504, -1b-14] -> (h - v) / v in [-1b-11, 1b-11])
  /\ (v in [-1b-14, 1b-14] -> h - v in [-1b-25, 1b-25]) }
