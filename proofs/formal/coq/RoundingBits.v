(* RoundingBits.v — the two bit-level steps of the rounding test (optimized/error_bounds.h
   "ROUNDING TEST": f32 data's test by the bits, step (ii), and THE CELL TEST, steps (i) and (ii)).

   Binary32 is modelled by its values: binary32 v ⇔ v = n·2^t with |n| < 2^24 and t ≥ −149 (the
   exponent unbounded above, as Flocq's FLT_exp (-149) 24), and nearest32 x r ⇔ r is a binary32
   value at least as close to x as every binary32 value. RN32 (round to nearest, ties to even) picks
   one of the nearest values; where there is only one, every tie rule agrees. IEEE binary32 overflow
   is decided by that value too: RN32(x) is ±∞ exactly when it reaches 2^128 in magnitude (|x| ≥
   2^128 − 2^103), so equal nearest values give equal binary32 results, infinities included.
   Flocq's `round` is not used: its `mag` rests on Coq's ln, whose proof uses Classical_Prop.classic,
   outside the axioms the proofs allow (proofs/formal/README.md); only Flocq's powers of two (bpow, Raux) are.

   - bits_window_pos, bits_window: w = ±m·2^(e−52), 2^52 ≤ m < 2^53, e ≥ −126 (any e above: binary32
     overflow included), d = (m + 2^28) mod 2^29 with M + 1 ≤ d ≤ 2^29 − M − 1 and M + 1 ≤ 2^27:
     every real X with |X − w| < (M + 1)·2^(e−52) has exactly one nearest binary32 value, the same
     as w's. (M + 1 ≤ 2^27 is needed at w = 2^e, where the spacing below halves; the kernels'
     M = 2^16.)
   - code_window: the code's q = ((bits mod 2^32 + 2^28 − M − 1) mod 2^32) mod 2^29 (low word plus
     offset, wrapping, masked with 2^29 − 1) is ≤ 2^29 − 2M − 2 exactly when M + 1 ≤ (bits + 2^28)
     mod 2^29 ≤ 2^29 − M − 1; bits_low29: the encoding s·2^63 + (e + 1023)·2^52 + (m − 2^52) has
     m's low 29 bits, so that d is (m + 2^28) mod 2^29.
   - bits_window_sharp: one pattern outside the window (d = M = 2^16) the conclusion fails: an X
     within (M + 1)·2^-52 of w = 1 + 2^-24 + 2^-36 has nearest value 1, w has 1 + 2^-23.
   - cell_ends (step (ii)): a binary32, E ≥ max(2^-23·|a|, 2^-149) (≥ ulp32(a)) ⇒ the values
     nearest to a − E and a + E lie strictly below and above a; cell_margin: the stated bounds
     |a32| ≤ (P + Q)(1 + 2.0001u32) and E_a ≥ (1 − u32)²(4.1(1 − 2^-52)u32(P + Q) + F) − 2μ32 give
     E_a ≥ 4.09u32|a32| + 13μ32 ≥ max(2u32|a32|, 2μ32).
   - decide32_strict (step (i)): under RoundingTest32.v decide32_sound's premises,
     lo < exact < hi strictly (the floor F leaves slack for 1.5μ32 per subnormal term). *)

From Coq Require Import Reals ZArith Lia Lra.
From Flocq Require Import Core.Raux Core.Zaux.
From RopeCheck Require Import ErrorBound RoundingTest32.
Open Scope R_scope.

Notation pow2 := (bpow radix2).

Definition binary32 (v : R) : Prop :=
  exists n t : Z, v = IZR n * pow2 t /\ (Z.abs n < 2 ^ 24)%Z /\ (-149 <= t)%Z.

Definition nearest32 (x r : R) : Prop :=
  binary32 r /\ forall f, binary32 f -> Rabs (r - x) <= Rabs (f - x).

Lemma pow2_pos : forall t, 0 < pow2 t.
Proof. intro t. apply bpow_gt_0. Qed.

Lemma pow2_split : forall a s, (0 <= s)%Z -> pow2 (a + s) = IZR (2 ^ s) * pow2 a.
Proof.
  intros a s Hs. rewrite bpow_plus. replace (IZR (2 ^ s)) with (pow2 s); [ring |].
  rewrite <- (IZR_Zpower radix2 s Hs). reflexivity.
Qed.

(* ---------- the binary32 neighbours of c = k·V, 2^23 ≤ k ≤ 2^24, V = 2^(e−23) ---------- *)

Lemma abs_n_bound : forall n : Z, (Z.abs n < 2 ^ 24)%Z -> Rabs (IZR n) <= 16777215.
Proof.
  intros n H. rewrite <- abs_IZR. apply IZR_le. simpl in H. lia.
Qed.

Lemma neighbours : forall (e k : Z) f,
  (-126 <= e)%Z -> (2 ^ 23 <= k <= 2 ^ 24)%Z -> binary32 f ->
  let V := pow2 (e - 23) in
  (IZR k * V < f -> IZR k * V + V <= f) /\
  (f < IZR k * V -> f <= IZR k * V - V \/ (k = (2 ^ 23)%Z /\ f <= IZR k * V - V / 2)).
