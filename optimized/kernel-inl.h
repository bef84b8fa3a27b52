// THE RoPE kernel, written once (google/highway's pattern): each isa/kernel_<isa>.cpp includes
// the standard and intrinsic headers, opens its own namespace, includes convert-inl.h,
// ops_scalar-inl.h, its ops_<isa>-inl.h, defines `using Ops = <its binary64 ops>;` and
// `using Ops32 = <its binary32 ops>;` and includes this file, compiled with that ISA's flags. No
// include guard, no #include here: the file is re-included in several namespaces. All arithmetic is
// IEEE binary64 or binary32 with explicit fused operations (the targets are built with
// -ffp-contract=off), so every ISA produces the same bits.
//
// Per token, cos/sin are computed once per pair in binary64 and shared by every head of q and k
// (optimized/README.md "Angles"; the per-lane math is angle-inl.h, shared with the CUDA kernel;
// for 16-bit data on consecutive positions the table may instead be the previous one rotated by
// one position, only where that gives the same bits: next_table_by_rotation);
// then each head is rotated pair by pair:
//     a = RN_T(fmsub(x, c, RN(y·s)))        = RN_T(x·c − y·s)
//     b = RN_T(fmadd(x, s, RN(y·c)))        = RN_T(x·s + y·c)
// f64/f32 data (and every dtype in cache mode): in binary64, rounded once to the element type T
// (via binary32 for f16/bf16). 16-bit data on the fly (PlanView::rotate_binary32): c, s rounded to
// binary32 once per token, the rotation in binary32, rounded once to binary16/bfloat16. The error
// bound of every step is in error_bounds.h.

// Steps 1–3 for one token (error_bounds.h): the phase of every pair in scalar integer code (a
// 64×64-bit multiply has no AVX2 instruction), then the reduction (fast path), the polynomials,
// quadrant, signs and attention factor Ops::lanes pairs at a time, with the same per-lane
// operations as the scalar tail and as the CUDA kernel (angle-inl.h).
// kTable32: the table is stored rounded to binary32 (work.cos32/sin32: M::store(float*) rounds to
// nearest even on every ISA) instead of in binary64 (work.cos_j/sin_j).
template <class M, bool kPrecise, bool kTable32>
inline void cos_sin_lanes(const PlanView& plan, const Workspace& work, int j) {
  typename M::U quadrant;
  typename M::V cosine;
  typename M::V sine;
  if constexpr (kPrecise) {
    quadrant = M::load_u(work.words + j);
    cos_sin_polynomials<M, true>(M::load(work.r_hi + j), M::load(work.r_lo + j), cosine, sine);
  } else {
    const typename M::V r = reduce_fast<M>(M::load_u(work.words + j), quadrant);
    cos_sin_polynomials<M, false>(r, M::set(0.0), cosine, sine);
  }
  typename M::V c;
  typename M::V s;
  place_in_quadrant<M>(quadrant, M::set_u(sin_flip_of(plan)), plan.attention_is_one, plan.attention, cosine, sine, c, s);
  if constexpr (kTable32) {
    M::store(work.cos32 + j, c);
    M::store(work.sin32 + j, s);
  } else {
    M::store(work.cos_j + j, c);
    M::store(work.sin_j + j, s);
  }
}

// Step 1 for a single-component position: the phases of every pair into work.words (high words)
// and work.phase_low. When the previous token of this workspace was at position − 1 (prefill: a
// run of consecutive positions), each phase is the previous one plus the step, a 128-bit addition:
// (p + 1)·step ≡ p·step + step (mod 2^128), so the words are the same as phase_of's, bit for bit
// (also across p = −1 → 0), for an addition instead of a 64×64-bit multiply per pair.
inline void token_phases(const PlanView& plan, std::int64_t position, const Workspace& work) {
  const int pairs = plan.pairs;
  PhaseMemo& memo = *work.memo;
  if (memo.valid && memo.position != INT64_MAX && memo.position + 1 == position) {
    for (int j = 0; j < pairs; ++j) {
      const std::uint64_t low = work.phase_low[j] + plan.step_lo[j];
      work.words[j] += plan.step_hi[j] + (low < plan.step_lo[j] ? 1 : 0);  // carry out of the low word
      work.phase_low[j] = low;
    }
  } else {
    for (int j = 0; j < pairs; ++j) {
      const Phase phase = phase_of(position, plan.step_hi[j], plan.step_lo[j]);
      work.words[j] = phase.high;
      work.phase_low[j] = phase.low;
    }
  }
  memo.position = position;
  memo.valid = true;
}

// cos/sin of every pair of one token into work.cos_j / work.sin_j (kTable32: work.cos32 /
// work.sin32): the scalar integer phase of each pair, then Ops::lanes pairs at a time (scalar tail).
template <bool kTable32>
inline void token_cos_sin(const PlanView& plan, const std::int64_t* position_row, const Workspace& work) {
  const int pairs = plan.pairs;
  if (plan.precise_angles || plan.components != 1) work.memo->valid = false;  // words used otherwise
  if (plan.precise_angles) {
    for (int j = 0; j < pairs; ++j) {
      const Phase phase = phase_of(position_row[plan.component[j]], plan.step_hi[j], plan.step_lo[j]);
      reduce_precise(phase, plan.radians_per_unit_hi, plan.radians_per_unit_lo, work.r_hi[j], work.r_lo[j], work.words[j]);
    }
    int j = 0;
    for (; j + Ops::lanes <= pairs; j += Ops::lanes) cos_sin_lanes<Ops, true, kTable32>(plan, work, j);
    for (; j < pairs; ++j) cos_sin_lanes<ScalarOps, true, kTable32>(plan, work, j);
    return;
  }
  if (plan.components == 1) {
    token_phases(plan, position_row[0], work);
  } else {
    for (int j = 0; j < pairs; ++j) {
      work.words[j] = phase_of(position_row[plan.component[j]], plan.step_hi[j], plan.step_lo[j]).high;
    }
  }
  int j = 0;
  for (; j + Ops::lanes <= pairs; j += Ops::lanes) cos_sin_lanes<Ops, false, kTable32>(plan, work, j);
  for (; j < pairs; ++j) cos_sin_lanes<ScalarOps, false, kTable32>(plan, work, j);
}

// A store of one vector of results, non-temporal when kStream (CallView::streaming_stores).
template <class O, bool kStream, class T, class V>
inline void put(T* p, V v) {
  if constexpr (kStream) {
    O::stream(p, v);
  } else {
    O::store(p, v);
  }
}
template <class O, bool kStream, class T, class W>
inline void put_words(T* p, W words) {
  if constexpr (kStream) {
    O::stream_words(p, words);
  } else {
    O::store_words(p, words);
  }
}
template <class O, bool kStream, class T, class V>
inline void put_pairs(T* p, V x, V y) {
  if constexpr (kStream) {
    O::stream_pairs(p, x, y);
  } else {
    O::store_pairs(p, x, y);
  }
}

// The 16-bit element types (the binary32 rotation applies to them only).
constexpr bool is_16_bit(const void*) { return false; }
constexpr bool is_16_bit(const F16*) { return true; }
constexpr bool is_16_bit(const BF16*) { return true; }

