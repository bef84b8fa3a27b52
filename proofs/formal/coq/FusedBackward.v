(* FusedBackward.v — the backward bound of the fused RMSNorm -> RoPE (fused/README.md "Backward",
   derived by hand there and in docs/fused-bounds.md): its steps as lemmas over the relative
   rounding model of Fused.v (no underflow: the mu_w terms of the hand bound are added outside).

   Steps (fused/README.md "Backward", items 2-8):
     product_perturb      a computed product fl(xh*yh), xh within Ex (absolute) of x, yh within c
                          (relative) of y: |p - x*y| <= |y|*(((1 + c)(1 + w) - 1)*|x| + (1 + c)(1 + w)*Ex)
                          (items 3, 5, and the terms of 4 and 7);
     perturbed_tree_sum   terms computed within k*|t_j| + b_j, summed in any tree order (FusedNorm.v
                          tree_sum_bound, factor s = (1 + w)^depth - 1):
                          |sum - sum t| <= ((1 + s)(1 + k) - 1)*sum|t| + (1 + s)*sum b  (items 4, 7);
     backward_dx_bound    dxh = fl(fl(hh - xmh)*rh), hh within Eh of h, xmh within Ex of xm, rh within
                          er of R = 1/r: |dxh - (h - xm)*R| <= ((1 + er)(1 + w)^2 - 1)*|(h - xm)*R|
                          + (1 + er)(1 + w)^2*(Eh + Ex)*R  (item 6). *)

From Coq Require Import Reals Lra Lia.
From RopeCheck Require Import Fused FusedNorm.

Open Scope R_scope.

Theorem product_perturb : forall w c x xh Ex y yh p,
  0 <= w -> 0 <= c -> Rabs (xh - x) <= Ex -> Rabs (yh - y) <= c * Rabs y -> rel w (xh * yh) p ->
  Rabs (p - x * y) <= Rabs y * (((1 + c) * (1 + w) - 1) * Rabs x + (1 + c) * (1 + w) * Ex).
