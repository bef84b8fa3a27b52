(* RoundingTest32.v — the per-output rounding test of the 16-bit kernels' binary32 rotation is sound
   (optimized/error_bounds.h "ROUNDING TEST", binary32 per output; optimized/kernel-inl.h decide32,
   weight32, token_weights). For one output component, in the form of ErrorBound.v
   (out = RN32(x·a + RN32(y·b)), exact x·A + y·B; the kernel's a32 is (a, b, A, B) = (c, −s, g·C, −g·S)
   since RN32 is odd, its b32 is (s, c, g·S, g·C)), the kernel computes
       p2  = RN32(y·b),  out = RN32(fma(x, a, p2))                       (step 6's rotation)
       wa  = RN32↑(RN64(RN64(K·|a|) + Kt)),  wb likewise from |b|         (weight32: RN32↑ is the code's
                                                                            rounding up, wa ≥ its argument)
       E   = RN32(fma(|x|, wa, RN32(fma(|y|, wb, F))))                    (decide32: E_a; E_b has wa, wb
                                                                            swapped, i.e. the same form for b32)
       lo  = RN32(out − E),  hi = RN32(out + E)
   and keeps RN_T(lo) when it equals RN_T(hi). Proven here: lo ≤ exact ≤ hi, for every x, y (no
   range, no normalization: each rounding's error is u·|argument| + m, which covers results in the
   subnormal range), so RN_T being monotonic, RN_T(lo) = RN_T(hi) is the correctly rounded value.

   - decide_component: the statement for any formats and any constants: unit roundoffs u (binary32)
     and e (binary64), subnormal terms m and m64, an entry error |a − A| ≤ ua·|a| + eta relative to
     the computed entry, and the test's constants K, Kt, F under the three conditions
        (C1) u(3 + 3u + u²) + ua ≤ (1 − u)³(1 − e)²·K        (the relative terms |x||a|, |y||b|:
             the rotation's 2u resp. 3u, the entry's ua, the rounding of lo, hi: u|out|)
        (C2) eta ≤ (1 − u)³((1 − e)·Kt − 2·m64)               (the table's error on |x| + |y|)
        (C3) 6m ≤ (1 − u)³·F                                   (the subnormal terms of the six roundings)
     — a changed formula for E changes these conditions, not the argument.
   - decide32_entry: the binary32 table entry (ErrorBound.v binary32_entry: |c − g·C| ≤ u32·|g·C| + η)
     in terms of the computed entry: ua = 1.0000001·u32, eta = 1.0000001·η.
   - decide32_sound: the kernels' instance: u32 = 2^-24, mu32 = 2^-150, eps64 = 2^-53, mu64 = 2^-1075,
     K ≥ 4.0999·2^-24 (kDecideBinary32 = RN64(4.1)·2^-24), Kt ≥ 2^-50·max(1, |g|) (kDecideTable32·S,
     rounded up by plan.cpp), F = 2^-146 (kDecideFloorBinary32), the entries from the FAST path's
     cos/sin (delta64_fast, gappa/angle_fast.g) rounded to binary64 times g and to binary32, any
     attention factor g. The rounding facts are those of gappa/rounding_f32.g and rounding_f64*.g
     (|RN(v) − v| ≤ u·|v| + m); no overflow (as there). *)

From Coq Require Import Reals Lra.
From RopeCheck Require Import ErrorBound.
Open Scope R_scope.

(* ErrorBound.v's sign_lra without its sum rule: 1 − u is a sum with a negative part. *)
Ltac nonneg_lra := repeat first [ apply Rmult_le_pos | apply Rabs_pos ]; lra.

(* A rounding of a non-negative value v: the result is at least (1 − u)·v − m. *)
Lemma round_lower : forall u m v r, 0 <= v -> Rabs (r - v) <= u * Rabs v + m -> (1 - u) * v - m <= r.
Proof.
  intros u m v r Hv H. rewrite (Rabs_pos_eq v Hv) in H.
  pose proof (Rle_abs (v - r)). rewrite Rabs_minus_sym in H. lra.
Qed.

Lemma nonneg_of_scaled : forall c v, 0 < c -> 0 <= c * v -> 0 <= v.
Proof. intros c v Hc H. apply (Rmult_le_reg_l c); [exact Hc |]. rewrite Rmult_0_r. exact H. Qed.

(* The token's weight: w ≥ (1 − e)²·K·|a| + (1 − e)·Kt − 2·m64 (two binary64 roundings, then up). *)
Lemma weight_lower : forall e m64 K Kt a k w64 w,
  0 <= e <= / 1000 -> 0 <= m64 -> 0 <= K -> 2 * m64 <= (1 - e) * Kt ->
  Rabs (k - K * Rabs a) <= e * (K * Rabs a) + m64 ->
  Rabs (w64 - (k + Kt)) <= e * Rabs (k + Kt) + m64 -> w64 <= w ->
  (1 - e) * (1 - e) * (K * Rabs a) + (1 - e) * Kt - 2 * m64 <= w.
Proof.
  intros e m64 K Kt a k w64 w He Hm HK HKt Hk Hw Hup.
  assert (P : 0 <= K * Rabs a) by nonneg_lra.
  assert (Hk' : (1 - e) * (K * Rabs a) - m64 <= k).
  { apply (round_lower e m64 (K * Rabs a) k P). rewrite (Rabs_pos_eq (K * Rabs a) P). exact Hk. }
  assert (Hv : 0 <= k + Kt).
  { assert (0 <= (1 - e) * (K * Rabs a)) by nonneg_lra.
    assert (0 <= Kt) by (apply (nonneg_of_scaled (1 - e)); lra).
    assert (0 <= e * Kt) by (apply Rmult_le_pos; lra). lra. }
  pose proof (round_lower e m64 (k + Kt) w64 Hv Hw) as Hw'.
  assert (M : (1 - e) * ((1 - e) * (K * Rabs a) - m64 + Kt) <= (1 - e) * (k + Kt))
    by (apply Rmult_le_compat_l; lra).
  assert (0 <= e * m64) by nonneg_lra.
  nra.
Qed.

Theorem decide_component : forall u m e m64 ua K Kt F eta x y a b A B p2 out ka wa64 wa kb wb64 wb ein E lo hi,
  0 <= u <= / 1000 -> 0 <= m -> 0 <= e <= / 1000 -> 0 <= m64 -> 0 <= ua -> 0 <= K -> 0 <= eta ->
  Rabs (a - A) <= ua * Rabs a + eta -> Rabs (b - B) <= ua * Rabs b + eta ->
  Rabs (p2 - y * b) <= u * Rabs (y * b) + m ->
  Rabs (out - (x * a + p2)) <= u * Rabs (x * a + p2) + m ->
  Rabs (ka - K * Rabs a) <= e * (K * Rabs a) + m64 ->
  Rabs (wa64 - (ka + Kt)) <= e * Rabs (ka + Kt) + m64 -> wa64 <= wa ->
  Rabs (kb - K * Rabs b) <= e * (K * Rabs b) + m64 ->
  Rabs (wb64 - (kb + Kt)) <= e * Rabs (kb + Kt) + m64 -> wb64 <= wb ->
  Rabs (ein - (Rabs y * wb + F)) <= u * Rabs (Rabs y * wb + F) + m ->
  Rabs (E - (Rabs x * wa + ein)) <= u * Rabs (Rabs x * wa + ein) + m ->
  Rabs (lo - (out - E)) <= u * Rabs (out - E) + m ->
  Rabs (hi - (out + E)) <= u * Rabs (out + E) + m ->
  u * (3 + 3 * u + u * u) + ua <= (1 - u) ^ 3 * ((1 - e) ^ 2 * K) ->
  eta <= (1 - u) ^ 3 * ((1 - e) * Kt - 2 * m64) ->
  6 * m <= (1 - u) ^ 3 * F ->
  lo <= x * A + y * B <= hi.
Proof.
  intros u m e m64 ua K Kt F eta x y a b A B p2 out ka wa64 wa kb wb64 wb ein E lo hi
         Hu Hm He Hm64 Hua HK Heta Ha Hb Hp2 Hout Hka Hwa64 Hwa Hkb Hwb64 Hwb Hein HE Hlo Hhi C1 C2 C3.
  set (G := (1 - u) ^ 3) in *.
  assert (HGp : 0 < G) by (unfold G; apply pow_lt; lra).
  assert (HG0 : 0 <= G) by lra.
  assert (HG1 : G <= 1) by (unfold G; rewrite <- (pow1 3); apply pow_incr; lra).
  assert (HKt : 2 * m64 <= (1 - e) * Kt)
    by (assert (0 <= (1 - e) * Kt - 2 * m64) by (apply (nonneg_of_scaled G); lra); lra).
  assert (HF0 : 0 <= F) by (apply (nonneg_of_scaled G); lra).
  assert (HF : 2 * m <= F)
    by (assert (G * F <= 1 * F) by (apply Rmult_le_compat_r; lra); lra).
  set (Pa := Rabs x * Rabs a). set (Pb := Rabs y * Rabs b). set (N := Rabs x + Rabs y).
  assert (HPa : 0 <= Pa) by (unfold Pa; nonneg_lra). assert (HPb : 0 <= Pb) by (unfold Pb; nonneg_lra).
  (* the weights and E from below *)
  pose proof (weight_lower e m64 K Kt a ka wa64 wa He Hm64 HK HKt Hka Hwa64 Hwa) as Wa.
  pose proof (weight_lower e m64 K Kt b kb wb64 wb He Hm64 HK HKt Hkb Hwb64 Hwb) as Wb.
  set (La := (1 - e) * (1 - e) * (K * Rabs a) + (1 - e) * Kt - 2 * m64) in *.
  set (Lb := (1 - e) * (1 - e) * (K * Rabs b) + (1 - e) * Kt - 2 * m64) in *.
  assert (HLa : 0 <= La) by (unfold La; assert (0 <= (1 - e) * (1 - e) * (K * Rabs a)) by nonneg_lra; lra).
  assert (HLb : 0 <= Lb) by (unfold Lb; assert (0 <= (1 - e) * (1 - e) * (K * Rabs b)) by nonneg_lra; lra).
  assert (Xa : Rabs x * La <= Rabs x * wa) by (apply Rmult_le_compat_l; [apply Rabs_pos | exact Wa]).
  assert (Yb : Rabs y * Lb <= Rabs y * wb) by (apply Rmult_le_compat_l; [apply Rabs_pos | exact Wb]).
  assert (Xa0 : 0 <= Rabs x * wa) by (assert (0 <= Rabs x * La) by nonneg_lra; lra).
  assert (Yb0 : 0 <= Rabs y * wb) by (assert (0 <= Rabs y * Lb) by nonneg_lra; lra).
  pose proof (round_lower u m (Rabs y * wb + F) ein ltac:(lra) Hein) as Ein.
  assert (Ein0 : 0 <= ein).
  { assert ((1 - / 1000) * (Rabs y * wb + F) <= (1 - u) * (Rabs y * wb + F)) by (apply Rmult_le_compat_r; lra).
    lra. }
  pose proof (round_lower u m (Rabs x * wa + ein) E ltac:(lra) HE) as E1.
  set (W := Rabs x * wa + Rabs y * wb + F).
  assert (E2 : (1 - u) * ((1 - u) * W - m) - m <= E).
  { assert (M : (1 - u) * ((1 - u) * W - m) <= (1 - u) * (Rabs x * wa + ein)).
    { apply Rmult_le_compat_l; [lra |]. unfold W. assert (0 <= u * (Rabs x * wa)) by nonneg_lra. lra. }
    lra. }
  assert (E3 : G * W - 2 * m <= (1 - u) * E).
  { assert (M : (1 - u) * ((1 - u) * ((1 - u) * W - m) - m) <= (1 - u) * E) by (apply Rmult_le_compat_l; lra).
    assert (u * u * m <= 3 * u * m) by (apply Rmult_le_compat_r; [lra | apply Rmult_le_compat_r; lra]).
    unfold G. simpl. lra. }
  assert (HE0 : 0 <= E).
  { assert (0 <= G * W - 2 * m).
    { assert (F <= W) by (unfold W; lra). assert (G * F <= G * W) by (apply Rmult_le_compat_l; lra). lra. }
    assert (0 <= (1 - u) * E) by lra. apply (nonneg_of_scaled (1 - u)); lra. }
  (* W from below, in Pa, Pb, N *)
  assert (W1 : (1 - e) ^ 2 * K * (Pa + Pb) + ((1 - e) * Kt - 2 * m64) * N + F <= W).
  { unfold W, Pa, Pb, N. unfold La, Lb in Xa, Yb. simpl. lra. }
  assert (W2 : G * ((1 - e) ^ 2 * K * (Pa + Pb) + ((1 - e) * Kt - 2 * m64) * N + F) <= G * W)
    by (apply Rmult_le_compat_l; assumption).
  (* the error side *)
  set (c1 := u * (3 + 3 * u + u * u) + ua).
  assert (C1a : c1 * (Pa + Pb) <= G * ((1 - e) ^ 2 * K) * (Pa + Pb)) by (apply Rmult_le_compat_r; [lra | unfold c1; exact C1]).
  assert (HN : 0 <= N) by (unfold N; pose proof (Rabs_pos x); pose proof (Rabs_pos y); lra).
  assert (C2a : eta * N <= G * ((1 - e) * Kt - 2 * m64) * N) by (apply Rmult_le_compat_r; assumption).
  assert (Lhs : c1 * (Pa + Pb) + eta * N + 6 * m <= G * W + 0)
    by (assert (G * ((1 - e) ^ 2 * K * (Pa + Pb) + ((1 - e) * Kt - 2 * m64) * N + F)
                = G * ((1 - e) ^ 2 * K) * (Pa + Pb) + G * ((1 - e) * Kt - 2 * m64) * N + G * F) by ring; lra).
  (* |x·a + p2|, |out|, |out − exact| *)
  assert (Hyb : Rabs (y * b) = Pb) by (unfold Pb; apply Rabs_mult).
  assert (Hxa : Rabs (x * a) = Pa) by (unfold Pa; apply Rabs_mult).
  rewrite Hyb in Hp2.
  assert (Hp2abs : Rabs p2 <= (1 + u) * Pb + m).
  { replace p2 with (y * b + (p2 - y * b)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
  set (S1 := Pa + (1 + u) * Pb + m).
  assert (Hsum : Rabs (x * a + p2) <= S1) by (unfold S1; eapply Rle_trans; [apply Rabs_triang | rewrite Hxa; lra]).
  assert (Hout1 : Rabs (out - (x * a + p2)) <= u * S1 + m).
  { eapply Rle_trans; [exact Hout |]. assert (u * Rabs (x * a + p2) <= u * S1) by (apply Rmult_le_compat_l; lra). lra. }
  assert (Houtabs : Rabs out <= (1 + u) * S1 + m).
  { replace out with ((x * a + p2) + (out - (x * a + p2))) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
  assert (Hxe : Rabs (x * (a - A)) <= ua * Pa + eta * Rabs x).
  { rewrite Rabs_mult. unfold Pa.
    assert (Rabs x * Rabs (a - A) <= Rabs x * (ua * Rabs a + eta)) by (apply Rmult_le_compat_l; [apply Rabs_pos | exact Ha]).
    lra. }
  assert (Hye : Rabs (y * (b - B)) <= ua * Pb + eta * Rabs y).
  { rewrite Rabs_mult. unfold Pb.
    assert (Rabs y * Rabs (b - B) <= Rabs y * (ua * Rabs b + eta)) by (apply Rmult_le_compat_l; [apply Rabs_pos | exact Hb]).
    lra. }
  set (X := x * A + y * B).
  assert (Herr : Rabs (out - X) <= u * S1 + m + (u * Pb + m) + (ua * Pa + eta * Rabs x) + (ua * Pb + eta * Rabs y)).
  { replace (out - X) with ((out - (x * a + p2)) + (p2 - y * b) + x * (a - A) + y * (b - B)) by (unfold X; ring).
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r, Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r, Rplus_le_compat_r, Rabs_triang |].
    lra. }
  (* the right-hand side: u·|out| + m + |out − exact| ≤ c1·(Pa + Pb) + eta·N + 4m *)
  assert (Uout : u * Rabs out <= u * ((1 + u) * S1 + m)) by (apply Rmult_le_compat_l; lra).
  assert (Rhs : u * ((1 + u) * S1 + m) + m + (u * S1 + m + (u * Pb + m) + (ua * Pa + eta * Rabs x) + (ua * Pb + eta * Rabs y))
                <= c1 * (Pa + Pb) + eta * N + 4 * m).
  { unfold S1, c1, N.
    assert (Q1 : u * (1 + u) * (1 + u) * Pb + u * (1 + u) * Pb + u * Pb = u * (3 + 3 * u + u * u) * Pb) by ring.
    assert (Q2 : u * (1 + u) * Pa + u * Pa <= u * (3 + 3 * u + u * u) * Pa).
    { assert (0 <= u * Pa) by nonneg_lra. assert (0 <= u * u * Pa) by nonneg_lra. assert (0 <= u * (u * u) * Pa) by nonneg_lra. lra. }
    assert (Q3 : u * (1 + u) * m + u * m + u * m <= m).
    { assert (u * u <= / 1000 * / 1000) by (apply Rmult_le_compat; lra).
      assert (u * u * m <= / 1000 * / 1000 * m) by (apply Rmult_le_compat_r; lra).
      assert (u * m <= / 1000 * m) by (apply Rmult_le_compat_r; lra). lra. }
    lra. }
  (* lo and hi *)
  assert (Hlo' : lo <= out - E + u * (Rabs out + E) + m).
  { assert (Rabs (out - E) <= Rabs out + E)
      by (unfold Rminus; eapply Rle_trans; [apply Rabs_triang |]; rewrite Rabs_Ropp, (Rabs_pos_eq E HE0); lra).
    assert (u * Rabs (out - E) <= u * (Rabs out + E)) by (apply Rmult_le_compat_l; lra).
    pose proof (Rle_abs (lo - (out - E))). lra. }
  assert (Hhi' : out + E - u * (Rabs out + E) - m <= hi).
  { assert (Rabs (out + E) <= Rabs out + E) by (eapply Rle_trans; [apply Rabs_triang |]; rewrite (Rabs_pos_eq E HE0); lra).
    assert (u * Rabs (out + E) <= u * (Rabs out + E)) by (apply Rmult_le_compat_l; lra).
    pose proof (Rle_abs (-(hi - (out + E)))). rewrite Rabs_Ropp in *. lra. }
  pose proof (Rle_abs (out - X)). pose proof (Rle_abs (-(out - X))). rewrite Rabs_Ropp in *.
  unfold X in *. split; lra.
Qed.

(* ---------- the kernels' instance ---------- *)

(* ErrorBound.v binary32_entry's η: |c − g·C| ≤ u32·|g·C| + entry_eta g. *)
Definition entry_eta (g : R) : R := (1 + u32) * (eps64 * (Rabs g * kk_fast) + mu64) + mu32.

(* The entry relative to the computed c (1/(1 − u32) ≤ 1.0000001). *)
Lemma decide32_entry : forall g ch c64 c E,
  Rabs E <= 1 -> Rabs (ch - E) <= delta64_fast ->
  Rabs (c64 - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (c - c64) <= u32 * Rabs c64 + mu32 ->
  Rabs (c - g * E) <= 10000001 / 10000000 * u32 * Rabs c + 10000001 / 10000000 * entry_eta g.
Proof.
  intros g ch c64 c E HE Hch H64 H32.
  pose proof (binary32_entry g ch c64 c E HE Hch H64 H32) as H. fold (entry_eta g) in H.
  assert (Hg : Rabs (g * E) <= Rabs c + Rabs (c - g * E)).
  { replace (g * E) with (c - (c - g * E)) at 1 by ring. unfold Rminus at 1. eapply Rle_trans; [apply Rabs_triang |].
    rewrite Rabs_Ropp. lra. }
  pose proof u32_pos as Hu.
  assert (M : u32 * Rabs (g * E) <= u32 * (Rabs c + Rabs (c - g * E))) by (apply Rmult_le_compat_l; lra).
  pose proof (Rabs_pos (c - g * E)). pose proof (Rabs_pos c).
  rewrite u32_value in *. lra.
Qed.

Lemma kk_fast_le : kk_fast <= 52501 / 10000.
Proof. unfold kk_fast, eps64. simpl. lra. Qed.

Lemma decide32_conditions : forall g K Kt,
  40999 / 10000 * u32 <= K -> / 2 ^ 50 * Rmax 1 (Rabs g) <= Kt ->
  u32 * (3 + 3 * u32 + u32 * u32) + 10000001 / 10000000 * u32 <= (1 - u32) ^ 3 * ((1 - eps64) ^ 2 * K) /\
  10000001 / 10000000 * entry_eta g <= (1 - u32) ^ 3 * ((1 - eps64) * Kt - 2 * mu64) /\
  6 * mu32 <= (1 - u32) ^ 3 * / 2 ^ 146.
Proof.
  intros g K Kt HK HKt.
  pose proof eps64_pos as He. pose proof eps64_small as He1. destruct mu64_small as [Hm0 Hm1].
  pose proof (Rmax_l 1 (Rabs g)) as M1. pose proof (Rmax_r 1 (Rabs g)) as M2.
  set (Mx := Rmax 1 (Rabs g)) in *.
  set (G := (1 - u32) ^ 3).
  assert (HG : 9999998 / 10000000 <= G <= 1) by (unfold G; rewrite u32_value; simpl; lra).
  assert (HE2 : 1 - 2 * eps64 <= (1 - eps64) ^ 2 <= 1) by (simpl; nra).
  split; [| split].
  - (* K: G·(1 − ε)²·K ≥ G·(1 − 2ε)·4.0999·u32 ≥ 4.0000002·u32 + 3u32² + u32³ *)
    assert (HK0 : 0 <= K) by (pose proof u32_pos; lra).
    assert (A1 : (1 - 2 * eps64) * K <= (1 - eps64) ^ 2 * K) by (apply Rmult_le_compat_r; lra).
    assert (A2 : (1 - 2 * eps64) * (40999 / 10000 * u32) <= (1 - 2 * eps64) * K) by (apply Rmult_le_compat_l; lra).
    assert (A3 : 9999998 / 10000000 * ((1 - eps64) ^ 2 * K) <= G * ((1 - eps64) ^ 2 * K))
      by (apply Rmult_le_compat_r; [apply Rmult_le_pos; [simpl; nra | lra] | lra]).
    assert (A4 : eps64 * u32 <= / 1000 * u32) by (apply Rmult_le_compat_r; [pose proof u32_pos; lra | lra]).
    rewrite u32_value in *. simpl. lra.
  - (* Kt: G·((1 − ε)·2^-50·Mx − 2μ64) ≥ 7.99·ε·Mx ≥ 1.0000001·((1 + u32)·(5.2501·ε·|g| + μ64) + μ32) *)
    unfold entry_eta. pose proof kk_fast_le as Hkk. pose proof (Rabs_pos g) as Pg.
    assert (Hkk0 : 0 <= kk_fast) by (unfold kk_fast; lra).
    assert (B1 : eps64 * (Rabs g * kk_fast) <= eps64 * (Mx * (52501 / 10000))).
    { apply Rmult_le_compat_l; [lra |]. apply Rmult_le_compat; lra. }
    assert (Heps : eps64 = / 2 ^ 53) by reflexivity.
    assert (B2 : (1 - eps64) * (/ 2 ^ 50 * Mx) <= (1 - eps64) * Kt) by (apply Rmult_le_compat_l; lra).
    assert (B3 : eps64 * (/ 2 ^ 50 * Mx) <= / 1000 * (/ 2 ^ 50 * Mx))
      by (apply Rmult_le_compat_r; [apply Rmult_le_pos; [simpl; lra | lra] | lra]).
    assert (B4 : 0 <= (1 - eps64) * Kt - 2 * mu64) by (simpl in *; lra).
    assert (B5 : 9999998 / 10000000 * ((1 - eps64) * Kt - 2 * mu64) <= G * ((1 - eps64) * Kt - 2 * mu64))
      by (apply Rmult_le_compat_r; lra).
    rewrite Heps in *. unfold mu32. rewrite u32_value. simpl in *. lra.
  - unfold mu32. rewrite u32_value in *. simpl in *. lra.
Qed.

(* The kernels' per-output test (optimized/kernel-inl.h decide32 with weight32's weights and
   PlanView's K = kDecideBinary32, Kt = kDecideTable32·S rounded up, F = kDecideFloorBinary32) for
   one output of step 6's binary32 rotation, any attention factor g: the ends lo, hi enclose the
   exact value. *)
Theorem decide32_sound : forall g x y ch sh c64 s64 c s C S p2 out K Kt ka wa64 wa kb wb64 wb ein E lo hi,
  C * C + S * S = 1 ->
  Rabs (ch - C) <= delta64_fast -> Rabs (sh - S) <= delta64_fast ->
  Rabs (c64 - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (s64 - g * sh) <= eps64 * Rabs (g * sh) + mu64 ->
  Rabs (c - c64) <= u32 * Rabs c64 + mu32 ->
  Rabs (s - s64) <= u32 * Rabs s64 + mu32 ->
  Rabs (p2 - y * s) <= u32 * Rabs (y * s) + mu32 ->
  Rabs (out - (x * c + p2)) <= u32 * Rabs (x * c + p2) + mu32 ->
  40999 / 10000 * u32 <= K -> / 2 ^ 50 * Rmax 1 (Rabs g) <= Kt ->
  Rabs (ka - K * Rabs c) <= eps64 * (K * Rabs c) + mu64 ->
  Rabs (wa64 - (ka + Kt)) <= eps64 * Rabs (ka + Kt) + mu64 -> wa64 <= wa ->
  Rabs (kb - K * Rabs s) <= eps64 * (K * Rabs s) + mu64 ->
  Rabs (wb64 - (kb + Kt)) <= eps64 * Rabs (kb + Kt) + mu64 -> wb64 <= wb ->
  Rabs (ein - (Rabs y * wb + / 2 ^ 146)) <= u32 * Rabs (Rabs y * wb + / 2 ^ 146) + mu32 ->
  Rabs (E - (Rabs x * wa + ein)) <= u32 * Rabs (Rabs x * wa + ein) + mu32 ->
  Rabs (lo - (out - E)) <= u32 * Rabs (out - E) + mu32 ->
  Rabs (hi - (out + E)) <= u32 * Rabs (out + E) + mu32 ->
  lo <= g * (x * C + y * S) <= hi.
Proof.
  intros g x y ch sh c64 s64 c s C S p2 out K Kt ka wa64 wa kb wb64 wb ein E lo hi
         Hunit Hch Hsh Hc64 Hs64 Hc Hs Hp2 Hout HK HKt Hka Hwa64 Hwa Hkb Hwb64 Hwb Hein HE Hlo Hhi.
  assert (HC1 : Rabs C <= 1) by (apply le_of_square; [lra |]; rewrite Rabs_sq; assert (0 <= S * S) by apply Rle_0_sqr; lra).
  assert (HS1 : Rabs S <= 1) by (apply le_of_square; [lra |]; rewrite Rabs_sq; assert (0 <= C * C) by apply Rle_0_sqr; lra).
  pose proof (decide32_entry g ch c64 c C HC1 Hch Hc64 Hc) as Ec.
  pose proof (decide32_entry g sh s64 s S HS1 Hsh Hs64 Hs) as Es.
  destruct (decide32_conditions g K Kt HK HKt) as [C1 [C2 C3]].
  pose proof u32_pos as Hu. pose proof mu32_pos as Hm. pose proof eps64_pos as He. pose proof eps64_small as He1.
  destruct mu64_small as [Hm64 _].
  assert (Hu1 : u32 <= / 1000) by (rewrite u32_value; lra).
  assert (Heta : 0 <= 10000001 / 10000000 * entry_eta g).
  { unfold entry_eta, kk_fast. pose proof (Rabs_pos g).
    assert (0 <= eps64 * (Rabs g * (425 / 100 + 1 + 425 / 100 * eps64))) by (apply Rmult_le_pos; [lra | apply Rmult_le_pos; lra]).
    assert (0 <= (1 + u32) * (eps64 * (Rabs g * (425 / 100 + 1 + 425 / 100 * eps64)) + mu64)) by (apply Rmult_le_pos; lra).
    lra. }
  replace (g * (x * C + y * S)) with (x * (g * C) + y * (g * S)) by ring.
  apply (decide_component u32 mu32 eps64 mu64 (10000001 / 10000000 * u32) K Kt (/ 2 ^ 146)
           (10000001 / 10000000 * entry_eta g) x y c s (g * C) (g * S) p2 out ka wa64 wa kb wb64 wb ein E lo hi);
    try assumption; try lra.
Qed.
