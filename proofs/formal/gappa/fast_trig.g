#@-Eprecision=300
# fast_trig.g — the bound of reference/fast_trig.h (kFastCosSinError = 2^-97): cos_sin_of_multiple in
# reference/fast_trig.cpp as written, steps 1–5 of its head comment.
#
# Proves, for |m·t1| ≤ 2^40 + 2^-13 (the code's test |RN(m·t1)| ≤ kFastAngleLimit = 2^40; 2^40 + 2^-13
# is the largest real rounding to 2^40, ties to even), |t2| ≤ u·|t1|, |t3| ≤ u·|t2| (a normalised
# triple-double: |t(k+1)| ≤ ulp(tk)/2 ≤ u·|tk|, u = 2^-53), with φ = m·(t1 + t2 + t3) + mtau:
#     |R| ≤ 0.786, |r̂| ≤ 0.788, |r̂ − R| ≤ 1.56e-31 (Gappa: 2^-102.35)     (steps 1–3)
#     |ŝ − sin R|, |ĉ − cos R| ≤ 2^-97 = kFastCosSinError; also ≤ 2^-101 (sin), ≤ 1.5·2^-102 (cos)
# where R = φ − k·π/2 is the exact reduced angle for the code's k, r̂ the double-double after the
# reduction, ŝ = sin_r and ĉ = cos_r before the quadrant's swaps and negations (exact;
# coq/FastTrig.v fast_trig_placed carries the bound to cos φ and sin φ).
# Evaluation alone (Gappa's figures, step 4): |ŝ − PS| ≤ 2^-103.8, |ĉ − PC| ≤ 2^-103.35 (the
# Taylor polynomials at r̂); truncation ≤ 1.48e-31 (sin) and 4.2e-33 (cos); reduction ≤ 1.56e-31.
# Totals: ≤ 3.61e-31 = 2^-101.13 (sin), ≤ 2.38e-31 = 2^-101.70 (cos).
#
# Model. Binary64 round to nearest even (rnd), subnormals included; std::fma one rounding.
#   - two_product(a, b) = (RN(a·b), a·b − RN(a·b)) exactly: m and k are integers, so the error is a
#     multiple of 2^-1074 below half an ulp of the product, hence representable (even subnormal).
#   - two_sum is exact (Knuth): r starts as the exact a1 − c1.
#   - Each double-double operation is modelled by its result, a free variable, tied to the exact
#     operation on the computed operands by the bound of Joldes–Muller–Popescu, "Tight and rigorous
#     error bounds for basic building blocks of double-word arithmetic", ACM TOMS 44(2), 2017 (JMP),
#     stated as a HYPOTHESIS (Gappa does not prove it): `v -/ e in [−b, b]` is Gappa's relative
#     error, v = e·(1 + ε) with |ε| ≤ b:
#         add(DD, double)  JMP Algorithm 4 (DWPlusFP)        b = 2u²/(1 − 2u) ≤ (2^53 + 3)·2^-158
#         add(DD, DD)      JMP Algorithm 6 (AccurateDWPlusDW) b = 3u² + 13u³ = (3·2^53 + 13)·2^-159
#         multiply(DD, DD) JMP Algorithm 12 (DWTimesDW3)      b = 5u²
#     JMP's bounds need normalised double-double operands (|lo| ≤ ulp(hi)/2: every result of these
#     operations, the coefficients, {tail, 0}) and no underflow (below).
#   - z.hi = RN(z): multiply ends in fast_two_sum, whose sum is RN(hi + lo).
# Premises not proven here:
#   - the JMP bounds above (cited; Gappa propagates them);
#   - |delta| ≤ 2^-161 for π/2 = P1 + P2 + P3 + delta (kHalfPi; MPFR gives 2^-163.6, and
#     tests/reference/fast_trig_test.cpp checks the results against MPFR; coq/CosSinTaylor.v's π
#     enclosure is far too coarse for it);
#   - |mtau| ≤ 1.016·2^-119: θ − (t1 + t2 + t3) ≤ u³·|θ| (each word the rounded remainder) plus
#     underflow ≤ 2^-1075, times |m·θ| ≤ 2^40·(1 + 2^-50); for the f32 recipe (θ one double) mtau = 0;
#   - no underflow in the double-double operations (JMP's condition): a result is returned only
#     when |ĉ|, |ŝ| ≥ 2^-60, so |r̂| ≥ 2^-61 and every quantity of step 4 exceeds 2^-300; in step 3 a
#     partial sum below 2^-969 costs at most 2^-1074 more per add (written, not modelled);
#   - Sr − PS, Cr − PC (truncation) and SR − Sr, CR − Cr (1-Lipschitz, with the |r̂ − R| proven here):
#     coq/FastTrig.v fast_trig_premises (|r̂| ≤ 0.788 proven here). Sr, Cr, SR, CR are sin r̂, cos r̂,
#     sin R, cos R.
# The coefficients below are fast_trig.cpp's kSinCoefficients / kCosCoefficients word for word, the
# exact ones 1/(2i+1)! and 1/(2i)! as rationals (hence -Eprecision=300: Gappa encloses constants to
# that many bits, enough for the u² error of the double-double coefficients).
@rnd = float<ieee_64, ne>;
@nearest = int<ne>;

