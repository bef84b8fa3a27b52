# fp8_e5m2.g — quantization to FP8 E5M2 (OCP: 2 mantissa bits, precision 3, bias 15, smallest
# normal 2^-14, smallest subnormal 2^-16, largest finite 57344 = 1.75·2^15, infinities).
# Gappa's float<3,-16,ne> is round-to-nearest-even with an unbounded exponent above (RN∞ in
# docs/fused-bounds.md); the format's top is handled by the clamp.
#
# Proves, for the kernel's scaled value t = v/scale:
#   |RN∞(t) − t| ≤ 2^-3·|t|      for 2^-14 ≤ |t| ≤ 2^30 (normal range; u8 = 2^-3, half an ulp),
#   |RN∞(t) − t| ≤ 2^-17         for |t| ≤ 2^-14 (half the subnormal spacing 2^-16),
#   hence the premise Hq of coq/Fused.v with (u8, mu8) = (2^-3, 2^-17);
#   RN∞(t) = 57344 for 57344 ≤ t ≤ 61439 (below the tie 61440, which goes to the even 2^16 = Inf):
#   a non-saturating conversion is finite and equals the saturating one for |t| < 61440.
# Justifies: the (u8, mu8, M) of E5M2 in docs/fused-bounds.md.

@rnd8 = float<3, -16, ne>;
q = rnd8(t);

{ (t in [1b-14, 1b30] -> (q - t) / t in [-1b-3, 1b-3])
  /\ (t in [-1b30, -1b-14] -> (q - t) / t in [-1b-3, 1b-3])
  /\ (t in [-1b-14, 1b-14] -> q - t in [-1b-17, 1b-17])
  /\ (t in [57344, 61439] -> q in [57344, 57344])
  /\ (t in [-61439, -57344] -> q in [-57344, -57344]) }
