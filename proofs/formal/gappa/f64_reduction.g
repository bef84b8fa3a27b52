# f64_reduction.g — step 2 of the f64 kernels' table (optimized/kernel_f64-inl.h f64_reduce), on the
# operations as written: the phase's remainder after its nearest grid point (1024 per turn),
# R = high·2^64 + low units of 2^-128 turn (high = the integer r_high, |high| ≤ 2^53, converted
# exactly; low = the phase's low word, 0 ≤ low < 2^64, of which ⌊low/2^11⌋·2^11 is converted exactly), becomes
# th + tl with 2π·2^-64 = Rh + Rl (the plan's 2π·2^-65 doubled; Rh = RN(2π)·2^-64,
# Rl = RN(2π − RN(2π))·2^-64) and the exact TwoProd error high·Rh − th (an FMA):
#   th = RN(high·Rh),  tl = RN((high·Rh − th) + RN(high·Rl + RN(⌊low/2^11⌋·2^11·(Rh·2^-64)))).
# Proven: |th + tl − T| ≤ 2^-112 for the exact remainder angle T = R·2π·2^-128, |T| ≤ 0.0030680
# (= 2π·2^-11: f64_cos_sin.g's range), and |tl| ≤ 2^-60.
@rnd = float<ieee_64, ne>;
# step 2
high = int<ne>(high_);
low = int<ne>(low_);
lowd = int<dn>(low * 1b-11) * 2048;
Rh = rnd(pi2) * 1b-64;
Rl = rnd(pi2 - rnd(pi2)) * 1b-64;
th = rnd(high * Rh);
tl = rnd((high * Rh - th) + rnd(high * Rl + rnd(lowd * (Rh * 1b-64))));
T = (high * 18446744073709551616 + low) * pi2 * 1b-128;
{ high_ in [-9007199254740992, 9007199254740992] /\ low_ in [0, 18446744073709551615]
  /\ pi2 in [6.2831853071795864769, 6.2831853071795864770]
  -> th + tl - T in [-1b-112, 1b-112] /\ tl in [-1b-60, 1b-60] /\ T in [-0.0030680, 0.0030680] }
th + tl - T -> (tl - ((high * Rh - th) + rnd(high * Rl + rnd(lowd * (Rh * 1b-64))))) + (rnd(high * Rl + rnd(lowd * (Rh * 1b-64))) - (high * Rl + rnd(lowd * (Rh * 1b-64)))) + (rnd(lowd * (Rh * 1b-64)) - lowd * (Rh * 1b-64)) + (lowd - low) * Rh * 1b-64 + high * 18446744073709551616 * 1b-128 * ((rnd(pi2) + rnd(pi2 - rnd(pi2))) - pi2) + low * 1b-128 * (rnd(pi2) - pi2);
rnd(pi2) + rnd(pi2 - rnd(pi2)) - pi2 -> rnd(pi2 - rnd(pi2)) - (pi2 - rnd(pi2));
lowd - low -> (int<dn>(low * 1b-11) - low * 1b-11) * 2048;
