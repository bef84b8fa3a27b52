// f64 data on the fly, correctly rounded (optimized/README.md "Correct rounding, f64"):
// per token a double-double cos/sin table (shared by every head of q and k), then every pair
// rotated in double-double and rounded once, kept when the rounding test decides it, else redone
// by exact_pair (optimized/exact.h). Included by kernel-inl.h inside each kernel's namespace after
// its rounding test and slow path (no include guard, no #include). Error budget, MACHINE-CHECKED
// by Gappa on the operations as written (proofs/formal/gappa/f64_*.g; constants in f64_table.h):
//  1. Phase: P = p·step_j mod 2^128 exact (angle-inl.h phase_of); the angle's error is step 1's of
//     error_bounds.h, |p|·(2π·2^-129 + θ'_j·2^-120) ≤ 2^40·(2^-126 + θ'_max·2^-120) (plan.cpp).
//  2. Reduction (scalar integer code, f64_reduce): the nearest grid point g of 1024 per turn and
//     the remainder t = R·2π·2^-128, R ∈ [−2^117, 2^117) units, |t| ≤ 2π·2^-11 < 0.0030680, as
//     th + tl: |th + tl − t| ≤ 2^-112 (f64_reduction.g).
//  3. cos t, sin t by Taylor polynomials of degree 8/9 (f64_cos_sin.g with the method error, its
//     premises on sin and cos in proofs/formal/coq/F64CosSin.v: within 5e-27 and 4.2e-24), the grid point's double-double cos/sin (f64_table.h,
//     ≤ 2^-106), angle addition with exact products (TwoProd by FMA) and exact sums (TwoSum) for
//     the large terms, the small ones summed in binary64: |ĉ − cos φ|, |ŝ − sin φ| ≤ 4.7e-24 <
//     kF64TableError = 2^-75 beyond step 1 (f64_table.g); with A ≠ 1 the pair times A = A_hi + A_lo
//     (one exact product, ≤ 2^-103·|A| more, inside the margin).
//  4. Rotation: a = x·c − y·s with TwoProd for x·c_hi and y·s_hi, TwoSum of the two, the rest in
//     binary64 (a_hi + a_lo), likewise b: |a_hi + a_lo − (x·ĉ − y·ŝ)| ≤ 2^-102·(|x| + |y|)·S
//     (f64_rotation.g; kF64RotationError = 2^-100), subnormal terms inside E's floor.
//  5. Rounding test: lo = RN(a_hi + RN(a_lo − E)), hi = RN(a_hi + RN(a_lo + E)),
//     E = RN(fma(K, RN(|x| + |y|), F)), K = decide_k_f64 ≥ (kF64TableError + step 1 +
//     kF64RotationError)·S (rounded up), F = 2^-1070: a_hi + RN(a_lo ∓ E) lie below / above the
//     exact value (f64_rotation.g), so, RN being monotonic, lo == hi is the correctly rounded
//     value. Otherwise — about 2E/ulp of the outputs, |x| + |y| ≥ 2^1020/S (overflow), non-finite
//     inputs, exact zeros — exact_pair.

// Step 2 for pair j (one lane, scalar integer code; the phase from step 1): the phase's nearest grid point g and the
// remainder as th + tl into work.r_hi / r_lo; the grid point's cos/sin (negated sin for the inverse
// direction, which also negates t: the angle is −φ) into work.cos_j, cos_lo, sin_j, sin_lo.
inline void f64_reduce(const PlanView& plan, Phase phase, int j, const Workspace& work) {
  // + half a grid step (2^117 = 2^53 in the high word): g = the top 10 bits, R = the rest − 2^117
  const std::uint64_t biased = phase.high + (std::uint64_t{1} << 53);
  const std::uint64_t g = biased >> 54;
  const std::int64_t r_high = static_cast<std::int64_t>(biased & ((std::uint64_t{1} << 54) - 1)) - (std::int64_t{1} << 53);
  // 2π·2^-64 and 2π·2^-128 as double-doubles from the plan's 2π·2^-65 (power-of-two scalings: exact)
  const double two_pi_hi = 2.0 * plan.radians_per_unit_hi;
  const double two_pi_lo = 2.0 * plan.radians_per_unit_lo;
  const double high = static_cast<double>(r_high);  // exact: |r_high| ≤ 2^53
  // R's low word without its 11 low bits (< 2^11 units), converted exactly (a signed conversion: one
  // instruction on every ISA, where an unsigned one branches on AVX2)
  const double low = static_cast<double>(static_cast<std::int64_t>(phase.low >> 11)) * 0x1p11;
  double th = high * two_pi_hi;
  double tl = ::fma(high, two_pi_hi, -th) + ::fma(high, two_pi_lo, low * (two_pi_hi * 0x1p-64));
  const double* grid = plan.f64_grid + 4 * g;
  double sh = grid[2];
  double sl = grid[3];
  if (plan.inverse) {
    sh = -sh;
    sl = -sl;
    th = -th;
    tl = -tl;
  }
  work.r_hi[j] = th;
  work.r_lo[j] = tl;
  work.cos_j[j] = grid[0];
  work.cos_lo[j] = grid[1];
  work.sin_j[j] = sh;
  work.sin_lo[j] = sl;
}

