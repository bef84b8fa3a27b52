# fused_once_e5m2.g — as fused_once_e4m3.g for E5M2 (RN∞ as in fp8_e5m2.g):
#   |RN8(fl32(T)) − T| ≤ 0.1250001·|T|  for 2^-14 ≤ T ≤ 57344  (r = (1 + 2^-3)(1 + 2^-24) − 1).

@rnd32 = float<ieee_32, ne>;
@rnd5 = float<3, -16, ne>;
t = rnd32(T);
q = rnd5(t);

{ T in [1b-14, 57344] -> (q - T) / T in [-0.1250001, 0.1250001] }

(q - T) / T -> (q - t) / t + (t - T) / T + ((q - t) / t) * ((t - T) / T);