// THE ROUNDING TEST (error_bounds.h "ROUNDING TEST"): an output v is kept when v − E and v + E round
// to the same value of T, E ≥ its proven error plus the rounding of v ± E. undecided64: binary64
// lanes (step 4's w; 16-bit T rounded once, through binary32 by round-to-odd), E = K·(|x| + |y|) + F
// for both outputs of a pair. Returns the lanes that fail (bit i: lane i), 0 when every output is
// decided.
template <class O, class T>
[[gnu::always_inline]] inline int undecided64(const PlanView& plan, typename O::V x, typename O::V y, typename O::V a, typename O::V b,
                       double k) {
  using V = typename O::V;
  const V e = O::fmadd(O::add(O::abs(x), O::abs(y)), O::set(k), O::set(plan.decide_floor64));
  const T* t = nullptr;
  return O::undecided(t, O::sub(a, e), O::add(a, e)) | O::undecided(t, O::sub(b, e), O::add(b, e));
}
// decide32: the binary32 rotation of 16-bit data (step 6's a32, b32), per output
//     E_a = RN32(fma(|x|, wc, RN32(fma(|y|, ws, F)))),  E_b the same with wc and ws swapped,
// with the token's weights wc = RN32↑(K·|c| + K_τ·S), ws likewise (token_weights): E_a bounds
// step 6's componentwise error, ≤ 3.0001·u32·(|x||c| + |y||s|) + the table's τ·(|x| + |y|), plus
// the rounding of a ± E_a, so an output is kept where it is small as well as where it is large.
// The test is the cell test (error_bounds.h "ROUNDING TEST", THE CELL TEST; Ops32::undecided_cells):
// a − E_a and a + E_a in one rounding cell of T on binary32 bits, so a, inside them, rounds to the
// correctly rounded value of T where the test passes, and the store rounds a itself. Returns the
// failing lanes. Always inlined: it is most of a vector's work, and a call per vector spills every
// operand. `floor` is F in every lane (PlanView::decide_floor32), set once before the caller's loop.
template <class O, class T>
[[gnu::always_inline]] inline int decide32(typename O::V floor, typename O::V x, typename O::V y, typename O::V wc,
                                           typename O::V ws, typename O::V a, typename O::V b) {
  using V = typename O::V;
  const V ax = O::abs(x);
  const V ay = O::abs(y);
  const V ea = O::fmadd(ax, wc, O::fmadd(ay, ws, floor));
  const V eb = O::fmadd(ax, ws, O::fmadd(ay, wc, floor));
  const T* t = nullptr;
  return O::undecided_cells(t, a, O::sub(a, ea), O::add(a, ea), b, O::sub(b, eb), O::add(b, eb));
}
// The same test for bfloat16, also giving the cell keys of a − E_a and a − E_b (key_a, key_b:
// Ops32::undecided_cells), whose high halves are RN_bf16(a) and RN_bf16(b) in every lane that
// passes (error_bounds.h "ROUNDING TEST", THE CELL TEST: a lies in that key's run, above its lower
// end), so a vector whose lanes all pass is stored from them without rounding again.
template <class O>
[[gnu::always_inline]] inline int decide32_keys(typename O::V floor, typename O::V x, typename O::V y, typename O::V wc,
                                                typename O::V ws, typename O::V a, typename O::V b,
                                                typename O::K& key_a, typename O::K& key_b) {
  using V = typename O::V;
  const V ax = O::abs(x);
  const V ay = O::abs(y);
  const V ea = O::fmadd(ax, wc, O::fmadd(ay, ws, floor));
  const V eb = O::fmadd(ax, ws, O::fmadd(ay, wc, floor));
  return O::undecided_cells_keys(a, O::sub(a, ea), O::add(a, ea), b, O::sub(b, eb), O::add(b, eb), key_a, key_b);
}

// The rounding test's weights of a token's binary32 table (decide32): w = K·|c| + K_τ·S in binary64,
// rounded up to binary32 (error_bounds.h "ROUNDING TEST"). Elementwise, so any order of the table
// (split_tables) carries over.
inline float weight32(const PlanView& plan, float c) {
  const double w = plan.decide_k32 * static_cast<double>(c < 0.0f ? -c : c) + plan.decide_table32;
  const float f = static_cast<float>(w);
  return static_cast<double>(f) < w ? bits_to_float(float_to_bits(f) + 1u) : f;
}
inline void token_weights(const PlanView& plan, const Workspace& work) {
  for (int j = 0; j < plan.pairs; ++j) {
    work.weight_cos32[j] = weight32(plan, work.cos32[j]);
    work.weight_sin32[j] = weight32(plan, work.sin32[j]);
  }
}

// What the slow paths of one token need: the plan, the token's positions, its binary64 table (pair
// order; the binary32 table is RN32 of it).
struct Settle {
  const PlanView* plan;
  const std::int64_t* position_row;
  const double* cos_j;
  const double* sin_j;
};

// Exact zero inputs (x = y = ±0): the outputs x·c − y·s and x·s + y·c are zeros whose signs follow
// from the signs of x, y and of c·A, s·A alone (IEEE 754 §6.3), and the token's binary64 table has
// the exact signs of c·A and s·A wherever an entry is farther from 0 than the table's error (at most
// 2^-44·max(1, |A|), error_bounds.h "TABLE BY ANGLE ADDITION"; the direct and f64 tables are closer).
// So these pairs need no exact path; an entry within 2^-40·max(1, |A|) of 0 (angle 0 among them,
// where the reference's ±0·A rule applies) still goes to exact_pair.
inline bool zero_pair(const Settle& st, std::int64_t j, double x, double y, double& a, double& b) {
  if (x != 0 || y != 0) return false;
  const double c = st.cos_j[j];
  const double s = st.sin_j[j];
  const double scale = st.plan->attention_is_one ? 1.0 : std::max(1.0, std::fabs(st.plan->attention));
  const double margin = 0x1p-40 * scale;
  if (!(std::fabs(c) > margin && std::fabs(s) > margin)) return false;
  a = x * c - y * s;
  b = x * s + y * c;
  return true;
}