Proof.
  intros e k f He Hk [n [t [Hf [Hn Ht]]]] V.
  assert (HV : 0 < V) by apply pow2_pos.
  assert (Hk1 : 8388608 <= IZR k <= 16777216) by (split; apply IZR_le; simpl in Hk; lia).
  destruct (Z_le_gt_dec (e - 23) t) as [Hte | Hte].
  - (* t ≥ e − 23: f is an integer multiple of V *)
    assert (Hf' : f = IZR (n * 2 ^ (t - (e - 23))) * V).
    { rewrite Hf. unfold V. replace t with ((e - 23) + (t - (e - 23)))%Z at 1 by ring.
      rewrite pow2_split by lia. rewrite mult_IZR. ring. }
    set (N := (n * 2 ^ (t - (e - 23)))%Z) in Hf'.
    split; intro H; rewrite Hf' in *.
    + assert (IZR k < IZR N) by (apply (Rmult_lt_reg_r V); lra).
      assert (k + 1 <= N)%Z by (apply lt_IZR in H0; lia).
      apply IZR_le in H1. rewrite plus_IZR in H1.
      assert ((IZR k + 1) * V <= IZR N * V) by (apply Rmult_le_compat_r; lra). lra.
    + left. assert (IZR N < IZR k) by (apply (Rmult_lt_reg_r V); lra).
      assert (N <= k - 1)%Z by (apply lt_IZR in H0; lia).
      apply IZR_le in H1. rewrite minus_IZR in H1.
      assert (IZR N * V <= (IZR k - 1) * V) by (apply Rmult_le_compat_r; lra). lra.
  - (* t ≤ e − 24: |f| < 2^23·V ≤ c *)
    pose proof (abs_n_bound n Hn) as Hn'.
    assert (Hpt : pow2 t <= V / 2).
    { replace (V / 2) with (pow2 (e - 24)).
      + apply bpow_le. lia.
      + unfold V. replace (e - 23)%Z with ((e - 24) + 1)%Z by ring. rewrite pow2_split by lia. simpl. lra. }
    assert (Hpt0 : 0 < pow2 t) by apply pow2_pos.
    assert (Habs : Rabs f <= 16777215 * (V / 2)).
    { rewrite Hf, Rabs_mult, (Rabs_pos_eq (pow2 t)) by lra.
      apply Rmult_le_compat; try lra; apply Rabs_pos. }
    pose proof (Rle_abs f) as Hf1.
    assert (Hlow : IZR k * V >= 8388608 * V) by (apply Rmult_ge_compat_r; lra).
    split; intro H.
    + lra.
    + destruct (Z.eq_dec k (2 ^ 23)) as [Hk23 | Hk23].
      * destruct (Z.eq_dec t (e - 24)) as [Ht24 | Ht24].
        -- (* f = n·V/2, an integer multiple of V/2 below k·V *)
           right. split; [exact Hk23 |].
           assert (Hp : pow2 t = V / 2) by (rewrite Ht24; unfold V;
             replace (e - 23)%Z with ((e - 24) + 1)%Z by ring; rewrite pow2_split by lia; simpl; lra).
           rewrite Hf, Hp in H |- *.
           assert (IZR n < 2 * IZR k) by nra.
           assert (n < 2 * k)%Z by (apply lt_IZR; rewrite mult_IZR; simpl; lra).
           assert (H2 : (n <= 2 * k - 1)%Z) by lia. clear H1.
           apply IZR_le in H2. rewrite minus_IZR, mult_IZR in H2. simpl in H2. nra.
        -- (* t ≤ e − 25: |f| < 2^22·V *)
           left. assert (pow2 t <= V / 4).
           { replace (V / 4) with (pow2 (e - 25)).
             + apply bpow_le. lia.
             + unfold V. replace (e - 23)%Z with ((e - 25) + 2)%Z by ring. rewrite pow2_split by lia. simpl. lra. }
           assert (Rabs f <= 16777215 * (V / 4)).
           { rewrite Hf, Rabs_mult, (Rabs_pos_eq (pow2 t)) by lra.
             apply Rmult_le_compat; try lra; apply Rabs_pos. }
           lra.
      * left. assert (8388609 <= IZR k) by (apply IZR_le; simpl in Hk; lia).
        assert (IZR k * V >= 8388609 * V) by (apply Rmult_ge_compat_r; lra). lra.
Qed.

Lemma binary32_le24 : forall n t, (Z.abs n <= 2 ^ 24)%Z -> (-149 <= t)%Z -> binary32 (IZR n * pow2 t).
Proof.
  intros n t Hn Ht. destruct (Z_lt_le_dec (Z.abs n) (2 ^ 24)) as [Hl | Hl].
  - exists n, t. auto.
  - (* n = ±2^24 = ±2^23·2 *)
    exists (n / 2)%Z, (t + 1)%Z. split; [| split; [| lia]].
    + assert (Hn2 : n = (2 * (n / 2))%Z).
      { assert (Z.abs n = 2 ^ 24)%Z by lia.
        destruct (Z.abs_spec n) as [[_ A] | [_ A]]; rewrite A in H.
        - subst n. reflexivity.
        - replace n with (- 2 ^ 24)%Z by lia. reflexivity. }
      rewrite Hn2 at 1. rewrite mult_IZR, bpow_plus. simpl (pow2 1). rewrite IZR_Zpower_pos. simpl. ring.
    + assert (Z.abs n = 2 ^ 24)%Z by lia.
      destruct (Z.abs_spec n) as [[_ A] | [_ A]]; rewrite A in H.
      * subst n. reflexivity.
      * replace n with (- 2 ^ 24)%Z by lia. reflexivity.
Qed.

(* A real strictly within half a spacing of c (a quarter, below 2^e where the spacing halves) has
   c as its one nearest binary32 value. *)
Lemma unique_nearest : forall (e k : Z) X,
  (-126 <= e)%Z -> (2 ^ 23 <= k <= 2 ^ 24)%Z ->
  let V := pow2 (e - 23) in
  IZR k * V - V / 2 < X < IZR k * V + V / 2 ->
  (k = (2 ^ 23)%Z -> IZR k * V - V / 4 < X) ->
  forall r, nearest32 X r <-> r = IZR k * V.
Proof.
  intros e k X He Hk V HX Hbot.
  assert (HV : 0 < V) by apply pow2_pos.
  set (c := IZR k * V) in *.
  assert (Hc : binary32 c) by (apply binary32_le24; lia).
  assert (Closer : forall f, binary32 f -> f <> c -> Rabs (c - X) < Rabs (f - X)).
  { intros f Hf Hne. destruct (neighbours e k f He Hk Hf) as [Up Down]. fold V c in Up, Down.
    destruct (Rtotal_order f c) as [Hlt | [Heq | Hgt]].
    - destruct (Down Hlt) as [D | [Hk23 D]].
      + unfold Rabs; destruct (Rcase_abs (c - X)); destruct (Rcase_abs (f - X)); lra.
      + specialize (Hbot Hk23). unfold Rabs; destruct (Rcase_abs (c - X)); destruct (Rcase_abs (f - X)); lra.
    - contradiction.
    - specialize (Up Hgt). unfold Rabs; destruct (Rcase_abs (c - X)); destruct (Rcase_abs (f - X)); lra. }
  intro r. split.
  - intros [Hr Hmin]. destruct (Req_dec r c) as [E | E]; [exact E |].
    specialize (Closer r Hr E). specialize (Hmin c Hc). lra.
  - intro E. subst r. split; [exact Hc |]. intros f Hf.
    destruct (Req_dec f c) as [E | E]; [subst f; lra |]. specialize (Closer f Hf E). lra.
Qed.

(* ---------- the test by the bits ---------- *)

(* The code's test on bits(w): q = ((bits mod 2^32 + offset) mod 2^32) mod 2^29 (the low 32-bit word
   plus offset = 2^28 − M − 1, wrapping, masked with 2^29 − 1), kept when q ≤ 2^29 − 2M − 2. *)
