# angle_precise.g — kPreciseCosSinError (optimized/error_bounds.h, steps 1–3): the PRECISE angle path
# of the f64 kernels, optimized/angle-inl.h phase_of → reduce_precise → cos_sin_polynomials<M, true>
# → place_in_quadrant, as written; radians_per_unit_hi/lo from optimized/plan.cpp.
#
# Proves, for every position |p| ≤ 2^40 and frequency 0 ≤ θ'_j ≤ 2^16 (enforced by optimized/plan.cpp):
#     |ĉ − cos R| ≤ 1.25·2^-53      and      |ŝ − sin R| ≤ 0.8125·2^-53 ≤ 1.25·2^-53
# where R is the exact angle p·θ'_j reduced by the quadrant the kernel picks (below); place_in_quadrant
# only swaps and negates (coq/CosSinTaylor.v quadrant_placement).
# The cosine bound is TIGHT: Gappa reaches about 1.244·2^-53 (a goal of 1.2422·2^-53 fails). Adding
# the worst cases of the terms one by one gives more than 1.25 — at r ≈ π/4, in units of 2^-53:
# 0.5 (final 1 + w) + 0.25 (fused r2·pc − r_lo·r) + 0.238 (r2 = RN(r·r), times |pc| ≈ 0.475)
# + 0.188 (Horner error of pc times r2 ≈ 0.617; pc's own last rounding alone is 0.25·0.617)
# + 0.093 (r_lo ≤ 1.19 times r − sin r ≈ 0.078: the correction uses sin r ≈ r) ≈ 1.27 (Gappa's
# `?` enclosure, also with a finer split). Gappa proves 1.25 by refuting a violated goal: it
# propagates the assumed error back to R2·(pc1 − Pc1), splits on R2 and finds the terms cannot all be
# extreme at once (shared roundings, e.g. r2's). The r-split below is needed for that.
#
# Exact integer steps (checked by reading the code, not by Gappa): as in angle_fast.g,
#   p·θ'/(2π) ≡ T·2^-64 + L·2^-128 − p·(step_err + rel_err·θ'/(2π))   (mod 1)   (T, L = phase.high/low)
#   reduce_precise: biased = T + 2^61, q = biased >> 62, U = biased mod 2^62,
#   shifted = 2U + (L >> 63) < 2^63, f = shifted − 2^62 ∈ [−2^62, 2^62 − 1], hence
#       p·θ' ≡ q·π/2 + R (mod 2π),   R = 2π·(f·2^-65 + low) − 2π·p·step_err − p·θ'·rel_err,
#       low = (L mod 2^63)·2^-128 ∈ [0, 2^-65).
#   f_hi = (double)f (int64 → double rounds to nearest); (int64_t)f_hi is exact (an integer-valued
#   double of magnitude ≤ 2^62), f − (int64_t)f_hi is exact in int64; f_lo = (double) of it.
# Floating-point steps (binary64, round to nearest even, -ffp-contract=off, ::fma one rounding):
#   plan.cpp: W = two_pi = 2·acos(−1) in cpp_bin_float<128>; hi = W.convert_to<double>() = RN(W)
#   (Boost 1.74 eval_convert_to: copy_and_round, ties to even); W − hi is exact in 128 bits;
#   lo = RN(W − hi); radians_hi = hi·2^-65, radians_lo = lo·2^-65 (ldexp exact, no underflow).
#   reduce_precise: r_hi = RN(f_hi·rh), pe = RN(f_hi·rh − r_hi) (fma), m = RN(f_lo·rh),
#   g = RN(f_hi·rl + m) (fma), r_lo = RN(pe + g).
#   cos_sin_polynomials<M, true>(r = r_hi, r_lo): the Horner chains of angle_fast.g, then
#     h = RN(r2·(−0.5) + 1), ŝ = RN(r + RN(r·t + RN(r_lo·h)));   ĉ = RN(1 + RN(r2·pc − RN(r_lo·r))).
#
# Premises and where each one comes from:
#   rel_err ∈ ±2^-120, step_err ∈ ±2^-128   as in angle_fast.g (rel_err ASSUMED: plan.cpp's 128-bit
#                       schedule, error_bounds.h step 1; step_err: to_fixed_point's rounding).
#   w_err ∈ ±2^-120     W = 2π(1 + w_err): relative error of Boost's 128-bit acos(−1), ASSUMED like
#                       rel_err (same arithmetic, same source).
#   pi ∈ [3.14159265358979323, 3.14159265358979324]   coq/CosSinTaylor.v pi_enclosure.
#   Sr − PS, Cr − PC    coq/CosSinTaylor.v sin_taylor_error, cos_taylor_error (|r| ≤ 4/5, proven here).
#   SR − (Sr + rho·Cr), CR − (Cr − rho·Sr), rho = R − r:  coq/CosSinTaylor.v sin_second_order,
#                       cos_second_order (|rho| ≤ 1 ⇒ error ≤ rho²), with |rho| ≤ 1.33e-16 proven
#                       here: 1.33e-16² ≤ 1.77e-32.
# Justifies: delta64 of coq/ErrorBound.v (kPreciseCosSinError = 1.25·2^-53).

