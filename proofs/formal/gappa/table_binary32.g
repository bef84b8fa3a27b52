# table_binary32.g — the binary32 cos/sin table of the 16-bit kernels (optimized/error_bounds.h step 6;
# optimized/kernel-inl.h cos_sin_lanes<M, kPrecise, kTable32 = true>: M::store(float*) of the FAST
# path's binary64 ĉ, i.e. c = RN32(ĉ)), attention factor A = 1.
#
# Proves, for an exact cosine or sine C ∈ [0, 1] and ĉ within δ = 4.25·2^-53 of it
# (kFastCosSinError, gappa/angle_fast.g):
#     |c − C| ≤ 2^-24·|C| + (1 + 2^-24)·δ      (δ·(1 + 2^-24) = 4.7184e-16 ≤ 4.72e-16)
# as the two one-sided inequalities below (C < 0 follows by symmetry: RN32 is odd and δ symmetric).
# This is the premise binary32_entry of coq/ErrorBound.v derives for any A from rounding_f32.g and
# rounding_f64.g (there with the looser (1 + 2^-24)·(δ + 2^-53(1 + δ)) + 2^-150 of c = RN32(RN64(A·ĉ)));
# for A = 1 the code stores RN32(ĉ) itself and this script checks that entry directly.
# Rounding: ĉ ≥ 2^-126 is in binary32's normal range (relative error 2^-24, the first case split);
# below it RN32 is off by at most 2^-150, inside the margin.
# Justifies: the table term of kOnTheFlyF16 = 1 + 2^-11, kOnTheFlyBF16 = 1 + 2^-13.

@rnd32 = float<ieee_32, ne>;
c = rnd32(ch);

{ C in [0, 1] /\ ch - C in [-17b-55, 17b-55]
  -> c - C - 1b-24 * C <= 4.72e-16 /\ c - C + 1b-24 * C >= -4.72e-16 }

# c − C ∓ 2^-24·C = C·(relative rounding error ∓ 2^-24) + (ĉ − C)·(1 + relative rounding error)
c - C - 1b-24 * C -> C * ((c - ch) / ch - 1b-24) + (ch - C) * (1 + (c - ch) / ch) { ch <> 0 };
c - C + 1b-24 * C -> C * ((c - ch) / ch + 1b-24) + (ch - C) * (1 + (c - ch) / ch) { ch <> 0 };
$ ch in (1b-126);
