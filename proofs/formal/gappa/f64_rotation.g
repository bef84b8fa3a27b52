# f64_rotation.g — the double-double rotation and rounding test of f64 data (optimized/kernel_f64-inl.h
# f64_rotate, steps 4–5), on the operations as written, for A = 1 (S = 1; plan.cpp multiplies K by
# S = max(1, |A|), and every term below scales with the table's magnitude).
# Inputs: binary64 x, y with |x|, |y| ≤ 2 and sum = |x| + |y| ∈ [1, 2] (one binade: a power-of-two
# scaling of x and y in the normal range maps the statement onto every binade; below it E's floor
# F = 2^-1070 covers the at most six subnormal roundings of 2^-1075 each); the token's table
# entries c = ch + cl, s = sh + sl (binary64, |ch|, |sh| ≤ 1, |cl|, |sl| ≤ 2^-53: the final TwoSum
# of f64_cos_sin_lanes normalizes them) with |c − cos φ|, |s − sin φ| ≤ kF64TableError + step 1's
# angle error (f64_table.g, plan.cpp), so the exact output X = x·cos φ − y·sin φ is within dt·sum
# of A0 = x·c − y·s (|x|·|c − cos φ| + |y|·|s − sin φ| ≤ max(...)·sum).
# Exact operations (not rounded here): the TwoProd errors pe = fmsub(x, ch, p) = x·ch − p and
# qe = y·sh − q (an FMA's result is exact when it is representable, which the product's error is
# above the subnormal range: Boldo and Muller, "Exact and approximated error of the FMA", IEEE TC
# 2011), and the TwoSum error ae = (p − q) − ah (Knuth's TwoSum: exact with round to nearest).
# Proven: the rotation's error |ah + al − A0| ≤ 2^-102·sum (kF64RotationError = 2^-100), and the rounding
# test's ends ah + RN(al ∓ E) lie below / above X, so RN(ah + RN(al − E)) ≤ RN(X) ≤ RN(ah + RN(al + E))
# (RN monotonic): when the two are equal, they are RN(X); likewise b = x·s + y·c (bh, bl; exact Y).
# dt, dt2: the table's error with step 1's for θ'_max ≤ 1 (2^-75 + 2^-80 + 2^-86 = 2113·2^-86) and
# K = 2113·2^-86 + 2^-100 as plan.cpp forms it (rounded up there); a larger θ'_max adds the same
# angle term to both, which leaves the margin K − |dt| = 2^-100 and this proof unchanged.

@rnd = float<ieee_64, ne>;
x = rnd(xx);
y = rnd(yy);
ch = rnd(ch_);
sh = rnd(sh_);
cl = rnd(cl_);
sl = rnd(sl_);
p = rnd(x * ch);
pe = x * ch - p;
q = rnd(y * sh);
qe = y * sh - q;
ah = rnd(p - q);
ae = (p - q) - ah;
al = rnd(rnd(rnd(x * cl + pe) - rnd(y * sl + qe)) + ae);
A0 = x * (ch + cl) - y * (sh + sl);
r = rnd(x * sh);
re = x * sh - r;
w = rnd(y * ch);
we = y * ch - w;
bh = rnd(r + w);
be = (r + w) - bh;
bl = rnd(rnd(rnd(x * sl + re) + rnd(y * cl + we)) + be);
B0 = x * (sh + sl) + y * (ch + cl);
X = A0 + dt * sum;
s = rnd(sum);
E = rnd(34619393b-100 * s + 1b-1070);
lo = ah + rnd(al - E);
hi = ah + rnd(al + E);
Y = B0 + dt2 * sum;
lob = bh + rnd(bl - E);
hib = bh + rnd(bl + E);
{ xx in [-2, 2] /\ yy in [-2, 2] /\ sum in [1, 2] /\ ch_ in [-1, 1] /\ sh_ in [-1, 1]
  /\ cl_ in [-1b-53, 1b-53] /\ sl_ in [-1b-53, 1b-53] /\ dt in [-2113b-86, 2113b-86] /\ dt2 in [-2113b-86, 2113b-86]
  -> ah + al - A0 in [-1b-102, 1b-102] /\ bh + bl - B0 in [-1b-102, 1b-102]
     /\ lo - X <= 0 /\ hi - X >= 0 /\ lob - Y <= 0 /\ hib - Y >= 0 }
ah + al - A0 -> (al - (rnd(x * cl + pe) - rnd(y * sl + qe) + ae)) + (rnd(x * cl + pe) - (x * cl + pe)) - (rnd(y * sl + qe) - (y * sl + qe));
bh + bl - B0 -> (bl - (rnd(x * sl + re) + rnd(y * cl + we) + be)) + (rnd(x * sl + re) - (x * sl + re)) + (rnd(y * cl + we) - (y * cl + we));
lo - X -> (rnd(al - E) - (al - E)) - (E - 34619393b-100 * sum) - (34619393b-100 + dt) * sum + (ah + al - A0);
hi - X -> (rnd(al + E) - (al + E)) + (E - 34619393b-100 * sum) + (34619393b-100 - dt) * sum + (ah + al - A0);
E - 34619393b-100 * sum -> (E - (34619393b-100 * s + 1b-1070)) + 34619393b-100 * (s - sum) + 1b-1070;
lob - Y -> (rnd(bl - E) - (bl - E)) - (E - 34619393b-100 * sum) - (34619393b-100 + dt2) * sum + (bh + bl - B0);
hib - Y -> (rnd(bl + E) - (bl + E)) + (E - 34619393b-100 * sum) + (34619393b-100 - dt2) * sum + (bh + bl - B0);
