# rounding_test.g — the rounding test of the kernels (optimized/error_bounds.h "ROUNDING TEST",
# optimized/kernel-inl.h settle64, settle_pairs) is sound: the computed ends lo = RN(v − E) and
# hi = RN(v + E) enclose the exact value X whenever |v − X| ≤ B, for each of its three uses:
#   binary64, f32 data:            B = 11.45ε·ρ   (step 4's D ≤ 9.44ε, + ε for A in binary64, + step 1),
#                                  E = RN(fma(13ε, RN(|x| + |y|), 2^-1070))        (kDecideBinary64)
#   binary64, 16-bit second path:  B = 286ε·ρ     (the table by angle addition, ≤ 282.1ε, + step 4),
#                                  E = RN(fma(300ε, RN(|x| + |y|), 2^-1070))       (kDecideTableByRotation)
#   binary32, 16-bit data:         B = 3.0002·2^-24·ρ (step 6, binary32_rotation_bound),
#                                  E = RN32(fma(4.1·2^-24, RN32(|x| + |y|), 2^-146)) (kDecideBinary32)
#                                  — the normwise form; the kernels take E per output
#                                  (kernel-inl.h decide32, error_bounds.h "binary32, PER OUTPUT"),
#                                  proven for every x, y in coq/RoundingTest32.v decide32_sound
# and, for f32 data's test by the bits (kernel-inl.h Decide64, settle64: an output v is kept when
# |v| > E' and its bits are more than 2^16 binary64 ulps from every binary32 rounding boundary):
#   binary64, f32 data:            E' = RN(fma(13ε·2^37, RN(|x| + |y|), 2^-125)) ≥ Eb =
#                                  RN(13ε·2^37·RN(|x| + |y|)) (RN is monotonic, the floor ≥ 0),
#                                  and Eb·2^-37 ≥ |v − X| with B as above
# with ρ ≤ |x| + |y| = sum and |v| ≤ 1.0001·sum (v = sum·q). sum is normalized to [1, 2]: every
# operation here is a product by or a sum with values that scale with it, so a power-of-two scaling
# (in the normal range) maps the statement onto every binade; S = max(1, |A|) multiplies ρ, B and
# K alike (plan.cpp rounds K·S upward; here S = 1). RN being monotonic, X ∈ [lo, hi] makes
# RN_T(lo) = RN_T(hi) imply RN_T(X) = RN_T(v) (the argument in error_bounds.h, not Gappa's).

@rnd64 = float<ieee_64, ne>;
@rnd32 = float<ieee_32, ne>;
v = sum * q;
X = v + de * sum;
s = rnd64(sum);
E = rnd64(13b-53 * s + 1b-1070);
lo = rnd64(v - E);
hi = rnd64(v + E);
vt = sum * qt;
Xt = vt + det * sum;
Et = rnd64(300b-53 * s + 1b-1070);
lot = rnd64(vt - Et);
hit = rnd64(vt + Et);
v32 = sum * q32;
X32 = v32 + de32 * sum;
s32 = rnd32(sum);
E32 = rnd32(4.1 * 1b-24 * s32 + 1b-146);
lo32 = rnd32(v32 - E32);
hi32 = rnd32(v32 + E32);
Eb = rnd64(13b-16 * s);
{ sum in [1, 2]
  /\ q in [-1.0001, 1.0001] /\ de in [-1.2713e-15, 1.2713e-15]
  /\ qt in [-1.0001, 1.0001] /\ det in [-3.1753e-14, 3.1753e-14]
  /\ q32 in [-1.0001, 1.0001] /\ de32 in [-1.7883e-7, 1.7883e-7]
  -> lo - X <= 0 /\ hi - X >= 0 /\ lot - Xt <= 0 /\ hit - Xt >= 0 /\ lo32 - X32 <= 0 /\ hi32 - X32 >= 0
     /\ Eb * 1b-37 - de * sum >= 0 /\ Eb * 1b-37 + de * sum >= 0 }
lo - X -> (lo - (v - E)) - E - de * sum;
hi - X -> (hi - (v + E)) + E - de * sum;
lot - Xt -> (lot - (vt - Et)) - Et - det * sum;
hit - Xt -> (hit - (vt + Et)) + Et - det * sum;
lo32 - X32 -> (lo32 - (v32 - E32)) - (E32 - 4.1 * 1b-24 * sum) - (4.1 * 1b-24 + de32) * sum;
hi32 - X32 -> (hi32 - (v32 + E32)) + (E32 - 4.1 * 1b-24 * sum) + (4.1 * 1b-24 - de32) * sum;
Eb * 1b-37 - de * sum -> (Eb - 13b-16 * sum) * 1b-37 + (13b-53 - de) * sum;
Eb * 1b-37 + de * sum -> (Eb - 13b-16 * sum) * 1b-37 + (13b-53 + de) * sum;
$ sum in 16;