// The pairs of a vector whose outputs failed the rounding test (bit `index` of `failed`), redone one
// by one before the vector is stored: the inputs come from the caller's copy xs/ys and the results
// go into its copy as/bs of the vector's results (lane values, which the vector store rounds to T
// as ScalarOps::store does: binary64 lanes hold a itself, binary32 lanes RO32(a), convert-inl.h
// round_to_odd32), in pair order (index k for pair j0 + k), or, with `half` > 0, as the blocks' even
// pairs then odd pairs (index (k mod 2)·half + k/2). So every output is written once, by the
// vector's (possibly non-temporal) store: a scalar store after a non-temporal one to the same line
// would wait for the line to come back from memory. 16-bit data first by the binary64 rotation with
// the token's binary64 table (direct or by angle addition: its own bound,
// PlanView::decide_k64_table); then, like f32 data, exact_pair. Out of line.
template <class T, bool kBinary32, class X>
[[gnu::noinline]] void settle_pairs(const Settle& st, std::int64_t j0, int count, int failed, const X* xs,
                                    const X* ys, X* as, X* bs, int half = 0) {
  const PlanView& plan = *st.plan;
  int second = 0;
  for (int k = 0; k < count; ++k) {
    const int index = half > 0 ? (k % 2) * half + k / 2 : k;
    if (((failed >> index) & 1) == 0) continue;
    const std::int64_t j = j0 + k;
    const double x = static_cast<double>(xs[index]);
    const double y = static_cast<double>(ys[index]);
    double a;
    double b;
    bool done = false;
    if constexpr (kBinary32) {
      rotate<ScalarOps>(x, y, st.cos_j[j], st.sin_j[j], a, b);
      second += 2;
      done = undecided64<ScalarOps, T>(plan, x, y, a, b, plan.decide_k64_table) == 0;
    }
    if (!done) done = zero_pair(st, j, x, y, a, b);
    if (!done) exact_pair(plan, st.position_row, static_cast<int>(j), x, y, a, b);
    if constexpr (kBinary32) {
      as[index] = round_to_odd32(a);
      bs[index] = round_to_odd32(b);
    } else {
      as[index] = a;
      bs[index] = b;
    }
  }
  if (second > 0) count_second_path(static_cast<std::uint64_t>(second));
}

// The failing lanes `failed` of one binary64 vector (x, y → a, b), redone by settle_pairs before
// the vector is stored and put back into a and b; nothing when no lane failed.
template <class O, class T>
inline void settle_binary64(const Settle& st, std::int64_t j, int failed, typename O::V x, typename O::V y, typename O::V& a,
                            typename O::V& b) {
  if (__builtin_expect(failed != 0, 0)) {
    double xs[O::lanes];
    double ys[O::lanes];
    double as[O::lanes];
    double bs[O::lanes];
    O::store(xs, x);
    O::store(ys, y);
    O::store(as, a);
    O::store(bs, b);
    settle_pairs<T, false>(st, j, O::lanes, failed, xs, ys, as, bs);
    a = O::load(as);
    b = O::load(bs);
  }
}

// The rounding test's constants for binary64 lanes of O, set once before a loop over pairs.
// k, floor: PlanView::decide_k64 and decide_floor64 (E = k·(|x| + |y|) + floor). f32 data first
// takes the test by the bits (error_bounds.h "ROUNDING TEST", "f32 data, by the bits"): an output w
// is kept when |w| > E' = RN(k·2^37·(|x| + |y|) + 2^-125) and its binary64 bits plus 2^28 − M − 1,
// modulo 2^29, are at most 2^29 − 2M − 2 (M = 2^16: w is more than M binary64 ulps from every
// binary32 rounding boundary, and E'·2^-37 bounds its error by less than that).
template <class O>
struct Decide64 {
  typename O::V k;
  typename O::V floor;
  typename O::V k_bits;      // k·2^37 (exact: a power-of-two scaling of a normal value)
  typename O::V floor_bits;  // 2^-125
  typename O::U offset;      // 2^28 − M − 1 in both 32-bit halves of each lane
  typename O::U most;        // 2^29 − 2M − 2 in both halves
};
template <class O>
inline Decide64<O> decide64(const PlanView& plan) {
  constexpr std::uint64_t margin = std::uint64_t{1} << 16;  // M = 2^(53 − 37)
  constexpr std::uint64_t halves = 0x100000001ull;
  return Decide64<O>{O::set(plan.decide_k64),
                     O::set(plan.decide_floor64),
                     O::set(plan.decide_k64 * 0x1p37),
                     O::set(0x1p-125),
                     O::set_u(((std::uint64_t{1} << 28) - margin - 1) * halves),
                     O::set_u(((std::uint64_t{1} << 29) - 2 * margin - 2) * halves)};
}

constexpr bool is_f32(const void*) { return false; }
constexpr bool is_f32(const float*) { return true; }

// The rounding test of one vector of pairs (lanes of O, binary64) starting at pair j, before its
// results are stored. f32 data: the test by the bits (Decide64) on a and b as they are; when every
// lane passes, a and b stay the binary64 results, whose rounding by the store is then the correctly
// rounded one. Otherwise (and for 16-bit T, rounded through binary32 by round-to-odd) the test of
// undecided64: a and b become a − E and b − E, which round to the correctly rounded values where
// it passes, and the failing lanes are redone (settle_pairs). kCheck false (f64 data, cache mode):
// nothing.
template <class O, class T, bool kCheck>
[[gnu::always_inline]] inline void settle64(const Settle& st, const Decide64<O>& d, std::int64_t j, typename O::V x,
                                            typename O::V y, typename O::V& a, typename O::V& b) {
  if constexpr (kCheck) {
    using V = typename O::V;
    const V sum = O::add(O::abs(x), O::abs(y));
    if constexpr (is_f32(static_cast<const T*>(nullptr))) {
      const V e_bits = O::fmadd(sum, d.k_bits, d.floor_bits);
      if (__builtin_expect(O::decided_by_bits32(e_bits, a, b, d.offset, d.most), 1)) return;
    }
    const V e = O::fmadd(sum, d.k, d.floor);
    const T* t = nullptr;
    const V lo_a = O::sub(a, e);
    const V lo_b = O::sub(b, e);
    const int failed = O::undecided_pair(t, lo_a, O::add(a, e), lo_b, O::add(b, e));
    a = lo_a;
    b = lo_b;
    settle_binary64<O, T>(st, j, failed, x, y, a, b);
  }
}
// The failing lanes of one vector of the binary32 rotation in pair order (lanes k of pairs j0 + k,
// count a multiple of Ops::lanes): the second path in binary64 vectors, Ops::lanes pairs at a time
// (the same operations per lane as settle_pairs' ScalarOps ones, so the same bits), its results
// put into the failing lanes as RO32 (ScalarOps::store_odd), then exact_pair for the lanes its test
// leaves. Out of line.
template <class T>
[[gnu::noinline]] void settle_second32(const Settle& st, std::int64_t j0, int count, int failed, const float* xs,
                                       const float* ys, float* as, float* bs) {
  using V = typename Ops::V;
  const PlanView& plan = *st.plan;
  int left = 0;
  int second = 0;
  for (int k = 0; k < count; k += Ops::lanes) {
    const int lanes = (failed >> k) & ((1 << Ops::lanes) - 1);
    if (lanes == 0) continue;
    const V x = Ops::load(xs + k);
    const V y = Ops::load(ys + k);
    V a;
    V b;
    rotate<Ops>(x, y, Ops::load(st.cos_j + j0 + k), Ops::load(st.sin_j + j0 + k), a, b);
    const int undecided = undecided64<Ops, T>(plan, x, y, a, b, plan.decide_k64_table) & lanes;
    float ra[Ops::lanes];
    float rb[Ops::lanes];
    Ops::store_odd(ra, a);
    Ops::store_odd(rb, b);
    for (int i = 0; i < Ops::lanes; ++i) {
      if (((lanes >> i) & 1) == 0) continue;
      second += 2;
      if (((undecided >> i) & 1) != 0) continue;
      as[k + i] = ra[i];
      bs[k + i] = rb[i];
    }
    left |= undecided << k;
  }
  count_second_path(static_cast<std::uint64_t>(second));
  for (int k = 0; k < count; ++k) {
    if (((left >> k) & 1) == 0) continue;
    double a;
    double b;
    if (!zero_pair(st, j0 + k, xs[k], ys[k], a, b)) exact_pair(plan, st.position_row, static_cast<int>(j0 + k), xs[k], ys[k], a, b);
    as[k] = round_to_odd32(a);
    bs[k] = round_to_odd32(b);
  }
}