// s + e = a + b exactly (TwoSum: Knuth; any magnitudes, no overflow).
template <class M>
inline void f64_two_sum(typename M::V a, typename M::V b, typename M::V& s, typename M::V& e) {
  s = M::add(a, b);
  const typename M::V bv = M::sub(s, a);
  e = M::add(M::sub(a, M::sub(s, bv)), M::sub(b, bv));
}

// One output of step 3 as a double-double hi + lo: B·cos t + O·m, with B = b_hi + b_lo the grid
// point's cosine (sine) and O = o_hi + o_lo its sine (cosine), cos t = 1 + half_z + cos_low and
// m = m1 + m2 (−sin t for the cosine, sin t for the sine): b_hi + o_hi·m1 + b_hi·half_z by TwoProd
// and TwoSum, the rest in binary64 (the terms f64_cos_sin.g bounds, in its order).
template <class M>
inline void f64_add_angle(typename M::V b_hi, typename M::V b_lo, typename M::V o_hi, typename M::V o_lo, typename M::V m1,
                          typename M::V m2, typename M::V half_z, typename M::V cos_low, typename M::V& hi, typename M::V& lo) {
  using V = typename M::V;
  const V p1 = M::mul(o_hi, m1);
  const V p1e = M::fmsub(o_hi, m1, p1);
  const V p2 = M::mul(b_hi, half_z);
  const V p2e = M::fmsub(b_hi, half_z, p2);
  V h;
  V e1;
  V h2;
  V e2;
  f64_two_sum<M>(b_hi, p1, h, e1);
  f64_two_sum<M>(h, p2, h2, e2);
  V acc = M::add(M::add(p1e, p2e), M::add(e1, e2));
  acc = M::add(acc, b_lo);
  acc = M::fmadd(b_lo, half_z, acc);
  acc = M::fmadd(o_lo, m1, acc);
  acc = M::fmadd(b_hi, cos_low, acc);
  acc = M::fmadd(o_lo, m2, acc);
  acc = M::fmadd(o_hi, m2, acc);
  f64_two_sum<M>(h2, acc, hi, lo);
}