@rnd = float<ieee_64, ne>;

# plan.cpp's radians per unit of 2^-65 turn
W = 2 * pi * (1 + w_err);
W_hi = rnd(W);
rh = W_hi * 1b-65;
rl = rnd(W - W_hi) * 1b-65;

# reduce_precise
f = int<dn>(f0);
f_hi = rnd(f);
f_lo = rnd(f - f_hi);
r = rnd(f_hi * rh);                 # r_hi
pe = rnd(f_hi * rh - r);            # product_error = fma(f_hi, radians_hi, −hi)
m = rnd(f_lo * rh);
g = rnd(f_hi * rl + m);             # fma(f_hi, radians_lo, f_lo·radians_hi)
r_lo = rnd(pe + g);

# exact reduced angle (radians) and what r misses of it
Es = 2 * pi * P * step_err + P * theta * rel_err;
R = 2 * pi * (f * 1b-65 + low) - Es;
rho = R - r;

# cos_sin_polynomials<M, true>
S3 = -1/6; S5 = 1/120; S7 = -1/5040; S9 = 1/362880; S11 = -1/39916800; S13 = 1/6227020800;
S15 = -1/1307674368000; S17 = 1/355687428096000;
C2 = -1/2; C4 = 1/24; C6 = -1/720; C8 = 1/40320; C10 = -1/3628800; C12 = 1/479001600;
C14 = -1/87178291200; C16 = 1/20922789888000; C18 = -1/6402373705728000;

r2 = rnd(r * r);
ps7 = rnd(rnd(S17) * r2 + rnd(S15));
ps6 = rnd(ps7 * r2 + rnd(S13));
ps5 = rnd(ps6 * r2 + rnd(S11));
ps4 = rnd(ps5 * r2 + rnd(S9));
ps3 = rnd(ps4 * r2 + rnd(S7));
ps2 = rnd(ps3 * r2 + rnd(S5));
ps1 = rnd(ps2 * r2 + rnd(S3));
t = rnd(r2 * ps1);
pc8 = rnd(rnd(C18) * r2 + rnd(C16));
pc7 = rnd(pc8 * r2 + rnd(C14));
pc6 = rnd(pc7 * r2 + rnd(C12));
pc5 = rnd(pc6 * r2 + rnd(C10));
pc4 = rnd(pc5 * r2 + rnd(C8));
pc3 = rnd(pc4 * r2 + rnd(C6));
pc2 = rnd(pc3 * r2 + rnd(C4));
pc1 = rnd(pc2 * r2 + C2);
h = rnd(r2 * C2 + 1);                         # fmadd(r2, −0.5, 1)
sfix = rnd(r * t + rnd(r_lo * h));            # fmadd(r, t, r_lo·h)
shat = rnd(r + sfix);
cfix = rnd(r2 * pc1 - rnd(r_lo * r));         # fmsub(r2, pc, r_lo·r)
chat = rnd(1 + cfix);