// The same for the binary32 rotation of 16-bit data, after decide32 (its failing lanes `failed`).
template <class O, class T>
inline void settle32(const Settle& st, std::int64_t j, int failed, typename O::V x, typename O::V y, typename O::V& a,
                     typename O::V& b) {
  if (__builtin_expect(failed != 0, 0)) {
    float xs[O::lanes];
    float ys[O::lanes];
    float as[O::lanes];
    float bs[O::lanes];
    O::store(xs, x);
    O::store(ys, y);
    O::store(as, a);
    O::store(bs, b);
    if constexpr (O::lanes % Ops::lanes == 0) {
      settle_second32<T>(st, j, O::lanes, failed, xs, ys, as, bs);
    } else {
      settle_pairs<T, true>(st, j, O::lanes, failed, xs, ys, as, bs);
    }
    a = O::load(as);
    b = O::load(bs);
  }
}

// Half layout, 16-bit data, Ops with 8-element conversions (Avx2Ops::wide): pairs
// [0, 8·⌊pairs/8⌋) two vectors at a time; returns the first pair not done. Same per-lane
// operations as the one-vector loop.
template <class O, class T, bool kCheck>
inline int rotate_half_wide(const Settle& st, const T* in, T* out, int pairs, const double* cos_j,
                            const double* sin_j) {
  using V = typename O::V;
  const Decide64<O> d = decide64<O>(*st.plan);
  int j = 0;
  for (; j + 2 * O::lanes <= pairs; j += 2 * O::lanes) {
    V x0;
    V x1;
    V y0;
    V y1;
    O::load8(in + j, x0, x1);
    O::load8(in + pairs + j, y0, y1);
    V a0;
    V b0;
    V a1;
    V b1;
    rotate<O>(x0, y0, O::load(cos_j + j), O::load(sin_j + j), a0, b0);
    rotate<O>(x1, y1, O::load(cos_j + j + O::lanes), O::load(sin_j + j + O::lanes), a1, b1);
    settle64<O, T, kCheck>(st, d, j, x0, y0, a0, b0);
    settle64<O, T, kCheck>(st, d, j + O::lanes, x1, y1, a1, b1);
    O::store8(out + j, a0, a1);
    O::store8(out + pairs + j, b0, b1);
  }
  return j;
}

// One head: pairs in SIMD bodies of Ops::lanes pairs, then a scalar tail; pass-through dims
// copied. The layout is a template parameter so that the per-head work inlines into the loop
// over heads without branches (32 heads of 64 pairs: per-head overhead is visible).
// kStream: non-temporal stores (f32 data only: the 16-bit element types take the binary32 path).
template <class T, LayoutCode kLayout, bool kStream, bool kCheck>
inline void rotate_head(const Settle& st, const T* in, T* out, const double* cos_j, const double* sin_j) {
  const PlanView& plan = *st.plan;
  using V = typename Ops::V;
  using SV = typename ScalarOps::V;
  const int pairs = plan.pairs;
  const Decide64<Ops> d = decide64<Ops>(plan);
  const Decide64<ScalarOps> d1 = decide64<ScalarOps>(plan);
  int j = 0;
  if constexpr (kLayout == LayoutCode::half) {  // pair j = dims (j, j + pairs)
    if constexpr (Ops::wide(static_cast<const T*>(nullptr))) {  // 16-bit data on AVX2: 2 vectors at once
      j = rotate_half_wide<Ops, T, kCheck>(st, in, out, pairs, cos_j, sin_j);
    }
    for (; j + Ops::lanes <= pairs; j += Ops::lanes) {
      const V x = Ops::load(in + j);
      const V y = Ops::load(in + pairs + j);
      V a;
      V b;
      rotate<Ops>(x, y, Ops::load(cos_j + j), Ops::load(sin_j + j), a, b);
      settle64<Ops, T, kCheck>(st, d, j, x, y, a, b);
      put<Ops, kStream>(out + j, a);
      put<Ops, kStream>(out + pairs + j, b);
    }
    for (; j < pairs; ++j) {
      SV a;
      SV b;
      const SV x = ScalarOps::load(in + j);
      const SV y = ScalarOps::load(in + pairs + j);
      rotate<ScalarOps>(x, y, cos_j[j], sin_j[j], a, b);
      settle64<ScalarOps, T, kCheck>(st, d1, j, x, y, a, b);
      ScalarOps::store(out + j, a);
      ScalarOps::store(out + pairs + j, b);
    }
  } else {  // pair j = dims (2j, 2j + 1)
    for (; j + Ops::lanes <= pairs; j += Ops::lanes) {
      V x;
      V y;
      Ops::load_pairs(in + 2 * j, x, y);
      V a;
      V b;
      rotate<Ops>(x, y, Ops::load(cos_j + j), Ops::load(sin_j + j), a, b);
      settle64<Ops, T, kCheck>(st, d, j, x, y, a, b);
      put_pairs<Ops, kStream>(out + 2 * j, a, b);
    }
    for (; j < pairs; ++j) {
      SV x;
      SV y;
      ScalarOps::load_pairs(in + 2 * j, x, y);
      SV a;
      SV b;
      rotate<ScalarOps>(x, y, cos_j[j], sin_j[j], a, b);
      settle64<ScalarOps, T, kCheck>(st, d1, j, x, y, a, b);
      ScalarOps::store_pairs(out + 2 * j, a, b);
    }
  }
  if (out != in && plan.rotary_dim < plan.head_dim) {  // pass-through dims: copied bit for bit
    std::memcpy(out + plan.rotary_dim, in + plan.rotary_dim,
                static_cast<std::size_t>(plan.head_dim - plan.rotary_dim) * sizeof(T));
  }
}

