#@-Eprecision=100
# screen.g — the floating-point facts behind judge/pair_rule.cpp screen_pair: its double-precision
# e and abs enclose judge_pair's, so that the comparer may skip judge_pair (judge/group.cpp).
# (The first line raises Gappa's internal precision from 60 to 100 bits: the long double chain's
# 2^-64 roundings need it.)
#
# Data of a 32-bit or narrower dtype (screen_pair returns at once for f64): u = 2^-24, 2^-11 or
# 2^-8. The inputs x, y are values of the input dtype: binary32 or narrower, x² and y² are exact
# in binary64 and in long double (48-bit products, exponents ≥ −298); binary64 inputs (a spec's
# input_dtype=f64), each square rounds once, so RN(x²) + RN(y²) = rho2·(1 + eps_sq) with
# |eps_sq| ≤ 2^-53 + 2^-800 ≤ 2^-52 (a square that underflows errs by 2^-1075, below 2^-800 of
# rho2 ≥ 2^-254), and 2^-63 in long double. rho2 = x² + y².
# The screen's premises: ρ within 2^-40 of the dtype's normal range, √2·ρ·s ≤ its largest value,
# s = max(1, |g|) ≥ 1: rho2 ∈ [2^-254, 2^256], s ∈ [1, 2^256]. e_d and d range over every finite
# double (a candidate's output need not be a value of the dtype); Gappa's binary64 has no largest
# value, so where the program's e_high or abs_high overflows it is +∞ — still an upper bound — and
# judge_pair's e, RN64 of its long double quotient, is +∞ only where that quotient exceeds the
# largest double, and then e_high (above it by 2^-30 relative) is +∞ too.
#
# Let A be judge_pair's exact output (the comparer's long double value), D = |a − A| for the
# candidate's a (the maximum over the pair's two components: each satisfies what follows, and
# the form's values for one D fill an interval monotone in D, so the maximum does too),
# unit = u·ρ·s and e = D/unit.
# - screen_pair, binary64: ρ_d = RN(√RN(RN(x²) + RN(y²))), unit_d = RN(RN(u·ρ_d)·s), A_d = RN(A)
#   (|A_d − A| ≤ 2^-53·|A| + 2^-1075, |A| ≤ s·ρ), d = RN(|a − A_d|) = (D + η)(1 + ε_sub) with
#   η = η_r·s·ρ + η_t (a difference of doubles errs by at most 2^-53 of itself, subnormal or
#   not), e_d = RN(d/unit_d) = d/unit_d·(1 + ε_q) + t_q (relative in the normal range, 2^-1075
#   below it). Hence e_d = k·e + w, k = (1 + ε_sub)(1 + ε_q)·unit/unit_d, w = k·(η_r/u + η_t/unit) + t_q.
# - judge_pair, x87 long double (the same with 2^-64 and the long double's 2^-16446; its A is A
#   itself, so η_l = 0 is a case of the stated range): r = difference/unit in long double
#   = k_l·e + w_l, and its e is RN64(r).
# - e_high = RN(RN(e_d + 2^-20)·(1 + 2^-30)), e_low = RN(RN(e_d − 2^-20)·(1 − 2^-30)); e_low ≤ 0
#   when e_d ≤ 2^-20 (RN is monotone), and a double e_d above 2^-20 is at least 2^-20 + 2^-72.
# - abs_high = RN(RN(d + RN(2^-50·RN(RN(ρ_d·s) + d)))·(1 + 2^-50)).
# Proves: |k − 1| ≤ 1.2e-15 (1.36·2^-50), |w| ≤ 1.87e-9 (2^-29·1.0036), |k_l − 1| ≤ 2^-60, |w_l| ≤ 2^-39, and
# e_high, e_low and abs_high within 2^-51, 2^-51 and 2^-50 (relative) of their exact expressions.
# Justifies: the premises of coq/GateTolerance.v screen_enclosure (e_low ≤ judge_pair's e ≤ e_high,
# and a sure failure of the tolerance is one) and screen_abs_enclosure (judge_pair's abs ≤ abs_high).

@rnd = float<ieee_64, ne>;
@rnd80 = float<x86_80, ne>;

rho = sqrt(rho2);
unit = u * rho * s;
squares = rho2 * (1 + eps_sq);
rho_d = rnd(sqrt(rnd(squares)));
unit_d = rnd(rnd(u * rho_d) * s);
k = (1 + eps_sub) * (1 + eps_q) * (unit / unit_d);
w = k * (eta_r / u + eta_t / unit) + t_q;
squares_l = rho2 * (1 + eps_sq_l);
rho_l = rnd80(sqrt(rnd80(squares_l)));
unit_l = rnd80(rnd80(u * rho_l) * s);
k_l = (1 + eps_sub_l) * (1 + eps_q_l) * (unit / unit_l);
w_l = k_l * (eta_r_l / u + eta_t_l / unit) + t_q_l;
a1 = rnd(e_d + 1b-20);
e_high = rnd(a1 * (1 + 1b-30));
b1 = rnd(e_d - 1b-20);
e_low = rnd(b1 * (1 - 1b-30));
e_high_exact = (e_d + 1b-20) * (1 + 1b-30);
e_low_exact = (e_d - 1b-20) * (1 - 1b-30);
abs_high = rnd(rnd(d + rnd(1b-50 * rnd(rnd(rho_d * s) + d))) * (1 + 1b-50));
abs_high_exact = (d + 1b-50 * (rho * s + d)) * (1 + 1b-50);

{ e_d in [0, 1b1024] /\ d in [0, 1b1024] /\ rho2 in [1b-254, 1b256] /\ u in [1b-24, 1b-8] /\ s in [1, 1b256]
  /\ eps_sq in [-1b-52, 1b-52] /\ eps_sq_l in [-1b-63, 1b-63]
  /\ eps_sub in [-1b-53, 1b-53] /\ eps_q in [-1b-53, 1b-53]
  /\ eta_r in [-1b-53, 1b-53] /\ eta_t in [-1b-1075, 1b-1075] /\ t_q in [-1b-1075, 1b-1075]
  /\ eps_sub_l in [-1b-64, 1b-64] /\ eps_q_l in [-1b-64, 1b-64]
  /\ eta_r_l in [-1b-64, 1b-64] /\ eta_t_l in [-1b-16446, 1b-16446] /\ t_q_l in [-1b-16446, 1b-16446]
  -> unit_d -/ unit in [-1b-50, 1b-50]
  /\ k - 1 in [-1.2e-15, 1.2e-15]
  /\ w in [-1.87e-9, 1.87e-9]
  /\ unit_l -/ unit in [-1b-61, 1b-61]
  /\ k_l - 1 in [-1b-60, 1b-60]
  /\ w_l in [-1b-39, 1b-39]
  /\ e_high -/ e_high_exact in [-1b-51, 1b-51]
  /\ abs_high -/ abs_high_exact in [-1b-50, 1b-50]
  /\ (e_d in [4503599627370497b-72, 1b1024] -> e_low -/ e_low_exact in [-1b-51, 1b-51]) }

# squares relative to rho2 (Gappa does not see it through the product alone)
(squares - rho2) / rho2 -> eps_sq { rho2 <> 0 };
(squares_l - rho2) / rho2 -> eps_sq_l { rho2 <> 0 };
# unit/unit_d through the relative error of unit_d (both are positive: ρ ≥ 2^-127, u, s > 0)
unit / unit_d -> 1 / ((unit_d - unit) / unit + 1) { unit <> 0, unit_d <> 0 };
unit / unit_l -> 1 / ((unit_l - unit) / unit + 1) { unit <> 0, unit_l <> 0 };
