(* FastTrig.v — the facts about sin and cos behind the fast reference's double-double cos/sin
   (reference/fast_trig.cpp, bound kFastCosSinError = 2^-97 of fast_trig.h), the premises that
   ../gappa/fast_trig.g states, proven over the reals with the standard library only:

   - sin_poly25_error, cos_poly26_error: the Taylor polynomials that fast_trig.cpp evaluates (through
     r^25 and r^26, coefficients (−1)^i/(2i+1)! and (−1)^i/(2i)! before their rounding to
     double-doubles), written in the Horner form of fast_trig.g (sin_poly25, cos_poly26), are within
     1.48e-31 and 4.2e-33 of sin r and cos r for |r| ≤ 0.788 (fast_trig.g proves |r̂| ≤ 0.788 first).
     Behind them, for |r| ≤ 1: sin_poly25_remainder |sin r − Σ_{k≤12}| ≤ |r|^27/27! and
     cos_poly26_remainder |cos r − Σ_{k≤13}| ≤ r^28/28! (alternating series: the standard library's
     pre_sin_bound, pre_cos_bound at n = 6), as CosSinTaylor.v does for the kernels' degrees.
   - fast_trig_premises: those two plus |sin R − sin r|, |cos R − cos r| ≤ X whenever |R − r| ≤ X
     (CosSinTaylor.v sin_lipschitz, cos_lipschitz), in the form fast_trig.g states them
     (X = 1.56e-31, proven there).
   - fast_trig_placed: the quadrant. With k = q + 4k' (q = k & 3 in two's complement, as the code's
     switch), φ = R + q·π/2 + k'·2π, and the switch's (cos, sin) = place q ĉ ŝ are within e of
     (cos φ, sin φ) when ĉ, ŝ are within e of cos R, sin R (CosSinTaylor.v quadrant_placement).
   So fast_trig.g's |ĉ − cos R|, |ŝ − sin R| ≤ 2^-97 is the bound on cos φ and sin φ that fast_trig.h
   states. Linked by statement (Gappa's proof is not exported to Coq), as for the kernels. *)

From Coq Require Import Reals Lra Lia.
From RopeCheck Require Import CosSinTaylor.
Open Scope R_scope.

Definition sin_poly25 (r : R) : R :=
  let z := r * r in
  r + r * (z * (-1 / 6 + z * (1 / 120 + z * (-1 / 5040 + z * (1 / 362880 + z * (-1 / 39916800
    + z * (1 / 6227020800 + z * (-1 / 1307674368000 + z * (1 / 355687428096000
    + z * (-1 / 121645100408832000 + z * (1 / 51090942171709440000
    + z * (-1 / 25852016738884976640000 + z * (1 / 15511210043330985984000000))))))))))))).

Definition cos_poly26 (r : R) : R :=
  let z := r * r in
  1 + z * (-1 / 2 + z * (1 / 24 + z * (-1 / 720 + z * (1 / 40320 + z * (-1 / 3628800
    + z * (1 / 479001600 + z * (-1 / 87178291200 + z * (1 / 20922789888000
    + z * (-1 / 6402373705728000 + z * (1 / 2432902008176640000
    + z * (-1 / 1124000727777607680000 + z * (1 / 620448401733239439360000
    + z * (-1 / 403291461126605635584000000))))))))))))).

Lemma sin_poly25_approx : forall r, sin_poly25 r = sin_approx r 12.
Proof.
  intro r. unfold sin_approx, sin_poly25. cbn [sum_f_R0]. unfold sin_term.
  cbv [Nat.mul Nat.add].
  rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. simpl pow. field.
Qed.

Lemma cos_poly26_approx : forall r, cos_poly26 r = cos_approx r 13.
Proof.
  intro r. unfold cos_approx, cos_poly26. cbn [sum_f_R0]. unfold cos_term.
  cbv [Nat.mul Nat.add].
  rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. simpl pow. field.
Qed.

Lemma fact27_value : INR (fact 27) = 10888869450418352160768000000.
Proof. rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. ring. Qed.

Lemma fact28_value : INR (fact 28) = 304888344611713860501504000000.
Proof. rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. ring. Qed.

Lemma fact29_value : INR (fact 29) = 8841761993739701954543616000000.
Proof. rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. ring. Qed.

Lemma sin_term_13 : forall r, sin_term r 13 = - (r ^ 27 / 10888869450418352160768000000).
Proof. intro r. unfold sin_term. cbv [Nat.mul Nat.add]. rewrite fact27_value. field. Qed.

Lemma sin_term_14 : forall r, sin_term r 14 = r ^ 29 / 8841761993739701954543616000000.
Proof. intro r. unfold sin_term. cbv [Nat.mul Nat.add]. rewrite fact29_value. field. Qed.

Lemma cos_term_14 : forall r, cos_term r 14 = r ^ 28 / 304888344611713860501504000000.
Proof. intro r. unfold cos_term. cbv [Nat.mul Nat.add]. rewrite fact28_value. field. Qed.

Lemma sin_poly25_nonneg : forall r, 0 <= r <= 1 ->
  - (r ^ 27 / 10888869450418352160768000000) <= sin r - sin_poly25 r <= 0.
Proof.
  intros r [H0 H1].
  destruct (pre_sin_bound r 6 H0 ltac:(lra)) as [Hlo Hhi].
  rewrite sin_poly25_approx.
  change (sin_approx r (2 * 6 + 1)) with (sin_approx r 12 + sin_term r 13) in Hlo.
  change (sin_approx r (2 * (6 + 1))) with (sin_approx r 12 + sin_term r 13 + sin_term r 14) in Hhi.
  rewrite sin_term_13 in Hlo, Hhi. rewrite sin_term_14 in Hhi.
  (* r^29/29! = (r^27/27!)·(r²/812) ≤ r^27/27! *)
  assert (E : r ^ 29 / 8841761993739701954543616000000 <= r ^ 27 / 10888869450418352160768000000).
  { clear Hlo Hhi.
    replace (r ^ 29 / 8841761993739701954543616000000)
      with (r ^ 27 / 10888869450418352160768000000 * (r * r / 812)) by field.
    assert (A : 0 <= r ^ 27 / 10888869450418352160768000000)
      by (unfold Rdiv; apply Rmult_le_pos; [apply pow_le |]; lra).
    assert (B : r * r / 812 <= 1) by (assert (r * r <= 1) by nra; lra).
    rewrite <- (Rmult_1_r (r ^ 27 / 10888869450418352160768000000)) at 2.
    apply Rmult_le_compat_l; assumption. }
  lra.
Qed.

Lemma sin_poly25_odd : forall r, sin_poly25 (- r) = - sin_poly25 r.
Proof. intro r. unfold sin_poly25. ring. Qed.

Theorem sin_poly25_remainder : forall r, Rabs r <= 1 ->
  Rabs (sin r - sin_poly25 r) <= Rabs r ^ 27 / 10888869450418352160768000000.
Proof.
  intros r Hr. destruct (Rle_or_lt 0 r) as [Hp | Hn].
  - rewrite (Rabs_pos_eq r) in Hr |- * by lra.
    pose proof (sin_poly25_nonneg r (conj Hp Hr)). apply Rabs_le. lra.
  - rewrite (Rabs_left r) in Hr |- * by lra.
    pose proof (sin_poly25_nonneg (- r) ltac:(lra)) as H.
    rewrite sin_neg, sin_poly25_odd in H. apply Rabs_le. lra.
Qed.

Theorem cos_poly26_remainder : forall r, Rabs r <= 1 ->
  Rabs (cos r - cos_poly26 r) <= r ^ 28 / 304888344611713860501504000000.
Proof.
  intros r Hr. apply abs_le_bounds in Hr.
  destruct (pre_cos_bound r 6 ltac:(lra) ltac:(lra)) as [Hlo Hhi].
  rewrite cos_poly26_approx.
  change (cos_approx r (2 * 6 + 1)) with (cos_approx r 13) in Hlo.
  change (cos_approx r (2 * (6 + 1))) with (cos_approx r 13 + cos_term r 14) in Hhi.
  rewrite cos_term_14 in Hhi.
  assert (0 <= r ^ 28 / 304888344611713860501504000000).
  { unfold Rdiv. apply Rmult_le_pos; [| lra].
    replace (r ^ 28) with (r ^ 14 * r ^ 14) by ring. apply Rle_0_sqr. }
  apply Rabs_le. lra.
Qed.

(* 0.788^27/27! = 1.4765e-31 and 0.788^28/28! = 4.156e-33: the premises of fast_trig.g. *)
Theorem sin_poly25_error : forall r, Rabs r <= 788 / 1000 ->
  Rabs (sin r - sin_poly25 r) <= 148 / 10 ^ 33.
Proof.
  intros r Hr. eapply Rle_trans; [apply sin_poly25_remainder; lra |].
  assert (P : Rabs r ^ 27 <= (788 / 1000) ^ 27) by (apply pow_incr; split; [apply Rabs_pos | exact Hr]).
  assert (N : (788 / 1000) ^ 27 / 10888869450418352160768000000 <= 148 / 10 ^ 33) by (simpl pow; lra).
  unfold Rdiv in *. lra.
Qed.

Theorem cos_poly26_error : forall r, Rabs r <= 788 / 1000 ->
  Rabs (cos r - cos_poly26 r) <= 42 / 10 ^ 34.
Proof.
  intros r Hr. eapply Rle_trans; [apply cos_poly26_remainder; lra |].
  assert (P : Rabs r ^ 28 <= (788 / 1000) ^ 28) by (apply pow_incr; split; [apply Rabs_pos | exact Hr]).
  rewrite RPow_abs, Rabs_pos_eq in P by (replace (r ^ 28) with (r ^ 14 * r ^ 14) by ring; apply Rle_0_sqr).
  assert (N : (788 / 1000) ^ 28 / 304888344611713860501504000000 <= 42 / 10 ^ 34) by (simpl pow; lra).
  unfold Rdiv in *. lra.
Qed.

Theorem fast_trig_premises : forall r R X,
  Rabs r <= 788 / 1000 -> Rabs (R - r) <= X ->
  Rabs (sin r - sin_poly25 r) <= 148 / 10 ^ 33 /\ Rabs (cos r - cos_poly26 r) <= 42 / 10 ^ 34 /\
  Rabs (sin R - sin r) <= X /\ Rabs (cos R - cos r) <= X.
Proof.
  intros r R X Hr HX.
  split; [now apply sin_poly25_error |]. split; [now apply cos_poly26_error |].
  split; eapply Rle_trans; [apply sin_lipschitz | exact HX | apply cos_lipschitz | exact HX].
Qed.

(* fast_trig.cpp's switch on k & 3 (= q with k = q + 4k', two's complement): (cos, sin) of
   R + q·π/2 from those of R. *)
Definition place (q : nat) (c s : R) : R * R :=
  match q with
  | 0%nat => (c, s)
  | 1%nat => (- s, c)
  | 2%nat => (- c, - s)
  | _ => (s, - c)
  end.

Theorem fast_trig_placed : forall phi R0 (q : nat) (k' : Z) c s e,
  (q < 4)%nat -> phi = R0 + INR q * (PI / 2) + IZR k' * (2 * PI) ->
  Rabs (c - cos R0) <= e -> Rabs (s - sin R0) <= e ->
  Rabs (fst (place q c s) - cos phi) <= e /\ Rabs (snd (place q c s) - sin phi) <= e.
Proof.
  intros phi R0 q k' c s e Hq Hphi Hc Hs. subst phi.
  destruct (quadrant_placement R0 k') as [[C0 S0] [[C1 S1] [[C2 S2] [C3 S3]]]].
  destruct q as [| [| [| [| q]]]]; [| | | | lia]; simpl place; cbn [fst snd].
  - rewrite C0, S0. auto.
  - rewrite C1, S1. split; [replace (- s - - sin R0) with (- (s - sin R0)) by ring; rewrite Rabs_Ropp |]; auto.
  - rewrite C2, S2. split; [replace (- c - - cos R0) with (- (c - cos R0)) by ring
                           | replace (- s - - sin R0) with (- (s - sin R0)) by ring]; rewrite Rabs_Ropp; auto.
  - rewrite C3, S3. split; [| replace (- c - - cos R0) with (- (c - cos R0)) by ring; rewrite Rabs_Ropp]; auto.
Qed.