# ---- constants of fast_trig.cpp: π/2 in three doubles, RN(2/π), the Taylor coefficients (exact and
#      as the double-doubles kSinCoefficients / kCosCoefficients; 1-based: Ks_i = (−1)^i/(2i+1)!,
#      Kc_i = (−1)^i/(2i)!)
P1 = 0x1.921fb54442d18p+0; P2 = 0x1.1a62633145c07p-54; P3 = -0x1.f1976b7ed8fbcp-110;
TOP = 0x1.45f306dc9c883p-1;
Ks1 = -1/6; SH1 = -0x1.5555555555555p-3; SL1 = -0x1.5555555555555p-57;
Ks2 = 1/120; SH2 = 0x1.1111111111111p-7; SL2 = 0x1.1111111111111p-63;
Ks3 = -1/5040; SH3 = -0x1.a01a01a01a01ap-13; SL3 = -0x1.a01a01a01a01ap-73;
Ks4 = 1/362880; SH4 = 0x1.71de3a556c734p-19; SL4 = -0x1.c154f8ddc6cp-73;
Ks5 = -1/39916800; SH5 = -0x1.ae64567f544e4p-26; SL5 = 0x1.c062e06d1f209p-80;
Ks6 = 1/6227020800; SH6 = 0x1.6124613a86d09p-33; SL6 = 0x1.f28e0cc748ebep-87;
Ks7 = -1/1307674368000; SH7 = -0x1.ae7f3e733b81fp-41; SL7 = -0x1.1d8656b0ee8cbp-97;
Ks8 = 1/355687428096000; SH8 = 0x1.952c77030ad4ap-49; SL8 = 0x1.ac981465ddc6cp-103;
Ks9 = -1/121645100408832000; SH9 = -0x1.2f49b46814157p-57; SL9 = -0x1.2650f61dbdcb4p-112;
Ks10 = 1/51090942171709440000; SH10 = 0x1.71b8ef6dcf572p-66; SL10 = -0x1.d043ae40c4647p-120;
Ks11 = -1/25852016738884976640000; SH11 = -0x1.761b41316381ap-75; SL11 = 0x1.3423c7d91404fp-130;
Ks12 = 1/15511210043330985984000000; SH12 = 0x1.3f3ccdd165fa9p-84; SL12 = -0x1.58ddadf344487p-139;
Kc1 = -1/2; CH1 = -0x1p-1; CL1 = 0;
Kc2 = 1/24; CH2 = 0x1.5555555555555p-5; CL2 = 0x1.5555555555555p-59;
Kc3 = -1/720; CH3 = -0x1.6c16c16c16c17p-10; CL3 = 0x1.f49f49f49f49fp-65;
Kc4 = 1/40320; CH4 = 0x1.a01a01a01a01ap-16; CL4 = 0x1.a01a01a01a01ap-76;
Kc5 = -1/3628800; CH5 = -0x1.27e4fb7789f5cp-22; CL5 = -0x1.cbbc05b4fa99ap-76;
Kc6 = 1/479001600; CH6 = 0x1.1eed8eff8d898p-29; CL6 = -0x1.2aec959e14c06p-83;
Kc7 = -1/87178291200; CH7 = -0x1.93974a8c07c9dp-37; CL7 = -0x1.05d6f8a2efd1fp-92;
Kc8 = 1/20922789888000; CH8 = 0x1.ae7f3e733b81fp-45; CL8 = 0x1.1d8656b0ee8cbp-101;
Kc9 = -1/6402373705728000; CH9 = -0x1.6827863b97d97p-53; CL9 = -0x1.eec01221a8b0bp-107;
Kc10 = 1/2432902008176640000; CH10 = 0x1.e542ba4020225p-62; CL10 = 0x1.ea72b4afe3c2fp-120;
Kc11 = -1/1124000727777607680000; CH11 = -0x1.0ce396db7f853p-70; CL11 = 0x1.aebcdbd20331cp-124;
Kc12 = 1/620448401733239439360000; CH12 = 0x1.f2cf01972f578p-80; CL12 = -0x1.9ada5fcc1ab14p-135;
Kc13 = -1/403291461126605635584000000; CH13 = -0x1.88e85fc6a4e5ap-89; CL13 = 0x1.71c37ebd1654p-143;

