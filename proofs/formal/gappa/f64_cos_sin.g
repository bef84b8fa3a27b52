# f64_cos_sin.g — step 3's cos t and sin t of the f64 kernels' table (optimized/kernel_f64-inl.h
# f64_cos_sin_lanes), on the operations as written, for t = t1 + u + e: t1 = RN(th + tl),
# u = RN(tl − RN(t1 − th)) (Fast2Sum; |t1| ≤ 0.0030680 and |u| ≤ 2^-61 from f64_reduction.g),
# |e| ≤ 2^-111 (f64_reduction.g's 2^-112, plus Fast2Sum's rounding ≤ 2^-114 where |tl| > |th|),
#   z = RN(t1²), z_e = t1² − z (exact: an FMA), h_z = −z/2 (exact),
#   sin_low = RN(RN(t1·z)·P_s(z) + RN(h_z·u + u)),  cos_low = RN(RN(z·z)·P_c(z) − RN(0.5·RN((t1 + t1)·u + z_e)))
# (P_s, P_c: Horner in binary64 with the coefficients RN(1/n!); t1 + t1 exact).
# Proven:
#   |t1 + sin_low − sin t| ≤ 4.2e-24 and |1 + h_z + cos_low − cos t| ≤ 5e-27 (f64_table.g's premises
#   est, ect; Gappa reaches 3.83e-24 and 3.94e-27, and a cosine bound of 3.9e-27 fails), the
#   evaluation's roundings and the method error together: the Taylor remainders, the
#   coefficients' rounding RN(1/n!) − 1/n! (Gappa evaluates each constant), the first-order step
#   from t1 to t, and the neglected u-terms;
#   on the way, the computed values are within 3.57e-24 and 1.65e-27 of the same expressions in
#   exact arithmetic, SL = t1·Z·PS(Z) + u·(1 − Z/2) and CL = Z²·PC(Z) − t1·u (Z = t1², the same
#   coefficients), and |sin_low| ≤ 2^-27.6, −2^-68.9 ≤ cos_low ≤ 2^-37.9 (f64_table.g's ranges).
# Premises about sin and cos (Gappa has none), each a Coq theorem (coq/F64CosSin.v
# f64_cos_sin_premises): with St1 = sin t1, Ct1 = cos t1, St = sin t, Ct = cos t, d = u + e,
#   |St1 − sin_poly9(t1)| ≤ 5.7e-36, −2.04e-32 ≤ Ct1 − cos_poly8(t1) ≤ 0 (the alternating series'
#   remainders |t1|^11/11!, t1^10/10!, with the exact coefficients 1/n! in the Horner form below),
#   |St − (St1 + d·Ct1)|, |Ct − (Ct1 − d·St1)| ≤ d² ≤ 2^-121.
# Justifies: kF64TableError through f64_table.g (kernel_f64-inl.h step 3).
@rnd = float<ieee_64, ne>;
t1 = rnd(t1_);
u = rnd(u_);
z = rnd(t1 * t1);
ze = t1 * t1 - z;
ps = rnd(rnd(rnd(rnd(1/362880) * z + rnd(-1/5040)) * z + rnd(1/120)) * z + rnd(-1/6));
hz = -0.5 * z;
sinlow = rnd(rnd(t1 * z) * ps + rnd(hz * u + u));
pc = rnd(rnd(rnd(1/40320) * z + rnd(-1/720)) * z + rnd(1/24));
coslow = rnd(rnd(z * z) * pc + rnd(-0.5 * rnd((t1 + t1) * u + ze)));
Z = t1 * t1;
PS = ((rnd(1/362880) * Z + rnd(-1/5040)) * Z + rnd(1/120)) * Z + rnd(-1/6);
PC = (rnd(1/40320) * Z + rnd(-1/720)) * Z + rnd(1/24);
SL = t1 * Z * PS + (u - 0.5 * Z * u);
CL = Z * Z * PC - t1 * u;
# the same polynomials with the exact coefficients (coq/F64CosSin.v sin_poly9, cos_poly8)
PSx = ((1 / 362880 * Z + -1 / 5040) * Z + 1 / 120) * Z + -1 / 6;
PCx = (1 / 40320 * Z + -1 / 720) * Z + 1 / 24;
SP9 = t1 + t1 * (Z * PSx);
CP8 = 1 + Z * (PCx * Z + -1 / 2);
d = u + e;
{ t1_ in [-0.0030680, 0.0030680] /\ u_ in [-1b-61, 1b-61] /\ e in [-1b-111, 1b-111]
  /\ St1 - SP9 in [-57e-37, 57e-37] /\ Ct1 - CP8 in [-204e-34, 0]
  /\ St - (St1 + d * Ct1) in [-1b-121, 1b-121] /\ Ct - (Ct1 - d * St1) in [-1b-121, 1b-121]
  -> t1 + sinlow - St in [-4.2e-24, 4.2e-24] /\ 1 + hz + coslow - Ct in [-5e-27, 5e-27]
  /\ sinlow - SL in [-3.57e-24, 3.57e-24] /\ hz + coslow - (-0.5 * Z + CL) in [-1.65e-27, 1.65e-27] /\ coslow in [-1.76e-21, 3.7e-12] /\ sinlow in [-4.82e-9, 4.82e-9] /\ z in [0, 9.42e-6] }
