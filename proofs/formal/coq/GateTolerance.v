(* GateTolerance.v — the gate's default tolerances (judge/tolerance.cpp) as theorems.

   A third-party candidate is "careful" when it works in the data dtype itself (unit roundoff
   u = 2^-p, p = 53, 24, 11 or 8, so 0 < u <= 2^-8), with cos and sin each within u absolutely
   (faithful: |c - C| <= u, |s - S| <= u, C^2 + S^2 = 1), and rounds every operation once.
   Each rounding of a value v to w is assumed to satisfy
       |w - v| <= max(u*|v|, mu),   mu = half the subnormal spacing of the dtype = 2^(emin-p),
   i.e. relative u in the normal range and absolute mu below it: exactly the two ranges proven by
   gappa/rounding_f64.g, rounding_f32.g, rounding_f16.g and rounding_bf16.g (the last two state it
   as u*max(|v|, 2^emin), which is the same bound since mu = u*2^emin).

   Without FMA the two components are
       a = fl(fl(x*c) - fl(y*s))   against the exact x*C - y*S,
       b = fl(fl(x*s) + fl(y*c))   against the exact x*S + y*C,
   both instances of out = fl(p1 + p2), p1 = fl(x*alpha), p2 = fl(y*beta), exact x*A + y*B
   (for a: beta = -s, B = -S, p2 = -fl(y*s); the rounding hypothesis is symmetric in the sign).
   Result (careful_component): |out - (x*A + y*B)| <= 7/2*u*rho + 3*mu, rho^2 = x^2 + y^2.
   By hand: cos/sin errors u*(|x|+|y|) <= sqrt 2*u*rho; the two product roundings
   u*(|x|*|A| + |y|*|B|) <= u*rho (Cauchy-Schwarz); the final rounding u*|x*A + y*B| <= u*rho:
   (2 + sqrt 2)*u*rho = 3.414*u*rho, plus O(u^2) terms, <= 3.45*u*rho for u <= 2^-8. The mu term is
   3*mu, not (3 + 2u)*mu, because a final rounding that errs by u*|v| adds no mu of its own.
   Hence e <= 4, the gate's default for the exact model (gate_exact_default), with the absolute
   allowance 3*2^(emin-p) of judge/group.cpp (kUnderflowRoundings).

   With one FMA, out = fl(x*alpha + fl(y*beta)): <= 33/10*u*rho + 2*mu (fma_component;
   (1 + sqrt 5)*u*rho by hand).

   f32-recipe model: the golden value g is the recipe's exact result r rounded once,
   |g - r| <= max(u*|r|, mu); a careful implementation of the recipe errs from r by the bound above
   (careful_component allows A^2 + B^2 <= (1 + 2u)^2, which covers the recipe's own faithfully
   rounded cos/sin, whose norm is <= 1 + sqrt 2*u); so the candidate is within 5*u*rho + 4*mu of g
   (gate_recipe_default).

   With an attention factor g (|g| = G >= 1), scaled in the dtype as HF transformers, vLLM and
   llama.cpp do it: e <= 6 (gate_exact_scaled_default) and e <= 8 (gate_recipe_scaled_default);
   see the section on the attention factor.

   f32-angle model (last section): the candidate computes its angle in binary32, th within k ulps
   of the exact frequency theta (|th - theta| <= 2*k*w*|theta|, w = 2^-24), the position rounded,
   ph (|ph - p| <= w*|p|), and phih = RN32(ph*th) (|phih - ph*th| <= w*|ph*th|); then cos/sin of
   phih faithful in the data dtype and the careful rotation as above. Its angle error is relative:
   |phih - p*theta| <= eta*|p*theta|, eta = (1 + w)^2*(1 + 2*k*w) - 1 (f32_angle_error); the
   rotation is rho-Lipschitz in its angle (rotation_lipschitz); so both components are within
   4*u*rho + eta*|p*theta|*rho + 3*mu of the exact rotation by p*theta (gate_f32_angle_default),
   6*u*G*rho + eta*|p*theta|*G*rho + 3*mu with an attention factor (gate_f32_angle_scaled_default):
   e <= 4 + |phi|*eta/u, resp. 6 + |phi|*eta/u, a bound growing with the angle phi = p*theta. *)

From Coq Require Import Reals Lra.
From RopeCheck Require Import ErrorBound.
From RopeCheck Require CosSinTaylor.

(* fast_nra: ErrorBound.v. *)

Open Scope R_scope.

(* Rounding once, to a format of unit roundoff u and underflow error mu. *)
Definition rounds (u mu v w : R) : Prop := Rabs (w - v) <= Rmax (u * Rabs v) mu.

Lemma rounds_sum : forall u mu v w, 0 <= u -> 0 <= mu -> rounds u mu v w -> Rabs (w - v) <= u * Rabs v + mu.
Proof.
  intros u mu v w Hu Hmu H. unfold rounds, Rmax in H.
  pose proof (Rabs_pos v). assert (0 <= u * Rabs v) by (apply Rmult_le_pos; lra).
  destruct (Rle_dec (u * Rabs v) mu); lra.
Qed.

(* |x*a| <= |x|*(|A| + u) when |a - A| <= u. *)
Lemma product_size : forall u x a A, Rabs (a - A) <= u -> Rabs (x * a) <= Rabs x * (Rabs A + u).
Proof.
  intros u x a A H. rewrite Rabs_mult. apply Rmult_le_compat_l; [apply Rabs_pos |].
  replace a with (A + (a - A)) by ring. eapply Rle_trans; [apply Rabs_triang | lra].
Qed.

(* Cauchy-Schwarz for a vector (A, B) of norm at most 1 + 2u. *)
Lemma dot_le : forall u x y A B rho, 0 <= u -> A * A + B * B <= (1 + 2 * u) * (1 + 2 * u) ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs x * Rabs A + Rabs y * Rabs B <= (1 + 2 * u) * rho /\ Rabs (x * A + y * B) <= (1 + 2 * u) * rho.
Proof.
  intros u x y A B rho Hu Hn Hr Hrho.
  assert (H1 : Rabs x * Rabs A + Rabs y * Rabs B <= (1 + 2 * u) * rho).
  { apply le_of_square; [fast_nra |].
    pose proof (cauchy_schwarz2 (Rabs x) (Rabs A) (Rabs y) (Rabs B)) as C.
    rewrite !Rabs_sq in C. assert (0 <= rho * rho) by apply Rle_0_sqr.
    assert (0 <= x * x + y * y) by fast_nra. fast_nra. }
  split; [exact H1 |].
  eapply Rle_trans; [apply Rabs_triang | rewrite !Rabs_mult; exact H1].
Qed.

(* One component without FMA: out = fl(fl(x*a) + fl(y*b)) against the exact x*A + y*B. *)
Theorem careful_component : forall u mu x y a b A B p1 p2 out rho,
  0 <= u <= / 256 -> 0 <= mu -> A * A + B * B <= (1 + 2 * u) * (1 + 2 * u) ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (a - A) <= u -> Rabs (b - B) <= u ->
  rounds u mu (x * a) p1 -> rounds u mu (y * b) p2 -> rounds u mu (p1 + p2) out ->
  Rabs (out - (x * A + y * B)) <= 7/2 * u * rho + 3 * mu.
