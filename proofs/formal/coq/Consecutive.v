(* Consecutive.v — the bound of reference/consecutive.h (kConsecutiveError = 2^-92): the reference's
   cos·A and sin·A on consecutive positions by angle addition in double-double
   (reference/consecutive.cpp). Per pair the state z ≈ A·e^{±ipθ} (a point of the plane, |z| = a = |A|)
   is seeded by fast_trig's cos_sin_of_multiple times A (each component within 2^-96·a,
   rope.cpp kFastPairError) and advanced by the step w ≈ e^{±iθ} (MPFR at 256 bits split into
   double-doubles: each component within 1.0001·2^-106 for |θ| ≤ 2^40):
     c' = add(multiply(c, C), −multiply(s, S)),  s' = add(multiply(s, C), multiply(c, S)).
   Proven here over the reals, with u2 = 2^-106 = u² (u = 2^-53):
   - dd_sum_term: one component. With multiply within 5u² of the exact product (JMP Algorithm 12)
     and add within (3u² + 13u³) of the exact sum (JMP Algorithm 6), a state of norm ≤ Z and a step
     of norm ≤ W, the component is within 8.01·u²·Z·W of x·a' + y·b (the difference: b negated).
   - seed_state_error, step_state_error: the componentwise bounds as norms (1449·u²·a and 1.415·u²).
   - consecutive_run: with AngleAddition.rotation_step's recurrence, every state of a block after
     k ≤ 1024 steps is within (1449 + 12.76·k)·u²·a.
   - consecutive_block_bound: for k ≤ 1023 (the K − 1 = 1023 steps of kConsecutiveBlock = 1024),
     each component within 2^-92·a.
   Premises, as in fast_trig.g: the JMP bounds (cited, Joldes–Muller–Popescu, ACM TOMS 44(2), 2017)
   and no underflow in the double-double operations (consecutive.cpp requires |A| ≥ 2^-500 and
   |c|, |s| ≥ 2^-60·|A| of a state before it is used). *)

From Coq Require Import Reals Lra Lia.
From RopeCheck Require Import AngleAddition.
Open Scope R_scope.

Definition u2 : R := / 2 ^ 106.

Lemma u2_range : 0 < u2 /\ u2 <= / 10 ^ 31.
Proof.
  unfold u2. split.
  - apply Rinv_0_lt_compat, pow_lt. lra.
  - apply Rinv_le_contravar; [apply pow_lt; lra |]. simpl. lra.
Qed.