Lemma code_window : forall B M : Z,
  (0 <= M)%Z -> (2 * M + 2 <= 2 ^ 29)%Z ->
  (((B mod 2 ^ 32 + (2 ^ 28 - M - 1)) mod 2 ^ 32) mod 2 ^ 29 <= 2 ^ 29 - 2 * M - 2 <->
   M + 1 <= (B + 2 ^ 28) mod 2 ^ 29 <= 2 ^ 29 - M - 1)%Z.
Proof.
  intros B M HM HM2.
  assert (Hq : (((B mod 2 ^ 32 + (2 ^ 28 - M - 1)) mod 2 ^ 32) mod 2 ^ 29 = (B + 2 ^ 28 - (M + 1)) mod 2 ^ 29)%Z).
  { assert (D : (2 ^ 29 | 2 ^ 32)%Z) by (exists 8%Z; reflexivity).
    rewrite <- (Znumtheory.Zmod_div_mod (2 ^ 29) (2 ^ 32)); [| lia | lia | exact D].
    rewrite Zplus_mod, <- (Znumtheory.Zmod_div_mod (2 ^ 29) (2 ^ 32)); [| lia | lia | exact D].
    rewrite <- Zplus_mod. f_equal. ring. }
  rewrite Hq. clear Hq. set (t := (B + 2 ^ 28)%Z).
  replace (B + 2 ^ 28 - (M + 1))%Z with (t - (M + 1))%Z by (unfold t; ring).
  pose proof (Z.div_mod (t - (M + 1)) (2 ^ 29) ltac:(lia)) as Q1.
  pose proof (Z.mod_pos_bound (t - (M + 1)) (2 ^ 29) ltac:(lia)) as R1.
  pose proof (Z.div_mod t (2 ^ 29) ltac:(lia)) as Q2.
  pose proof (Z.mod_pos_bound t (2 ^ 29) ltac:(lia)) as R2.
  set (q := ((t - (M + 1)) mod 2 ^ 29)%Z) in *. set (d := (t mod 2 ^ 29)%Z) in *.
  set (a := ((t - (M + 1)) / 2 ^ 29)%Z) in *. set (b := (t / 2 ^ 29)%Z) in *.
  clearbody q d a b. lia.
