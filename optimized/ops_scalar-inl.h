// Scalar "vector" operations (one lane): the portable kernel, the tail loops of the SIMD kernels,
// and the CUDA kernel (one lane per thread; every function is ROPECHECK_HD,
// optimized/host_device.h). Every SIMD Ops struct (ops_avx2-inl.h, ops_avx512-inl.h) provides the
// same functions with the same IEEE results per lane: loads convert the element exactly to double,
// fmadd/fmsub are fused (one rounding), stores round double -> binary32 (-> binary16/bfloat16) to
// nearest even; the U lanes are 64-bit unsigned integers (exact, wrapping).
//
// Included INSIDE each kernel's namespace, after convert-inl.h (no include guard, no #include).

struct ScalarOps {
  static constexpr int lanes = 1;
  static constexpr const char* name = "scalar";
  using V = double;
  // no 8-element 16-bit path (Avx2Ops::wide): this Ops' own lanes are used
  static constexpr bool wide(const void*) { return false; }
  using U = std::uint64_t;

  ROPECHECK_HD static V load(const double* p) { return *p; }
  ROPECHECK_HD static V load(const float* p) { return static_cast<double>(*p); }
  ROPECHECK_HD static V load(const F16* p) { return static_cast<double>(half_to_float(p->bits)); }
  ROPECHECK_HD static V load(const BF16* p) { return static_cast<double>(bf16_to_float(p->bits)); }

  ROPECHECK_HD static void store(double* p, V v) { *p = v; }
  ROPECHECK_HD static void store(float* p, V v) { *p = static_cast<float>(v); }
  // double -> binary16/bfloat16 rounded once: to binary32 by round-to-odd, then to nearest even
  // (convert-inl.h round_to_odd32), as the SIMD kernels do.
  ROPECHECK_HD static void store(F16* p, V v) { p->bits = float_to_half(round_to_odd32(v)); }
  ROPECHECK_HD static void store(BF16* p, V v) { p->bits = float_to_bf16(round_to_odd32(v)); }
  // convert-inl.h round_to_odd32 stored (kernel-inl.h settle_second32).
  ROPECHECK_HD static void store_odd(float* p, V v) { *p = round_to_odd32(v); }
  // Non-temporal stores (CallView::streaming_stores): plain stores in one lane.
  template <class T>
  ROPECHECK_HD static void stream(T* p, V v) {
    store(p, v);
  }
  template <class T>
  ROPECHECK_HD static void stream_pairs(T* p, V x, V y) {
    store_pairs(p, x, y);
  }
  ROPECHECK_HD static void fence() {}

  // a·b + c and a·b − c, one rounding (::fma: the C library's on the host, the device's on CUDA).
  ROPECHECK_HD static V fmadd(V a, V b, V c) { return ::fma(a, b, c); }
  ROPECHECK_HD static V fmsub(V a, V b, V c) { return ::fma(a, b, -c); }
  ROPECHECK_HD static V mul(V a, V b) { return a * b; }
  ROPECHECK_HD static V add(V a, V b) { return a + b; }
  ROPECHECK_HD static V sub(V a, V b) { return a - b; }
  ROPECHECK_HD static V set(double v) { return v; }
  ROPECHECK_HD static V abs(V a) { return ::fabs(a); }

