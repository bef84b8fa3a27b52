(* ErrorBound.v — the normwise error bound of the f32 rotation, and of f16/bf16 outputs, from the
   per-operation error facts proven by the Gappa scripts in ../gappa/ (see ../README.md).

   DESIGN.md's metric: e = max(|a − A|, |b − B|) / (u·ρ), ρ = sqrt(x² + y²), u = 2^-24 for f32.
   The kernel computes, for one pair (x, y) of binary32 inputs and binary32 c ≈ C, s ≈ S where
   (C, S) = (cos φ, sin φ) is the exact rotation of the pair:
       out0 = RN32(fma(x, c, −RN32(y·s)))  = RN32(x·c + RN32(y·(−s)))    (RNE is odd: RN(−v) = −RN(v))
       out1 = RN32(fma(x, s,  RN32(y·c)))  = RN32(x·s + RN32(y·c))
   Both are one instance of   out = RN(x·a + RN(y·b))   with exact value x·A + y·B and A² + B² = 1:
   (a, b, A, B) = (c, −s, C, −S) for out0 and (s, c, S, C) for out1.

   What is assumed about each rounding (all are facts about binary32 RNE, machine-checked in
   gappa/rounding_f32.g; the angle chain bound eta is machine-checked in gappa/angle_f32.g):
   - |RN32(v) − v| ≤ u·|v| + mu,    mu = 2^-150 covers the subnormal range;
   - |a − A| ≤ u·|A| + eta' and |a − A| ≤ u/2 + eta'  (a = RN32 of a double within eta of A,
     |A| ≤ 1: half an ulp of a number below 1 is ≤ 2^-25 = u/2), same for b.
   No hypothesis bounds |x| or |y|: the result is homogeneous in ρ. *)

From Coq Require Import Reals Lra Lia.
Open Scope R_scope.

(* Cauchy–Schwarz in the plane. *)
Lemma cauchy_schwarz2 : forall p q r s, (p * q + r * s) * (p * q + r * s) <= (p * p + r * r) * (q * q + s * s).
Proof.
  intros. assert (0 <= (p * s - r * q) * (p * s - r * q)) by apply Rle_0_sqr. nra.
Qed.

Lemma le_of_square : forall a b, 0 <= b -> a * a <= b * b -> a <= b.
Proof. intros a b Hb H. nra. Qed.

(* The geometric heart of the bound. With (A, B) on the unit circle and ax = |x|, ay = |y|:
     |x·A + y·B| + |y·B| + |x|·ma + |y|·mb ≤ 5/2·ρ
   for the choice (ma, mb) = (1/2, |B|) when |B| ≤ 1/2 and (|A|, 1/2) otherwise — the two
   forms of the cos/sin rounding error (relative, or half an ulp below 1). *)
Lemma geometric_small_B : forall ax ay aA aB rho,
  0 <= ax -> 0 <= ay -> 0 <= aA -> 0 <= aB -> aB <= 1/2 -> aA * aA + aB * aB = 1 ->
  0 <= rho -> rho * rho = ax * ax + ay * ay ->
  (ax * aA + ay * aB) + ay * aB + ax * (1/2) + ay * aB <= 5/2 * rho.
Proof.
  intros ax ay aA aB rho Hx Hy HA HB HB2 Hunit Hr Hrho.
  assert (CS1 : ax * aA + ay * aB <= rho).
  { apply le_of_square; [exact Hr |]. pose proof (cauchy_schwarz2 ax aA ay aB). nra. }
  assert (CS2 : ay + ax * (1/2) <= 3/2 * rho).
  { apply le_of_square; [lra |]. pose proof (cauchy_schwarz2 ay 1 ax (1/2)). nra. }
  nra.
Qed.

Lemma geometric_large_B : forall ax ay aA aB rho,
  0 <= ax -> 0 <= ay -> 0 <= aA -> 0 <= aB -> 1/2 <= aB -> aA * aA + aB * aB = 1 ->
  0 <= rho -> rho * rho = ax * ax + ay * ay ->
  (ax * aA + ay * aB) + ay * aB + ax * aA + ay * (1/2) <= 5/2 * rho.
Proof.
  intros ax ay aA aB rho Hx Hy HA HB HB2 Hunit Hr Hrho.
  assert (CS1 : ax * aA + ay * aB <= rho).
  { apply le_of_square; [exact Hr |]. pose proof (cauchy_schwarz2 ax aA ay aB). nra. }
  assert (aB <= 1) by nra.
  assert (CS2 : ay * (aB + 1/2) + ax * aA <= 3/2 * rho).
  { apply le_of_square; [lra |]. pose proof (cauchy_schwarz2 ay (aB + 1/2) ax aA). nra. }
  nra.
Qed.

(* Error propagation through out = RN(x·a + RN(y·b)), for any bounds ma, mb on the relative part
   of the errors of a and b. *)
Lemma propagation : forall u mu eta x y a b A B p2 out ma mb,
  0 <= u -> 0 <= mu -> 0 <= eta -> 0 <= ma -> 0 <= mb ->
  Rabs (a - A) <= u * ma + eta -> Rabs (b - B) <= u * mb + eta ->
  Rabs (p2 - y * b) <= u * Rabs (y * b) + mu ->
  Rabs (out - (x * a + p2)) <= u * Rabs (x * a + p2) + mu ->
  Rabs (out - (x * A + y * B)) <=
    (1 + u) * (1 + u) * u * (Rabs (x * A + y * B) + Rabs (y * B) + Rabs x * ma + Rabs y * mb)
    + (1 + u) * (1 + u) * eta * (Rabs x + Rabs y) + (2 + u) * mu.