// One block of the half layout, bfloat16, an Ops32 with even/odd blocks
// (Avx2Ops32::even_odd_blocks): B = O::block_pairs pairs (two vectors), x and y halves at x_in and
// y_in, the table at cos32/sin32 in the Ops32's block order (split_tables). Same per-lane
// operations as the one-vector loop.
template <class O, bool kStream, class T>
inline void rotate_block(const Settle& st, typename O::V floor, const T* in, T* out, std::int64_t pairs, std::int64_t j,
                         const float* cos32, const float* sin32, const float* wcos32, const float* wsin32) {
  using V = typename O::V;
  const T* x_in = in + j;
  const T* y_in = in + pairs + j;
  T* x_out = out + j;
  T* y_out = out + pairs + j;
  V x0;
  V x1;
  V y0;
  V y1;
  O::load_pairs(x_in, x0, x1);  // the even elements' binary32 values, the odd ones'
  O::load_pairs(y_in, y0, y1);
  const V c0 = O::load(cos32);  // split_block's order: the even pairs', the odd pairs'
  const V c1 = O::load(cos32 + O::lanes);
  const V s0 = O::load(sin32);
  const V s1 = O::load(sin32 + O::lanes);
  V a0;
  V b0;
  V a1;
  V b1;
  rotate<O>(x0, y0, c0, s0, a0, b0);
  rotate<O>(x1, y1, c1, s1, a1, b1);
  typename O::K key_a0;
  typename O::K key_b0;
  typename O::K key_a1;
  typename O::K key_b1;
  const int failed =
      decide32_keys<O>(floor, x0, y0, O::load(wcos32), O::load(wsin32), a0, b0, key_a0, key_b0) |
      (decide32_keys<O>(floor, x1, y1, O::load(wcos32 + O::lanes), O::load(wsin32 + O::lanes), a1, b1, key_a1, key_b1)
       << O::lanes);
  if (__builtin_expect(failed == 0, 1)) {  // the words from the keys: even element low, odd high
    put_words<O, kStream>(x_out, O::key_pair_words(key_a0, key_a1));
    put_words<O, kStream>(y_out, O::key_pair_words(key_b0, key_b1));
    return;
  }
  // some lane failed: its pairs redone (settle_pairs), the words rounded from the values
  float xs[2 * O::lanes];
  float ys[2 * O::lanes];
  float as[2 * O::lanes];
  float bs[2 * O::lanes];
  O::store(xs, x0);
  O::store(xs + O::lanes, x1);
  O::store(ys, y0);
  O::store(ys + O::lanes, y1);
  O::store(as, a0);
  O::store(as + O::lanes, a1);
  O::store(bs, b0);
  O::store(bs + O::lanes, b1);
  settle_pairs<T, true>(st, j, 2 * O::lanes, failed, xs, ys, as, bs, O::lanes);
  a0 = O::load(as);
  a1 = O::load(as + O::lanes);
  b0 = O::load(bs);
  b1 = O::load(bs + O::lanes);
  put_pairs<O, kStream>(x_out, a0, a1);  // back as words: even element low, odd high
  put_pairs<O, kStream>(y_out, b0, b1);
}
// Pairs [0, B·⌊pairs/B⌋) of one head by blocks; returns the first pair not done.
template <class O, bool kStream, class T>
inline int rotate_blocks(const Settle& st, typename O::V floor, const T* in, T* out, int pairs, const float* cos32,
                         const float* sin32, const float* wcos32, const float* wsin32) {
  int j = 0;
  for (; j + O::block_pairs <= pairs; j += O::block_pairs) {
    rotate_block<O, kStream>(st, floor, in, out, pairs, j, cos32 + j, sin32 + j, wcos32 + j, wsin32 + j);
  }
  return j;
}

// The unit of rotate_heads_binary32's whole-unit loop: pairs [j, j + O::block_pairs) of one head
// (two vectors of pairs, the next token's lines of 2·O::block_pairs elements prefetched with it) —
// a block (rotate_block) for an Ops32 with even/odd blocks, else two vectors of the one-vector
// loops of rotate_pairs_binary32. cos32/sin32 point at pair j. Same per-lane operations as those
// loops.
template <class O, LayoutCode kLayout, bool kStream, class T>
inline void rotate_unit(const Settle& st, typename O::V floor, const T* in, T* out, std::int64_t pairs, std::int64_t j,
                        const float* cos32, const float* sin32, const float* wcos32, const float* wsin32) {
  using V = typename O::V;
  if constexpr (kLayout == LayoutCode::half) {
    if constexpr (O::even_odd_blocks(static_cast<const T*>(nullptr))) {
      rotate_block<O, kStream>(st, floor, in, out, pairs, j, cos32, sin32, wcos32, wsin32);
    } else {
      for (int u = 0; u < 2 * O::lanes; u += O::lanes) {
        V a;
        V b;
        const V x = O::load(in + j + u);
        const V y = O::load(in + pairs + j + u);
        rotate<O>(x, y, O::load(cos32 + u), O::load(sin32 + u), a, b);
        const int failed = decide32<O, T>(floor, x, y, O::load(wcos32 + u), O::load(wsin32 + u), a, b);
        settle32<O, T>(st, j + u, failed, x, y, a, b);
        put<O, kStream>(out + j + u, a);
        put<O, kStream>(out + pairs + j + u, b);
      }
    }
  } else {
    for (int u = 0; u < 2 * O::lanes; u += O::lanes) {
      V x;
      V y;
      O::load_pairs(in + 2 * (j + u), x, y);
      V a;
      V b;
      rotate<O>(x, y, O::load(cos32 + u), O::load(sin32 + u), a, b);
      const int failed = decide32<O, T>(floor, x, y, O::load(wcos32 + u), O::load(wsin32 + u), a, b);
      settle32<O, T>(st, j + u, failed, x, y, a, b);
      put_pairs<O, kStream>(out + 2 * (j + u), a, b);
    }
  }
}

// The token's binary32 table in the block order of rotate_blocks (every full block of
// O::block_pairs pairs; the rest stays in pair order for the other loops).
template <class O>
inline void split_tables(int pairs, float* cos32, float* sin32) {
  for (int j = 0; j + O::block_pairs <= pairs; j += O::block_pairs) {
    O::split_block(cos32 + j);
    O::split_block(sin32 + j);
  }
}