# ---- step 1: the angle. X1 = m·t1; X2 = m·t2 = X1·w2 and X3 = m·t3 = X2·w3 (|t(k+1)| ≤ ulp(tk)/2 ≤ u·|tk|);
#      two_product exact: m·t1 = a1 + b1, m·t2 = a2 + b2; a3 = RN(m·t3); mtau = m·(θ − t1 − t2 − t3)
a1 = rnd(X1); b1 = X1 - a1;
X2 = X1 * w2; a2 = rnd(X2); b2 = X2 - a2;
X3 = X2 * w3; a3 = rnd(X3);
phi = X1 + X2 + X3 + mtau;

# ---- step 2: the quadrant, k = nearbyint(RN(a1·RN(2/π))) (round half to even: int<ne>)
y = rnd(a1 * TOP);
k = nearest(y);

# ---- step 3: Cody–Waite. k·P1 = c1 + d1, k·P2 = c2 + d2 exactly (two_product), c3 = RN(k·P3);
#      π/2 = P1 + P2 + P3 + delta; R = φ − k·π/2 the exact reduced angle.
c1 = rnd(k * P1); d1 = k * P1 - c1;
c2 = rnd(k * P2); d2 = k * P2 - c2;
c3 = rnd(k * P3);
halfpi = P1 + P2 + P3 + delta;
R = phi - k * halfpi;
#      r = two_sum(a1, −c1) (exact: value S0), then eight `add` (DWPlusFP): r1 … r8 = r̂ are the
#      double-double values, free here, tied to the exact sums by JMP's relative bound (hypotheses).
S0 = a1 - c1;
S1 = S0 + b1; S2 = S1 - d1; S3 = S2 + a2; S4 = S3 - c2; S5 = S4 + b2; S6 = S5 - d2; S7 = S6 - c3; S8 = S7 + a3;

# ---- step 4: z = multiply(r̂, r̂) (free, JMP), zh = z.hi = RN(z) (fast_two_sum's sum is RN(hi + lo));
#      the tails in double: fma(zh, p, coefficient.hi), one rounding each
Z = r8 * r8;
zh = rnd(z);
ps11 = rnd(zh * SH12 + SH11);
ps10 = rnd(zh * ps11 + SH10);
ps9 = rnd(zh * ps10 + SH9);
ps8 = rnd(zh * ps9 + SH8);
pc12 = rnd(zh * CH13 + CH12);
pc11 = rnd(zh * pc12 + CH11);
pc10 = rnd(zh * pc11 + CH10);
pc9 = rnd(zh * pc10 + CH9);
#      the double-double Horner steps p_i = add(coefficient_i, multiply(z, p_(i+1))): ms_i, ps_i (sin, i = 7…1),
#      mc_i, pc_i (cos, i = 8…1) are free, tied by JMP (hypotheses); then sin r̂ = add(r̂, multiply(multiply(r̂, z), p_sin))
#      (rz, t, sinr) and cos r̂ = add(multiply(z, p_cos), 1.0) (w, cosr).
#      The Taylor polynomials at r̂, exactly (Horner; = sin_poly25 / cos_poly26 of coq/FastTrig.v):
Ms11 = Ks11 + Z * Ks12;
Ms10 = Ks10 + Z * Ms11;
Ms9 = Ks9 + Z * Ms10;
Ms8 = Ks8 + Z * Ms9;
Ms7 = Ks7 + Z * Ms8;
Ms6 = Ks6 + Z * Ms7;
Ms5 = Ks5 + Z * Ms6;
Ms4 = Ks4 + Z * Ms5;
Ms3 = Ks3 + Z * Ms4;
Ms2 = Ks2 + Z * Ms3;
Ms1 = Ks1 + Z * Ms2;
PS = r8 + r8 * (Z * Ms1);
Mc12 = Kc12 + Z * Kc13;
Mc11 = Kc11 + Z * Mc12;
Mc10 = Kc10 + Z * Mc11;
Mc9 = Kc9 + Z * Mc10;
Mc8 = Kc8 + Z * Mc9;
Mc7 = Kc7 + Z * Mc8;
Mc6 = Kc6 + Z * Mc7;
Mc5 = Kc5 + Z * Mc6;
Mc4 = Kc4 + Z * Mc5;
Mc3 = Kc3 + Z * Mc4;
Mc2 = Kc2 + Z * Mc3;
Mc1 = Kc1 + Z * Mc2;
PC = 1 + Z * Mc1;

