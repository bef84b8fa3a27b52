# angle_fast.g — kFastCosSinError (optimized/error_bounds.h, steps 1, 2', 3'): the FAST angle path of
# the f32/f16/bf16 kernels, optimized/angle-inl.h phase_of → reduce_fast → cos_sin_polynomials<M,
# false> → place_in_quadrant, as written.
#
# Proves, for every position |p| ≤ 2^40 and frequency 0 ≤ θ'_j ≤ 2^16 (enforced by optimized/plan.cpp):
#     |ĉ − cos R| ≤ 3.5625·2^-53 ≤ 4.25·2^-53   and   |ŝ − sin R| ≤ 3.1875·2^-53 ≤ 4.25·2^-53
# where R is the exact angle p·θ'_j reduced by the quadrant the kernel picks (below), so
# (c, s) = (±ĉ or ±ŝ, ±ŝ or ±ĉ) is within 4.25·2^-53 of (cos, sin)(p·θ'_j): coq/CosSinTaylor.v
# quadrant_placement is the identity behind place_in_quadrant's table. Gappa's own enclosures:
# |R − r| ≤ 2.355·2^-53, |ĉ − cos R| ≤ 3.548·2^-53, |ŝ − sin R| ≤ 3.144·2^-53.
# (error_bounds.h's hand budget, 3.15 + 1.06, differs term by term: RN(d·K) costs half an ulp below 1,
# 0.5·2^-53, and K = RN(2π)·2^-54 is off by 0.35·2^-53 relative, i.e. ≤ 0.28·2^-53 on |d·K| ≤ π/4,
# together 0.78 instead of 1.5709; the cosine evaluation costs up to 1.19, not 1.06: see angle_precise.g.)
#
# Exact integer steps (checked by reading the code, not by Gappa):
#   plan.cpp: turns = θ'/two_pi in cpp_bin_float<128>; step = (step_hi, step_lo) = to_fixed_point
#   (frac(turns)·2^128 rounded to nearest: frac, ldexp, floor are exact in binary floating point).
#   phase_of: phase = P·step mod 2^128 (exact 64-bit wrapping arithmetic, two's complement P), so
#   with T = phase.high, L = phase.low:
#       p·θ'/(2π) ≡ T·2^-64 + L·2^-128 − p·(step_err + rel_err·θ'/(2π))   (mod 1)
#   reduce_fast: biased = T + 2^61 (mod 2^64), q = biased >> 62, U = biased mod 2^62, so
#       T·2^-64 ≡ q/4 + (U − 2^61)·2^-64   (mod 1),    and therefore   p·θ' ≡ q·π/2 + R  (mod 2π) with
#       R = 2π·((U − 2^61)·2^-64 + low) − 2π·p·step_err − p·θ'·rel_err,   low = L·2^-128 ∈ [0, 2^-64).
#   units V = (U + 2^9) >> 10 = floor((U + 512)/1024) (no overflow: U < 2^62), V ∈ [0, 2^52];
#   as_double(bits(2^52) + V) is the double 2^52 + V (exponent field 0x433, significand V; V = 2^52
#   carries into the exponent: 0x434…0 = 2^53), written below as the exact sum two52_plus_units.
# Floating-point steps (binary64, round to nearest even, -ffp-contract=off: optimized/CMakeLists.txt):
#   d = RN(two52_plus_units − 0x1.8p52)          (Gappa proves it exact: d = V − 2^51)
#   K = kRadiansPerFastUnit = RN(6.283185307179586476925286766559)·2^-54  (compiler-rounded literal)
#   r = RN(d·K);  the polynomials of cos_sin_polynomials (kWithLow = false) with the coefficients
#   kSin3 … kCos18 = RN(±1/n!) and fmadd = one rounding; ŝ = RN(r + RN(r·t)), ĉ = RN(1 + RN(r2·pc)).
#
# Premises and where each one comes from:
#   rel_err ∈ ±2^-120   relative error of plan.cpp's turns = θ'/two_pi (schedule.h in 128-bit
#                       cpp_bin_float): ASSUMED, as in error_bounds.h step 1 (~10 operations of ≤ 2
#                       ulps of 2^-127); Boost's pow/log/acos accuracy is not proven here.
#   step_err ∈ ±2^-128  to_fixed_point rounds frac(turns) to 2^-128 turn: floor(x + 1/2) with x + 1/2
#                       formed in 128-bit arithmetic, error ≤ (1/2 + 2^-64)·2^-128.
#   pi ∈ [3.14159265358979323, 3.14159265358979324]   coq/CosSinTaylor.v pi_enclosure.
#   Sr − PS, Cr − PC: Sr = sin r, Cr = cos r, PS/PC the exact Taylor polynomials (Horner form, the same
#                       as sin_poly/cos_poly): coq/CosSinTaylor.v sin_taylor_error, cos_taylor_error
#                       (valid for |r| ≤ 4/5, which this script proves first).
#   SR − Sr, CR − Cr:  SR = sin R, CR = cos R; 1-Lipschitz: coq/CosSinTaylor.v sin_lipschitz,
#                       cos_lipschitz with the bound on |R − r| this script proves first.
# Justifies: delta64_fast of coq/ErrorBound.v (kFastCosSinError = 4.25·2^-53).

