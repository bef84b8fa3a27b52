// Error bounds of ropecheck's kernels (scalar, avx2, avx512, avx512bf16, cuda: they compute the same bits),
// in the metric of judge/pair_rule.h:
//     e = max(|a − A|, |b − B|) / (u · ρ · S),   u = 2^-p of the data dtype, ρ = |(x, y)|,
//     S = max(1, |attention factor|).
// Valid for every spec whose frequencies θ'_j are ≤ 2^16 (the kernels refuse others, plan.h), every
// position |p| < 2^40 (every position component), every base, outputs in the normal range of the
// dtype. Tests and `ropecheck sweep` use these constants as tolerances;
// optimized/README.md repeats the derivation. Notation: ε = 2^-53 (binary64 unit roundoff),
// RN = round to nearest even, |RN(v) − v| ≤ u_format·|v|.
//
// ON THE FLY (angle-inl.h, the same per-lane code in every kernel), per token t and pair j.
// Two angle paths: PRECISE for f64 data, FAST for f32/f16/bf16 data (PlanView::precise_angles).
//  Steps 1–3 (1–3′) give the cos/sin error δ. Both values are MACHINE-CHECKED by Gappa on the code
//  as written (proofs/formal/gappa/angle_precise.g, angle_fast.g: every rounding, the fused
//  operations, the fixed-point reduction), with the Taylor remainders, π and the Lipschitz facts
//  proven in Coq (proofs/formal/coq/CosSinTaylor.v). Premises that remain assumptions: plan.cpp's
//  128-bit arithmetic (step 1) and the exact integer identities of phase_of / reduce_*, read from
//  the code. The first hand budget of steps 2′–3 (kept out of here) was wrong term by term, though
//  both constants held; the figures below are Gappa's.
//  1. Phase, exact integer arithmetic: step_j = RN_{2^-128}(frac(θ'_j / 2π)) turns, θ'_j from
//     spec/schedule.h in 128-bit binary floating point (relative error ≤ 2^-120 assumed: ~10
//     operations of ≤ 2 ulps each). phase = p·step_j mod 2^128 is exact, so the angle error is
//     |p|·(2π·2^-128 + θ'_j·2^-120) ≤ 2^-64 rad for |p| < 2^40 and θ'_j ≤ 2^16 — the range the
//     proofs cover; plan.cpp makes the kernels refuse a spec with a larger θ'_j
//     (ROPECHECK_ERROR_UNSUPPORTED; only scaling factors far below 1 reach it). For a run of
//     consecutive positions the fast path adds step_j to the previous phase instead
//     (kernel-inl.h token_phases): the same 128-bit value, checked against a 128-bit product by
//     tests/optimized/angle_test.cpp PhaseByAddition, so no error term changes.
//  2. PRECISE: the remainder after the nearest quarter turn, truncated to 2^-65 turn, becomes a
//     double-double r_hi + r_lo (|R − r_hi| ≤ 1.33e-16 = 1.2ε, carried by r_lo).
//  3. PRECISE: Taylor polynomials (degree 17/18, truncation < 2^-63 on |r| ≤ 0.8) in binary64 with
//     fused operations and the first-order r_lo corrections: |ĉ − cos R| ≤ 1.25ε (tight: Gappa
//     reaches ≈ 1.244ε; a term-by-term sum gives 1.27ε), |ŝ − sin R| ≤ 0.8125ε.
//     δ = 1.25ε (kPreciseCosSinError).
//  2′. FAST: the high 64 bits of the phase; the remainder after the quarter turn rounded to units of
//     2^-54 turn (V = (U + 2^9) >> 10), converted exactly (integer trick, angle-inl.h), r = RN(d·K)
//     with K = RN(2π)·2^-54: |R − r| ≤ 2.355ε (the unit rounding 1.5708ε, RN(d·K) half an ulp
//     below 1, K's own error ≤ 0.28ε).
//  3′. FAST: the same polynomials without r_lo; with cos, sin 1-Lipschitz:
//     |ĉ − cos R| ≤ 3.55ε, |ŝ − sin R| ≤ 3.19ε: both ≤ δ = 4.25ε (kFastCosSinError).
//  Both paths: quadrant swap/negation and the inverse direction's negation are exact (sign-bit
//     flips). With A ≠ 1: c = RN(A·ĉ): |c − A·cos α| ≤ |A|(δ + ε(1 + δ)) ≤ |A|(δ + 1.0001ε).
//     Euclidean norm of the (cos, sin) error vector: κ ≤ √2·δ (A = 1), ≤ √2·(δ + 1.0001ε)·|A|:
//        precise: κ ≤ 1.77ε (A = 1), 3.19ε·|A| (A ≠ 1);  fast: κ ≤ 6.02ε (A = 1), 7.43ε·|A|.
//  Steps 4–6 are Coq theorems (proofs/formal/coq/ErrorBound.v: f64_rotation_bound, f32/f16/
//  bf16_kernel_bound, the *_scaled_* ones for A ≠ 1, and f16/bf16_binary32_kernel_bound) from the
//  Gappa rounding facts.
//  4. Rotation in binary64 (f64 and f32 data; 16-bit data in cache mode and bf16 with |A| > 1): a = RN(x·c − RN(y·s)) (one FMA after one product), likewise b:
//     |a − A(x cos α − y sin α)| ≤ ρκ (Cauchy–Schwarz) + ε|y s| + ε|a| ≤ (κ/ε + 2 + 2^-50)·ε·ρS.
//     For f64 data (precise path) this is the result:
//        e_f64 ≤ 1.77 + 2 + 0.01 = 3.78 → kOnTheFlyF64 = 4        (A = 1)
//        e_f64 ≤ 3.19 + 2 + 0.01 = 5.20 → kOnTheFlyF64Scaled = 5.5 (A ≠ 1)
//     For f32/f16/bf16 data (fast path) the binary64 value w has |w − exact| ≤ D·ρS with
//        D ≤ (7.43 + 2 + 0.01)ε = 9.44ε < 2^-49.7.
//  5. f32 data: one rounding of w to binary32 (|RN32(w) − w| ≤ u|w|, |w| ≤ ρS(1 + D)):
//        e_f32 ≤ 1 + D(1 + u)/u = 1 + 9.44·2^-29·(1 + 2^-24) < 1 + 2^-25.7  → kOnTheFlyF32 = 1 + 2^-20.
//     A correctly rounded result has e ≤ 1 (half an ulp of A is ≤ u·|A| ≤ u·ρ·S), so the f32 kernel
//     is within a hair of correct rounding at every position; the decided float32 recipe
//     RN(fma(x, c, −RN(y·s))) with c, s rounded to binary32 reaches e = 2.38 in random testing
//     (its bound, proven in Coq: 2.54), which is why f32 data is rotated in binary64.
//     f16/bf16 data rotated in binary64 (cache mode, and bf16 with |A| > 1): w → binary32 by
//     round-to-odd → binary16/bfloat16, which is one correct rounding RN_16(w) (convert-inl.h
//     round_to_odd32), so e ≤ 1 + D(1 + u)/u; the bound written for two roundings (a binary32 RN
//     first) is larger and still holds:
//        e ≤ 1 + (2^-24/u)(1 + u) + D(1 + u)/u:
//          f16 (u = 2^-11):  < 1 + 2^-13 + 2^-13·2^-11 + 9.44·2^-42 < 1 + 2^-12.9 → kBinary64RotationF16 = 1 + 2^-12
//          bf16 (u = 2^-8):  < 1 + 2^-16 + 2^-16·2^-8 + 9.44·2^-45 < 1 + 2^-15.9 → kBinary64RotationBF16 = 1 + 2^-15
//  6. 16-BIT DATA ON THE FLY (PlanView::rotate_binary32: f16, and bf16 with |A| ≤ 1; kernel-inl.h
//     process_binary32). A binary32 rotation is far more accurate than a 16-bit output needs, so:
//     the table entries c = RN32(c64), s = RN32(s64) once per token (c64 = ĉ for A = 1, RN(A·ĉ)
//     otherwise, as above), then in binary32  a = RN32(fma(x, c, −RN32(y·s))), b likewise, then
//     one rounding to binary16/bfloat16. With u32 = 2^-24, μ32 = 2^-150 (half the binary32
//     subnormal spacing), |RN32(v) − v| ≤ u32|v| + μ32:
//     entry: |c − A cos α| ≤ u32|A cos α| + (1 + u32)|A|(δ + ε(1 + δ)) + μ32 (+ μ64), likewise s
//            (for A = 1 Gappa proves the tighter u32|cos α| + (1 + u32)δ on the code as written:
//            proofs/formal/gappa/table_binary32.g);
//     rotation: |a32 − exact| ≤ (1 + u32)²u32·(|exact| + |y s| + |x||c| + |y||s|) + ... ≤ 3.0001·u32·ρS
//            + 2^-149·ρ + 3μ32 (each of the three sums ≤ |A|ρ by Cauchy–Schwarz; Coq
//            binary32_rotation_bound);
//     narrowing (u the 16-bit unit): e ≤ 1 + (1 + u)·|a32 − exact|/(u·ρS):
//          f16 (ρ ≥ 2^-14, any A):      e ≤ 1 + 3.0002·2^-13·(1 + 2^-11) < 1 + 2^-11.4  → kOnTheFlyF16 = 1 + 2^-11
//          bf16 (ρ ≥ 2^-126, |A| ≤ 1): the μ32 terms reach 3·2^-24·ρ at ρ = 2^-126 (binary32 and
//            bfloat16 share the exponent range), so e ≤ 1 + 6.0002·2^-16·(1 + 2^-8) < 1 + 2^-13.4
//            (1 + 2^-14.4 for ρ ≥ 2^-120)                                            → kOnTheFlyBF16 = 1 + 2^-13
//     Coq f16_binary32_kernel_bound, bf16_binary32_kernel_bound (proofs/formal/coq/ErrorBound.v).
//     bf16 with |A| > 1 stays on the binary64 rotation (step 5): a product y·s with |s| ≈ |A| > 1
//     could overflow binary32 for |y| near bfloat16's largest value while the pair's result is
//     finite; its bound 1 + 2^-15 is within kOnTheFlyBF16. For |A| ≤ 1, |y·s| ≤ |y| cannot
//     overflow, and f16 values times A (|A| ≤ 65504: spec/spec.cpp validate refuses more) stay far below
//     binary32's range.
//  TABLE BY ANGLE ADDITION (kernel-inl.h next_table_by_rotation; the binary32 path only): for a
//  token at position p + 1 right after one at p, the binary64 table (c, s) of p is rotated by one
//  position, c' = RN(c·C1 − RN(s·S1)), s' = RN(s·C1 + RN(c·S1)), (C1, S1) the fast path's cos θ_j and
//  (inverse: −)sin θ_j at position 1 with A = 1, and c' is used only when RN32(c' − E) and
//  RN32(c' + E) are the same bits (E = (2^-44 + 2^-51)·M, M = max(1, |A|)). The table is then the
//  DIRECT table's bits, so none of the bounds above changes. Why: the exact values of both are
//  A·e^{iφ} with φ = 2π·(p·step mod 2^128)/2^128 (the recurrence multiplies by e^{i·2π·step/2^128},
//  the exact angle of one position; δ of steps 2′–3′ measured against this phase angle does not
//  grow with |p|: step 1's p-dependent term is the step's own rounding, which φ excludes). In ℂ, with z = c + is and w = C1 + iS1 and their computed
//  values z̃, w̃: |w̃ − w| ≤ √2·4.25ε (steps 1–3′, A = 1), |z̃_0 − z_0| ≤ √2·|A|(δ + ε(1 + δ)) ≤ 7.43ε·|A|
//  (a direct table, as above), and each rotation rounds each component twice, within
//  2ε·|z̃||w̃|(1 + ε), so |r| ≤ 2√2·ε·|z̃||w̃|(1 + ε); hence
//     |z̃_{k+1} − z_{k+1}| ≤ |z̃_k − z_k|·|w̃| + |A|·|w̃ − w| + |r| ≤ |z̃_k − z_k|(1 + 6.02ε) + 8.85ε·|A|(1 + 2^-40),
//  and after at most kRotationRun − 1 = 31 rotations (then a direct table again)
//     |c' − A cos φ|, |s' − A sin φ| ≤ |z̃ − z| ≤ (7.43 + 31·8.86)ε·|A| ≤ 282.1ε·|A|.
//  The direct binary64 entry c64 is within |A|(δ + ε(1 + δ)) ≤ 5.2501ε·|A| of A cos φ, so
//  |c' − c64| ≤ 287.4ε·|A| < 2^-44·M (= 512ε·M). RN(c' ± E) moves c' ± E by at most 2^-53·|c' ± E|
//  < 2^-51·M, so [c' − 2^-44·M, c' + 2^-44·M] ∋ c64 lies between the two computed bounds, and
//  RN32 is monotonic: equal bits at both ends give RN32(c64) = RN32(c'). (Binary64's subnormal
//  terms, ≤ 2^-1074 per rounding, are far inside the margin since M ≥ 1.) MACHINE-CHECKED in Coq
//  (proofs/formal/coq/AngleAddition.v: rotation_step — the error vector is rotated with the state,
//  |u·w| = |u|·|w|, so it does not grow by √2 per step —, rounding_term, direct_state_error,
//  step_error, rotation_run: ≤ (7.43 + 8.86k)ε·a for k ≤ 31, table_by_rotation_gap:
//  |c' − c64| ≤ 2^-44·max(1, a)), from the rounding facts and δ as premises, as for the kernels;
//  the monotonicity of RN32 and the exactness of the phase identity are read from the code.
//  tests/optimized/angle_test.cpp TableByRotation checks the tables bit for bit and the binary64
//  entries against 2^-44·M (worst measured: 70.5ε).
//  The tests compare with the exact result held in long double (relative error 2^-64, i.e. ≤ 2^-11
//  in e for f64 and far less for the other dtypes), covered by the margins above.
//
// ROUNDING TEST (Ziv's strategy; kernel-inl.h `settle64`, `decide32`, `settle_second32`,
// `settle_pairs`; on the fly, f32/f16/bf16 data). An output v (the binary64 w of step 4, or the
// binary32 a32 of step 6) with proven error |v − exact| ≤ B is kept when RN_T(lo) and RN_T(hi) are
// the same value of the data type T, where lo = RN(v − E) and hi = RN(v + E) are computed in v's
// format: RN is monotonic, so every value in [lo, hi] ∋ exact rounds to that value, which is then
// the correctly rounded result. That needs lo ≤ v − B and hi ≥ v + B, i.e. E − u_v(|v| + E) − μ_v ≥
// B (u_v, μ_v: v's unit roundoff and half its subnormal spacing); E itself is RN(fma(K, RN(|x| +
// |y|), F)) ≥ K·ρ·(1 − u_v)² + F − μ_v (|x| + |y| ≥ ρ).
// Per format (MACHINE-CHECKED by proofs/formal/gappa/rounding_test.g for S = 1, on
// the operations as written, with B up to the values in brackets):
//  binary64 (step 4: B = D·ρS, D ≤ 9.44ε, plus ε·ρS for A held in binary64 and 2^-11ε for step 1's
//    angle [11.45ε·ρS], |v| ≤ ρS(1 + D)): K = 13ε·S, F = 2^-1070 (kDecideBinary64);
//  f32 data, BY THE BITS (kernel-inl.h Decide64, settle64: tried first; a vector with an output it
//    does not keep takes the binary64 test above): w is kept, and stored as RN32(w), when
//        |w| > E' = RN(fma(K·2^37, RN(|x| + |y|), 2^-125))   and   q ≤ 2^29 − 2M − 2,
//    q = (bits(w) + 2^28 − M − 1) mod 2^29, M = 2^16, bits(w) the binary64 encoding as an integer
//    (its sign bit does not reach the low 29 bits). Why it proves RN32(X) = RN32(w) ((ii) is
//    MACHINE-CHECKED in Coq for every pattern, proofs/formal/coq/RoundingBits.v: bits_window, every
//    real within (M + 1)·ulp64(w) of w has w's one nearest binary32 value, both signs, every
//    e ≥ −126, binary32 overflow included; code_window, the masked q ≤ 2^29 − 2M − 2 is exactly
//    M + 1 ≤ d ≤ 2^29 − M − 1, and bits_low29, d is m's; bits_window_sharp, d = M fails; and with
//    MPFR at the patterns that decide it, tests/optimized/bits_window_test.cpp: d at its limits and
//    just outside, each binade's first and last patterns, the overflow threshold, random ones, and
//    ScalarOps::decided_by_bits32 takes exactly this condition; (iii) is by hand):
//    (i) E' ≥ Eb = RN(K·2^37·RN(|x| + |y|)) (the floor is ≥ 0, RN monotonic; K·2^37 is K scaled
//      exactly) and Eb·2^-37 ≥ B = |w − X| (MACHINE-CHECKED: rounding_test.g, Eb). With 2^e ≤ |w| <
//      2^(e+1): B < |w|·2^-37 < 2^(e−36) = M·ulp64(w), ulp64(w) = 2^(e−52); w is normal in binary64
//      and |w| > E' ≥ 2^-125·(1 − ε) puts w in binary32's normal range.
//    (ii) The binary32 rounding boundaries in w's binade (the midpoints of consecutive binary32
//      values; in binade 127 also the overflow threshold 2^128 − 2^103, FLT_MAX plus half its ulp)
//      are the values whose low 29 significand bits are 2^28, so d = (bits(w) + 2^28) mod 2^29
//      counts the ulp64(w) from the boundary below w to w, and q ≤ 2^29 − 2M − 2 ⇔ M + 1 ≤ d ≤
//      2^29 − M − 1: w is at least (M + 1)·ulp64(w) from the boundaries of its binade on both sides.
//      The nearest boundary outside the binade is at least half a binary32 ulp of the binade below,
//      2^(e−25) = 2^27·ulp64(w), away (or, below 2^-126, 2^-150 = 2^(e−24)); for e ≥ 128 (no f32
//      data reaches it: |x|, |y|, |A| ≤ 2^128) the only boundary is the overflow threshold,
//      2^e − 2^128 + 2^103 > 2^(e−36) below w. So no boundary lies within B of w: X is on w's side of each,
//      and RN32(X) = RN32(w).
//    (iii) NaN outputs come only from a NaN or infinite input, which makes E' NaN or +Inf: the
//      ordered compare fails (also where the SIMD kernels compare E' with min(|a|, |b|), which may
//      drop a NaN a); zeros and outputs at most E' (at least 2^-125·(1 − ε)) fail it: all of them take
//      the test above. Where both keep an output they store the same value (correct rounding is
//      unique). Share sent on: about 2(M + 1)/2^29 ≈ 2^-12 of outputs by the bits, plus those with
//      |w| ≤ E' ≈ 2^-12.3·(|x| + |y|)·S (bench/README.md "kernel_bench").
//  binary32 (step 6: B = 3.0001·u32·ρS + 2^-149·ρ + 3μ32 [3.0002·u32·ρS in the normal range; F
//    covers the μ32 terms], |v| ≤ ρS(1 + 2^-21)): K = 4.1·u32·S, F = 2^-146 (kDecideBinary32) —
//    the normwise form, which the kernels no longer use: they take the per-output form below;
//  K·S is rounded upward once per plan (plan.cpp), which only widens E;
//  binary64 with the binary64 table of the binary32 path (16-bit data's second path below: a
//    direct table, or one by angle addition, ≤ 282.1ε·|A| from A·e^{iφ}, TABLE BY ANGLE ADDITION):
//    B ≤ (282.1 + 2.01 + 1 + 2^-11)ε·ρS [286ε·ρS]; K = 300ε·S (kDecideTableByRotation), F as above;
//  binary32, PER OUTPUT (kernel-inl.h decide32, weight32; MACHINE-CHECKED: Coq
//    proofs/formal/coq/RoundingTest32.v decide32_sound, from the rounding facts of
//    gappa/rounding_f32.g and rounding_f64*.g, |RN(v) − v| ≤ u|v| + μ at every rounding, so results
//    in the subnormal range are covered, for every x, y and any A, no normalization): step 6 before
//    Cauchy–Schwarz, with P = |x||c|, Q = |y||s| (c, s the binary32 entries), N = |x| + |y|,
//    η = (1 + u32)(5.2501ε·|A| + μ64) + μ32 the entry's error beyond u32|A cos α| (ErrorBound.v
//    binary32_entry), so |c − A cos α| ≤ 1.0000001(u32|c| + η) in terms of the computed c; the
//    roundings of RN32(y·s) and of a32 (2u32 on P, 3u32 on Q) and the test's own rounding of
//    a32 ∓ E_a (u32|a32| + μ32) need
//        E_a(1 − u32) ≥ (u32(3 + 3u32 + u32²) + 1.0000001·u32)·(P + Q) + 1.0000001·η·N + 4μ32.
//    The kernels form E_a = RN32(fma(|x|, wc, RN32(fma(|y|, ws, F)))), sums of non-negative terms,
//    with the token's weights wc = RN32↑(RN(RN(K·|c|) + K_τ)) (kernel-inl.h weight32; RN32↑ is the
//    code's rounding up), K = 4.1·u32 (kDecideBinary32, no S: relative to the entry), K_τ = 2^-50·S
//    rounded up (kDecideTable32), F = 2^-146 (kDecideFloorBinary32). decide_component proves
//    lo = RN32(a32 − E_a) ≤ exact ≤ hi = RN32(a32 + E_a) for any constants with
//        (C1) u32(3 + 3u32 + u32²) + 1.0000001·u32 ≤ (1 − u32)³(1 − ε)²·K    (K ≥ 4.000001·u32),
//        (C2) 1.0000001·η ≤ (1 − u32)³((1 − ε)·K_τ − 2μ64)                (K_τ ≥ 5.2501ε·S),
//        (C3) 6μ32 ≤ (1 − u32)³·F                                          (F ≥ 2^-147.4),
//    and decide32_conditions checks them for the constants above; each fails, and the proof with
//    it, if K, K_τ or F is taken below its bound. So E_a covers B_a where the output is small
//    against N (the normwise E sent such outputs to the second path: 1.1·10^-2 of f16 outputs
//    against 4.2·10^-3 here, bench/README.md "kernel_bench"). The kernels decide it by cells
//    (THE CELL TEST below) and store RN_T(a32).
//  THE CELL TEST (decide32 through Ops32::undecided_cells; the run claim below is MACHINE-CHECKED
//    by exhaustion, tests/optimized/cell_exhaustive_test.cpp: all 2^32 binary32 patterns, RN_T by
//    convert-inl.h's conversions and by binary64 arithmetic, every tie a run's lower end, and the
//    claim failing in the run just below binary16's floor; (i) and (ii) are MACHINE-CHECKED in Coq,
//    proofs/formal/coq/RoundingBits.v decide32_strict, cell_margin and cell_ends):
//    instead of converting lo and hi to T, their cells are compared on binary32 bits
//    (convert-inl.h same_cell). With k the bits T drops (binary16: 13, bfloat16: 16), the bit
//    patterns of one sign split into half-open runs [c − 2^(k−1), c + 2^(k−1)) around the patterns c
//    of T's values (low k bits zero); the key (bits + 2^(k−1)) with its low k bits masked off names
//    the run and the sign. T's spacing is 2^k binary32 ulps in every binade where T is normal
//    (bfloat16: every binade of binary32, its subnormals included; binary16: magnitudes ≥ 2^-14),
//    and at a binade boundary 2^e the lower half of the run of 2^e spans 2^(k−1) ulps of the binade
//    below, half of T's spacing there. So a run is c's rounding cell under RN_T (ties to even) less
//    at most its lower end, a tie: every pattern of the run above its lower end rounds to c (the
//    runs past T's largest finite value to ±∞, as RN_T overflows). Binary16 is subnormal below
//    2^-14 (spacing 2^-24, coarser than 2^13 ulps of binary32 there), so pairs with |a| or |b| <
//    2^-14 − 2^-26 (the lower end of the run of 2^-14, which lies inside 2^-14's cell
//    [2^-14 − 2^-25, 2^-14 + 2^-25]) or NaN take the conversions' test above instead; for both
//    types a NaN output fails. An output passes the cell test when lo and hi have the same key.
//    Then a32 and the exact value x* both lie strictly between lo and hi, hence in one run (the
//    patterns of one sign are monotonic in the value) and above its lower end, so
//    RN_T(a32) = RN_T(x*):
//    (i) lo < x* < hi: decide32_sound proves lo ≤ x* ≤ hi, and its conditions hold with slack
//        (F = 2^-146 = 16μ32 where (C3) needs 6μ32), so the same proof with every μ32 raised to
//        1.5μ32 puts x* at least μ32/2 inside both ends (decide32_strict);
//    (ii) lo < a32 < hi: with |a32| ≤ (P + Q)(1 + 2.0001u32), E_a ≥ (1 − u32)²(4.1(1 − 2^-52)u32(P +
//        Q) + F) − 2μ32 ≥ 4.09u32|a32| + 13μ32 ≥ max(2u32|a32|, 2μ32) ≥ ulp32(a32) (cell_margin), so
//        a32 − E_a is at or below a32's predecessor in binary32, and so is lo = RN32(a32 − E_a) (RN is
//        monotonic and the predecessor is a binary32 value); hi likewise (cell_ends, for any nearest
//        binary32 value of a32 ∓ E_a; the two bounds on |a32| and E_a are read from the premises
//        above, not re-derived in Coq).
//    (An infinite a32 gives lo = hi = a32, which both forms of the test keep, as before: from finite
//    operands, a32 = ±∞ needs |x*| ≥ (2 − 2^-24)·2^127 − B_a, past T's overflow threshold; binary16
//    operands are far too small for it, and bfloat16 ones take this path only with |A| ≤ 1.)
//  16-bit T from binary64 (bf16 with |A| > 1, cache mode, the second path below) is rounded once:
//    RN_T(RO32(w)) = RN_T(w), binary32 by round-to-odd first (convert-inl.h round_to_odd32; RO is
//    monotonic, so the test's argument holds for RN_T∘RO32).
// The share of outputs failing the test is ≈ 2E/ulp_T(v) for random data (bench/README.md). Such
// outputs are recomputed: 16-bit data first by the binary64 rotation with the token's binary64 table
// (the bound and test above), then, like f32 data,
// exactly (optimized/exact.h: MPFR, its own bound and test, and the reference's rule for IEEE
// special values and exact zeros). Every output is then the correctly rounded one: e ≤ 1, and the
// reference's bits (correct rounding is unique).
//
// CACHE MODE (the caller's cos/sin): entries c ≈ A cos α, s ≈ A sin α correctly rounded to a format
// of unit u_c and smallest normal t_c, i.e. |c − A cos α| ≤ u_c·max(|A cos α|, t_c) (relative in the
// normal range, half the subnormal spacing below; proven by gappa/rounding_*.g for each format),
// likewise s; converted exactly to binary64 and rotated as in step 4, then rounded as in step 5.
//  κ = |x|·|c − A cos α| + |y|·|s − A sin α| ≤ u_c·ρ·√(A² + 2t_c²) ≤ u_c·(1 + t_c²)·ρS (Cauchy–Schwarz;
//     t_c² = 2^-28 for f16 caches, < 2^-250 for the others: a subnormal entry is off by up to u_c·t_c).
//  Step 4: |w − exact| ≤ D·ρS + 3·2^-1075, D = (1 + ε)²(2ε + u_c(1 + t_c²)) (+ 2^-19ε for the
//     subnormal terms, ρ ≥ 2^-1000).
//  f64 data: e ≤ D/ε = (1 + ε)²(1 + t_c²)·u_c/ε + 2(1 + ε)² + 2^-19.
//  f32 data: e ≤ 1 + (1 + u)·D/u; f16/bf16 data (via binary32): e ≤ 1 + (1 + u)(2^-24 + (1 + 2^-24)D)/u.
//  The cache term u_c/u is multiplied by (1 + u)(1 + 2^-24)(1 + ε)²(1 + t_c²) ≤ 1 + 2u + 2t_c² (the
//  final rounding acts on a result enlarged by the cache error), and the rest is ≤ 2.01 (f64) or
//  ≤ 1 + 2^-27.9, 1 + 2^-12.9, 1 + 2^-15.9 (f32, f16, bf16: within kOnTheFlyF32,
//  kBinary64RotationF16, kBinary64RotationBF16). Hence
//        e ≤ (u_c/u)·(1 + 2u + 2t_c²) + (2.01 for f64 data, the step-5 constant otherwise),
//  proven for all 16 (data, cache) pairs by f64/f32/f16/bf16_cache_bound in
//  proofs/formal/coq/ErrorBound.v (outputs in the normal range: ρ ≥ 2^-1000, 2^-126, 2^-14, 2^-126),
//  from the Gappa-proven rounding facts only. The proven value is below this formula by ≥ 9·10^-7
//  for every pair (e.g. (f16, f16): 2.000611 ≤ 2.001221; (f64, f16): 2^42·(1 + 2^-28) + 2.000002 ≤
//  2^42·(1 + 2^-27) + 2.01), which also covers the rounding of its evaluation in double. The first
//  estimate u_c/u + on_the_fly_bound left out the (1 + u) factor and the subnormal entries: by the
//  same proof it fails for 7 pairs ((f64, f16), and f32/f16/bf16 data with f16/bf16 caches).
#pragma once