  // The rounding test (kernel-inl.h `decided64`): the lanes (bit i: lane i) where lo and hi round to
  // different values of T by this Ops' stores, or lo is NaN (every NaN takes the slow path).
  // f64 data (kernel_f64-inl.h f64_rotate): lo_a ≠ hi_a or lo_b ≠ hi_b (NaN included), or not
  // sum < limit (a result could overflow; NaN included).
  static int undecided_f64(V lo_a, V hi_a, V lo_b, V hi_b, V sum, V limit) {
    return lo_a != hi_a || lo_b != hi_b || !(sum < limit) ? 1 : 0;
  }
  static int undecided(const float*, V lo, V hi) {
    const float a = static_cast<float>(lo);
    const float b = static_cast<float>(hi);
    std::uint32_t bits_a;
    std::uint32_t bits_b;
    std::memcpy(&bits_a, &a, sizeof bits_a);
    std::memcpy(&bits_b, &b, sizeof bits_b);
    return bits_a != bits_b || a != a ? 1 : 0;
  }
  static int undecided(const F16*, V lo, V hi) {
    const float a = round_to_odd32(lo);
    return float_to_half(a) != float_to_half(round_to_odd32(hi)) || a != a ? 1 : 0;
  }
  static int undecided(const BF16*, V lo, V hi) {
    const float a = round_to_odd32(lo);
    return float_to_bf16(a) != float_to_bf16(round_to_odd32(hi)) || a != a ? 1 : 0;
  }
  // The test by the bits of f32 data (kernel-inl.h Decide64, settle64): whether e < |a|, e < |b|
  // (false on NaN) and the low 32 bits of a and of b plus the low 32 bits of `offset`, modulo 2^29,
  // are at most the low 32 bits of `most`.
  static bool decided_by_bits32(V e, V a, V b, U offset, U most) {
    constexpr std::uint32_t cell = (std::uint32_t{1} << 29) - 1;
    const auto near = [&](V v) {
      return ((static_cast<std::uint32_t>(as_bits(v)) + static_cast<std::uint32_t>(offset)) & cell) >
             static_cast<std::uint32_t>(most);
    };
    return e < ::fabs(a) && e < ::fabs(b) && !near(a) && !near(b);
  }
  // Both outputs of a pair (kernel-inl.h settle64): 1 if either fails.
  template <class T>
  static int undecided_pair(const T* t, V lo_a, V hi_a, V lo_b, V hi_b) {
    return undecided(t, lo_a, hi_a) | undecided(t, lo_b, hi_b);
  }

  // 64-bit integer lanes
  ROPECHECK_HD static U load_u(const std::uint64_t* p) { return *p; }
  ROPECHECK_HD static U set_u(std::uint64_t v) { return v; }
  ROPECHECK_HD static U add_u(U a, U b) { return a + b; }
  ROPECHECK_HD static U and_u(U a, U b) { return a & b; }
  ROPECHECK_HD static U xor_u(U a, U b) { return a ^ b; }
  template <int n>
  ROPECHECK_HD static U shl_u(U a) {
    return a << n;
  }
  template <int n>
  ROPECHECK_HD static U shr_u(U a) {
    return a >> n;
  }
  ROPECHECK_HD static V as_double(U bits) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(bits));
#else
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
#endif
  }
  ROPECHECK_HD static U as_bits(V v) {
#if defined(__CUDA_ARCH__)
    return static_cast<U>(__double_as_longlong(v));
#else
    U bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits;
#endif
  }
  // Whether a and b round to the same binary32 bits (kernel-inl.h next_table_by_rotation; host only).
  static bool same_binary32(V a, V b) {
    const float fa = static_cast<float>(a);
    const float fb = static_cast<float>(b);
    std::uint32_t bits_a;
    std::uint32_t bits_b;
    std::memcpy(&bits_a, &fa, sizeof bits_a);
    std::memcpy(&bits_b, &fb, sizeof bits_b);
    return bits_a == bits_b;
  }
  // if_set where bit 63 of mask is set, else if_clear (as vblendvpd).
  ROPECHECK_HD static V select(U mask, V if_set, V if_clear) { return (mask >> 63) != 0 ? if_set : if_clear; }

  // Interleaved pairs: p[2i] is x_i, p[2i+1] is y_i.
  template <class T>
  ROPECHECK_HD static void load_pairs(const T* p, V& x, V& y) {
    x = load(p);
    y = load(p + 1);
  }
  template <class T>
  ROPECHECK_HD static void store_pairs(T* p, V x, V y) {
    store(p, x);
    store(p + 1, y);
  }
};

// Binary32 lanes (one): the rotation of 16-bit data on the fly (kernel-inl.h rotate_pairs_binary32;
// error_bounds.h "16-bit data"). Loads convert binary16/bfloat16 exactly to binary32; stores round
// binary32 to binary16/bfloat16 to nearest even (convert-inl.h, bit-exact with the SIMD
// conversions); fmadd/fmsub are fused (one rounding). Every SIMD Ops32 struct gives the same IEEE
// results per lane. Also the CUDA kernel's (::fmaf is the device's fused operation there).
struct ScalarOps32 {
  static constexpr int lanes = 1;
  using V = float;
  // no even/odd blocks (Avx2Ops32::even_odd_blocks): this Ops32's own lanes are used
  static constexpr bool even_odd_blocks(const void*) { return false; }
  static constexpr int block_pairs = 2 * lanes;