@rnd = float<ieee_64, ne>;

# reduce_fast
U = int<dn>(u0);                                      # (T + 2^61) mod 2^62, an integer
V = int<dn>((U + 512) * 1b-10);                       # units = (remainder + 2^9) >> 10
two52_plus_units = 4503599627370496 + V;              # as_double(units + 0x4330000000000000)
d = rnd(two52_plus_units - 6755399441055744);         # M::sub(…, 0x1.8p52)
K = rnd(6.283185307179586476925286766559) * 1b-54;    # kRadiansPerFastUnit
r = rnd(d * K);

# exact reduced angle (radians)
Es = 2 * pi * P * step_err + P * theta * rel_err;
R = 2 * pi * ((U - 2305843009213693952) * 1b-64 + low) - Es;

# cos_sin_polynomials<M, false>: exact coefficients, and the code's (RN of each)
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
shat = rnd(r + rnd(r * t));
pc8 = rnd(rnd(C18) * r2 + rnd(C16));
pc7 = rnd(pc8 * r2 + rnd(C14));
pc6 = rnd(pc7 * r2 + rnd(C12));
pc5 = rnd(pc6 * r2 + rnd(C10));
pc4 = rnd(pc5 * r2 + rnd(C8));
pc3 = rnd(pc4 * r2 + rnd(C6));
pc2 = rnd(pc3 * r2 + rnd(C4));
pc1 = rnd(pc2 * r2 + C2);
chat = rnd(1 + rnd(r2 * pc1));

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

{ u0 in [0, 4611686018427387903] /\ low in [0, 1b-64] /\ P in [-1099511627776, 1099511627776]
  /\ theta in [0, 65536] /\ step_err in [-1b-128, 1b-128] /\ rel_err in [-1b-120, 1b-120]
  /\ pi in [3.14159265358979323, 3.14159265358979324]
  -> d - (V - 2251799813685248) in [0, 0]
  /\ r in [-0.8, 0.8]
  /\ R - r in [-2.62e-16, 2.62e-16]
  /\ (Sr - PS in [-1.19e-19, 1.19e-19] /\ Cr - PC in [-4.74e-21, 4.74e-21]
      /\ SR - Sr in [-2.62e-16, 2.62e-16] /\ CR - Cr in [-2.62e-16, 2.62e-16]
      -> chat - CR in [-17b-55, 17b-55] /\ shat - SR in [-17b-55, 17b-55]
      /\ chat - CR in [-57b-57, 57b-57] /\ shat - SR in [-51b-57, 51b-57]) }

# d is exact (an integer of at most 52 bits)
d - (V - 2251799813685248) -> d - (two52_plus_units - 6755399441055744);
# R − r = remainder rounding to 2^-54 turn + truncated low bits − step error
#         + (exact d) + K's error + rounding of d·K
R - r -> 2 * pi * 1b-54 * (((U + 512) * 1b-10 - V) - 1/2) + 2 * pi * low - Es
         + (V - 2251799813685248 - d) * K + (V - 2251799813685248) * (2 * pi * 1b-54 - K) + (d * K - r);
# evaluation error + Taylor truncation + Lipschitz
shat - SR -> (shat - PS) + (PS - Sr) + (Sr - SR);
chat - CR -> (chat - PC) + (PC - Cr) + (Cr - CR);
