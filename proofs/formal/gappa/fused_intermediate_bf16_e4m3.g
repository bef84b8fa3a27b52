# fused_intermediate_bf16_e4m3.g — the relative part r of the fused bound with an intermediate
# rounding (docs/fused-bounds.md §3; fused/README.md "The bounds the judge applies"): the value
# rounded to bfloat16 first, V = RNbf16(Y), then t = fl32(V/ŝ) and E4M3 (RN∞ as in fp8_e4m3.g).
#
# Proves, for Y and ŝ in wide ranges and the exact scaled value Y/ŝ in [2^-5, 448]:
#   |RN8(fl32(RNbf16(Y)/ŝ)) − Y/ŝ| ≤ 0.0666506·|Y/ŝ|   (r = (1 + 2^-4)(1 + 2^-24)(1 + 2^-8) − 1
#   = 0.0666505…; Gappa's best bound is 0.0666505: the second rounding does not absorb the first,
#   so a kernel rounding to bf16 first is held to this r, not to fused_once_e4m3.g's).

@rnd32 = float<ieee_32, ne>;
@rnd8 = float<4, -9, ne>;
@rndb = float<8, -133, ne>;
V = rndb(Y);
Vs = V / s;
t = rnd32(Vs);
q = rnd8(t);
T = Y / s;

{ Y in [1b-100, 1b100] /\ s in [1b-40, 1b40] /\ T in [1b-5, 448] -> (q - T) / T in [-0.0666506, 0.0666506] }

# The rounded value scaled: V/ŝ = (Y/ŝ)·(V/Y); then q/T = (q/t)·(t/Vs)·(V/Y).
Vs -> T * ((V - Y) / Y + 1);
(q - T) / T -> ((q - t) / t + 1) * ((t - Vs) / Vs + 1) * ((V - Y) / Y + 1) - 1;
