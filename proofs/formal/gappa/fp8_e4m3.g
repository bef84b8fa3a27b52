# fp8_e4m3.g — quantization to FP8 E4M3 (OCP E4M3FN: 3 mantissa bits, precision 4, bias 7,
# smallest normal 2^-6, smallest subnormal 2^-9, largest finite 448 = 1.75·2^8, no infinity).
# Gappa's float<4,-9,ne> is round-to-nearest-even to that significand and exponent floor with an
# unbounded exponent above (RN∞ in docs/fused-bounds.md); the format's top is handled by the clamp.
#
# Proves, for the kernel's scaled value t = v/scale:
#   |RN∞(t) − t| ≤ 2^-4·|t|      for 2^-6 ≤ |t| ≤ 2^20 (normal range; u8 = 2^-4, half an ulp),
#   |RN∞(t) − t| ≤ 2^-10         for |t| ≤ 2^-6 (half the subnormal spacing 2^-9),
#   hence |RN∞(t) − t| ≤ max(2^-4·|t|, 2^-10) — the premise Hq of coq/Fused.v fp8_quant_bound,
#   fused_element_bound with (u8, mu8) = (2^-4, 2^-10);
#   RN∞(t) = 448 for 448 ≤ t ≤ 464 (the tie at 464 goes to the even 448): a non-saturating
#   conversion gives a finite value, the same as the saturating one (clamp to ±448), exactly
#   when |t| ≤ 464; above it, RN∞(t) ≥ 480 is NaN in E4M3FN.
# Justifies: the (u8, mu8, M) of E4M3 in docs/fused-bounds.md.

@rnd8 = float<4, -9, ne>;
q = rnd8(t);

{ (t in [1b-6, 1b20] -> (q - t) / t in [-1b-4, 1b-4])
  /\ (t in [-1b20, -1b-6] -> (q - t) / t in [-1b-4, 1b-4])
  /\ (t in [-1b-6, 1b-6] -> q - t in [-1b-10, 1b-10])
  /\ (t in [448, 464] -> q in [448, 448])
  /\ (t in [-464, -448] -> q in [-448, -448]) }
