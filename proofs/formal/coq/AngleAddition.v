(* AngleAddition.v — the bound behind the 16-bit kernels' table by angle addition
   (optimized/kernel-inl.h next_table_by_rotation, optimized/error_bounds.h "TABLE BY ANGLE
   ADDITION"). On a run of consecutive positions the binary64 table (c, s) ≈ A·(cos, sin)(φ) of one
   token is rotated by one position, c' = RN(c·c1 − RN(s·s1)), s' = RN(s·c1 + RN(c·s1)), with
   (c1, s1) ≈ (cos, sin) of one position's angle; the kernel keeps c' only where c' ± 2^-44·max(1, |A|)
   round to the same binary32, which gives the direct table's bits if |c' − c64| ≤ 2^-44·max(1, |A|).

   Proven here over the reals, the table's state as a point of the plane (z = (C, S), |z| = a = |A|):
   - rotation_step: one rotation. With the state within e of z, the step within ew of the unit
     (C1, S1), and each computed component within r of the rotation of the computed values,
     the new state is within e·(1 + ew) + a·ew + 1.415·r of the rotated z — the error vector is
     rotated too (|u·w| = |u|·|w| in the plane, complex_mul_norm), so it does not grow by √2 per
     step as a componentwise bound would.
   - rotation_run: 31 rotations from a direct table (each component within 5.2501·ε·a of
     A·(cos, sin): 4.25ε + ε(1 + 4.25ε) of error_bounds.h), steps within 4.25ε per component, each
     component rounded twice (r ≤ 2ε(1 + ε)·(a + e)·(1 + ew)): every state is within
     (7.43 + 8.86·k)·ε·a, k ≤ 31 the rotations done, so ≤ 282.1·ε·a.
   - table_by_rotation_gap: then |c' − c64| ≤ 288·ε·a ≤ 2^-44·max(1, a) for the direct entry c64
     (within 5.2501·ε·a of A·cos φ), likewise s'.
   The rounding facts (|RN(v) − v| ≤ ε·|v| in binary64's normal range) and δ = 4.25ε are premises,
   as in ErrorBound.v (gappa/angle_fast.g, gappa/rounding_f64.g). *)

From Coq Require Import Reals Lra Lia.
Open Scope R_scope.

Lemma complex_mul_norm : forall a b c d,
  (a * c - b * d) * (a * c - b * d) + (a * d + b * c) * (a * d + b * c) = (a * a + b * b) * (c * c + d * d).
Proof. intros. ring. Qed.

Lemma Rabs_sqr_eq : forall v, Rabs v * Rabs v = v * v.
Proof. intro v. rewrite <- Rabs_mult. apply Rabs_right. pose proof (Rle_0_sqr v). unfold Rsqr in *. lra. Qed.

Lemma sq_le : forall a b, 0 <= b -> a * a <= b * b -> a <= b.
Proof. intros a b Hb H. nra. Qed.

(* The triangle inequality in the plane, with squared norms. *)
Lemma plane_triangle : forall u1 u2 v1 v2 U V, 0 <= U -> 0 <= V ->
  u1 * u1 + u2 * u2 <= U * U -> v1 * v1 + v2 * v2 <= V * V ->
  (u1 + v1) * (u1 + v1) + (u2 + v2) * (u2 + v2) <= (U + V) * (U + V).
Proof.
  intros u1 u2 v1 v2 U V HU HV Hu Hv.
  assert (Hcs : (u1 * v1 + u2 * v2) * (u1 * v1 + u2 * v2) <= (u1 * u1 + u2 * u2) * (v1 * v1 + v2 * v2)).
  { assert (0 <= (u1 * v2 - u2 * v1) * (u1 * v2 - u2 * v1)) by apply Rle_0_sqr. nra. }
  assert (Hu0 : 0 <= u1 * u1 + u2 * u2) by nra.
  assert (Hv0 : 0 <= v1 * v1 + v2 * v2) by nra.
  assert (Hprod : (u1 * u1 + u2 * u2) * (v1 * v1 + v2 * v2) <= (U * U) * (V * V))
    by (apply Rmult_le_compat; lra).
  assert (Hdot : u1 * v1 + u2 * v2 <= U * V).
  { apply sq_le; [nra |]. nra. }
  nra.
Qed.

Theorem rotation_step : forall a e ew r c s C S c1 s1 C1 S1 cn sn,
  0 <= a -> 0 <= e -> 0 <= ew -> 0 <= r ->
  C * C + S * S = a * a -> C1 * C1 + S1 * S1 = 1 ->
  (c - C) * (c - C) + (s - S) * (s - S) <= e * e ->
  (c1 - C1) * (c1 - C1) + (s1 - S1) * (s1 - S1) <= ew * ew ->
  Rabs (cn - (c * c1 - s * s1)) <= r -> Rabs (sn - (s * c1 + c * s1)) <= r ->
  (cn - (C * C1 - S * S1)) * (cn - (C * C1 - S * S1)) + (sn - (S * C1 + C * S1)) * (sn - (S * C1 + C * S1))
    <= (e * (1 + ew) + a * ew + 1415 / 1000 * r) * (e * (1 + ew) + a * ew + 1415 / 1000 * r).
Proof.
  intros a e ew r c s C S c1 s1 C1 S1 cn sn Ha He Hew Hr Hz Hw Hez Hew2 Hc Hs.
  (* |w̃| ≤ 1 + ew *)
  assert (Hw1 : c1 * c1 + s1 * s1 <= (1 + ew) * (1 + ew)).
  { replace c1 with (C1 + (c1 - C1)) by ring. replace s1 with (S1 + (s1 - S1)) by ring.
    apply plane_triangle; lra. }
  (* the error vector rotated by w̃ *)
  set (u1 := (c - C) * c1 - (s - S) * s1).
  set (u2 := (c - C) * s1 + (s - S) * c1).
  assert (Hu : u1 * u1 + u2 * u2 <= (e * (1 + ew)) * (e * (1 + ew))).
  { unfold u1, u2. rewrite complex_mul_norm.
    assert (0 <= (c - C) * (c - C) + (s - S) * (s - S))
      by (pose proof (Rle_0_sqr (c - C)); pose proof (Rle_0_sqr (s - S)); unfold Rsqr in *; lra).
    assert (0 <= c1 * c1 + s1 * s1)
      by (pose proof (Rle_0_sqr c1); pose proof (Rle_0_sqr s1); unfold Rsqr in *; lra).
    replace ((e * (1 + ew)) * (e * (1 + ew))) with ((e * e) * ((1 + ew) * (1 + ew))) by ring.
    apply Rmult_le_compat; lra. }
  (* z times the step's error *)
  set (v1 := C * (c1 - C1) - S * (s1 - S1)).
  set (v2 := C * (s1 - S1) + S * (c1 - C1)).
  assert (Hv : v1 * v1 + v2 * v2 <= (a * ew) * (a * ew)).
  { unfold v1, v2. rewrite complex_mul_norm, Hz.
    replace ((a * ew) * (a * ew)) with ((a * a) * (ew * ew)) by ring.
    apply Rmult_le_compat_l; [pose proof (Rle_0_sqr a); unfold Rsqr in *; lra | lra]. }
  (* the roundings *)
  set (t1 := cn - (c * c1 - s * s1)).
  set (t2 := sn - (s * c1 + c * s1)).
  assert (Ht : t1 * t1 + t2 * t2 <= (1415 / 1000 * r) * (1415 / 1000 * r)).
  { assert (Ht1 : t1 * t1 <= r * r).
    { rewrite <- (Rabs_sqr_eq t1). apply Rmult_le_compat; try apply Rabs_pos; exact Hc. }
    assert (Ht2 : t2 * t2 <= r * r).
    { rewrite <- (Rabs_sqr_eq t2). apply Rmult_le_compat; try apply Rabs_pos; exact Hs. }
    nra. }
  replace (cn - (C * C1 - S * S1)) with (t1 + (u1 + v1)) by (unfold t1, u1, v1; ring).
  replace (sn - (S * C1 + C * S1)) with (t2 + (u2 + v2)) by (unfold t2, u2, v2; ring).
  replace (e * (1 + ew) + a * ew + 1415 / 1000 * r) with (1415 / 1000 * r + (e * (1 + ew) + a * ew)) by ring.
  assert (0 <= e * (1 + ew)) by (apply Rmult_le_pos; lra).
  assert (0 <= a * ew) by (apply Rmult_le_pos; lra).
  apply plane_triangle; [lra | lra | exact Ht |].
  apply plane_triangle; [lra | lra | exact Hu | exact Hv].
Qed.

Definition eps64 : R := / 2 ^ 53.

Lemma eps64_range : 0 < eps64 /\ eps64 <= / 10 ^ 15.
Proof.
  unfold eps64. split.
  - apply Rinv_0_lt_compat, pow_lt. lra.
  - apply Rinv_le_contravar; [apply pow_lt; lra |]. simpl. lra.
Qed.

(* The two roundings of one component: p = RN(y·b) and out = RN(x·a' − p) (or + p), each within
   ε of its exact value, for a state (x, y) of norm ≤ Z and a step (a', b) of norm ≤ W. *)
Theorem rounding_term : forall x y a' b p out Z W,
  0 <= Z -> 0 <= W -> x * x + y * y <= Z * Z -> a' * a' + b * b <= W * W ->
  Rabs (p - y * b) <= eps64 * Rabs (y * b) ->
  Rabs (out - (x * a' - p)) <= eps64 * Rabs (x * a' - p) ->
  Rabs (out - (x * a' - y * b)) <= 2 * eps64 * (1 + eps64) * (Z * W).
Proof.
  intros x y a' b p out Z W HZ HW Hxy Hab Hp Hout.
  destruct eps64_range as [He _].
  assert (Hy : Rabs y <= Z) by (apply sq_le; [exact HZ |]; rewrite Rabs_sqr_eq;
    pose proof (Rle_0_sqr x); unfold Rsqr in *; lra).
  assert (Hb : Rabs b <= W) by (apply sq_le; [exact HW |]; rewrite Rabs_sqr_eq;
    pose proof (Rle_0_sqr a'); unfold Rsqr in *; lra).
  assert (Hyb : Rabs (y * b) <= Z * W)
    by (rewrite Rabs_mult; apply Rmult_le_compat; try apply Rabs_pos; assumption).
  assert (Hdot : Rabs (x * a' - y * b) <= Z * W).
  { apply sq_le; [apply Rmult_le_pos; assumption |]. rewrite Rabs_sqr_eq.
    assert (0 <= (x * b + y * a') * (x * b + y * a')) by apply Rle_0_sqr.
    assert (Hn : (x * a' - y * b) * (x * a' - y * b) + (x * b + y * a') * (x * b + y * a')
                 = (x * x + y * y) * (a' * a' + b * b)) by ring.
    assert ((x * x + y * y) * (a' * a' + b * b) <= (Z * Z) * (W * W)).
    { apply Rmult_le_compat; try lra.
      - pose proof (Rle_0_sqr x); pose proof (Rle_0_sqr y); unfold Rsqr in *; lra.
      - pose proof (Rle_0_sqr a'); pose proof (Rle_0_sqr b); unfold Rsqr in *; lra. }
    nra. }
  assert (Hxp : Rabs (x * a' - p) <= (1 + eps64) * (Z * W)).
  { replace (x * a' - p) with ((x * a' - y * b) - (p - y * b)) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. rewrite Rabs_Ropp. nra. }
  assert (E1 : eps64 * Rabs (x * a' - p) <= eps64 * ((1 + eps64) * (Z * W))) by (apply Rmult_le_compat_l; lra).
  assert (E2 : eps64 * Rabs (y * b) <= eps64 * (Z * W)) by (apply Rmult_le_compat_l; lra).
  assert (E3 : 0 <= eps64 * eps64 * (Z * W)) by (apply Rmult_le_pos; [nra | apply Rmult_le_pos; assumption]).
  replace (out - (x * a' - y * b)) with ((out - (x * a' - p)) - (p - y * b)) by ring.
  eapply Rle_trans; [apply Rabs_triang |]. rewrite Rabs_Ropp. nra.
Qed.

(* A direct table entry pair within d of A·(cos, sin) is a state within √2·d. *)
Lemma componentwise_norm : forall u v d D, 0 <= d -> 2 * (d * d) <= D * D ->
  Rabs u <= d -> Rabs v <= d -> u * u + v * v <= D * D.
Proof.
  intros u v d D Hd HD Hu Hv.
  assert (u * u <= d * d) by (rewrite <- Rabs_sqr_eq; apply Rmult_le_compat; try apply Rabs_pos; assumption).
  assert (v * v <= d * d) by (rewrite <- Rabs_sqr_eq; apply Rmult_le_compat; try apply Rabs_pos; assumption).
  lra.
Qed.

(* 31 rotations from a direct table: the state error after k ≤ 31 rotations. e k is the distance of
   the k-th state from A·e^{iφ_k}, r k the rounding bound of rotation k (rounding_term with
   Z = a + e k, W = 1 + ew). *)
Theorem rotation_run : forall (a ew : R) (e r : nat -> R),
  0 <= a -> 0 <= ew -> ew <= 602 / 100 * eps64 ->
  (forall k, 0 <= e k) ->
  e 0%nat <= 743 / 100 * eps64 * a ->
  (forall k, e (S k) <= e k * (1 + ew) + a * ew + 1415 / 1000 * r k) ->
  (forall k, r k <= 2 * eps64 * (1 + eps64) * ((a + e k) * (1 + ew))) ->
  forall k, (k <= 31)%nat -> e k <= (743 / 100 + 886 / 100 * INR k) * eps64 * a.
Proof.
  intros a ew e r Ha Hew Hew_small He0 Hstart Hstep Hr.
  destruct eps64_range as [Hpos Hsmall].
  assert (Hsmall' : eps64 <= / 1000000000000000) by (simpl in Hsmall; lra).
  induction k as [| k IH]; intro Hk.
  - simpl. lra.
  - assert (Hk' : (k <= 31)%nat) by lia.
    specialize (IH Hk').
    set (K := 743 / 100 + 886 / 100 * INR k) in *.
    assert (HK0 : 0 <= K) by (unfold K; pose proof (pos_INR k); lra).
    assert (HK : K <= 274).
    { unfold K. assert (INR k <= 30) by (replace 30 with (INR 30) by (simpl; lra); apply le_INR; lia). lra. }
    set (E := e k) in *.
    assert (HE0 : 0 <= E) by apply He0.
    assert (H1 : E * (1 + ew) <= (K * eps64 * a) * (1 + 602 / 100 * eps64))
      by (apply Rmult_le_compat; lra).
    assert (H2 : a * ew <= a * (602 / 100 * eps64)) by (apply Rmult_le_compat_l; lra).
    assert (H3 : r k <= 2 * eps64 * (1 + eps64) * ((a + K * eps64 * a) * (1 + 602 / 100 * eps64))).
    { pose proof (Hr k) as Hrk. fold E in Hrk.
      eapply Rle_trans; [exact Hrk |]. apply Rmult_le_compat_l; [nra |].
      apply Rmult_le_compat; lra. }
    (* the numbers: K·6.02ε + 6.02 + 2.83·(1 + ε)(1 + Kε)(1 + 6.02ε) ≤ K + 8.86 *)
    assert (HKe : K * eps64 <= 274 / 1000000000000000) by nra.
    assert (Hprod : (1 + eps64) * (1 + K * eps64) * (1 + 602 / 100 * eps64) <= 1 + 1 / 1000000000000).
    { assert (A1 : (1 + eps64) * (1 + K * eps64) <= (1 + / 1000000000000000) * (1 + 274 / 1000000000000000))
        by (apply Rmult_le_compat; nra).
      assert (A2 : (1 + eps64) * (1 + K * eps64) * (1 + 602 / 100 * eps64)
                   <= (1 + / 1000000000000000) * (1 + 274 / 1000000000000000) * (1 + 602 / 100 * / 1000000000000000))
        by (apply Rmult_le_compat; nra).
      lra. }
    assert (Hnum : K * (1 + 602 / 100 * eps64) + 602 / 100 + 2830 / 1000 * ((1 + eps64) * (1 + K * eps64) * (1 + 602 / 100 * eps64))
                   <= K + 886 / 100) by nra.
    assert (Hsum : e (S k) <= eps64 * a * (K * (1 + 602 / 100 * eps64) + 602 / 100
                     + 2830 / 1000 * ((1 + eps64) * (1 + K * eps64) * (1 + 602 / 100 * eps64)))).
    { pose proof (Hstep k) as Hsk. fold E in Hsk.
      eapply Rle_trans; [exact Hsk |].
      assert (1415 / 1000 * r k <= 1415 / 1000 * (2 * eps64 * (1 + eps64) * ((a + K * eps64 * a) * (1 + 602 / 100 * eps64))))
        by (apply Rmult_le_compat_l; lra).
      assert (Heq : 1415 / 1000 * (2 * eps64 * (1 + eps64) * ((a + K * eps64 * a) * (1 + 602 / 100 * eps64)))
                    = eps64 * a * (2830 / 1000 * ((1 + eps64) * (1 + K * eps64) * (1 + 602 / 100 * eps64)))) by field.
      nra. }
    rewrite S_INR. fold K.
    replace ((743 / 100 + 886 / 100 * (INR k + 1)) * eps64 * a) with (eps64 * a * (K + 886 / 100)) by (unfold K; ring).
    eapply Rle_trans; [exact Hsum |]. apply Rmult_le_compat_l; [nra | exact Hnum].
Qed.

(* The gap the rounding test needs: a rotated entry ct within e31 ≤ 282.1·ε·a of A·cos φ (a
   component of the state error), the direct entry cd within 5.2501·ε·a of it: |ct − cd| ≤ 2^-44·max(1, a). *)
Theorem table_by_rotation_gap : forall a e31 ct cd C,
  0 <= a -> 0 <= e31 -> e31 <= 2821 / 10 * eps64 * a ->
  (ct - C) * (ct - C) <= e31 * e31 -> Rabs (cd - C) <= 52501 / 10000 * eps64 * a ->
  Rabs (ct - cd) <= / 2 ^ 44 * Rmax 1 a.
Proof.
  intros a e31 ct cd C Ha He Hbound Hct Hcd.
  destruct eps64_range as [Hpos _].
  assert (Hct' : Rabs (ct - C) <= e31) by (apply sq_le; [exact He |]; rewrite Rabs_sqr_eq; exact Hct).
  replace (ct - cd) with ((ct - C) - (cd - C)) by ring.
  eapply Rle_trans; [apply Rabs_triang |]. rewrite Rabs_Ropp.
  assert (H512 : / 2 ^ 44 = 512 * eps64) by (unfold eps64; simpl; field).
  rewrite H512.
  assert (a <= Rmax 1 a) by apply Rmax_r.
  nra.
Qed.

(* The premises of rotation_run from the direct path's bounds (error_bounds.h steps 2′–3′ and the
   attention factor's rounding): a direct table's entries within 5.2501·ε·a per component are a
   state within 7.43·ε·a, and the step's entries within 4.25·ε a step within 6.02·ε. *)
Theorem direct_state_error : forall a c s C S, 0 <= a ->
  Rabs (c - C) <= 52501 / 10000 * eps64 * a -> Rabs (s - S) <= 52501 / 10000 * eps64 * a ->
  (c - C) * (c - C) + (s - S) * (s - S) <= (743 / 100 * eps64 * a) * (743 / 100 * eps64 * a).
Proof.
  intros a c s C S Ha Hc Hs. destruct eps64_range as [Hpos _].
  apply componentwise_norm with (d := 52501 / 10000 * eps64 * a); try assumption.
  - apply Rmult_le_pos; [nra | exact Ha].
  - assert (0 <= eps64 * a) by nra. nra.
Qed.

Theorem step_error : forall c1 s1 C1 S1,
  Rabs (c1 - C1) <= 425 / 100 * eps64 -> Rabs (s1 - S1) <= 425 / 100 * eps64 ->
  (c1 - C1) * (c1 - C1) + (s1 - S1) * (s1 - S1) <= (602 / 100 * eps64) * (602 / 100 * eps64).
Proof.
  intros c1 s1 C1 S1 Hc Hs. destruct eps64_range as [Hpos _].
  apply componentwise_norm with (d := 425 / 100 * eps64); try assumption; nra.
Qed.
