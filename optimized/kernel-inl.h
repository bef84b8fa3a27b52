// THE RoPE kernel, written once (google/highway's pattern): each isa/kernel_<isa>.cpp includes
// the standard and intrinsic headers, opens its own namespace, includes convert-inl.h,
// ops_scalar-inl.h, its ops_<isa>-inl.h, defines `using Ops = <its ops>;` and includes this file,
// compiled with that ISA's flags. No include guard, no #include here: the file is re-included in
// several namespaces. All arithmetic is IEEE binary64 with explicit fused operations (the targets
// are built with -ffp-contract=off), so every ISA produces the same bits.
//
// Per token, cos/sin are computed once per pair and shared by every head of q and k
// (optimized/README.md "Angles"); then each head is rotated pair by pair:
//     a = RN_T(fmsub(x, c, RN(y·s)))        = RN_T(x·c − y·s)
//     b = RN_T(fmadd(x, s, RN(y·c)))        = RN_T(x·s + y·c)
// in binary64, rounded once to the element type T (via binary32 for f16/bf16). The error bound of
// every step is in error_bounds.h.

__extension__ typedef unsigned __int128 Uint128;
__extension__ typedef __int128 Int128;

// Taylor coefficients of sin and cos (1/n!, each correctly rounded by the compiler). On the
// reduced range |r| ≤ π/4 the first omitted terms are r^19/19! < 8.3e-20 and r^20/20! < 3.3e-21,
// below 2^-63 (error_bounds.h, step 3).
constexpr double kSin3 = -1.0 / 6.0;
constexpr double kSin5 = 1.0 / 120.0;
constexpr double kSin7 = -1.0 / 5040.0;
constexpr double kSin9 = 1.0 / 362880.0;
constexpr double kSin11 = -1.0 / 39916800.0;
constexpr double kSin13 = 1.0 / 6227020800.0;
constexpr double kSin15 = -1.0 / 1307674368000.0;
constexpr double kSin17 = 1.0 / 355687428096000.0;
constexpr double kCos4 = 1.0 / 24.0;
constexpr double kCos6 = -1.0 / 720.0;
constexpr double kCos8 = 1.0 / 40320.0;
constexpr double kCos10 = -1.0 / 3628800.0;
constexpr double kCos12 = 1.0 / 479001600.0;
constexpr double kCos14 = -1.0 / 87178291200.0;
constexpr double kCos16 = 1.0 / 20922789888000.0;
constexpr double kCos18 = -1.0 / 6402373705728000.0;

// Step 1 (exact integer arithmetic): phase of pair j = position · step_j mod 1 turn, in 0.128
// fixed point. Two's complement makes negative positions work. The nearest quarter turn is
// split off (quadrant), leaving a remainder f ∈ [−1/8, 1/8] turn, kept as a signed count of
// 2^-65 turns (truncated: error < 2^-65 turn). Step 2: r = f · 2π·2^-65 as a double-double
// (r_hi + r_lo, relative error < 2^-100).
inline void reduce_angles(const PlanView& plan, const std::int64_t* position_row, double* r_hi,
                          double* r_lo, double* quadrant) {
  for (int j = 0; j < plan.pairs; ++j) {
    const Int128 position = position_row[plan.component[j]];
    const Uint128 step = (static_cast<Uint128>(plan.step_hi[j]) << 64) | plan.step_lo[j];
    const Uint128 phase = static_cast<Uint128>(position) * step;  // mod 2^128
    const Uint128 quarter = (phase + (static_cast<Uint128>(1) << 125)) >> 126;
    const Int128 remainder = static_cast<Int128>(phase - (quarter << 126));  // |.| ≤ 2^125
    const std::int64_t f = static_cast<std::int64_t>(remainder >> 63);     // |f| ≤ 2^62
    const double f_hi = static_cast<double>(f);
    const double f_lo = static_cast<double>(f - static_cast<std::int64_t>(f_hi));  // exact, |.| ≤ 2^9
    const double hi = f_hi * plan.radians_per_unit_hi;
    const double product_error = std::fma(f_hi, plan.radians_per_unit_hi, -hi);  // exact
    r_hi[j] = hi;
    r_lo[j] = product_error + std::fma(f_hi, plan.radians_per_unit_lo, f_lo * plan.radians_per_unit_hi);
    quadrant[j] = static_cast<double>(static_cast<int>(quarter & 3u));
  }
}

