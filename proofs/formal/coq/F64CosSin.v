(* F64CosSin.v — the facts about sin and cos behind the f64 kernels' step 3 (optimized/kernel_f64-inl.h
   f64_cos_sin_lanes: cos t, sin t of the small remainder t by Taylor polynomials of degree 8 and 9
   around t1 = RN(th + tl)), the premises that ../gappa/f64_cos_sin.g states, proven over the reals
   with the standard library only. With them Gappa bounds the method error (the Taylor remainders,
   the coefficients' rounding to binary64, the first-order step from t1 to t) together with the
   evaluation's roundings, so nothing of that step is left to a hand derivation:

   - sin_poly9_remainder, cos_poly8_remainder: the polynomials the kernel evaluates (coefficients
     (−1)^i/(2i+1)! through t^9 and (−1)^i/(2i)! through t^8, before their rounding to binary64), in
     the Horner form of f64_cos_sin.g (sin_poly9, cos_poly8), satisfy, for |r| ≤ 1,
         −|r|^11/11! ≤ sin r − sin_poly9 r ≤ 0   (r ≥ 0; odd in r),   −r^10/10! ≤ cos r − cos_poly8 r ≤ 0
     (alternating series: the standard library's pre_sin_bound, pre_cos_bound at n = 2, as
     CosSinTaylor.v does for the binary64/binary32 kernels' degrees).
   - sin_poly9_error, cos_poly8_error: hence |sin r − sin_poly9 r| ≤ 5.7e-36 and
     −2.04e-32 ≤ cos r − cos_poly8 r ≤ 0 for |r| ≤ 0.0030680 (the range f64_reduction.g proves for
     t1: 0.003068^11/11! = 5.68e-36 = 2^-117.08, 0.003068^10/10! = 2.036e-32 = 2^-105.28).
   - f64_cos_sin_premises: those two, plus the first-order step t = t1 + d with d = u + e,
     |u| ≤ 2^-61 (Fast2Sum's low part) and |e| ≤ 2^-111 (the reduction's error, f64_reduction.g, and
     Fast2Sum's rounding): |sin t − (sin t1 + d·cos t1)|, |cos t − (cos t1 − d·sin t1)| ≤ d² ≤ 2^-121
     (CosSinTaylor.v sin_second_order, cos_second_order), in the form f64_cos_sin.g states them.
   Linked by statement (Gappa's proof is not exported to Coq), as for the other kernels. *)

From Coq Require Import Reals Lra.
From RopeCheck Require Import CosSinTaylor.
Open Scope R_scope.

Definition sin_poly9 (r : R) : R :=
  let z := r * r in
  r + r * (z * (((1 / 362880 * z + -1 / 5040) * z + 1 / 120) * z + -1 / 6)).

Definition cos_poly8 (r : R) : R :=
  let z := r * r in
  1 + z * (((1 / 40320 * z + -1 / 720) * z + 1 / 24) * z + -1 / 2).

Lemma sin_poly9_approx : forall r, sin_poly9 r = sin_approx r 4.
Proof.
  intro r. unfold sin_approx, sin_poly9. cbn [sum_f_R0]. unfold sin_term.
  cbv [Nat.mul Nat.add].
  rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. simpl pow. field.
Qed.

Lemma cos_poly8_approx : forall r, cos_poly8 r = cos_approx r 4.
Proof.
  intro r. unfold cos_approx, cos_poly8. cbn [sum_f_R0]. unfold cos_term.
  cbv [Nat.mul Nat.add].
  rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. simpl pow. field.
Qed.

Lemma fact10_value : INR (fact 10) = 3628800.
Proof. rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. ring. Qed.

Lemma fact11_value : INR (fact 11) = 39916800.
Proof. rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. ring. Qed.

Lemma fact12_value : INR (fact 12) = 479001600.
Proof. rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. ring. Qed.

Lemma fact13_value : INR (fact 13) = 6227020800.
Proof. rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. ring. Qed.

Lemma sin_term_5 : forall r, sin_term r 5 = - (r ^ 11 / 39916800).
Proof. intro r. unfold sin_term. cbv [Nat.mul Nat.add]. rewrite fact11_value. field. Qed.

Lemma sin_term_6 : forall r, sin_term r 6 = r ^ 13 / 6227020800.
Proof. intro r. unfold sin_term. cbv [Nat.mul Nat.add]. rewrite fact13_value. field. Qed.

Lemma cos_term_5 : forall r, cos_term r 5 = - (r ^ 10 / 3628800).
Proof. intro r. unfold cos_term. cbv [Nat.mul Nat.add]. rewrite fact10_value. field. Qed.

Lemma cos_term_6 : forall r, cos_term r 6 = r ^ 12 / 479001600.
Proof. intro r. unfold cos_term. cbv [Nat.mul Nat.add]. rewrite fact12_value. field. Qed.

Lemma sin_poly9_nonneg : forall r, 0 <= r <= 1 -> - (r ^ 11 / 39916800) <= sin r - sin_poly9 r <= 0.
Proof.
  intros r [H0 H1].
  destruct (pre_sin_bound r 2 H0 ltac:(lra)) as [Hlo Hhi].
  rewrite sin_poly9_approx.
  change (sin_approx r (2 * 2 + 1)) with (sin_approx r 4 + sin_term r 5) in Hlo.
  change (sin_approx r (2 * (2 + 1))) with (sin_approx r 4 + sin_term r 5 + sin_term r 6) in Hhi.
  rewrite sin_term_5 in Hlo, Hhi. rewrite sin_term_6 in Hhi.
  (* r^13/13! = (r^11/11!)·(r²/156) ≤ r^11/11! *)
  assert (E : r ^ 13 / 6227020800 <= r ^ 11 / 39916800).
  { clear Hlo Hhi.
    replace (r ^ 13 / 6227020800) with (r ^ 11 / 39916800 * (r * r / 156)) by field.
    assert (A : 0 <= r ^ 11 / 39916800) by (unfold Rdiv; apply Rmult_le_pos; [apply pow_le |]; lra).
    assert (B : r * r / 156 <= 1) by (assert (r * r <= 1) by nra; lra).
    rewrite <- (Rmult_1_r (r ^ 11 / 39916800)) at 2.
    apply Rmult_le_compat_l; assumption. }
  lra.
Qed.

Lemma sin_poly9_odd : forall r, sin_poly9 (- r) = - sin_poly9 r.
Proof. intro r. unfold sin_poly9. ring. Qed.

Theorem sin_poly9_remainder : forall r, Rabs r <= 1 -> Rabs (sin r - sin_poly9 r) <= Rabs r ^ 11 / 39916800.
Proof.
  intros r Hr. destruct (Rle_or_lt 0 r) as [Hp | Hn].
  - rewrite (Rabs_pos_eq r) in Hr |- * by lra.
    pose proof (sin_poly9_nonneg r (conj Hp Hr)). apply Rabs_le. lra.
  - rewrite (Rabs_left r) in Hr |- * by lra.
    pose proof (sin_poly9_nonneg (- r) ltac:(lra)) as H.
    rewrite sin_neg, sin_poly9_odd in H. apply Rabs_le. lra.
Qed.

Theorem cos_poly8_remainder : forall r, Rabs r <= 1 -> - (r ^ 10 / 3628800) <= cos r - cos_poly8 r <= 0.
Proof.
  intros r Hr. apply abs_le_bounds in Hr.
  destruct (pre_cos_bound r 2 ltac:(lra) ltac:(lra)) as [Hlo Hhi].
  rewrite cos_poly8_approx.
  change (cos_approx r (2 * 2 + 1)) with (cos_approx r 4 + cos_term r 5) in Hlo.
  change (cos_approx r (2 * (2 + 1))) with (cos_approx r 4 + cos_term r 5 + cos_term r 6) in Hhi.
  rewrite cos_term_5 in Hlo, Hhi. rewrite cos_term_6 in Hhi.
  (* r^12/12! = (r^10/10!)·(r²/132) ≤ r^10/10! *)
  assert (E : r ^ 12 / 479001600 <= r ^ 10 / 3628800).
  { clear Hlo Hhi.
    replace (r ^ 12 / 479001600) with (r ^ 10 / 3628800 * (r * r / 132)) by field.
    assert (A : 0 <= r ^ 10 / 3628800).
    { unfold Rdiv. apply Rmult_le_pos; [| lra]. replace (r ^ 10) with (r ^ 5 * r ^ 5) by ring. apply Rle_0_sqr. }
    assert (B : r * r / 132 <= 1) by (assert (r * r <= 1) by nra; lra).
    rewrite <- (Rmult_1_r (r ^ 10 / 3628800)) at 2.
    apply Rmult_le_compat_l; assumption. }
  lra.
Qed.

(* 0.003068^11/11! = 5.679e-36 and 0.003068^10/10! = 2.0361e-32: the premises of f64_cos_sin.g. *)
Theorem sin_poly9_error : forall r, Rabs r <= 30680 / 10 ^ 7 -> Rabs (sin r - sin_poly9 r) <= 57 / 10 ^ 37.
Proof.
  intros r Hr. eapply Rle_trans; [apply sin_poly9_remainder; lra |].
  assert (P : Rabs r ^ 11 <= (30680 / 10 ^ 7) ^ 11) by (apply pow_incr; split; [apply Rabs_pos | exact Hr]).
  assert (N : (30680 / 10 ^ 7) ^ 11 / 39916800 <= 57 / 10 ^ 37) by (simpl pow; lra).
  unfold Rdiv in *. lra.
Qed.

Theorem cos_poly8_error : forall r, Rabs r <= 30680 / 10 ^ 7 -> - (204 / 10 ^ 34) <= cos r - cos_poly8 r <= 0.
Proof.
  intros r Hr. pose proof (cos_poly8_remainder r ltac:(lra)) as H.
  assert (P : Rabs r ^ 10 <= (30680 / 10 ^ 7) ^ 10) by (apply pow_incr; split; [apply Rabs_pos | exact Hr]).
  rewrite RPow_abs, Rabs_pos_eq in P by (replace (r ^ 10) with (r ^ 5 * r ^ 5) by ring; apply Rle_0_sqr).
  assert (N : (30680 / 10 ^ 7) ^ 10 / 3628800 <= 204 / 10 ^ 34) by (simpl pow; lra).
  unfold Rdiv in *. lra.
Qed.

(* The first-order step from t1 to t = t1 + u + e: d² ≤ (2^-61 + 2^-111)² ≤ 2^-121. *)
Lemma step_square : forall u e, Rabs u <= / 2 ^ 61 -> Rabs e <= / 2 ^ 111 ->
  Rabs (u + e) <= 1 /\ (u + e) * (u + e) <= / 2 ^ 121.
Proof.
  intros u e Hu He.
  assert (Hd : Rabs (u + e) <= / 2 ^ 61 + / 2 ^ 111) by (eapply Rle_trans; [apply Rabs_triang | lra]).
  assert (H0 : 0 <= / 2 ^ 61 + / 2 ^ 111) by (pose proof (Rabs_pos (u + e)); lra).
  split; [simpl in Hd; lra |].
  rewrite <- Rabs_sq_helper.
  apply Rle_trans with ((/ 2 ^ 61 + / 2 ^ 111) * (/ 2 ^ 61 + / 2 ^ 111)).
  - apply Rmult_le_compat; [apply Rabs_pos | apply Rabs_pos | exact Hd | exact Hd].
  - simpl. lra.
Qed.

Theorem f64_cos_sin_premises : forall t1 u e,
  Rabs t1 <= 30680 / 10 ^ 7 -> Rabs u <= / 2 ^ 61 -> Rabs e <= / 2 ^ 111 ->
  Rabs (sin t1 - sin_poly9 t1) <= 57 / 10 ^ 37 /\
  - (204 / 10 ^ 34) <= cos t1 - cos_poly8 t1 <= 0 /\
  Rabs (sin (t1 + (u + e)) - (sin t1 + (u + e) * cos t1)) <= / 2 ^ 121 /\
  Rabs (cos (t1 + (u + e)) - (cos t1 - (u + e) * sin t1)) <= / 2 ^ 121.
Proof.
  intros t1 u e Ht Hu He.
  destruct (step_square u e Hu He) as [Hd1 Hd2].
  split; [apply sin_poly9_error; exact Ht |].
  split; [apply cos_poly8_error; exact Ht |].
  split.
  - eapply Rle_trans; [apply sin_second_order; exact Hd1 | exact Hd2].
  - eapply Rle_trans; [apply cos_second_order; exact Hd1 | exact Hd2].
Qed.