Proof.
  intros w c x xh Ex y yh p Hw Hc Hx Hy Hp. unfold rel in Hp.
  pose proof (Rabs_pos x) as Px. pose proof (Rabs_pos y) as Py.
  assert (PE : 0 <= Ex) by (pose proof (Rabs_pos (xh - x)); lra).
  assert (Hyh : Rabs yh <= (1 + c) * Rabs y).
  { replace yh with (y + (yh - y)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
  assert (Hxh : Rabs xh <= Rabs x + Ex).
  { replace xh with (x + (xh - x)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
  (* |xh*yh - x*y| <= |xh - x|*|yh| + |x|*|yh - y| *)
  assert (Hd : Rabs (xh * yh - x * y) <= Ex * ((1 + c) * Rabs y) + Rabs x * (c * Rabs y)).
  { replace (xh * yh - x * y) with ((xh - x) * yh + x * (yh - y)) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. rewrite !Rabs_mult.
    apply Rplus_le_compat; apply Rmult_le_compat; try apply Rabs_pos; lra. }
  assert (Hm : Rabs (xh * yh) <= (Rabs x + Ex) * ((1 + c) * Rabs y)).
  { rewrite Rabs_mult. apply Rmult_le_compat; try apply Rabs_pos; lra. }
  assert (w * Rabs (xh * yh) <= w * ((Rabs x + Ex) * ((1 + c) * Rabs y))) by (apply Rmult_le_compat_l; lra).
  replace (p - x * y) with ((p - xh * yh) + (xh * yh - x * y)) by ring.
  eapply Rle_trans; [apply Rabs_triang |]. nra.
Qed.

(* Terms t (the leaves of tt) computed as the leaves of pt (same shape), |p_j - t_j| <= e_j with e_j
   the leaves of bt: *)
Inductive same_shape : tree -> tree -> tree -> Prop :=
  | shape_leaf : forall t p b, Rabs (p - t) <= b -> 0 <= b -> same_shape (Leaf t) (Leaf p) (Leaf b)
  | shape_node : forall t1 t2 p1 p2 b1 b2, same_shape t1 p1 b1 -> same_shape t2 p2 b2 ->
      same_shape (Node t1 t2) (Node p1 p2) (Node b1 b2).

Lemma same_shape_sum : forall tt pt bt, same_shape tt pt bt ->
  Rabs (tsum pt - tsum tt) <= tsum bt /\ tabs pt <= tabs tt + tsum bt /\ 0 <= tsum bt.
Proof.
  intros tt pt bt H. induction H as [t p b Hp Hb | t1 t2 p1 p2 b1 b2 H1 [A1 [B1 C1]] H2 [A2 [B2 C2]]]; simpl.
  - split; [lra |]. split; [| lra].
    replace p with (t + (p - t)) by ring. eapply Rle_trans; [apply Rabs_triang | lra].
  - split; [| split; lra].
    replace (tsum p1 + tsum p2 - (tsum t1 + tsum t2)) with ((tsum p1 - tsum t1) + (tsum p2 - tsum t2)) by ring.
    eapply Rle_trans; [apply Rabs_triang | lra].
Qed.

(* The computed terms p_j within e_j = k*|t_j| + b_j of t_j (the leaves of bt, so sum e <= k*A + B
   with A = sum|t|, B = sum b), their sum computed in the tree order of pt (leaves exact: c = 0),
   within s = (1 + w)^depth - 1 of sum p (FusedNorm.v tree_sum_bound). *)
Theorem perturbed_tree_sum : forall w k tt pt bt v A B,
  0 <= w -> 0 <= k -> same_shape tt pt bt -> computed w 0 pt v ->
  A = tabs tt -> tsum bt <= k * A + B ->
  Rabs (v - tsum tt) <= ((1 + ((1 + w) ^ depth pt - 1)) * (1 + k) - 1) * A
                         + (1 + ((1 + w) ^ depth pt - 1)) * B.
Proof.
  intros w k tt pt bt v A B Hw Hk Hs Hc HA Hb.
  destruct (same_shape_sum tt pt bt Hs) as [Hd [Habs Pb]].
  pose proof (tree_sum_bound w 0 pt v Hw ltac:(lra) Hc) as Ht.
  replace ((1 + 0) * (1 + w) ^ depth pt - 1) with ((1 + w) ^ depth pt - 1) in Ht by ring.
  set (s := (1 + w) ^ depth pt - 1). fold s in Ht |- *.
  assert (Ps : 0 <= s) by (unfold s; assert (1 <= (1 + w) ^ depth pt) by (apply pow_R1_Rle; lra); lra).
  pose proof (tabs_nonneg tt) as PA. rewrite <- HA in Habs, PA.
  assert (s * tabs pt <= s * (A + (k * A + B))) by (apply Rmult_le_compat_l; lra).
  replace (v - tsum tt) with ((v - tsum pt) + (tsum pt - tsum tt)) by ring.
  eapply Rle_trans; [apply Rabs_triang |]. nra.
Qed.

Theorem backward_dx_bound : forall w er h hh Eh xm xmh Ex R rh t th dxh,
  0 <= w -> 0 <= er -> 0 <= R -> Rabs (hh - h) <= Eh -> Rabs (xmh - xm) <= Ex ->
  Rabs (rh - R) <= er * R -> rel w (hh - xmh) th -> rel w (th * rh) dxh -> t = h - xm ->
  Rabs (dxh - t * R) <= ((1 + er) * (1 + w) * (1 + w) - 1) * Rabs (t * R)
                        + (1 + er) * (1 + w) * (1 + w) * (Eh + Ex) * R.
Proof.
  intros w er h hh Eh xm xmh Ex R rh t th dxh Hw Her HR Hh Hx Hr Hth Hdx Ht.
  assert (Hr' : Rabs (rh - R) <= er * Rabs R) by (rewrite (Rabs_pos_eq R) by lra; exact Hr).
  (* th within w relative of hh - xmh, which is within Eh + Ex of t: within w*|t| + (1 + w)(Eh + Ex) of t *)
  assert (Hd : Rabs ((hh - xmh) - t) <= Eh + Ex).
  { rewrite Ht. replace (hh - xmh - (h - xm)) with ((hh - h) - (xmh - xm)) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. rewrite Rabs_Ropp. lra. }
  assert (Hth' : Rabs (th - t) <= w * Rabs t + (1 + w) * (Eh + Ex)).
  { unfold rel in Hth.
    assert (Rabs (hh - xmh) <= Rabs t + (Eh + Ex)).
    { replace (hh - xmh) with (t + ((hh - xmh) - t)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
    replace (th - t) with ((th - (hh - xmh)) + ((hh - xmh) - t)) by ring.
    eapply Rle_trans; [apply Rabs_triang |].
    assert (w * Rabs (hh - xmh) <= w * (Rabs t + (Eh + Ex))) by (apply Rmult_le_compat_l; lra). nra. }
  (* dxh = fl(th*rh): |dxh - t*R| <= |dxh - th*rh| + |th*rh - t*R| *)
  unfold rel in Hdx.
  assert (PE : 0 <= Eh + Ex) by (pose proof (Rabs_pos (hh - h)); pose proof (Rabs_pos (xmh - xm)); lra).
  assert (Hprod : Rabs (th * rh - t * R) <= R * (((1 + er) * (1 + w) - 1) * Rabs t + (1 + er) * (1 + w) * (Eh + Ex))).
  { pose proof (product_perturb 0 er t th (w * Rabs t + (1 + w) * (Eh + Ex)) R rh (th * rh)
                  ltac:(lra) Her Hth' Hr' ltac:(unfold rel; replace (th * rh - th * rh) with 0 by ring;
                                                rewrite Rabs_R0; lra)) as H.
    rewrite (Rabs_pos_eq R) in H by lra.
    replace (((1 + er) * (1 + 0) - 1) * Rabs t + (1 + er) * (1 + 0) * (w * Rabs t + (1 + w) * (Eh + Ex)))
      with (((1 + er) * (1 + w) - 1) * Rabs t + (1 + er) * (1 + w) * (Eh + Ex)) in H by ring.
    replace (th * rh - t * R) with (th * rh - t * R) by ring. exact H. }
  assert (Htr : Rabs (t * R) = Rabs t * R) by (rewrite Rabs_mult, (Rabs_pos_eq R) by lra; ring).
  assert (Hthrh : Rabs (th * rh) <= R * ((1 + er) * (1 + w) * Rabs t + (1 + er) * (1 + w) * (Eh + Ex))).
  { replace (th * rh) with (t * R + (th * rh - t * R)) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. rewrite Htr. pose proof (Rabs_pos t). nra. }
  replace (dxh - t * R) with ((dxh - th * rh) + (th * rh - t * R)) by ring.
  eapply Rle_trans; [apply Rabs_triang |]. rewrite Htr.
  assert (w * Rabs (th * rh) <= w * (R * ((1 + er) * (1 + w) * Rabs t + (1 + er) * (1 + w) * (Eh + Ex))))
    by (apply Rmult_le_compat_l; lra).
  pose proof (Rabs_pos t). nra.
Qed.