  ROPECHECK_HD static V load(const float* p) { return *p; }
  ROPECHECK_HD static void store(float* p, V v) { *p = v; }
  ROPECHECK_HD static V load(const F16* p) { return half_to_float(p->bits); }
  ROPECHECK_HD static V load(const BF16* p) { return bf16_to_float(p->bits); }
  ROPECHECK_HD static void store(F16* p, V v) { p->bits = float_to_half(v); }
  ROPECHECK_HD static void store(BF16* p, V v) { p->bits = float_to_bf16(v); }
  template <class T>
  ROPECHECK_HD static void stream(T* p, V v) {
    store(p, v);
  }
  template <class T>
  ROPECHECK_HD static void stream_pairs(T* p, V x, V y) {
    store_pairs(p, x, y);
  }

  ROPECHECK_HD static V fmadd(V a, V b, V c) { return ::fmaf(a, b, c); }
  ROPECHECK_HD static V fmsub(V a, V b, V c) { return ::fmaf(a, b, -c); }
  ROPECHECK_HD static V mul(V a, V b) { return a * b; }
  ROPECHECK_HD static V add(V a, V b) { return a + b; }
  ROPECHECK_HD static V sub(V a, V b) { return a - b; }
  ROPECHECK_HD static V set(float v) { return v; }
  ROPECHECK_HD static V abs(V a) { return ::fabsf(a); }
  // As ScalarOps::undecided, binary32 lanes.
  static int undecided(const F16*, V lo, V hi) { return float_to_half(lo) != float_to_half(hi) || lo != lo ? 1 : 0; }
  static int undecided(const BF16*, V lo, V hi) { return float_to_bf16(lo) != float_to_bf16(hi) || lo != lo ? 1 : 0; }
  template <class T>
  static int undecided_pair(const T* t, V lo_a, V hi_a, V lo_b, V hi_b) {
    return undecided(t, lo_a, hi_a) | undecided(t, lo_b, hi_b);
  }
  // kernel-inl.h decide32's cell test for one pair (error_bounds.h "ROUNDING TEST", THE CELL TEST;
  // the SIMD Ops32 decide every lane the same way): it fails where lo and hi of either output lie in
  // different cells (convert-inl.h same_cell) or an output is NaN; binary16 pairs with |a| or |b|
  // below kHalfCellFloorBits (or NaN) take the conversions' test instead (undecided_pair).
  static int undecided_cells(const F16* t, V a, V lo_a, V hi_a, V b, V lo_b, V hi_b) {
    const float floor = bits_to_float(kHalfCellFloorBits);
    if (!(::fabsf(a) >= floor) || !(::fabsf(b) >= floor)) return undecided_pair(t, lo_a, hi_a, lo_b, hi_b);
    const bool kept = same_cell(float_to_bits(lo_a), float_to_bits(hi_a), kHalfCellBias, kHalfCellMask) &&
                      same_cell(float_to_bits(lo_b), float_to_bits(hi_b), kHalfCellBias, kHalfCellMask);
    return kept ? 0 : 1;
  }
  static int undecided_cells(const BF16*, V a, V lo_a, V hi_a, V b, V lo_b, V hi_b) {
    if (a != a || b != b) return 1;
    const bool kept = same_cell(float_to_bits(lo_a), float_to_bits(hi_a), kBf16CellBias, kBf16CellMask) &&
                      same_cell(float_to_bits(lo_b), float_to_bits(hi_b), kBf16CellBias, kBf16CellMask);
    return kept ? 0 : 1;
  }

  template <class T>
  ROPECHECK_HD static void load_pairs(const T* p, V& x, V& y) {
    x = load(p);
    y = load(p + 1);
  }
  template <class T>
  ROPECHECK_HD static void store_pairs(T* p, V x, V y) {
    store(p, x);
    store(p + 1, y);
  }
};
