# rounding_f32.g — the binary32 round-to-nearest-even facts used by coq/ErrorBound.v.
#
# Models every RN32 of the f32 kernel: c = RN32(cos double), s = RN32(sin double),
# p2 = RN32(y·s) (or y·c), out = RN32(fma(x, c, −p2)) (one rounding of the exact x·c − p2).
# Proves, for v in binary32's range (|v| < 2^127, no overflow):
#   |RN32(v) − v| ≤ 2^-24·|v|   when |v| ≥ 2^-126 (normal range),
#   |RN32(v) − v| ≤ 2^-150      when |v| ≤ 2^-126 (subnormal range),
#   hence |RN32(v) − v| ≤ u32·|v| + mu32 (u32 = 2^-24, mu32 = 2^-150) everywhere;
#   |RN32(v) − v| ≤ 2^-25 = u32/2 when |v| ≤ 1 + 2^-40 (cos/sin values: half an ulp below 1).
# Justifies: the hypotheses Hp2, Hout (u32, mu32) and the u32/2 form in coq/ErrorBound.v, hence
# the f32 constant in optimized/error_bounds.h.
# Also justifies: the cache-entry premise |e − v| ≤ 2^-24·max(|v|, 2^-126) of the f32 cache format
# and the RN32 narrowing of f32/f16/bf16_cache_bound (coq/ErrorBound.v, cache mode), hence
# cache_mode_bound.

@rnd32 = float<ieee_32, ne>;
c = rnd32(v);

{ (v in [1b-126, 1b127] -> (c - v) / v in [-1b-24, 1b-24])
  /\ (v in [-1b127, -1b-126] -> (c - v) / v in [-1b-24, 1b-24])
  /\ (v in [-1b-126, 1b-126] -> c - v in [-1b-150, 1b-150])
  /\ (v in [-1.0000000000009094947017729282379150390625, 1.0000000000009094947017729282379150390625]
      -> c - v in [-1b-25, 1b-25]) }