(* Cauchy–Schwarz: |x·a'| + |y·b| ≤ |(x, y)|·|(a', b)|. *)
Lemma dot_abs_bound : forall x y a' b Z W, 0 <= Z -> 0 <= W ->
  x * x + y * y <= Z * Z -> a' * a' + b * b <= W * W ->
  Rabs (x * a') + Rabs (y * b) <= Z * W.
Proof.
  intros x y a' b Z W HZ HW Hxy Hab.
  rewrite !Rabs_mult.
  set (X := Rabs x). set (Y := Rabs y). set (P := Rabs a'). set (Q := Rabs b).
  assert (HX : X * X = x * x) by apply Rabs_sqr_eq.
  assert (HY : Y * Y = y * y) by apply Rabs_sqr_eq.
  assert (HP : P * P = a' * a') by apply Rabs_sqr_eq.
  assert (HQ : Q * Q = b * b) by apply Rabs_sqr_eq.
  assert (0 <= X) by apply Rabs_pos. assert (0 <= Y) by apply Rabs_pos.
  assert (0 <= P) by apply Rabs_pos. assert (0 <= Q) by apply Rabs_pos.
  apply sq_le; [apply Rmult_le_pos; assumption |].
  assert (0 <= (X * Q - Y * P) * (X * Q - Y * P)) by apply Rle_0_sqr.
  assert (Hn : (X * X + Y * Y) * (P * P + Q * Q) <= (Z * Z) * (W * W)).
  { apply Rmult_le_compat; nra. }
  nra.
Qed.

Theorem dd_sum_term : forall x y a' b p1 p2 out Z W,
  0 <= Z -> 0 <= W -> x * x + y * y <= Z * Z -> a' * a' + b * b <= W * W ->
  Rabs (p1 - x * a') <= 5 * u2 * Rabs (x * a') ->
  Rabs (p2 - y * b) <= 5 * u2 * Rabs (y * b) ->
  Rabs (out - (p1 + p2)) <= (3 * u2 + 13 * u2 * eps64) * Rabs (p1 + p2) ->
  Rabs (out - (x * a' + y * b)) <= 801 / 100 * u2 * (Z * W).
Proof.
  intros x y a' b p1 p2 out Z W HZ HW Hxy Hab H1 H2 H3.
  destruct u2_range as [Hu Hus]. destruct eps64_range as [He Hes].
  assert (Hus' : u2 <= / 10000000000000000000000000000000) by (simpl in Hus; lra).
  assert (Hes' : eps64 <= / 1000000000000000) by (simpl in Hes; lra).
  pose proof (dot_abs_bound x y a' b Z W HZ HW Hxy Hab) as HM.
  set (M := Rabs (x * a') + Rabs (y * b)) in *.
  assert (HM0 : 0 <= M) by (unfold M; pose proof (Rabs_pos (x * a')); pose proof (Rabs_pos (y * b)); lra).
  assert (Hp : Rabs (p1 + p2) <= (1 + 5 * u2) * M).
  { replace (p1 + p2) with ((p1 - x * a') + (p2 - y * b) + (x * a' + y * b)) by ring.
    pose proof (Rabs_triang ((p1 - x * a') + (p2 - y * b)) (x * a' + y * b)).
    pose proof (Rabs_triang (p1 - x * a') (p2 - y * b)).
    pose proof (Rabs_triang (x * a') (y * b)).
    unfold M. nra. }
  assert (Hc : 0 <= 3 * u2 + 13 * u2 * eps64) by nra.
  assert (H3' : Rabs (out - (p1 + p2)) <= (3 * u2 + 13 * u2 * eps64) * ((1 + 5 * u2) * M)).
  { eapply Rle_trans; [exact H3 |]. apply Rmult_le_compat_l; assumption. }
  assert (Hk : (3 * u2 + 13 * u2 * eps64) * (1 + 5 * u2) <= 301 / 100 * u2).
  { assert (13 * u2 * eps64 <= / 1000 * u2) by nra.
    assert (u2 * u2 <= / 10000000000000000000000000000000 * u2) by nra.
    nra. }
  assert (H3'' : Rabs (out - (p1 + p2)) <= 301 / 100 * u2 * M).
  { eapply Rle_trans; [exact H3' |].
    replace ((3 * u2 + 13 * u2 * eps64) * ((1 + 5 * u2) * M)) with (((3 * u2 + 13 * u2 * eps64) * (1 + 5 * u2)) * M) by ring.
    apply Rmult_le_compat_r; assumption. }
  replace (out - (x * a' + y * b)) with ((out - (p1 + p2)) + ((p1 - x * a') + (p2 - y * b))) by ring.
  pose proof (Rabs_triang (out - (p1 + p2)) ((p1 - x * a') + (p2 - y * b))).
  pose proof (Rabs_triang (p1 - x * a') (p2 - y * b)).
  assert (801 / 100 * u2 * M <= 801 / 100 * u2 * (Z * W)) by (apply Rmult_le_compat_l; nra).
  unfold M in *. nra.
Qed.

(* The seed's components within 2^-96·a = 1024·u²·a: a state within 1449·u²·a. *)
Theorem seed_state_error : forall a c s C S, 0 <= a ->
  Rabs (c - C) <= 1024 * u2 * a -> Rabs (s - S) <= 1024 * u2 * a ->
  (c - C) * (c - C) + (s - S) * (s - S) <= (1449 * u2 * a) * (1449 * u2 * a).
Proof.
  intros a c s C S Ha Hc Hs. destruct u2_range as [Hu _].
  apply componentwise_norm with (d := 1024 * u2 * a); try assumption.
  - apply Rmult_le_pos; [lra | exact Ha].
  - assert (0 <= u2 * a) by nra. nra.
Qed.

(* The step's components within 1.0001·u²: a step within 1.415·u². *)
Theorem step_state_error : forall c1 s1 C1 S1,
  Rabs (c1 - C1) <= 10001 / 10000 * u2 -> Rabs (s1 - S1) <= 10001 / 10000 * u2 ->
  (c1 - C1) * (c1 - C1) + (s1 - S1) * (s1 - S1) <= (1415 / 1000 * u2) * (1415 / 1000 * u2).
Proof.
  intros c1 s1 C1 S1 Hc Hs. destruct u2_range as [Hu _].
  apply componentwise_norm with (d := 10001 / 10000 * u2); try assumption; nra.
Qed.

(* A block's run: e k is the distance of the k-th state from A·e^{i(p0+k)θ}, r k the bound of
   step k's components (dd_sum_term with Z = a + e k, W = 1 + ew); the recurrence is
   AngleAddition.rotation_step's. *)
Theorem consecutive_run : forall (a ew : R) (e r : nat -> R),
  0 <= a -> 0 <= ew -> ew <= 1415 / 1000 * u2 ->
  (forall k, 0 <= e k) ->
  e 0%nat <= 1449 * u2 * a ->
  (forall k, e (S k) <= e k * (1 + ew) + a * ew + 1415 / 1000 * r k) ->
  (forall k, r k <= 801 / 100 * u2 * ((a + e k) * (1 + ew))) ->
  forall k, (k <= 1024)%nat -> e k <= (1449 + 1276 / 100 * INR k) * u2 * a.
Proof.
  intros a ew e r Ha Hew Hew_small He0 Hstart Hstep Hr.
  destruct u2_range as [Hpos Hsmall].
  assert (Hsmall' : u2 <= / 10000000000000000000000000000000) by (simpl in Hsmall; lra).
  induction k as [| k IH]; intro Hk.
  - simpl. lra.
  - assert (Hk' : (k <= 1024)%nat) by lia.
    specialize (IH Hk').
    set (K := 1449 + 1276 / 100 * INR k) in *.
    assert (HK0 : 0 <= K) by (unfold K; pose proof (pos_INR k); lra).
    assert (HK : K <= 14503).
    { unfold K. assert (INR k <= 1023) by (replace 1023 with (INR 1023) by (simpl; lra); apply le_INR; lia). lra. }
    set (E := e k) in *.
    assert (HE0 : 0 <= E) by apply He0.
    assert (H1 : E * (1 + ew) <= (K * u2 * a) * (1 + 1415 / 1000 * u2)) by (apply Rmult_le_compat; lra).
    assert (H2 : a * ew <= a * (1415 / 1000 * u2)) by (apply Rmult_le_compat_l; lra).
    assert (HKu : K * u2 <= 14503 * / 10000000000000000000000000000000) by nra.
    assert (Hprod : (1 + K * u2) * (1 + 1415 / 1000 * u2) <= 1 + / 1000000000000000000000000).
    { assert (0 <= K * u2) by nra.
      assert (A1 : (1 + K * u2) * (1 + 1415 / 1000 * u2)
                   <= (1 + 14503 * / 10000000000000000000000000000000) * (1 + 1415 / 1000 * / 10000000000000000000000000000000))
        by (apply Rmult_le_compat; nra).
      lra. }
    assert (H3 : r k <= 801 / 100 * u2 * a * ((1 + K * u2) * (1 + 1415 / 1000 * u2))).
    { pose proof (Hr k) as Hrk. fold E in Hrk.
      eapply Rle_trans; [exact Hrk |].
      replace (801 / 100 * u2 * a * ((1 + K * u2) * (1 + 1415 / 1000 * u2)))
        with (801 / 100 * u2 * ((a + K * u2 * a) * (1 + 1415 / 1000 * u2))) by ring.
      apply Rmult_le_compat_l; [nra |]. apply Rmult_le_compat; lra. }
    (* the numbers: K·1.415u² + 1.415 + 11.334·(1 + Ku²)(1 + 1.415u²) ≤ 12.76 *)
    assert (Hnum : K * (1 + 1415 / 1000 * u2) + 1415 / 1000 + 1415 / 1000 * (801 / 100) * ((1 + K * u2) * (1 + 1415 / 1000 * u2))
                   <= K + 1276 / 100) by nra.
    assert (Hsum : e (S k) <= u2 * a * (K * (1 + 1415 / 1000 * u2) + 1415 / 1000
                     + 1415 / 1000 * (801 / 100) * ((1 + K * u2) * (1 + 1415 / 1000 * u2)))).
    { pose proof (Hstep k) as Hsk. fold E in Hsk.
      eapply Rle_trans; [exact Hsk |].
      assert (1415 / 1000 * r k <= 1415 / 1000 * (801 / 100 * u2 * a * ((1 + K * u2) * (1 + 1415 / 1000 * u2))))
        by (apply Rmult_le_compat_l; lra).
      nra. }
    rewrite S_INR. fold K.
    replace ((1449 + 1276 / 100 * (INR k + 1)) * u2 * a) with (u2 * a * (K + 1276 / 100)) by (unfold K; ring).
    eapply Rle_trans; [exact Hsum |]. apply Rmult_le_compat_l; [nra | exact Hnum].
Qed.

(* kConsecutiveError: after k ≤ 1023 steps each component is within 2^-92·a of A·cos, A·sin. *)
Theorem consecutive_block_bound : forall a ek k c s C S,
  0 <= a -> (k <= 1023)%nat -> 0 <= ek -> ek <= (1449 + 1276 / 100 * INR k) * u2 * a ->
  (c - C) * (c - C) + (s - S) * (s - S) <= ek * ek ->
  Rabs (c - C) <= / 2 ^ 92 * a /\ Rabs (s - S) <= / 2 ^ 92 * a.
Proof.
  intros a ek k c s C S Ha Hk He Hbound Hn.
  destruct u2_range as [Hpos _].
  assert (HK : INR k <= 1023) by (replace 1023 with (INR 1023) by (simpl; lra); apply le_INR; lia).
  assert (H92 : / 2 ^ 92 = 16384 * u2) by (unfold u2; simpl; field).
  rewrite H92.
  assert (Hek : ek <= 16384 * u2 * a).
  { eapply Rle_trans; [exact Hbound |]. apply Rmult_le_compat_r; [exact Ha |]. apply Rmult_le_compat_r; lra. }
  split.
  - apply sq_le; [nra |]. rewrite Rabs_sqr_eq.
    assert (0 <= (s - S) * (s - S)) by apply Rle_0_sqr.
    assert (ek * ek <= (16384 * u2 * a) * (16384 * u2 * a)) by (apply Rmult_le_compat; lra).
    lra.
  - apply sq_le; [nra |]. rewrite Rabs_sqr_eq.
    assert (0 <= (c - C) * (c - C)) by apply Rle_0_sqr.
    assert (ek * ek <= (16384 * u2 * a) * (16384 * u2 * a)) by (apply Rmult_le_compat; lra).
    lra.
Qed.