sinlow - SL -> (sinlow - (rnd(t1 * z) * ps + rnd(hz * u + u))) + (rnd(t1 * z) - t1 * z) * ps + t1 * (z - Z) * ps + t1 * Z * (ps - PS) + (rnd(hz * u + u) - (hz * u + u)) + (hz + 0.5 * Z) * u;
ps - PS -> (ps - (rnd(rnd(rnd(1/362880) * z + rnd(-1/5040)) * z + rnd(1/120)) * z + rnd(-1/6))) + (rnd(rnd(rnd(1/362880) * z + rnd(-1/5040)) * z + rnd(1/120)) - ((rnd(1/362880) * Z + rnd(-1/5040)) * Z + rnd(1/120))) * z + ((rnd(1/362880) * Z + rnd(-1/5040)) * Z + rnd(1/120)) * (z - Z);
hz + coslow - (-0.5 * Z + CL) -> (coslow - (rnd(z * z) * pc + rnd(-0.5 * rnd((t1 + t1) * u + ze)))) + (rnd(z * z) - z * z) * pc + (z * z - Z * Z) * pc + Z * Z * (pc - PC) + (rnd(-0.5 * rnd((t1 + t1) * u + ze)) - (-0.5 * rnd((t1 + t1) * u + ze))) - 0.5 * (rnd((t1 + t1) * u + ze) - ((t1 + t1) * u + ze));
# the method error: evaluation in exact arithmetic against sin t, cos t
t1 + sinlow - St -> (sinlow - SL) + (t1 + SL - St);
t1 + SL - St -> t1 * Z * (PS - PSx) + (SP9 - St1) + u * ((CP8 - Ct1) - Z * Z * PCx) - e * Ct1 - (St - (St1 + d * Ct1));
1 + hz + coslow - Ct -> (hz + coslow - (-0.5 * Z + CL)) + (1 - 0.5 * Z + CL - Ct);
1 - 0.5 * Z + CL - Ct -> Z * Z * (PC - PCx) + (CP8 - Ct1) - (Ct - (Ct1 - d * St1)) + u * ((St1 - SP9) + t1 * (Z * PSx)) + e * St1;
PS - PSx -> (((rnd(1/362880) - 1 / 362880) * Z + (rnd(-1/5040) - -1 / 5040)) * Z + (rnd(1/120) - 1 / 120)) * Z + (rnd(-1/6) - -1 / 6);
PC - PCx -> ((rnd(1/40320) - 1 / 40320) * Z + (rnd(-1/720) - -1 / 720)) * Z + (rnd(1/24) - 1 / 24);