{ X1 in [-1099511627776.0001220703125, 1099511627776.0001220703125]
  /\ |w2| <= 1b-53 /\ |w3| <= 1b-53 /\ |mtau| <= 130b-126 /\ |delta| <= 1b-161
  /\ r1 -/ (S0 + b1) in [-9007199254740995b-158, 9007199254740995b-158]
  /\ r2 -/ (r1 - d1) in [-9007199254740995b-158, 9007199254740995b-158]
  /\ r3 -/ (r2 + a2) in [-9007199254740995b-158, 9007199254740995b-158]
  /\ r4 -/ (r3 - c2) in [-9007199254740995b-158, 9007199254740995b-158]
  /\ r5 -/ (r4 + b2) in [-9007199254740995b-158, 9007199254740995b-158]
  /\ r6 -/ (r5 - d2) in [-9007199254740995b-158, 9007199254740995b-158]
  /\ r7 -/ (r6 - c3) in [-9007199254740995b-158, 9007199254740995b-158]
  /\ r8 -/ (r7 + a3) in [-9007199254740995b-158, 9007199254740995b-158]
  /\ z -/ Z in [-5b-106, 5b-106]
  /\ ms7 -/ (z * ps8) in [-5b-106, 5b-106] /\ ps7 -/ (SH7 + SL7 + ms7) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ ms6 -/ (z * ps7) in [-5b-106, 5b-106] /\ ps6 -/ (SH6 + SL6 + ms6) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ ms5 -/ (z * ps6) in [-5b-106, 5b-106] /\ ps5 -/ (SH5 + SL5 + ms5) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ ms4 -/ (z * ps5) in [-5b-106, 5b-106] /\ ps4 -/ (SH4 + SL4 + ms4) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ ms3 -/ (z * ps4) in [-5b-106, 5b-106] /\ ps3 -/ (SH3 + SL3 + ms3) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ ms2 -/ (z * ps3) in [-5b-106, 5b-106] /\ ps2 -/ (SH2 + SL2 + ms2) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ ms1 -/ (z * ps2) in [-5b-106, 5b-106] /\ ps1 -/ (SH1 + SL1 + ms1) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ mc8 -/ (z * pc9) in [-5b-106, 5b-106] /\ pc8 -/ (CH8 + CL8 + mc8) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ mc7 -/ (z * pc8) in [-5b-106, 5b-106] /\ pc7 -/ (CH7 + CL7 + mc7) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ mc6 -/ (z * pc7) in [-5b-106, 5b-106] /\ pc6 -/ (CH6 + CL6 + mc6) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ mc5 -/ (z * pc6) in [-5b-106, 5b-106] /\ pc5 -/ (CH5 + CL5 + mc5) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ mc4 -/ (z * pc5) in [-5b-106, 5b-106] /\ pc4 -/ (CH4 + CL4 + mc4) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ mc3 -/ (z * pc4) in [-5b-106, 5b-106] /\ pc3 -/ (CH3 + CL3 + mc3) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ mc2 -/ (z * pc3) in [-5b-106, 5b-106] /\ pc2 -/ (CH2 + CL2 + mc2) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ mc1 -/ (z * pc2) in [-5b-106, 5b-106] /\ pc1 -/ (CH1 + CL1 + mc1) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ rz -/ (r8 * z) in [-5b-106, 5b-106] /\ t -/ (rz * ps1) in [-5b-106, 5b-106] /\ sinr -/ (r8 + t) in [-27021597764222989b-159, 27021597764222989b-159]
  /\ w -/ (z * pc1) in [-5b-106, 5b-106] /\ cosr -/ (w + 1) in [-9007199254740995b-158, 9007199254740995b-158]
  -> R in [-0.786, 0.786] /\ r8 in [-0.788, 0.788] /\ r8 - R in [-156e-33, 156e-33]
  /\ (Sr - PS in [-148e-33, 148e-33] /\ Cr - PC in [-42e-34, 42e-34]
      /\ SR - Sr in [-156e-33, 156e-33] /\ CR - Cr in [-156e-33, 156e-33]
      -> sinr - SR in [-1b-97, 1b-97] /\ cosr - CR in [-1b-97, 1b-97]
      /\ sinr - SR in [-1b-101, 1b-101] /\ cosr - CR in [-3b-103, 3b-103]) }

