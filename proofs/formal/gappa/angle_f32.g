# angle_f32.g — the phase → angle → double cos/sin chain of the f32/f16/bf16 kernels.
#
# Models (the kernels of optimized/): step_j = frac(θ_j/(2π)) held as a 0.64 fixed-point
# number with |error| ≤ 2 units of 2^-64; phase = p·step mod 2^64 (exact integer arithmetic);
# for p < 2^31 the computed phase is within delta, |delta| ≤ 2^31·2·2^-64 = 2^-32 turn, of the
# exact p·θ_j/(2π) mod 1. The phase is split exactly into a quarter-turn index and
# f ∈ [−1/8, 1/8] turn; then, in double:
#     fd = (double) f                    one rounding (int64·2^-64 → binary64)
#     twopi_d = 2π as a double literal   one rounding
#     r  = fd * twopi_d                  one rounding
#     cd = cos(r) or sin(r) from the library, relative error ≤ 2^-50 (hypothesis eps: SLEEF's
#          Sleef_sincos_u10 is documented at 1.0 ulp = 2^-52 relative, well inside 2^-50)
# The exact angle (modulo the exact quarter turns) is R = 2π·(f + delta).
# Cr stands for cos(r) (or sin(r)) and CR for cos(R) (or sin(R)); Gappa has no cos, so the mean
# value theorem |cos r − cos R| ≤ |r − R| (|cos'|, |sin'| ≤ 1) enters as the hypothesis of the
# second goal, with the bound the first goal proves.
# Justifies: eta32 in coq/ErrorBound.v (cos_sin_hypotheses), i.e. the angle/cos/sin part of the
# kernel's f32, f16 and bf16 tolerance constants in optimized/error_bounds.h.

@rnd = float<ieee_64, ne>;
twopi_d = rnd(twopi);
fd = rnd(f);
r = rnd(fd * twopi_d);
R = twopi * (f + delta);
cd = Cr * (1 + eps);

{ f in [-0.125, 0.125] /\ delta in [-1b-32, 1b-32]
  /\ twopi in [6.2831853071795864769, 6.2831853071795864770]
  /\ eps in [-1b-50, 1b-50] /\ Cr in [-1, 1]
  -> r - R in [-1.46292e-9, 1.46292e-9]
  /\ (Cr - CR in [-1.46292e-9, 1.46292e-9] -> cd - CR in [-1.46293e-9, 1.46293e-9]) }

# r − R = rounding of the product + error of fd·twopi_d − angle error of the phase
r - R -> (r - fd * twopi_d) + (fd * twopi_d - f * twopi) - twopi * delta;
# cd − cos R = (cos r − cos R) + cos r·eps
cd - CR -> (Cr - CR) + Cr * eps;