Proof.
  intros u mu eta x y a b A B p2 out ma mb Hu Hmu Heta Hma Hmb Ha Hb Hp2 Hout.
  set (E3 := Rabs x * (u * ma + eta) + Rabs y * (u * mb + eta)).
  assert (Hxa : Rabs (x * (a - A)) <= Rabs x * (u * ma + eta))
    by (rewrite Rabs_mult; apply Rmult_le_compat_l; [apply Rabs_pos | exact Ha]).
  assert (Hyb : Rabs (y * (b - B)) <= Rabs y * (u * mb + eta))
    by (rewrite Rabs_mult; apply Rmult_le_compat_l; [apply Rabs_pos | exact Hb]).
  assert (He3 : Rabs (x * (a - A) + y * (b - B)) <= E3).
  { eapply Rle_trans; [apply Rabs_triang | unfold E3; lra]. }
  assert (Hyb2 : Rabs (y * b) <= Rabs (y * B) + E3).
  { replace (y * b) with (y * B + y * (b - B)) by ring.
    eapply Rle_trans; [apply Rabs_triang |].
    assert (0 <= Rabs x * (u * ma + eta)) by (apply Rmult_le_pos; [apply Rabs_pos | nra]).
    unfold E3; lra. }
  assert (He2 : Rabs (p2 - y * b) <= u * Rabs (y * B) + u * E3 + mu).
  { eapply Rle_trans; [exact Hp2 |]. nra. }
  assert (Hsum : Rabs (x * a + p2) <= Rabs (x * A + y * B) + E3 + Rabs (p2 - y * b)).
  { replace (x * a + p2) with ((x * A + y * B) + (x * (a - A) + y * (b - B)) + (p2 - y * b)) by ring.
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |]. lra. }
  assert (Htot : Rabs (out - (x * A + y * B)) <=
                 Rabs (out - (x * a + p2)) + E3 + Rabs (p2 - y * b)).
  { replace (out - (x * A + y * B)) with
      ((out - (x * a + p2)) + (x * (a - A) + y * (b - B)) + (p2 - y * b)) by ring.
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |]. lra. }
  pose proof (Rabs_pos (x * A + y * B)). pose proof (Rabs_pos (y * B)).
  pose proof (Rabs_pos x). pose proof (Rabs_pos y).
  assert (0 <= E3) by (unfold E3; apply Rplus_le_le_0_compat; apply Rmult_le_pos; try apply Rabs_pos; nra).
  assert (HE3 : E3 = u * (Rabs x * ma + Rabs y * mb) + eta * (Rabs x + Rabs y)) by (unfold E3; ring).
  assert (Hout' : Rabs (out - (x * a + p2)) <=
                  u * (Rabs (x * A + y * B) + E3 + u * Rabs (y * B) + u * E3 + mu) + mu).
  { eapply Rle_trans; [exact Hout |]. apply Rplus_le_compat_r. apply Rmult_le_compat_l; [lra |]. lra. }
  assert (Hfin : Rabs (out - (x * A + y * B)) <=
                 u * Rabs (x * A + y * B) + (1 + u) * u * Rabs (y * B) + (1 + u) * (1 + u) * E3 + (2 + u) * mu).
  { eapply Rle_trans; [exact Htot |].
    assert (Rabs (out - (x * a + p2)) + E3 + Rabs (p2 - y * b) <=
            u * (Rabs (x * A + y * B) + E3 + u * Rabs (y * B) + u * E3 + mu) + mu
            + E3 + (u * Rabs (y * B) + u * E3 + mu)).
    { apply Rplus_le_compat; [apply Rplus_le_compat_r; exact Hout' | exact He2]. }
    eapply Rle_trans; [eassumption |]. right. ring. }
  eapply Rle_trans; [exact Hfin |]. rewrite HE3.
  match goal with |- ?L <= ?R =>
    assert (D : R - L = u * u * (2 + u) * Rabs (x * A + y * B) + u * u * (1 + u) * Rabs (y * B)) by ring end.
  assert (0 <= u * u * (2 + u) * Rabs (x * A + y * B))
    by (apply Rmult_le_pos; [apply Rmult_le_pos; [apply Rle_0_sqr | lra] | apply Rabs_pos]).
  assert (0 <= u * u * (1 + u) * Rabs (y * B))
    by (apply Rmult_le_pos; [apply Rmult_le_pos; [apply Rle_0_sqr | lra] | apply Rabs_pos]).
  lra.
Qed.

Lemma abs_sum_le : forall x y rho, 0 <= rho -> rho * rho = x * x + y * y ->
  Rabs x + Rabs y <= 1415 / 1000 * rho.
Proof.
  intros x y rho Hr Hrho. apply le_of_square; [lra |].
  pose proof (Rabs_pos x). pose proof (Rabs_pos y).
  assert (Rabs x * Rabs x = x * x) by (rewrite <- Rabs_mult; apply Rabs_right; nra).
  assert (Rabs y * Rabs y = y * y) by (rewrite <- Rabs_mult; apply Rabs_right; nra).
  assert (0 <= (Rabs x - Rabs y) * (Rabs x - Rabs y)) by apply Rle_0_sqr.
  assert (0 <= rho * rho) by apply Rle_0_sqr.
  nra.
Qed.

(* One component of the rotation, any unit vector (A, B), in absolute form:
   |out − (x·A + y·B)| ≤ (1+u)²·(5/2 + 1.415·eta/u)·u·ρ + (2+u)·mu. *)
Theorem rotation_component_bound : forall u mu eta x y a b A B p2 out rho,
  0 <= u -> 0 <= mu -> 0 <= eta -> A * A + B * B = 1 ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (a - A) <= u * Rabs A + eta -> Rabs (a - A) <= u * (1/2) + eta ->
  Rabs (b - B) <= u * Rabs B + eta -> Rabs (b - B) <= u * (1/2) + eta ->
  Rabs (p2 - y * b) <= u * Rabs (y * b) + mu ->
  Rabs (out - (x * a + p2)) <= u * Rabs (x * a + p2) + mu ->
  Rabs (out - (x * A + y * B)) <= (1 + u) * (1 + u) * (5/2 * u + 1415/1000 * eta) * rho + (2 + u) * mu.
Proof.
  intros u mu eta x y a b A B p2 out rho Hu Hmu Heta Hunit Hr Hrho Ha1 Ha2 Hb1 Hb2 Hp2 Hout.
  pose proof (Rabs_pos x) as Px. pose proof (Rabs_pos y) as Py.
  pose proof (Rabs_pos A) as PA. pose proof (Rabs_pos B) as PB.
  assert (Hx2 : Rabs x * Rabs x = x * x) by (rewrite <- Rabs_mult; apply Rabs_right; nra).
  assert (Hy2 : Rabs y * Rabs y = y * y) by (rewrite <- Rabs_mult; apply Rabs_right; nra).
  assert (HA2 : Rabs A * Rabs A = A * A) by (rewrite <- Rabs_mult; apply Rabs_right; nra).
  assert (HB2 : Rabs B * Rabs B = B * B) by (rewrite <- Rabs_mult; apply Rabs_right; nra).
  assert (Hdot : Rabs (x * A + y * B) <= Rabs x * Rabs A + Rabs y * Rabs B).
  { eapply Rle_trans; [apply Rabs_triang | rewrite !Rabs_mult; lra]. }
  assert (HyB : Rabs (y * B) = Rabs y * Rabs B) by apply Rabs_mult.
  pose proof (abs_sum_le x y rho Hr Hrho) as Hsum.
  assert (Hgeo : exists ma mb, 0 <= ma /\ 0 <= mb /\
            Rabs (a - A) <= u * ma + eta /\ Rabs (b - B) <= u * mb + eta /\
            Rabs (x * A + y * B) + Rabs (y * B) + Rabs x * ma + Rabs y * mb <= 5/2 * rho).
  { destruct (Rle_lt_dec (Rabs B) (1/2)) as [Hs | Hl].
    - exists (1/2), (Rabs B). repeat split; try lra; try assumption.
      pose proof (geometric_small_B (Rabs x) (Rabs y) (Rabs A) (Rabs B) rho Px Py PA PB Hs
                    ltac:(lra) Hr ltac:(lra)). lra.
    - exists (Rabs A), (1/2). repeat split; try lra; try assumption.
      pose proof (geometric_large_B (Rabs x) (Rabs y) (Rabs A) (Rabs B) rho Px Py PA PB ltac:(lra)
                    ltac:(lra) Hr ltac:(lra)). lra. }
  destruct Hgeo as [ma [mb [Hma [Hmb [Ha [Hb Hg]]]]]].
  pose proof (propagation u mu eta x y a b A B p2 out ma mb Hu Hmu Heta Hma Hmb Ha Hb Hp2 Hout) as P.
  eapply Rle_trans; [exact P |].
  assert (0 <= (1 + u) * (1 + u)) by nra.
  assert (0 <= (1 + u) * (1 + u) * u) by nra.
  assert (0 <= (1 + u) * (1 + u) * eta) by nra.
  assert (T1 : (1 + u) * (1 + u) * u * (Rabs (x * A + y * B) + Rabs (y * B) + Rabs x * ma + Rabs y * mb)
               <= (1 + u) * (1 + u) * u * (5/2 * rho)) by (apply Rmult_le_compat_l; assumption).
  assert (T2 : (1 + u) * (1 + u) * eta * (Rabs x + Rabs y) <= (1 + u) * (1 + u) * eta * (1415/1000 * rho))
    by (apply Rmult_le_compat_l; assumption).
  nra.
Qed.

(* ---------- the numbers: binary32 ---------- *)

Definition u32 : R := / 2 ^ 24.
Definition mu32 : R := / 2 ^ 150.      (* half the spacing of binary32 subnormals *)
(* eta32: bound on |a − A| beyond the RN32 rounding itself, i.e. (1 + u32)·|double cos/sin − exact| + mu32,
   where gappa/angle_f32.g proves |double cos/sin − exact| ≤ 1.4631e-9 (phase error ≤ 2^-32 turn,
   r = RN64(RN64(f)·RN64(2π)), library relative error ≤ 2^-50). *)
Definition eta32 : R := 1464 / 1000 * / 10 ^ 9.

Lemma u32_value : u32 = / 16777216. Proof. unfold u32. f_equal. ring. Qed.

(* f32 kernel, either output component: |out − exact| ≤ 2.535·u32·ρ + 3·mu32, for every pair and every
   position < 2^31 (the position enters only through eta32). Hence e ≤ 2.535 + 3·mu32/(u32·ρ), and
   e ≤ 2.54 whenever ρ ≥ 2^-100 (anything but pairs of subnormal size). *)
Theorem f32_rotation_bound : forall x y a b A B p2 out rho,
  A * A + B * B = 1 -> 0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (a - A) <= u32 * Rabs A + eta32 -> Rabs (a - A) <= u32 * (1/2) + eta32 ->
  Rabs (b - B) <= u32 * Rabs B + eta32 -> Rabs (b - B) <= u32 * (1/2) + eta32 ->
  Rabs (p2 - y * b) <= u32 * Rabs (y * b) + mu32 ->
  Rabs (out - (x * a + p2)) <= u32 * Rabs (x * a + p2) + mu32 ->
  Rabs (out - (x * A + y * B)) <= 2535 / 1000 * u32 * rho + 3 * mu32.
Proof.
  intros x y a b A B p2 out rho Hunit Hr Hrho Ha1 Ha2 Hb1 Hb2 Hp2 Hout.
  assert (Hu : 0 < u32) by (unfold u32; apply Rinv_0_lt_compat; apply pow_lt; lra).
  assert (Hmu : 0 < mu32) by (unfold mu32; apply Rinv_0_lt_compat; apply pow_lt; lra).
  assert (Hmu_small : mu32 <= u32) by (unfold mu32, u32; apply Rinv_le_contravar; [apply pow_lt; lra |];
                                      apply Rle_pow; lra || lia).
  assert (Heta : 0 <= eta32) by (unfold eta32; apply Rmult_le_pos; [lra | apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra]).
  pose proof (rotation_component_bound u32 mu32 eta32 x y a b A B p2 out rho (Rlt_le _ _ Hu) (Rlt_le _ _ Hmu)
                Heta Hunit Hr Hrho Ha1 Ha2 Hb1 Hb2 Hp2 Hout) as P.
  eapply Rle_trans; [exact P |].
  (* (1+u)²(5/2·u + 1.415·eta) ≤ 2.535·u and (2+u)·mu ≤ 3·mu *)
  rewrite u32_value in *. unfold eta32 in *.
  assert (K : (1 + / 16777216) * (1 + / 16777216) * (5 / 2 * / 16777216 + 1415 / 1000 * (1464 / 1000 * / 10 ^ 9))
              <= 2535 / 1000 * / 16777216) by (simpl; lra).
  assert (M : (2 + / 16777216) * mu32 <= 3 * mu32) by lra.
  assert (R : (1 + / 16777216) * (1 + / 16777216) * (5 / 2 * / 16777216 + 1415 / 1000 * (1464 / 1000 * / 10 ^ 9)) * rho
              <= 2535 / 1000 * / 16777216 * rho) by (apply Rmult_le_compat_r; assumption).
  lra.
Qed.

(* ---------- f16 and bf16 outputs: the f32 result rounded once more ---------- *)

(* out16 = RN16(out32) with |RN16(v) − v| ≤ u16·max(|v|, tiny16) (relative in the normal range, half
   the subnormal spacing below it: gappa/rounding_f16.g, rounding_bf16.g). For ρ ≥ tiny16 and
   |out32 − exact| ≤ err32, |exact| ≤ ρ:
       |out16 − exact| ≤ u16·(ρ + err32) + err32. *)
Theorem narrow_rounding_bound : forall u16 tiny16 rho exact out32 out16 err32,
  0 <= u16 -> 0 <= tiny16 -> tiny16 <= rho -> Rabs exact <= rho ->
  Rabs (out32 - exact) <= err32 ->
  Rabs (out16 - out32) <= u16 * Rmax (Rabs out32) tiny16 ->
  Rabs (out16 - exact) <= u16 * (rho + err32) + err32.
Proof.
  intros u16 tiny16 rho exact out32 out16 err32 Hu Ht Htr Hex H32 H16.
  assert (Hb : Rabs out32 <= rho + err32).
  { replace out32 with (exact + (out32 - exact)) by ring.
    eapply Rle_trans; [apply Rabs_triang | lra]. }
  assert (Hm : Rmax (Rabs out32) tiny16 <= rho + err32).
  { apply Rmax_lub; [exact Hb |]. pose proof (Rabs_pos (out32 - exact)). lra. }
  replace (out16 - exact) with ((out16 - out32) + (out32 - exact)) by ring.
  eapply Rle_trans; [apply Rabs_triang |].
  assert (u16 * Rmax (Rabs out32) tiny16 <= u16 * (rho + err32)) by (apply Rmult_le_compat_l; assumption).
  lra.
Qed.

(* The exact component x·A + y·B of a rotation is at most ρ in magnitude. *)
Lemma exact_component_le_rho : forall x y A B rho, A * A + B * B = 1 -> 0 <= rho ->
  rho * rho = x * x + y * y -> Rabs (x * A + y * B) <= rho.
Proof.
  intros x y A B rho Hu Hr Hrho. apply le_of_square; [exact Hr |].
  rewrite <- Rabs_mult, Rabs_right by (apply Rle_ge, Rle_0_sqr).
  pose proof (cauchy_schwarz2 x A y B). nra.
Qed.

(* binary16: u16 = 2^-11, tiny16 = 2^-14 (smallest normal). For 2^-14 ≤ ρ (and no overflow, which the
   hypotheses on the roundings exclude): e16 = |out16 − exact|/(u16·ρ) ≤ 1.001. *)
Theorem f16_rotation_bound : forall x y a b A B p2 out32 out16 rho,
  A * A + B * B = 1 -> / 2 ^ 14 <= rho -> rho * rho = x * x + y * y ->
  Rabs (a - A) <= u32 * Rabs A + eta32 -> Rabs (a - A) <= u32 * (1/2) + eta32 ->
  Rabs (b - B) <= u32 * Rabs B + eta32 -> Rabs (b - B) <= u32 * (1/2) + eta32 ->
  Rabs (p2 - y * b) <= u32 * Rabs (y * b) + mu32 ->
  Rabs (out32 - (x * a + p2)) <= u32 * Rabs (x * a + p2) + mu32 ->
  Rabs (out16 - out32) <= / 2 ^ 11 * Rmax (Rabs out32) (/ 2 ^ 14) ->
  Rabs (out16 - (x * A + y * B)) <= 1001 / 1000 * (/ 2 ^ 11) * rho.
Proof.
  intros x y a b A B p2 out32 out16 rho Hunit Hrmin Hrho Ha1 Ha2 Hb1 Hb2 Hp2 Hout H16.
  assert (Hr : 0 <= rho) by (eapply Rle_trans; [| exact Hrmin]; apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra).
  pose proof (f32_rotation_bound x y a b A B p2 out32 rho Hunit Hr Hrho Ha1 Ha2 Hb1 Hb2 Hp2 Hout) as H32.
  pose proof (exact_component_le_rho x y A B rho Hunit Hr Hrho) as Hex.
  pose proof (narrow_rounding_bound (/ 2 ^ 11) (/ 2 ^ 14) rho _ out32 out16 _
                ltac:(apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra)
                ltac:(apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra) Hrmin Hex H32 H16) as N.
  eapply Rle_trans; [exact N |].
  rewrite u32_value. unfold mu32.
  (* 3·mu32 ≤ 3·2^-150 ≤ 2^-146·ρ·2^14 is negligible; collect everything as a multiple of ρ. *)
  assert (Hmu : 3 * / 2 ^ 150 <= / 2 ^ 130 * rho).
  { eapply Rle_trans; [| apply Rmult_le_compat_l; [apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra | exact Hrmin]].
    simpl; lra. }
  simpl in *. nra.
Qed.

(* bfloat16: u = 2^-8, tiny = 2^-126 (bfloat16 has binary32's exponent range). For ρ ≥ 2^-126:
   e_bf16 ≤ 1.001. (3·mu32 = 3·2^-150 ≤ 2^-22·2^-8·ρ, negligible against u_bf16·ρ.) *)
Theorem bf16_rotation_bound : forall x y a b A B p2 out32 outbf rho,
  A * A + B * B = 1 -> / 2 ^ 126 <= rho -> rho * rho = x * x + y * y ->
  Rabs (a - A) <= u32 * Rabs A + eta32 -> Rabs (a - A) <= u32 * (1/2) + eta32 ->
  Rabs (b - B) <= u32 * Rabs B + eta32 -> Rabs (b - B) <= u32 * (1/2) + eta32 ->
  Rabs (p2 - y * b) <= u32 * Rabs (y * b) + mu32 ->
  Rabs (out32 - (x * a + p2)) <= u32 * Rabs (x * a + p2) + mu32 ->
  Rabs (outbf - out32) <= / 2 ^ 8 * Rmax (Rabs out32) (/ 2 ^ 126) ->
  Rabs (outbf - (x * A + y * B)) <= 1001 / 1000 * (/ 2 ^ 8) * rho.
Proof.
  intros x y a b A B p2 out32 outbf rho Hunit Hrmin Hrho Ha1 Ha2 Hb1 Hb2 Hp2 Hout Hbf.
  assert (Hr : 0 <= rho) by (eapply Rle_trans; [| exact Hrmin]; apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra).
  pose proof (f32_rotation_bound x y a b A B p2 out32 rho Hunit Hr Hrho Ha1 Ha2 Hb1 Hb2 Hp2 Hout) as H32.
  pose proof (exact_component_le_rho x y A B rho Hunit Hr Hrho) as Hex.
  pose proof (narrow_rounding_bound (/ 2 ^ 8) (/ 2 ^ 126) rho _ out32 outbf _
                ltac:(apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra)
                ltac:(apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra) Hrmin Hex H32 Hbf) as N.
  eapply Rle_trans; [exact N |].
  rewrite u32_value. unfold mu32.
  assert (Hmu : 3 * / 2 ^ 150 <= / 2 ^ 22 * rho).
  { eapply Rle_trans; [| apply Rmult_le_compat_l; [apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra | exact Hrmin]].
    simpl; lra. }
  simpl in *. nra.
Qed.

(* ---------- from the Gappa facts to the hypotheses above ---------- *)

(* a = RN32(cd) where cd is the double cos/sin result: gappa/angle_f32.g proves |cd − A| ≤ 1.46293e-9
   (A the exact cos/sin, position < 2^31), gappa/rounding_f32.g proves |RN32(v) − v| ≤ u32·|v| + mu32
   for all v and ≤ u32/2 for |v| ≤ 1 + 2^-40 (|cd| ≤ 1 + 2^-50). These give both hypotheses on a. *)
Lemma cos_sin_hypotheses : forall a cd A,
  Rabs (cd - A) <= 146293 / 100000 * / 10 ^ 9 ->
  Rabs (a - cd) <= u32 * Rabs cd + mu32 -> Rabs (a - cd) <= u32 * (1/2) ->
  Rabs (a - A) <= u32 * Rabs A + eta32 /\ Rabs (a - A) <= u32 * (1/2) + eta32.
Proof.
  intros a cd A Hcd Hrel Hhalf.
  assert (Hu : 0 < u32) by (unfold u32; apply Rinv_0_lt_compat; apply pow_lt; lra).
  assert (Hmu : mu32 <= / 10 ^ 40) by (unfold mu32; apply Rinv_le_contravar; [apply pow_lt; lra | simpl; lra]).
  assert (Hcd' : Rabs cd <= Rabs A + 146293 / 100000 * / 10 ^ 9).
  { replace cd with (A + (cd - A)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
  assert (Htri : Rabs (a - A) <= Rabs (a - cd) + Rabs (cd - A)).
  { replace (a - A) with ((a - cd) + (cd - A)) by ring. apply Rabs_triang. }
  assert (u32 * Rabs cd <= u32 * Rabs A + u32 * (146293 / 100000 * / 10 ^ 9))
    by (rewrite <- Rmult_plus_distr_l; apply Rmult_le_compat_l; lra).
  rewrite u32_value in *. unfold eta32. split; simpl in *; lra.
Qed.

(* ====================================================================================
   The kernels as written (optimized/kernel-inl.h, optimized/angle-inl.h, optimized/error_bounds.h):
   cos/sin and the rotation in binary64, then ONE rounding to the element type (via binary32 for
   f16/bf16):
       a = RN64(fma(x, c, −RN64(y·s))),  b = RN64(fma(x, s, RN64(y·c)))
       out = a (f64), RN32(a) (f32), RN16(RN32(a)) (f16), RNbf16(RN32(a)) (bf16)
   with |c − C|, |s − S| ≤ delta, where delta depends on the angle path (PlanView::precise_angles):
   - f64 data, PRECISE path: delta = delta64 = 1.25·eps64 = kPreciseCosSinError of
     optimized/error_bounds.h (its steps 1–3: 128-bit phase, double-double reduction, Taylor
     polynomials with the r_lo correction);
   - f32/f16/bf16 data, FAST path: delta = delta64_fast = 4.25·eps64 = kFastCosSinError of
     optimized/error_bounds.h (its steps 1, 2′, 3′: phase truncated to 64 bits, remainder rounded
     to 2^-54 turn, r = RN(d·K), the same polynomials without r_lo).
   Both deltas are derived BY HAND in error_bounds.h and taken here as premises of the theorems;
   they are NOT machine-checked (the Gappa scripts cover only the float32 recipe's angle chain,
   gappa/angle_f32.g, not these paths). Everything from delta to the normwise bound is.
   Since delta64 ≤ delta64_fast, the f32/f16/bf16 theorems also hold for data routed through the
   precise path.
   ==================================================================================== *)

Definition eps64 : R := / 2 ^ 53.
Definition mu64 : R := / 2 ^ 1075.     (* half the spacing of binary64 subnormals *)
Definition delta64 : R := 125 / 100 * eps64.       (* kPreciseCosSinError (error_bounds.h steps 1–3) *)
Definition delta64_fast : R := 425 / 100 * eps64.  (* kFastCosSinError (error_bounds.h steps 1, 2′, 3′) *)

Lemma eps64_pos : 0 < eps64. Proof. unfold eps64; apply Rinv_0_lt_compat, pow_lt; lra. Qed.
Lemma mu64_small : 0 <= mu64 /\ mu64 <= / 2 ^ 200.
Proof.
  unfold mu64. split; [apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra |].
  apply Rinv_le_contravar; [apply pow_lt; lra | apply Rle_pow; [lra | lia]].
Qed.

Lemma delta64_le_fast : delta64 <= delta64_fast.
Proof. unfold delta64, delta64_fast. pose proof eps64_pos. lra. Qed.

(* Binary64 rotation for any cos/sin error delta = k·eps64, and any m with
   (1 + eps64)²·(2 + 1.415·k) ≤ m:   |a − exact| ≤ m·eps64·ρ + 3·mu64.
   (error_bounds.h step 4: ρκ + ε|y s| + ε|a|, here with |x| + |y| ≤ 1.415ρ in place of √2.) *)
Lemma binary64_rotation_bound : forall k m x y c s C S p2 a rho,
  0 <= k -> (1 + eps64) * (1 + eps64) * (2 + k * (1415 / 1000)) <= m ->
  C * C + S * S = 1 -> 0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - C) <= k * eps64 -> Rabs (s - S) <= k * eps64 ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (a - (x * C + y * S)) <= m * eps64 * rho + 3 * mu64.
Proof.
  intros k m x y c s C S p2 a rho Hk Hm Hunit Hr Hrho Hc Hs Hp2 Ha.
  pose proof eps64_pos as He. destruct mu64_small as [Hmu _].
  assert (Hd : 0 <= k * eps64) by nra.
  pose proof (propagation eps64 mu64 (k * eps64) x y c s C S p2 a 0 0 (Rlt_le _ _ He) Hmu Hd
                (Rle_refl 0) (Rle_refl 0) ltac:(lra) ltac:(lra) Hp2 Ha) as P.
  pose proof (exact_component_le_rho x y C S rho Hunit Hr Hrho) as Hex.
  assert (HyS : Rabs (y * S) <= rho).
  { rewrite Rabs_mult. assert (Rabs S <= 1).
    { apply le_of_square; [lra |]. rewrite <- Rabs_mult, Rabs_right by (apply Rle_ge, Rle_0_sqr).
      assert (0 <= C * C) by apply Rle_0_sqr. lra. }
    assert (Rabs y <= rho).
    { apply le_of_square; [exact Hr |]. rewrite <- Rabs_mult, Rabs_right by (apply Rle_ge, Rle_0_sqr).
      assert (0 <= x * x) by apply Rle_0_sqr. lra. }
    pose proof (Rabs_pos S). pose proof (Rabs_pos y). nra. }
  pose proof (abs_sum_le x y rho Hr Hrho) as Hsum.
  eapply Rle_trans; [exact P |]. rewrite !Rmult_0_r, !Rplus_0_r.
  assert (H1 : (1 + eps64) * (1 + eps64) * eps64 * (Rabs (x * C + y * S) + Rabs (y * S))
               <= (1 + eps64) * (1 + eps64) * eps64 * (2 * rho))
    by (apply Rmult_le_compat_l; [apply Rmult_le_pos; [nra | lra] | lra]).
  assert (H2 : (1 + eps64) * (1 + eps64) * (k * eps64) * (Rabs x + Rabs y)
               <= (1 + eps64) * (1 + eps64) * (k * eps64) * (1415 / 1000 * rho))
    by (apply Rmult_le_compat_l; [apply Rmult_le_pos; [nra | lra] | lra]).
  assert (H3 : (1 + eps64) * (1 + eps64) * eps64 * (2 * rho)
               + (1 + eps64) * (1 + eps64) * (k * eps64) * (1415 / 1000 * rho)
               = (1 + eps64) * (1 + eps64) * (2 + k * (1415 / 1000)) * eps64 * rho)
    by ring.
  assert (H5 : (1 + eps64) * (1 + eps64) * (2 + k * (1415 / 1000)) * eps64 * rho
               <= m * eps64 * rho).
  { apply Rmult_le_compat_r; [exact Hr |]. apply Rmult_le_compat_r; [lra | exact Hm]. }
  assert (Hsmall : eps64 <= / 1000) by (unfold eps64; apply Rinv_le_contravar; [lra | simpl; lra]).
  assert ((2 + eps64) * mu64 <= 3 * mu64) by nra.
  lra.
Qed.

(* f64 data (PRECISE path, delta64 = kPreciseCosSinError): |a − exact| ≤ 3.77·eps64·ρ + 3·mu64.
   (error_bounds.h: e_f64 ≤ 1.77 + 2 + 0.01 = 3.78 → kOnTheFlyF64 = 4.) *)
Theorem f64_rotation_bound : forall x y c s C S p2 a rho,
  C * C + S * S = 1 -> 0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - C) <= delta64 -> Rabs (s - S) <= delta64 ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (a - (x * C + y * S)) <= 377 / 100 * eps64 * rho + 3 * mu64.
Proof.
  intros x y c s C S p2 a rho Hunit Hr Hrho Hc Hs Hp2 Ha.
  apply (binary64_rotation_bound (125 / 100) (377 / 100) x y c s C S p2 a rho); try assumption; try lra.
  unfold eps64. simpl. lra.
Qed.

(* f32/f16/bf16 data (FAST path, delta64_fast = kFastCosSinError): the binary64 value before the
   narrowing rounding satisfies |a − exact| ≤ 8.02·eps64·ρ + 3·mu64
   ((1 + ε)²·(2 + 1.415·4.25) = 8.0138 + O(ε); error_bounds.h: D ≤ (6.02 + 2 + 0.01)ε for A = 1). *)
Theorem f64_fast_rotation_bound : forall x y c s C S p2 a rho,
  C * C + S * S = 1 -> 0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - C) <= delta64_fast -> Rabs (s - S) <= delta64_fast ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (a - (x * C + y * S)) <= 802 / 100 * eps64 * rho + 3 * mu64.
Proof.
  intros x y c s C S p2 a rho Hunit Hr Hrho Hc Hs Hp2 Ha.
  apply (binary64_rotation_bound (425 / 100) (802 / 100) x y c s C S p2 a rho); try assumption; try lra.
  unfold eps64. simpl. lra.
Qed.

(* f32 data (FAST path: premise delta64_fast = kFastCosSinError, hand-derived in error_bounds.h):
   out = RN32(a), |RN32(v) − v| ≤ u32·max(|v|, 2^-126) (gappa/rounding_f32.g).
   e_f32 ≤ 1 + 2^-20 = kOnTheFlyF32 for ρ ≥ 2^-126 (normal range); the proof gives
   e_f32 ≤ 1 + 8.02·2^-29·(1 + 2^-24) + 2^-46 < 1 + 2^-25.9, so the margin to 2^-20 is ~60×. *)
Theorem f32_kernel_bound : forall x y c s C S p2 a out rho,
  C * C + S * S = 1 -> / 2 ^ 126 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - C) <= delta64_fast -> Rabs (s - S) <= delta64_fast ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (out - a) <= u32 * Rmax (Rabs a) (/ 2 ^ 126) ->
  Rabs (out - (x * C + y * S)) <= (1 + / 2 ^ 20) * u32 * rho.
Proof.
  intros x y c s C S p2 a out rho Hunit Hrmin Hrho Hc Hs Hp2 Ha Hout.
  assert (Hr : 0 <= rho) by (eapply Rle_trans; [| exact Hrmin]; apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra).
  pose proof (f64_fast_rotation_bound x y c s C S p2 a rho Hunit Hr Hrho Hc Hs Hp2 Ha) as H64.
  pose proof (exact_component_le_rho x y C S rho Hunit Hr Hrho) as Hex.
  pose proof (narrow_rounding_bound u32 (/ 2 ^ 126) rho _ a out _
                ltac:(unfold u32; apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra)
                ltac:(apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra) Hrmin Hex H64 Hout) as N.
  eapply Rle_trans; [exact N |].
  destruct mu64_small as [Hmu0 Hmu].
  assert (Hmu_rho : 3 * mu64 <= / 2 ^ 70 * rho).
  { apply Rle_trans with (3 * / 2 ^ 200); [lra |].
    eapply Rle_trans; [| apply Rmult_le_compat_l; [apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra | exact Hrmin]].
    simpl; lra. }
  rewrite u32_value in *. unfold eps64 in *. simpl in *. nra.
Qed.

(* f16 / bf16 data (FAST path: premise delta64_fast = kFastCosSinError, hand-derived in
   error_bounds.h): out = RN16(RN32(a)) / RNbf16(RN32(a)) (gappa/rounding_f16.g, rounding_bf16.g).
   e_f16 ≤ 1 + 2^-12 = kOnTheFlyF16 for ρ ≥ 2^-14; e_bf16 ≤ 1 + 2^-15 = kOnTheFlyBF16 for ρ ≥ 2^-126. *)
Theorem f16_kernel_bound : forall x y c s C S p2 a out32 out rho,
  C * C + S * S = 1 -> / 2 ^ 14 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - C) <= delta64_fast -> Rabs (s - S) <= delta64_fast ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (out32 - a) <= u32 * Rmax (Rabs a) (/ 2 ^ 126) ->
  Rabs (out - out32) <= / 2 ^ 11 * Rmax (Rabs out32) (/ 2 ^ 14) ->
  Rabs (out - (x * C + y * S)) <= (1 + / 2 ^ 12) * / 2 ^ 11 * rho.
Proof.
  intros x y c s C S p2 a out32 out rho Hunit Hrmin Hrho Hc Hs Hp2 Ha H32 H16.
  assert (Hr : 0 <= rho) by (eapply Rle_trans; [| exact Hrmin]; apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra).
  assert (Hrmin32 : / 2 ^ 126 <= rho).
  { eapply Rle_trans; [| exact Hrmin]. apply Rinv_le_contravar; [apply pow_lt; lra | apply Rle_pow; [lra | lia]]. }
  pose proof (f32_kernel_bound x y c s C S p2 a out32 rho Hunit Hrmin32 Hrho Hc Hs Hp2 Ha H32) as E32.
  pose proof (exact_component_le_rho x y C S rho Hunit Hr Hrho) as Hex.
  pose proof (narrow_rounding_bound (/ 2 ^ 11) (/ 2 ^ 14) rho _ out32 out _
                ltac:(apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra)
                ltac:(apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra) Hrmin Hex E32 H16) as N.
  eapply Rle_trans; [exact N |]. rewrite u32_value in *. simpl in *. nra.
Qed.

Theorem bf16_kernel_bound : forall x y c s C S p2 a out32 out rho,
  C * C + S * S = 1 -> / 2 ^ 126 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - C) <= delta64_fast -> Rabs (s - S) <= delta64_fast ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (out32 - a) <= u32 * Rmax (Rabs a) (/ 2 ^ 126) ->
  Rabs (out - out32) <= / 2 ^ 8 * Rmax (Rabs out32) (/ 2 ^ 126) ->
  Rabs (out - (x * C + y * S)) <= (1 + / 2 ^ 15) * / 2 ^ 8 * rho.
Proof.
  intros x y c s C S p2 a out32 out rho Hunit Hrmin Hrho Hc Hs Hp2 Ha H32 Hbf.
  assert (Hr : 0 <= rho) by (eapply Rle_trans; [| exact Hrmin]; apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra).
  pose proof (f32_kernel_bound x y c s C S p2 a out32 rho Hunit Hrmin Hrho Hc Hs Hp2 Ha H32) as E32.
  pose proof (exact_component_le_rho x y C S rho Hunit Hr Hrho) as Hex.
  pose proof (narrow_rounding_bound (/ 2 ^ 8) (/ 2 ^ 126) rho _ out32 out _
                ltac:(apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra)
                ltac:(apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra) Hrmin Hex E32 Hbf) as N.
  eapply Rle_trans; [exact N |]. rewrite u32_value in *. simpl in *. nra.
Qed.