// Step 3: cos and sin of r_hi + r_lo (|r| ≤ π/4) by their Taylor polynomials, with the first-order
// correction for r_lo; then the quadrant's swap and signs (exact), the direction's sign (exact)
// and the attention factor A (one rounding, skipped when A = 1). Written as plain loops over j
// with selects, so each ISA's compiler vectorizes it with the same per-lane IEEE operations.
inline void cos_sin(const PlanView& plan, const double* r_hi, const double* r_lo, const double* quadrant,
                    double* cos_out, double* sin_out) {
  const double attention = plan.attention;
  for (int j = 0; j < plan.pairs; ++j) {
    const double r = r_hi[j];
    const double d = r_lo[j];
    const double r2 = r * r;
    double ps = kSin17;
    ps = std::fma(ps, r2, kSin15);
    ps = std::fma(ps, r2, kSin13);
    ps = std::fma(ps, r2, kSin11);
    ps = std::fma(ps, r2, kSin9);
    ps = std::fma(ps, r2, kSin7);
    ps = std::fma(ps, r2, kSin5);
    ps = std::fma(ps, r2, kSin3);
    const double t = r2 * ps;  // sin r = r + r·t
    // sin(r + d) ≈ sin r + d·cos r, cos r ≈ 1 − r²/2 (the dropped d·r⁴/24 is < 2^-110)
    const double sine = r + std::fma(r, t, d * std::fma(r2, -0.5, 1.0));
    double pc = kCos18;
    pc = std::fma(pc, r2, kCos16);
    pc = std::fma(pc, r2, kCos14);
    pc = std::fma(pc, r2, kCos12);
    pc = std::fma(pc, r2, kCos10);
    pc = std::fma(pc, r2, kCos8);
    pc = std::fma(pc, r2, kCos6);
    pc = std::fma(pc, r2, kCos4);
    pc = std::fma(pc, r2, -0.5);
    // cos(r + d) ≈ cos r − d·sin r ≈ cos r − d·r
    const double cosine = 1.0 + std::fma(r2, pc, -(d * r));
    // angle = r + q·π/2: q=0 (c, s), 1 (−s, c), 2 (−c, −s), 3 (s, −c); single-level selects so
    // that the loop vectorizes
    const double q = quadrant[j];
    const bool odd = q == 1.0 || q == 3.0;
    const double c = odd ? sine : cosine;
    const double s = odd ? cosine : sine;
    cos_out[j] = (q == 1.0 || q == 2.0) ? -c : c;
    sin_out[j] = q >= 2.0 ? -s : s;
  }
  if (plan.inverse) {
    for (int j = 0; j < plan.pairs; ++j) sin_out[j] = -sin_out[j];
  }
  if (!plan.attention_is_one) {
    for (int j = 0; j < plan.pairs; ++j) {
      cos_out[j] *= attention;
      sin_out[j] *= attention;
    }
  }
}

// The rotation of one pair; used by the SIMD body and the scalar tail alike.
template <class O>
inline void rotate(typename O::V x, typename O::V y, typename O::V c, typename O::V s, typename O::V& a,
                   typename O::V& b) {
  a = O::fmsub(x, c, O::mul(y, s));
  b = O::fmadd(x, s, O::mul(y, c));
}

template <class T>
void rotate_head(const PlanView& plan, const T* in, T* out, const double* cos_j, const double* sin_j) {
  using V = typename Ops::V;
  using SV = typename ScalarOps::V;
  const int pairs = plan.pairs;
  int j = 0;
  if (plan.layout == LayoutCode::half) {  // pair j = dims (j, j + pairs)
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

template <class T>
void rotate_tensor_row(const CallView& call, const TensorView& tensor, std::int64_t token, const double* cos_j,
                       const double* sin_j) {
  const T* in = static_cast<const T*>(tensor.input) + token * tensor.input_token_stride;
  T* out = static_cast<T*>(tensor.output) + token * tensor.output_token_stride;
  for (std::int64_t h = 0; h < tensor.heads; ++h) {
    rotate_head<T>(call.plan, in + h * tensor.input_head_stride, out + h * tensor.output_head_stride, cos_j, sin_j);
  }
}

// The table of one token (on the fly or from the cache) into cos_j / sin_j.
inline void token_table(const CallView& call, const std::int64_t* position_row, double* work, double* cos_j,
                        double* sin_j) {
  const int pairs = call.plan.pairs;
  if (call.cos_cache != nullptr) {
    switch (call.cache_dtype) {
      case DtypeCode::f64: load_cache<double>(call, position_row, cos_j, sin_j); break;
      case DtypeCode::f32: load_cache<float>(call, position_row, cos_j, sin_j); break;
      case DtypeCode::f16: load_cache<F16>(call, position_row, cos_j, sin_j); break;
      case DtypeCode::bf16: load_cache<BF16>(call, position_row, cos_j, sin_j); break;
    }
    return;
  }
  reduce_angles(call.plan, position_row, work, work + pairs, work + 2 * pairs);
  cos_sin(call.plan, work, work + pairs, work + 2 * pairs, cos_j, sin_j);
}

template <class T>
void process_typed(const CallView& call, std::int64_t token_begin, std::int64_t token_end, double* work) {
  const int pairs = call.plan.pairs;
  double* cos_j = work + 3 * pairs;
  double* sin_j = work + 4 * pairs;
  for (std::int64_t t = token_begin; t < token_end; ++t) {
    token_table(call, call.positions + t * call.plan.components, work, cos_j, sin_j);
    rotate_tensor_row<T>(call, call.q, t, cos_j, sin_j);
    if (call.k.heads > 0) rotate_tensor_row<T>(call, call.k, t, cos_j, sin_j);
  }
}

// Entry point of this ISA: tokens [token_begin, token_end) of a validated call;
// `work` holds workspace_doubles(pairs) doubles.
inline void process_tokens(const CallView& call, std::int64_t token_begin, std::int64_t token_end, double* work) {
  switch (call.plan.dtype) {
    case DtypeCode::f64: process_typed<double>(call, token_begin, token_end, work); break;
    case DtypeCode::f32: process_typed<float>(call, token_begin, token_end, work); break;
    case DtypeCode::f16: process_typed<F16>(call, token_begin, token_end, work); break;
    case DtypeCode::bf16: process_typed<BF16>(call, token_begin, token_end, work); break;
  }
}

// cos/sin tables [rows, pairs] for positions first .. first+rows-1 (single-axis plans), as doubles.
inline void cos_sin_rows(const PlanView& plan, std::int64_t first_position, std::int64_t rows, double* work,
                         double* cos_rows, double* sin_rows) {
  const int pairs = plan.pairs;
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t position = first_position + row;
    // every component of a multi-axis tuple set to the same position
    std::int64_t tuple[16];
    for (int k = 0; k < plan.components && k < 16; ++k) tuple[k] = position;
    reduce_angles(plan, tuple, work, work + pairs, work + 2 * pairs);
    cos_sin(plan, work, work + pairs, work + 2 * pairs, cos_rows + row * pairs, sin_rows + row * pairs);
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