Proof.
  intros u mu x y a b A B p1 p2 out rho [Hu Hu8] Hmu Hn Hr Hrho Ha Hb H1 H2 Hout.
  pose proof (Rabs_pos x) as Px. pose proof (Rabs_pos y) as Py.
  pose proof (Rabs_pos A) as PA. pose proof (Rabs_pos B) as PB.
  destruct (dot_le u x y A B rho Hu Hn Hr Hrho) as [HT HD].
  pose proof (abs_sum_le x y rho Hr Hrho) as HS.
  set (S := Rabs x + Rabs y). set (T := Rabs x * Rabs A + Rabs y * Rabs B).
  set (D := Rabs (x * A + y * B)). set (v := p1 + p2).
  change (Rabs x + Rabs y) with S in HS. change (Rabs x * Rabs A + Rabs y * Rabs B) with T in HT.
  change (Rabs (x * A + y * B)) with D in HD.
  (* the cos/sin errors *)
  assert (E3 : Rabs (x * (a - A)) + Rabs (y * (b - B)) <= u * S).
  { rewrite !Rabs_mult. unfold S.
    assert (Rabs x * Rabs (a - A) <= Rabs x * u) by (apply Rmult_le_compat_l; lra).
    assert (Rabs y * Rabs (b - B) <= Rabs y * u) by (apply Rmult_le_compat_l; lra). lra. }
  (* the product roundings *)
  assert (E12 : Rabs (p1 - x * a) + Rabs (p2 - y * b) <= u * T + u * u * S + 2 * mu).
  { pose proof (rounds_sum u mu _ _ Hu Hmu H1). pose proof (rounds_sum u mu _ _ Hu Hmu H2).
    pose proof (product_size u x a A Ha). pose proof (product_size u y b B Hb).
    assert (u * Rabs (x * a) <= u * (Rabs x * (Rabs A + u))) by (apply Rmult_le_compat_l; lra).
    assert (u * Rabs (y * b) <= u * (Rabs y * (Rabs B + u))) by (apply Rmult_le_compat_l; lra).
    unfold T, S. fast_nra. }
  set (E := u * S + (u * T + u * u * S)).
  assert (Hsplit : out - (x * A + y * B) =
                   (out - v) + (x * (a - A) + y * (b - B)) + ((p1 - x * a) + (p2 - y * b))) by (unfold v; ring).
  assert (Hrest : Rabs (x * (a - A) + y * (b - B)) + Rabs ((p1 - x * a) + (p2 - y * b)) <= E + 2 * mu).
  { pose proof (Rabs_triang (x * (a - A)) (y * (b - B))).
    pose proof (Rabs_triang (p1 - x * a) (p2 - y * b)). unfold E. lra. }
  assert (Htot : Rabs (out - (x * A + y * B)) <= Rabs (out - v) + (E + 2 * mu)).
  { rewrite Hsplit. eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |]. lra. }
  assert (Hv : Rabs v <= D + (E + 2 * mu)).
  { replace v with ((x * A + y * B) + (x * (a - A) + y * (b - B)) + ((p1 - x * a) + (p2 - y * b)))
      by (unfold v; ring).
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |]. unfold D. lra. }
  assert (PE : 0 <= E).
  { unfold E, S, T. assert (0 <= Rabs x * Rabs A) by fast_nra. assert (0 <= Rabs y * Rabs B) by fast_nra.
    assert (0 <= u * u) by fast_nra. fast_nra. }
  (* the final rounding: absolute mu (underflow) or relative u, never both *)
  assert (Hfin : Rabs (out - (x * A + y * B)) <= (1 + u) * E + u * D + 3 * mu).
  { unfold rounds, Rmax in Hout. fold v in Hout.
    assert (0 <= u * E) by fast_nra. assert (0 <= u * D) by (unfold D; pose proof (Rabs_pos (x * A + y * B)); fast_nra).
    destruct (Rle_dec (u * Rabs v) mu).
    - lra.
    - assert (u * Rabs v <= u * (D + (E + 2 * mu))) by (apply Rmult_le_compat_l; lra).
      assert (u * mu <= / 256 * mu) by (apply Rmult_le_compat_r; lra). fast_nra. }
  eapply Rle_trans; [exact Hfin |]. apply Rplus_le_compat_r.
  (* (1 + u)*u*(S + T + u*S) + u*D <= 7/2*u*rho *)
  assert (HE : E <= u * (1415/1000 * rho + (1 + 2 * u) * rho + u * (1415/1000 * rho))).
  { unfold E. assert (0 <= u * u) by fast_nra.
    assert (u * S <= u * (1415/1000 * rho)) by (apply Rmult_le_compat_l; lra).
    assert (u * T <= u * ((1 + 2 * u) * rho)) by (apply Rmult_le_compat_l; lra).
    assert (u * u * S <= u * u * (1415/1000 * rho)) by (apply Rmult_le_compat_l; lra). fast_nra. }
  assert (HuD : u * D <= u * ((1 + 2 * u) * rho)) by (apply Rmult_le_compat_l; lra).
  assert (HuE : (1 + u) * E <= (1 + u) * (u * (1415/1000 * rho + (1 + 2 * u) * rho + u * (1415/1000 * rho))))
    by (apply Rmult_le_compat_l; lra).
  set (w := u * rho). assert (0 <= w) by (unfold w; fast_nra).
  assert (K : (1 + u) * (u * (1415/1000 * rho + (1 + 2 * u) * rho + u * (1415/1000 * rho)))
              + u * ((1 + 2 * u) * rho) = w * (3415/1000 + u * (7830/1000) + u * u * (3415/1000)))
    by (unfold w; field).
  assert (w * (u * (7830/1000) + u * u * (3415/1000)) <= w * (85/1000)).
  { apply Rmult_le_compat_l; [lra |]. assert (u * u <= / 256 * / 256) by fast_nra. lra. }
  replace (7/2 * u * rho) with (w * (3500/1000)) by (unfold w; field). fast_nra.
Qed.

(* One component with one FMA: out = fl(x*a + fl(y*b)). *)
Theorem fma_component : forall u mu x y a b A B p2 out rho,
  0 <= u <= / 256 -> 0 <= mu -> A * A + B * B = 1 ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (a - A) <= u -> Rabs (b - B) <= u ->
  rounds u mu (y * b) p2 -> rounds u mu (x * a + p2) out ->
  Rabs (out - (x * A + y * B)) <= 33/10 * u * rho + 2 * mu.
Proof.
  intros u mu x y a b A B p2 out rho [Hu Hu8] Hmu Hn Hr Hrho Ha Hb H2 Hout.
  pose proof (Rabs_pos x) as Px. pose proof (Rabs_pos y) as Py.
  pose proof (Rabs_pos A) as PA. pose proof (Rabs_pos B) as PB.
  assert (HB1 : Rabs B <= 1) by (apply le_of_square; [lra | rewrite Rabs_sq; fast_nra]).
  pose proof (exact_component_le_rho x y A B rho Hn Hr Hrho) as HD.
  (* |x| + 2|y| <= sqrt 5 * rho <= 2237/1000 * rho *)
  assert (HS : Rabs x + 2 * Rabs y <= 2237/1000 * rho).
  { apply le_of_square; [lra |]. pose proof (cauchy_schwarz2 (Rabs x) 1 (Rabs y) 2) as C.
    rewrite !Rabs_sq in C. fast_nra. }
  set (D := Rabs (x * A + y * B)). change (Rabs (x * A + y * B)) with D in HD.
  set (E := u * (Rabs x + Rabs y) + (u * (Rabs y * Rabs B) + u * u * Rabs y)).
  assert (E3 : Rabs (x * (a - A)) + Rabs (y * (b - B)) <= u * (Rabs x + Rabs y)).
  { rewrite !Rabs_mult.
    assert (Rabs x * Rabs (a - A) <= Rabs x * u) by (apply Rmult_le_compat_l; lra).
    assert (Rabs y * Rabs (b - B) <= Rabs y * u) by (apply Rmult_le_compat_l; lra). lra. }
  assert (E2 : Rabs (p2 - y * b) <= u * (Rabs y * Rabs B) + u * u * Rabs y + mu).
  { pose proof (rounds_sum u mu _ _ Hu Hmu H2). pose proof (product_size u y b B Hb).
    assert (u * Rabs (y * b) <= u * (Rabs y * (Rabs B + u))) by (apply Rmult_le_compat_l; lra). fast_nra. }
  set (v := x * a + p2).
  assert (Hrest : Rabs (x * (a - A) + y * (b - B)) + Rabs (p2 - y * b) <= E + mu).
  { pose proof (Rabs_triang (x * (a - A)) (y * (b - B))). unfold E. lra. }
  assert (Htot : Rabs (out - (x * A + y * B)) <= Rabs (out - v) + (E + mu)).
  { replace (out - (x * A + y * B)) with ((out - v) + (x * (a - A) + y * (b - B)) + (p2 - y * b))
      by (unfold v; ring).
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |]. lra. }
  assert (Hv : Rabs v <= D + (E + mu)).
  { replace v with ((x * A + y * B) + (x * (a - A) + y * (b - B)) + (p2 - y * b)) by (unfold v; ring).
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |]. unfold D. lra. }
  assert (PE : 0 <= E).
  { unfold E. assert (0 <= Rabs y * Rabs B) by fast_nra. assert (0 <= u * u) by fast_nra. fast_nra. }
  assert (Hfin : Rabs (out - (x * A + y * B)) <= (1 + u) * E + u * D + 2 * mu).
  { unfold rounds, Rmax in Hout. fold v in Hout.
    assert (0 <= u * E) by fast_nra. assert (0 <= u * D) by (unfold D; pose proof (Rabs_pos (x * A + y * B)); fast_nra).
    destruct (Rle_dec (u * Rabs v) mu).
    - lra.
    - assert (u * Rabs v <= u * (D + (E + mu))) by (apply Rmult_le_compat_l; lra).
      assert (u * mu <= / 256 * mu) by (apply Rmult_le_compat_r; lra). fast_nra. }
  eapply Rle_trans; [exact Hfin |]. apply Rplus_le_compat_r.
  (* E <= u*(|x| + 2|y|) + u*u*|y| <= u*(2237/1000 + u)*rho *)
  assert (Hy : Rabs y <= rho) by (apply le_of_square; [lra | rewrite Rabs_sq; fast_nra]).
  assert (HE : E <= u * (2237/1000 * rho) + u * u * rho).
  { unfold E. assert (0 <= u * u) by fast_nra.
    assert (u * (Rabs y * Rabs B) <= u * Rabs y) by (apply Rmult_le_compat_l; fast_nra).
    assert (u * (Rabs x + 2 * Rabs y) <= u * (2237/1000 * rho)) by (apply Rmult_le_compat_l; lra).
    assert (u * u * Rabs y <= u * u * rho) by (apply Rmult_le_compat_l; lra). fast_nra. }
  assert (HuD : u * D <= u * rho) by (apply Rmult_le_compat_l; lra).
  assert (HuE : (1 + u) * E <= (1 + u) * (u * (2237/1000 * rho) + u * u * rho)) by (apply Rmult_le_compat_l; lra).
  set (w := u * rho). assert (0 <= w) by (unfold w; fast_nra).
  assert (K : (1 + u) * (u * (2237/1000 * rho) + u * u * rho) + u * rho
              = w * (3237/1000 + u * (3237/1000) + u * u)) by (unfold w; field).
  assert (w * (u * (3237/1000) + u * u) <= w * (63/1000)).
  { apply Rmult_le_compat_l; [lra |]. assert (u * u <= / 256 * / 256) by fast_nra. lra. }
  replace (33/10 * u * rho) with (w * (3300/1000)) by (unfold w; field). fast_nra.
