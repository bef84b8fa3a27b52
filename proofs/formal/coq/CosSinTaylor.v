(* CosSinTaylor.v — the facts about cos and sin that the Gappa scripts of the kernels' angle paths
   (../gappa/angle_fast.g, ../gappa/angle_precise.g) take as premises, proven here over the reals
   with the standard library only. Gappa has no cos, sin or π; each script names the lemma below
   that each of its premises comes from:

   - pi_enclosure: 3.14159265358979323 ≤ π ≤ 3.14159265358979324 (the scripts' `pi`): the standard
     library defines π/2 as the zero of cos in [7/8, 7/4] (Rtrigo1: pi2_int), cos ≥ 0 on [−π/2, π/2]
     and ≤ 0 on [π/2, 3π/2] (cos_ge_0, cos_le_0); the alternating series (pre_cos_bound, 12/13 terms)
     gives cos > 0 at 1.570796326794896615 and cos < 0 at 1.57079632679489662. (Coq.Reals.Machin
     would be faster but rests on Classical_Prop.classic, which check_assumptions.sh rejects; so do
     PI2_1 and sin_lt_x of Ratan.v, not used here.)
   - sin_taylor_error, cos_taylor_error: the Taylor polynomials that optimized/angle-inl.h evaluates
     (kSin3 … kSin17, kCos4 … kCos18 before their rounding to binary64), written in the same Horner
     form as in the Gappa scripts (sin_poly, cos_poly), are within 1.19e-19 and 4.74e-21 of sin r
     and cos r for |r| ≤ 4/5 (both scripts prove |r| ≤ 4/5 for the computed r first). Behind them:
     sin_taylor_remainder, |sin r − Σ_{k≤8} (−1)^k r^(2k+1)/(2k+1)!| ≤ |r|^19/19!, and
     cos_taylor_remainder, |cos r − Σ_{k≤9} (−1)^k r^(2k)/(2k)!| ≤ r^20/20!, for |r| ≤ 1, from the
     alternating-series bounds of the standard library (Rtrigo_alt: pre_sin_bound, pre_cos_bound).
   - sin_lipschitz, cos_lipschitz: |sin a − sin b|, |cos a − cos b| ≤ |a − b| (sum-to-product
     identities form4/form2 and |sin x| ≤ |x|): the FAST path's angle error passes to cos and sin.
   - sin_second_order, cos_second_order: |sin(a + h) − (sin a + h·cos a)| ≤ h² and
     |cos(a + h) − (cos a − h·sin a)| ≤ h² for |h| ≤ 1: the PRECISE path's first-order r_lo term.
   - quadrant_placement: cos/sin of x + q·π/2 + k·2π for q = 0…3 and any integer k are
     (c, s), (−s, c), (−c, −s), (s, −c) — the table of place_in_quadrant (angle-inl.h).
   The two theorems fast_path_premises and precise_path_premises collect, in the form the Gappa
   scripts state them, every premise of angle_fast.g and angle_precise.g except the plan's own
   accuracy (plan.cpp's 128-bit schedule and 2π, stated there as assumed). *)

From Coq Require Import Reals Lra.
Open Scope R_scope.

(* ---- π ---- *)

Lemma INR_fact_succ : forall n, INR (fact (S n)) = INR (S n) * INR (fact n).
Proof. intro n. change (fact (S n)) with (S n * fact n)%nat. apply mult_INR. Qed.

(* INR (fact n) as the product it is, unfolded by cbn in one step: rewriting INR_fact_succ until no
   factorial is left rewrote the whole goal once per factor (seconds for the 13 terms up to 26!). *)
Fixpoint Rfact (n : nat) : R := match n with O => 1 | S m => INR (S m) * Rfact m end.

Lemma INR_fact_Rfact : forall n, INR (fact n) = Rfact n.
Proof. induction n as [| n IH]; [reflexivity |]. rewrite INR_fact_succ, IH. reflexivity. Qed.

(* π/2 = 1.5707963267948966192…: cos is 4.2e-18 at the first point and −7.7e-19 at the second; the
   series stopped after the x^22 (resp. x^24) term is off by less than 8.1e-20 (resp. 3e-22). *)
Lemma cos_pos_below_pi2 : 0 < cos 1.570796326794896615.
Proof.
  destruct (pre_cos_bound 1.570796326794896615 5 ltac:(lra) ltac:(lra)) as [H _].
  eapply Rlt_le_trans; [| exact H]. clear H.
  unfold cos_approx. cbv [Nat.mul Nat.add]. cbn [sum_f_R0]. unfold cos_term. cbv [Nat.mul Nat.add].
  rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. simpl pow. lra.
Qed.

Lemma cos_neg_above_pi2 : cos 1.57079632679489662 < 0.
Proof.
  destruct (pre_cos_bound 1.57079632679489662 5 ltac:(lra) ltac:(lra)) as [_ H].
  eapply Rle_lt_trans; [exact H |]. clear H.
  unfold cos_approx. cbv [Nat.mul Nat.add]. cbn [sum_f_R0]. unfold cos_term. cbv [Nat.mul Nat.add].
  rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. simpl pow. lra.
Qed.

Theorem pi_enclosure : 3.14159265358979323 <= PI <= 3.14159265358979324.
Proof.
  assert (Hpi : 7 / 4 <= PI <= 7 / 2) by (unfold PI; pose proof pi2_int; lra).
  pose proof cos_pos_below_pi2. pose proof cos_neg_above_pi2.
  split.
  - destruct (Rle_or_lt 1.570796326794896615 (PI / 2)) as [Hok | Hbad]; [lra |].
    assert (cos 1.570796326794896615 <= 0) by (apply cos_le_0; lra). lra.
  - destruct (Rle_or_lt (PI / 2) 1.57079632679489662) as [Hok | Hbad]; [lra |].
    assert (0 <= cos 1.57079632679489662) by (apply cos_ge_0; lra). lra.
Qed.

(* ---- the Taylor polynomials of angle-inl.h and their truncation error ----
   Large factorials are only ever rewritten to numerals (fact19_value …) before ring/field/lra:
   a goal that still holds INR (fact 19) makes the kernel check of such proofs compute 19! in unary. *)



Definition sin_poly (r : R) : R :=
  let r2 := r * r in
  r + r * (r2 * (((((((( 1 / 355687428096000 * r2 + -1 / 1307674368000) * r2 + 1 / 6227020800) * r2
                        + -1 / 39916800) * r2 + 1 / 362880) * r2 + -1 / 5040) * r2 + 1 / 120) * r2 + -1 / 6))).

Definition cos_poly (r : R) : R :=
  let r2 := r * r in
  1 + r2 * (((((((( -1 / 6402373705728000 * r2 + 1 / 20922789888000) * r2 + -1 / 87178291200) * r2
                 + 1 / 479001600) * r2 + -1 / 3628800) * r2 + 1 / 40320) * r2 + -1 / 720) * r2 + 1 / 24) * r2
            + -1 / 2).

Lemma sin_poly_approx : forall r, sin_poly r = sin_approx r 8.
Proof.
  intro r. unfold sin_approx, sin_poly. cbn [sum_f_R0]. unfold sin_term.
  cbv [Nat.mul Nat.add].
  rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. simpl pow. field.
Qed.

Lemma cos_poly_approx : forall r, cos_poly r = cos_approx r 9.
Proof.
  intro r. unfold cos_approx, cos_poly. cbn [sum_f_R0]. unfold cos_term.
  cbv [Nat.mul Nat.add].
  rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. simpl pow. field.
Qed.

Lemma fact19_value : INR (fact 19) = 121645100408832000.
Proof. rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. ring. Qed.

Lemma fact20_value : INR (fact 20) = 2432902008176640000.
Proof. rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. ring. Qed.

Lemma fact21_value : INR (fact 21) = 51090942171709440000.
Proof. rewrite !INR_fact_Rfact. cbn [Rfact]. simpl INR. ring. Qed.

Lemma sin_term_9 : forall r, sin_term r 9 = - (r ^ 19 / 121645100408832000).
Proof. intro r. unfold sin_term. cbv [Nat.mul Nat.add]. rewrite fact19_value. field. Qed.

Lemma sin_term_10 : forall r, sin_term r 10 = r ^ 21 / 51090942171709440000.
Proof. intro r. unfold sin_term. cbv [Nat.mul Nat.add]. rewrite fact21_value. field. Qed.

Lemma cos_term_10 : forall r, cos_term r 10 = r ^ 20 / 2432902008176640000.
Proof. intro r. unfold cos_term. cbv [Nat.mul Nat.add]. rewrite fact20_value. field. Qed.

Lemma sin_taylor_nonneg : forall r, 0 <= r <= 1 ->
  - (r ^ 19 / 121645100408832000) <= sin r - sin_poly r <= 0.
Proof.
  intros r [H0 H1].
  destruct (pre_sin_bound r 4 H0 ltac:(lra)) as [Hlo Hhi].
  rewrite sin_poly_approx.
  change (sin_approx r (2 * 4 + 1)) with (sin_approx r 8 + sin_term r 9) in Hlo.
  change (sin_approx r (2 * (4 + 1))) with (sin_approx r 8 + sin_term r 9 + sin_term r 10) in Hhi.
  rewrite sin_term_9 in Hlo, Hhi. rewrite sin_term_10 in Hhi.
  (* r^21/21! = (r^19/19!)·(r²/420) ≤ r^19/19! *)
  assert (E : r ^ 21 / 51090942171709440000 <= r ^ 19 / 121645100408832000).
  { clear Hlo Hhi.
    replace (r ^ 21 / 51090942171709440000) with (r ^ 19 / 121645100408832000 * (r * r / 420)) by field.
    assert (A : 0 <= r ^ 19 / 121645100408832000) by (unfold Rdiv; apply Rmult_le_pos; [apply pow_le |]; lra).
    assert (B : r * r / 420 <= 1) by (assert (r * r <= 1) by nra; lra).
    rewrite <- (Rmult_1_r (r ^ 19 / 121645100408832000)) at 2.
    apply Rmult_le_compat_l; assumption. }
  lra.
Qed.

Lemma abs_le_bounds : forall x b, Rabs x <= b -> - b <= x <= b.
Proof. intros x b H. pose proof (Rle_abs x). pose proof (Rle_abs (- x)). rewrite Rabs_Ropp in *. lra. Qed.

Lemma sin_poly_odd : forall r, sin_poly (- r) = - sin_poly r.
Proof. intro r. unfold sin_poly. ring. Qed.

Lemma sin_taylor_remainder : forall r, Rabs r <= 1 -> Rabs (sin r - sin_poly r) <= Rabs r ^ 19 / 121645100408832000.
Proof.
  intros r Hr. destruct (Rle_or_lt 0 r) as [Hp | Hn].
  - rewrite (Rabs_pos_eq r) in Hr |- * by lra.
    pose proof (sin_taylor_nonneg r (conj Hp Hr)). apply Rabs_le. lra.
  - rewrite (Rabs_left r) in Hr |- * by lra.
    pose proof (sin_taylor_nonneg (- r) ltac:(lra)) as H.
    rewrite sin_neg, sin_poly_odd in H. apply Rabs_le. lra.
Qed.

Lemma cos_taylor_remainder : forall r, Rabs r <= 1 -> Rabs (cos r - cos_poly r) <= r ^ 20 / 2432902008176640000.
Proof.
  intros r Hr. apply abs_le_bounds in Hr.
  destruct (pre_cos_bound r 4 ltac:(lra) ltac:(lra)) as [Hlo Hhi].
  rewrite cos_poly_approx.
  change (cos_approx r (2 * 4 + 1)) with (cos_approx r 9) in Hlo.
  change (cos_approx r (2 * (4 + 1))) with (cos_approx r 9 + cos_term r 10) in Hhi.
  rewrite cos_term_10 in Hhi.
  assert (0 <= r ^ 20 / 2432902008176640000).
  { unfold Rdiv. apply Rmult_le_pos; [| lra].
    replace (r ^ 20) with (r ^ 10 * r ^ 10) by ring. apply Rle_0_sqr. }
  apply Rabs_le. lra.
Qed.

(* (4/5)^19/19! = 1.1848e-19 and (4/5)^20/20! = 4.7389e-21: the bounds the Gappa scripts use. *)
Theorem sin_taylor_error : forall r, Rabs r <= 4 / 5 -> Rabs (sin r - sin_poly r) <= 119 / 10 ^ 21.
Proof.
  intros r Hr. eapply Rle_trans; [apply sin_taylor_remainder; lra |].
  assert (P : Rabs r ^ 19 <= (4 / 5) ^ 19) by (apply pow_incr; split; [apply Rabs_pos | exact Hr]).
  assert (N : (4 / 5) ^ 19 / 121645100408832000 <= 119 / 10 ^ 21) by (simpl pow; lra).
  unfold Rdiv in *. lra.
Qed.

Theorem cos_taylor_error : forall r, Rabs r <= 4 / 5 -> Rabs (cos r - cos_poly r) <= 474 / 10 ^ 23.
Proof.
  intros r Hr. eapply Rle_trans; [apply cos_taylor_remainder; lra |].
  assert (P : Rabs r ^ 20 <= (4 / 5) ^ 20) by (apply pow_incr; split; [apply Rabs_pos | exact Hr]).
  rewrite RPow_abs, Rabs_pos_eq in P by (replace (r ^ 20) with (r ^ 10 * r ^ 10) by ring; apply Rle_0_sqr).
  assert (N : (4 / 5) ^ 20 / 2432902008176640000 <= 474 / 10 ^ 23) by (simpl pow; lra).
  unfold Rdiv in *. lra.
Qed.

(* ---- Lipschitz bounds (FAST path) ---- *)

Lemma sin_cubic_nonneg : forall h, 0 <= h <= 1 -> - (h * (h * h) / 6) <= sin h - h <= 0.
Proof.
  intros h Hh.
  destruct (pre_sin_bound h 0 ltac:(lra) ltac:(lra)) as [Hlo Hhi].
  change (sin_approx h (2 * 0 + 1)) with (sin_approx h 1) in Hlo.
  change (sin_approx h (2 * (0 + 1))) with (sin_approx h 2) in Hhi.
  replace (sin_approx h 1) with (h - h * (h * h) / 6) in Hlo by (unfold sin_approx, sin_term; simpl; field).
  replace (sin_approx h 2) with (h - h * (h * h) / 6 + h * (h * h) * (h * h) / 120) in Hhi
    by (unfold sin_approx, sin_term; simpl; field).
  assert (0 <= h * (h * h)) by (apply Rmult_le_pos; nra).
  assert (h * (h * h) * (h * h) <= h * (h * h)) by (assert (0 <= h * h <= 1) by nra; nra).
  split; lra.
Qed.

Lemma abs_sin_le : forall x, Rabs (sin x) <= Rabs x.
Proof.
  assert (P : forall x, 0 <= x -> Rabs (sin x) <= x).
  { intros x Hx. pose proof (SIN_bound x). destruct (Rle_or_lt x 1).
    - pose proof (sin_cubic_nonneg x ltac:(lra)).
      assert (x * (x * x) / 6 <= x) by (assert (x * x <= 1) by nra; nra).
      apply Rabs_le; lra.
    - apply Rabs_le; lra. }
  intro x. destruct (Rle_or_lt 0 x).
  - rewrite (Rabs_pos_eq x) by lra. now apply P.
  - rewrite <- (Ropp_involutive x) at 1. rewrite sin_neg, Rabs_Ropp, (Rabs_left x) by lra. apply P; lra.
Qed.

(* The step both Lipschitz bounds share (after the sum-to-product formulas form2, form4):
   2·|sin((a − b)/2)|·|w| ≤ |a − b| for |w| ≤ 1, since |sin t| ≤ |t|. *)
Lemma half_difference_bound : forall a b w, Rabs w <= 1 -> 2 * Rabs (sin ((a - b) / 2)) * Rabs w <= Rabs (a - b).
Proof.
  intros a b w Hw.
  pose proof (abs_sin_le ((a - b) / 2)) as H1.
  replace ((a - b) / 2) with ((a - b) * / 2) in H1 by reflexivity.
  rewrite Rabs_mult, (Rabs_pos_eq (/ 2)) in H1 by lra.
  pose proof (Rabs_pos (sin ((a - b) / 2))). pose proof (Rabs_pos w).
  nra.
Qed.

Theorem cos_lipschitz : forall a b, Rabs (cos a - cos b) <= Rabs (a - b).
Proof.
  intros a b. rewrite form2, !Rabs_mult.
  replace (Rabs (-2)) with 2 by (rewrite Rabs_left; lra).
  apply half_difference_bound. pose proof (SIN_bound ((a + b) / 2)). apply Rabs_le; lra.
Qed.

Theorem sin_lipschitz : forall a b, Rabs (sin a - sin b) <= Rabs (a - b).
Proof.
  intros a b. rewrite form4, !Rabs_mult.
  replace (Rabs 2) with 2 by (rewrite Rabs_pos_eq; lra).
  assert (H : Rabs (cos ((a + b) / 2)) <= 1) by (pose proof (COS_bound ((a + b) / 2)); apply Rabs_le; lra).
  pose proof (half_difference_bound a b _ H). nra.
Qed.

(* ---- first-order expansions (PRECISE path's r_lo correction) ---- *)

Lemma cos_quadratic : forall h, Rabs h <= 1 -> Rabs (cos h - 1) <= h * h / 2.
Proof.
  intros h Hh. apply abs_le_bounds in Hh.
  destruct (pre_cos_bound h 0 ltac:(lra) ltac:(lra)) as [Hlo Hhi].
  change (cos_approx h (2 * 0 + 1)) with (cos_approx h 1) in Hlo.
  change (cos_approx h (2 * (0 + 1))) with (cos_approx h 2) in Hhi.
  replace (cos_approx h 1) with (1 - h * h / 2) in Hlo by (unfold cos_approx, cos_term; simpl; field).
  replace (cos_approx h 2) with (1 - h * h / 2 + h * h * (h * h) / 24) in Hhi
    by (unfold cos_approx, cos_term; simpl; field).
  assert (h * h * (h * h) <= h * h) by (assert (0 <= h * h <= 1) by nra; nra).
  apply Rabs_le. split; lra.
Qed.


Lemma sin_cubic : forall h, Rabs h <= 1 -> Rabs (sin h - h) <= h * h / 6.
Proof.
  intros h Hh. destruct (Rle_or_lt 0 h) as [Hs | Hs].
  - rewrite Rabs_pos_eq in Hh by lra. pose proof (sin_cubic_nonneg h ltac:(lra)). apply Rabs_le. nra.
  - rewrite Rabs_left in Hh by lra. pose proof (sin_cubic_nonneg (- h) ltac:(lra)) as H.
    rewrite sin_neg in H. apply Rabs_le. nra.
Qed.

Theorem cos_second_order : forall a h, Rabs h <= 1 -> Rabs (cos (a + h) - (cos a - h * sin a)) <= h * h.
Proof.
  intros a h Hh. rewrite cos_plus.
  replace (cos a * cos h - sin a * sin h - (cos a - h * sin a))
    with (cos a * (cos h - 1) - sin a * (sin h - h)) by ring.
  pose proof (cos_quadratic h Hh). pose proof (sin_cubic h Hh).
  pose proof (COS_bound a). pose proof (SIN_bound a).
  assert (Rabs (cos a) <= 1) by (apply Rabs_le; lra). assert (Rabs (sin a) <= 1) by (apply Rabs_le; lra).
  eapply Rle_trans; [apply Rabs_triang |]. rewrite Rabs_Ropp, !Rabs_mult.
  pose proof (Rabs_pos (cos h - 1)). pose proof (Rabs_pos (sin h - h)).
  pose proof (Rabs_pos (cos a)). pose proof (Rabs_pos (sin a)).
  assert (Rabs (cos a) * Rabs (cos h - 1) <= h * h / 2) by nra.
  assert (Rabs (sin a) * Rabs (sin h - h) <= h * h / 6) by nra.
  nra.
Qed.

Theorem sin_second_order : forall a h, Rabs h <= 1 -> Rabs (sin (a + h) - (sin a + h * cos a)) <= h * h.
Proof.
  intros a h Hh. rewrite sin_plus.
  replace (sin a * cos h + cos a * sin h - (sin a + h * cos a))
    with (sin a * (cos h - 1) + cos a * (sin h - h)) by ring.
  pose proof (cos_quadratic h Hh). pose proof (sin_cubic h Hh).
  pose proof (COS_bound a). pose proof (SIN_bound a).
  assert (Rabs (cos a) <= 1) by (apply Rabs_le; lra). assert (Rabs (sin a) <= 1) by (apply Rabs_le; lra).
  eapply Rle_trans; [apply Rabs_triang |]. rewrite !Rabs_mult.
  pose proof (Rabs_pos (cos h - 1)). pose proof (Rabs_pos (sin h - h)).
  pose proof (Rabs_pos (cos a)). pose proof (Rabs_pos (sin a)).
  assert (Rabs (sin a) * Rabs (cos h - 1) <= h * h / 2) by nra.
  assert (Rabs (cos a) * Rabs (sin h - h) <= h * h / 6) by nra.
  nra.
Qed.

(* ---- the quadrant (place_in_quadrant) ---- *)
Lemma cos_sin_period_Z : forall x k,
  cos (x + IZR k * (2 * PI)) = cos x /\ sin (x + IZR k * (2 * PI)) = sin x.
Proof.
  intros x k. destruct k as [| p | p].
  - rewrite Rmult_0_l, Rplus_0_r. split; reflexivity.
  - replace (IZR (Z.pos p)) with (INR (Pos.to_nat p)) by (rewrite INR_IZR_INZ, positive_nat_Z; reflexivity).
    replace (x + INR (Pos.to_nat p) * (2 * PI)) with (x + 2 * INR (Pos.to_nat p) * PI) by ring.
    split; [apply cos_period | apply sin_period].
  - replace (IZR (Z.neg p)) with (- INR (Pos.to_nat p))
      by (rewrite INR_IZR_INZ, positive_nat_Z; reflexivity).
    split.
    + rewrite <- (cos_period _ (Pos.to_nat p)). f_equal. ring.
    + rewrite <- (sin_period _ (Pos.to_nat p)). f_equal. ring.
Qed.

Theorem quadrant_placement : forall x (k : Z),
  let angle q := x + INR q * (PI / 2) + IZR k * (2 * PI) in
  (cos (angle 0%nat) = cos x /\ sin (angle 0%nat) = sin x) /\
  (cos (angle 1%nat) = - sin x /\ sin (angle 1%nat) = cos x) /\
  (cos (angle 2%nat) = - cos x /\ sin (angle 2%nat) = - sin x) /\
  (cos (angle 3%nat) = sin x /\ sin (angle 3%nat) = - cos x).
Proof.
  intros x k angle. unfold angle.
  rewrite !(proj1 (cos_sin_period_Z _ k)), !(proj2 (cos_sin_period_Z _ k)).
  replace (INR 0 * (PI / 2)) with 0 by (simpl; ring).
  replace (INR 1 * (PI / 2)) with (PI / 2) by (simpl; ring).
  replace (x + INR 2 * (PI / 2)) with (x + PI) by (simpl; field).
  replace (x + INR 3 * (PI / 2)) with ((x + PI / 2) + PI) by (simpl; field).
  rewrite Rplus_0_r, !neg_cos, !neg_sin, !cos_plus, !sin_plus, cos_PI2, sin_PI2.
  repeat split; ring.
Qed.

(* ---- the premises of the Gappa scripts, as they state them ---- *)

(* angle_fast.g: r the computed reduced argument, R the exact one, X the bound on |R − r| that the
   script proves first (2.62e-16); Sr, Cr, SR, CR there are sin r, cos r, sin R, cos R. *)
Theorem fast_path_premises : forall r R X,
  Rabs r <= 4 / 5 -> Rabs (R - r) <= X ->
  Rabs (sin r - sin_poly r) <= 119 / 10 ^ 21 /\ Rabs (cos r - cos_poly r) <= 474 / 10 ^ 23 /\
  Rabs (sin R - sin r) <= X /\ Rabs (cos R - cos r) <= X.
Proof.
  intros r R X Hr HX.
  split; [now apply sin_taylor_error |]. split; [now apply cos_taylor_error |].
  split; eapply Rle_trans; [apply sin_lipschitz | exact HX | apply cos_lipschitz | exact HX].
Qed.

(* angle_precise.g: r = r_hi, rho = R − r_hi with |rho| ≤ 1.33e-16 (proven by the script first);
   1.33e-16² ≤ 1.77e-32. *)
Lemma Rabs_sq_helper : forall v, Rabs v * Rabs v = v * v.
Proof. intro v. rewrite <- Rabs_mult. apply Rabs_pos_eq. apply Rle_0_sqr. Qed.

Theorem precise_path_premises : forall r rho,
  Rabs r <= 4 / 5 -> Rabs rho <= 133 / 10 ^ 18 ->
  Rabs (sin r - sin_poly r) <= 119 / 10 ^ 21 /\ Rabs (cos r - cos_poly r) <= 474 / 10 ^ 23 /\
  Rabs (sin (r + rho) - (sin r + rho * cos r)) <= 177 / 10 ^ 34 /\
  Rabs (cos (r + rho) - (cos r - rho * sin r)) <= 177 / 10 ^ 34.
Proof.
  intros r rho Hr Hrho.
  assert (H1 : Rabs rho <= 1) by lra.
  assert (Hsq : rho * rho <= 177 / 10 ^ 34).
  { pose proof (Rabs_pos rho). rewrite <- (Rabs_sq_helper rho). nra. }
  split; [now apply sin_taylor_error |]. split; [now apply cos_taylor_error |].
  split; eapply Rle_trans; [apply sin_second_order; exact H1 | exact Hsq | apply cos_second_order; exact H1 | exact Hsq].
Qed.
