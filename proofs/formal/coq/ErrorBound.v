(* ErrorBound.v — the normwise error bound of the f32 rotation, and of f16/bf16 outputs, from the
   per-operation error facts proven by the Gappa scripts in ../gappa/ (see ../README.md).

   docs/design.md's metric: e = max(|a − A|, |b − B|) / (u·ρ), ρ = sqrt(x² + y²), u = 2^-24 for f32.
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

(* nra multiplies every pair of hypotheses in the context before its search: in a long proof that
   took seconds per call (minutes per file) for goals linear arithmetic or the signs of a product's
   factors settle at once. fast_nra tries those first and keeps nra as the fallback; every proof is
   still checked by Coq's kernel whichever tactic found it. *)
Ltac sign_lra := repeat first [ apply Rmult_le_pos | apply Rplus_le_le_0_compat | apply Rabs_pos ]; lra.
Ltac fast_nra := first [ solve [lra] | solve [sign_lra] | nra ].

Open Scope R_scope.

(* Cauchy–Schwarz in the plane. *)
Lemma cauchy_schwarz2 : forall p q r s, (p * q + r * s) * (p * q + r * s) <= (p * p + r * r) * (q * q + s * s).
Proof.
  intros. assert (0 <= (p * s - r * q) * (p * s - r * q)) by apply Rle_0_sqr. fast_nra.
Qed.

Lemma le_of_square : forall a b, 0 <= b -> a * a <= b * b -> a <= b.
Proof. intros a b Hb H. fast_nra. Qed.

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
  { apply le_of_square; [exact Hr |]. pose proof (cauchy_schwarz2 ax aA ay aB). fast_nra. }
  assert (CS2 : ay + ax * (1/2) <= 3/2 * rho).
  { apply le_of_square; [lra |]. pose proof (cauchy_schwarz2 ay 1 ax (1/2)). fast_nra. }
  fast_nra.
Qed.

Lemma geometric_large_B : forall ax ay aA aB rho,
  0 <= ax -> 0 <= ay -> 0 <= aA -> 0 <= aB -> 1/2 <= aB -> aA * aA + aB * aB = 1 ->
  0 <= rho -> rho * rho = ax * ax + ay * ay ->
  (ax * aA + ay * aB) + ay * aB + ax * aA + ay * (1/2) <= 5/2 * rho.
Proof.
  intros ax ay aA aB rho Hx Hy HA HB HB2 Hunit Hr Hrho.
  assert (CS1 : ax * aA + ay * aB <= rho).
  { apply le_of_square; [exact Hr |]. pose proof (cauchy_schwarz2 ax aA ay aB). fast_nra. }
  assert (aB <= 1) by fast_nra.
  assert (CS2 : ay * (aB + 1/2) + ax * aA <= 3/2 * rho).
  { apply le_of_square; [lra |]. pose proof (cauchy_schwarz2 ay (aB + 1/2) ax aA). fast_nra. }
  fast_nra.
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
    assert (0 <= Rabs x * (u * ma + eta)) by (apply Rmult_le_pos; [apply Rabs_pos | fast_nra]).
    unfold E3; lra. }
  assert (He2 : Rabs (p2 - y * b) <= u * Rabs (y * B) + u * E3 + mu).
  { eapply Rle_trans; [exact Hp2 |]. fast_nra. }
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
  assert (0 <= E3) by (unfold E3; apply Rplus_le_le_0_compat; apply Rmult_le_pos; try apply Rabs_pos; fast_nra).
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
  assert (Rabs x * Rabs x = x * x) by (rewrite <- Rabs_mult; apply Rabs_right; fast_nra).
  assert (Rabs y * Rabs y = y * y) by (rewrite <- Rabs_mult; apply Rabs_right; fast_nra).
  assert (0 <= (Rabs x - Rabs y) * (Rabs x - Rabs y)) by apply Rle_0_sqr.
  assert (0 <= rho * rho) by apply Rle_0_sqr.
  fast_nra.
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
  assert (Hx2 : Rabs x * Rabs x = x * x) by (rewrite <- Rabs_mult; apply Rabs_right; fast_nra).
  assert (Hy2 : Rabs y * Rabs y = y * y) by (rewrite <- Rabs_mult; apply Rabs_right; fast_nra).
  assert (HA2 : Rabs A * Rabs A = A * A) by (rewrite <- Rabs_mult; apply Rabs_right; fast_nra).
  assert (HB2 : Rabs B * Rabs B = B * B) by (rewrite <- Rabs_mult; apply Rabs_right; fast_nra).
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
  assert (0 <= (1 + u) * (1 + u)) by fast_nra.
  assert (0 <= (1 + u) * (1 + u) * u) by fast_nra.
  assert (0 <= (1 + u) * (1 + u) * eta) by fast_nra.
  assert (T1 : (1 + u) * (1 + u) * u * (Rabs (x * A + y * B) + Rabs (y * B) + Rabs x * ma + Rabs y * mb)
               <= (1 + u) * (1 + u) * u * (5/2 * rho)) by (apply Rmult_le_compat_l; assumption).
  assert (T2 : (1 + u) * (1 + u) * eta * (Rabs x + Rabs y) <= (1 + u) * (1 + u) * eta * (1415/1000 * rho))
    by (apply Rmult_le_compat_l; assumption).
  fast_nra.
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
  pose proof (cauchy_schwarz2 x A y B). fast_nra.
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
  simpl in *. fast_nra.
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
  simpl in *. fast_nra.
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
   Both deltas are the premises of the theorems here; they are machine-checked by Gappa on the
   code as written (gappa/angle_precise.g, gappa/angle_fast.g), whose own premises about sin, cos
   and pi are the theorems of CosSinTaylor.v. The two proofs are linked by statement (the same
   constants), not by a Gappa-generated Coq certificate.
   Since delta64 ≤ delta64_fast, the f32/f16/bf16 theorems also hold for data routed through the
   precise path.
   ==================================================================================== *)

Definition eps64 : R := / 2 ^ 53.
Definition mu64 : R := / 2 ^ 1075.     (* half the spacing of binary64 subnormals *)
Definition delta64 : R := 125 / 100 * eps64.       (* kPreciseCosSinError: gappa/angle_precise.g *)
Definition delta64_fast : R := 425 / 100 * eps64.  (* kFastCosSinError: gappa/angle_fast.g *)

Lemma eps64_pos : 0 < eps64. Proof. unfold eps64; apply Rinv_0_lt_compat, pow_lt; lra. Qed.
Lemma mu64_small : 0 <= mu64 /\ mu64 <= / 2 ^ 200.
Proof.
  unfold mu64. split; [apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra |].
  apply Rinv_le_contravar; [apply pow_lt; lra | apply Rle_pow; [lra | lia]].
Qed.