Qed.

(* The rotation of a pair, careful and without FMA: both components within 7/2*u*rho + 3*mu. *)
Theorem careful_rotation_bound : forall u mu x y c s C S p1 p2 p3 p4 a b rho,
  0 <= u <= / 256 -> 0 <= mu -> C * C + S * S = 1 ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - C) <= u -> Rabs (s - S) <= u ->
  rounds u mu (x * c) p1 -> rounds u mu (y * s) p2 -> rounds u mu (p1 - p2) a ->
  rounds u mu (x * s) p3 -> rounds u mu (y * c) p4 -> rounds u mu (p3 + p4) b ->
  Rabs (a - (x * C - y * S)) <= 7/2 * u * rho + 3 * mu /\
  Rabs (b - (x * S + y * C)) <= 7/2 * u * rho + 3 * mu.
Proof.
  intros u mu x y c s C S p1 p2 p3 p4 a b rho Hu Hmu Hn Hr Hrho Hc Hs H1 H2 Ha H3 H4 Hb.
  assert (Hn' : forall A B, A * A + B * B = 1 -> A * A + B * B <= (1 + 2 * u) * (1 + 2 * u))
    by (intros; fast_nra).
  split.
  - replace (x * C - y * S) with (x * C + y * (- S)) by ring.
    apply (careful_component u mu x y c (- s) C (- S) p1 (- p2) a rho); try assumption.
    + apply Hn'. fast_nra.
    + replace (- s - - S) with (- (s - S)) by ring. rewrite Rabs_Ropp. exact Hs.
    + unfold rounds in *. replace (- p2 - y * - s) with (- (p2 - y * s)) by ring.
      replace (y * - s) with (- (y * s)) by ring. rewrite Rabs_Ropp, Rabs_Ropp. exact H2.
  - apply (careful_component u mu x y s c S C p3 p4 b rho); try assumption.
    apply Hn'. fast_nra.
Qed.

(* The gate's default for the exact model: e <= 4, with the absolute allowance 3*mu. *)
Theorem gate_exact_default : forall u mu x y c s C S p1 p2 p3 p4 a b rho,
  0 <= u <= / 256 -> 0 <= mu -> C * C + S * S = 1 ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - C) <= u -> Rabs (s - S) <= u ->
  rounds u mu (x * c) p1 -> rounds u mu (y * s) p2 -> rounds u mu (p1 - p2) a ->
  rounds u mu (x * s) p3 -> rounds u mu (y * c) p4 -> rounds u mu (p3 + p4) b ->
  Rabs (a - (x * C - y * S)) <= 4 * u * rho + 3 * mu /\
  Rabs (b - (x * S + y * C)) <= 4 * u * rho + 3 * mu.
Proof.
  intros u mu x y c s C S p1 p2 p3 p4 a b rho Hu Hmu Hn Hr Hrho Hc Hs H1 H2 Ha H3 H4 Hb.
  destruct (careful_rotation_bound u mu x y c s C S p1 p2 p3 p4 a b rho Hu Hmu Hn Hr Hrho Hc Hs H1 H2 Ha H3 H4 Hb)
    as [Ka Kb].
  assert (0 <= u * rho) by fast_nra. split; lra.
Qed.

(* The same rotation with one FMA per component: within 33/10*u*rho + 2*mu. *)
Theorem fma_rotation_bound : forall u mu x y c s C S p2 p4 a b rho,
  0 <= u <= / 256 -> 0 <= mu -> C * C + S * S = 1 ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - C) <= u -> Rabs (s - S) <= u ->
  rounds u mu (y * s) p2 -> rounds u mu (x * c - p2) a ->
  rounds u mu (y * c) p4 -> rounds u mu (x * s + p4) b ->
  Rabs (a - (x * C - y * S)) <= 33/10 * u * rho + 2 * mu /\
  Rabs (b - (x * S + y * C)) <= 33/10 * u * rho + 2 * mu.
Proof.
  intros u mu x y c s C S p2 p4 a b rho Hu Hmu Hn Hr Hrho Hc Hs H2 Ha H4 Hb.
  split.
  - replace (x * C - y * S) with (x * C + y * (- S)) by ring.
    apply (fma_component u mu x y c (- s) C (- S) (- p2) a rho); try assumption.
    + fast_nra.
    + replace (- s - - S) with (- (s - S)) by ring. rewrite Rabs_Ropp. exact Hs.
    + unfold rounds in *. replace (- p2 - y * - s) with (- (p2 - y * s)) by ring.
      replace (y * - s) with (- (y * s)) by ring. rewrite Rabs_Ropp, Rabs_Ropp. exact H2.
  - apply (fma_component u mu x y s c S C p4 b rho); try assumption. fast_nra.
Qed.

(* f32-recipe model: the recipe's exact result r = x*A + y*B, with the recipe's own cos/sin (A, B)
   of norm <= 1 + 2u; the golden value g is r rounded once; a careful candidate out (no FMA) computes
   the recipe from faithful a, b within u of A, B. Then out is within 5*u*rho + 4*mu of g. *)
Theorem gate_recipe_default : forall u mu x y a b A B p1 p2 out g rho,
  0 <= u <= / 256 -> 0 <= mu -> A * A + B * B <= (1 + 2 * u) * (1 + 2 * u) ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (a - A) <= u -> Rabs (b - B) <= u ->
  rounds u mu (x * a) p1 -> rounds u mu (y * b) p2 -> rounds u mu (p1 + p2) out ->
  rounds u mu (x * A + y * B) g ->
  Rabs (out - g) <= 5 * u * rho + 4 * mu.
Proof.
  intros u mu x y a b A B p1 p2 out g rho [Hu Hu8] Hmu Hn Hr Hrho Ha Hb H1 H2 Hout Hg.
  pose proof (careful_component u mu x y a b A B p1 p2 out rho (conj Hu Hu8) Hmu Hn Hr Hrho Ha Hb H1 H2 Hout) as K.
  destruct (dot_le u x y A B rho Hu Hn Hr Hrho) as [_ HD].
  pose proof (rounds_sum u mu _ _ Hu Hmu Hg) as G.
  assert (u * Rabs (x * A + y * B) <= u * ((1 + 2 * u) * rho)) by (apply Rmult_le_compat_l; lra).
  assert (u * (2 * u) * rho <= u * (2 / 256) * rho).
  { apply Rmult_le_compat_r; [lra |]. apply Rmult_le_compat_l; lra. }
  pose proof (Rabs_triang (out - (x * A + y * B)) (- (g - (x * A + y * B)))) as T.
  rewrite Rabs_Ropp in T.
  replace (out - (x * A + y * B) + - (g - (x * A + y * B))) with (out - g) in T by ring.
  assert (0 <= u * rho) by fast_nra. fast_nra.
Qed.