Qed.

(* bits(w) = s·2^63 + (e + 1023)·2^52 + (m − 2^52) for w = ±m·2^(e−52) normal: its low 29 bits are m's. *)
Lemma bits_low29 : forall s be m : Z,
  ((s * 2 ^ 63 + be * 2 ^ 52 + (m - 2 ^ 52)) mod 2 ^ 29 = m mod 2 ^ 29)%Z.
Proof.
  intros s be m.
  replace (s * 2 ^ 63 + be * 2 ^ 52 + (m - 2 ^ 52))%Z with (m + (s * 2 ^ 34 + be * 2 ^ 23 - 2 ^ 23) * 2 ^ 29)%Z
    by ring.
  apply Z_mod_plus_full.
Qed.

(* d = (m + 2^28) mod 2^29 in the window puts m within 2^28 − M − 1 of a multiple k·2^29,
   2^23 ≤ k ≤ 2^24, and at or above it when k = 2^23. *)
Lemma window_place : forall m M : Z,
  (2 ^ 52 <= m < 2 ^ 53)%Z -> (0 <= M)%Z ->
  (M + 1 <= (m + 2 ^ 28) mod 2 ^ 29 <= 2 ^ 29 - M - 1)%Z ->
  let k := ((m + 2 ^ 28) / 2 ^ 29)%Z in
  (2 ^ 23 <= k <= 2 ^ 24 /\
   k * 2 ^ 29 - 2 ^ 28 + M + 1 <= m <= k * 2 ^ 29 + 2 ^ 28 - M - 1 /\
   (k = 2 ^ 23 -> k * 2 ^ 29 <= m))%Z.
Proof.
  intros m M Hm HM Hd k.
  pose proof (Z.div_mod (m + 2 ^ 28) (2 ^ 29) ltac:(lia)) as Q.
  fold k in Q. set (d := ((m + 2 ^ 28) mod 2 ^ 29)%Z) in *.
  clearbody k d. lia.
Qed.

Definition ulp64 (e : Z) : R := pow2 (e - 52).

Lemma window_reals : forall U k m M X : R, 0 < U ->
  k * 536870912 - 268435456 + M + 1 <= m <= k * 536870912 + 268435456 - M - 1 ->
  Rabs (X - m * U) < (M + 1) * U ->
  k * (536870912 * U) - 536870912 * U / 2 < X < k * (536870912 * U) + 536870912 * U / 2.
Proof.
  intros U k m M X HU [Hlo Hhi] HX.
  assert (L : (k * 536870912 - 268435456 + M + 1) * U <= m * U) by (apply Rmult_le_compat_r; lra).
  assert (H : m * U <= (k * 536870912 + 268435456 - M - 1) * U) by (apply Rmult_le_compat_r; lra).
  pose proof (Rle_abs (X - m * U)). pose proof (Rle_abs (- (X - m * U))). rewrite Rabs_Ropp in *.
  split; lra.
Qed.

Lemma window_reals_bottom : forall U k m M X : R, 0 < U ->
  k * 536870912 <= m -> M + 1 <= 134217728 -> Rabs (X - m * U) < (M + 1) * U ->
  k * (536870912 * U) - 536870912 * U / 4 < X.
Proof.
  intros U k m M X HU Hk HM HX.
  assert (L : k * 536870912 * U <= m * U) by (apply Rmult_le_compat_r; lra).
  assert (L2 : (M + 1) * U <= 134217728 * U) by (apply Rmult_le_compat_r; lra).
  pose proof (Rle_abs (- (X - m * U))). rewrite Rabs_Ropp in *. lra.
Qed.

(* f32 data's test by the bits, step (ii): w = m·2^(e−52) positive and normal in binary32's range
   (e ≥ −126), d = (m + 2^28) mod 2^29 with M + 1 ≤ d ≤ 2^29 − M − 1 and M < 2^27: every real X
   with |X − w| < (M + 1)·2^(e−52) has one nearest binary32 value, the same for every such X. *)
Theorem bits_window_pos : forall (e m M : Z) X,
  (-126 <= e)%Z -> (2 ^ 52 <= m < 2 ^ 53)%Z -> (0 <= M)%Z -> (M + 1 <= 2 ^ 27)%Z ->
  (M + 1 <= (m + 2 ^ 28) mod 2 ^ 29 <= 2 ^ 29 - M - 1)%Z ->
  Rabs (X - IZR m * ulp64 e) < IZR (M + 1) * ulp64 e ->
  forall r, nearest32 X r <-> r = IZR ((m + 2 ^ 28) / 2 ^ 29) * pow2 (e - 23).
Proof.
  intros e m M X He Hm HM HM27 Hd HX.
  pose proof (window_place m M Hm HM Hd) as [Hk [Hlo Hbot]].
  set (k := ((m + 2 ^ 28) / 2 ^ 29)%Z) in *.
  assert (HU : 0 < ulp64 e) by apply pow2_pos.
  assert (HV : pow2 (e - 23) = 536870912 * ulp64 e).
  { unfold ulp64. replace (e - 23)%Z with ((e - 52) + 29)%Z by ring. rewrite pow2_split by lia. reflexivity. }
  rewrite plus_IZR in HX.
  apply (unique_nearest e k X He Hk); rewrite HV.
  - destruct Hlo as [Hlo Hhi]. apply IZR_le in Hlo. apply IZR_le in Hhi.
    repeat first [rewrite minus_IZR in Hlo | rewrite plus_IZR in Hlo | rewrite mult_IZR in Hlo].
    repeat first [rewrite minus_IZR in Hhi | rewrite plus_IZR in Hhi | rewrite mult_IZR in Hhi].
    apply (window_reals (ulp64 e) (IZR k) (IZR m) (IZR M) X HU); [split |]; assumption.
  - intro Hk23. specialize (Hbot Hk23). apply IZR_le in Hbot. apply IZR_le in HM27.
    rewrite mult_IZR in Hbot. rewrite plus_IZR in HM27.
    apply (window_reals_bottom (ulp64 e) (IZR k) (IZR m) (IZR M) X HU); assumption.
Qed.

Lemma binary32_opp : forall v, binary32 v -> binary32 (- v).
Proof.
  intros v [n [t [Hv [Hn Ht]]]]. exists (- n)%Z, t. rewrite opp_IZR, Hv.
  split; [ring | split; [rewrite Z.abs_opp; exact Hn | exact Ht]].
Qed.

Lemma nearest32_opp : forall x r, nearest32 x r -> nearest32 (- x) (- r).
Proof.
  intros x r [Hr Hmin]. split; [apply binary32_opp, Hr |]. intros f Hf.
  specialize (Hmin (- f) (binary32_opp f Hf)).
  replace (- r - - x) with (- (r - x)) by ring. replace (f - - x) with (- (- f - x)) by ring.
  rewrite !Rabs_Ropp. exact Hmin.
Qed.

(* Both signs (binary32 values are symmetric): X in the window has the nearest binary32 values of w,
   one value. Binary32 overflow is decided by that value (RN32 gives ±∞ exactly when it reaches 2^128
   in magnitude), so X and w also agree on it, for every e ≥ −126. *)
Theorem bits_window : forall (e m M : Z) X w,
  (-126 <= e)%Z -> (2 ^ 52 <= m < 2 ^ 53)%Z -> (0 <= M)%Z -> (M + 1 <= 2 ^ 27)%Z ->
  (M + 1 <= (m + 2 ^ 28) mod 2 ^ 29 <= 2 ^ 29 - M - 1)%Z ->
  (w = IZR m * ulp64 e \/ w = - (IZR m * ulp64 e)) ->
  Rabs (X - w) < IZR (M + 1) * ulp64 e ->
  exists c, forall r, (nearest32 X r <-> r = c) /\ (nearest32 w r <-> r = c).
Proof.
  intros e m M X w He Hm HM HM27 Hd Hw HX.
  assert (H0 : 0 < IZR (M + 1) * ulp64 e)
    by (apply Rmult_lt_0_compat; [apply IZR_lt; lia | apply pow2_pos]).
  set (c := IZR ((m + 2 ^ 28) / 2 ^ 29) * pow2 (e - 23)).
  destruct Hw as [Hw | Hw].
  - exists c. intro r. subst w. split.
    + apply (bits_window_pos e m M X He Hm HM HM27 Hd HX).
    + apply (bits_window_pos e m M _ He Hm HM HM27 Hd). unfold Rminus. rewrite Rplus_opp_r, Rabs_R0. exact H0.
  - (* −X is in the window of −w = m·2^(e−52) *)
    assert (Pos : forall Y, Rabs (Y - w) < IZR (M + 1) * ulp64 e -> forall r, nearest32 Y r <-> r = - c).
    { intros Y HY r. assert (HY' : Rabs (- Y - IZR m * ulp64 e) < IZR (M + 1) * ulp64 e).
      { replace (- Y - IZR m * ulp64 e) with (- (Y - w)) by (rewrite Hw; ring). rewrite Rabs_Ropp. exact HY. }
      pose proof (bits_window_pos e m M (- Y) He Hm HM HM27 Hd HY') as P. fold c in P.
      split.
      - intro N. apply nearest32_opp in N. apply P in N. lra.
      - intro E. subst r. rewrite <- (Ropp_involutive Y). apply nearest32_opp, P. reflexivity. }
    exists (- c). intro r. split; apply Pos; [exact HX |].
    unfold Rminus. rewrite Rplus_opp_r, Rabs_R0. exact H0.
Qed.

(* The window is sharp: with d = M (one pattern outside it, M = 2^16) some X within (M + 1)·ulp64 of
   w has a different nearest binary32 value (here w = 1 + 2^-24 + 2^-36 rounds to 1 + 2^-23, and
   X = w − (M + 1/2)·2^-52 < 1 + 2^-24 rounds to 1). *)
Lemma bits_window_sharp :
  let m := 4503599895871488%Z in                       (* 2^52 + 2^28 + 2^16 *)
  let w := IZR m * ulp64 0 in
  let X := w - (65536 + / 2) * ulp64 0 in
  ((m + 2 ^ 28) mod 2 ^ 29 = 2 ^ 16)%Z /\
  Rabs (X - w) < IZR (2 ^ 16 + 1) * ulp64 0 /\
  nearest32 w (1 + / 8388608) /\ nearest32 X 1.
Proof.
  intros m w X.
  assert (HU : 0 < ulp64 0) by apply pow2_pos.
  assert (Hp : pow2 (0 - 23) = / 8388608) by reflexivity.
  split; [reflexivity |]. split; [| split].
  - unfold X. replace (w - (65536 + / 2) * ulp64 0 - w) with (- ((65536 + / 2) * ulp64 0)) by ring.
    rewrite Rabs_Ropp, Rabs_pos_eq by lra. change (IZR (2 ^ 16 + 1)) with 65537. lra.
  - (* the window with M = 2^16 − 1 holds for w *)
    apply (bits_window_pos 0 m 65535 w); try (apply Z.leb_le; reflexivity) || lia.
    + split; apply Z.leb_le; reflexivity.
    + unfold Rminus. rewrite Rplus_opp_r, Rabs_R0. apply Rmult_lt_0_compat; [apply IZR_lt; lia | exact HU].
    + rewrite Hp. change (IZR ((m + 2 ^ 28) / 2 ^ 29)) with 8388609. field.
  - (* X is in the window (M = 2^16) of w' = (2^52 + 2^28 − 2^16 − 1)·2^-52, d' = 2^29 − 2^16 − 1 *)
    apply (bits_window_pos 0 4503599895740415 65536 X); try lia.
    + split; apply Z.leb_le; reflexivity.
    + replace (X - 4503599895740415 * ulp64 0) with ((65536 + / 2) * ulp64 0) by (subst X w m; field).
      rewrite Rabs_pos_eq by lra. change (IZR (65536 + 1)) with 65537. lra.
    + rewrite Hp. change (IZR ((4503599895740415 + 2 ^ 28) / 2 ^ 29)) with 8388608. field.
Qed.

(* ---------- the cell test ---------- *)

(* Every binary32 value has a representation n·2^t with |n| ≥ 2^23 or t = −149. *)
Lemma binary32_normalized : forall a, binary32 a ->
  exists n t, a = IZR n * pow2 t /\ (Z.abs n < 2 ^ 24)%Z /\ (-149 <= t)%Z /\
              ((2 ^ 23 <= Z.abs n)%Z \/ t = (-149)%Z).
Proof.
  intros a [n0 [t0 [Ha [Hn Ht]]]].
  assert (Main : forall k n t, Z.to_nat (t + 149) = k -> a = IZR n * pow2 t -> (Z.abs n < 2 ^ 24)%Z ->
            (-149 <= t)%Z -> exists n' t', a = IZR n' * pow2 t' /\ (Z.abs n' < 2 ^ 24)%Z /\ (-149 <= t')%Z /\
            ((2 ^ 23 <= Z.abs n')%Z \/ t' = (-149)%Z)).
  { induction k as [| k IH]; intros n t Hk Ha' Hn' Ht'.
    - exists n, t. repeat split; try assumption. right. lia.
    - destruct (Z_le_gt_dec (2 ^ 23) (Z.abs n)) as [Big | Small].
      + exists n, t. repeat split; try assumption. left. exact Big.
      + apply (IH (2 * n)%Z (t - 1)%Z); [lia | | lia | lia].
        rewrite Ha'. replace t with ((t - 1) + 1)%Z at 1 by ring. rewrite pow2_split by lia.
        rewrite mult_IZR. change (IZR (2 ^ 1)) with 2. ring. }
  exact (Main _ n0 t0 eq_refl Ha Hn Ht).
Qed.

(* A binary32 value a has binary32 neighbours p < a < s within max(2^-23·|a|, 2^-149) of it
   (ulp32(a) ≤ max(2u32|a|, 2μ32), u32 = 2^-24, μ32 = 2^-150). *)
Lemma binary32_neighbours : forall a, binary32 a ->
  exists p s, binary32 p /\ binary32 s /\ p < a < s /\
              a - p <= Rmax (Rabs a / 8388608) (pow2 (-149)) /\ s - a <= Rmax (Rabs a / 8388608) (pow2 (-149)).
Proof.
  intros a Ha. destruct (binary32_normalized a Ha) as [n [t [Hv [Hn [Ht Hc]]]]].
  assert (Hp : 0 < pow2 t) by apply pow2_pos.
  assert (Gap : pow2 t <= Rmax (Rabs a / 8388608) (pow2 (-149))).
  { destruct Hc as [Big | Low].
    - eapply Rle_trans; [| apply Rmax_l]. rewrite Hv, Rabs_mult, (Rabs_pos_eq (pow2 t)) by lra.
      assert (8388608 <= Rabs (IZR n)) by (rewrite <- abs_IZR; apply IZR_le; simpl in Big; lia).
      assert (8388608 * pow2 t <= Rabs (IZR n) * pow2 t) by (apply Rmult_le_compat_r; lra). lra.
    - subst t. apply Rmax_r. }
  exists (IZR (n - 1) * pow2 t), (IZR (n + 1) * pow2 t).
  rewrite minus_IZR, plus_IZR.
  split; [rewrite <- minus_IZR; apply binary32_le24; lia |].
  split; [rewrite <- plus_IZR; apply binary32_le24; lia |].
  subst a. repeat split; lra.
Qed.

Lemma round_below : forall x p a r, binary32 p -> x <= p -> p < a -> nearest32 x r -> r < a.
Proof.
  intros x p a r Hp Hx Hpa [_ Hmin]. specialize (Hmin p Hp).
  rewrite (Rabs_pos_eq (p - x)) in Hmin by lra.
  destruct (Rlt_or_le r a) as [Hr | Hr]; [exact Hr |].
  pose proof (Rle_abs (r - x)). lra.
Qed.

Lemma round_above : forall x s a r, binary32 s -> s <= x -> a < s -> nearest32 x r -> a < r.
Proof.
  intros x s a r Hs Hx Has [_ Hmin]. specialize (Hmin s Hs).
  rewrite (Rabs_minus_sym s x), (Rabs_pos_eq (x - s)) in Hmin by lra.
  destruct (Rlt_or_le a r) as [Hr | Hr]; [exact Hr |].
  pose proof (Rle_abs (x - r)) as Hxr. rewrite (Rabs_minus_sym x r) in Hxr. lra.
Qed.

(* The cell test's step (ii): a binary32 and E ≥ max(2^-23·|a|, 2^-149) (≥ ulp32(a)): the binary32
   values nearest to a − E and a + E (lo and hi, any tie rule) lie strictly below and above a. *)
Theorem cell_ends : forall a E lo hi, binary32 a ->
  Rmax (Rabs a / 8388608) (pow2 (-149)) <= E ->
  nearest32 (a - E) lo -> nearest32 (a + E) hi -> lo < a < hi.
Proof.
  intros a E lo hi Ha HE Hlo Hhi.
  destruct (binary32_neighbours a Ha) as [p [s [Hp [Hs [[Hpa Has] [Gp Gs]]]]]].
  split; [apply (round_below (a - E) p a lo) | apply (round_above (a + E) s a hi)]; auto; lra.
Qed.

Lemma pow2_m149 : pow2 (-149) = 2 * / 2 ^ 150.
Proof.
  replace (-149)%Z with (1 + - (150))%Z by ring. rewrite bpow_plus, bpow_opp.
  change (pow2 1) with 2. f_equal. f_equal.
  rewrite <- (IZR_Zpower radix2 150) by lia. rewrite pow_IZR. reflexivity.
Qed.

(* The margin of step (ii): |a32| ≤ (P + Q)(1 + 2.0001u32) and E_a ≥ (1 − u32)²(4.1(1 − 2^-52)u32(P + Q)
   + F) − 2μ32 (F = 2^-146 = 16μ32) give E_a ≥ 4.09u32|a32| + 13μ32 ≥ max(2u32|a32|, 2μ32). *)
Theorem cell_margin : forall a PQ E,
  0 <= PQ -> Rabs a <= PQ * (1 + 20001 / 10000 * / 16777216) ->
  (1 - / 16777216) ^ 2 * (41 / 10 * (1 - / 2 ^ 52) * / 16777216 * PQ + / 2 ^ 146) - 2 * / 2 ^ 150 <= E ->
  409 / 100 * / 16777216 * Rabs a + 13 * / 2 ^ 150 <= E /\
  Rmax (Rabs a / 8388608) (pow2 (-149)) <= E.
Proof.
  intros a PQ E HPQ Ha HE. rewrite pow2_m149.
  assert (Hm : 0 < / 2 ^ 150) by (apply Rinv_0_lt_compat, pow_lt; lra).
  assert (HF : / 2 ^ 146 = 16 * / 2 ^ 150) by (rewrite <- (Rinv_inv 16), <- Rinv_mult; f_equal; simpl; lra).
  rewrite HF in HE. pose proof (Rabs_pos a).
  assert (A : 409 / 100 * / 16777216 * Rabs a + 13 * / 2 ^ 150 <= E).
  { assert (409 / 100 * / 16777216 * Rabs a <= 409 / 100 * / 16777216 * (PQ * (1 + 20001 / 10000 * / 16777216)))
      by (apply Rmult_le_compat_l; lra).
    simpl in HE |- *. lra. }
  split; [exact A |]. apply Rmax_lub; lra.
Qed.

(* The cell test's step (i): under decide32_sound's premises the ends enclose the exact value
   strictly. The kernels' floor F = 2^-146 = 16μ32 leaves room for 9μ32 where decide_component needs
   6μ32, so the proof goes through with every subnormal term μ32 raised to 1.5μ32 and lo, hi moved
   inward by μ32/2. *)
Theorem decide32_strict : forall g x y ch sh c64 s64 c s C S p2 out K Kt ka wa64 wa kb wb64 wb ein E lo hi,
  C * C + S * S = 1 ->
  Rabs (ch - C) <= delta64_fast -> Rabs (sh - S) <= delta64_fast ->
  Rabs (c64 - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (s64 - g * sh) <= eps64 * Rabs (g * sh) + mu64 ->
  Rabs (c - c64) <= u32 * Rabs c64 + mu32 ->
  Rabs (s - s64) <= u32 * Rabs s64 + mu32 ->
  Rabs (p2 - y * s) <= u32 * Rabs (y * s) + mu32 ->
  Rabs (out - (x * c + p2)) <= u32 * Rabs (x * c + p2) + mu32 ->
  40999 / 10000 * u32 <= K -> / 2 ^ 50 * Rmax 1 (Rabs g) <= Kt ->
  Rabs (ka - K * Rabs c) <= eps64 * (K * Rabs c) + mu64 ->
  Rabs (wa64 - (ka + Kt)) <= eps64 * Rabs (ka + Kt) + mu64 -> wa64 <= wa ->
  Rabs (kb - K * Rabs s) <= eps64 * (K * Rabs s) + mu64 ->
  Rabs (wb64 - (kb + Kt)) <= eps64 * Rabs (kb + Kt) + mu64 -> wb64 <= wb ->
  Rabs (ein - (Rabs y * wb + / 2 ^ 146)) <= u32 * Rabs (Rabs y * wb + / 2 ^ 146) + mu32 ->
  Rabs (E - (Rabs x * wa + ein)) <= u32 * Rabs (Rabs x * wa + ein) + mu32 ->
  Rabs (lo - (out - E)) <= u32 * Rabs (out - E) + mu32 ->
  Rabs (hi - (out + E)) <= u32 * Rabs (out + E) + mu32 ->
  lo < g * (x * C + y * S) < hi.
Proof.
  intros g x y ch sh c64 s64 c s C S p2 out K Kt ka wa64 wa kb wb64 wb ein E lo hi
         Hunit Hch Hsh Hc64 Hs64 Hc Hs Hp2 Hout HK HKt Hka Hwa64 Hwa Hkb Hwb64 Hwb Hein HE Hlo Hhi.
  assert (HC1 : Rabs C <= 1) by (apply le_of_square; [lra |]; rewrite Rabs_sq; assert (0 <= S * S) by apply Rle_0_sqr; lra).
  assert (HS1 : Rabs S <= 1) by (apply le_of_square; [lra |]; rewrite Rabs_sq; assert (0 <= C * C) by apply Rle_0_sqr; lra).
  pose proof (decide32_entry g ch c64 c C HC1 Hch Hc64 Hc) as Ec.
  pose proof (decide32_entry g sh s64 s S HS1 Hsh Hs64 Hs) as Es.
  destruct (decide32_conditions g K Kt HK HKt) as [C1 [C2 _]].
  pose proof u32_pos as Hu. pose proof mu32_pos as Hm. pose proof eps64_pos as He. pose proof eps64_small as He1.
  destruct mu64_small as [Hm64 _].
  assert (Hu1 : u32 <= / 1000) by (rewrite u32_value; lra).
  assert (Heta : 0 <= 10000001 / 10000000 * entry_eta g).
  { unfold entry_eta, kk_fast. pose proof (Rabs_pos g).
    assert (0 <= eps64 * (Rabs g * (425 / 100 + 1 + 425 / 100 * eps64))) by (apply Rmult_le_pos; [lra | apply Rmult_le_pos; lra]).
    assert (0 <= (1 + u32) * (eps64 * (Rabs g * (425 / 100 + 1 + 425 / 100 * eps64)) + mu64)) by (apply Rmult_le_pos; lra).
    lra. }
  set (h := mu32 / 2).
  assert (C3 : 6 * (mu32 + h) <= (1 - u32) ^ 3 * / 2 ^ 146) by (unfold h, mu32; rewrite u32_value; simpl; lra).
  assert (Hlo' : Rabs (lo + h - (out - E)) <= u32 * Rabs (out - E) + (mu32 + h)).
  { replace (lo + h - (out - E)) with ((lo - (out - E)) + h) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. rewrite (Rabs_pos_eq h) by (unfold h; lra). lra. }
  assert (Hhi' : Rabs (hi - h - (out + E)) <= u32 * Rabs (out + E) + (mu32 + h)).
  { replace (hi - h - (out + E)) with ((hi - (out + E)) + - h) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. rewrite Rabs_Ropp, (Rabs_pos_eq h) by (unfold h; lra). lra. }
  assert (Hh : 0 < h) by (unfold h; lra).
  replace (g * (x * C + y * S)) with (x * (g * C) + y * (g * S)) by ring.
  assert (B : lo + h <= x * (g * C) + y * (g * S) <= hi - h).
  { apply (decide_component u32 (mu32 + h) eps64 mu64 (10000001 / 10000000 * u32) K Kt (/ 2 ^ 146)
             (10000001 / 10000000 * entry_eta g) x y c s (g * C) (g * S) p2 out ka wa64 wa kb wb64 wb ein E
             (lo + h) (hi - h));
      try assumption; try lra. }
  lra.
Qed.