#include "spec/spec.h"

namespace ropecheck::kernels {

// |computed − exact| of each of cos α and sin α (before the attention factor), steps 1–3 / 1–3'.
inline constexpr double kPreciseCosSinError = 1.25 * 0x1p-53;
inline constexpr double kFastCosSinError = 4.25 * 0x1p-53;

inline constexpr double kOnTheFlyF64 = 4.0;
inline constexpr double kOnTheFlyF64Scaled = 5.5;
inline constexpr double kOnTheFlyF32 = 1.0 + 0x1p-20;
// 16-bit data on the fly (step 6: binary32 rotation; bf16 with |A| > 1 has the binary64 one's
// 1 + 2^-15 of step 5, within it).
inline constexpr double kOnTheFlyF16 = 1.0 + 0x1p-11;
inline constexpr double kOnTheFlyBF16 = 1.0 + 0x1p-13;
// 16-bit data rotated in binary64 (step 5: cache mode, whose bound below adds the cache term).
inline constexpr double kBinary64RotationF16 = 1.0 + 0x1p-12;
inline constexpr double kBinary64RotationBF16 = 1.0 + 0x1p-15;
// The rounding test (ROUNDING TEST above): E = K·S·(|x| + |y|) + F per output.
inline constexpr double kDecideBinary64 = 13.0 * 0x1p-53;
inline constexpr double kDecideFloorBinary64 = 0x1p-1070;
inline constexpr double kDecideTableByRotation = 300.0 * 0x1p-53;
inline constexpr double kDecideBinary32 = 4.1 * 0x1p-24;
inline constexpr double kDecideTable32 = 0x1p-50;  // per output: E = |x|·wc + |y|·ws + F (decide32)
inline constexpr float kDecideFloorBinary32 = 0x1p-146f;
// Largest |position| for which the bounds above are derived.
inline constexpr long long kMaxBoundPosition = 1LL << 40;

// Correct rounding (ROUNDING TEST): half an ulp of the exact value is ≤ u·|exact| ≤ u·ρ·S.
inline constexpr double kCorrectlyRounded = 1.0;

// The on-the-fly bound for a dtype (f32, f16, bf16: correctly rounded); attention_is_one: the spec's attention factor is exactly 1.
constexpr double on_the_fly_bound(Dtype dtype, bool attention_is_one) {
  switch (dtype) {
    case Dtype::f64: return attention_is_one ? kOnTheFlyF64 : kOnTheFlyF64Scaled;
    case Dtype::f32:
    case Dtype::f16:
    case Dtype::bf16: return kCorrectlyRounded;
  }
  return kOnTheFlyF64Scaled;
}

// The cache-mode bound for data `dtype` and correctly rounded cache entries of `cache_dtype`
// (CACHE MODE above): (u_c/u)·(1 + 2u + 2t_c²) + the constant part.
constexpr double cache_mode_bound(Dtype dtype, Dtype cache_dtype) {
  const int p = significand_bits(dtype);
  const int p_cache = significand_bits(cache_dtype);
  double cache_term = 1.0;  // u_c / u = 2^(p − p_c)
  for (int i = p_cache; i < p; ++i) cache_term *= 2.0;
  for (int i = p; i < p_cache; ++i) cache_term *= 0.5;
  double u = 1.0;  // 2^-p
  for (int i = 0; i < p; ++i) u *= 0.5;
  // t_c² of the cache format's smallest normal t_c: 2^-28 (f16), 2^-252 (f32, bf16); for f64 it is
  // 2^-2044, below the double range and far below every pair's slack, so 0 here
  const double t_c_squared = cache_dtype == Dtype::f16 ? 0x1p-28 : cache_dtype == Dtype::f64 ? 0.0 : 0x1p-252;
  const double factor = 1.0 + 2.0 * u + 2.0 * t_c_squared;
  // f64 data: 2.01 ≥ 2(1 + ε)² + 2^-19 + u_c·ε, the binary64 rotation in units of ε; the other
  // dtypes' binary64-rotation constant (step 5) already holds the final rounding(s) and the rotation
  switch (dtype) {
    case Dtype::f64: return cache_term * factor + 2.01;
    case Dtype::f32: return cache_term * factor + kOnTheFlyF32;
    case Dtype::f16: return cache_term * factor + kBinary64RotationF16;
    case Dtype::bf16: return cache_term * factor + kBinary64RotationBF16;
  }
  return cache_term * factor + 2.01;
}

}  // namespace ropecheck::kernels