(* The attention factor g (|g| = G >= 1, g normal). A careful candidate, as HF transformers, vLLM
   and llama.cpp do it, scales cos and sin by g in the data dtype, with g itself rounded to the
   dtype: gh = fl(g), |gh - G| <= u*G; c2 = fl(gh*c), s2 = fl(gh*s) from faithful c, s; then
       a = fl(fl(x*c2) - fl(y*s2))   against the exact G*(x*C - y*S),
       b = fl(fl(x*s2) + fl(y*c2))   against the exact G*(x*S + y*C)
   (g < 0 is the same up to the sign of every value, the rounding being symmetric).
   By hand, first order: |c2 - G*C| <= u*G*(2*|C| + 1), so the scaled cos/sin errors cost
   u*G*(2*(|x|*|C| + |y|*|S|) + |x| + |y|) <= (2 + sqrt 2)*u*G*rho, the two product roundings
   u*G*rho, the final rounding u*G*rho: (4 + sqrt 2)*u*G*rho = 5.414*u*G*rho, <= 5.52*u*G*rho with the
   O(u^2) terms for u <= 2^-8 (careful_scaled_component: 6). The underflow of c2 and s2 costs
   mu*(|x| + |y|) <= sqrt 2*mu*rho, absorbed into the relative part since mu <= u*2^-14 for every
   dtype (f16 has the largest 2^emin = 2^-14) and G >= 1; the absolute part stays 3*mu. Hence
   e <= 6 for the exact model (gate_exact_scaled_default) and, the golden value being the scaled
   recipe value rounded once, 6 + (1 + 2u) rounded up: e <= 8 for the f32-recipe model
   (gate_recipe_scaled_default). *)

Lemma rounds_opp : forall u mu v w, rounds u mu v w -> rounds u mu (- v) (- w).
Proof.
  intros u mu v w H. unfold rounds in *.
  replace (- w - - v) with (- (w - v)) by ring. rewrite !Rabs_Ropp. exact H.
Qed.

(* A coefficient scaled in the dtype: a2 = fl(gh*a), with gh within u*G of G >= 1 and a within u of A. *)
Lemma scaled_coefficient : forall u mu G gh a A a2,
  0 <= u <= / 256 -> 0 <= mu -> 1 <= G -> Rabs (gh - G) <= u * G -> Rabs (a - A) <= u ->
  rounds u mu (gh * a) a2 ->
  Rabs (a2 - G * A) <= u * G * (201/100 * Rabs A + 101/100) + mu /\
  Rabs a2 <= G * (101/100 * Rabs A + 1/100) + mu.
Proof.
  intros u mu G gh a A a2 [Hu Hu8] Hmu HG Hgh Ha Hr.
  pose proof (Rabs_pos A) as PA.
  assert (Hg : Rabs gh <= (1 + u) * G).
  { replace gh with (G + (gh - G)) by ring. eapply Rle_trans; [apply Rabs_triang |].
    rewrite (Rabs_right G) by lra. lra. }
  assert (Hav : Rabs a <= Rabs A + u).
  { replace a with (A + (a - A)) by ring. eapply Rle_trans; [apply Rabs_triang | lra]. }
  assert (HP : Rabs (gh * a) <= (1 + u) * G * (Rabs A + u)).
  { rewrite Rabs_mult. apply Rmult_le_compat; try apply Rabs_pos; assumption. }
  pose proof (rounds_sum u mu _ _ Hu Hmu Hr) as H1.
  assert (HuP : u * Rabs (gh * a) <= u * ((1 + u) * G * (Rabs A + u))) by (apply Rmult_le_compat_l; lra).
  assert (PuG : 0 <= u * G) by fast_nra.
  split.
  - assert (H2 : Rabs ((gh - G) * a) <= u * G * (Rabs A + u)).
    { rewrite Rabs_mult. apply Rmult_le_compat; try apply Rabs_pos; assumption. }
    assert (H3 : Rabs (G * (a - A)) <= u * G).
    { rewrite Rabs_mult, (Rabs_right G) by lra. rewrite (Rmult_comm u G).
      apply Rmult_le_compat_l; lra. }
    replace (a2 - G * A) with ((a2 - gh * a) + (gh - G) * a + G * (a - A)) by ring.
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |].
    assert (K : u * ((1 + u) * G * (Rabs A + u)) + u * G * (Rabs A + u) + u * G
                = u * G * ((2 + u) * Rabs A + (1 + 2 * u + u * u))) by ring.
    assert (u * G * ((2 + u) * Rabs A + (1 + 2 * u + u * u)) <= u * G * (201/100 * Rabs A + 101/100)).
    { apply Rmult_le_compat_l; [lra |].
      assert (u * Rabs A <= / 256 * Rabs A) by (apply Rmult_le_compat_r; lra).
      assert (u * u <= / 256 * / 256) by fast_nra. lra. }
    lra.
  - assert (Ha2 : Rabs a2 <= (1 + u) * Rabs (gh * a) + mu).
    { replace a2 with (gh * a + (a2 - gh * a)) by ring.
      eapply Rle_trans; [apply Rabs_triang | lra]. }
    assert (K : (1 + u) * ((1 + u) * G * (Rabs A + u)) = G * ((1 + u) * (1 + u) * (Rabs A + u))) by ring.
    assert (G * ((1 + u) * (1 + u) * (Rabs A + u)) <= G * (101/100 * Rabs A + 1/100)).
    { apply Rmult_le_compat_l; [lra |].
      assert (u * Rabs A <= / 256 * Rabs A) by (apply Rmult_le_compat_r; lra).
      assert (u * u <= / 256 * / 256) by fast_nra.
      assert (u * u * Rabs A <= / 256 * / 256 * Rabs A) by (apply Rmult_le_compat_r; lra).
      assert (u * u * u <= / 256 * / 256 * / 256) by fast_nra. fast_nra. }
    assert ((1 + u) * Rabs (gh * a) <= (1 + u) * ((1 + u) * G * (Rabs A + u))) by (apply Rmult_le_compat_l; lra).
    lra.
Qed.

