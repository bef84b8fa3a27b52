(* FusedNorm.v — the norm's pieces of docs/fused-bounds.md that Fused.v leaves out: the sum in any
   (tree) order, the norm after the rotation, and the LayerNorm (Cohere's qk-norm).

   Model as Fused.v's (each rounding relative, |fl(v) - v| <= w*|v|, no underflow inside the norm).

   Steps:
     tree_sum_bound       a sum of computed leaves (each within c relative) in any binary-tree order
                          (sequential, pairwise, a warp shuffle) is within ((1 + c)(1 + w)^depth - 1)
                          times the sum of |leaves|; depth <= leaves - 1 (tree_depth_lt_leaves), so
                          every order of d terms is covered by the factor of the sequential one
                          (tree_sum_any_order: for the squares, c = w, the gamma_{d+1} of Fused.v);
     pair_sq_perturb      a pair moved by a vector of norm <= k*rho changes its square norm by at most
                          ((1 + k)^2 - 1)*rho^2 (2-D Cauchy-Schwarz);
     pair_error_norm      components within E give an error vector of norm <= sqrt 2 * E;
     rsum_rel             relative bounds of the terms hold for their sums;
     norm_after_squares   the sum of squares of the computed rotation (components within kc*rho_j)
                          within ((1 + sqrt 2*kc)^2 - 1) of the exact one (the norm after: kc = 4w);
     perturbed_element_bound  a normalized element whose input is off by E: nu*|y| + (1 + nu)*|w'|*E*R
                          (norm after: E the rotation's error; LayerNorm: the centring's);
     layernorm_centred_squares  the computed centred squares bracket the exact ones (sum of c = 0);
     layernorm_rms_bracket (1 - w)*r <= r_c <= (1 + w)*(r + delta);
     layernorm_inv_rms    the computed inverse rms within ((1 + er)/(1 - lambda) - 1)/r of 1/r,
                          lambda = w + (1 + w)*delta/r;
     layernorm_element_bound  each element within nu_L*|y| + (1 + nu_L)*|w'|*delta/r,
                          nu_L = (1 + w)^3*(1 + cw)*(1 + e_L) - 1. *)

From Coq Require Import Reals Lra Lia.
From RopeCheck Require Import Fused.

Open Scope R_scope.

Lemma sq_abs : forall a, Rabs a * Rabs a = a * a.
Proof. intro a. rewrite <- Rabs_mult. apply Rabs_pos_eq, Rle_0_sqr. Qed.

(* ---- sums in tree order ---- *)

Inductive tree : Type :=
  | Leaf : R -> tree
  | Node : tree -> tree -> tree.

Fixpoint tsum (t : tree) : R := match t with Leaf x => x | Node l r => tsum l + tsum r end.
Fixpoint tabs (t : tree) : R := match t with Leaf x => Rabs x | Node l r => tabs l + tabs r end.
Fixpoint depth (t : tree) : nat := match t with Leaf _ => O | Node l r => S (Nat.max (depth l) (depth r)) end.
Fixpoint leaves (t : tree) : nat := match t with Leaf _ => 1%nat | Node l r => (leaves l + leaves r)%nat end.

(* The computed sum: each leaf within c relative of its exact value (c = w: a rounded square; c = 0:
   the value itself), each node one rounding of the sum of its children's computed sums. *)
Inductive computed (w c : R) : tree -> R -> Prop :=
  | computed_leaf : forall x v, Rabs (v - x) <= c * Rabs x -> computed w c (Leaf x) v
  | computed_node : forall l r vl vr v, computed w c l vl -> computed w c r vr ->
      rel w (vl + vr) v -> computed w c (Node l r) v.

Lemma tabs_nonneg : forall t, 0 <= tabs t.
Proof. induction t; simpl; [apply Rabs_pos | lra]. Qed.

Lemma tsum_le_tabs : forall t, Rabs (tsum t) <= tabs t.
Proof.
  induction t; simpl; [lra |].
  eapply Rle_trans; [apply Rabs_triang | lra].
Qed.

Lemma pow_mono : forall w m n, 0 <= w -> (m <= n)%nat -> (1 + w) ^ m <= (1 + w) ^ n.
Proof. intros. apply Rle_pow; [lra | assumption]. Qed.

Theorem tree_sum_bound : forall w c t v, 0 <= w -> 0 <= c -> computed w c t v ->
  Rabs (v - tsum t) <= ((1 + c) * (1 + w) ^ depth t - 1) * tabs t.
Proof.
  intros w c t v Hw Hc H. induction H as [x v Hx | l r vl vr v Hl IHl Hr IHr Hv]; simpl.
  - replace ((1 + c) * 1 - 1) with c by ring. exact Hx.
  - set (h := Nat.max (depth l) (depth r)).
    set (K := (1 + c) * (1 + w) ^ h).
    assert (PK : 1 <= K).
    { unfold K. assert (1 <= (1 + w) ^ h) by (apply pow_R1_Rle; lra). nra. }
    assert (Kl : (1 + c) * (1 + w) ^ depth l <= K).
    { unfold K. apply Rmult_le_compat_l; [lra |]. apply pow_mono; [lra | apply Nat.le_max_l]. }
    assert (Kr : (1 + c) * (1 + w) ^ depth r <= K).
    { unfold K. apply Rmult_le_compat_l; [lra |]. apply pow_mono; [lra | apply Nat.le_max_r]. }
    pose proof (tabs_nonneg l) as Pl. pose proof (tabs_nonneg r) as Pr.
    assert (El : Rabs (vl - tsum l) <= (K - 1) * tabs l).
    { eapply Rle_trans; [exact IHl |]. apply Rmult_le_compat_r; lra. }
    assert (Er : Rabs (vr - tsum r) <= (K - 1) * tabs r).
    { eapply Rle_trans; [exact IHr |]. apply Rmult_le_compat_r; lra. }
    pose proof (tsum_le_tabs l) as Sl. pose proof (tsum_le_tabs r) as Sr.
    assert (Hs : Rabs (vl + vr) <= K * (tabs l + tabs r)).
    { replace (vl + vr) with (tsum l + tsum r + (vl - tsum l) + (vr - tsum r)) by ring.
      eapply Rle_trans; [apply Rabs_triang |].
      eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |].
      eapply Rle_trans; [apply Rplus_le_compat_r; apply Rplus_le_compat_r; apply Rabs_triang |]. lra. }
    unfold rel in Hv.
    assert (w * Rabs (vl + vr) <= w * (K * (tabs l + tabs r))) by (apply Rmult_le_compat_l; lra).
    replace ((1 + c) * ((1 + w) * (1 + w) ^ h) - 1) with ((1 + w) * K - 1) by (unfold K; ring).
    replace (v - (tsum l + tsum r)) with ((v - (vl + vr)) + (vl - tsum l) + (vr - tsum r)) by ring.
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |]. nra.
Qed.

