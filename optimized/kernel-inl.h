// THE RoPE kernel, written once (google/highway's pattern): each isa/kernel_<isa>.cpp includes
// the standard and intrinsic headers, opens its own namespace, includes convert-inl.h,
// ops_scalar-inl.h, its ops_<isa>-inl.h, defines `using Ops = <its ops>;` and includes this file,
// compiled with that ISA's flags. No include guard, no #include here: the file is re-included in
// several namespaces. All arithmetic is IEEE binary64 with explicit fused operations (the targets
// are built with -ffp-contract=off), so every ISA produces the same bits.
//
// Per token, cos/sin are computed once per pair and shared by every head of q and k
// (optimized/README.md "Angles"; the per-lane math is angle-inl.h, shared with the CUDA kernel);
// then each head is rotated pair by pair:
//     a = RN_T(fmsub(x, c, RN(y·s)))        = RN_T(x·c − y·s)
//     b = RN_T(fmadd(x, s, RN(y·c)))        = RN_T(x·s + y·c)
// in binary64, rounded once to the element type T (via binary32 for f16/bf16). The error bound of
// every step is in error_bounds.h.

// Steps 1–3 for one token (error_bounds.h): the phase of every pair in scalar integer code (a
// 64×64-bit multiply has no AVX2 instruction), then the reduction (fast path), the polynomials,
// quadrant, signs and attention factor Ops::lanes pairs at a time, with the same per-lane
// operations as the scalar tail and as the CUDA kernel (angle-inl.h).
template <class M, bool kPrecise>
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
  M::store(work.cos_j + j, c);
  M::store(work.sin_j + j, s);
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

// cos/sin of every pair of one token into work.cos_j / work.sin_j: the scalar integer phase of
// each pair, then Ops::lanes pairs at a time (scalar tail).
inline void token_cos_sin(const PlanView& plan, const std::int64_t* position_row, const Workspace& work) {
  const int pairs = plan.pairs;
  if (plan.precise_angles || plan.components != 1) work.memo->valid = false;  // words used otherwise
  if (plan.precise_angles) {
    for (int j = 0; j < pairs; ++j) {
      const Phase phase = phase_of(position_row[plan.component[j]], plan.step_hi[j], plan.step_lo[j]);
      reduce_precise(phase, plan.radians_per_unit_hi, plan.radians_per_unit_lo, work.r_hi[j], work.r_lo[j], work.words[j]);
    }
    int j = 0;
    for (; j + Ops::lanes <= pairs; j += Ops::lanes) cos_sin_lanes<Ops, true>(plan, work, j);
    for (; j < pairs; ++j) cos_sin_lanes<ScalarOps, true>(plan, work, j);
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
  for (; j + Ops::lanes <= pairs; j += Ops::lanes) cos_sin_lanes<Ops, false>(plan, work, j);
  for (; j < pairs; ++j) cos_sin_lanes<ScalarOps, false>(plan, work, j);
}

// Half layout, 16-bit data, Ops with 8-element conversions (Avx2Ops::wide): pairs
// [0, 8·⌊pairs/8⌋) two vectors at a time; returns the first pair not done. Same per-lane
// operations as the one-vector loop.
template <class O, class T>
inline int rotate_half_wide(const T* in, T* out, int pairs, const double* cos_j, const double* sin_j) {
  using V = typename O::V;
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
    O::store8(out + j, a0, a1);
    O::store8(out + pairs + j, b0, b1);
  }
  return j;
}