(* One scaled component without FMA: out = fl(fl(x*a2) + fl(y*b2)), a2 = fl(gh*a), b2 = fl(gh*b),
   against the exact G*(x*A + y*B); within 6*u*G*rho + 3*mu (5.52 by the proof's own constants). *)
Theorem careful_scaled_component : forall u mu G gh x y a b A B a2 b2 p1 p2 out rho,
  0 <= u <= / 256 -> 0 <= mu <= u / 16384 -> 1 <= G -> Rabs (gh - G) <= u * G ->
  A * A + B * B <= (1 + 2 * u) * (1 + 2 * u) ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (a - A) <= u -> Rabs (b - B) <= u ->
  rounds u mu (gh * a) a2 -> rounds u mu (gh * b) b2 ->
  rounds u mu (x * a2) p1 -> rounds u mu (y * b2) p2 -> rounds u mu (p1 + p2) out ->
  Rabs (out - G * (x * A + y * B)) <= 6 * u * G * rho + 3 * mu.
Proof.
  intros u mu G gh x y a b A B a2 b2 p1 p2 out rho [Hu Hu8] [Hmu Hmu16] HG Hgh Hn Hr Hrho Ha Hb
    Ha2 Hb2 H1 H2 Hout.
  pose proof (Rabs_pos x) as Px. pose proof (Rabs_pos y) as Py.
  pose proof (Rabs_pos A) as PA. pose proof (Rabs_pos B) as PB.
  destruct (scaled_coefficient u mu G gh a A a2 (conj Hu Hu8) Hmu HG Hgh Ha Ha2) as [Ea Na].
  destruct (scaled_coefficient u mu G gh b B b2 (conj Hu Hu8) Hmu HG Hgh Hb Hb2) as [Eb Nb].
  destruct (dot_le u x y A B rho Hu Hn Hr Hrho) as [HT HD].
  pose proof (abs_sum_le x y rho Hr Hrho) as HS.
  set (S := Rabs x + Rabs y). set (T := Rabs x * Rabs A + Rabs y * Rabs B).
  set (D := Rabs (x * A + y * B)). set (v := p1 + p2).
  change (Rabs x + Rabs y) with S in HS. change (Rabs x * Rabs A + Rabs y * Rabs B) with T in HT.
  change (Rabs (x * A + y * B)) with D in HD.
  assert (PS : 0 <= S) by (unfold S; lra).
  assert (PT : 0 <= T) by (unfold T; fast_nra).
  assert (PD : 0 <= D) by (unfold D; apply Rabs_pos).
  assert (PuG : 0 <= u * G) by fast_nra.
  (* the scaled cos/sin errors *)
  assert (E3 : Rabs (x * (a2 - G * A)) + Rabs (y * (b2 - G * B))
               <= u * G * (201/100 * T + 101/100 * S) + mu * S).
  { rewrite !Rabs_mult.
    assert (Rabs x * Rabs (a2 - G * A) <= Rabs x * (u * G * (201/100 * Rabs A + 101/100) + mu))
      by (apply Rmult_le_compat_l; lra).
    assert (Rabs y * Rabs (b2 - G * B) <= Rabs y * (u * G * (201/100 * Rabs B + 101/100) + mu))
      by (apply Rmult_le_compat_l; lra).
    unfold T, S. lra. }
  (* the product roundings *)
  assert (E12 : Rabs (p1 - x * a2) + Rabs (p2 - y * b2)
                <= u * (G * (101/100 * T + 1/100 * S) + mu * S) + 2 * mu).
  { pose proof (rounds_sum u mu _ _ Hu Hmu H1). pose proof (rounds_sum u mu _ _ Hu Hmu H2).
    assert (Rabs (x * a2) <= Rabs x * (G * (101/100 * Rabs A + 1/100) + mu))
      by (rewrite Rabs_mult; apply Rmult_le_compat_l; lra).
    assert (Rabs (y * b2) <= Rabs y * (G * (101/100 * Rabs B + 1/100) + mu))
      by (rewrite Rabs_mult; apply Rmult_le_compat_l; lra).
    assert (u * Rabs (x * a2) <= u * (Rabs x * (G * (101/100 * Rabs A + 1/100) + mu)))
      by (apply Rmult_le_compat_l; lra).
    assert (u * Rabs (y * b2) <= u * (Rabs y * (G * (101/100 * Rabs B + 1/100) + mu)))
      by (apply Rmult_le_compat_l; lra).
    unfold T, S. lra. }
  set (E := u * G * (201/100 * T + 101/100 * S) + mu * S + u * (G * (101/100 * T + 1/100 * S) + mu * S)).
  assert (Hsplit : out - G * (x * A + y * B) =
                   (out - v) + (x * (a2 - G * A) + y * (b2 - G * B)) + ((p1 - x * a2) + (p2 - y * b2)))
    by (unfold v; ring).
  assert (Hrest : Rabs (x * (a2 - G * A) + y * (b2 - G * B)) + Rabs ((p1 - x * a2) + (p2 - y * b2))
                  <= E + 2 * mu).
  { pose proof (Rabs_triang (x * (a2 - G * A)) (y * (b2 - G * B))).
    pose proof (Rabs_triang (p1 - x * a2) (p2 - y * b2)). unfold E. lra. }
  assert (Htot : Rabs (out - G * (x * A + y * B)) <= Rabs (out - v) + (E + 2 * mu)).
  { rewrite Hsplit. eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |]. lra. }
  assert (HGD : Rabs (G * (x * A + y * B)) = G * D) by (unfold D; rewrite Rabs_mult, Rabs_right by lra; reflexivity).
  assert (Hv : Rabs v <= G * D + (E + 2 * mu)).
  { replace v with (G * (x * A + y * B) + (x * (a2 - G * A) + y * (b2 - G * B))
                    + ((p1 - x * a2) + (p2 - y * b2))) by (unfold v; ring).
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |]. lra. }
  assert (PE : 0 <= E).
  { unfold E. assert (0 <= u * G * (201/100 * T + 101/100 * S)) by (apply Rmult_le_pos; lra).
    assert (0 <= mu * S) by fast_nra.
    assert (0 <= u * (G * (101/100 * T + 1/100 * S) + mu * S)).
    { apply Rmult_le_pos; [lra |]. assert (0 <= G * (101/100 * T + 1/100 * S)) by (apply Rmult_le_pos; lra).
      lra. }
    lra. }
  (* the final rounding: absolute mu (underflow) or relative u, never both *)
  assert (Hfin : Rabs (out - G * (x * A + y * B)) <= (1 + u) * E + u * (G * D) + 3 * mu).
  { unfold rounds, Rmax in Hout. fold v in Hout.
    assert (0 <= u * E) by fast_nra. assert (0 <= u * (G * D)) by (apply Rmult_le_pos; fast_nra).
    destruct (Rle_dec (u * Rabs v) mu).
    - lra.
    - assert (u * Rabs v <= u * (G * D + (E + 2 * mu))) by (apply Rmult_le_compat_l; lra).
      assert (u * mu <= / 256 * mu) by (apply Rmult_le_compat_r; lra). fast_nra. }
  eapply Rle_trans; [exact Hfin |]. apply Rplus_le_compat_r.
  (* (1 + u)*E + u*G*D <= 6*u*G*rho, with T, D <= 1008/1000*rho, S <= 1415/1000*rho, mu <= u/16384 *)
  assert (Hur : u * rho <= / 256 * rho) by (apply Rmult_le_compat_r; lra).
  assert (HT' : T <= 1008/1000 * rho) by fast_nra.
  assert (HD' : D <= 1008/1000 * rho) by fast_nra.
  assert (PW : 0 <= u * G * rho) by (apply Rmult_le_pos; lra).
  assert (HGT : u * G * T <= u * G * (1008/1000 * rho)) by (apply Rmult_le_compat_l; lra).
  assert (HGS : u * G * S <= u * G * (1415/1000 * rho)) by (apply Rmult_le_compat_l; lra).
  assert (HGD' : u * G * D <= u * G * (1008/1000 * rho)) by (apply Rmult_le_compat_l; lra).
  assert (HmS : mu * S <= mu * (1415/1000 * rho)) by (apply Rmult_le_compat_l; lra).
  assert (Hmr : mu * rho <= u / 16384 * rho) by (apply Rmult_le_compat_r; lra).
  assert (HuG : u * rho * 1 <= u * rho * G) by (apply Rmult_le_compat_l; fast_nra).
  assert (HumS : u * (mu * S) <= / 256 * (mu * S)) by (apply Rmult_le_compat_r; fast_nra).
  assert (HE : E <= 449/100 * (u * G * rho)) by (unfold E; lra).
  assert (HuE : u * E <= / 256 * E) by (apply Rmult_le_compat_r; lra).
  lra.
Qed.

(* The gate's default for the exact model with an attention factor: the rotation of a pair, with
   c2 = fl(gh*c), s2 = fl(gh*s) and no FMA; both components within 7*u*G*rho + 3*mu, i.e. e <= 7. *)
Theorem gate_exact_scaled_default : forall u mu G gh x y c s C S c2 s2 p1 p2 p3 p4 a b rho,
  0 <= u <= / 256 -> 0 <= mu <= u / 16384 -> 1 <= G -> Rabs (gh - G) <= u * G ->
  C * C + S * S = 1 ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - C) <= u -> Rabs (s - S) <= u ->
  rounds u mu (gh * c) c2 -> rounds u mu (gh * s) s2 ->
  rounds u mu (x * c2) p1 -> rounds u mu (y * s2) p2 -> rounds u mu (p1 - p2) a ->
  rounds u mu (x * s2) p3 -> rounds u mu (y * c2) p4 -> rounds u mu (p3 + p4) b ->
  Rabs (a - G * (x * C - y * S)) <= 6 * u * G * rho + 3 * mu /\
  Rabs (b - G * (x * S + y * C)) <= 6 * u * G * rho + 3 * mu.
Proof.
  intros u mu G gh x y c s C S c2 s2 p1 p2 p3 p4 a b rho Hu Hmu HG Hgh Hn Hr Hrho Hc Hs
    Hc2 Hs2 H1 H2 Ha H3 H4 Hb.
  assert (Hn' : forall A B, A * A + B * B = 1 -> A * A + B * B <= (1 + 2 * u) * (1 + 2 * u))
    by (intros; destruct Hu; fast_nra).
  split.
  - replace (x * C - y * S) with (x * C + y * (- S)) by ring.
    replace (p1 - p2) with (p1 + - p2) in Ha by ring.
    apply (careful_scaled_component u mu G gh x y c (- s) C (- S) c2 (- s2) p1 (- p2) a rho);
      try assumption.
    + apply Hn'. fast_nra.
    + replace (- s - - S) with (- (s - S)) by ring. rewrite Rabs_Ropp. exact Hs.
    + replace (gh * - s) with (- (gh * s)) by ring. apply rounds_opp. exact Hs2.
    + replace (y * - s2) with (- (y * s2)) by ring. apply rounds_opp. exact H2.
  - apply (careful_scaled_component u mu G gh x y s c S C s2 c2 p3 p4 b rho); try assumption.
    apply Hn'. fast_nra.
Qed.

(* f32-recipe model with an attention factor: the golden value gv is the scaled recipe result
   G*(x*A + y*B) rounded once; a careful candidate out computes it as in careful_scaled_component.
   Then out is within 8*u*G*rho + 4*mu of gv, i.e. e <= 8. *)
Theorem gate_recipe_scaled_default : forall u mu G gh x y a b A B a2 b2 p1 p2 out gv rho,
  0 <= u <= / 256 -> 0 <= mu <= u / 16384 -> 1 <= G -> Rabs (gh - G) <= u * G ->
  A * A + B * B <= (1 + 2 * u) * (1 + 2 * u) ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (a - A) <= u -> Rabs (b - B) <= u ->
  rounds u mu (gh * a) a2 -> rounds u mu (gh * b) b2 ->
  rounds u mu (x * a2) p1 -> rounds u mu (y * b2) p2 -> rounds u mu (p1 + p2) out ->
  rounds u mu (G * (x * A + y * B)) gv ->
  Rabs (out - gv) <= 8 * u * G * rho + 4 * mu.
Proof.
  intros u mu G gh x y a b A B a2 b2 p1 p2 out gv rho [Hu Hu8] [Hmu Hmu16] HG Hgh Hn Hr Hrho Ha Hb
    Ha2 Hb2 H1 H2 Hout Hgv.
  pose proof (careful_scaled_component u mu G gh x y a b A B a2 b2 p1 p2 out rho
                (conj Hu Hu8) (conj Hmu Hmu16) HG Hgh Hn Hr Hrho Ha Hb Ha2 Hb2 H1 H2 Hout) as K.
  destruct (dot_le u x y A B rho Hu Hn Hr Hrho) as [_ HD].
  pose proof (rounds_sum u mu _ _ Hu Hmu Hgv) as Hg.
  rewrite Rabs_mult, (Rabs_right G) in Hg by lra.
  assert (PuG : 0 <= u * G) by fast_nra.
  assert (u * G * Rabs (x * A + y * B) <= u * G * ((1 + 2 * u) * rho)) by (apply Rmult_le_compat_l; lra).
  assert (Hur : u * rho <= / 256 * rho) by (apply Rmult_le_compat_r; lra).
  assert (u * G * (u * rho) <= u * G * (/ 256 * rho)) by (apply Rmult_le_compat_l; lra).
  pose proof (Rabs_triang (out - G * (x * A + y * B)) (- (gv - G * (x * A + y * B)))) as T.
  rewrite Rabs_Ropp in T.
  replace (out - G * (x * A + y * B) + - (gv - G * (x * A + y * B))) with (out - gv) in T by ring.
  assert (0 <= u * G * rho) by (apply Rmult_le_pos; lra).
  lra.
Qed.

(* ---- the f32-angle model ---- *)

(* A candidate of the class "float32 angle" (verdict model f32-angle) does not rotate by the exact
   angle p*theta but by its own binary32 angle phih:
     th   = the frequency theta'_j computed in binary32, within k ulps: |th - theta| <= 2*k*w*|theta|
            (one binary32 ulp of a normal v is at most 2*w*|v|, w = 2^-24);
     ph   = the position rounded to binary32: |ph - p| <= w*|p| (exact below 2^24);
     phih = RN32(ph*th): |phih - ph*th| <= w*|ph*th|;
   then c, s faithful to cos phih, sin phih in the data dtype and the careful rotation (six
   roundings, as in gate_exact_default, or with g scaled in, as in gate_exact_scaled_default).
   The careful rotation is within e_c*u*rho + 3*mu of the exact rotation by phih (e_c = 4, resp.
   6 with u*rho*G as the unit), and the exact rotation moves by at most
   |phih - p*theta|*rho <= eta*|p*theta|*rho (times G) when its angle moves to p*theta. The
   gate's bound for this model therefore grows with the angle: e <= e_c + |phi|*eta/u. With the
   gate's default k = 8 and float32 data, eta/u = 2^24*eta = 18 + O(2^-24) per radian. *)

(* The angle of the f32-angle model: th = theta*(1 + d1), ph = p*(1 + d2), phih = ph*th*(1 + d3) with
   |d1| <= 2*k*w, |d2|, |d3| <= w, so phih - p*theta = p*theta*((1 + d1)*(1 + d2)*(1 + d3) - 1) and
   |(1 + d1)(1 + d2)(1 + d3) - 1| <= (1 + 2*k*w)*(1 + w)^2 - 1 = eta. In the absolute form used here:
   |ph*th - p*theta| <= |p|*|th - theta| + |ph - p|*|theta| + |ph - p|*|th - theta|
                     <= ((1 + w)*(1 + 2*k*w) - 1)*|p*theta|,
   |phih - ph*th|    <= w*|ph*th| <= w*(1 + w)*(1 + 2*k*w)*|p*theta|,
   and the two sum to ((1 + w)^2*(1 + 2*k*w) - 1)*|p*theta|. No condition on k*w is needed. *)
Theorem f32_angle_error : forall k w theta th p ph phih,
  0 <= k -> 0 <= w ->
  Rabs (th - theta) <= 2 * k * w * Rabs theta ->
  Rabs (ph - p) <= w * Rabs p ->
  Rabs (phih - ph * th) <= w * Rabs (ph * th) ->
  Rabs (phih - p * theta) <= ((1 + w) * (1 + w) * (1 + 2 * k * w) - 1) * Rabs (p * theta).
Proof.
  intros k w theta th p ph phih Hk Hw Hth Hph Hphih.
  set (e1 := th - theta). set (e2 := ph - p). set (P := Rabs (p * theta)).
  fold e1 in Hth. fold e2 in Hph.
  pose proof (Rabs_pos p) as Pp. pose proof (Rabs_pos theta) as Pt.
  pose proof (Rabs_pos e1) as P1. pose proof (Rabs_pos e2) as P2.
  assert (HP : P = Rabs p * Rabs theta) by (unfold P; apply Rabs_mult).
  assert (Pk : 0 <= 2 * k * w) by fast_nra.
  (* |ph*th - p*theta| <= ((1 + w)*(1 + 2*k*w) - 1)*P *)
  assert (Hprod : Rabs (ph * th - p * theta) <= ((1 + w) * (1 + 2 * k * w) - 1) * P).
  { replace (ph * th - p * theta) with (p * e1 + e2 * theta + e2 * e1) by (unfold e1, e2; ring).
    eapply Rle_trans; [apply Rabs_triang |].
    eapply Rle_trans; [apply Rplus_le_compat_r; apply Rabs_triang |].
    rewrite !Rabs_mult.
    assert (A1 : Rabs p * Rabs e1 <= Rabs p * (2 * k * w * Rabs theta)) by (apply Rmult_le_compat_l; lra).
    assert (A2 : Rabs e2 * Rabs theta <= w * Rabs p * Rabs theta) by (apply Rmult_le_compat_r; lra).
    assert (A3 : Rabs e2 * Rabs e1 <= (w * Rabs p) * (2 * k * w * Rabs theta))
      by (apply Rmult_le_compat; lra).
    assert (K : ((1 + w) * (1 + 2 * k * w) - 1) * P
                = Rabs p * (2 * k * w * Rabs theta) + w * Rabs p * Rabs theta
                  + (w * Rabs p) * (2 * k * w * Rabs theta)) by (rewrite HP; ring).
    lra. }
  assert (Hsize : Rabs (ph * th) <= (1 + w) * (1 + 2 * k * w) * P).
  { replace (ph * th) with (p * theta + (ph * th - p * theta)) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. fold P. lra. }
  assert (Hround : Rabs (phih - ph * th) <= w * ((1 + w) * (1 + 2 * k * w) * P)).
  { eapply Rle_trans; [exact Hphih |]. apply Rmult_le_compat_l; lra. }
  replace (phih - p * theta) with ((phih - ph * th) + (ph * th - p * theta)) by ring.
  eapply Rle_trans; [apply Rabs_triang |].
  assert (K : ((1 + w) * (1 + w) * (1 + 2 * k * w) - 1) * P
              = w * ((1 + w) * (1 + 2 * k * w) * P) + ((1 + w) * (1 + 2 * k * w) - 1) * P) by ring.
  lra.
Qed.

(* The rotation is Lipschitz in its angle, with constant rho = |(x, y)|. By the sum-to-product
   formulas (form2, form4), with h = sin((a - b)/2) and m = (a + b)/2:
     x*(cos a - cos b) - y*(sin a - sin b) = -2*h*(x*sin m + y*cos m),
     x*(sin a - sin b) + y*(cos a - cos b) =  2*h*(x*cos m - y*sin m);
   2*|h| <= |a - b| (|sin t| <= |t|, half_difference_bound of CosSinTaylor.v) and both brackets are
   at most rho (Cauchy-Schwarz, cos^2 + sin^2 = 1, exact_component_le_rho). *)
Theorem rotation_lipschitz : forall x y a b rho,
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs ((x * cos a - y * sin a) - (x * cos b - y * sin b)) <= Rabs (a - b) * rho /\
  Rabs ((x * sin a + y * cos a) - (x * sin b + y * cos b)) <= Rabs (a - b) * rho.
Proof.
  intros x y a b rho Hr Hrho.
  set (h := sin ((a - b) / 2)). set (m := (a + b) / 2).
  assert (H2h : 2 * Rabs h <= Rabs (a - b)).
  { pose proof (CosSinTaylor.half_difference_bound a b 1 ltac:(rewrite Rabs_R1; lra)) as K.
    rewrite Rabs_R1, Rmult_1_r in K. exact K. }
  pose proof (Rabs_pos h) as Ph.
  assert (Hunit1 : sin m * sin m + cos m * cos m = 1) by (pose proof (sin2_cos2 m); unfold Rsqr in *; lra).
  assert (Hunit2 : cos m * cos m + (- sin m) * (- sin m) = 1) by (pose proof (sin2_cos2 m); unfold Rsqr in *; lra).
  pose proof (exact_component_le_rho x y (sin m) (cos m) rho Hunit1 Hr Hrho) as W1.
  pose proof (exact_component_le_rho x y (cos m) (- sin m) rho Hunit2 Hr Hrho) as W2.
  assert (Hc : cos a - cos b = -2 * h * sin m) by (unfold h, m; rewrite form2; ring).
  assert (Hs : sin a - sin b = 2 * cos m * h) by (unfold h, m; rewrite form4; ring).
  split.
  - replace ((x * cos a - y * sin a) - (x * cos b - y * sin b))
      with (-2 * h * (x * sin m + y * cos m))
      by (replace (x * cos a - y * sin a - (x * cos b - y * sin b))
            with (x * (cos a - cos b) - y * (sin a - sin b)) by ring; rewrite Hc, Hs; ring).
    rewrite !Rabs_mult. replace (Rabs (-2)) with 2 by (rewrite Rabs_left; lra).
    assert (2 * Rabs h * Rabs (x * sin m + y * cos m) <= 2 * Rabs h * rho)
      by (apply Rmult_le_compat_l; lra).
    assert (2 * Rabs h * rho <= Rabs (a - b) * rho) by (apply Rmult_le_compat_r; lra).
    lra.
  - replace ((x * sin a + y * cos a) - (x * sin b + y * cos b))
      with (2 * h * (x * cos m + y * - sin m))
      by (replace (x * sin a + y * cos a - (x * sin b + y * cos b))
            with (x * (sin a - sin b) + y * (cos a - cos b)) by ring; rewrite Hc, Hs; ring).
    rewrite !Rabs_mult. replace (Rabs 2) with 2 by (rewrite Rabs_pos_eq; lra).
    assert (2 * Rabs h * Rabs (x * cos m + y * - sin m) <= 2 * Rabs h * rho)
      by (apply Rmult_le_compat_l; lra).
    assert (2 * Rabs h * rho <= Rabs (a - b) * rho) by (apply Rmult_le_compat_r; lra).
    lra.
Qed.

(* The gate's default for the f32-angle model: the careful rotation of gate_exact_default by the
   implementation's own angle phih (C = cos phih, S = sin phih), against the exact rotation by
   p*theta. Triangle inequality: within 4*u*rho + 3*mu of the rotation by phih (gate_exact_default),
   which is within |phih - p*theta|*rho <= eta*|p*theta|*rho of the rotation by p*theta
   (rotation_lipschitz, f32_angle_error). In units of u*rho: e <= 4 + |phi|*eta/u, phi = p*theta. *)
Theorem gate_f32_angle_default : forall k w theta th p ph phih u mu x y c s p1 p2 p3 p4 a b rho,
  0 <= k -> 0 <= w ->
  Rabs (th - theta) <= 2 * k * w * Rabs theta ->
  Rabs (ph - p) <= w * Rabs p ->
  Rabs (phih - ph * th) <= w * Rabs (ph * th) ->
  0 <= u <= / 256 -> 0 <= mu ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - cos phih) <= u -> Rabs (s - sin phih) <= u ->
  rounds u mu (x * c) p1 -> rounds u mu (y * s) p2 -> rounds u mu (p1 - p2) a ->
  rounds u mu (x * s) p3 -> rounds u mu (y * c) p4 -> rounds u mu (p3 + p4) b ->
  Rabs (a - (x * cos (p * theta) - y * sin (p * theta)))
    <= 4 * u * rho + ((1 + w) * (1 + w) * (1 + 2 * k * w) - 1) * Rabs (p * theta) * rho + 3 * mu /\
  Rabs (b - (x * sin (p * theta) + y * cos (p * theta)))
    <= 4 * u * rho + ((1 + w) * (1 + w) * (1 + 2 * k * w) - 1) * Rabs (p * theta) * rho + 3 * mu.
Proof.
  intros k w theta th p ph phih u mu x y c s p1 p2 p3 p4 a b rho Hk Hw Hth Hph Hphih
    Hu Hmu Hr Hrho Hc Hs H1 H2 Ha H3 H4 Hb.
  set (eta := (1 + w) * (1 + w) * (1 + 2 * k * w) - 1).
  assert (Hn : cos phih * cos phih + sin phih * sin phih = 1)
    by (pose proof (sin2_cos2 phih); unfold Rsqr in *; lra).
  destruct (gate_exact_default u mu x y c s (cos phih) (sin phih) p1 p2 p3 p4 a b rho
              Hu Hmu Hn Hr Hrho Hc Hs H1 H2 Ha H3 H4 Hb) as [Ka Kb].
  pose proof (f32_angle_error k w theta th p ph phih Hk Hw Hth Hph Hphih) as Hang. fold eta in Hang.
  destruct (rotation_lipschitz x y phih (p * theta) rho Hr Hrho) as [La Lb].
  assert (Hl : Rabs (phih - p * theta) * rho <= eta * Rabs (p * theta) * rho)
    by (apply Rmult_le_compat_r; lra).
  split.
  - replace (a - (x * cos (p * theta) - y * sin (p * theta)))
      with ((a - (x * cos phih - y * sin phih))
            + ((x * cos phih - y * sin phih) - (x * cos (p * theta) - y * sin (p * theta)))) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. lra.
  - replace (b - (x * sin (p * theta) + y * cos (p * theta)))
      with ((b - (x * sin phih + y * cos phih))
            + ((x * sin phih + y * cos phih) - (x * sin (p * theta) + y * cos (p * theta)))) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. lra.
Qed.

(* The same with the attention factor scaled in the dtype (gate_exact_scaled_default): within
   6*u*G*rho + 3*mu of G times the rotation by phih, which is within G*eta*|p*theta|*rho of G times
   the rotation by p*theta. In units of u*rho*G: e <= 6 + |phi|*eta/u. *)
Theorem gate_f32_angle_scaled_default :
  forall k w theta th p ph phih u mu G gh x y c s c2 s2 p1 p2 p3 p4 a b rho,
  0 <= k -> 0 <= w ->
  Rabs (th - theta) <= 2 * k * w * Rabs theta ->
  Rabs (ph - p) <= w * Rabs p ->
  Rabs (phih - ph * th) <= w * Rabs (ph * th) ->
  0 <= u <= / 256 -> 0 <= mu <= u / 16384 -> 1 <= G -> Rabs (gh - G) <= u * G ->
  0 <= rho -> rho * rho = x * x + y * y ->
  Rabs (c - cos phih) <= u -> Rabs (s - sin phih) <= u ->
  rounds u mu (gh * c) c2 -> rounds u mu (gh * s) s2 ->
  rounds u mu (x * c2) p1 -> rounds u mu (y * s2) p2 -> rounds u mu (p1 - p2) a ->
  rounds u mu (x * s2) p3 -> rounds u mu (y * c2) p4 -> rounds u mu (p3 + p4) b ->
  Rabs (a - G * (x * cos (p * theta) - y * sin (p * theta)))
    <= 6 * u * G * rho + ((1 + w) * (1 + w) * (1 + 2 * k * w) - 1) * Rabs (p * theta) * G * rho + 3 * mu /\
  Rabs (b - G * (x * sin (p * theta) + y * cos (p * theta)))
    <= 6 * u * G * rho + ((1 + w) * (1 + w) * (1 + 2 * k * w) - 1) * Rabs (p * theta) * G * rho + 3 * mu.
Proof.
  intros k w theta th p ph phih u mu G gh x y c s c2 s2 p1 p2 p3 p4 a b rho Hk Hw Hth Hph Hphih
    Hu Hmu HG Hgh Hr Hrho Hc Hs Hc2 Hs2 H1 H2 Ha H3 H4 Hb.
  set (eta := (1 + w) * (1 + w) * (1 + 2 * k * w) - 1).
  assert (Hn : cos phih * cos phih + sin phih * sin phih = 1)
    by (pose proof (sin2_cos2 phih); unfold Rsqr in *; lra).
  destruct (gate_exact_scaled_default u mu G gh x y c s (cos phih) (sin phih) c2 s2 p1 p2 p3 p4 a b rho
              Hu Hmu HG Hgh Hn Hr Hrho Hc Hs Hc2 Hs2 H1 H2 Ha H3 H4 Hb) as [Ka Kb].
  pose proof (f32_angle_error k w theta th p ph phih Hk Hw Hth Hph Hphih) as Hang. fold eta in Hang.
  destruct (rotation_lipschitz x y phih (p * theta) rho Hr Hrho) as [La Lb].
  assert (Hl : Rabs (phih - p * theta) * rho <= eta * Rabs (p * theta) * rho)
    by (apply Rmult_le_compat_r; lra).
  assert (HGa : G * (Rabs (phih - p * theta) * rho) <= G * (eta * Rabs (p * theta) * rho))
    by (apply Rmult_le_compat_l; lra).
  assert (KK : G * (eta * Rabs (p * theta) * rho) = eta * Rabs (p * theta) * G * rho) by ring.
  assert (HGabs : forall v, Rabs (G * v) = G * Rabs v)
    by (intro v; rewrite Rabs_mult, (Rabs_pos_eq G) by lra; reflexivity).
  assert (Ka' : Rabs (G * (x * cos phih - y * sin phih) - G * (x * cos (p * theta) - y * sin (p * theta)))
                <= eta * Rabs (p * theta) * G * rho).
  { replace (G * (x * cos phih - y * sin phih) - G * (x * cos (p * theta) - y * sin (p * theta)))
      with (G * ((x * cos phih - y * sin phih) - (x * cos (p * theta) - y * sin (p * theta)))) by ring.
    rewrite HGabs.
    assert (G * Rabs ((x * cos phih - y * sin phih) - (x * cos (p * theta) - y * sin (p * theta)))
            <= G * (Rabs (phih - p * theta) * rho)) by (apply Rmult_le_compat_l; lra).
    lra. }
  assert (Kb' : Rabs (G * (x * sin phih + y * cos phih) - G * (x * sin (p * theta) + y * cos (p * theta)))
                <= eta * Rabs (p * theta) * G * rho).
  { replace (G * (x * sin phih + y * cos phih) - G * (x * sin (p * theta) + y * cos (p * theta)))
      with (G * ((x * sin phih + y * cos phih) - (x * sin (p * theta) + y * cos (p * theta)))) by ring.
    rewrite HGabs.
    assert (G * Rabs ((x * sin phih + y * cos phih) - (x * sin (p * theta) + y * cos (p * theta)))
            <= G * (Rabs (phih - p * theta) * rho)) by (apply Rmult_le_compat_l; lra).
    lra. }
  split.
  - replace (a - G * (x * cos (p * theta) - y * sin (p * theta)))
      with ((a - G * (x * cos phih - y * sin phih))
            + (G * (x * cos phih - y * sin phih) - G * (x * cos (p * theta) - y * sin (p * theta)))) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. lra.
  - replace (b - G * (x * sin (p * theta) + y * cos (p * theta)))
      with ((b - G * (x * sin phih + y * cos phih))
            + (G * (x * sin phih + y * cos phih) - G * (x * sin (p * theta) + y * cos (p * theta)))) by ring.
    eapply Rle_trans; [apply Rabs_triang |]. lra.
Qed.

(* The screen (judge/pair_rule.cpp screen_pair): a double-precision look at a pair of 32-bit or
   narrower data, sure only where judge_pair's verdict cannot differ, so that the comparer skips
   judge_pair for it (judge/group.cpp). With e = D/(u*rho*max(1,|g|)) for judge_pair's exact
   value, gappa/screen.g proves the premises below: the screen's e_d = k*e + w, judge_pair's long
   double quotient r = kl*e + wl (its e is ve = RN64(r): |ve - r| <= 2^-52*r + t, the binary64
   rounding, t its 2^-1075 below the normal range), and e_high, e_low within 2^-51 of their
   expressions in e_d (e_low <= 0 when e_d <= 2^-20). Then e_low <= ve <= e_high: a pair whose
   e_high is within the tolerance passes it in judge_pair, and one whose e_low exceeds it fails it.
   The last conclusion, el < r, is the other half of a sure failure: judge_pair also passes a pair
   whose difference is within tol*unit plus the underflow allowance uf, in long double; the screen
   requires e_low > tol + X with X = RN(RN(uf/unit_d)*(1 + 2^-30)) >= uf/unit_l (by hand: X >=
   uf/unit_d*(1 + 2^-30)*(1 - 2^-52)^2, unit_d within 2^-50 and unit_l within 2^-61 of unit by
   gappa/screen.g), so difference = r*unit_l > tol*unit_l + uf.
   The powers of two are written out (lra reads no powers): 2^200, 2^60, 2^39, 2^52, 2^20, 2^30,
   2^51 here; 2^127, 2^52, 2^50 in screen_abs_enclosure. *)
Lemma screen_between : forall x a, Rabs x <= a -> - a <= x <= a.
Proof. intros x a H. unfold Rabs in H. destruct (Rcase_abs x); lra. Qed.

Theorem screen_enclosure : forall e k w ed eh el kl wl r ve t,
  0 <= e -> 0 <= r -> 0 <= ve -> 0 <= t <= / 1606938044258990275541962092341162602522202993782792835301376 ->
  Rabs (k - 1) <= 12 / 10000000000000000 -> Rabs w <= 187 / 100000000000 -> ed = k * e + w ->
  Rabs (kl - 1) <= / 1152921504606846976 -> Rabs wl <= / 549755813888 -> r = kl * e + wl ->
  Rabs (ve - r) <= r / 4503599627370496 + t ->
  (ed + / 1048576) * (1 + / 1073741824) * (1 - / 2251799813685248) <= eh ->
  (el <= 0 \/ el <= (ed - / 1048576) * (1 - / 1073741824) * (1 + / 2251799813685248)) ->
  el <= ve /\ ve <= eh /\ (0 < el -> el < r).
Proof.
  intros e k w ed eh el kl wl r ve t He Hr Hve Ht Hk Hw Hed Hkl Hwl Hrr Hver Heh Hel.
  assert (Hke : Rabs (k * e - e) <= 12 / 10000000000000000 * e).
  { replace (k * e - e) with ((k - 1) * e) by ring. rewrite Rabs_mult, (Rabs_pos_eq e) by lra.
    apply Rmult_le_compat_r; lra. }
  assert (Hkle : Rabs (kl * e - e) <= / 1152921504606846976 * e).
  { replace (kl * e - e) with ((kl - 1) * e) by ring. rewrite Rabs_mult, (Rabs_pos_eq e) by lra.
    apply Rmult_le_compat_r; lra. }
  apply screen_between in Hke. apply screen_between in Hkle. apply screen_between in Hver.
  apply screen_between in Hw. apply screen_between in Hwl.
  destruct Hke, Hkle, Hver, Hw, Hwl.
  split; [| split].
  - destruct Hel as [Hel | Hel]; lra.
  - lra.
  - intro Hpos. destruct Hel as [Hel | Hel]; lra.
Qed.

(* The screen's abs_high against judge_pair's abs = RN64(difference): |abs - D| <= 2^-52*D + t;
   the screen's difference d = (D + eta)(1 + eps), |eta| <= 2^-53*sr + 2^-1075, sr = rho*max(1,|g|)
   >= 2^-127 (the screen's domain); abs_high within 2^-50 of its expression (gappa/screen.g). *)
Theorem screen_abs_enclosure : forall D d sr vabs abs_high t,
  0 <= D -> / 170141183460469231731687303715884105728 <= sr -> 0 <= t <= / 1606938044258990275541962092341162602522202993782792835301376 ->
  Rabs (vabs - D) <= D / 4503599627370496 + t ->
  Rabs (d - D) <= D / 4503599627370496 + sr / 4503599627370496 + t ->
  (d + / 1125899906842624 * (sr + d)) * (1 + / 1125899906842624) * (1 - / 1125899906842624) <= abs_high ->
  vabs <= abs_high.
Proof.
  intros D d sr vabs abs_high t HD Hsr Ht Hv Hd Hh.
  apply screen_between in Hv. apply screen_between in Hd. destruct Hv, Hd.
  lra.
Qed.