// Step 3 for Ops::lanes pairs from j: cos(α + t), sin(α + t) from the grid point's (C, S) =
// (cos α, sin α) and t, as double-doubles, times A; in place over the work arrays.
//   cos(α + t) = C·cos t − S·sin t,  sin(α + t) = S·cos t + C·sin t,
//   sin t = t1 + (u·(1 − z/2) + t1·z·P(z)),  cos t = 1 − z/2 + (z²·Q(z) − (z_e + 2·t1·u)/2),
// with t1 + u = th + tl (Fast2Sum), z + z_e = t1² (TwoProd); the products C·(z/2) and S·t1 (C·t1 and
// S·(z/2)) exact by TwoProd and added to C (S) by TwoSum; the rest, below 2^-27, in binary64.
template <class M>
inline void f64_cos_sin_lanes(const PlanView& plan, const Workspace& work, int j) {
  using V = typename M::V;
  const V th = M::load(work.r_hi + j);
  const V tl = M::load(work.r_lo + j);
  const V t1 = M::add(th, tl);
  const V u = M::sub(tl, M::sub(t1, th));
  const V z = M::mul(t1, t1);
  const V z_e = M::fmsub(t1, t1, z);
  V ps = M::fmadd(M::set(1.0 / 362880.0), z, M::set(-1.0 / 5040.0));
  ps = M::fmadd(ps, z, M::set(1.0 / 120.0));
  ps = M::fmadd(ps, z, M::set(-1.0 / 6.0));
  const V half_z = M::mul(z, M::set(-0.5));  // −z/2, exact
  // sin t − t1 = u·(1 − t1²/2) + t1·z·P(z) (the u terms of t³/6 and beyond: ≤ 2^-110)
  const V sin_low = M::fmadd(M::mul(t1, z), ps, M::fmadd(half_z, u, u));
  V pc = M::fmadd(M::set(1.0 / 40320.0), z, M::set(-1.0 / 720.0));
  pc = M::fmadd(pc, z, M::set(1.0 / 24.0));
  const V cos_low = M::fmadd(M::mul(z, z), pc, M::mul(M::set(-0.5), M::fmadd(M::add(t1, t1), u, z_e)));
  const V zero = M::set(0.0);
  const V neg_t1 = M::sub(zero, t1);
  const V neg_sin_low = M::sub(zero, sin_low);
  const V ch = M::load(work.cos_j + j);
  const V cl = M::load(work.cos_lo + j);
  const V sh = M::load(work.sin_j + j);
  const V sl = M::load(work.sin_lo + j);
  V c_hi;
  V c_lo;
  f64_add_angle<M>(ch, cl, sh, sl, neg_t1, neg_sin_low, half_z, cos_low, c_hi, c_lo);
  V s_hi;
  V s_lo;
  f64_add_angle<M>(sh, sl, ch, cl, t1, sin_low, half_z, cos_low, s_hi, s_lo);
  if (!plan.attention_is_one) {  // (hi + lo)·(A_hi + A_lo): hi·A_hi exact by TwoProd
    const V a_hi = M::set(plan.attention);
    const V a_lo = M::set(plan.attention_lo);
    const V c_prod = M::mul(c_hi, a_hi);
    c_lo = M::fmadd(c_lo, a_hi, M::fmadd(c_hi, a_lo, M::fmsub(c_hi, a_hi, c_prod)));
    c_hi = c_prod;
    const V s_prod = M::mul(s_hi, a_hi);
    s_lo = M::fmadd(s_lo, a_hi, M::fmadd(s_hi, a_lo, M::fmsub(s_hi, a_hi, s_prod)));
    s_hi = s_prod;
  }
  M::store(work.cos_j + j, c_hi);
  M::store(work.cos_lo + j, c_lo);
  M::store(work.sin_j + j, s_hi);
  M::store(work.sin_lo + j, s_lo);
}

// The double-double table of one token: step 2 pair by pair, step 3 Ops::lanes pairs at a time.
// Step 1 by token_phases (one 128-bit addition per pair after a token at the previous position)
// for a single-component position, else by phase_of.
inline void f64_token_table(const PlanView& plan, const std::int64_t* position_row, const Workspace& work) {
  const int pairs = plan.pairs;
  if (plan.components == 1) {
    token_phases(plan, position_row[0], work);
    for (int j = 0; j < pairs; ++j) f64_reduce(plan, Phase{work.words[j], work.phase_low[j]}, j, work);
  } else {
    for (int j = 0; j < pairs; ++j) {
      f64_reduce(plan, phase_of(position_row[plan.component[j]], plan.step_hi[j], plan.step_lo[j]), j, work);
    }
  }
  int j = 0;
  for (; j + Ops::lanes <= pairs; j += Ops::lanes) f64_cos_sin_lanes<Ops>(plan, work, j);
  for (; j < pairs; ++j) f64_cos_sin_lanes<ScalarOps>(plan, work, j);
}

// s + e = a − b exactly (TwoSum of a and −b, the negation folded in).
template <class M>
inline void f64_two_diff(typename M::V a, typename M::V b, typename M::V& s, typename M::V& e) {
  s = M::sub(a, b);
  const typename M::V bv = M::sub(s, a);
  e = M::sub(M::sub(a, M::sub(s, bv)), M::add(b, bv));
}

// Steps 4–5 for lanes of O: the outputs' lo ends (the stored values) and the undecided lanes.
// The test's constants: K (PlanView::decide_k_f64), F (decide_floor64), the |x| + |y| limit
// (f64_sum_limit), passed as values so that the loops keep them in registers.
struct F64Test {
  double k;
  double floor;
  double limit;
};
template <class O>
[[gnu::always_inline]] inline int f64_rotate(const F64Test& test, typename O::V x, typename O::V y, typename O::V ch, typename O::V cl,
                                             typename O::V sh, typename O::V sl, typename O::V& a, typename O::V& b) {
  using V = typename O::V;
  // a = x·c − y·s = (p − q) + (pe + x·cl) − (qe + y·sl), p + pe = x·ch and q + qe = y·sh exactly
  const V p = O::mul(x, ch);
  const V q = O::mul(y, sh);
  V a_hi;
  V a_e;
  f64_two_diff<O>(p, q, a_hi, a_e);
  const V a_lo = O::add(O::sub(O::fmadd(x, cl, O::fmsub(x, ch, p)), O::fmadd(y, sl, O::fmsub(y, sh, q))), a_e);
  // b = x·s + y·c likewise
  const V r = O::mul(x, sh);
  const V w = O::mul(y, ch);
  V b_hi;
  V b_e;
  f64_two_sum<O>(r, w, b_hi, b_e);
  const V b_lo = O::add(O::add(O::fmadd(x, sl, O::fmsub(x, sh, r)), O::fmadd(y, cl, O::fmsub(y, ch, w))), b_e);
  const V sum = O::add(O::abs(x), O::abs(y));
  const V e = O::fmadd(sum, O::set(test.k), O::set(test.floor));
  a = O::add(a_hi, O::sub(a_lo, e));
  b = O::add(b_hi, O::sub(b_lo, e));
  return O::undecided_f64(a, O::add(a_hi, O::add(a_lo, e)), b, O::add(b_hi, O::add(b_lo, e)), sum, O::set(test.limit));
}

