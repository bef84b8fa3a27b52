# f64_cos_sin.g — step 3's cos t and sin t of the f64 kernels' table (optimized/kernel_f64-inl.h
# f64_cos_sin_lanes), on the operations as written, for t = t1 + u + e: t1 = RN(th + tl),
# u = RN(tl − RN(t1 − th)) (Fast2Sum; |t1| ≤ 0.0030680 and |u| ≤ 2^-61 from f64_reduction.g),
#   z = RN(t1²), z_e = t1² − z (exact: an FMA), h_z = −z/2 (exact),
#   sin_low = RN(RN(t1·z)·P_s(z) + RN(h_z·u + u)),  cos_low = RN(RN(z·z)·P_c(z) − RN(0.5·RN((t1 + t1)·u + z_e)))
# (P_s, P_c: Horner in binary64 with the coefficients RN(1/n!); t1 + t1 exact).
# Proven: the computed sin t1 + sin_low and cos 1 + h_z + cos_low are within 2^-77.89 and 2^-88.97
# of the same expressions in exact arithmetic, SL = t1·Z·PS(Z) + u·(1 − Z/2) and
# CL = Z²·PC(Z) − t1·u (Z = t1², the same coefficients), and |sin_low| ≤ 2^-27.6,
# −2^-68.9 ≤ cos_low ≤ 2^-37.9 (f64_table.g's ranges).
# The method error of SL and CL against sin t, cos t (by hand; Taylor remainders of the alternating
# series on |t| ≤ 0.0030680): sin: the truncation t^11/11! ≤ 2^-117, the coefficients' rounding
# |RN(1/6) − 1/6|·|t1|³ ≤ 2^-56.58·2^-25.04 ≤ 2^-81.6 (the others far below), u·(cos t1 − 1 + t1²/2)
# and u²: ≤ 2^-100, |e| ≤ 2^-112 (f64_reduction.g plus Fast2Sum's exactness, or its rounding
# ≤ 2^-114 where |tl| > |th|): in all ≤ 2^-81.5; cos: t^10/10! ≤ 2^-105.2, the t⁴ term taken at t1,
# |t1³·u|/6 ≤ 2^-88.6, the rest below 2^-100: ≤ 2^-88.5. So |t1 + sin_low − sin t| ≤ 2^-77.89 +
# 2^-81.5 < 4.2e-24 and |1 + h_z + cos_low − cos t| ≤ 2^-88.97 + 2^-88.5 < 5e-27: f64_table.g's
# premises est, ect.
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
{ t1_ in [-0.0030680, 0.0030680] /\ u_ in [-1b-61, 1b-61]
  -> sinlow - SL in [-3.57e-24, 3.57e-24] /\ hz + coslow - (-0.5 * Z + CL) in [-1.65e-27, 1.65e-27] /\ coslow in [-1.76e-21, 3.7e-12] /\ sinlow in [-4.82e-9, 4.82e-9] /\ z in [0, 9.42e-6] }
sinlow - SL -> (sinlow - (rnd(t1 * z) * ps + rnd(hz * u + u))) + (rnd(t1 * z) - t1 * z) * ps + t1 * (z - Z) * ps + t1 * Z * (ps - PS) + (rnd(hz * u + u) - (hz * u + u)) + (hz + 0.5 * Z) * u;
ps - PS -> (ps - (rnd(rnd(rnd(1/362880) * z + rnd(-1/5040)) * z + rnd(1/120)) * z + rnd(-1/6))) + (rnd(rnd(rnd(1/362880) * z + rnd(-1/5040)) * z + rnd(1/120)) - ((rnd(1/362880) * Z + rnd(-1/5040)) * Z + rnd(1/120))) * z + ((rnd(1/362880) * Z + rnd(-1/5040)) * Z + rnd(1/120)) * (z - Z);
hz + coslow - (-0.5 * Z + CL) -> (coslow - (rnd(z * z) * pc + rnd(-0.5 * rnd((t1 + t1) * u + ze)))) + (rnd(z * z) - z * z) * pc + (z * z - Z * Z) * pc + Z * Z * (pc - PC) + (rnd(-0.5 * rnd((t1 + t1) * u + ze)) - (-0.5 * rnd((t1 + t1) * u + ze))) - 0.5 * (rnd((t1 + t1) * u + ze) - ((t1 + t1) * u + ze));