// The rotary pairs of one head of 16-bit data in binary32 (PlanView::rotate_binary32): Ops32::lanes
// pairs at a time, then a scalar tail (ScalarOps32: the same IEEE binary32 operations per lane).
// c, s are the token's table rounded to binary32 once (error_bounds.h "16-bit data").
template <class T, LayoutCode kLayout, bool kStream>
inline void rotate_pairs_binary32(const Settle& st, const T* in, T* out, const float* cos32, const float* sin32,
                                  const float* wcos32, const float* wsin32) {
  const PlanView& plan = *st.plan;
  using V = typename Ops32::V;
  using SV = typename ScalarOps32::V;
  const int pairs = plan.pairs;
  const V floor = Ops32::set(plan.decide_floor32);
  int j = 0;
  if constexpr (kLayout == LayoutCode::half) {  // pair j = dims (j, j + pairs)
    if constexpr (Ops32::even_odd_blocks(static_cast<const T*>(nullptr))) {  // bfloat16: two vectors at once
      j = rotate_blocks<Ops32, kStream>(st, floor, in, out, pairs, cos32, sin32, wcos32, wsin32);
    }
    for (; j + Ops32::lanes <= pairs; j += Ops32::lanes) {
      V a;
      V b;
      const V x = Ops32::load(in + j);
      const V y = Ops32::load(in + pairs + j);
      rotate<Ops32>(x, y, Ops32::load(cos32 + j), Ops32::load(sin32 + j), a, b);
      const int failed = decide32<Ops32, T>(floor, x, y, Ops32::load(wcos32 + j), Ops32::load(wsin32 + j), a, b);
      settle32<Ops32, T>(st, j, failed, x, y, a, b);
      put<Ops32, kStream>(out + j, a);
      put<Ops32, kStream>(out + pairs + j, b);
    }
    for (; j < pairs; ++j) {
      SV a;
      SV b;
      const SV x = ScalarOps32::load(in + j);
      const SV y = ScalarOps32::load(in + pairs + j);
      rotate<ScalarOps32>(x, y, cos32[j], sin32[j], a, b);
      const int failed = decide32<ScalarOps32, T>(plan.decide_floor32, x, y, wcos32[j], wsin32[j], a, b);
      settle32<ScalarOps32, T>(st, j, failed, x, y, a, b);
      ScalarOps32::store(out + j, a);
      ScalarOps32::store(out + pairs + j, b);
    }
  } else {  // pair j = dims (2j, 2j + 1)
    for (; j + Ops32::lanes <= pairs; j += Ops32::lanes) {
      V x;
      V y;
      Ops32::load_pairs(in + 2 * j, x, y);
      V a;
      V b;
      rotate<Ops32>(x, y, Ops32::load(cos32 + j), Ops32::load(sin32 + j), a, b);
      const int failed = decide32<Ops32, T>(floor, x, y, Ops32::load(wcos32 + j), Ops32::load(wsin32 + j), a, b);
      settle32<Ops32, T>(st, j, failed, x, y, a, b);
      put_pairs<Ops32, kStream>(out + 2 * j, a, b);
    }
    for (; j < pairs; ++j) {
      SV x;
      SV y;
      ScalarOps32::load_pairs(in + 2 * j, x, y);
      SV a;
      SV b;
      rotate<ScalarOps32>(x, y, cos32[j], sin32[j], a, b);
      const int failed = decide32<ScalarOps32, T>(plan.decide_floor32, x, y, wcos32[j], wsin32[j], a, b);
      settle32<ScalarOps32, T>(st, j, failed, x, y, a, b);
      ScalarOps32::store_pairs(out + 2 * j, a, b);
    }
  }
}

// The 64-byte line at p prefetched into every cache level. On x86 a `prefetcht0` in volatile asm,
// which no optimisation removes: GCC 12 (-O3) finds a function whose only effect is
// __builtin_prefetch to be const (IPA pure-const) and deletes the calls to it
// (tests/optimized/prefetch_in_binary_test.py; bench/README.md "Prefetching the next token").
inline void prefetch_line(const char* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*p));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}

// The input of the head at `head_in` one token later, prefetched (64-byte lines of head_dim
// elements): issued head by head one token ahead of its use, while the next table is computed
// memory has reads in flight. The caller issues it only while a next token is in its range.
template <class T>
inline void prefetch_next_token(const TensorView& tensor, const T* head_in, int head_dim) {
  const char* next = reinterpret_cast<const char*>(head_in + tensor.input_token_stride);
  const std::int64_t head_bytes = static_cast<std::int64_t>(head_dim) * static_cast<std::int64_t>(sizeof(T));
  for (std::int64_t b = 0; b < head_bytes; b += 64) prefetch_line(next + b);
}

// Every head of one tensor at one token, binary32 rotation. The pass-through dims are copied in a
// second loop, so that the rotation loop calls no function (a call would make the compiler reload
// the vector constants for every head). Where the rotary pairs are whole units of
// Ops32::block_pairs (every SIMD Ops32; head_dim 64, 128, 256 …), both layouts and both 16-bit
// types go through one tight loop of units (rotate_unit), which prefetches the next token's input
// one unit's lines at a time; otherwise rotate_pairs_binary32 per head, the next token's head
// prefetched before it (prefetch_next_token).
template <class T, LayoutCode kLayout, bool kStream>
void rotate_heads_binary32(const Settle& st, const TensorView& tensor, std::int64_t token, bool prefetch_next,
                           const float* cos32, const float* sin32, const float* wcos32, const float* wsin32) {
  const PlanView& plan = *st.plan;
  const T* in = static_cast<const T*>(tensor.input) + token * tensor.input_token_stride;
  T* out = static_cast<T*>(tensor.output) + token * tensor.output_token_stride;
  bool rotated = false;
  if constexpr (Ops32::lanes > 1) {
    if (plan.pairs % Ops32::block_pairs == 0) {  // whole units only: one tight loop
      // the loop's invariants in locals: the stores (through vector types, which may alias
      // anything) would otherwise make the compiler reload them from plan and tensor every head
      // (bench/README.md "One loop of units over the heads")
      constexpr int kUnit = Ops32::block_pairs;
      const std::int64_t pairs = plan.pairs;
      const std::int64_t heads = tensor.heads;
      const std::int64_t in_stride = tensor.input_head_stride;
      const std::int64_t out_stride = tensor.output_head_stride;
      const typename Ops32::V floor = Ops32::set(plan.decide_floor32);
      // the next token's lines of the head, one unit's worth (2·kUnit elements) with each unit;
      // without a next token, the head's own lines again (in cache: no branch in the loop)
      const std::int64_t next_token = prefetch_next ? tensor.input_token_stride : 0;
      constexpr int kLines = 2 * kUnit * static_cast<int>(sizeof(T)) / 64;
      static_assert(kLines >= 1 && kLines * 64 == 2 * kUnit * static_cast<int>(sizeof(T)), "whole lines");
      const T* head_in = in;
      T* head_out = out;
      for (std::int64_t h = 0; h < heads; ++h, head_in += in_stride, head_out += out_stride) {
        for (std::int64_t j = 0; j < pairs; j += kUnit) {
          const char* next = reinterpret_cast<const char*>(head_in + next_token + 2 * j);
          for (int l = 0; l < kLines; ++l) prefetch_line(next + 64 * l);
          rotate_unit<Ops32, kLayout, kStream>(st, floor, head_in, head_out, pairs, j, cos32 + j, sin32 + j,
                                               wcos32 + j, wsin32 + j);
        }
      }
      rotated = true;
    }
  }
  for (std::int64_t h = 0; h < tensor.heads && !rotated; ++h) {
    const T* head_in = in + h * tensor.input_head_stride;
    if (prefetch_next) prefetch_next_token(tensor, head_in, plan.head_dim);
    rotate_pairs_binary32<T, kLayout, kStream>(st, head_in, out + h * tensor.output_head_stride, cos32, sin32, wcos32,
                                               wsin32);
  }
  if (in != out && plan.rotary_dim < plan.head_dim) {  // pass-through dims: copied bit for bit
    for (std::int64_t h = 0; h < tensor.heads; ++h) {
      std::memcpy(out + h * tensor.output_head_stride + plan.rotary_dim, in + h * tensor.input_head_stride + plan.rotary_dim,
                  static_cast<std::size_t>(plan.head_dim - plan.rotary_dim) * sizeof(T));
    }
  }
}