// One head: pairs in SIMD bodies of Ops::lanes pairs, then a scalar tail; pass-through dims
// copied. The layout is a template parameter so that the per-head work inlines into the loop
// over heads without branches (32 heads of 64 pairs: per-head overhead is visible).
template <class T, LayoutCode kLayout>
inline void rotate_head(const PlanView& plan, const T* in, T* out, const double* cos_j, const double* sin_j) {
  using V = typename Ops::V;
  using SV = typename ScalarOps::V;
  const int pairs = plan.pairs;
  int j = 0;
  if constexpr (kLayout == LayoutCode::half) {  // pair j = dims (j, j + pairs)
    if constexpr (Ops::wide(static_cast<const T*>(nullptr))) {  // 16-bit data on AVX2: 2 vectors at once
      j = rotate_half_wide<Ops>(in, out, pairs, cos_j, sin_j);
    }
    for (; j + Ops::lanes <= pairs; j += Ops::lanes) {
      const V x = Ops::load(in + j);
      const V y = Ops::load(in + pairs + j);
      V a;
      V b;
      rotate<Ops>(x, y, Ops::load(cos_j + j), Ops::load(sin_j + j), a, b);
      Ops::store(out + j, a);
      Ops::store(out + pairs + j, b);
    }
    for (; j < pairs; ++j) {
      SV a;
      SV b;
      rotate<ScalarOps>(ScalarOps::load(in + j), ScalarOps::load(in + pairs + j), cos_j[j], sin_j[j], a, b);
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
      Ops::store_pairs(out + 2 * j, a, b);
    }
    for (; j < pairs; ++j) {
      SV x;
      SV y;
      ScalarOps::load_pairs(in + 2 * j, x, y);
      SV a;
      SV b;
      rotate<ScalarOps>(x, y, cos_j[j], sin_j[j], a, b);
      ScalarOps::store_pairs(out + 2 * j, a, b);
    }
  }
  if (out != in && plan.rotary_dim < plan.head_dim) {  // pass-through dims: copied bit for bit
    std::memcpy(out + plan.rotary_dim, in + plan.rotary_dim,
                static_cast<std::size_t>(plan.head_dim - plan.rotary_dim) * sizeof(T));
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

template <class T, LayoutCode kLayout>
void rotate_heads(const CallView& call, const TensorView& tensor, std::int64_t token, const double* cos_j,
                  const double* sin_j) {
  const T* in = static_cast<const T*>(tensor.input) + token * tensor.input_token_stride;
  T* out = static_cast<T*>(tensor.output) + token * tensor.output_token_stride;
  for (std::int64_t h = 0; h < tensor.heads; ++h) {
    rotate_head<T, kLayout>(call.plan, in + h * tensor.input_head_stride, out + h * tensor.output_head_stride, cos_j,
                            sin_j);
  }
}

template <class T>
void rotate_tensor_row(const CallView& call, const TensorView& tensor, std::int64_t token, const double* cos_j,
                       const double* sin_j) {
  if (call.plan.layout == LayoutCode::half) {
    rotate_heads<T, LayoutCode::half>(call, tensor, token, cos_j, sin_j);
  } else {
    rotate_heads<T, LayoutCode::interleaved>(call, tensor, token, cos_j, sin_j);
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
  token_cos_sin(call.plan, position_row, work);
}

template <class T>
void process_typed(const CallView& call, std::int64_t token_begin, std::int64_t token_end, const Workspace& work) {
  for (std::int64_t t = token_begin; t < token_end; ++t) {
    token_table(call, call.positions + t * call.plan.components, work);
    rotate_tensor_row<T>(call, call.q, t, work.cos_j, work.sin_j);
    if (call.k.heads > 0) rotate_tensor_row<T>(call, call.k, t, work.cos_j, work.sin_j);
  }
}

// Entry point of this ISA: tokens [token_begin, token_end) of a validated call.
inline void process_tokens(const CallView& call, std::int64_t token_begin, std::int64_t token_end,
                           const Workspace& work) {
  switch (call.plan.dtype) {
    case DtypeCode::f64: process_typed<double>(call, token_begin, token_end, work); break;
    case DtypeCode::f32: process_typed<float>(call, token_begin, token_end, work); break;
    case DtypeCode::f16: process_typed<F16>(call, token_begin, token_end, work); break;
    case DtypeCode::bf16: process_typed<BF16>(call, token_begin, token_end, work); break;
  }
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
    token_cos_sin(plan, tuple, row_work);
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