// One head of f64 data: Ops::lanes pairs at a time, then a scalar tail; the undecided pairs by
// settle_pairs (exact_pair); pass-through dims copied.
// kStream: non-temporal stores (CallView::streaming_stores).
template <LayoutCode kLayout, bool kStream>
inline void f64_rotate_head(const Settle& st, const double* in, double* out, const Workspace& work) {
  const PlanView& plan = *st.plan;
  const int pairs = plan.pairs;
  // locals, not loads through plan and work in the loop: the vector stores may alias them
  const F64Test test{plan.decide_k_f64, plan.decide_floor64, plan.f64_sum_limit};
  const double* const cos_hi = work.cos_j;
  const double* const cos_lo = work.cos_lo;
  const double* const sin_hi = work.sin_j;
  const double* const sin_lo = work.sin_lo;
  const auto body = [&](auto ops, int j) {
    using O = decltype(ops);
    using V = typename O::V;
    V x;
    V y;
    if constexpr (kLayout == LayoutCode::half) {
      x = O::load(in + j);
      y = O::load(in + pairs + j);
    } else {
      O::load_pairs(in + 2 * j, x, y);
    }
    V a;
    V b;
    const int failed = f64_rotate<O>(test, x, y, O::load(cos_hi + j), O::load(cos_lo + j), O::load(sin_hi + j), O::load(sin_lo + j), a, b);
    settle_binary64<O, double>(st, j, failed, x, y, a, b);  // redone before the store: each output written once
    if constexpr (kLayout == LayoutCode::half) {
      put<O, kStream>(out + j, a);
      put<O, kStream>(out + pairs + j, b);
    } else {
      put_pairs<O, kStream>(out + 2 * j, a, b);
    }
  };
  int j = 0;
  for (; j + Ops::lanes <= pairs; j += Ops::lanes) body(Ops{}, j);
  for (; j < pairs; ++j) body(ScalarOps{}, j);
  if (out != in && plan.rotary_dim < plan.head_dim) {  // pass-through dims: copied bit for bit
    std::memcpy(out + plan.rotary_dim, in + plan.rotary_dim, static_cast<std::size_t>(plan.head_dim - plan.rotary_dim) * sizeof(double));
  }
}

template <LayoutCode kLayout, bool kStream>
inline void f64_rotate_heads(const Settle& st, const TensorView& tensor, std::int64_t token, bool prefetch_next, const Workspace& work) {
  const double* in = static_cast<const double*>(tensor.input) + token * tensor.input_token_stride;
  double* out = static_cast<double*>(tensor.output) + token * tensor.output_token_stride;
  for (std::int64_t h = 0; h < tensor.heads; ++h) {
    const double* head_in = in + h * tensor.input_head_stride;
    if (prefetch_next) prefetch_next_token(tensor, head_in, st.plan->head_dim);
    f64_rotate_head<kLayout, kStream>(st, head_in, out + h * tensor.output_head_stride, work);
  }
}

// f64 data on the fly (PlanView::correctly_rounded): per token the double-double table, then every
// head of q and k.
template <LayoutCode kLayout, bool kStream>
void process_f64(const CallView& call, std::int64_t token_begin, std::int64_t token_end, const Workspace& work) {
  work.memo->valid = false;  // work.words: the phases of token_phases from here on
  for (std::int64_t t = token_begin; t < token_end; ++t) {
    const std::int64_t* position_row = call.positions + t * call.plan.components;
    f64_token_table(call.plan, position_row, work);
    const bool prefetch_next = t + 1 < token_end;
    const Settle st{&call.plan, position_row, work.cos_j, work.sin_j};
    f64_rotate_heads<kLayout, kStream>(st, call.q, t, prefetch_next, work);
    if (call.k.heads > 0) f64_rotate_heads<kLayout, kStream>(st, call.k, t, prefetch_next, work);
  }
}