// The binary32 table of a token computed directly (steps 1–3 in binary64 into work.cos_j / sin_j,
// then each entry rounded to binary32: the bits token_cos_sin<true> stores), which the next tokens'
// tables by angle addition start from.
inline void angle_table(const PlanView& plan, const std::int64_t* position_row, const Workspace& work) {
  token_cos_sin<false>(plan, position_row, work);
  int j = 0;
  for (; j + Ops::lanes <= plan.pairs; j += Ops::lanes) {
    Ops::store(work.cos32 + j, Ops::load(work.cos_j + j));
    Ops::store(work.sin32 + j, Ops::load(work.sin_j + j));
  }
  for (; j < plan.pairs; ++j) {
    ScalarOps::store(work.cos32 + j, work.cos_j[j]);
    ScalarOps::store(work.sin32 + j, work.sin_j[j]);
  }
  RotationMemo& memo = *work.rotation;
  memo.valid = plan.components == 1;
  memo.position = position_row[0];
  memo.age = 0;
}

// At most kRotationRun − 1 tables in a row by angle addition, then a direct one: the bound of
// next_table_by_rotation grows with the number of rotations since the last direct table.
constexpr int kRotationRun = 32;

// The binary32 table of position p + 1 from the binary64 table of p by one rotation per pair,
//     c' = RN(c·C − RN(s·S)),  s' = RN(s·C + RN(c·S)),   (C, S) = (cos θ_j, ±sin θ_j) of position 1,
// kept only if it rounds to the bits of the direct table: error_bounds.h "TABLE BY ANGLE ADDITION"
// bounds |c' − c64| ≤ 2^-44·max(1, |A|) after up to kRotationRun − 1 rotations (c64 the direct
// binary64 entry), so when c' − E and c' + E (E ≥ that bound plus the rounding of the two sums)
// round to the same binary32 bits, so does every value between them, c64 included: then
// RN32(c') = RN32(c64), the direct table's bits. Otherwise (an entry within E of a binary32
// rounding boundary) the function returns false and the caller computes the table directly.
// Ops::lanes pairs at a time; work.cos_j / sin_j advance as it goes (the caller recomputes them on
// false).
template <class M>
inline bool rotate_table_lanes(const Workspace& work, int j, typename M::V tolerance) {
  using V = typename M::V;
  const V c = M::load(work.cos_j + j);
  const V s = M::load(work.sin_j + j);
  const V step_c = M::load(work.step_cos + j);
  const V step_s = M::load(work.step_sin + j);
  const V c_next = M::fmsub(c, step_c, M::mul(s, step_s));
  const V s_next = M::fmadd(s, step_c, M::mul(c, step_s));
  if (!M::same_binary32(M::sub(c_next, tolerance), M::add(c_next, tolerance)) ||
      !M::same_binary32(M::sub(s_next, tolerance), M::add(s_next, tolerance))) {
    return false;
  }
  M::store(work.cos_j + j, c_next);
  M::store(work.sin_j + j, s_next);
  M::store(work.cos32 + j, c_next);
  M::store(work.sin32 + j, s_next);
  return true;
}

inline bool next_table_by_rotation(const PlanView& plan, const std::int64_t* position_row, const Workspace& work) {
  RotationMemo& memo = *work.rotation;
  const std::int64_t position = position_row[0];
  if (!memo.valid || plan.components != 1 || memo.position == INT64_MAX || memo.position + 1 != position ||
      memo.age + 1 >= kRotationRun) {
    return false;
  }
  if (!memo.steps_ready) {  // the rotation by one position: the direct fast path at p = 1 with A = 1
    PlanView unit = plan;
    unit.attention = 1.0;
    unit.attention_is_one = true;
    for (int j = 0; j < plan.pairs; ++j) pair_cos_sin(unit, 1, j, work.step_cos[j], work.step_sin[j]);
    memo.steps_ready = true;
  }
  // E = (2^-44 + 2^-51)·max(1, |A|): the bound, plus the rounding of c' ± E in binary64
  // (≤ 2^-53·|c' ± E| < 2^-51·max(1, |A|))
  const double scale = plan.attention_is_one ? 1.0 : (plan.attention < 0 ? -plan.attention : plan.attention);
  const double tolerance = (0x1p-44 + 0x1p-51) * (scale > 1.0 ? scale : 1.0);
  int j = 0;
  for (; j + Ops::lanes <= plan.pairs; j += Ops::lanes) {
    if (!rotate_table_lanes<Ops>(work, j, Ops::set(tolerance))) return false;
  }
  for (; j < plan.pairs; ++j) {
    if (!rotate_table_lanes<ScalarOps>(work, j, tolerance)) return false;
  }
  memo.position = position;
  ++memo.age;
  return true;
}

// 16-bit data on the fly with PlanView::rotate_binary32: per token, the binary32 table (by angle
// addition from the previous token's where that gives the direct table's bits, else directly),
// then every head of q and k.
template <class T, LayoutCode kLayout, bool kStream>
void process_binary32(const CallView& call, std::int64_t token_begin, std::int64_t token_end, const Workspace& work) {
  for (std::int64_t t = token_begin; t < token_end; ++t) {
    const std::int64_t* position_row = call.positions + t * call.plan.components;
    if (!next_table_by_rotation(call.plan, position_row, work)) angle_table(call.plan, position_row, work);
    if constexpr (kLayout == LayoutCode::half && Ops32::even_odd_blocks(static_cast<const T*>(nullptr))) {
      split_tables<Ops32>(call.plan.pairs, work.cos32, work.sin32);
    }
    token_weights(call.plan, work);
    const bool prefetch_next = t + 1 < token_end;
    const Settle st{&call.plan, position_row, work.cos_j, work.sin_j};
    rotate_heads_binary32<T, kLayout, kStream>(st, call.q, t, prefetch_next, work.cos32, work.sin32, work.weight_cos32,
                                               work.weight_sin32);
    if (call.k.heads > 0) {
      rotate_heads_binary32<T, kLayout, kStream>(st, call.k, t, prefetch_next, work.cos32, work.sin32,
                                                 work.weight_cos32, work.weight_sin32);
    }
  }
}

template <class C>
inline void load_cache(const CallView& call, const std::int64_t* position_row, double* cos_out, double* sin_out) {
  const C* cos_cache = static_cast<const C*>(call.cos_cache);
  const C* sin_cache = static_cast<const C*>(call.sin_cache);
  for (int j = 0; j < call.plan.pairs; ++j) {
    const std::int64_t offset = position_row[call.plan.component[j]] * call.cache_row_stride + j;
    cos_out[j] = ScalarOps::load(cos_cache + offset);
    const double s = ScalarOps::load(sin_cache + offset);
    sin_out[j] = call.plan.inverse ? -s : s;
  }
}

// Every head of one tensor at one token, binary64 rotation. With prefetch_next, the next token's
// input is prefetched head by head (prefetch_next_token), as rotate_heads_binary32 does: the
// hardware's prefetchers alone do not bring a token's heads in before they are read (the figures:
// bench/README.md "Prefetching the next token").
template <class T, LayoutCode kLayout, bool kStream, bool kCheck>
void rotate_heads(const Settle& st, const TensorView& tensor, std::int64_t token, bool prefetch_next,
                  const double* cos_j, const double* sin_j) {
  const T* in = static_cast<const T*>(tensor.input) + token * tensor.input_token_stride;
  T* out = static_cast<T*>(tensor.output) + token * tensor.output_token_stride;
  for (std::int64_t h = 0; h < tensor.heads; ++h) {
    const T* head_in = in + h * tensor.input_head_stride;
    if (prefetch_next) prefetch_next_token(tensor, head_in, st.plan->head_dim);
    rotate_head<T, kLayout, kStream, kCheck>(st, head_in, out + h * tensor.output_head_stride, cos_j, sin_j);
  }
}