Lemma tree_depth_lt_leaves : forall t, (depth t < leaves t)%nat.
Proof. induction t; simpl; lia. Qed.

(* Every order of n leaves: depth <= n - 1, so the factor (1 + c)(1 + w)^(n - 1) - 1 of the
   sequential sum covers the pairwise and every other tree. *)
Theorem tree_sum_any_order : forall w c t v n, 0 <= w -> 0 <= c -> computed w c t v ->
  (leaves t <= S n)%nat ->
  Rabs (v - tsum t) <= ((1 + c) * (1 + w) ^ n - 1) * tabs t.
Proof.
  intros w c t v n Hw Hc H Hn.
  eapply Rle_trans; [apply (tree_sum_bound w c t v Hw Hc H) |].
  apply Rmult_le_compat_r; [apply tabs_nonneg |].
  assert ((1 + w) ^ depth t <= (1 + w) ^ n).
  { apply pow_mono; [lra |]. pose proof (tree_depth_lt_leaves t). lia. }
  nra.
Qed.

(* ---- the norm after the rotation: the sum of squares of the computed rotation ---- *)

Lemma pair_sq_perturb : forall k z1 z2 e1 e2 rho, 0 <= k -> 0 <= rho ->
  z1 * z1 + z2 * z2 = rho * rho -> e1 * e1 + e2 * e2 <= (k * rho) * (k * rho) ->
  Rabs ((z1 + e1) * (z1 + e1) + (z2 + e2) * (z2 + e2) - rho * rho) <= ((1 + k) * (1 + k) - 1) * (rho * rho).
