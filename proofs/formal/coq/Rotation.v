(* Rotation.v — RoPE's rotation matrices over the reals, and the identities of the catalog
   (proofs/README.md) that are statements about them:
     relative_matrix      R_mᵀ R_n = R_{n−m}                  (RoFormer §3.2)
     group_law            R_m R_n = R_{m+n}, R_0 = I, R_{−m} = R_mᵀ, R_mᵀ R_m = I
     norm_preservation    ‖R_m x‖ = ‖x‖ per pair and in total  (RoFormer: R is orthogonal)
     complex_equivalence  R(a)(x1, x2) ≡ (x1 + i x2)·e^{ia}    (RoFormer §3.2)
     relative_dot         ⟨R_m q, R_n k⟩ = ⟨q, R_{n−m} k⟩, and invariance under m, n → m+t, n+t
     multi_axis_relative  R_{m1,m2}ᵀ R_{n1,n2} = R_{n1−m1, n2−m2}  (RoFormer §3.2)

   Representation (chosen so that every statement holds for ANY even dimension d = 2k and ANY
   frequency vector θ):
   - a 2×2 block is the record mat2; R(a) = [[cos a, −sin a], [sin a, cos a]] is [rot a];
   - a frequency vector is θ : nat → R (only θ_0 … θ_{k−1} matter);
   - a block-diagonal matrix is its list of blocks B : nat → mat2, block j acting on pair j;
     R_m is [rope θ m] = fun j => rot (m·θ_j);
   - its meaning as an ordinary d×d matrix is [dense B] (rows/columns 0 … 2k−1, pair j on
     dimensions (2j, 2j+1), the layout of RoFormer's formula); d×d products are finite sums
     [mmul]. The main theorems are stated on these dense d×d matrices, entry by entry, so they are
     the textbook matrix statements, not just statements about blocks.
   - a vector of pairs is x : nat → R*R (pair j = (x_{2j}, x_{2j+1}) in the interleaved layout).
   Positions m, n are real numbers: the identities hold for all of them, integers included. *)

From Coq Require Import Reals Lra Lia.
Open Scope R_scope.

(* ---------- finite sums ---------- *)

(* sum n f = f 0 + … + f (n−1). *)
Fixpoint sum (n : nat) (f : nat -> R) : R :=
  match n with
  | O => 0
  | S p => sum p f + f p
  end.

Lemma sum_ext : forall n f g, (forall i, (i < n)%nat -> f i = g i) -> sum n f = sum n g.
Proof.
  induction n as [| n IH]; intros f g H; simpl; [reflexivity |].
  rewrite (IH f g) by (intros; apply H; lia). rewrite (H n) by lia. reflexivity.
Qed.

Lemma sum_plus : forall n f g, sum n (fun i => f i + g i) = sum n f + sum n g.
Proof. induction n as [| n IH]; intros; simpl; [lra | rewrite IH; lra]. Qed.

Lemma sum_zero : forall n f, (forall i, (i < n)%nat -> f i = 0) -> sum n f = 0.
Proof.
  induction n as [| n IH]; intros f H; simpl; [reflexivity |].
  rewrite IH by (intros; apply H; lia). rewrite H by lia. lra.
Qed.

(* A sum whose terms vanish except at index i is its i-th term. *)
Lemma sum_single : forall n f i, (i < n)%nat -> (forall j, (j < n)%nat -> j <> i -> f j = 0) ->
  sum n f = f i.
Proof.
  induction n as [| n IH]; intros f i Hi H; [lia |]. simpl.
  destruct (Nat.eq_dec i n) as [-> | Hne].
  - rewrite sum_zero; [lra |]. intros j Hj. apply H; lia.
  - rewrite (IH f i) by (try lia; intros; apply H; lia). rewrite (H n) by lia. lra.
Qed.

(* Summing over 2k indices = summing over the k pairs (2j, 2j+1). *)
Lemma sum_pairs : forall k f, sum (2 * k) f = sum k (fun j => f (2 * j)%nat + f (2 * j + 1)%nat).
Proof.
  induction k as [| k IH]; intros f; [reflexivity |].
  replace (2 * S k)%nat with (S (S (2 * k))) by lia.
  change (sum (S (S (2 * k))) f) with (sum (2 * k) f + f (2 * k)%nat + f (S (2 * k))).
  change (sum (S k) (fun j => f (2 * j)%nat + f (2 * j + 1)%nat))
    with (sum k (fun j => f (2 * j)%nat + f (2 * j + 1)%nat) + (f (2 * k)%nat + f (2 * k + 1)%nat)).
  rewrite <- IH. replace (S (2 * k)) with (2 * k + 1)%nat by lia. lra.
Qed.

(* Summing over 2k indices = summing over the k pairs (j, j+k). *)
Lemma sum_app : forall a b f, sum (a + b) f = sum a f + sum b (fun j => f (a + j)%nat).
Proof.
  intros a b f. induction b as [| b IH]; simpl.
  - rewrite Nat.add_0_r. lra.
  - replace (a + S b)%nat with (S (a + b)) by lia. simpl. rewrite IH. lra.
Qed.

Lemma sum_halves : forall k f, sum (2 * k) f = sum k (fun j => f j + f (k + j)%nat).
Proof.
  intros k f. replace (2 * k)%nat with (k + k)%nat by lia. rewrite sum_app, sum_plus. reflexivity.
Qed.

(* ---------- 2×2 blocks ---------- *)

Record mat2 := M2 { m11 : R; m12 : R; m21 : R; m22 : R }.

(* R(a) = [[cos a, −sin a], [sin a, cos a]] (RoFormer, the 2-D rotation matrix). *)
Definition rot (a : R) : mat2 := M2 (cos a) (- sin a) (sin a) (cos a).

Definition mat2_mul (A B : mat2) : mat2 :=
  M2 (m11 A * m11 B + m12 A * m21 B) (m11 A * m12 B + m12 A * m22 B)
     (m21 A * m11 B + m22 A * m21 B) (m21 A * m12 B + m22 A * m22 B).
Definition mat2_tr (A : mat2) : mat2 := M2 (m11 A) (m21 A) (m12 A) (m22 A).
Definition mat2_id : mat2 := M2 1 0 0 1.
Definition apply2 (A : mat2) (v : R * R) : R * R :=
  (m11 A * fst v + m12 A * snd v, m21 A * fst v + m22 A * snd v).

(* Entry (i, l) of a block, i, l ∈ {0, 1}. *)
Definition entry (A : mat2) (i l : nat) : R :=
  match i, l with
  | O, O => m11 A | O, _ => m12 A | _, O => m21 A | _, _ => m22 A
  end.

Lemma rot_tr_mul : forall a b, mat2_mul (mat2_tr (rot a)) (rot b) = rot (b - a).
Proof.
  intros a b. unfold mat2_mul, mat2_tr, rot; simpl.
  rewrite cos_minus, sin_minus. f_equal; ring.
Qed.

Lemma rot_mul : forall a b, mat2_mul (rot a) (rot b) = rot (a + b).
Proof.
  intros a b. unfold mat2_mul, rot; simpl. rewrite cos_plus, sin_plus. f_equal; ring.
Qed.

Lemma rot_0 : rot 0 = mat2_id.
Proof. unfold rot, mat2_id. rewrite cos_0, sin_0. f_equal; ring. Qed.

Lemma rot_opp : forall a, rot (- a) = mat2_tr (rot a).
Proof. intros a. unfold rot, mat2_tr; simpl. rewrite cos_neg, sin_neg, Ropp_involutive. reflexivity. Qed.

Lemma cos2_sin2 : forall a, cos a * cos a + sin a * sin a = 1.
Proof. intros a. pose proof (sin2_cos2 a) as H. unfold Rsqr in H. lra. Qed.

Lemma rot_tr_rot : forall a, mat2_mul (mat2_tr (rot a)) (rot a) = mat2_id.
Proof.
  intros a. unfold mat2_mul, mat2_tr, rot, mat2_id; simpl.
  pose proof (cos2_sin2 a). f_equal; nra.
Qed.

(* ---------- block-diagonal matrices and their dense d×d meaning ---------- *)

Definition blockdiag := nat -> mat2.

(* R_m for frequency vector θ: block j is R(m·θ_j). *)
Definition rope (theta : nat -> R) (m : R) : blockdiag := fun j => rot (m * theta j).

Definition bd_mul (A B : blockdiag) : blockdiag := fun j => mat2_mul (A j) (B j).
Definition bd_tr (A : blockdiag) : blockdiag := fun j => mat2_tr (A j).
Definition bd_id : blockdiag := fun _ => mat2_id.

(* d×d matrices as functions row → column → entry. *)
Definition matrix := nat -> nat -> R.
Definition mmul (d : nat) (A B : matrix) : matrix := fun r c => sum d (fun t => A r t * B t c).
Definition mtr (A : matrix) : matrix := fun r c => A c r.
Definition mid : matrix := fun r c => if Nat.eqb r c then 1 else 0.
Definition mvec (d : nat) (A : matrix) (v : nat -> R) : nat -> R := fun r => sum d (fun t => A r t * v t).

(* The block-diagonal matrix in the interleaved layout: block j occupies rows/columns 2j, 2j+1. *)
Definition dense (B : blockdiag) : matrix :=
  fun r c => if Nat.eqb (r / 2) (c / 2) then entry (B (r / 2)%nat) (r mod 2) (c mod 2) else 0.

Lemma div2_even : forall j, ((2 * j) / 2 = j)%nat.
Proof. intros j. symmetry. apply (Nat.div_unique _ _ _ 0); lia. Qed.
Lemma mod2_even : forall j, ((2 * j) mod 2 = 0)%nat.
Proof. intros j. symmetry. apply (Nat.mod_unique _ _ j); lia. Qed.
Lemma div2_odd : forall j, ((2 * j + 1) / 2 = j)%nat.
Proof. intros j. symmetry. apply (Nat.div_unique _ _ _ 1); lia. Qed.
Lemma mod2_odd : forall j, ((2 * j + 1) mod 2 = 1)%nat.
Proof. intros j. symmetry. apply (Nat.mod_unique _ _ j); lia. Qed.

(* Every index is 2q or 2q+1. *)
Lemma even_or_odd : forall r, exists q, r = (2 * q)%nat \/ r = (2 * q + 1)%nat.
Proof.
  intros r. exists (r / 2)%nat. pose proof (Nat.div_mod_eq r 2). pose proof (Nat.mod_upper_bound r 2).
  lia.
Qed.

Ltac split_index r :=
  let q := fresh "q" in let H := fresh "H" in
  destruct (even_or_odd r) as [q [H | H]]; subst r;
  repeat (rewrite ?div2_even, ?mod2_even, ?div2_odd, ?mod2_odd).

(* The product of two block-diagonal d×d matrices is block-diagonal with the products of the blocks. *)
Lemma dense_mul : forall k A B r c, (r < 2 * k)%nat -> (c < 2 * k)%nat ->
  mmul (2 * k) (dense A) (dense B) r c = dense (bd_mul A B) r c.
Proof.
  intros k A B r c Hr Hc. unfold mmul. rewrite sum_pairs.
  rewrite (sum_single k _ (r / 2)).
  - unfold dense, bd_mul. clear Hr Hc.
    split_index r; split_index c; rewrite ?Nat.eqb_refl;
    destruct (Nat.eqb q q0) eqn:E; try (apply Nat.eqb_eq in E; subst);
    unfold mat2_mul; simpl; ring.
  - apply Nat.div_lt_upper_bound; lia.
  - intros j Hj Hne. unfold dense. rewrite div2_even, div2_odd.
    destruct (Nat.eqb (r / 2) j) eqn:E; [apply Nat.eqb_eq in E; lia | ring].
Qed.

Lemma dense_tr : forall A r c, mtr (dense A) r c = dense (bd_tr A) r c.
Proof.
  intros A r c. unfold mtr, dense, bd_tr. rewrite Nat.eqb_sym.
  destruct (Nat.eqb (r / 2) (c / 2)) eqn:E; [| reflexivity].
  apply Nat.eqb_eq in E. rewrite E.
  split_index r; split_index c; reflexivity.
Qed.

Lemma dense_id : forall r c, dense bd_id r c = mid r c.
Proof.
  intros r c. unfold dense, bd_id, mid, mat2_id.
  split_index r; split_index c; simpl;
  destruct (Nat.eqb q q0) eqn:E;
  try (apply Nat.eqb_eq in E; subst); try (apply Nat.eqb_neq in E);
  repeat match goal with
  | |- context [Nat.eqb ?a ?b] => destruct (Nat.eqb a b) eqn:?
  end;
  repeat match goal with H : Nat.eqb _ _ = true |- _ => apply Nat.eqb_eq in H | H : Nat.eqb _ _ = false |- _ => apply Nat.eqb_neq in H end;
  simpl; try reflexivity; lia.
Qed.

Lemma dense_ext : forall A B, (forall j, A j = B j) -> forall r c, dense A r c = dense B r c.
Proof. intros A B H r c. unfold dense. rewrite H. reflexivity. Qed.

Lemma mmul_ext_l : forall d A A' B r c, (forall r' t, A r' t = A' r' t) ->
  mmul d A B r c = mmul d A' B r c.
Proof. intros. unfold mmul. apply sum_ext. intros. rewrite H. reflexivity. Qed.

Lemma rope_ext : forall theta m n, (forall j, m * theta j = n * theta j) -> forall j, rope theta m j = rope theta n j.
Proof. intros. unfold rope. rewrite H. reflexivity. Qed.

(* ---------- relative_matrix ---------- *)

(* R_mᵀ R_n = R_{n−m} as d×d matrices, d = 2k any even dimension, θ any frequency vector.
   RoFormer's appendix proves it block by block from cos(A−B), sin(A−B); lemma rot_tr_mul is that
   step, dense_mul lifts it to the full matrix. *)
Theorem relative_matrix : forall (k : nat) (theta : nat -> R) (m n : R) (r c : nat),
  (r < 2 * k)%nat -> (c < 2 * k)%nat ->
  mmul (2 * k) (mtr (dense (rope theta m))) (dense (rope theta n)) r c = dense (rope theta (n - m)) r c.
Proof.
  intros k theta m n r c Hr Hc.
  rewrite (mmul_ext_l _ _ (dense (bd_tr (rope theta m)))) by apply dense_tr.
  rewrite dense_mul by assumption. apply dense_ext. intros j.
  unfold bd_mul, bd_tr, rope. rewrite rot_tr_mul. f_equal. ring.
Qed.

(* ---------- group_law ---------- *)

(* R_m R_n = R_{m+n}; R_0 = I; R_{−m} = R_mᵀ; R_mᵀ R_m = I (so R_mᵀ = R_m⁻¹), as d×d matrices. *)
Theorem group_law : forall (k : nat) (theta : nat -> R) (m n : R) (r c : nat),
  (r < 2 * k)%nat -> (c < 2 * k)%nat ->
  mmul (2 * k) (dense (rope theta m)) (dense (rope theta n)) r c = dense (rope theta (m + n)) r c /\
  dense (rope theta 0) r c = mid r c /\
  dense (rope theta (- m)) r c = mtr (dense (rope theta m)) r c /\
  mmul (2 * k) (mtr (dense (rope theta m))) (dense (rope theta m)) r c = mid r c.
Proof.
  intros k theta m n r c Hr Hc. split; [| split; [| split]].
  - rewrite dense_mul by assumption. apply dense_ext. intros j.
    unfold bd_mul, rope. rewrite rot_mul. f_equal. ring.
  - rewrite <- dense_id. apply dense_ext. intros j. unfold rope, bd_id.
    rewrite Rmult_0_l. apply rot_0.
  - rewrite dense_tr. apply dense_ext. intros j. unfold rope, bd_tr.
    rewrite <- rot_opp. f_equal. ring.
  - rewrite relative_matrix by assumption. rewrite <- dense_id. apply dense_ext. intros j.
    unfold rope, bd_id. rewrite Rminus_diag_eq, Rmult_0_l by reflexivity. apply rot_0.
Qed.

(* ---------- the action on vectors of pairs ---------- *)

Definition pairs := nat -> R * R.
Definition bd_apply (B : blockdiag) (x : pairs) : pairs := fun j => apply2 (B j) (x j).

(* inverse ∘ forward = identity: rotating back by −m undoes the rotation by m. *)
Lemma apply2_mul : forall A B v, apply2 A (apply2 B v) = apply2 (mat2_mul A B) v.
Proof. intros A B [v1 v2]. unfold apply2, mat2_mul; simpl. f_equal; ring. Qed.

Lemma apply2_id : forall v, apply2 mat2_id v = v.
Proof. intros [v1 v2]. unfold apply2, mat2_id; simpl. f_equal; ring. Qed.

Lemma rope_inverse_forward : forall theta m x j,
  bd_apply (rope theta (- m)) (bd_apply (rope theta m) x) j = x j.
Proof.
  intros theta m x j. unfold bd_apply, rope. rewrite apply2_mul, rot_mul.
  replace (- m * theta j + m * theta j) with 0 by ring. rewrite rot_0. apply apply2_id.
Qed.

(* ---------- norm_preservation ---------- *)

Definition pair_norm2 (v : R * R) : R := fst v * fst v + snd v * snd v.
Definition norm2 (k : nat) (x : pairs) : R := sum k (fun j => pair_norm2 (x j)).

Lemma rot_norm2 : forall a v, pair_norm2 (apply2 (rot a) v) = pair_norm2 v.
Proof.
  intros a [x1 x2]. unfold pair_norm2, apply2, rot; simpl.
  pose proof (cos2_sin2 a). nra.
Qed.

(* ‖R_m x‖ = ‖x‖ for every pair (squared and as the Euclidean norm), and in total over k pairs. *)
Theorem norm_preservation : forall (k : nat) (theta : nat -> R) (m : R) (x : pairs),
  (forall j, pair_norm2 (bd_apply (rope theta m) x j) = pair_norm2 (x j)) /\
  (forall j, sqrt (pair_norm2 (bd_apply (rope theta m) x j)) = sqrt (pair_norm2 (x j))) /\
  norm2 k (bd_apply (rope theta m) x) = norm2 k x /\
  sqrt (norm2 k (bd_apply (rope theta m) x)) = sqrt (norm2 k x).
Proof.
  intros k theta m x.
  assert (P : forall j, pair_norm2 (bd_apply (rope theta m) x j) = pair_norm2 (x j))
    by (intros j; apply rot_norm2).
  assert (T : norm2 k (bd_apply (rope theta m) x) = norm2 k x)
    by (unfold norm2; apply sum_ext; intros; apply P).
  repeat split; try (intros; rewrite ?P; reflexivity); rewrite T; reflexivity.
Qed.

(* ---------- complex_equivalence ---------- *)

(* Complex numbers as pairs (re, im) with the usual product; e^{ia} = (cos a, sin a) (Euler). *)
Definition cmul (z w : R * R) : R * R := (fst z * fst w - snd z * snd w, fst z * snd w + snd z * fst w).
Definition cexpi (a : R) : R * R := (cos a, sin a).

(* R(a)·(x1, x2) = (x1 + i x2)·e^{ia}; hence pair j of R_m x is x_j·e^{i m θ_j}; and
   e^{i(a+b)} = e^{ia} e^{ib}, the complex face of group_law. *)
Theorem complex_equivalence :
  (forall a v, apply2 (rot a) v = cmul v (cexpi a)) /\
  (forall theta m x j, bd_apply (rope theta m) x j = cmul (x j) (cexpi (m * theta j))) /\
  (forall a b, cexpi (a + b) = cmul (cexpi a) (cexpi b)).
Proof.
  assert (E : forall a v, apply2 (rot a) v = cmul v (cexpi a)).
  { intros a [x1 x2]. unfold apply2, rot, cmul, cexpi; simpl. f_equal; ring. }
  split; [exact E | split].
  - intros. apply E.
  - intros a b. unfold cexpi, cmul; simpl. rewrite cos_plus, sin_plus. f_equal; ring.
Qed.

(* ---------- relative_dot ---------- *)

Definition pair_dot (u v : R * R) : R := fst u * fst v + snd u * snd v.
Definition dot (k : nat) (x y : pairs) : R := sum k (fun j => pair_dot (x j) (y j)).

Lemma rot_pair_dot : forall a b u v,
  pair_dot (apply2 (rot a) u) (apply2 (rot b) v) = pair_dot u (apply2 (rot (b - a)) v).
Proof.
  intros a b [u1 u2] [v1 v2]. unfold pair_dot, apply2, rot; simpl.
  rewrite cos_minus, sin_minus. ring.
Qed.

(* ⟨R_m q, R_n k⟩ = ⟨q, R_{n−m} k⟩ (the score depends on n − m only), and therefore the score is
   unchanged when both positions move by the same t. *)
Theorem relative_dot : forall (k : nat) (theta : nat -> R) (q kv : pairs) (m n : R),
  dot k (bd_apply (rope theta m) q) (bd_apply (rope theta n) kv) =
    dot k q (bd_apply (rope theta (n - m)) kv) /\
  (forall t, dot k (bd_apply (rope theta (m + t)) q) (bd_apply (rope theta (n + t)) kv) =
             dot k (bd_apply (rope theta m) q) (bd_apply (rope theta n) kv)).
Proof.
  assert (R : forall k theta q kv m n, dot k (bd_apply (rope theta m) q) (bd_apply (rope theta n) kv) =
                                      dot k q (bd_apply (rope theta (n - m)) kv)).
  { intros. unfold dot. apply sum_ext. intros j _. unfold bd_apply, rope.
    rewrite rot_pair_dot. do 3 f_equal. ring. }
  intros k theta q kv m n. split; [apply R |]. intros t. rewrite !R.
  unfold dot. apply sum_ext. intros j _. unfold bd_apply, rope. do 3 f_equal. ring.
Qed.

(* ---------- multi_axis_relative ---------- *)

(* Multi-axis RoPE (2-D RoPE of RoFormer's appendix, M-RoPE): pair j is driven by the position
   component axis_of j; a position is one real per axis. *)
Definition rope_multi (theta : nat -> R) (axis_of : nat -> nat) (pos : nat -> R) : blockdiag :=
  fun j => rot (pos (axis_of j) * theta j).

Lemma multi_axis_general : forall k theta axis_of (m n : nat -> R) r c,
  (r < 2 * k)%nat -> (c < 2 * k)%nat ->
  mmul (2 * k) (mtr (dense (rope_multi theta axis_of m))) (dense (rope_multi theta axis_of n)) r c =
    dense (rope_multi theta axis_of (fun a => n a - m a)) r c.
Proof.
  intros k theta axis_of m n r c Hr Hc.
  rewrite (mmul_ext_l _ _ (dense (bd_tr (rope_multi theta axis_of m)))) by apply dense_tr.
  rewrite dense_mul by assumption. apply dense_ext. intros j.
  unfold bd_mul, bd_tr, rope_multi. rewrite rot_tr_mul. f_equal. ring.
Qed.

(* Two axes: position (m1, m2); axis 0 gets m1, every other axis m2. *)
Definition pos2 (m1 m2 : R) : nat -> R := fun a => if Nat.eqb a 0 then m1 else m2.

(* R_{m1,m2}ᵀ R_{n1,n2} = R_{n1−m1, n2−m2}, for any assignment of pairs to the two axes. *)
Theorem multi_axis_relative : forall (k : nat) (theta : nat -> R) (axis_of : nat -> nat)
  (m1 m2 n1 n2 : R) (r c : nat), (r < 2 * k)%nat -> (c < 2 * k)%nat ->
  mmul (2 * k) (mtr (dense (rope_multi theta axis_of (pos2 m1 m2))))
                (dense (rope_multi theta axis_of (pos2 n1 n2))) r c =
    dense (rope_multi theta axis_of (pos2 (n1 - m1) (n2 - m2))) r c.
Proof.
  intros. rewrite multi_axis_general by assumption. apply dense_ext. intros j.
  unfold rope_multi, pos2. destruct (Nat.eqb (axis_of j) 0); reflexivity.
Qed.