(* Facts of the constants used inside long proofs, proven here in an empty context (nra in a long
   proof's context multiplies every pair of its hypotheses: seconds of search each time). *)
Lemma eps64_small : eps64 <= / 1000.
Proof. unfold eps64; apply Rinv_le_contravar; [lra | simpl; lra]. Qed.

Lemma eps64_mu64_le : (2 + eps64) * mu64 <= 3 * mu64.
Proof. apply Rmult_le_compat_r; [apply mu64_small |]. pose proof eps64_small. lra. Qed.

Lemma eps64_square_le : (1 + eps64) * (1 + eps64) * (1415 / 1000) <= 2.
Proof. pose proof eps64_pos. pose proof eps64_small. nra. Qed.

Lemma one_le_square_succ : forall u, 0 <= u -> 1 <= (1 + u) * (1 + u).
Proof. intros u Hu. nra. Qed.

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
  assert (Hd : 0 <= k * eps64) by fast_nra.
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
    pose proof (Rabs_pos S). pose proof (Rabs_pos y). fast_nra. }
  pose proof (abs_sum_le x y rho Hr Hrho) as Hsum.
  eapply Rle_trans; [exact P |]. rewrite !Rmult_0_r, !Rplus_0_r.
  assert (H1 : (1 + eps64) * (1 + eps64) * eps64 * (Rabs (x * C + y * S) + Rabs (y * S))
               <= (1 + eps64) * (1 + eps64) * eps64 * (2 * rho))
    by (apply Rmult_le_compat_l; [apply Rmult_le_pos; [fast_nra | lra] | lra]).
  assert (H2 : (1 + eps64) * (1 + eps64) * (k * eps64) * (Rabs x + Rabs y)
               <= (1 + eps64) * (1 + eps64) * (k * eps64) * (1415 / 1000 * rho))
    by (apply Rmult_le_compat_l; [apply Rmult_le_pos; [fast_nra | lra] | lra]).
  assert (H3 : (1 + eps64) * (1 + eps64) * eps64 * (2 * rho)
               + (1 + eps64) * (1 + eps64) * (k * eps64) * (1415 / 1000 * rho)
               = (1 + eps64) * (1 + eps64) * (2 + k * (1415 / 1000)) * eps64 * rho)
    by ring.
  assert (H5 : (1 + eps64) * (1 + eps64) * (2 + k * (1415 / 1000)) * eps64 * rho
               <= m * eps64 * rho).
  { apply Rmult_le_compat_r; [exact Hr |]. apply Rmult_le_compat_r; [lra | exact Hm]. }
  pose proof eps64_mu64_le.
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

(* f32 data (FAST path: premise delta64_fast = kFastCosSinError, gappa/angle_fast.g):
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
  rewrite u32_value in *. unfold eps64 in *. simpl in *. fast_nra.
Qed.

(* f16 / bf16 data (FAST path: premise delta64_fast = kFastCosSinError,
   gappa/angle_fast.g): out = RN16(RN32(a)) / RNbf16(RN32(a)) (gappa/rounding_f16.g, rounding_bf16.g).
   e_f16 ≤ 1 + 2^-12 = kBinary64RotationF16 for ρ ≥ 2^-14; e_bf16 ≤ 1 + 2^-15 = kBinary64RotationBF16 for
   ρ ≥ 2^-126 (the binary64 rotation of 16-bit data: cache mode, bf16 with |g| > 1). *)
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
  eapply Rle_trans; [exact N |]. rewrite u32_value in *. simpl in *. fast_nra.
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
  eapply Rle_trans; [exact N |]. rewrite u32_value in *. simpl in *. fast_nra.
Qed.

(* ====================================================================================
   The attention factor g ≠ 1 (error_bounds.h calls it A; here g, because A, B, C, S already name
   exact values) and cache mode. Metric of judge/pair_rule.h:
       e = max(|a − A'|, |b − B'|) / (u·ρ·max(1, |g|)),
   so the theorems below bound |out − exact| by a multiple of u·ρ·Rmax 1 |g|. The exact component
   is g·(x·C + y·S) with (C, S) = (cos α, ±sin α) (the sign of S covers both output components
   and the inverse direction, whose negations are exact).
   ==================================================================================== *)

Lemma Rabs_sq : forall v, Rabs v * Rabs v = v * v.
Proof. intro v. rewrite <- Rabs_mult. apply Rabs_right, Rle_ge, Rle_0_sqr. Qed.

Lemma inv_pow2_pos : forall n, 0 < / 2 ^ n.
Proof. intro n. apply Rinv_0_lt_compat, pow_lt. lra. Qed.

Lemma inv_pow2_le : forall m n, (m <= n)%nat -> / 2 ^ n <= / 2 ^ m.
Proof. intros m n H. apply Rinv_le_contravar; [apply pow_lt; lra | apply Rle_pow; [lra | exact H]]. Qed.

(* Cauchy–Schwarz on absolute values: |x|·|C| + |y|·|S| ≤ ρ for a unit vector (C, S). *)
Lemma abs_dot_le_rho : forall x y C S rho, C * C + S * S = 1 -> 0 <= rho ->
  rho * rho = x * x + y * y -> Rabs x * Rabs C + Rabs y * Rabs S <= rho.
Proof.
  intros x y C S rho Hu Hr Hrho. apply le_of_square; [exact Hr |].
  pose proof (cauchy_schwarz2 (Rabs x) (Rabs C) (Rabs y) (Rabs S)) as H.
  rewrite !Rabs_sq in H. fast_nra.
Qed.

(* The three sizes the propagation needs, for the scaled unit vector (g·C, g·S). *)
Lemma scaled_terms_le : forall g x y C S rho, C * C + S * S = 1 -> 0 <= rho ->
  rho * rho = x * x + y * y ->
  Rabs (x * (g * C) + y * (g * S)) <= Rabs g * rho /\
  Rabs (y * (g * S)) <= Rabs g * rho /\
  Rabs x * Rabs (g * C) + Rabs y * Rabs (g * S) <= Rabs g * rho.
Proof.
  intros g x y C S rho Hu Hr Hrho.
  pose proof (abs_dot_le_rho x y C S rho Hu Hr Hrho) as D.
  pose proof (exact_component_le_rho x y C S rho Hu Hr Hrho) as E.
  pose proof (Rabs_pos g) as Pg. pose proof (Rabs_pos x) as Px. pose proof (Rabs_pos C) as PC.
  assert (Hdot : Rabs x * Rabs (g * C) + Rabs y * Rabs (g * S) = Rabs g * (Rabs x * Rabs C + Rabs y * Rabs S))
    by (rewrite !Rabs_mult; ring).
  repeat split.
  - replace (x * (g * C) + y * (g * S)) with (g * (x * C + y * S)) by ring.
    rewrite Rabs_mult. apply Rmult_le_compat_l; assumption.
  - rewrite Rabs_mult, (Rabs_mult g S).
    replace (Rabs y * (Rabs g * Rabs S)) with (Rabs g * (Rabs y * Rabs S)) by ring.
    apply Rmult_le_compat_l; [exact Pg |]. assert (0 <= Rabs x * Rabs C) by fast_nra. lra.
  - rewrite Hdot. apply Rmult_le_compat_l; assumption.
Qed.

(* mu64 = eps64·2^-22·2^-1000: the absolute (subnormal) error terms of the binary64 operations
   are negligible once ρ ≥ 2^-1000 and S_g = max(1, |g|) ≥ 1. *)
Lemma mu64_terms_small : forall rho sg, / 2 ^ 1000 <= rho -> 1 <= sg ->
  2 * mu64 * rho + 3 * mu64 <= / 2 ^ 19 * eps64 * (rho * sg).
Proof.
  intros rho sg Hr Hs.
  assert (Hmu : mu64 = eps64 * / 2 ^ 22 * / 2 ^ 1000)
    by (unfold mu64, eps64; rewrite <- !Rinv_mult, <- !pow_add; reflexivity).
  pose proof eps64_pos as He. pose proof (inv_pow2_pos 1000) as HP. pose proof (inv_pow2_pos 22) as HQ.
  pose proof (inv_pow2_le 0 1000 ltac:(lia)) as HP1. rewrite pow_O, Rinv_1 in HP1.
  assert (H19 : / 2 ^ 19 = 8 * / 2 ^ 22) by (simpl; lra).
  rewrite Hmu, H19.
  assert (H1 : 2 * (eps64 * / 2 ^ 22 * / 2 ^ 1000) * rho <= 2 * (eps64 * / 2 ^ 22) * rho)
    by (apply Rmult_le_compat_r; [lra |]; apply Rmult_le_compat_l; [lra |]; rewrite <- (Rmult_1_r (eps64 * / 2 ^ 22)) at 2;
        apply Rmult_le_compat_l; [fast_nra | exact HP1]).
  assert (H2 : 3 * (eps64 * / 2 ^ 22 * / 2 ^ 1000) <= 3 * (eps64 * / 2 ^ 22) * rho)
    by (replace (3 * (eps64 * / 2 ^ 22) * rho) with (3 * (eps64 * / 2 ^ 22 * rho)) by ring;
        apply Rmult_le_compat_l; [lra |]; apply Rmult_le_compat_l; [fast_nra | exact Hr]).
  assert (H3 : 5 * (eps64 * / 2 ^ 22) * rho <= 5 * (eps64 * / 2 ^ 22) * (rho * sg)).
  { apply Rmult_le_compat_l; [fast_nra |]. rewrite <- (Rmult_1_r rho) at 1. apply Rmult_le_compat_l; lra. }
  assert (0 <= eps64 * / 2 ^ 22 * (rho * sg)) by (apply Rmult_le_pos; [fast_nra | apply Rmult_le_pos; lra]).
  fast_nra.
Qed.

(* ---------- attention factor on the fly: c = RN64(g·ĉ), s = RN64(g·ŝ) ---------- *)

(* optimized/angle-inl.h place_in_quadrant: ĉ, ŝ within k·eps64 of cos α, ±sin α (after the exact
   quadrant swap/negations), then c = RN64(g·ĉ), s = RN64(g·ŝ) (M::mul; |RN64(v) − v| ≤ eps64·|v| +
   mu64, gappa/rounding_f64*.g); then the binary64 rotation of binary64_rotation_bound. With
   |ĉ| ≤ 1 + k·eps64:  |c − g·C| ≤ |g|·(k + 1 + k·eps64)·eps64 + mu64  (error_bounds.h: |A|(δ + 1.0001ε)),
   and, for any m ≥ (1 + eps64)²·(2 + 1.415·(k + 1 + k·eps64)),
       |a − g·(x·C + y·S)| ≤ m·eps64·ρ·max(1, |g|) + 2·mu64·ρ + 3·mu64.
   Both |g| < 1 and |g| > 1: the error is proportional to |g|·ρ ≤ ρ·max(1, |g|). *)
Lemma binary64_scaled_rotation_bound : forall k m g x y ch sh c s C S p2 a rho,
  0 <= k -> (1 + eps64) * (1 + eps64) * (2 + 1415 / 1000 * (k + 1 + k * eps64)) <= m ->
  C * C + S * S = 1 -> 0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (ch - C) <= k * eps64 -> Rabs (sh - S) <= k * eps64 ->
  Rabs (c - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (s - g * sh) <= eps64 * Rabs (g * sh) + mu64 ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (a - g * (x * C + y * S)) <= m * eps64 * (rho * Rmax 1 (Rabs g)) + 2 * mu64 * rho + 3 * mu64.
Proof.
  intros k m g x y ch sh c s C S p2 a rho Hk Hm Hunit Hr Hrho Hch Hsh Hc Hs Hp2 Ha.
  pose proof eps64_pos as He. destruct mu64_small as [Hmu _].
  pose proof (Rabs_pos g) as Pg.
  assert (HC1 : Rabs C <= 1) by (apply le_of_square; [lra |]; rewrite Rabs_sq; assert (0 <= S * S) by apply Rle_0_sqr; lra).
  assert (HS1 : Rabs S <= 1) by (apply le_of_square; [lra |]; rewrite Rabs_sq; assert (0 <= C * C) by apply Rle_0_sqr; lra).
  set (kk := k + 1 + k * eps64).
  assert (Hkk : 0 <= kk) by (unfold kk; fast_nra).
  (* the table error, for either entry *)
  assert (Hentry : forall e eh E, Rabs E <= 1 -> Rabs (eh - E) <= k * eps64 ->
            Rabs (e - g * eh) <= eps64 * Rabs (g * eh) + mu64 -> Rabs (e - g * E) <= eps64 * (Rabs g * kk) + mu64).
  { intros e eh E HE1 Heh He'.
    assert (Heh1 : Rabs eh <= 1 + k * eps64).
    { replace eh with (E + (eh - E)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
    assert (H1 : eps64 * Rabs (g * eh) <= eps64 * (Rabs g * (1 + k * eps64))).
    { apply Rmult_le_compat_l; [lra |]. rewrite Rabs_mult. apply Rmult_le_compat_l; assumption. }
    assert (H2 : Rabs (g * (eh - E)) <= Rabs g * (k * eps64))
      by (rewrite Rabs_mult; apply Rmult_le_compat_l; assumption).
    replace (e - g * E) with ((e - g * eh) + g * (eh - E)) by ring.
    eapply Rle_trans; [apply Rabs_triang |].
    assert (H3 : eps64 * (Rabs g * (1 + k * eps64)) + Rabs g * (k * eps64) = eps64 * (Rabs g * kk)) by (unfold kk; ring).
    lra. }
  pose proof (Hentry c ch C HC1 Hch Hc) as Hcerr.
  pose proof (Hentry s sh S HS1 Hsh Hs) as Hserr.
  assert (Hma : 0 <= Rabs g * kk) by fast_nra.
  pose proof (propagation eps64 mu64 mu64 x y c s (g * C) (g * S) p2 a (Rabs g * kk) (Rabs g * kk)
                (Rlt_le _ _ He) Hmu Hmu Hma Hma Hcerr Hserr Hp2 Ha) as P.
  replace (g * (x * C + y * S)) with (x * (g * C) + y * (g * S)) by ring.
  eapply Rle_trans; [exact P |].
  destruct (scaled_terms_le g x y C S rho Hunit Hr Hrho) as [T1 [T2 _]].
  pose proof (abs_sum_le x y rho Hr Hrho) as Hsum.
  assert (HI : Rabs (x * (g * C) + y * (g * S)) + Rabs (y * (g * S)) + Rabs x * (Rabs g * kk) + Rabs y * (Rabs g * kk)
               <= Rabs g * rho * (2 + 1415 / 1000 * kk)).
  { assert (Rabs x * (Rabs g * kk) + Rabs y * (Rabs g * kk) <= (Rabs g * kk) * (1415 / 1000 * rho)).
    { replace (Rabs x * (Rabs g * kk) + Rabs y * (Rabs g * kk)) with ((Rabs g * kk) * (Rabs x + Rabs y)) by ring.
      apply Rmult_le_compat_l; assumption. }
    lra. }
  assert (He2 : 0 <= (1 + eps64) * (1 + eps64) * eps64) by (apply Rmult_le_pos; [fast_nra | lra]).
  assert (A1 : (1 + eps64) * (1 + eps64) * eps64 *
               (Rabs (x * (g * C) + y * (g * S)) + Rabs (y * (g * S)) + Rabs x * (Rabs g * kk) + Rabs y * (Rabs g * kk))
               <= (1 + eps64) * (1 + eps64) * eps64 * (Rabs g * rho * (2 + 1415 / 1000 * kk)))
    by (apply Rmult_le_compat_l; assumption).
  assert (A2 : (1 + eps64) * (1 + eps64) * eps64 * (Rabs g * rho * (2 + 1415 / 1000 * kk))
               <= m * eps64 * (rho * Rmax 1 (Rabs g))).
  { replace ((1 + eps64) * (1 + eps64) * eps64 * (Rabs g * rho * (2 + 1415 / 1000 * kk)))
      with ((1 + eps64) * (1 + eps64) * (2 + 1415 / 1000 * kk) * (eps64 * rho * Rabs g)) by ring.
    replace (m * eps64 * (rho * Rmax 1 (Rabs g))) with (m * (eps64 * rho * Rmax 1 (Rabs g))) by ring.
    assert (0 <= eps64 * rho) by fast_nra.
    apply Rmult_le_compat; [fast_nra | fast_nra | exact Hm |].
    apply Rmult_le_compat_l; [assumption | apply Rmax_r]. }
  assert (A3 : (1 + eps64) * (1 + eps64) * mu64 * (Rabs x + Rabs y) <= 2 * mu64 * rho).
  { apply Rle_trans with ((1 + eps64) * (1 + eps64) * mu64 * (1415 / 1000 * rho)).
    - apply Rmult_le_compat_l; [fast_nra | exact Hsum].
    - pose proof eps64_square_le.
      assert (0 <= mu64 * rho) by fast_nra.
      replace ((1 + eps64) * (1 + eps64) * mu64 * (1415 / 1000 * rho))
        with ((1 + eps64) * (1 + eps64) * (1415 / 1000) * (mu64 * rho)) by ring.
      replace (2 * mu64 * rho) with (2 * (mu64 * rho)) by ring.
      apply Rmult_le_compat_r; assumption. }
  pose proof eps64_mu64_le.
  unfold kk in *. lra.
Qed.

(* f64 data with attention factor g ≠ 1 (PRECISE path: premise delta64 = kPreciseCosSinError,
   gappa/angle_precise.g): angle-inl.h place_in_quadrant's c = RN64(g·ĉ), s = RN64(g·ŝ),
   then kernel-inl.h's binary64 rotation (the output). For ρ ≥ 2^-1000 (so that the subnormal
   terms mu64 are below 2^-19·eps64·ρ):
       e_f64 ≤ 5.19   (error_bounds.h: 3.19 + 2 + 0.01 = 5.20)  → kOnTheFlyF64Scaled = 5.5.
   ((1 + ε)²·(2 + 1.415·(2.25 + 1.25ε)) = 5.1838 + O(ε).) *)
Theorem f64_scaled_kernel_bound : forall g x y ch sh c s C S p2 a rho,
  C * C + S * S = 1 -> / 2 ^ 1000 <= rho -> rho * rho = x * x + y * y ->
  Rabs (ch - C) <= delta64 -> Rabs (sh - S) <= delta64 ->
  Rabs (c - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (s - g * sh) <= eps64 * Rabs (g * sh) + mu64 ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (a - g * (x * C + y * S)) <= 519 / 100 * eps64 * (rho * Rmax 1 (Rabs g)).
Proof.
  intros g x y ch sh c s C S p2 a rho Hunit Hrmin Hrho Hch Hsh Hc Hs Hp2 Ha.
  assert (Hr : 0 <= rho) by (pose proof (inv_pow2_pos 1000); lra).
  unfold delta64 in *.
  pose proof (binary64_scaled_rotation_bound (125 / 100) (5185 / 1000) g x y ch sh c s C S p2 a rho
                ltac:(lra) ltac:(unfold eps64; simpl; lra) Hunit Hr Hrho Hch Hsh Hc Hs Hp2 Ha) as B.
  pose proof (mu64_terms_small rho (Rmax 1 (Rabs g)) Hrmin (Rmax_l _ _)) as M.
  pose proof eps64_pos. assert (0 <= rho * Rmax 1 (Rabs g)) by (apply Rmult_le_pos; [lra | pose proof (Rmax_l 1 (Rabs g)); lra]).
  assert (0 <= eps64 * (rho * Rmax 1 (Rabs g))) by fast_nra.
  assert (/ 2 ^ 19 <= 5 / 1000) by (simpl; lra).
  fast_nra.
Qed.

(* f32 data with attention factor g ≠ 1 (FAST path: premise delta64_fast = kFastCosSinError,
   gappa/angle_fast.g): c = RN64(g·ĉ), s = RN64(g·ŝ), binary64 rotation, out = RN32(a)
   (gappa/rounding_f32.g). The binary64 value is within D = 9.44·eps64·ρ·max(1, |g|) of the exact
   one ((1 + ε)²(2 + 1.415·(5.25 + 4.25ε)) = 9.4288 + O(ε); error_bounds.h: 7.43 + 2 + 0.01), and for
   ρ ≥ 2^-126:  e_f32 ≤ 1 + 9.44·2^-29·(1 + 2^-24) < 1 + 2^-25.7 ≤ 1 + 2^-20 = kOnTheFlyF32, so
   on_the_fly_bound's use of kOnTheFlyF32 regardless of the attention factor is justified. *)
Theorem f32_scaled_kernel_bound : forall g x y ch sh c s C S p2 a out rho,
  C * C + S * S = 1 -> / 2 ^ 126 <= rho -> rho * rho = x * x + y * y ->
  Rabs (ch - C) <= delta64_fast -> Rabs (sh - S) <= delta64_fast ->
  Rabs (c - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (s - g * sh) <= eps64 * Rabs (g * sh) + mu64 ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (out - a) <= u32 * Rmax (Rabs a) (/ 2 ^ 126) ->
  Rabs (out - g * (x * C + y * S)) <= (1 + / 2 ^ 20) * u32 * (rho * Rmax 1 (Rabs g)).
Proof.
  intros g x y ch sh c s C S p2 a out rho Hunit Hrmin Hrho Hch Hsh Hc Hs Hp2 Ha Hout.
  pose proof (inv_pow2_pos 126) as Ht.
  assert (Hr : 0 <= rho) by lra.
  assert (Hrmin64 : / 2 ^ 1000 <= rho) by (apply Rle_trans with (/ 2 ^ 126); [apply inv_pow2_le; lia | exact Hrmin]).
  unfold delta64_fast in *.
  pose proof (binary64_scaled_rotation_bound (425 / 100) (943 / 100) g x y ch sh c s C S p2 a rho
                ltac:(lra) ltac:(unfold eps64; simpl; lra) Hunit Hr Hrho Hch Hsh Hc Hs Hp2 Ha) as B.
  pose proof (mu64_terms_small rho (Rmax 1 (Rabs g)) Hrmin64 (Rmax_l _ _)) as M.
  set (R := rho * Rmax 1 (Rabs g)) in *.
  assert (HR : rho <= R) by (unfold R; pose proof (Rmax_l 1 (Rabs g)); fast_nra).
  assert (Hex : Rabs (g * (x * C + y * S)) <= R).
  { destruct (scaled_terms_le g x y C S rho Hunit Hr Hrho) as [T _].
    replace (g * (x * C + y * S)) with (x * (g * C) + y * (g * S)) by ring.
    eapply Rle_trans; [exact T |]. unfold R. rewrite Rmult_comm.
    apply Rmult_le_compat_l; [exact Hr | apply Rmax_r]. }
  assert (H64 : Rabs (a - g * (x * C + y * S)) <= 944 / 100 * eps64 * R).
  { pose proof eps64_pos. assert (0 <= eps64 * R) by fast_nra. assert (/ 2 ^ 19 <= 1 / 100) by (simpl; lra). fast_nra. }
  pose proof (narrow_rounding_bound u32 (/ 2 ^ 126) R _ a out _
                ltac:(unfold u32; apply Rlt_le, inv_pow2_pos) (Rlt_le _ _ Ht) ltac:(lra) Hex H64 Hout) as N.
  eapply Rle_trans; [exact N |]. clearbody R.
  rewrite u32_value. unfold eps64. simpl. fast_nra.
Qed.

(* f16 / bf16 data with g ≠ 1 (FAST path, delta64_fast): out = RN16(RN32(a)) / RNbf16(RN32(a))
   (gappa/rounding_f16.g, rounding_bf16.g), from f32_scaled_kernel_bound:
   e_f16 ≤ 1 + 2^-12 = kBinary64RotationF16 for ρ ≥ 2^-14; e_bf16 ≤ 1 + 2^-15 = kBinary64RotationBF16 for
   ρ ≥ 2^-126 (cache mode; bf16 data with |g| > 1 on the fly). *)
Theorem f16_scaled_kernel_bound : forall g x y ch sh c s C S p2 a out32 out rho,
  C * C + S * S = 1 -> / 2 ^ 14 <= rho -> rho * rho = x * x + y * y ->
  Rabs (ch - C) <= delta64_fast -> Rabs (sh - S) <= delta64_fast ->
  Rabs (c - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (s - g * sh) <= eps64 * Rabs (g * sh) + mu64 ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (out32 - a) <= u32 * Rmax (Rabs a) (/ 2 ^ 126) ->
  Rabs (out - out32) <= / 2 ^ 11 * Rmax (Rabs out32) (/ 2 ^ 14) ->
  Rabs (out - g * (x * C + y * S)) <= (1 + / 2 ^ 12) * / 2 ^ 11 * (rho * Rmax 1 (Rabs g)).
Proof.
  intros g x y ch sh c s C S p2 a out32 out rho Hunit Hrmin Hrho Hch Hsh Hc Hs Hp2 Ha H32 H16.
  pose proof (inv_pow2_pos 14) as Ht.
  assert (Hr : 0 <= rho) by lra.
  assert (Hrmin32 : / 2 ^ 126 <= rho) by (apply Rle_trans with (/ 2 ^ 14); [apply inv_pow2_le; lia | exact Hrmin]).
  pose proof (f32_scaled_kernel_bound g x y ch sh c s C S p2 a out32 rho Hunit Hrmin32 Hrho Hch Hsh Hc Hs Hp2 Ha H32) as E32.
  set (R := rho * Rmax 1 (Rabs g)) in *.
  assert (HR : rho <= R) by (unfold R; pose proof (Rmax_l 1 (Rabs g)); fast_nra).
  assert (Hex : Rabs (g * (x * C + y * S)) <= R).
  { destruct (scaled_terms_le g x y C S rho Hunit Hr Hrho) as [T _].
    replace (g * (x * C + y * S)) with (x * (g * C) + y * (g * S)) by ring.
    eapply Rle_trans; [exact T |]. unfold R. rewrite Rmult_comm.
    apply Rmult_le_compat_l; [exact Hr | apply Rmax_r]. }
  pose proof (narrow_rounding_bound (/ 2 ^ 11) (/ 2 ^ 14) R _ out32 out _
                (Rlt_le _ _ (inv_pow2_pos 11)) (Rlt_le _ _ Ht) ltac:(lra) Hex E32 H16) as N.
  eapply Rle_trans; [exact N |]. clearbody R. rewrite u32_value. simpl. fast_nra.
Qed.

Theorem bf16_scaled_kernel_bound : forall g x y ch sh c s C S p2 a out32 out rho,
  C * C + S * S = 1 -> / 2 ^ 126 <= rho -> rho * rho = x * x + y * y ->
  Rabs (ch - C) <= delta64_fast -> Rabs (sh - S) <= delta64_fast ->
  Rabs (c - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (s - g * sh) <= eps64 * Rabs (g * sh) + mu64 ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (out32 - a) <= u32 * Rmax (Rabs a) (/ 2 ^ 126) ->
  Rabs (out - out32) <= / 2 ^ 8 * Rmax (Rabs out32) (/ 2 ^ 126) ->
  Rabs (out - g * (x * C + y * S)) <= (1 + / 2 ^ 15) * / 2 ^ 8 * (rho * Rmax 1 (Rabs g)).
Proof.
  intros g x y ch sh c s C S p2 a out32 out rho Hunit Hrmin Hrho Hch Hsh Hc Hs Hp2 Ha H32 Hbf.
  pose proof (inv_pow2_pos 126) as Ht.
  assert (Hr : 0 <= rho) by lra.
  pose proof (f32_scaled_kernel_bound g x y ch sh c s C S p2 a out32 rho Hunit Hrmin Hrho Hch Hsh Hc Hs Hp2 Ha H32) as E32.
  set (R := rho * Rmax 1 (Rabs g)) in *.
  assert (HR : rho <= R) by (unfold R; pose proof (Rmax_l 1 (Rabs g)); fast_nra).
  assert (Hex : Rabs (g * (x * C + y * S)) <= R).
  { destruct (scaled_terms_le g x y C S rho Hunit Hr Hrho) as [T _].
    replace (g * (x * C + y * S)) with (x * (g * C) + y * (g * S)) by ring.
    eapply Rle_trans; [exact T |]. unfold R. rewrite Rmult_comm.
    apply Rmult_le_compat_l; [exact Hr | apply Rmax_r]. }
  pose proof (narrow_rounding_bound (/ 2 ^ 8) (/ 2 ^ 126) R _ out32 out _
                (Rlt_le _ _ (inv_pow2_pos 8)) (Rlt_le _ _ Ht) ltac:(lra) Hex E32 Hbf) as N.
  eapply Rle_trans; [exact N |]. clearbody R. rewrite u32_value. simpl. fast_nra.
Qed.

(* ---------- cache mode: the caller's cos/sin tables ---------- *)

(* What is assumed about a cache entry e = RN_c(v) of a format with unit roundoff u_c and smallest
   normal t_c, v = g·cos α or g·sin α (optimized/kernel-inl.h load_cache converts it exactly to
   binary64, and negates the sine exactly for the inverse direction, which the sign of S covers):
       |e − v| ≤ u_c·max(|v|, t_c),
   i.e. relative error u_c in the normal range and half the subnormal spacing u_c·t_c below it.
   This is exactly the form the Gappa scripts prove for each cache format: gappa/rounding_f64.g,
   rounding_f64_negative.g, rounding_f64_subnormal.g (u_c = 2^-53, t_c = 2^-1022), rounding_f32.g
   (2^-24, 2^-126), rounding_f16.g (2^-11, 2^-14), rounding_bf16.g (2^-8, 2^-126). The rotation's
   binary64 roundings and the narrowing roundings to the data type use the same proven forms as the
   on-the-fly theorems above (eps64·|v| + mu64; u·max(|v|, t)). No sharper relative bound
   (u/(1 + u), which Gappa does not prove) is used.
   The cost of the weaker form, against error_bounds.h's first estimate u_c/u + on_the_fly_bound:
   the final rounding(s) act on a result enlarged by the cache error (factor 1 + u of the cache term,
   (1 + u)(1 + 2^-24) for f16/bf16 data), and a subnormal entry is off by up to u_c·t_c whatever its
   size; by Cauchy–Schwarz the two entries together cost u_c·ρ·sqrt(g² + 2·t_c²) ≤
   u_c·(1 + t_c²)·ρ·max(1, |g|), i.e. a relative t_c² (2^-28 for f16 caches, < 2^-250 otherwise).
   Hence cache_mode_bound = cache_term·(1 + 2u + 2·t_c²) + (2.01 for f64 data, on_the_fly_bound
   otherwise), cache_term = u_c/u; the theorems below prove exactly that, for every pair. *)

(* The four cache formats: (u_c, t_c) = (unit roundoff, smallest normal) of f64, f32, f16, bf16. *)
Definition cache_format (uc tc : R) : Prop :=
  (uc = / 2 ^ 53 /\ tc = / 2 ^ 1022) \/ (uc = / 2 ^ 24 /\ tc = / 2 ^ 126) \/
  (uc = / 2 ^ 11 /\ tc = / 2 ^ 14) \/ (uc = / 2 ^ 8 /\ tc = / 2 ^ 126).

Definition u16 : R := / 2 ^ 11.
Definition ubf16 : R := / 2 ^ 8.

Lemma cache_format_range : forall uc tc, cache_format uc tc -> 0 <= uc <= / 2 ^ 8 /\ 0 <= tc.
Proof.
  intros uc tc Hf.
  destruct Hf as [[-> ->] | [[-> ->] | [[-> ->] | [-> ->]]]];
    repeat split; try apply Rlt_le, inv_pow2_pos; try (apply inv_pow2_le; lia); apply Rle_refl.
Qed.

Lemma Rmax_sq_le : forall v t, 0 <= t -> Rmax (Rabs v) t * Rmax (Rabs v) t <= v * v + t * t.
Proof.
  intros v t Ht. apply Rmax_case; [rewrite Rabs_sq |]; assert (0 <= v * v) by apply Rle_0_sqr; fast_nra.
Qed.

(* κ = |x|·|c − gC| + |y|·|s − gS| ≤ u_c·(1 + t_c²)·ρ·max(1, |g|): Cauchy–Schwarz with
   max(|gC|, t_c)² + max(|gS|, t_c)² ≤ g² + 2t_c² ≤ max(1, |g|)²·(1 + t_c²)².
   (error_bounds.h: κ ≤ u_c·|A| for normal entries.) *)
Lemma cache_kappa : forall uc tc g x y C S c s rho,
  0 <= uc -> 0 <= tc -> C * C + S * S = 1 -> 0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - g * C) <= uc * Rmax (Rabs (g * C)) tc ->
  Rabs (s - g * S) <= uc * Rmax (Rabs (g * S)) tc ->
  Rabs x * Rabs (c - g * C) + Rabs y * Rabs (s - g * S) <= uc * (1 + tc * tc) * (rho * Rmax 1 (Rabs g)).
Proof.
  intros uc tc g x y C S c s rho Huc Htc Hunit Hr Hrho Hc Hs.
  set (m1 := Rmax (Rabs (g * C)) tc). set (m2 := Rmax (Rabs (g * S)) tc).
  set (sg := Rmax 1 (Rabs g)).
  assert (Hm1 : 0 <= m1) by (unfold m1; eapply Rle_trans; [exact Htc | apply Rmax_r]).
  assert (Hm2 : 0 <= m2) by (unfold m2; eapply Rle_trans; [exact Htc | apply Rmax_r]).
  assert (Q1 : m1 * m1 <= g * g * (C * C) + tc * tc)
    by (unfold m1; replace (g * g * (C * C)) with ((g * C) * (g * C)) by ring; apply Rmax_sq_le; exact Htc).
  assert (Q2 : m2 * m2 <= g * g * (S * S) + tc * tc)
    by (unfold m2; replace (g * g * (S * S)) with ((g * S) * (g * S)) by ring; apply Rmax_sq_le; exact Htc).
  assert (Hsg1 : 1 <= sg) by apply Rmax_l.
  assert (Hsgg : Rabs g <= sg) by apply Rmax_r.
  assert (Hg2 : g * g <= sg * sg) by (rewrite <- Rabs_sq; pose proof (Rabs_pos g); fast_nra).
  assert (Hw : 0 <= tc * tc) by apply Rle_0_sqr.
  assert (Hx2 : 0 <= x * x) by apply Rle_0_sqr. assert (Hy2 : 0 <= y * y) by apply Rle_0_sqr.
  assert (HCS : Rabs x * m1 + Rabs y * m2 <= (1 + tc * tc) * (rho * sg)).
  { apply le_of_square; [apply Rmult_le_pos; [lra | apply Rmult_le_pos; lra] |].
    pose proof (cauchy_schwarz2 (Rabs x) m1 (Rabs y) m2) as CS. rewrite !Rabs_sq in CS.
    assert (Hsum : m1 * m1 + m2 * m2 <= g * g + 2 * (tc * tc)).
    { assert (g * g * (C * C) + g * g * (S * S) = g * g) by (rewrite <- Rmult_plus_distr_l, Hunit; ring). lra. }
    assert (Hb : (x * x + y * y) * (m1 * m1 + m2 * m2) <= (rho * rho) * (g * g + 2 * (tc * tc)))
      by (rewrite Hrho; apply Rmult_le_compat_l; lra).
    assert (Hsg : g * g + 2 * (tc * tc) <= (1 + tc * tc) * (1 + tc * tc) * (sg * sg)).
    { assert (1 <= sg * sg) by fast_nra. assert (0 <= tc * tc * (tc * tc) * (sg * sg)) by (apply Rmult_le_pos; fast_nra). fast_nra. }
    assert (0 <= rho * rho) by apply Rle_0_sqr.
    assert ((rho * rho) * (g * g + 2 * (tc * tc)) <= (rho * rho) * ((1 + tc * tc) * (1 + tc * tc) * (sg * sg)))
      by (apply Rmult_le_compat_l; assumption).
    fast_nra. }
  assert (Hxc : Rabs x * Rabs (c - g * C) <= Rabs x * (uc * m1)) by (apply Rmult_le_compat_l; [apply Rabs_pos | exact Hc]).
  assert (Hys : Rabs y * Rabs (s - g * S) <= Rabs y * (uc * m2)) by (apply Rmult_le_compat_l; [apply Rabs_pos | exact Hs]).
  assert (uc * (Rabs x * m1 + Rabs y * m2) <= uc * ((1 + tc * tc) * (rho * sg))) by (apply Rmult_le_compat_l; assumption).
  fast_nra.
Qed.

(* Binary64 part (load_cache, then kernel-inl.h's a = RN64(fma(x, c, −RN64(y·s)))): the two
   binary64 roundings of the rotation on top of κ:
       |a − g·(x·C + y·S)| ≤ (1 + ε)²·(2ε + u_c·(1 + t_c²))·ρ·max(1, |g|) + 3·mu64. *)
Lemma cache_rotation_bound : forall uc tc g x y C S c s p2 a rho,
  0 <= uc -> 0 <= tc -> C * C + S * S = 1 -> 0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - g * C) <= uc * Rmax (Rabs (g * C)) tc ->
  Rabs (s - g * S) <= uc * Rmax (Rabs (g * S)) tc ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (a - g * (x * C + y * S)) <=
    (1 + eps64) * (1 + eps64) * (2 * eps64 + uc * (1 + tc * tc)) * (rho * Rmax 1 (Rabs g)) + 3 * mu64.
Proof.
  intros uc tc g x y C S c s p2 a rho Huc Htc Hunit Hr Hrho Hc Hs Hp2 Ha.
  pose proof eps64_pos as He. destruct mu64_small as [Hmu _].
  (* propagation with eta = 0 and the entries' errors as the "relative parts" ma, mb *)
  set (ma := Rabs (c - g * C) / eps64). set (mb := Rabs (s - g * S) / eps64).
  assert (Hma : 0 <= ma) by (unfold ma; apply Rmult_le_pos; [apply Rabs_pos | apply Rlt_le, Rinv_0_lt_compat; lra]).
  assert (Hmb : 0 <= mb) by (unfold mb; apply Rmult_le_pos; [apply Rabs_pos | apply Rlt_le, Rinv_0_lt_compat; lra]).
  assert (Ema : eps64 * ma = Rabs (c - g * C)) by (unfold ma; field; lra).
  assert (Emb : eps64 * mb = Rabs (s - g * S)) by (unfold mb; field; lra).
  pose proof (propagation eps64 mu64 0 x y c s (g * C) (g * S) p2 a ma mb (Rlt_le _ _ He) Hmu (Rle_refl 0) Hma Hmb
                ltac:(rewrite Ema; lra) ltac:(rewrite Emb; lra) Hp2 Ha) as P.
  replace (g * (x * C + y * S)) with (x * (g * C) + y * (g * S)) by ring.
  eapply Rle_trans; [exact P |]. rewrite !Rmult_0_r, Rmult_0_l, Rplus_0_r.
  destruct (scaled_terms_le g x y C S rho Hunit Hr Hrho) as [T1 [T2 _]].
  pose proof (cache_kappa uc tc g x y C S c s rho Huc Htc Hunit Hr Hrho Hc Hs) as K.
  set (sg := Rmax 1 (Rabs g)) in *.
  assert (Hsg1 : 1 <= sg) by apply Rmax_l. assert (Hsgg : Rabs g <= sg) by apply Rmax_r.
  assert (Hgr : Rabs g * rho <= rho * sg) by (rewrite Rmult_comm; apply Rmult_le_compat_l; assumption).
  assert (HI : eps64 * (Rabs (x * (g * C) + y * (g * S)) + Rabs (y * (g * S)) + Rabs x * ma + Rabs y * mb)
               <= (2 * eps64 + uc * (1 + tc * tc)) * (rho * sg)).
  { replace (eps64 * (Rabs (x * (g * C) + y * (g * S)) + Rabs (y * (g * S)) + Rabs x * ma + Rabs y * mb))
      with (eps64 * (Rabs (x * (g * C) + y * (g * S)) + Rabs (y * (g * S)))
            + (Rabs x * (eps64 * ma) + Rabs y * (eps64 * mb))) by ring.
    rewrite Ema, Emb.
    assert (eps64 * (Rabs (x * (g * C) + y * (g * S)) + Rabs (y * (g * S))) <= eps64 * (2 * (rho * sg)))
      by (apply Rmult_le_compat_l; lra).
    lra. }
  assert (He2 : 0 <= (1 + eps64) * (1 + eps64)) by fast_nra.
  assert (A1 : (1 + eps64) * (1 + eps64) * eps64 *
               (Rabs (x * (g * C) + y * (g * S)) + Rabs (y * (g * S)) + Rabs x * ma + Rabs y * mb)
               <= (1 + eps64) * (1 + eps64) * ((2 * eps64 + uc * (1 + tc * tc)) * (rho * sg))).
  { rewrite Rmult_assoc. apply Rmult_le_compat_l; [exact He2 | exact HI]. }
  pose proof eps64_mu64_le.
  lra.
Qed.

(* The binary64 part as one relative number, for ρ ≥ 2^-1000 (mu64_terms_small):
   |a − exact| ≤ cache_D u_c t_c·ρ·max(1, |g|). *)
Definition cache_D (uc tc : R) : R :=
  (1 + eps64) * (1 + eps64) * (2 * eps64 + uc * (1 + tc * tc)) + / 2 ^ 19 * eps64.

Lemma cache_binary64_relative : forall uc tc g x y C S c s p2 a rho,
  0 <= uc -> 0 <= tc -> C * C + S * S = 1 -> / 2 ^ 1000 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - g * C) <= uc * Rmax (Rabs (g * C)) tc ->
  Rabs (s - g * S) <= uc * Rmax (Rabs (g * S)) tc ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (a - g * (x * C + y * S)) <= cache_D uc tc * (rho * Rmax 1 (Rabs g)).
Proof.
  intros uc tc g x y C S c s p2 a rho Huc Htc Hunit Hrmin Hrho Hc Hs Hp2 Ha.
  assert (Hr : 0 <= rho) by (pose proof (inv_pow2_pos 1000); lra).
  pose proof (cache_rotation_bound uc tc g x y C S c s p2 a rho Huc Htc Hunit Hr Hrho Hc Hs Hp2 Ha) as B.
  pose proof (mu64_terms_small rho (Rmax 1 (Rabs g)) Hrmin (Rmax_l _ _)) as M.
  destruct mu64_small as [Hmu _].
  assert (0 <= mu64 * rho) by fast_nra.
  unfold cache_D. lra.
Qed.

(* A narrowing rounding out = RN(w), |RN(v) − v| ≤ u·max(|v|, t) (gappa/rounding_f32.g, f16, bf16),
   after |w − X| ≤ Dw·R with |X| ≤ R and t ≤ R:  |out − X| ≤ (u·(1 + Dw) + Dw)·R. *)
Lemma cache_narrow : forall u t R X w out Dw,
  0 <= u -> 0 <= t -> t <= R -> Rabs X <= R -> Rabs (w - X) <= Dw * R ->
  Rabs (out - w) <= u * Rmax (Rabs w) t ->
  Rabs (out - X) <= (u * (1 + Dw) + Dw) * R.
Proof.
  intros u t R X w out Dw Hu Ht HtR HX Hw Hout.
  pose proof (narrow_rounding_bound u t R X w out (Dw * R) Hu Ht HtR HX Hw Hout) as N.
  eapply Rle_trans; [exact N |]. right. ring.
Qed.

Lemma cache_scaled_exact_le : forall g x y C S rho, C * C + S * S = 1 -> 0 <= rho ->
  rho * rho = x * x + y * y -> Rabs (g * (x * C + y * S)) <= rho * Rmax 1 (Rabs g).
Proof.
  intros g x y C S rho Hunit Hr Hrho.
  destruct (scaled_terms_le g x y C S rho Hunit Hr Hrho) as [T _].
  replace (g * (x * C + y * S)) with (x * (g * C) + y * (g * S)) by ring.
  eapply Rle_trans; [exact T |]. rewrite Rmult_comm.
  apply Rmult_le_compat_l; [exact Hr | apply Rmax_r].
Qed.

Lemma Rmax_1_pos : forall rho g, 0 <= rho -> rho <= rho * Rmax 1 (Rabs g).
Proof. intros rho g Hr. pose proof (Rmax_l 1 (Rabs g)). fast_nra. Qed.

(* The numeric step of every pair: for 0 ≤ u_c ≤ 2^-8, w = t_c² ≥ 0 and multipliers k (the product
   of the (1 + unit) factors in front of the cache error) and constants k0 (the rest):
   k0 + k·u_c·(1 + w) ≤ u_c·(1 + 2u + 2w) + K·u when k ≤ 1 + 2u, k ≤ 2 and k0 ≤ K·u. *)
Lemma cache_numeric : forall uc w u k k0 K,
  0 <= uc -> 0 <= w -> k <= 1 + 2 * u -> k <= 2 -> k0 <= K * u ->
  k0 + k * (uc * (1 + w)) <= uc * (1 + 2 * u + 2 * w) + K * u.
Proof.
  intros uc w u k k0 K Huc Hw Hk1 Hk2 Hk0.
  assert (uc * k <= uc * (1 + 2 * u)) by (apply Rmult_le_compat_l; assumption).
  assert (uc * w * k <= uc * w * 2) by (apply Rmult_le_compat_l; [apply Rmult_le_pos |]; assumption).
  fast_nra.
Qed.

(* CACHE MODE, f64 data (load_cache + the binary64 rotation, no further rounding): for each cache
   format and ρ ≥ 2^-1000,
       e_f64 ≤ u_c/ε·(1 + 2ε + 2t_c²) + 2.01 = cache_mode_bound(f64, cache_dtype)   (u = ε = eps64).
   (cache_D/ε = (1 + ε)²·(2 + u_c/ε·(1 + t_c²)) + 2^-19.) *)
Theorem f64_cache_bound : forall uc tc g x y C S c s p2 a rho,
  cache_format uc tc ->
  C * C + S * S = 1 -> / 2 ^ 1000 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - g * C) <= uc * Rmax (Rabs (g * C)) tc ->
  Rabs (s - g * S) <= uc * Rmax (Rabs (g * S)) tc ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (a - g * (x * C + y * S)) <= (uc / eps64 * (1 + 2 * eps64 + 2 * (tc * tc)) + 201 / 100) * eps64 * (rho * Rmax 1 (Rabs g)).
Proof.
  intros uc tc g x y C S c s p2 a rho Hf Hunit Hrmin Hrho Hc Hs Hp2 Ha.
  destruct (cache_format_range uc tc Hf) as [[Huc Huc8] Htc].
  assert (Hr : 0 <= rho) by (pose proof (inv_pow2_pos 1000); lra).
  pose proof (cache_binary64_relative uc tc g x y C S c s p2 a rho Huc Htc Hunit Hrmin Hrho Hc Hs Hp2 Ha) as B.
  eapply Rle_trans; [exact B |].
  apply Rmult_le_compat_r; [pose proof (Rmax_1_pos rho g Hr); lra |].
  pose proof eps64_pos as He.
  (* the (1 + ε)² on u_c is 1 + 2ε + ε², and u_c·ε² ≤ 2^-8·ε² goes into the 0.01·ε *)
  assert (Hw : 0 <= tc * tc) by apply Rle_0_sqr.
  assert (Hn : (1 + eps64) * (1 + eps64) * 2 * eps64 + / 2 ^ 19 * eps64 + uc * (eps64 * eps64) <= 201 / 100 * eps64).
  { assert (uc * (eps64 * eps64) <= / 2 ^ 8 * (eps64 * eps64)) by (apply Rmult_le_compat_r; [fast_nra | exact Huc8]).
    unfold eps64 in *. simpl in *. lra. }
  assert (Hk : (1 + eps64) * (1 + eps64) * (uc * tc * tc) <= 2 * (uc * tc * tc))
    by (apply Rmult_le_compat_r; [apply Rmult_le_pos; [apply Rmult_le_pos |]; assumption | unfold eps64; simpl; lra]).
  replace ((uc / eps64 * (1 + 2 * eps64 + 2 * (tc * tc)) + 201 / 100) * eps64)
    with (uc * (1 + 2 * eps64 + 2 * (tc * tc)) + 201 / 100 * eps64) by (field; lra).
  unfold cache_D. fast_nra.
Qed.

(* CACHE MODE, f32 data: load_cache, the binary64 rotation, out = RN32(a). For each cache format
   and ρ ≥ 2^-126:
       e_f32 ≤ u_c/u·(1 + 2u + 2t_c²) + 1 + 2^-20 = cache_mode_bound(f32, cache_dtype)   (u = u32).
   (e_f32 ≤ 1 + (1 + u)·cache_D/u; (1 + u)(1 + ε)² ≤ 1 + 2u, the ε terms ≈ 2^-27.9 ≤ 2^-20.) *)
Theorem f32_cache_bound : forall uc tc g x y C S c s p2 a out rho,
  cache_format uc tc ->
  C * C + S * S = 1 -> / 2 ^ 126 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - g * C) <= uc * Rmax (Rabs (g * C)) tc ->
  Rabs (s - g * S) <= uc * Rmax (Rabs (g * S)) tc ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (out - a) <= u32 * Rmax (Rabs a) (/ 2 ^ 126) ->
  Rabs (out - g * (x * C + y * S)) <= (uc / u32 * (1 + 2 * u32 + 2 * (tc * tc)) + (1 + / 2 ^ 20)) * u32 * (rho * Rmax 1 (Rabs g)).
Proof.
  intros uc tc g x y C S c s p2 a out rho Hf Hunit Hrmin Hrho Hc Hs Hp2 Ha Hout.
  destruct (cache_format_range uc tc Hf) as [[Huc _] Htc].
  pose proof (inv_pow2_pos 126) as Ht. assert (Hr : 0 <= rho) by lra.
  assert (Hrmin64 : / 2 ^ 1000 <= rho) by (apply Rle_trans with (/ 2 ^ 126); [apply inv_pow2_le; lia | exact Hrmin]).
  pose proof (cache_binary64_relative uc tc g x y C S c s p2 a rho Huc Htc Hunit Hrmin64 Hrho Hc Hs Hp2 Ha) as B.
  pose proof (Rmax_1_pos rho g Hr) as HR.
  pose proof (cache_narrow u32 (/ 2 ^ 126) (rho * Rmax 1 (Rabs g)) _ a out _ ltac:(unfold u32; apply Rlt_le, inv_pow2_pos) (Rlt_le _ _ Ht)
                ltac:(lra) (cache_scaled_exact_le g x y C S rho Hunit Hr Hrho) B Hout) as N.
  eapply Rle_trans; [exact N |].
  apply Rmult_le_compat_r; [lra |].
  assert (Hw : 0 <= tc * tc) by apply Rle_0_sqr.
  replace ((uc / u32 * (1 + 2 * u32 + 2 * (tc * tc)) + (1 + / 2 ^ 20)) * u32)
    with (uc * (1 + 2 * u32 + 2 * (tc * tc)) + (1 + / 2 ^ 20) * u32) by (unfold u32; field; apply pow_nonzero; lra).
  replace (u32 * (1 + cache_D uc tc) + cache_D uc tc)
    with ((u32 + (1 + u32) * ((1 + eps64) * (1 + eps64) * 2 * eps64 + / 2 ^ 19 * eps64))
          + (1 + u32) * (1 + eps64) * (1 + eps64) * (uc * (1 + tc * tc))) by (unfold cache_D; ring).
  apply cache_numeric; try assumption; rewrite u32_value; unfold eps64; simpl; lra.
Qed.

(* CACHE MODE, f16 / bf16 data: load_cache, the binary64 rotation, out = RN16(RN32(a)) /
   RNbf16(RN32(a)). With D1 = u32·(1 + cache_D) + cache_D (after RN32):
       e ≤ 1 + (1 + u)·D1/u ≤ u_c/u·(1 + 2u + 2t_c²) + 1 + 2^-12 (f16, ρ ≥ 2^-14),
                               u_c/u·(1 + 2u + 2t_c²) + 1 + 2^-15 (bf16, ρ ≥ 2^-126)
   = cache_mode_bound(f16 / bf16, cache_dtype). ((1 + u)(1 + 2^-24)(1 + ε)² ≤ 1 + 2u; the rest
   is (1 + u)·2^-24/u + O(ε/u) ≤ 2^-12.9 resp. 2^-15.9.) *)
Lemma cache_narrow2 : forall u t K uc tc g x y C S c s p2 a out32 out rho,
  0 <= u -> 0 <= t -> t <= rho -> / 2 ^ 126 <= rho -> cache_format uc tc ->
  (1 + u) * (1 + u32) * (1 + eps64) * (1 + eps64) <= 1 + 2 * u ->
  u + (1 + u) * (u32 + (1 + u32) * ((1 + eps64) * (1 + eps64) * 2 * eps64 + / 2 ^ 19 * eps64)) <= K * u ->
  0 < u -> u <= / 2 ->
  C * C + S * S = 1 -> rho * rho = x * x + y * y ->
  Rabs (c - g * C) <= uc * Rmax (Rabs (g * C)) tc ->
  Rabs (s - g * S) <= uc * Rmax (Rabs (g * S)) tc ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (out32 - a) <= u32 * Rmax (Rabs a) (/ 2 ^ 126) ->
  Rabs (out - out32) <= u * Rmax (Rabs out32) t ->
  Rabs (out - g * (x * C + y * S)) <= (uc / u * (1 + 2 * u + 2 * (tc * tc)) + K) * u * (rho * Rmax 1 (Rabs g)).
Proof.
  intros u t K uc tc g x y C S c s p2 a out32 out rho Hu Ht HtR Hrmin Hf Hk Hk0 Hu0 Hu2 Hunit Hrho Hc Hs Hp2 Ha H32 Hout.
  destruct (cache_format_range uc tc Hf) as [[Huc _] Htc].
  pose proof (inv_pow2_pos 126) as Ht126. assert (Hr : 0 <= rho) by lra.
  assert (Hrmin64 : / 2 ^ 1000 <= rho) by (apply Rle_trans with (/ 2 ^ 126); [apply inv_pow2_le; lia | exact Hrmin]).
  pose proof (cache_binary64_relative uc tc g x y C S c s p2 a rho Huc Htc Hunit Hrmin64 Hrho Hc Hs Hp2 Ha) as B.
  pose proof (Rmax_1_pos rho g Hr) as HR.
  pose proof (cache_scaled_exact_le g x y C S rho Hunit Hr Hrho) as Hex.
  pose proof (cache_narrow u32 (/ 2 ^ 126) (rho * Rmax 1 (Rabs g)) _ a out32 _ ltac:(unfold u32; apply Rlt_le, inv_pow2_pos) (Rlt_le _ _ Ht126)
                ltac:(lra) Hex B H32) as N32.
  pose proof (cache_narrow u t (rho * Rmax 1 (Rabs g)) _ out32 out _ Hu Ht ltac:(lra) Hex N32 Hout) as N.
  eapply Rle_trans; [exact N |].
  apply Rmult_le_compat_r; [lra |].
  assert (Hw : 0 <= tc * tc) by apply Rle_0_sqr.
  replace ((uc / u * (1 + 2 * u + 2 * (tc * tc)) + K) * u) with (uc * (1 + 2 * u + 2 * (tc * tc)) + K * u) by (field; lra).
  replace (u * (1 + (u32 * (1 + cache_D uc tc) + cache_D uc tc)) + (u32 * (1 + cache_D uc tc) + cache_D uc tc))
    with ((u + (1 + u) * (u32 + (1 + u32) * ((1 + eps64) * (1 + eps64) * 2 * eps64 + / 2 ^ 19 * eps64)))
          + (1 + u) * (1 + u32) * (1 + eps64) * (1 + eps64) * (uc * (1 + tc * tc))) by (unfold cache_D; ring).
  apply cache_numeric; try assumption; lra.
Qed.

Theorem f16_cache_bound : forall uc tc g x y C S c s p2 a out32 out rho,
  cache_format uc tc ->
  C * C + S * S = 1 -> / 2 ^ 14 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - g * C) <= uc * Rmax (Rabs (g * C)) tc ->
  Rabs (s - g * S) <= uc * Rmax (Rabs (g * S)) tc ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (out32 - a) <= u32 * Rmax (Rabs a) (/ 2 ^ 126) ->
  Rabs (out - out32) <= u16 * Rmax (Rabs out32) (/ 2 ^ 14) ->
  Rabs (out - g * (x * C + y * S)) <= (uc / u16 * (1 + 2 * u16 + 2 * (tc * tc)) + (1 + / 2 ^ 12)) * u16 * (rho * Rmax 1 (Rabs g)).
Proof.
  intros uc tc g x y C S c s p2 a out32 out rho Hf Hunit Hrmin Hrho Hc Hs Hp2 Ha H32 Hout.
  assert (Hrmin32 : / 2 ^ 126 <= rho) by (apply Rle_trans with (/ 2 ^ 14); [apply inv_pow2_le; lia | exact Hrmin]).
  apply (cache_narrow2 u16 (/ 2 ^ 14) (1 + / 2 ^ 12) uc tc g x y C S c s p2 a out32 out rho); try assumption;
    try (unfold u16; apply Rlt_le, inv_pow2_pos); try (apply Rlt_le, inv_pow2_pos); try (unfold u16; apply inv_pow2_pos);
    rewrite ?u32_value; unfold u16, eps64; simpl; lra.
Qed.

Theorem bf16_cache_bound : forall uc tc g x y C S c s p2 a out32 out rho,
  cache_format uc tc ->
  C * C + S * S = 1 -> / 2 ^ 126 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - g * C) <= uc * Rmax (Rabs (g * C)) tc ->
  Rabs (s - g * S) <= uc * Rmax (Rabs (g * S)) tc ->
  Rabs (p2 - y * s) <= eps64 * Rabs (y * s) + mu64 ->
  Rabs (a - (x * c + p2)) <= eps64 * Rabs (x * c + p2) + mu64 ->
  Rabs (out32 - a) <= u32 * Rmax (Rabs a) (/ 2 ^ 126) ->
  Rabs (out - out32) <= ubf16 * Rmax (Rabs out32) (/ 2 ^ 126) ->
  Rabs (out - g * (x * C + y * S)) <= (uc / ubf16 * (1 + 2 * ubf16 + 2 * (tc * tc)) + (1 + / 2 ^ 15)) * ubf16 * (rho * Rmax 1 (Rabs g)).
Proof.
  intros uc tc g x y C S c s p2 a out32 out rho Hf Hunit Hrmin Hrho Hc Hs Hp2 Ha H32 Hout.
  apply (cache_narrow2 ubf16 (/ 2 ^ 126) (1 + / 2 ^ 15) uc tc g x y C S c s p2 a out32 out rho); try assumption;
    try (unfold ubf16; apply Rlt_le, inv_pow2_pos); try (apply Rlt_le, inv_pow2_pos); try (unfold ubf16; apply inv_pow2_pos);
    rewrite ?u32_value; unfold ubf16, eps64; simpl; lra.
Qed.

(* ====================================================================================
   16-bit data on the fly in binary32 (optimized/kernel-inl.h process_binary32, taken when
   PlanView::rotate_binary32: f16 data, and bf16 data with |g| ≤ 1; optimized/error_bounds.h step 6):
       ĉ, ŝ within delta64_fast of cos α, ±sin α (FAST path, gappa/angle_fast.g);
       c64 = RN64(g·ĉ) (c64 = ĉ when g = 1), c = RN32(c64), likewise s    (the token's binary32 table);
       p2 = RN32(y·s), out32 = RN32(fma(x, c, −p2)) (likewise b);           (the rotation in binary32)
       out = RN16(out32) or RNbf16(out32).
   Rounding facts: |RN32(v) − v| ≤ u32·|v| + mu32 (gappa/rounding_f32.g), |RN64(v) − v| ≤ eps64·|v| + mu64
   (rounding_f64*.g), the 16-bit ones of rounding_f16.g / rounding_bf16.g; for g = 1
   gappa/table_binary32.g checks the table entry itself.
   ==================================================================================== *)

Definition kk_fast : R := 425 / 100 + 1 + 425 / 100 * eps64.  (* δ/ε + 1 + δ: |RN64(g·ĉ) − g·C| ≤ ε·|g|·kk_fast + mu64 *)

Lemma u32_pos : 0 < u32.
Proof. unfold u32. apply Rinv_0_lt_compat, pow_lt. lra. Qed.

Lemma mu32_pos : 0 < mu32.
Proof. unfold mu32. apply Rinv_0_lt_compat, pow_lt. lra. Qed.

(* The table entry: |c − g·E| ≤ u32·|g·E| + (1 + u32)·(eps64·|g|·kk_fast + mu64) + mu32. *)
Lemma binary32_entry : forall g ch c64 c E,
  Rabs E <= 1 -> Rabs (ch - E) <= delta64_fast ->
  Rabs (c64 - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (c - c64) <= u32 * Rabs c64 + mu32 ->
  Rabs (c - g * E) <= u32 * Rabs (g * E) + ((1 + u32) * (eps64 * (Rabs g * kk_fast) + mu64) + mu32).
Proof.
  intros g ch c64 c E HE Hch H64 H32.
  pose proof eps64_pos as He. destruct mu64_small as [Hmu _].
  pose proof u32_pos as Hu.
  pose proof (Rabs_pos g) as Pg.
  unfold delta64_fast in Hch.
  assert (Hch1 : Rabs ch <= 1 + 425 / 100 * eps64).
  { replace ch with (E + (ch - E)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
  set (D := Rabs (c64 - g * E)).
  assert (HD : D <= eps64 * (Rabs g * kk_fast) + mu64).
  { assert (H1 : eps64 * Rabs (g * ch) <= eps64 * (Rabs g * (1 + 425 / 100 * eps64))).
    { apply Rmult_le_compat_l; [lra |]. rewrite Rabs_mult. apply Rmult_le_compat_l; assumption. }
    assert (H2 : Rabs (g * (ch - E)) <= Rabs g * (425 / 100 * eps64))
      by (rewrite Rabs_mult; apply Rmult_le_compat_l; assumption).
    unfold D. replace (c64 - g * E) with ((c64 - g * ch) + g * (ch - E)) by ring.
    eapply Rle_trans; [apply Rabs_triang |].
    assert (H3 : eps64 * (Rabs g * (1 + 425 / 100 * eps64)) + Rabs g * (425 / 100 * eps64)
                 = eps64 * (Rabs g * kk_fast)) by (unfold kk_fast; ring).
    lra. }
  assert (Hc64 : Rabs c64 <= Rabs (g * E) + D).
  { unfold D. replace c64 with (g * E + (c64 - g * E)) at 1 by ring. apply Rabs_triang. }
  assert (Htri : Rabs (c - g * E) <= Rabs (c - c64) + D).
  { unfold D. replace (c - g * E) with ((c - c64) + (c64 - g * E)) by ring. apply Rabs_triang. }
  assert (M1 : u32 * Rabs c64 <= u32 * Rabs (g * E) + u32 * D).
  { rewrite <- Rmult_plus_distr_l. apply Rmult_le_compat_l; lra. }
  assert (M2 : u32 * D <= u32 * (eps64 * (Rabs g * kk_fast) + mu64)) by (apply Rmult_le_compat_l; lra).
  assert (E1 : (1 + u32) * (eps64 * (Rabs g * kk_fast) + mu64)
               = (eps64 * (Rabs g * kk_fast) + mu64) + u32 * (eps64 * (Rabs g * kk_fast) + mu64)) by ring.
  lra.
Qed.

(* One output component in binary32 (g = 1: c64 = ĉ, which satisfies the premise on c64): with the
   entries of binary32_entry, propagation with the relative parts |g·C|, |g·S| gives
   (1 + u32)²·u32·(|exact| + |y·s| + |x|·|g C| + |y|·|g S|) ≤ (1 + u32)²·u32·3·|g|·ρ (scaled_terms_le:
   each sum ≤ |g|·ρ) plus the entries' ε-terms on |x| + |y| ≤ 1.415ρ:
       |out32 − g·(x·C + y·S)| ≤ 3.0001·u32·ρ·max(1, |g|) + 2^-149·ρ + 3·mu32. *)
Lemma binary32_rotation_bound : forall g x y ch sh c64 s64 c s C S p2 out32 rho,
  C * C + S * S = 1 -> 0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (ch - C) <= delta64_fast -> Rabs (sh - S) <= delta64_fast ->
  Rabs (c64 - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (s64 - g * sh) <= eps64 * Rabs (g * sh) + mu64 ->
  Rabs (c - c64) <= u32 * Rabs c64 + mu32 ->
  Rabs (s - s64) <= u32 * Rabs s64 + mu32 ->
  Rabs (p2 - y * s) <= u32 * Rabs (y * s) + mu32 ->
  Rabs (out32 - (x * c + p2)) <= u32 * Rabs (x * c + p2) + mu32 ->
  Rabs (out32 - g * (x * C + y * S))
    <= 30001 / 10000 * u32 * (rho * Rmax 1 (Rabs g)) + / 2 ^ 149 * rho + 3 * mu32.
Proof.
  intros g x y ch sh c64 s64 c s C S p2 out32 rho Hunit Hr Hrho Hch Hsh Hc64 Hs64 Hc Hs Hp2 Hout.
  pose proof eps64_pos as He. destruct mu64_small as [Hmu Hmu_small].
  pose proof u32_pos as Hu. pose proof mu32_pos as Hm.
  pose proof (Rabs_pos g) as Pg.
  assert (HC1 : Rabs C <= 1) by (apply le_of_square; [lra |]; rewrite Rabs_sq; assert (0 <= S * S) by apply Rle_0_sqr; lra).
  assert (HS1 : Rabs S <= 1) by (apply le_of_square; [lra |]; rewrite Rabs_sq; assert (0 <= C * C) by apply Rle_0_sqr; lra).
  pose proof (binary32_entry g ch c64 c C HC1 Hch Hc64 Hc) as Hcerr.
  pose proof (binary32_entry g sh s64 s S HS1 Hsh Hs64 Hs) as Hserr.
  set (eta := (1 + u32) * (eps64 * (Rabs g * kk_fast) + mu64) + mu32) in *.
  assert (Hkk : 0 <= kk_fast) by (unfold kk_fast; lra).
  assert (Heta : 0 <= eta).
  { unfold eta. assert (0 <= eps64 * (Rabs g * kk_fast)) by (apply Rmult_le_pos; [lra | fast_nra]). fast_nra. }
  pose proof (propagation u32 mu32 eta x y c s (g * C) (g * S) p2 out32 (Rabs (g * C)) (Rabs (g * S))
                (Rlt_le _ _ Hu) (Rlt_le _ _ Hm) Heta (Rabs_pos _) (Rabs_pos _) Hcerr Hserr Hp2 Hout) as P.
  replace (g * (x * C + y * S)) with (x * (g * C) + y * (g * S)) by ring.
  eapply Rle_trans; [exact P |].
  destruct (scaled_terms_le g x y C S rho Hunit Hr Hrho) as [T1 [T2 T3]].
  pose proof (abs_sum_le x y rho Hr Hrho) as Hsum.
  set (G := Rabs g * rho).
  set (Rg := rho * Rmax 1 (Rabs g)).
  assert (HG : G <= Rg) by (unfold G, Rg; rewrite Rmult_comm; apply Rmult_le_compat_l; [exact Hr | apply Rmax_r]).
  assert (HG0 : 0 <= G) by (unfold G; fast_nra).
  set (U := (1 + u32) * (1 + u32)).
  assert (HU : 1 <= U) by (unfold U; apply one_le_square_succ; lra).
  (* first term: the four sums are ≤ 3·|g|·ρ *)
  assert (A1 : U * u32 * (Rabs (x * (g * C) + y * (g * S)) + Rabs (y * (g * S)) + Rabs x * Rabs (g * C) + Rabs y * Rabs (g * S))
               <= U * u32 * (3 * G)).
  { apply Rmult_le_compat_l; [fast_nra |]. unfold G. lra. }
  (* second term: eta·(|x| + |y|) ≤ eta·1.415ρ *)
  assert (A2 : U * eta * (Rabs x + Rabs y) <= U * eta * (1415 / 1000 * rho))
    by (apply Rmult_le_compat_l; [fast_nra | exact Hsum]).
  assert (A2' : U * eta * (1415 / 1000 * rho)
                = U * (1 + u32) * (1415 / 1000) * eps64 * kk_fast * G
                  + U * (1415 / 1000) * ((1 + u32) * mu64 + mu32) * rho)
    by (unfold eta, G; ring).
  (* the numbers *)
  assert (N1 : U * u32 * 3 + U * (1 + u32) * (1415 / 1000) * eps64 * kk_fast <= 30001 / 10000 * u32).
  { unfold U, kk_fast. rewrite u32_value. unfold eps64. simpl. lra. }
  assert (N2 : U * (1415 / 1000) * ((1 + u32) * mu64 + mu32) <= / 2 ^ 149).
  { unfold U. rewrite u32_value. unfold mu32. simpl in *. lra. }
  assert (B1 : U * u32 * (3 * G) + U * (1 + u32) * (1415 / 1000) * eps64 * kk_fast * G <= 30001 / 10000 * u32 * Rg).
  { apply Rle_trans with ((U * u32 * 3 + U * (1 + u32) * (1415 / 1000) * eps64 * kk_fast) * G); [right; ring |].
    apply Rle_trans with (30001 / 10000 * u32 * G); [apply Rmult_le_compat_r; assumption |].
    apply Rmult_le_compat_l; [lra | exact HG]. }
  assert (B2 : U * (1415 / 1000) * ((1 + u32) * mu64 + mu32) * rho <= / 2 ^ 149 * rho)
    by (apply Rmult_le_compat_r; assumption).
  assert (B3 : (2 + u32) * mu32 <= 3 * mu32).
  { apply Rmult_le_compat_r; [lra | rewrite u32_value; lra]. }
  lra.
Qed.

(* f16 data, any attention factor g, ρ ≥ 2^-14: e ≤ 1 + 2^-11 = kOnTheFlyF16 (the proof: e ≤ 1 +
   (3.0001·2^-13 + 2^-119)·(1 + 2^-11) < 1 + 2^-11.4). *)
Theorem f16_binary32_kernel_bound : forall g x y ch sh c64 s64 c s C S p2 out32 out rho,
  C * C + S * S = 1 -> / 2 ^ 14 <= rho -> rho * rho = x * x + y * y ->
  Rabs (ch - C) <= delta64_fast -> Rabs (sh - S) <= delta64_fast ->
  Rabs (c64 - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (s64 - g * sh) <= eps64 * Rabs (g * sh) + mu64 ->
  Rabs (c - c64) <= u32 * Rabs c64 + mu32 ->
  Rabs (s - s64) <= u32 * Rabs s64 + mu32 ->
  Rabs (p2 - y * s) <= u32 * Rabs (y * s) + mu32 ->
  Rabs (out32 - (x * c + p2)) <= u32 * Rabs (x * c + p2) + mu32 ->
  Rabs (out - out32) <= / 2 ^ 11 * Rmax (Rabs out32) (/ 2 ^ 14) ->
  Rabs (out - g * (x * C + y * S)) <= (1 + / 2 ^ 11) * / 2 ^ 11 * (rho * Rmax 1 (Rabs g)).
Proof.
  intros g x y ch sh c64 s64 c s C S p2 out32 out rho Hunit Hrmin Hrho Hch Hsh Hc64 Hs64 Hc Hs Hp2 Hout H16.
  pose proof (inv_pow2_pos 14) as Ht.
  assert (Hr : 0 <= rho) by lra.
  pose proof (binary32_rotation_bound g x y ch sh c64 s64 c s C S p2 out32 rho Hunit Hr Hrho Hch Hsh Hc64 Hs64 Hc Hs
                Hp2 Hout) as E32.
  pose proof (cache_scaled_exact_le g x y C S rho Hunit Hr Hrho) as Hex.
  set (R := rho * Rmax 1 (Rabs g)) in *.
  assert (HR : rho <= R) by (unfold R; pose proof (Rmax_l 1 (Rabs g)); fast_nra).
  (* the absolute terms, as multiples of R ≥ 2^-14 *)
  assert (Habs : / 2 ^ 149 * rho + 3 * mu32 <= / 2 ^ 130 * R).
  { unfold mu32. assert (/ 2 ^ 149 * rho <= / 2 ^ 149 * R) by (apply Rmult_le_compat_l; [apply Rlt_le, inv_pow2_pos | exact HR]).
    assert (3 * / 2 ^ 150 <= / 2 ^ 131 * R).
    { apply Rle_trans with (/ 2 ^ 131 * / 2 ^ 14); [simpl; lra |].
      apply Rmult_le_compat_l; [apply Rlt_le, inv_pow2_pos | lra]. }
    assert (0 <= R) by lra. simpl in *. lra. }
  assert (E32' : Rabs (out32 - g * (x * C + y * S)) <= (30001 / 10000 * u32 + / 2 ^ 130) * R) by lra.
  pose proof (narrow_rounding_bound (/ 2 ^ 11) (/ 2 ^ 14) R _ out32 out _
                (Rlt_le _ _ (inv_pow2_pos 11)) (Rlt_le _ _ Ht) ltac:(lra) Hex E32' H16) as N.
  eapply Rle_trans; [exact N |]. clearbody R.
  assert (0 <= R) by lra.
  rewrite u32_value. simpl. fast_nra.
Qed.

(* bfloat16 (binary32's exponent range): |g| ≤ 1 (PlanView::rotate_binary32), ρ ≥ 2^-126. The
   absolute terms of binary32's subnormal range reach 3·2^-24·ρ at ρ = 2^-126. *)
Theorem bf16_binary32_kernel_bound : forall g x y ch sh c64 s64 c s C S p2 out32 out rho,
  C * C + S * S = 1 -> / 2 ^ 126 <= rho -> rho * rho = x * x + y * y -> Rabs g <= 1 ->
  Rabs (ch - C) <= delta64_fast -> Rabs (sh - S) <= delta64_fast ->
  Rabs (c64 - g * ch) <= eps64 * Rabs (g * ch) + mu64 ->
  Rabs (s64 - g * sh) <= eps64 * Rabs (g * sh) + mu64 ->
  Rabs (c - c64) <= u32 * Rabs c64 + mu32 ->
  Rabs (s - s64) <= u32 * Rabs s64 + mu32 ->
  Rabs (p2 - y * s) <= u32 * Rabs (y * s) + mu32 ->
  Rabs (out32 - (x * c + p2)) <= u32 * Rabs (x * c + p2) + mu32 ->
  Rabs (out - out32) <= / 2 ^ 8 * Rmax (Rabs out32) (/ 2 ^ 126) ->
  Rabs (out - g * (x * C + y * S)) <= (1 + / 2 ^ 13) * / 2 ^ 8 * rho.
Proof.
  intros g x y ch sh c64 s64 c s C S p2 out32 out rho Hunit Hrmin Hrho Hg Hch Hsh Hc64 Hs64 Hc Hs Hp2 Hout Hbf.
  pose proof (inv_pow2_pos 126) as Ht.
  assert (Hr : 0 <= rho) by lra.
  pose proof (binary32_rotation_bound g x y ch sh c64 s64 c s C S p2 out32 rho Hunit Hr Hrho Hch Hsh Hc64 Hs64 Hc Hs
                Hp2 Hout) as E32.
  pose proof (cache_scaled_exact_le g x y C S rho Hunit Hr Hrho) as Hex.
  assert (Hmax : Rmax 1 (Rabs g) = 1) by (apply Rmax_left; exact Hg).
  rewrite Hmax, Rmult_1_r in E32, Hex.
  assert (Habs : / 2 ^ 149 * rho + 3 * mu32 <= (3 * u32 + / 2 ^ 149) * rho).
  { unfold mu32. rewrite u32_value.
    assert (3 * / 2 ^ 150 <= 3 * / 16777216 * / 2 ^ 126) by (simpl; lra).
    assert (3 * / 16777216 * / 2 ^ 126 <= 3 * / 16777216 * rho) by (apply Rmult_le_compat_l; [lra | exact Hrmin]).
    lra. }
  assert (E32' : Rabs (out32 - g * (x * C + y * S)) <= (30001 / 10000 * u32 + 3 * u32 + / 2 ^ 149) * rho) by lra.
  pose proof (narrow_rounding_bound (/ 2 ^ 8) (/ 2 ^ 126) rho _ out32 out _
                (Rlt_le _ _ (inv_pow2_pos 8)) (Rlt_le _ _ Ht) Hrmin Hex E32' Hbf) as N.
  eapply Rle_trans; [exact N |].
  rewrite u32_value. simpl. fast_nra.
Qed.