Proof.
  intros k z1 z2 e1 e2 rho Hk Hr Hz He.
  set (s := z1 * e1 + z2 * e2).
  assert (Hs2 : s * s <= (k * rho * rho) * (k * rho * rho)).
  { assert (s * s <= (z1 * z1 + z2 * z2) * (e1 * e1 + e2 * e2)).
    { unfold s. assert (0 <= (z1 * e2 - z2 * e1) * (z1 * e2 - z2 * e1)) by apply Rle_0_sqr. nra. }
    rewrite Hz in H. assert (0 <= rho * rho) by nra. nra. }
  assert (Hs : Rabs s <= k * rho * rho).
  { assert (0 <= k * rho * rho) by (apply Rmult_le_pos; [apply Rmult_le_pos |]; lra).
    assert (Rabs s <= Rabs (k * rho * rho)) by (apply Rsqr_le_abs_0; unfold Rsqr; exact Hs2).
    rewrite (Rabs_pos_eq (k * rho * rho)) in H0 by lra. exact H0. }
  replace ((z1 + e1) * (z1 + e1) + (z2 + e2) * (z2 + e2) - rho * rho)
    with (2 * s + (e1 * e1 + e2 * e2)) by (unfold s; rewrite <- Hz; ring).
  assert (0 <= e1 * e1 + e2 * e2) by (assert (0 <= e1 * e1) by apply Rle_0_sqr; assert (0 <= e2 * e2) by apply Rle_0_sqr; lra).
  eapply Rle_trans; [apply Rabs_triang |]. rewrite Rabs_mult, (Rabs_pos_eq 2) by lra.
  rewrite (Rabs_pos_eq (e1 * e1 + e2 * e2)) by lra. nra.
Qed.

Lemma pair_error_norm : forall E e1 e2, Rabs e1 <= E -> Rabs e2 <= E ->
  e1 * e1 + e2 * e2 <= (sqrt 2 * E) * (sqrt 2 * E).
Proof.
  intros E e1 e2 H1 H2.
  replace ((sqrt 2 * E) * (sqrt 2 * E)) with ((sqrt 2 * sqrt 2) * (E * E)) by ring.
  rewrite sqrt_sqrt by lra.
  assert (e1 * e1 <= E * E) by (pose proof (Rabs_pos e1); rewrite <- sq_abs; nra).
  assert (e2 * e2 <= E * E) by (pose proof (Rabs_pos e2); rewrite <- sq_abs; nra).
  lra.
Qed.

Fixpoint rsum (f : nat -> R) (n : nat) : R := match n with O => 0 | S k => rsum f k + f k end.

Lemma rsum_rel : forall K A B n, (forall j, (j < n)%nat -> Rabs (A j - B j) <= K * B j) ->
  Rabs (rsum A n - rsum B n) <= K * rsum B n.