# the Taylor polynomials at r, exactly (= sin_poly r, cos_poly r of coq/CosSinTaylor.v)
R2 = r * r;
Ps7 = S17 * R2 + S15;
Ps6 = Ps7 * R2 + S13;
Ps5 = Ps6 * R2 + S11;
Ps4 = Ps5 * R2 + S9;
Ps3 = Ps4 * R2 + S7;
Ps2 = Ps3 * R2 + S5;
Ps1 = Ps2 * R2 + S3;
PS = r + r * (R2 * Ps1);
Pc8 = C18 * R2 + C16;
Pc7 = Pc8 * R2 + C14;
Pc6 = Pc7 * R2 + C12;
Pc5 = Pc6 * R2 + C10;
Pc4 = Pc5 * R2 + C8;
Pc3 = Pc4 * R2 + C6;
Pc2 = Pc3 * R2 + C4;
Pc1 = Pc2 * R2 + C2;
PC = 1 + R2 * Pc1;
H = R2 * C2 + 1;

{ f0 in [-4611686018427387904, 4611686018427387903] /\ low in [0, 1b-65]
  /\ P in [-1099511627776, 1099511627776] /\ theta in [0, 65536]
  /\ step_err in [-1b-128, 1b-128] /\ rel_err in [-1b-120, 1b-120] /\ w_err in [-1b-120, 1b-120]
  /\ pi in [3.14159265358979323, 3.14159265358979324]
  -> r in [-0.8, 0.8]
  /\ rho in [-1.33e-16, 1.33e-16]
  /\ (Sr - PS in [-1.19e-19, 1.19e-19] /\ Cr - PC in [-4.74e-21, 4.74e-21]
      /\ SR - (Sr + rho * Cr) in [-1.77e-32, 1.77e-32] /\ CR - (Cr - rho * Sr) in [-1.77e-32, 1.77e-32]
      -> chat - CR in [-5b-55, 5b-55] /\ shat - SR in [-5b-55, 5b-55]
      /\ shat - SR in [-13b-57, 13b-57]) }

# rho = r_lo + (what the double-double misses: roundings inside r_lo, f_lo·rl, 2π's split, low, Es)
rho - r_lo -> (pe + g - r_lo) + (f_hi * rl + m - g) + (f_lo * rh - m) + f_lo * rl + (f - f_hi - f_lo) * (rh + rl)
              + (f_hi * rh - r - pe) + f * (2 * pi * 1b-65 - (rh + rl)) + 2 * pi * low - Es;
2 * pi * 1b-65 - (rh + rl) -> -((rnd(W - W_hi) - (W - W_hi)) * 1b-65 + 2 * pi * w_err * 1b-65);

# cos R = cos(r + rho) ≈ cos r − rho·sin r; the code uses sin r ≈ r for the correction
chat - CR -> (chat - (PC - r_lo * r)) + r_lo * (Sr - PS) + r_lo * (r * (R2 * Ps1)) + (rho - r_lo) * Sr
             + (PC - Cr) + ((Cr - rho * Sr) - CR);
chat - (PC - r_lo * r) -> (chat - (1 + cfix)) + (cfix - (r2 * pc1 - rnd(r_lo * r)))
             + ((r2 - R2) * pc1 + R2 * (pc1 - Pc1)) - (rnd(r_lo * r) - r_lo * r);
# sin R = sin(r + rho) ≈ sin r + rho·cos r; the code uses cos r ≈ 1 − r²/2 for the correction
shat - SR -> (shat - (PS + r_lo * H)) + r_lo * (PC - Cr) - r_lo * (R2 * (R2 * Pc2)) - (rho - r_lo) * Cr
             + (PS - Sr) + ((Sr + rho * Cr) - SR);
shat - (PS + r_lo * H) -> (shat - (r + sfix)) + (sfix - (r * t + rnd(r_lo * h)))
             + r * ((t - r2 * ps1) + (r2 - R2) * ps1 + R2 * (ps1 - Ps1))
             + (rnd(r_lo * h) - r_lo * h) + r_lo * (h - H);

# the errors depend on the binade of r (half an ulp of 1 + w, of r2·pc, …): split r's range
$ r in 32;
