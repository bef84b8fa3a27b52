# f64_table.g — step 3's angle addition of the f64 kernels' table (optimized/kernel_f64-inl.h
# f64_cos_sin_lanes), on the operations as written: the grid point's C = cos α, S = sin α held as
# ch + cl, sh + sl (f64_table.h: within 2^-106; |ch|, |sh| ≤ 1, |cl|, |sl| ≤ 2^-53), and
# cos t ≈ 1 + h_z + cos_low, sin t ≈ t1 + sin_low within ect, est (f64_cos_sin.g with its method
# error: 5e-27, 4.2e-24), then
#   cos(α + t) = C·cos t − S·sin t = ch + RN-exact(sh·(−t1)) + RN-exact(ch·h_z) + [cl + cl·h_z − sl·t1
#                + ch·cos_low − sl·sin_low − sh·sin_low] (the bracket summed in binary64 as written),
#   sin(α + t) = S·cos t + C·sin t likewise,
# with the TwoProd errors p1e = P1 − p1 (an FMA: exact) and the TwoSum errors e1 = ch + p1 − h,
# e2 = h + p2 − h2 (exact), and the final TwoSum c_hi + c_lo = h2 + a6 (exact).
# Proven: |c_hi + c_lo − cos(α + t)|, |s_hi + s_lo − sin(α + t)| ≤ 4.7e-24 < 2^-77.49 < kF64TableError = 2^-75
# (the margin covers the product by A = A_hi + A_lo for A ≠ 1: TwoProd of c_hi·A_hi and two
# roundings of terms ≤ 2^-52·|A|, ≤ 2^-104·|A|, and A_hi + A_lo's own error ≤ 2^-106·|A| with the
# plan's 128-bit A, relative error ≤ 2^-120 assumed as in error_bounds.h step 1).
@rnd = float<ieee_64, ne>;
ch = rnd(ch_); cl = rnd(cl_); sh = rnd(sh_); sl = rnd(sl_);
t1 = rnd(t1_); z = rnd(z_); coslow = rnd(coslow_); sinlow = rnd(sinlow_);
hz = -0.5 * z;
nt1 = -t1;
nsl = -sinlow;
# cos(α + t)
P1 = sh * nt1; p1 = rnd(P1); p1e = P1 - p1;
P2 = ch * hz; p2 = rnd(P2); p2e = P2 - p2;
h = rnd(ch + p1); e1 = ch + p1 - h;
h2 = rnd(h + p2); e2 = h + p2 - h2;
a0 = rnd(rnd(p1e + p2e) + rnd(e1 + e2));
a1 = rnd(a0 + cl);
a2 = rnd(cl * hz + a1);
a3 = rnd(sl * nt1 + a2);
a4 = rnd(ch * coslow + a3);
a5 = rnd(sl * nsl + a4);
a6 = rnd(sh * nsl + a5);
csum = h2 + a6;
AX = p1e + p2e + e1 + e2 + cl + cl * hz + sl * nt1 + ch * coslow + sl * nsl + sh * nsl;
# sin(α + t)
Q1 = ch * t1; q1 = rnd(Q1); q1e = Q1 - q1;
Q2 = sh * hz; q2 = rnd(Q2); q2e = Q2 - q2;
g = rnd(sh + q1); f1 = sh + q1 - g;
g2 = rnd(g + q2); f2 = g + q2 - g2;
b0 = rnd(rnd(q1e + q2e) + rnd(f1 + f2));
b1 = rnd(b0 + sl);
b2 = rnd(sl * hz + b1);
b3 = rnd(cl * t1 + b2);
b4 = rnd(sh * coslow + b3);
b5 = rnd(cl * sinlow + b4);
b6 = rnd(ch * sinlow + b5);
ssum = g2 + b6;
BX = q1e + q2e + f1 + f2 + sl + sl * hz + cl * t1 + sh * coslow + cl * sinlow + ch * sinlow;
C = ch + cl - dC; S = sh + sl - dS;
CT = 1 + hz + coslow - ect; ST = t1 + sinlow - est;
{ ch_ in [-1, 1] /\ sh_ in [-1, 1] /\ cl_ in [-1b-53, 1b-53] /\ sl_ in [-1b-53, 1b-53]
  /\ t1_ in [-0.0030680, 0.0030680] /\ z_ in [0, 9.42e-6] /\ coslow_ in [-1.76e-21, 3.7e-12] /\ sinlow_ in [-4.82e-9, 4.82e-9]
  /\ dC in [-1b-106, 1b-106] /\ dS in [-1b-106, 1b-106] /\ ect in [-5e-27, 5e-27] /\ est in [-4.2e-24, 4.2e-24]
  -> csum - (C * CT - S * ST) in [-4.7e-24, 4.7e-24] /\ ssum - (S * CT + C * ST) in [-4.7e-24, 4.7e-24] }
a6 - AX -> (a6 - (sh * nsl + a5)) + (a5 - (sl * nsl + a4)) + (a4 - (ch * coslow + a3)) + (a3 - (sl * nt1 + a2)) + (a2 - (cl * hz + a1)) + (a1 - (a0 + cl)) + (a0 - (rnd(p1e + p2e) + rnd(e1 + e2))) + (rnd(p1e + p2e) - (p1e + p2e)) + (rnd(e1 + e2) - (e1 + e2));
b6 - BX -> (b6 - (ch * sinlow + b5)) + (b5 - (cl * sinlow + b4)) + (b4 - (sh * coslow + b3)) + (b3 - (cl * t1 + b2)) + (b2 - (sl * hz + b1)) + (b1 - (b0 + sl)) + (b0 - (rnd(q1e + q2e) + rnd(f1 + f2))) + (rnd(q1e + q2e) - (q1e + q2e)) + (rnd(f1 + f2) - (f1 + f2));
csum - (C * CT - S * ST) -> (a6 - AX) - cl * coslow + dC * (1 + hz + coslow) - dS * (t1 + sinlow) + C * ect - S * est;
ssum - (S * CT + C * ST) -> (b6 - BX) - sl * coslow + dS * (1 + hz + coslow) + dC * (t1 + sinlow) + S * ect + C * est;