Proof.
  intros K A B n. induction n as [| n IH]; intro H; simpl.
  - replace (0 - 0) with 0 by ring. rewrite Rabs_R0. lra.
  - assert (IH' : Rabs (rsum A n - rsum B n) <= K * rsum B n) by (apply IH; intros; apply H; lia).
    specialize (H n (Nat.lt_succ_diag_r n)).
    replace (rsum A n + A n - (rsum B n + B n)) with ((rsum A n - rsum B n) + (A n - B n)) by ring.
    eapply Rle_trans; [apply Rabs_triang | lra].
Qed.

(* Pair j of the exact rotation z (norm rho_j: the rotation keeps the input pair's) and of the
   computed one zh = z + e, each component within kc*rho_j (the careful rotation: kc = 4w, its
   underflow 3*2^-150 excluded as F2 excludes it): the computed sum of squares over the pairs is
   within ((1 + sqrt 2*kc)^2 - 1) of the exact one (the `after` term of fused/bounds.cpp). *)
Theorem norm_after_squares : forall kc z1 z2 e1 e2 rho n, 0 <= kc ->
  (forall j, (j < n)%nat -> 0 <= rho j /\ z1 j * z1 j + z2 j * z2 j = rho j * rho j /\
     Rabs (e1 j) <= kc * rho j /\ Rabs (e2 j) <= kc * rho j) ->
  Rabs (rsum (fun j => (z1 j + e1 j) * (z1 j + e1 j) + (z2 j + e2 j) * (z2 j + e2 j)) n
        - rsum (fun j => rho j * rho j) n)
    <= ((1 + sqrt 2 * kc) * (1 + sqrt 2 * kc) - 1) * rsum (fun j => rho j * rho j) n.
Proof.
  intros kc z1 z2 e1 e2 rho n Hkc H. apply rsum_rel. intros j Hj.
  destruct (H j Hj) as [Pr [Hz [H1 H2]]].
  assert (P2 : 0 <= sqrt 2) by apply sqrt_pos.
  apply pair_sq_perturb; [nra | lra | exact Hz |].
  replace (sqrt 2 * kc * rho j) with (sqrt 2 * (kc * rho j)) by ring.
  apply pair_error_norm; assumption.
Qed.

(* ---- an element normalized from a perturbed input ---- *)

(* The input of the normalization is xh, within E of the exact x (the computed rotation, norm after;
   the computed centred value, LayerNorm); otherwise as Fused.v rmsnorm_element_bound:
     |yh - x*wp*R| <= nu*|x*wp*R| + (1 + nu)*|wp|*E*R,  nu = (1 + w)^2*(1 + cw)*(1 + er) - 1. *)
Theorem perturbed_element_bound : forall w cw er x xh E wp wh rh R p yh,
  0 <= w -> 0 <= cw -> 0 <= er -> 0 <= R -> Rabs (xh - x) <= E ->
  Rabs (wh - wp) <= cw * Rabs wp -> Rabs (rh - R) <= er * Rabs R ->
  rel w (xh * rh) p -> rel w (p * wh) yh ->
  Rabs (yh - x * wp * R)
    <= ((1 + w) * (1 + w) * (1 + cw) * (1 + er) - 1) * Rabs (x * wp * R)
       + (1 + ((1 + w) * (1 + w) * (1 + cw) * (1 + er) - 1)) * Rabs wp * E * R.
Proof.
  intros w cw er x xh E wp wh rh R p yh Hw Hcw Her HR HE Hwh Hrh Hp Hyh.
  pose proof (rmsnorm_element_bound w cw er xh wp wh rh R p yh Hw Hcw Her Hwh Hrh Hp Hyh) as H.
  set (nu := (1 + w) * (1 + w) * (1 + cw) * (1 + er) - 1). fold nu in H.
  assert (Pnu : 0 <= nu).
  { unfold nu. assert (1 <= (1 + w) * (1 + w)) by nra. assert (1 <= (1 + w) * (1 + w) * (1 + cw)) by nra. nra. }
  assert (Hd : Rabs (xh * wp * R - x * wp * R) <= Rabs wp * E * R).
  { replace (xh * wp * R - x * wp * R) with ((xh - x) * wp * R) by ring.
    rewrite !Rabs_mult, (Rabs_pos_eq R) by lra.
    pose proof (Rabs_pos wp). replace (Rabs wp * E * R) with (E * Rabs wp * R) by ring.
    apply Rmult_le_compat_r; [lra |]. apply Rmult_le_compat_r; lra. }
  assert (Hx : Rabs (xh * wp * R) <= Rabs (x * wp * R) + Rabs wp * E * R).
  { replace (xh * wp * R) with (x * wp * R + (xh * wp * R - x * wp * R)) by ring.
    eapply Rle_trans; [apply Rabs_triang | lra]. }
  replace (yh - x * wp * R) with ((yh - xh * wp * R) + (xh * wp * R - x * wp * R)) by ring.
  eapply Rle_trans; [apply Rabs_triang |].
  assert (nu * Rabs (xh * wp * R) <= nu * (Rabs (x * wp * R) + Rabs wp * E * R)) by (apply Rmult_le_compat_l; lra).
  nra.
Qed.

(* ---- the LayerNorm ---- *)

Lemma rsum_linear : forall (c : nat -> R) d n,
  rsum (fun i => (c i - d) * (c i - d)) n = rsum (fun i => c i * c i) n - 2 * d * rsum c n + INR n * (d * d).
Proof.
  intros c d n. induction n as [| n IH]; [simpl; ring |].
  simpl rsum. rewrite IH. rewrite S_INR. ring.
Qed.

Lemma rsum_nonneg : forall f n, (forall i, (i < n)%nat -> 0 <= f i) -> 0 <= rsum f n.
Proof.
  intros f n. induction n as [| n IH]; intro H; simpl; [lra |].
  assert (0 <= rsum f n) by (apply IH; intros; apply H; lia). specialize (H n (Nat.lt_succ_diag_r n)). lra.
Qed.

Lemma rsum_le : forall f g n, (forall i, (i < n)%nat -> f i <= g i) -> rsum f n <= rsum g n.
Proof.
  intros f g n. induction n as [| n IH]; intro H; simpl; [lra |].
  assert (rsum f n <= rsum g n) by (apply IH; intros; apply H; lia). specialize (H n (Nat.lt_succ_diag_r n)). lra.
Qed.

Lemma rsum_scale : forall k f n, rsum (fun i => k * f i) n = k * rsum f n.
Proof. intros k f n. induction n as [| n IH]; simpl; [ring | rewrite IH; ring]. Qed.

(* The centred values c_i = x_i - mu (sum 0), the computed mean muh = mu + delta, and
   ch_i = fl(x_i - muh) = (c_i - delta)(1 + eps_i): the computed squares bracket the exact ones,
     (1 - w)^2 * sum c^2 <= sum ch^2 <= (1 + w)^2 * (sum c^2 + d*delta^2). *)
Theorem layernorm_centred_squares : forall w (c ch : nat -> R) delta n, 0 <= w <= 1 ->
  rsum c n = 0 -> (forall i, (i < n)%nat -> rel w (c i - delta) (ch i)) ->
  (1 - w) * (1 - w) * rsum (fun i => c i * c i) n <= rsum (fun i => ch i * ch i) n /\
  rsum (fun i => ch i * ch i) n <= (1 + w) * (1 + w) * (rsum (fun i => c i * c i) n + INR n * (delta * delta)).
Proof.
  intros w c ch delta n Hw Hsum Hch.
  assert (Hterm : forall i, (i < n)%nat ->
            (1 - w) * (1 - w) * ((c i - delta) * (c i - delta)) <= ch i * ch i /\
            ch i * ch i <= (1 + w) * (1 + w) * ((c i - delta) * (c i - delta))).
  { intros i Hi. specialize (Hch i Hi). unfold rel in Hch.
    set (a := c i - delta). fold a in Hch.
    assert (Ha : Rabs (ch i) <= (1 + w) * Rabs a).
    { replace (ch i) with (a + (ch i - a)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
    assert (Hb : (1 - w) * Rabs a <= Rabs (ch i)).
    { pose proof (Rabs_triang_inv a (a - ch i)). replace (a - (a - ch i)) with (ch i) in H by ring.
      rewrite Rabs_minus_sym in H. lra. }
    pose proof (Rabs_pos a). pose proof (Rabs_pos (ch i)).
    rewrite <- (sq_abs a), <- (sq_abs (ch i)). split.
    - assert (0 <= (1 - w) * Rabs a) by (apply Rmult_le_pos; lra).
      replace ((1 - w) * (1 - w) * (Rabs a * Rabs a)) with (((1 - w) * Rabs a) * ((1 - w) * Rabs a)) by ring.
      apply Rmult_le_compat; lra.
    - replace ((1 + w) * (1 + w) * (Rabs a * Rabs a)) with (((1 + w) * Rabs a) * ((1 + w) * Rabs a)) by ring.
      apply Rmult_le_compat; lra. }
  pose proof (rsum_linear c delta n) as L. rewrite Hsum in L.
  assert (Pd : 0 <= INR n * (delta * delta)) by (apply Rmult_le_pos; [apply pos_INR | apply Rle_0_sqr]).
  split.
  - eapply Rle_trans; [| apply rsum_le; intros i Hi; apply (proj1 (Hterm i Hi))].
    rewrite rsum_scale, L. assert (0 <= (1 - w) * (1 - w)) by nra. nra.
  - eapply Rle_trans; [apply rsum_le; intros i Hi; apply (proj2 (Hterm i Hi)) |].
    rewrite rsum_scale, L. lra.
Qed.

Lemma div_nonneg : forall a b, 0 <= a -> 0 < b -> 0 <= a / b.
Proof. intros a b Ha Hb. unfold Rdiv. apply Rmult_le_pos; [lra | left; apply Rinv_0_lt_compat; lra]. Qed.

Lemma sq_le : forall a b, 0 <= a -> 0 <= b -> a * a <= b * b -> a <= b.
Proof. intros a b Ha Hb H. destruct (Rle_or_lt a b) as [| Hlt]; [assumption |]. nra. Qed.

(* The exact denominator r = sqrt(S/d + eps) (S the exact centred squares) and the one of the
   computed centred values, r_c = sqrt(Sh/d + eps), bracketed by layernorm_centred_squares, D >= |delta|:
     (1 - w)*r <= r_c <= (1 + w)*(r + D). *)
Theorem layernorm_rms_bracket : forall w S Sh dd D eps r rc,
  0 <= w <= 1 -> 0 < dd -> 0 <= S -> 0 <= D -> 0 <= eps ->
  (1 - w) * (1 - w) * S <= Sh -> Sh <= (1 + w) * (1 + w) * (S + dd * (D * D)) ->
  0 < r -> r * r = S / dd + eps -> 0 < rc -> rc * rc = Sh / dd + eps ->
  (1 - w) * r <= rc /\ rc <= (1 + w) * (r + D).
Proof.
  intros w S Sh dd D eps r rc Hw Hd HS HD He Hlo Hhi Hr Hrr Hrc Hrcc.
  set (q := S / dd). set (qh := Sh / dd). fold q in Hrr. fold qh in Hrcc.
  assert (Pq : 0 <= q) by (unfold q; apply div_nonneg; lra).
  assert (Hq1 : (1 - w) * (1 - w) * q <= qh).
  { unfold q, qh. unfold Rdiv. replace ((1 - w) * (1 - w) * (S * / dd)) with (((1 - w) * (1 - w) * S) * / dd) by ring.
    apply Rmult_le_compat_r; [left; apply Rinv_0_lt_compat; lra | lra]. }
  assert (Hq2 : qh <= (1 + w) * (1 + w) * (q + D * D)).
  { unfold q, qh. unfold Rdiv.
    replace ((1 + w) * (1 + w) * (S * / dd + D * D)) with (((1 + w) * (1 + w) * (S + dd * (D * D))) * / dd) by (field; lra).
    apply Rmult_le_compat_r; [left; apply Rinv_0_lt_compat; lra | lra]. }
  assert (P1 : 0 <= (1 - w) * (1 - w) <= 1) by nra.
  split.
  - apply sq_le; [apply Rmult_le_pos; lra | lra |].
    replace ((1 - w) * r * ((1 - w) * r)) with ((1 - w) * (1 - w) * (r * r)) by ring. rewrite Hrr, Hrcc. nra.
  - apply sq_le; [lra | apply Rmult_le_pos; lra |].
    rewrite Hrcc.
    assert (qh + eps <= (1 + w) * (1 + w) * (r * r + D * D)) by (rewrite Hrr; nra).
    assert (r * r + D * D <= (r + D) * (r + D)) by nra.
    assert (0 <= (1 + w) * (1 + w)) by nra. nra.
Qed.

(* The computed inverse rms rh within er/r_c of 1/r_c (Fused.v rms_scale_bound, on the computed
   centred values), and r_c bracketed as above: with lambda = w + (1 + w)*D/r < 1,
     |rh - 1/r| <= ((1 + er)/(1 - lambda) - 1)/r. *)
Theorem layernorm_inv_rms : forall w D er r rc rh,
  0 <= w -> 0 <= D -> 0 <= er -> 0 < r -> 0 < rc ->
  (1 - w) * r <= rc -> rc <= (1 + w) * (r + D) ->
  w + (1 + w) * D / r < 1 ->
  Rabs (rh - / rc) <= er * / rc ->
  Rabs (rh - / r) <= ((1 + er) / (1 - (w + (1 + w) * D / r)) - 1) * / r.
Proof.
  intros w D er r rc rh Hw HD Her Hr Hrc Hlo Hhi Hl Hrh.
  set (l := w + (1 + w) * D / r). fold l in Hl.
  assert (Hlr : l * r = w * r + (1 + w) * D) by (unfold l; field; lra).
  assert (Pl : 0 <= l) by (unfold l; assert (0 <= (1 + w) * D / r) by (apply div_nonneg; nra); lra).
  assert (Hd : Rabs (rc - r) <= l * r).
  { rewrite Hlr. unfold Rabs. destruct (Rcase_abs (rc - r)); nra. }
  assert (Hrc1 : (1 - l) * r <= rc) by (unfold Rabs in Hd; destruct (Rcase_abs (rc - r)); nra).
  assert (Hinv : Rabs (/ rc - / r) <= l * / rc).
  { replace (/ rc - / r) with ((r - rc) * / r * / rc) by (field; lra).
    rewrite !Rabs_mult, Rabs_minus_sym, (Rabs_pos_eq (/ r)), (Rabs_pos_eq (/ rc))
      by (left; apply Rinv_0_lt_compat; lra).
    assert (Pi : 0 < / rc) by (apply Rinv_0_lt_compat; lra).
    assert (Rabs (rc - r) * / r <= l) by (apply (Rmult_le_reg_r r); [lra |]; field_simplify; [lra | lra]).
    apply Rmult_le_compat_r; lra. }
  assert (Hsum : Rabs (rh - / r) <= (er + l) * / rc).
  { replace (rh - / r) with ((rh - / rc) + (/ rc - / r)) by ring.
    eapply Rle_trans; [apply Rabs_triang | lra]. }
  assert (Hrc2 : / rc <= / ((1 - l) * r)) by (apply Rinv_le_contravar; [apply Rmult_lt_0_compat; lra | exact Hrc1]).
  replace (((1 + er) / (1 - l) - 1) * / r) with ((er + l) * / ((1 - l) * r)) by (field; split; lra).
  eapply Rle_trans; [exact Hsum |]. apply Rmult_le_compat_l; lra.
Qed.

(* One LayerNorm element: the computed mean muh within D of mu, ch = fl(x - muh), then as Fused.v
   rmsnorm_element_bound with rh within er of R = 1/r (er = e_L of layernorm_inv_rms). With
   y = (x - mu)*wp*R:
     |yh - y| <= nu_L*|y| + (1 + nu_L)*|wp|*D*R,  nu_L = (1 + w)^3*(1 + cw)*(1 + er) - 1. *)
Theorem layernorm_element_bound : forall w cw er x mu muh D ch wp wh rh R p yh,
  0 <= w -> 0 <= cw -> 0 <= er -> 0 <= R -> Rabs (muh - mu) <= D ->
  rel w (x - muh) ch -> Rabs (wh - wp) <= cw * Rabs wp -> Rabs (rh - R) <= er * Rabs R ->
  rel w (ch * rh) p -> rel w (p * wh) yh ->
  Rabs (yh - (x - mu) * wp * R)
    <= ((1 + w) * (1 + w) * (1 + w) * (1 + cw) * (1 + er) - 1) * Rabs ((x - mu) * wp * R)
       + (1 + w) * (1 + w) * (1 + w) * (1 + cw) * (1 + er) * Rabs wp * D * R.
Proof.
  intros w cw er x mu muh D ch wp wh rh R p yh Hw Hcw Her HR HD Hch Hwh Hrh Hp Hyh.
  set (E := w * Rabs (x - mu) + (1 + w) * D).
  assert (HE : Rabs (ch - (x - mu)) <= E).
  { unfold rel in Hch. unfold E.
    assert (Rabs (x - muh) <= Rabs (x - mu) + D).
    { replace (x - muh) with ((x - mu) - (muh - mu)) by ring.
      eapply Rle_trans; [apply Rabs_triang | rewrite Rabs_Ropp; lra]. }
    replace (ch - (x - mu)) with ((ch - (x - muh)) - (muh - mu)) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. rewrite Rabs_Ropp.
    assert (w * Rabs (x - muh) <= w * (Rabs (x - mu) + D)) by (apply Rmult_le_compat_l; lra). nra. }
  pose proof (perturbed_element_bound w cw er (x - mu) ch E wp wh rh R p yh Hw Hcw Her HR HE Hwh Hrh Hp Hyh) as H.
  set (nu := (1 + w) * (1 + w) * (1 + cw) * (1 + er) - 1). fold nu in H.
  assert (Hy : Rabs wp * Rabs (x - mu) * R = Rabs ((x - mu) * wp * R)).
  { rewrite !Rabs_mult, (Rabs_pos_eq R) by lra. ring. }
  replace ((1 + nu) * Rabs wp * E * R)
    with ((1 + nu) * w * (Rabs wp * Rabs (x - mu) * R) + (1 + nu) * (1 + w) * Rabs wp * D * R) in H by (unfold E; ring).
  rewrite Hy in H.
  replace ((1 + w) * (1 + w) * (1 + w) * (1 + cw) * (1 + er) - 1) with (nu + (1 + nu) * w) by (unfold nu; ring).
  replace ((1 + w) * (1 + w) * (1 + w) * (1 + cw) * (1 + er)) with ((1 + nu) * (1 + w)) by (unfold nu; ring).
  lra.
Qed.
