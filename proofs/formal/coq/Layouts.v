(* Layouts.v — the element-wise form of RoFormer against the matrix form, for both pair layouts,
   and the permutation between the layouts (catalog entries forms_agree, layout_permutation).

   RoFormer writes R_m q without the sparse matrix as
       q ⊗ (cos mθ0, cos mθ0, cos mθ1, cos mθ1, …) + (−q1, q0, −q3, q2, …) ⊗ (sin mθ0, sin mθ0, …)
   (interleaved layout: pair j = dims (2j, 2j+1)); the GPT-NeoX / HF `rotate_half` form
       q ⊗ cat(cos, cos) + cat(−q[k:], q[:k]) ⊗ cat(sin, sin)
   is the half layout: pair j = dims (j, j + k), d = 2k (HF transformers' rotate_half, docs/rope.md §1).
   Flat vectors are v : nat → R, indices 0 … 2k−1. *)

From Coq Require Import Reals Lra Lia.
From RopeCheck Require Import Rotation.
Open Scope R_scope.

(* ---------- interleaved layout ---------- *)

Definition cos_interleaved (theta : nat -> R) (m : R) (r : nat) : R := cos (m * theta (r / 2)%nat).
Definition sin_interleaved (theta : nat -> R) (m : R) (r : nat) : R := sin (m * theta (r / 2)%nat).
(* (−q1, q0, −q3, q2, …) *)
Definition rotate_interleaved (v : nat -> R) (r : nat) : R :=
  if Nat.eqb (r mod 2) 0 then - v (r + 1)%nat else v (r - 1)%nat.
Definition elementwise_interleaved (theta : nat -> R) (m : R) (v : nat -> R) (r : nat) : R :=
  v r * cos_interleaved theta m r + rotate_interleaved v r * sin_interleaved theta m r.

(* The flat interleaved vector of a vector of pairs. *)
Definition interleave (x : pairs) (r : nat) : R :=
  if Nat.eqb (r mod 2) 0 then fst (x (r / 2)%nat) else snd (x (r / 2)%nat).

Lemma matrix_interleaved_single : forall k B v r, (r < 2 * k)%nat ->
  mvec (2 * k) (dense B) v r =
    dense B r (2 * (r / 2))%nat * v (2 * (r / 2))%nat + dense B r (2 * (r / 2) + 1)%nat * v (2 * (r / 2) + 1)%nat.
Proof.
  intros k B v r Hr. unfold mvec. rewrite sum_pairs.
  apply (sum_single k (fun j => dense B r (2 * j)%nat * v (2 * j)%nat + dense B r (2 * j + 1)%nat * v (2 * j + 1)%nat)).
  - apply Nat.div_lt_upper_bound; lia.
  - intros j _ Hne. unfold dense. rewrite div2_even, div2_odd.
    destruct (Nat.eqb (r / 2) j) eqn:E; [apply Nat.eqb_eq in E; lia | ring].
Qed.

Lemma forms_agree_interleaved : forall k theta m v r, (r < 2 * k)%nat ->
  mvec (2 * k) (dense (rope theta m)) v r = elementwise_interleaved theta m v r.
Proof.
  intros k theta m v r Hr. rewrite (matrix_interleaved_single k) by assumption. clear Hr.
  unfold dense, elementwise_interleaved, cos_interleaved, sin_interleaved, rotate_interleaved, rope, rot.
  split_index r; rewrite ?div2_even, ?mod2_even, ?div2_odd, ?mod2_odd, ?Nat.eqb_refl; simpl.
  - ring.
  - replace (q + (q + 0) + 1 - 1)%nat with (q + (q + 0))%nat by lia. ring.
Qed.

(* The matrix acting on the flat interleaved vector is the block-wise action on pairs (so, by
   complex_equivalence, the complex form x_j·e^{imθ_j}). *)
Lemma forms_agree_pairs : forall k B x r, (r < 2 * k)%nat ->
  mvec (2 * k) (dense B) (interleave x) r = interleave (bd_apply B x) r.
Proof.
  intros k B x r Hr. rewrite (matrix_interleaved_single k) by assumption. clear Hr.
  unfold dense, interleave, bd_apply, apply2.
  split_index r; rewrite ?div2_even, ?mod2_even, ?div2_odd, ?mod2_odd, ?Nat.eqb_refl; simpl; ring.
Qed.

(* ---------- half layout ---------- *)

(* Dimension r < 2k belongs to pair hidx k r, as its first (hside = 0) or second (1) member. *)
Definition hidx (k r : nat) : nat := if Nat.ltb r k then r else (r - k)%nat.
Definition hside (k r : nat) : nat := if Nat.ltb r k then 0%nat else 1%nat.

(* The block-diagonal matrix written in the half layout. *)
Definition dense_half (k : nat) (B : blockdiag) : matrix :=
  fun r c => if Nat.eqb (hidx k r) (hidx k c) then entry (B (hidx k r)) (hside k r) (hside k c) else 0.

Definition cos_half (k : nat) (theta : nat -> R) (m : R) (r : nat) : R := cos (m * theta (hidx k r)).
Definition sin_half (k : nat) (theta : nat -> R) (m : R) (r : nat) : R := sin (m * theta (hidx k r)).
(* rotate_half: cat(−v[k:], v[:k]) *)
Definition rotate_half (k : nat) (v : nat -> R) (r : nat) : R :=
  if Nat.ltb r k then - v (r + k)%nat else v (r - k)%nat.
Definition elementwise_half (k : nat) (theta : nat -> R) (m : R) (v : nat -> R) (r : nat) : R :=
  v r * cos_half k theta m r + rotate_half k v r * sin_half k theta m r.

Lemma hidx_low : forall k j, (j < k)%nat -> hidx k j = j /\ hside k j = 0%nat.
Proof. intros k j H. unfold hidx, hside. destruct (Nat.ltb_spec j k); [auto | lia]. Qed.
Lemma hidx_high : forall k j, hidx k (k + j) = j /\ hside k (k + j) = 1%nat.
Proof. intros k j. unfold hidx, hside. destruct (Nat.ltb_spec (k + j) k); [lia | split; [lia | auto]]. Qed.

Lemma forms_agree_half : forall k theta m v r, (r < 2 * k)%nat ->
  mvec (2 * k) (dense_half k (rope theta m)) v r = elementwise_half k theta m v r.
Proof.
  intros k theta m v r Hr. unfold mvec. rewrite sum_halves.
  assert (Hi : (hidx k r < k)%nat) by (unfold hidx; destruct (Nat.ltb_spec r k); lia).
  rewrite (sum_single k _ (hidx k r) Hi).
  - destruct (hidx_low k (hidx k r) Hi) as [L1 L2]. destruct (hidx_high k (hidx k r)) as [H1 H2].
    unfold dense_half. rewrite L1, L2, H1, H2, Nat.eqb_refl.
    unfold elementwise_half, cos_half, sin_half, rotate_half, rope, rot.
    unfold hidx, hside in *. destruct (Nat.ltb_spec r k); simpl.
    + replace (k + r)%nat with (r + k)%nat by lia. ring.
    + replace (k + (r - k))%nat with r by lia. ring.
  - intros j Hj Hne. destruct (hidx_low k j Hj) as [L1 L2]. destruct (hidx_high k j) as [H1 H2].
    unfold dense_half. rewrite L1, H1.
    destruct (Nat.eqb (hidx k r) j) eqn:E; [apply Nat.eqb_eq in E; lia | ring].
Qed.

(* ---------- forms_agree ---------- *)

(* Matrix form ≡ element-wise form (RoFormer), in both layouts, and matrix form on the flat
   interleaved vector ≡ the pair-wise (hence complex, see complex_equivalence) form. *)
Theorem forms_agree : forall (k : nat) (theta : nat -> R) (m : R),
  (forall v r, (r < 2 * k)%nat -> mvec (2 * k) (dense (rope theta m)) v r = elementwise_interleaved theta m v r) /\
  (forall v r, (r < 2 * k)%nat -> mvec (2 * k) (dense_half k (rope theta m)) v r = elementwise_half k theta m v r) /\
  (forall x r, (r < 2 * k)%nat -> mvec (2 * k) (dense (rope theta m)) (interleave x) r =
                                   interleave (fun j => cmul (x j) (cexpi (m * theta j))) r).
Proof.
  intros k theta m. split; [| split].
  - intros. apply forms_agree_interleaved; assumption.
  - intros. apply forms_agree_half; assumption.
  - intros x r Hr. rewrite forms_agree_pairs by assumption. unfold interleave.
    destruct (complex_equivalence) as [_ [E _]]. rewrite !E. reflexivity.
Qed.

(* ---------- layout_permutation ---------- *)

(* Half-layout dimension i is interleaved dimension perm k i: i < k ↦ 2i, k + j ↦ 2j + 1. *)
Definition perm (k i : nat) : nat := if Nat.ltb i k then (2 * i)%nat else (2 * (i - k) + 1)%nat.
Definition perm_inv (k r : nat) : nat := if Nat.eqb (r mod 2) 0 then (r / 2)%nat else (k + r / 2)%nat.

(* perm is a bijection of {0, …, 2k−1} (perm_inv is its inverse); the half-layout matrix of any
   block-diagonal B (R_m in particular) is the interleaved one with rows and columns permuted,
   Pᵀ R_m P; and the half-layout RoPE of the permuted input is the permuted interleaved RoPE. *)
Theorem layout_permutation : forall (k : nat),
  (forall i, (i < 2 * k)%nat -> (perm k i < 2 * k)%nat /\ perm_inv k (perm k i) = i) /\
  (forall r, (r < 2 * k)%nat -> (perm_inv k r < 2 * k)%nat /\ perm k (perm_inv k r) = r) /\
  (forall B r c, (r < 2 * k)%nat -> (c < 2 * k)%nat -> dense_half k B r c = dense B (perm k r) (perm k c)) /\
  (forall theta m v r, (r < 2 * k)%nat ->
     elementwise_half k theta m (fun i => v (perm k i)) r = elementwise_interleaved theta m v (perm k r)).
Proof.
  intros k. split; [| split; [| split]].
  - intros i Hi. unfold perm, perm_inv. destruct (Nat.ltb_spec i k).
    + rewrite mod2_even, div2_even. simpl. lia.
    + rewrite mod2_odd, div2_odd. simpl. lia.
  - intros r Hr. unfold perm, perm_inv.
    destruct (even_or_odd r) as [q [-> | ->]].
    + rewrite mod2_even, div2_even. simpl. destruct (Nat.ltb_spec q k); lia.
    + rewrite mod2_odd, div2_odd. simpl. destruct (Nat.ltb_spec (k + q) k); lia.
  - intros B r c Hr Hc. unfold dense_half, dense, perm, hidx, hside.
    destruct (Nat.ltb_spec r k); destruct (Nat.ltb_spec c k);
    rewrite ?div2_even, ?mod2_even, ?div2_odd, ?mod2_odd; reflexivity.
  - intros theta m v r Hr.
    unfold elementwise_half, elementwise_interleaved, cos_half, sin_half, rotate_half,
      cos_interleaved, sin_interleaved, rotate_interleaved, perm, hidx.
    destruct (Nat.ltb_spec r k).
    + rewrite div2_even, mod2_even. simpl.
      destruct (Nat.ltb_spec (r + k) k); [lia |]. replace (r + k - k)%nat with r by lia. reflexivity.
    + rewrite div2_odd, mod2_odd. simpl.
      destruct (Nat.ltb_spec (r - k) k); [| lia].
      rewrite Nat.add_sub. reflexivity.
Qed.