# step 2: R = (π/2)·(φ·2/π − k), split into what a1 misses of φ, RN(2/π)'s error, y's rounding, |y − k| ≤ 1/2
R -> (phi - a1) + a1 * (1 - TOP * halfpi) + halfpi * (a1 * TOP - y) + halfpi * (y - k);
phi - a1 -> b1 + X2 + X3 + mtau;
# step 3: the exact sum S8 misses R by a3's and c3's roundings, mtau and k·delta; each add's error
S8 - R -> (a3 - X3) - mtau - (c3 - k * P3) + k * delta;
S0 -> R + (S8 - R) - (b1 - d1 + a2 - c2 + b2 - d2 - c3 + a3);
r1 - S1 -> r1 - (S0 + b1);
r2 - S2 -> (r2 - (r1 - d1)) + (r1 - S1);
r3 - S3 -> (r3 - (r2 + a2)) + (r2 - S2);
r4 - S4 -> (r4 - (r3 - c2)) + (r3 - S3);
r5 - S5 -> (r5 - (r4 + b2)) + (r4 - S4);
r6 - S6 -> (r6 - (r5 - d2)) + (r5 - S5);
r7 - S7 -> (r7 - (r6 - c3)) + (r6 - S6);
r8 - S8 -> (r8 - (r7 + a3)) + (r7 - S7);
# step 4: each Horner step: its add, its coefficient, its multiply, z against r̂², the previous step
ps11 - Ms11 -> (ps11 - (zh * SH12 + SH11)) + (SH11 - Ks11) + ((zh - z) + (z - Z)) * SH12 + Z * (SH12 - Ks12);
ps10 - Ms10 -> (ps10 - (zh * ps11 + SH10)) + (SH10 - Ks10) + ((zh - z) + (z - Z)) * ps11 + Z * (ps11 - Ms11);
ps9 - Ms9 -> (ps9 - (zh * ps10 + SH9)) + (SH9 - Ks9) + ((zh - z) + (z - Z)) * ps10 + Z * (ps10 - Ms10);
ps8 - Ms8 -> (ps8 - (zh * ps9 + SH8)) + (SH8 - Ks8) + ((zh - z) + (z - Z)) * ps9 + Z * (ps9 - Ms9);
pc12 - Mc12 -> (pc12 - (zh * CH13 + CH12)) + (CH12 - Kc12) + ((zh - z) + (z - Z)) * CH13 + Z * (CH13 - Kc13);
pc11 - Mc11 -> (pc11 - (zh * pc12 + CH11)) + (CH11 - Kc11) + ((zh - z) + (z - Z)) * pc12 + Z * (pc12 - Mc12);
pc10 - Mc10 -> (pc10 - (zh * pc11 + CH10)) + (CH10 - Kc10) + ((zh - z) + (z - Z)) * pc11 + Z * (pc11 - Mc11);
pc9 - Mc9 -> (pc9 - (zh * pc10 + CH9)) + (CH9 - Kc9) + ((zh - z) + (z - Z)) * pc10 + Z * (pc10 - Mc10);
ps7 - Ms7 -> (ps7 - (SH7 + SL7 + ms7)) + (SH7 + SL7 - Ks7) + (ms7 - z * ps8) + (z - Z) * ps8 + Z * (ps8 - Ms8);
ps6 - Ms6 -> (ps6 - (SH6 + SL6 + ms6)) + (SH6 + SL6 - Ks6) + (ms6 - z * ps7) + (z - Z) * ps7 + Z * (ps7 - Ms7);
ps5 - Ms5 -> (ps5 - (SH5 + SL5 + ms5)) + (SH5 + SL5 - Ks5) + (ms5 - z * ps6) + (z - Z) * ps6 + Z * (ps6 - Ms6);
ps4 - Ms4 -> (ps4 - (SH4 + SL4 + ms4)) + (SH4 + SL4 - Ks4) + (ms4 - z * ps5) + (z - Z) * ps5 + Z * (ps5 - Ms5);
ps3 - Ms3 -> (ps3 - (SH3 + SL3 + ms3)) + (SH3 + SL3 - Ks3) + (ms3 - z * ps4) + (z - Z) * ps4 + Z * (ps4 - Ms4);
ps2 - Ms2 -> (ps2 - (SH2 + SL2 + ms2)) + (SH2 + SL2 - Ks2) + (ms2 - z * ps3) + (z - Z) * ps3 + Z * (ps3 - Ms3);
ps1 - Ms1 -> (ps1 - (SH1 + SL1 + ms1)) + (SH1 + SL1 - Ks1) + (ms1 - z * ps2) + (z - Z) * ps2 + Z * (ps2 - Ms2);
pc8 - Mc8 -> (pc8 - (CH8 + CL8 + mc8)) + (CH8 + CL8 - Kc8) + (mc8 - z * pc9) + (z - Z) * pc9 + Z * (pc9 - Mc9);
pc7 - Mc7 -> (pc7 - (CH7 + CL7 + mc7)) + (CH7 + CL7 - Kc7) + (mc7 - z * pc8) + (z - Z) * pc8 + Z * (pc8 - Mc8);
pc6 - Mc6 -> (pc6 - (CH6 + CL6 + mc6)) + (CH6 + CL6 - Kc6) + (mc6 - z * pc7) + (z - Z) * pc7 + Z * (pc7 - Mc7);
pc5 - Mc5 -> (pc5 - (CH5 + CL5 + mc5)) + (CH5 + CL5 - Kc5) + (mc5 - z * pc6) + (z - Z) * pc6 + Z * (pc6 - Mc6);
pc4 - Mc4 -> (pc4 - (CH4 + CL4 + mc4)) + (CH4 + CL4 - Kc4) + (mc4 - z * pc5) + (z - Z) * pc5 + Z * (pc5 - Mc5);
pc3 - Mc3 -> (pc3 - (CH3 + CL3 + mc3)) + (CH3 + CL3 - Kc3) + (mc3 - z * pc4) + (z - Z) * pc4 + Z * (pc4 - Mc4);
pc2 - Mc2 -> (pc2 - (CH2 + CL2 + mc2)) + (CH2 + CL2 - Kc2) + (mc2 - z * pc3) + (z - Z) * pc3 + Z * (pc3 - Mc3);
pc1 - Mc1 -> (pc1 - (CH1 + CL1 + mc1)) + (CH1 + CL1 - Kc1) + (mc1 - z * pc2) + (z - Z) * pc2 + Z * (pc2 - Mc2);
sinr - PS -> (sinr - (r8 + t)) + (t - rz * ps1) + (rz - r8 * z) * ps1 + r8 * (z - Z) * ps1 + r8 * Z * (ps1 - Ms1);
cosr - PC -> (cosr - (w + 1)) + (w - z * pc1) + (z - Z) * pc1 + Z * (pc1 - Mc1);
# step 5: evaluation + truncation + reduction (1-Lipschitz)
sinr - SR -> (sinr - PS) + (PS - Sr) + (Sr - SR);
cosr - CR -> (cosr - PC) + (PC - Cr) + (Cr - CR);