template <class T, bool kStream, bool kCheck>
void rotate_tensor_row(const Settle& st, const TensorView& tensor, std::int64_t token, bool prefetch_next,
                       const double* cos_j, const double* sin_j) {
  if (st.plan->layout == LayoutCode::half) {
    rotate_heads<T, LayoutCode::half, kStream, kCheck>(st, tensor, token, prefetch_next, cos_j, sin_j);
  } else {
    rotate_heads<T, LayoutCode::interleaved, kStream, kCheck>(st, tensor, token, prefetch_next, cos_j, sin_j);
  }
}

// The table of one token (on the fly or from the cache) into work.cos_j / work.sin_j.
inline void token_table(const CallView& call, const std::int64_t* position_row, const Workspace& work) {
  if (call.cos_cache != nullptr) {
    switch (call.cache_dtype) {
      case DtypeCode::f64: load_cache<double>(call, position_row, work.cos_j, work.sin_j); break;
      case DtypeCode::f32: load_cache<float>(call, position_row, work.cos_j, work.sin_j); break;
      case DtypeCode::f16: load_cache<F16>(call, position_row, work.cos_j, work.sin_j); break;
      case DtypeCode::bf16: load_cache<BF16>(call, position_row, work.cos_j, work.sin_j); break;
    }
    return;
  }
  token_cos_sin<false>(call.plan, position_row, work);
}

#include "optimized/kernel_f64-inl.h"  // f64 data on the fly: process_f64

// kCheck: the rounding test and slow paths (PlanView::correctly_rounded, not in cache mode).
template <class T, bool kStream, bool kCheck>
void process_rows(const CallView& call, std::int64_t token_begin, std::int64_t token_end, const Workspace& work) {
  for (std::int64_t t = token_begin; t < token_end; ++t) {
    const std::int64_t* position_row = call.positions + t * call.plan.components;
    token_table(call, position_row, work);
    const bool prefetch_next = t + 1 < token_end;
    const Settle st{&call.plan, position_row, work.cos_j, work.sin_j};
    rotate_tensor_row<T, kStream, kCheck>(st, call.q, t, prefetch_next, work.cos_j, work.sin_j);
    if (call.k.heads > 0) rotate_tensor_row<T, kStream, kCheck>(st, call.k, t, prefetch_next, work.cos_j, work.sin_j);
  }
}
template <class T, bool kStream>
void process_rows_checked(const CallView& call, std::int64_t token_begin, std::int64_t token_end,
                          const Workspace& work) {
  if (call.plan.correctly_rounded && call.cos_cache == nullptr) {
    process_rows<T, kStream, true>(call, token_begin, token_end, work);
  } else {
    process_rows<T, kStream, false>(call, token_begin, token_end, work);
  }
}

template <class T, bool kStream>
void process_typed(const CallView& call, std::int64_t token_begin, std::int64_t token_end, const Workspace& work) {
  if constexpr (is_16_bit(static_cast<const T*>(nullptr))) {
    if (call.plan.rotate_binary32 && call.cos_cache == nullptr) {
      if (call.plan.layout == LayoutCode::half) {
        process_binary32<T, LayoutCode::half, kStream>(call, token_begin, token_end, work);
      } else {
        process_binary32<T, LayoutCode::interleaved, kStream>(call, token_begin, token_end, work);
      }
      return;
    }
    process_rows_checked<T, false>(call, token_begin, token_end, work);  // binary64 rotation: plain stores
  } else if constexpr (sizeof(T) == sizeof(double)) {
    if (call.plan.correctly_rounded && call.cos_cache == nullptr) {  // kernel_f64-inl.h
      if (call.plan.layout == LayoutCode::half) {
        process_f64<LayoutCode::half, kStream>(call, token_begin, token_end, work);
      } else {
        process_f64<LayoutCode::interleaved, kStream>(call, token_begin, token_end, work);
      }
      return;
    }
    process_rows<T, kStream, false>(call, token_begin, token_end, work);  // f64 cache mode
  } else {
    process_rows_checked<T, kStream>(call, token_begin, token_end, work);
  }
}

// Entry point of this ISA: tokens [token_begin, token_end) of a validated call.
// With CallView::streaming_stores (set by the dispatcher for on-the-fly data), the
// non-temporal stores are ordered before the return by a store fence.
inline void process_tokens(const CallView& call, std::int64_t token_begin, std::int64_t token_end,
                           const Workspace& work) {
  if (call.streaming_stores) {
    switch (call.plan.dtype) {
      case DtypeCode::f64: process_typed<double, true>(call, token_begin, token_end, work); break;
      case DtypeCode::f32: process_typed<float, true>(call, token_begin, token_end, work); break;
      case DtypeCode::f16: process_typed<F16, true>(call, token_begin, token_end, work); break;
      case DtypeCode::bf16: process_typed<BF16, true>(call, token_begin, token_end, work); break;
    }
    Ops::fence();
    flush_path_counts();
    return;
  }
  switch (call.plan.dtype) {
    case DtypeCode::f64: process_typed<double, false>(call, token_begin, token_end, work); break;
    case DtypeCode::f32: process_typed<float, false>(call, token_begin, token_end, work); break;
    case DtypeCode::f16: process_typed<F16, false>(call, token_begin, token_end, work); break;
    case DtypeCode::bf16: process_typed<BF16, false>(call, token_begin, token_end, work); break;
  }
  flush_path_counts();
}

// cos/sin tables [rows, pairs] for positions first .. first+rows-1 (every component of a
// multi-axis tuple set to the same position), as doubles.
inline void cos_sin_rows(const PlanView& plan, std::int64_t first_position, std::int64_t rows, const Workspace& work,
                         double* cos_rows, double* sin_rows) {
  const int pairs = plan.pairs;
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t position = first_position + row;
    std::int64_t tuple[16];
    for (int k = 0; k < plan.components && k < 16; ++k) tuple[k] = position;
    Workspace row_work = work;
    row_work.cos_j = cos_rows + row * pairs;
    row_work.sin_j = sin_rows + row * pairs;
    token_cos_sin<false>(plan, tuple, row_work);
  }
}

// n doubles rounded to `dtype` by the kernels' own stores.
inline void round_doubles(const double* values, std::int64_t n, DtypeCode dtype, void* out) {
  for (std::int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DtypeCode::f64: ScalarOps::store(static_cast<double*>(out) + i, values[i]); break;
      case DtypeCode::f32: ScalarOps::store(static_cast<float*>(out) + i, values[i]); break;
      case DtypeCode::f16: ScalarOps::store(static_cast<F16*>(out) + i, values[i]); break;
      case DtypeCode::bf16: ScalarOps::store(static_cast<BF16*>(out) + i, values[i]); break;
    }
  }
}
