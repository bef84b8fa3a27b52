(* Attention.v — attention with RoPE is unchanged when every position moves by the same t
   (catalog entry attention_shift_invariance; RoFormer §3.2.2, and docs/rope.md §4:
   Attention(Q, K, V) = softmax(RoPE(Q) RoPE(K)ᵀ / √d_k + M) V).

   N tokens; token i has position p i, query q i and key kv i (vectors of k pairs) and value
   vv i (any number of components). scale is 1/√d_k (any real); mask is any additive mask that
   depends on token indices only (e.g. causal: 0 or −∞ stand-in). Multi-head attention applies
   this per head with the same rotation, so the statement holds head by head. *)

From Coq Require Import Reals Lra Lia.
From RopeCheck Require Import Rotation.
Open Scope R_scope.

Section Attention.
Variables (k N : nat) (theta : nat -> R) (scale : R) (mask : nat -> nat -> R).
Variables (q kv : nat -> pairs) (vv : nat -> nat -> R).

Definition score (p : nat -> R) (i j : nat) : R :=
  scale * dot k (bd_apply (rope theta (p i)) (q i)) (bd_apply (rope theta (p j)) (kv j)) + mask i j.

Definition weight (p : nat -> R) (i j : nat) : R :=
  exp (score p i j) / sum N (fun l => exp (score p i l)).

Definition attention (p : nat -> R) (i c : nat) : R := sum N (fun j => weight p i j * vv j c).

(* Scores, softmax weights and outputs are all unchanged under p ↦ p + t (from relative_dot). *)
Theorem attention_shift_invariance : forall (p : nat -> R) (t : R),
  (forall i j, score (fun a => p a + t) i j = score p i j) /\
  (forall i j, weight (fun a => p a + t) i j = weight p i j) /\
  (forall i c, attention (fun a => p a + t) i c = attention p i c).
Proof.
  intros p t.
  assert (S : forall i j, score (fun a => p a + t) i j = score p i j).
  { intros i j. unfold score. destruct (relative_dot k theta (q i) (kv j) (p i) (p j)) as [_ H].
    rewrite H. reflexivity. }
  assert (W : forall i j, weight (fun a => p a + t) i j = weight p i j).
  { intros i j. unfold weight. rewrite S. f_equal. apply sum_ext. intros l _. rewrite S. reflexivity. }
  split; [exact S | split; [exact W |]].
  intros i c. unfold attention. apply sum_ext. intros j _. rewrite W. reflexivity.
Qed.

End Attention.
