(* Fused.v — the per-element bound of the fused RMSNorm -> RoPE -> FP8 quantization,
   derived in docs/fused-bounds.md; each theorem below is one step of that derivation.

   Model (docs/fused-bounds.md, hypotheses F1-F6): the norm and the rotation in a binary format of
   unit roundoff w (binary32: w = 2^-24), each rounding relative, |fl(v) - v| <= w*|v| (no underflow
   or overflow inside the norm: F2); the rsqrt (or 1/sqrt) within kr relative of the exact inverse
   square root of its computed argument (F3); the rotation careful (GateTolerance.v's model);
   optionally one rounding to the data dtype (u_d, mu_d); then t = v/scale rounded (relative wq) and
   q = clamp(RN8(t)) with RN8 round-to-nearest to the FP8 significand and exponent floor, unbounded
   above, |RN8(t) - t| <= max(u8*|t|, mu8) (gappa/fp8_e4m3.g, fp8_e5m2.g), and clamp to +-M the
   saturation.

   Steps:
     sum_of_squares_bound   the binary32 sum of squares, sequential order: within ((1+w)^(d+1) - 1)*S;
     gamma_pow              (1+w)^n <= 1/(1 - n*w) (Higham Lemma 3.1), so that factor is <= gamma_{d+1};
     inv_sqrt_perturb       1/sqrt(1 + beta) within b of 1 for |beta| <= b <= 1/2;
     rms_scale_bound        the computed inverse rms within er*R, er = (1 + b)(1 + kr) - 1;
     rmsnorm_element_bound  each normalized element within nu*|x_i*w'_i*R| (elementwise relative);
     norm_then_rotation     the careful rotation of the normalized pair within
                            (4u(1 + nu) + nu)*rho + 3*mu of the exact rotation of the exact pair;
     norm_then_f32_angle_rotation  the same with the f32-angle model's angle (+ eta*|p*theta|*(1+nu)*rho);
     clamp_lipschitz, fp8_quant_bound   saturation is 1-Lipschitz; one quantization step;
     fused_element_bound    the composed per-element bound at the returned scale;
     amax_perturb, dynamic_scale_bound  the returned dynamic scale against amax of the exact values;
     d128_norm_constants, bf16_e4m3_d128_bound  the numbers for bf16 -> E4M3 at head_dim 128. *)

From Coq Require Import Reals Lra Lia.
From RopeCheck Require Import ErrorBound GateTolerance.

Open Scope R_scope.

(* One rounding or one perturbation, relative to the exact value. *)
Definition rel (w v r : R) : Prop := Rabs (r - v) <= w * Rabs v.

(* Relative errors compose: a perturbed value perturbed again. *)
Lemma rel_round : forall w a v v' r, 0 <= w -> 0 <= a ->
  Rabs (v' - v) <= a * Rabs v -> rel w v' r -> Rabs (r - v) <= ((1 + w) * (1 + a) - 1) * Rabs v.
Proof.
  intros w a v v' r Hw Ha H1 H2. unfold rel in H2.
  assert (Hv : Rabs v' <= (1 + a) * Rabs v).
  { replace v' with (v + (v' - v)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
  assert (w * Rabs v' <= w * ((1 + a) * Rabs v)) by (apply Rmult_le_compat_l; lra).
  replace (r - v) with ((r - v') + (v' - v)) by ring.
  eapply Rle_trans; [apply Rabs_triang |]. lra.
Qed.

(* Relative errors of two factors compose into the product's. *)
Lemma rel_mul : forall a b x x' y y', 0 <= a -> 0 <= b ->
  Rabs (x' - x) <= a * Rabs x -> Rabs (y' - y) <= b * Rabs y ->
  Rabs (x' * y' - x * y) <= ((1 + a) * (1 + b) - 1) * Rabs (x * y).
Proof.
  intros a b x x' y y' Ha Hb Hx Hy.
  pose proof (Rabs_pos x) as Px. pose proof (Rabs_pos y) as Py.
  assert (Hy' : Rabs y' <= (1 + b) * Rabs y).
  { replace y' with (y + (y' - y)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
  replace (x' * y' - x * y) with ((x' - x) * y' + x * (y' - y)) by ring.
  eapply Rle_trans; [apply Rabs_triang |]. rewrite !Rabs_mult.
  assert (Rabs (x' - x) * Rabs y' <= a * Rabs x * ((1 + b) * Rabs y))
    by (apply Rmult_le_compat; try apply Rabs_pos; lra).
  assert (Rabs x * Rabs (y' - y) <= Rabs x * (b * Rabs y)) by (apply Rmult_le_compat_l; lra).
  assert (K : ((1 + a) * (1 + b) - 1) * (Rabs x * Rabs y)
              = a * Rabs x * ((1 + b) * Rabs y) + Rabs x * (b * Rabs y)) by ring.
  lra.
Qed.

Lemma Rabs_div : forall a b, b <> 0 -> Rabs (a / b) = Rabs a / Rabs b.
Proof. intros a b Hb. unfold Rdiv. rewrite Rabs_mult, Rabs_inv. reflexivity. Qed.

(* ---- the sum of squares ---- *)

Fixpoint sumsq (x : nat -> R) (k : nat) : R :=
  match k with
  | O => 0
  | S k' => sumsq x k' + x k' * x k'
  end.

Lemma sumsq_nonneg : forall x k, 0 <= sumsq x k.
Proof.
  intros x k. induction k as [| k IH]; simpl; [lra |].
  assert (0 <= x k * x k) by apply Rle_0_sqr. lra.
Qed.

(* The sequential sum s_{i+1} = fl(s_i + fl(x_i^2)), s_0 = 0, each rounding relative w:
   |s_k - S_k| <= ((1 + w)^(k+1) - 1)*S_k. (A tree or warp-shuffle order passes each term through
   fewer roundings, at most its depth + 1 <= k + 1, and is covered by the same factor: Higham, 2nd
   ed., eq. 3.5 and its discussion; not machine-checked here.) *)
Theorem sum_of_squares_bound : forall w x s k,
  0 <= w -> s O = 0 ->
  (forall i, (i < k)%nat -> exists p, rel w (x i * x i) p /\ rel w (s i + p) (s (S i))) ->
  Rabs (s k - sumsq x k) <= ((1 + w) ^ (S k) - 1) * sumsq x k.
Proof.
  intros w x s k Hw H0 Hstep. induction k as [| k IH].
  - simpl. rewrite H0. replace (0 - 0) with 0 by ring. rewrite Rabs_R0. lra.
  - assert (IH' : Rabs (s k - sumsq x k) <= ((1 + w) ^ S k - 1) * sumsq x k)
      by (apply IH; intros i Hi; apply Hstep; lia).
    destruct (Hstep k (Nat.lt_succ_diag_r k)) as [p [Hp Hs]]. unfold rel in Hp, Hs.
    set (e := (1 + w) ^ S k - 1). fold e in IH'.
    set (Sk := sumsq x k). fold Sk in IH'. set (X := x k * x k).
    assert (PS : 0 <= Sk) by apply sumsq_nonneg. assert (PX : 0 <= X) by apply Rle_0_sqr.
    assert (HX : Rabs X = X) by (apply Rabs_pos_eq; lra). fold X in Hp. rewrite HX in Hp.
    assert (He : w <= e).
    { unfold e. simpl. assert (1 <= (1 + w) ^ k) by (apply pow_R1_Rle; lra). nra. }
    assert (Hsp : Rabs (s k + p) <= (1 + e) * Sk + (1 + w) * X).
    { replace (s k + p) with (Sk + X + (s k - Sk) + (p - X)) by ring.
      eapply Rle_trans; [apply Rabs_triang |].
      eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |].
      eapply Rle_trans; [apply Rplus_le_compat_r; apply Rplus_le_compat_r; apply Rabs_triang |].
      rewrite (Rabs_pos_eq Sk), HX by lra. lra. }
    assert (w * Rabs (s k + p) <= w * ((1 + e) * Sk + (1 + w) * X)) by (apply Rmult_le_compat_l; lra).
    simpl sumsq. fold Sk. fold X.
    replace ((1 + w) ^ S (S k) - 1) with ((1 + w) * (1 + e) - 1) by (unfold e; simpl; ring).
    replace (s (S k) - (Sk + X)) with ((s (S k) - (s k + p)) + (s k - Sk) + (p - X)) by ring.
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |].
    assert (w * e * X >= w * w * X) by (apply Rle_ge, Rmult_le_compat_r; [lra | apply Rmult_le_compat_l; lra]).
    nra.
Qed.

(* Higham, Lemma 3.1: (1 + w)^n <= 1/(1 - n*w) when n*w < 1, i.e. (1 + w)^n - 1 <= gamma_n. *)
Theorem gamma_pow : forall w n, 0 <= w -> INR n * w < 1 -> (1 + w) ^ n * (1 - INR n * w) <= 1.
Proof.
  intros w n Hw. induction n as [| n IH]; intro Hn.
  - simpl. lra.
  - rewrite S_INR in Hn |- *. simpl.
    assert (Pn : 0 <= INR n) by apply pos_INR.
    assert (Hn' : INR n * w < 1) by nra.
    specialize (IH Hn').
    assert (P : 0 <= (1 + w) ^ n) by (apply pow_le; lra).
    (* (1 + w)(1 - (n+1)w) <= 1 - n*w *)
    assert (K : (1 + w) * (1 - (INR n + 1) * w) <= 1 - INR n * w) by nra.
    assert (1 - (INR n + 1) * w >= 0) by lra.
    nra.
Qed.

(* ---- the inverse root mean square ---- *)

(* z = 1/sqrt(1 + beta), written without sqrt: z > 0, z^2*(1 + beta) = 1. Then |z - 1| <= b. *)
Lemma inv_sqrt_perturb : forall b beta z, 0 <= b <= 1/2 -> Rabs beta <= b -> 0 < z ->
  z * z * (1 + beta) = 1 -> Rabs (z - 1) <= b.
Proof.
  intros b beta z Hb Hbeta Hz Hzz. unfold Rabs in Hbeta |- *.
  destruct (Rcase_abs beta) as [Hneg | Hpos]; destruct (Rcase_abs (z - 1)) as [Hz1 | Hz1].
  - (* z < 1: z^2 >= 1/(1 + b) >= (1 - b)^2 *)
    destruct (Rle_dec (1 - b) z); [lra |].
    assert (z * z < (1 - b) * (1 - b)) by nra.
    assert (z * z * (1 + beta) < (1 - b) * (1 - b) * (1 + b)) by nra. nra.
  - destruct (Rle_dec z (1 + b)); [lra |].
    assert ((1 + b) * (1 + b) < z * z) by nra.
    assert ((1 + b) * (1 + b) * (1 - b) < z * z * (1 + beta)) by nra. nra.
  - destruct (Rle_dec (1 - b) z); [lra |].
    assert (z * z < (1 - b) * (1 - b)) by nra.
    assert (z * z * (1 + beta) < (1 - b) * (1 - b) * (1 + b)) by nra. nra.
  - destruct (Rle_dec z (1 + b)); [lra |].
    assert ((1 + b) * (1 + b) < z * z) by nra.
    assert ((1 + b) * (1 + b) * (1 - b) < z * z * (1 + beta)) by nra. nra.
Qed.

(* The scale factor. Exact: mean m = S/d >= 0, eps >= 0, T = m + eps > 0, R = 1/sqrt(T)
   (R > 0, R^2*T = 1). Computed: mh within a*m (the sum of squares and the division or the
   multiplication by 1/d), epsh within w*eps (eps rounded to binary32), th = fl(mh + epsh), z the
   exact inverse square root of th, rh within kr*z (rsqrt within kr relative, or 1/sqrt with its
   roundings). With b = (1 + w)(1 + a) - 1 <= 1/2 (w <= a):
     |rh - R| <= ((1 + b)(1 + kr) - 1)*R. *)
Theorem rms_scale_bound : forall w a kr m mh eps epsh th z rh R,
  0 <= w <= a -> (1 + w) * (1 + a) - 1 <= 1/2 -> 0 <= kr ->
  0 <= m -> 0 <= eps -> 0 < m + eps ->
  Rabs (mh - m) <= a * m -> Rabs (epsh - eps) <= w * eps -> rel w (mh + epsh) th ->
  0 < R -> R * R * (m + eps) = 1 ->
  0 < z -> z * z * th = 1 -> Rabs (rh - z) <= kr * z ->
  Rabs (rh - R) <= ((1 + ((1 + w) * (1 + a) - 1)) * (1 + kr) - 1) * R.
Proof.
  intros w a kr m mh eps epsh th z rh R [Hw Hwa] Hb Hkr Hm Heps HT Hmh Heh Hth HR HRR Hz Hzz Hrh.
  set (T := m + eps). fold T in HT, HRR.
  set (b := (1 + w) * (1 + a) - 1). fold b in Hb.
  (* th within b*T of T *)
  assert (Hsum : Rabs (mh + epsh - T) <= a * Rabs T).
  { rewrite (Rabs_pos_eq T) by lra. replace (mh + epsh - T) with ((mh - m) + (epsh - eps)) by (unfold T; ring).
    eapply Rle_trans; [apply Rabs_triang |].
    assert (w * eps <= a * eps) by (apply Rmult_le_compat_r; lra). unfold T. lra. }
  pose proof (rel_round w a T (mh + epsh) th Hw ltac:(lra) Hsum Hth) as Hth'.
  fold b in Hth'. rewrite (Rabs_pos_eq T) in Hth' by lra.
  assert (Pb : 0 <= b) by (unfold b; nra).
  (* zeta = z/R satisfies zeta^2*(1 + beta) = 1, beta = (th - T)/T *)
  set (beta := (th - T) / T). set (zeta := z / R).
  assert (Hbeta : Rabs beta <= b).
  { unfold beta. rewrite Rabs_div by lra. rewrite (Rabs_pos_eq T) by lra.
    apply (Rmult_le_reg_r T); [lra |]. field_simplify; [lra | lra]. }
  assert (Hzeta : zeta * zeta * (1 + beta) = 1).
  { unfold zeta, beta. replace 1 with ((z * z * th) / (R * R * T)) at 2 by (rewrite Hzz, HRR; field).
    field. split; lra. }
  assert (Pzeta : 0 < zeta) by (unfold zeta; apply Rdiv_lt_0_compat; lra).
  pose proof (inv_sqrt_perturb b beta zeta (conj Pb Hb) Hbeta Pzeta Hzeta) as Hz1.
  assert (HzR : Rabs (z - R) <= b * R).
  { replace (z - R) with (R * (zeta - 1)) by (unfold zeta; field; lra).
    rewrite Rabs_mult, (Rabs_pos_eq R) by lra. rewrite Rmult_comm. apply Rmult_le_compat_r; lra. }
  assert (Hzle : z <= (1 + b) * R) by (unfold Rabs in HzR; destruct (Rcase_abs (z - R)); lra).
  assert (kr * z <= kr * ((1 + b) * R)) by (apply Rmult_le_compat_l; lra).
  replace (rh - R) with ((rh - z) + (z - R)) by ring.
  eapply Rle_trans; [apply Rabs_triang |]. nra.
Qed.

(* One normalized element: yh = fl(fl(x*rh)*wh), wh the weight as used (w_i itself: cw = 0; the
   `1 + w` form computed in binary32: cw = w, wh = fl(1 + w_i)), rh within er*R. Relative to
   the exact y = x*wp*R:  |yh - y| <= nu*|y|,  nu = (1 + w)^2*(1 + cw)*(1 + er) - 1.
   (The order fl(x*fl(rh*wh)) is the same bound, the products commuting.) *)
Theorem rmsnorm_element_bound : forall w cw er x wp wh rh R p yh,
  0 <= w -> 0 <= cw -> 0 <= er ->
  Rabs (wh - wp) <= cw * Rabs wp -> Rabs (rh - R) <= er * Rabs R ->
  rel w (x * rh) p -> rel w (p * wh) yh ->
  Rabs (yh - x * wp * R) <= ((1 + w) * (1 + w) * (1 + cw) * (1 + er) - 1) * Rabs (x * wp * R).
Proof.
  intros w cw er x wp wh rh R p yh Hw Hcw Her Hwh Hrh Hp Hyh.
  assert (Hx : Rabs (x - x) <= 0 * Rabs x) by (replace (x - x) with 0 by ring; rewrite Rabs_R0; lra).
  pose proof (rel_mul 0 er x x R rh ltac:(lra) Her Hx Hrh) as H1.
  replace ((1 + 0) * (1 + er) - 1) with er in H1 by ring.
  pose proof (rel_round w er (x * R) (x * rh) p Hw Her H1 Hp) as H2.
  assert (Pa : 0 <= (1 + w) * (1 + er) - 1) by nra.
  pose proof (rel_mul _ cw (x * R) p wp wh Pa Hcw H2 Hwh) as H3.
  assert (Pb : 0 <= ((1 + ((1 + w) * (1 + er) - 1)) * (1 + cw) - 1)) by nra.
  pose proof (rel_round w _ (x * R * wp) (p * wh) yh Hw Pb H3 Hyh) as H4.
  replace (x * wp * R) with (x * R * wp) by ring.
  replace ((1 + w) * (1 + w) * (1 + cw) * (1 + er) - 1)
    with ((1 + w) * (1 + ((1 + ((1 + w) * (1 + er) - 1)) * (1 + cw) - 1)) - 1) by ring.
  exact H4.
Qed.

(* ---- the rotation of the normalized pair ---- *)

(* Perturbing the input pair by at most nu relative per element moves each exact rotated component
   by at most nu*rho (the rotation is an isometry; Cauchy-Schwarz), and the perturbed pair's norm
   is at most (1 + nu)*rho. *)
Lemma pair_perturb : forall nu y1 y2 yh1 yh2 C S rho rhoh,
  0 <= nu -> C * C + S * S = 1 ->
  Rabs (yh1 - y1) <= nu * Rabs y1 -> Rabs (yh2 - y2) <= nu * Rabs y2 ->
  0 <= rho -> rho * rho = y1 * y1 + y2 * y2 -> 0 <= rhoh -> rhoh * rhoh = yh1 * yh1 + yh2 * yh2 ->
  Rabs ((yh1 - y1) * C + (yh2 - y2) * S) <= nu * rho /\ rhoh <= (1 + nu) * rho.
Proof.
  intros nu y1 y2 yh1 yh2 C S rho rhoh Hnu Hn H1 H2 Hr Hrho Hrh Hrhoh.
  assert (Q1 : (yh1 - y1) * (yh1 - y1) <= nu * nu * (y1 * y1)).
  { rewrite <- (Rabs_sq (yh1 - y1)), <- (Rabs_sq y1).
    pose proof (Rabs_pos (yh1 - y1)) as P. pose proof (Rmult_le_compat _ _ _ _ P P H1 H1) as K. nra. }
  assert (Q2 : (yh2 - y2) * (yh2 - y2) <= nu * nu * (y2 * y2)).
  { rewrite <- (Rabs_sq (yh2 - y2)), <- (Rabs_sq y2).
    pose proof (Rabs_pos (yh2 - y2)) as P. pose proof (Rmult_le_compat _ _ _ _ P P H2 H2) as K. nra. }
  split.
  - apply le_of_square; [fast_nra |]. rewrite Rabs_sq.
    pose proof (cauchy_schwarz2 (yh1 - y1) C (yh2 - y2) S) as K. rewrite Hn in K. nra.
  - apply le_of_square; [fast_nra |].
    assert (A1 : Rabs yh1 <= (1 + nu) * Rabs y1).
    { replace yh1 with (y1 + (yh1 - y1)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
    assert (A2 : Rabs yh2 <= (1 + nu) * Rabs y2).
    { replace yh2 with (y2 + (yh2 - y2)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
    assert (yh1 * yh1 <= (1 + nu) * (1 + nu) * (y1 * y1)).
    { rewrite <- (Rabs_sq yh1), <- (Rabs_sq y1). pose proof (Rabs_pos yh1) as P.
      pose proof (Rmult_le_compat _ _ _ _ P P A1 A1) as K. nra. }
    assert (yh2 * yh2 <= (1 + nu) * (1 + nu) * (y2 * y2)).
    { rewrite <- (Rabs_sq yh2), <- (Rabs_sq y2). pose proof (Rabs_pos yh2) as P.
      pose proof (Rmult_le_compat _ _ _ _ P P A2 A2) as K. nra. }
    nra.
Qed.

(* Both rotated components of the perturbed pair within nu*rho of those of the exact pair. *)
Lemma rotated_perturb : forall nu y1 y2 yh1 yh2 C S rho rhoh,
  0 <= nu -> C * C + S * S = 1 ->
  Rabs (yh1 - y1) <= nu * Rabs y1 -> Rabs (yh2 - y2) <= nu * Rabs y2 ->
  0 <= rho -> rho * rho = y1 * y1 + y2 * y2 -> 0 <= rhoh -> rhoh * rhoh = yh1 * yh1 + yh2 * yh2 ->
  Rabs ((yh1 * C - yh2 * S) - (y1 * C - y2 * S)) <= nu * rho /\
  Rabs ((yh1 * S + yh2 * C) - (y1 * S + y2 * C)) <= nu * rho /\ rhoh <= (1 + nu) * rho.
Proof.
  intros nu y1 y2 yh1 yh2 C S rho rhoh Hnu Hn H1 H2 Hr Hrho Hrh Hrhoh.
  assert (HnA : C * C + (- S) * (- S) = 1) by lra.
  assert (HnB : S * S + C * C = 1) by lra.
  destruct (pair_perturb nu y1 y2 yh1 yh2 C (- S) rho rhoh Hnu HnA H1 H2 Hr Hrho Hrh Hrhoh) as [Da Hrr].
  destruct (pair_perturb nu y1 y2 yh1 yh2 S C rho rhoh Hnu HnB H1 H2 Hr Hrho Hrh Hrhoh) as [Db _].
  refine (conj _ (conj _ Hrr)).
  - replace ((yh1 * C - yh2 * S) - (y1 * C - y2 * S)) with ((yh1 - y1) * C + (yh2 - y2) * - S) by ring. exact Da.
  - replace ((yh1 * S + yh2 * C) - (y1 * S + y2 * C)) with ((yh1 - y1) * S + (yh2 - y2) * C) by ring. exact Db.
Qed.

Lemma triangle_via : forall a X Xh E1 E2, Rabs (a - Xh) <= E1 -> Rabs (Xh - X) <= E2 -> Rabs (a - X) <= E1 + E2.
Proof.
  intros a X Xh E1 E2 H1 H2. replace (a - X) with ((a - Xh) + (Xh - X)) by ring.
  eapply Rle_trans; [apply Rabs_triang | lra].
Qed.

(* Norm before the rotation: the careful rotation (gate_exact_default, unit roundoff u of the
   working format, binary32 in a fused kernel) of the computed normalized pair (yh1, yh2), each
   within nu relative of the exact (y1, y2), against the exact rotation of (y1, y2):
     both components within (4u(1 + nu) + nu)*rho + 3*mu,   rho = |(y1, y2)|. *)
Theorem norm_then_rotation : forall u mu nu y1 y2 yh1 yh2 c s C S p1 p2 p3 p4 a b rho rhoh,
  0 <= u <= / 256 -> 0 <= mu -> 0 <= nu -> C * C + S * S = 1 ->
  Rabs (yh1 - y1) <= nu * Rabs y1 -> Rabs (yh2 - y2) <= nu * Rabs y2 ->
  0 <= rho -> rho * rho = y1 * y1 + y2 * y2 -> 0 <= rhoh -> rhoh * rhoh = yh1 * yh1 + yh2 * yh2 ->
  Rabs (c - C) <= u -> Rabs (s - S) <= u ->
  rounds u mu (yh1 * c) p1 -> rounds u mu (yh2 * s) p2 -> rounds u mu (p1 - p2) a ->
  rounds u mu (yh1 * s) p3 -> rounds u mu (yh2 * c) p4 -> rounds u mu (p3 + p4) b ->
  Rabs (a - (y1 * C - y2 * S)) <= (4 * u * (1 + nu) + nu) * rho + 3 * mu /\
  Rabs (b - (y1 * S + y2 * C)) <= (4 * u * (1 + nu) + nu) * rho + 3 * mu.
Proof.
  intros u mu nu y1 y2 yh1 yh2 c s C S p1 p2 p3 p4 a b rho rhoh Hu Hmu Hnu Hn H1 H2 Hr Hrho Hrh Hrhoh
    Hc Hs Hp1 Hp2 Ha Hp3 Hp4 Hb.
  destruct (gate_exact_default u mu yh1 yh2 c s C S p1 p2 p3 p4 a b rhoh Hu Hmu Hn Hrh Hrhoh Hc Hs
              Hp1 Hp2 Ha Hp3 Hp4 Hb) as [Ka Kb].
  destruct (rotated_perturb nu y1 y2 yh1 yh2 C S rho rhoh Hnu Hn H1 H2 Hr Hrho Hrh Hrhoh) as [Da [Db Hrr]].
  destruct Hu as [Hu0 Hu8].
  assert (4 * u * rhoh <= 4 * u * ((1 + nu) * rho)) by (apply Rmult_le_compat_l; lra).
  split; [pose proof (triangle_via _ _ _ _ _ Ka Da) | pose proof (triangle_via _ _ _ _ _ Kb Db)]; lra.
Qed.

(* The same under the f32-angle model (gate_f32_angle_default): the angle phih computed in
   binary32, cos/sin of phih faithful; against the exact rotation by p*theta of the exact pair:
     within (4u(1 + nu) + nu)*rho + eta*|p*theta|*(1 + nu)*rho + 3*mu. *)
Theorem norm_then_f32_angle_rotation :
  forall k w theta th p ph phih u mu nu y1 y2 yh1 yh2 c s p1 p2 p3 p4 a b rho rhoh,
  0 <= k -> 0 <= w ->
  Rabs (th - theta) <= 2 * k * w * Rabs theta -> Rabs (ph - p) <= w * Rabs p ->
  Rabs (phih - ph * th) <= w * Rabs (ph * th) ->
  0 <= u <= / 256 -> 0 <= mu -> 0 <= nu ->
  Rabs (yh1 - y1) <= nu * Rabs y1 -> Rabs (yh2 - y2) <= nu * Rabs y2 ->
  0 <= rho -> rho * rho = y1 * y1 + y2 * y2 -> 0 <= rhoh -> rhoh * rhoh = yh1 * yh1 + yh2 * yh2 ->
  Rabs (c - cos phih) <= u -> Rabs (s - sin phih) <= u ->
  rounds u mu (yh1 * c) p1 -> rounds u mu (yh2 * s) p2 -> rounds u mu (p1 - p2) a ->
  rounds u mu (yh1 * s) p3 -> rounds u mu (yh2 * c) p4 -> rounds u mu (p3 + p4) b ->
  Rabs (a - (y1 * cos (p * theta) - y2 * sin (p * theta)))
    <= (4 * u * (1 + nu) + nu) * rho
       + ((1 + w) * (1 + w) * (1 + 2 * k * w) - 1) * Rabs (p * theta) * ((1 + nu) * rho) + 3 * mu /\
  Rabs (b - (y1 * sin (p * theta) + y2 * cos (p * theta)))
    <= (4 * u * (1 + nu) + nu) * rho
       + ((1 + w) * (1 + w) * (1 + 2 * k * w) - 1) * Rabs (p * theta) * ((1 + nu) * rho) + 3 * mu.
Proof.
  intros k w theta th p ph phih u mu nu y1 y2 yh1 yh2 c s p1 p2 p3 p4 a b rho rhoh Hk Hw Hth Hph Hphih
    Hu Hmu Hnu H1 H2 Hr Hrho Hrh Hrhoh Hc Hs Hp1 Hp2 Ha Hp3 Hp4 Hb.
  set (C := cos (p * theta)). set (S := sin (p * theta)).
  set (eta := (1 + w) * (1 + w) * (1 + 2 * k * w) - 1).
  destruct (gate_f32_angle_default k w theta th p ph phih u mu yh1 yh2 c s p1 p2 p3 p4 a b rhoh
              Hk Hw Hth Hph Hphih Hu Hmu Hrh Hrhoh Hc Hs Hp1 Hp2 Ha Hp3 Hp4 Hb) as [Ka Kb].
  fold C S eta in Ka, Kb.
  assert (Hn : C * C + S * S = 1) by (unfold C, S; pose proof (sin2_cos2 (p * theta)); unfold Rsqr in *; lra).
  destruct (rotated_perturb nu y1 y2 yh1 yh2 C S rho rhoh Hnu Hn H1 H2 Hr Hrho Hrh Hrhoh) as [Da [Db Hrr]].
  destruct Hu as [Hu0 Hu8].
  assert (Peta : 0 <= eta).
  { unfold eta. assert (0 <= 2 * k * w) by fast_nra. assert (1 <= (1 + w) * (1 + w)) by nra. nra. }
  assert (4 * u * rhoh <= 4 * u * ((1 + nu) * rho)) by (apply Rmult_le_compat_l; lra).
  assert (eta * Rabs (p * theta) * rhoh <= eta * Rabs (p * theta) * ((1 + nu) * rho))
    by (apply Rmult_le_compat_l; [apply Rmult_le_pos; [lra | apply Rabs_pos] | lra]).
  split; [pose proof (triangle_via _ _ _ _ _ Ka Da) | pose proof (triangle_via _ _ _ _ _ Kb Db)]; lra.
Qed.

(* ---- quantization to FP8 ---- *)

(* Saturation: clamp to [-M, M]. *)
Definition clamp (M t : R) : R := Rmax (- M) (Rmin M t).

Lemma clamp_lipschitz : forall M a b, 0 <= M -> Rabs (clamp M a - clamp M b) <= Rabs (a - b).
Proof.
  intros M a b HM. unfold clamp, Rmax, Rmin.
  destruct (Rle_dec M a); destruct (Rle_dec M b);
    repeat match goal with |- context [Rle_dec ?x ?y] => destruct (Rle_dec x y) end;
    unfold Rabs; repeat match goal with |- context [Rcase_abs ?x] => destruct (Rcase_abs x) end; lra.
Qed.

(* A value already in range is unchanged by the clamp. *)
Lemma clamp_in_range : forall M t, Rabs t <= M -> clamp M t = t.
Proof.
  intros M t H. unfold Rabs in H. destruct (Rcase_abs t) as [Hn | Hp].
  - assert (Hm : Rmin M t = t) by (apply Rmin_right; lra). unfold clamp. rewrite Hm. apply Rmax_right. lra.
  - destruct (Req_dec t M) as [-> | Hne].
    + unfold clamp. rewrite Rmin_left by lra. apply Rmax_right. lra.
    + assert (Hm : Rmin M t = t) by (apply Rmin_right; lra). unfold clamp. rewrite Hm. apply Rmax_right. lra.
Qed.

(* One quantization step: qr = RN8(t) with |qr - t| <= max(u8*|t|, mu8) (gappa/fp8_e4m3.g,
   fp8_e5m2.g), the saturating result clamp(qr), against the exact target clamp(T):
     |clamp(qr) - clamp(T)| <= u8*|t| + mu8 + |t - T|.
   A non-saturating conversion returns qr itself where it is finite: for |t| <= 464 (E4M3), < 61440
   (E5M2) the same value (the Gappa scripts' last clauses), so the same bound. *)
Theorem fp8_quant_bound : forall u8 mu8 M t T qr,
  0 <= u8 -> 0 <= mu8 -> 0 <= M -> Rabs (qr - t) <= Rmax (u8 * Rabs t) mu8 ->
  Rabs (clamp M qr - clamp M T) <= u8 * Rabs t + mu8 + Rabs (t - T).
Proof.
  intros u8 mu8 M t T qr Hu Hmu HM Hq.
  eapply Rle_trans; [apply clamp_lipschitz; exact HM |].
  replace (qr - T) with ((qr - t) + (t - T)) by ring.
  eapply Rle_trans; [apply Rabs_triang |].
  assert (Rmax (u8 * Rabs t) mu8 <= u8 * Rabs t + mu8).
  { unfold Rmax. assert (0 <= u8 * Rabs t) by (apply Rmult_le_pos; [lra | apply Rabs_pos]).
    destruct (Rle_dec (u8 * Rabs t) mu8); lra. }
  lra.
Qed.

(* The composed bound at the returned scale sh > 0. Y is the exact value (normalized, rotated);
   yh the value before quantization, within Ef of Y (norm_then_rotation); v = yh (one rounding at
   the end: ud = mud = 0) or v rounded to the data dtype, |v - yh| <= ud*|yh| + mud; t = v/sh rounded
   (relative wq: one division, or (1 + w)^2 - 1 for a multiplication by a rounded 1/sh); q the
   saturating FP8 value. Against the exact target clamp(Y/sh)*sh (= Y wherever |Y| <= M*sh):
     |q*sh - clamp(Y/sh)*sh| <= ((1 + u8)(1 + wq)(1 + ud) - 1)*|Y|
                                + (1 + u8)(1 + wq)*((1 + ud)*Ef + mud) + mu8*sh. *)
Theorem fused_element_bound : forall u8 mu8 M wq ud mud Ef Y yh v sh t qr,
  0 <= u8 -> 0 <= mu8 -> 0 <= M -> 0 <= wq -> 0 <= ud -> 0 <= mud -> 0 < sh ->
  Rabs (yh - Y) <= Ef ->
  Rabs (v - yh) <= ud * Rabs yh + mud ->
  Rabs (t - v / sh) <= wq * Rabs (v / sh) ->
  Rabs (qr - t) <= Rmax (u8 * Rabs t) mu8 ->
  Rabs (clamp M qr * sh - clamp M (Y / sh) * sh)
    <= ((1 + u8) * (1 + wq) * (1 + ud) - 1) * Rabs Y
       + (1 + u8) * (1 + wq) * ((1 + ud) * Ef + mud) + mu8 * sh.
Proof.
  intros u8 mu8 M wq ud mud Ef Y yh v sh t qr Hu8 Hmu8 HM Hwq Hud Hmud Hsh HEf Hv Ht Hq.
  pose proof (fp8_quant_bound u8 mu8 M t (Y / sh) qr Hu8 Hmu8 HM Hq) as K.
  replace (clamp M qr * sh - clamp M (Y / sh) * sh) with ((clamp M qr - clamp M (Y / sh)) * sh) by ring.
  rewrite Rabs_mult, (Rabs_pos_eq sh) by lra.
  assert (Hvs : Rabs (v / sh) = Rabs v / sh) by (rewrite Rabs_div, (Rabs_pos_eq sh) by lra; reflexivity).
  rewrite Hvs in Ht.
  (* sh*|t| <= (1 + wq)*|v|, sh*|t - Y/sh| <= wq*|v| + |v - Y| *)
  assert (Ht1 : Rabs t * sh <= (1 + wq) * Rabs v).
  { assert (Rabs t <= (1 + wq) * (Rabs v / sh)).
    { replace t with (v / sh + (t - v / sh)) by ring. eapply Rle_trans; [apply Rabs_triang |].
      rewrite Hvs. lra. }
    apply (Rmult_le_compat_r sh) in H; [| lra]. replace ((1 + wq) * (Rabs v / sh) * sh) with ((1 + wq) * Rabs v) in H
      by (field; lra). exact H. }
  assert (Ht2 : Rabs (t - Y / sh) * sh <= wq * Rabs v + Rabs (v - Y)).
  { assert (Rabs (t - Y / sh) <= wq * (Rabs v / sh) + Rabs (v - Y) / sh).
    { replace (t - Y / sh) with ((t - v / sh) + (v - Y) / sh) by (field; lra).
      eapply Rle_trans; [apply Rabs_triang |]. rewrite Rabs_div, (Rabs_pos_eq sh) by lra. lra. }
    apply (Rmult_le_compat_r sh) in H; [| lra].
    replace ((wq * (Rabs v / sh) + Rabs (v - Y) / sh) * sh) with (wq * Rabs v + Rabs (v - Y)) in H
      by (field; lra). exact H. }
  assert (HvY : Rabs (v - Y) <= ud * Rabs Y + (1 + ud) * Ef + mud).
  { assert (Rabs yh <= Rabs Y + Ef).
    { replace yh with (Y + (yh - Y)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
    assert (ud * Rabs yh <= ud * (Rabs Y + Ef)) by (apply Rmult_le_compat_l; lra).
    replace (v - Y) with ((v - yh) + (yh - Y)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
  assert (Hv' : Rabs v <= Rabs Y + Rabs (v - Y)).
  { replace v with (Y + (v - Y)) at 1 by ring. apply Rabs_triang. }
  pose proof (Rabs_pos Y). pose proof (Rabs_pos v). pose proof (Rabs_pos (v - Y)).
  assert (Kmul : (u8 * Rabs t + mu8 + Rabs (t - Y / sh)) * sh
                 = u8 * (Rabs t * sh) + mu8 * sh + Rabs (t - Y / sh) * sh) by ring.
  assert (Kb : Rabs (clamp M qr - clamp M (Y / sh)) * sh <= (u8 * Rabs t + mu8 + Rabs (t - Y / sh)) * sh)
    by (apply Rmult_le_compat_r; lra).
  assert (u8 * (Rabs t * sh) <= u8 * ((1 + wq) * Rabs v)) by (apply Rmult_le_compat_l; lra).
  (* ((1 + u8)(1 + wq) - 1)*|v| + |v - Y| with |v| <= |Y| + |v - Y| *)
  set (c := (1 + u8) * (1 + wq)).
  assert (Pc : 1 <= c) by (unfold c; nra).
  assert (S1 : u8 * ((1 + wq) * Rabs v) + wq * Rabs v = (c - 1) * Rabs v) by (unfold c; ring).
  assert ((c - 1) * Rabs v <= (c - 1) * (Rabs Y + Rabs (v - Y))) by (apply Rmult_le_compat_l; lra).
  assert (c * Rabs (v - Y) <= c * (ud * Rabs Y + (1 + ud) * Ef + mud)) by (apply Rmult_le_compat_l; lra).
  assert (KK : (c * (1 + ud) - 1) * Rabs Y + c * ((1 + ud) * Ef + mud)
               = (c - 1) * Rabs Y + c * (ud * Rabs Y + (1 + ud) * Ef + mud)) by ring.
  unfold c in *. lra.
Qed.

(* ---- the dynamic scale ---- *)

Fixpoint amax (f : nat -> R) (n : nat) : R :=
  match n with
  | O => 0
  | S k => Rmax (amax f k) (Rabs (f k))
  end.

Lemma amax_nonneg : forall f n, 0 <= amax f n.
Proof.
  intros f n. induction n as [| n IH]; simpl; [lra |].
  unfold Rmax. destruct (Rle_dec (amax f n) (Rabs (f n))); [apply Rabs_pos | lra].
Qed.

Lemma amax_ge : forall f n i, (i < n)%nat -> Rabs (f i) <= amax f n.
Proof.
  intros f n. induction n as [| n IH]; intros i Hi; [lia |]. simpl.
  destruct (Nat.eq_dec i n) as [-> | Hne].
  - apply Rmax_r.
  - eapply Rle_trans; [apply IH; lia | apply Rmax_l].
Qed.

(* The amax of the computed values (vh) against that of the exact ones (y): if every element is
   within r*|y_i| + E, so is the maximum, relative to the exact amax. *)
Theorem amax_perturb : forall r E vh y n, 0 <= r -> 0 <= E ->
  (forall i, (i < n)%nat -> Rabs (vh i - y i) <= r * Rabs (y i) + E) ->
  Rabs (amax vh n - amax y n) <= r * amax y n + E.
Proof.
  intros r E vh y n Hr HE. induction n as [| n IH]; intro H.
  - simpl. replace (0 - 0) with 0 by ring. rewrite Rabs_R0. lra.
  - assert (IH' : Rabs (amax vh n - amax y n) <= r * amax y n + E) by (apply IH; intros; apply H; lia).
    pose proof (H n (Nat.lt_succ_diag_r n)) as Hn.
    pose proof (Rabs_triang_inv2 (vh n) (y n)) as Hi.
    simpl. set (A := amax y n). set (B := Rabs (y n)). set (A' := amax vh n). set (B' := Rabs (vh n)).
    fold A A' in IH'. fold B in Hn. fold B B' in Hi.
    pose proof (Rabs_pos (vh n)) as PB'. fold B' in PB'.
    apply screen_between in IH'. apply screen_between in Hi.
    assert (HB : - (r * B + E) <= B' - B <= r * B + E) by lra. clear Hi.
    assert (r * A <= r * Rmax A B) by (apply Rmult_le_compat_l; [lra | apply Rmax_l]).
    assert (r * B <= r * Rmax A B) by (apply Rmult_le_compat_l; [lra | apply Rmax_r]).
    apply Rabs_le. split.
    + assert (B' <= Rmax A' B') by apply Rmax_r. assert (A' <= Rmax A' B') by apply Rmax_l.
      destruct (Rle_dec A B) as [Hab | Hab].
      * rewrite (Rmax_right A B) by lra. lra.
      * rewrite (Rmax_left A B) by lra. lra.
    + assert (Rmax A' B' <= (1 + r) * Rmax A B + E).
      { apply Rmax_lub.
        - assert (A <= Rmax A B) by apply Rmax_l. lra.
        - assert (B <= Rmax A B) by apply Rmax_r. lra. }
      lra.
Qed.

(* The returned scale sh = fl(amaxh/M) (relative ws; a multiplication by a rounded 1/M: ws =
   (1 + w)^2 - 1), amaxh within r*amax + E of the exact amax (amax_perturb):
     |sh - amax/M| <= ((1 + ws)(1 + r) - 1)*(amax/M) + (1 + ws)*E/M. *)
Theorem dynamic_scale_bound : forall ws r E M am amh sh,
  0 <= ws -> 0 <= r -> 0 <= E -> 0 < M -> 0 <= am ->
  Rabs (amh - am) <= r * am + E -> Rabs (sh - amh / M) <= ws * Rabs (amh / M) ->
  Rabs (sh - am / M) <= ((1 + ws) * (1 + r) - 1) * (am / M) + (1 + ws) * (E / M).
Proof.
  intros ws r E M am amh sh Hws Hr HE HM Ham Hamh Hsh.
  assert (Hd : Rabs (amh / M - am / M) <= r * (am / M) + E / M).
  { assert (PM : 0 < / M) by (apply Rinv_0_lt_compat; lra).
    replace (amh / M - am / M) with ((amh - am) * / M) by (field; lra).
    rewrite Rabs_mult, (Rabs_pos_eq (/ M)) by lra.
    replace (r * (am / M) + E / M) with ((r * am + E) * / M) by (field; lra).
    apply Rmult_le_compat_r; lra. }
  assert (Ha : Rabs (amh / M) <= (1 + r) * (am / M) + E / M).
  { replace (amh / M) with (am / M + (amh / M - am / M)) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. rewrite (Rabs_pos_eq (am / M)) by (unfold Rdiv; apply Rmult_le_pos; [lra | left; apply Rinv_0_lt_compat; lra]). lra. }
  assert (ws * Rabs (amh / M) <= ws * ((1 + r) * (am / M) + E / M)) by (apply Rmult_le_compat_l; lra).
  replace (sh - am / M) with ((sh - amh / M) + (amh / M - am / M)) by ring.
  eapply Rle_trans; [apply Rabs_triang |]. nra.
Qed.

(* ---- the numbers of docs/fused-bounds.md section 4: bf16 data, E4M3, head_dim 128 ---- *)

(* The norm's constants as functions of their inputs, in the forms of the theorems above. *)
Definition mean_error (w : R) (d : nat) : R := (1 + ((1 + w) ^ (S d) - 1)) * (1 + w) - 1.
Definition eps_error (w a : R) : R := (1 + w) * (1 + a) - 1.
Definition rsqrt_error (b kr : R) : R := (1 + b) * (1 + kr) - 1.
Definition element_error (w cw er : R) : R := (1 + w) * (1 + w) * (1 + cw) * (1 + er) - 1.

(* d = 128, binary32 (w = 2^-24), rsqrt within 2 ulps (4w), the `1 + w` form (cw = w):
   b <= 1/2 (rms_scale_bound's premise) and nu <= 139w (138.0006w). *)
Theorem d128_norm_constants :
  eps_error (/ 16777216) (mean_error (/ 16777216) 128) <= 1/2 /\
  element_error (/ 16777216) (/ 16777216)
    (rsqrt_error (eps_error (/ 16777216) (mean_error (/ 16777216) 128)) (4 * / 16777216))
    <= 139 * / 16777216.
Proof.
  unfold element_error, rsqrt_error, eps_error, mean_error.
  assert (H129 : INR 129 = 129) by (rewrite INR_IZR_INZ; reflexivity).
  pose proof (gamma_pow (/ 16777216) 129 ltac:(lra) ltac:(rewrite H129; lra)) as G.
  rewrite H129 in G.
  assert (P1 : 1 <= (1 + / 16777216) ^ 129) by (apply pow_R1_Rle; lra).
  set (P := (1 + / 16777216) ^ 129) in *.
  split; lra.
Qed.

(* The composed bound for bf16 data rounded once before E4M3 (u_d = 2^-8, mu_d = 2^-134;
   u8 = 2^-4, mu8 = 2^-10, M = 448), t = v/sh within (1 + w)^2 - 1, and the pre-quantization value
   within norm_then_rotation's (4w(1 + nu) + nu)*rho + 3*2^-150, nu <= 139w (d128_norm_constants):
     |q*sh - clamp(Y/sh)*sh| <= 0.0667*|Y| + 153w*rho + 2^-10*sh + 2^-133. *)
Theorem bf16_e4m3_d128_bound : forall nu Y yh v sh t qr rho,
  0 <= nu <= 139 * / 16777216 -> 0 <= rho -> 0 < sh ->
  Rabs (yh - Y) <= (4 * / 16777216 * (1 + nu) + nu) * rho
                   + 3 * / 1427247692705959881058285969449495136382746624 ->
  Rabs (v - yh) <= / 256 * Rabs yh + / 21778071482940061661655974875633165533184 ->
  Rabs (t - v / sh) <= ((1 + / 16777216) * (1 + / 16777216) - 1) * Rabs (v / sh) ->
  Rabs (qr - t) <= Rmax (/ 16 * Rabs t) (/ 1024) ->
  Rabs (clamp 448 qr * sh - clamp 448 (Y / sh) * sh)
    <= 667 / 10000 * Rabs Y + 153 * / 16777216 * rho + / 1024 * sh
       + / 10889035741470030830827987437816582766592.
Proof.
  intros nu Y yh v sh t qr rho [Hnu0 Hnu] Hr Hsh HEf Hv Ht Hq.
  pose proof (fused_element_bound (/ 16) (/ 1024) 448 ((1 + / 16777216) * (1 + / 16777216) - 1) (/ 256)
                (/ 21778071482940061661655974875633165533184)
                ((4 * / 16777216 * (1 + nu) + nu) * rho + 3 * / 1427247692705959881058285969449495136382746624)
                Y yh v sh t qr ltac:(lra) ltac:(lra) ltac:(lra) ltac:(lra) ltac:(lra) ltac:(lra) Hsh HEf Hv Ht Hq) as K.
  eapply Rle_trans; [exact K |].
  assert (HK : (4 * / 16777216 * (1 + nu) + nu) * rho <= 1430001 / 10000 * / 16777216 * rho).
  { apply Rmult_le_compat_r; lra. }
  pose proof (Rabs_pos Y).
  lra.
Qed.
