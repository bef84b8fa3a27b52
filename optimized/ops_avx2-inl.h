// AVX2 + FMA + F16C operations on 4 doubles (and 4 uint64 lanes); same contract as ScalarOps
// (ops_scalar-inl.h). Included INSIDE the avx2 kernel namespace (no include guard, no #include).

struct Avx2Ops {
  static constexpr int lanes = 4;
  static constexpr const char* name = "avx2";
  using V = __m256d;
  using U = __m256i;

  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V load(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
  static V load(const F16* p) {
    return _mm256_cvtps_pd(_mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static V load(const BF16* p) {
    const __m128i halves = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(halves), 16)));
  }

  // As convert-inl.h round_to_odd32, every lane: the binary32 value truncated, its last bit set
  // when inexact (NaNs as the conversion gives them).
  static __m128 narrow(V v) {
    const __m128 f = _mm256_cvtpd_ps(v);
    const V back = _mm256_cvtps_pd(f);
    const __m256i index = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);  // the low words of the 64-bit masks
    const __m128i away = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
        _mm256_castpd_si256(_mm256_cmp_pd(abs(back), abs(v), _CMP_GT_OQ)), index));
    const __m128i inexact = _mm256_castsi256_si128(
        _mm256_permutevar8x32_epi32(_mm256_castpd_si256(_mm256_cmp_pd(back, v, _CMP_NEQ_OQ)), index));
    const __m128i bits = _mm_add_epi32(_mm_castps_si128(f), away);  // away: −1
    return _mm_castsi128_ps(_mm_or_si128(bits, _mm_and_si128(inexact, _mm_set1_epi32(1))));
  }
  // 4 binary16 / bfloat16 results in the low 64 bits, rounded once (narrow, then to nearest even).
  static __m128i f16_bits(V v) {
    return _mm_cvtps_ph(narrow(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // narrow's binary32 values stored (kernel-inl.h settle_second32).
  static void store_odd(float* p, V v) { _mm_storeu_ps(p, narrow(v)); }
  static __m128i bf16_bits(V v) {
    const __m128 f = narrow(v);
    const __m128i bits = _mm_castps_si128(f);
    // round to nearest even: (bits + 0x7FFF + lowest kept bit) >> 16, as float_to_bf16
    const __m128i lowest_kept = _mm_and_si128(_mm_srli_epi32(bits, 16), _mm_set1_epi32(1));
    const __m128i rounded =
        _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(bits, _mm_set1_epi32(0x7FFF)), lowest_kept), 16);
    const __m128i quiet_nan = _mm_or_si128(_mm_srli_epi32(bits, 16), _mm_set1_epi32(0x40));
    const __m128i is_nan = _mm_castps_si128(_mm_cmpunord_ps(f, f));
    const __m128i result = _mm_blendv_epi8(rounded, quiet_nan, is_nan);
    return _mm_packus_epi32(result, result);
  }

  // 16-bit data, 8 elements at a time (two vectors of 4 doubles): the conversions run on 8 lanes
  // of binary32 at once, with the same per-lane results as load/store above (kernel-inl.h uses
  // them for the half layout; wide() says for which element types).
  static constexpr bool wide(const void*) { return false; }
  static constexpr bool wide(const F16*) { return true; }
  static constexpr bool wide(const BF16*) { return true; }
  static void split(__m256 f, V& lo, V& hi) {
    lo = _mm256_cvtps_pd(_mm256_castps256_ps128(f));
    hi = _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1));
  }
  static void load8(const F16* p, V& lo, V& hi) {
    split(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), lo, hi);
  }
  static void load8(const BF16* p, V& lo, V& hi) {
    const __m256i halves = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    split(_mm256_castsi256_ps(_mm256_slli_epi32(halves, 16)), lo, hi);
  }
  static void store8(F16* p, V lo, V hi) {
    const __m256 f = _mm256_set_m128(narrow(hi), narrow(lo));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static void store8(BF16* p, V lo, V hi) {
    const __m256 f = _mm256_set_m128(narrow(hi), narrow(lo));
    const __m256i bits = _mm256_castps_si256(f);
    const __m256i lowest_kept = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), lowest_kept), 16);
    const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
    const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
    const __m256i result = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);  // 8 values < 2^16
    // packus works per 128-bit half: (r0..r3 r0..r3 | r4..r7 r4..r7); gather qwords 0 and 2
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(result, result), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }

  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static void store(float* p, V v) { _mm_storeu_ps(p, _mm256_cvtpd_ps(v)); }
  static void store(F16* p, V v) { _mm_storel_epi64(reinterpret_cast<__m128i*>(p), f16_bits(v)); }
  static void store(BF16* p, V v) { _mm_storel_epi64(reinterpret_cast<__m128i*>(p), bf16_bits(v)); }
  // Non-temporal stores of f32 results (CallView::streaming_stores: p is 16-byte aligned).
  static void stream(float* p, V v) { _mm_stream_ps(p, _mm256_cvtpd_ps(v)); }
  static void stream_pairs(float* p, V x, V y) {
    const V xs = _mm256_permute4x64_pd(x, 0xD8);
    const V ys = _mm256_permute4x64_pd(y, 0xD8);
    stream(p, _mm256_unpacklo_pd(xs, ys));
    stream(p + 4, _mm256_unpackhi_pd(xs, ys));
  }
  // f64 results (kernel_f64-inl.h; p is 32-byte aligned)
  static void stream(double* p, V v) { _mm256_stream_pd(p, v); }
  static void stream_pairs(double* p, V x, V y) {
    const V xs = _mm256_permute4x64_pd(x, 0xD8);
    const V ys = _mm256_permute4x64_pd(y, 0xD8);
    stream(p, _mm256_unpacklo_pd(xs, ys));
    stream(p + 4, _mm256_unpackhi_pd(xs, ys));
  }
  static void fence() { _mm_sfence(); }

  static V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V fmsub(V a, V b, V c) { return _mm256_fmsub_pd(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V set(double v) { return _mm256_set1_pd(v); }
  static V abs(V a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
  // As ScalarOps::undecided: a bit per lane.
  // f64 data (kernel_f64-inl.h f64_rotate): the lanes where lo_a ≠ hi_a or lo_b ≠ hi_b (NaN included),
  // or not sum < limit (a result could overflow; NaN included).
  static int undecided_f64(V lo_a, V hi_a, V lo_b, V hi_b, V sum, V limit) {
    return _mm256_movemask_pd(_mm256_or_pd(_mm256_or_pd(_mm256_cmp_pd(lo_a, hi_a, _CMP_NEQ_UQ), _mm256_cmp_pd(lo_b, hi_b, _CMP_NEQ_UQ)),
                                           _mm256_cmp_pd(sum, limit, _CMP_NLT_UQ)));
  }
  static int undecided(const float*, V lo, V hi) {
    const __m128 a = _mm256_cvtpd_ps(lo);
    const __m128 b = _mm256_cvtpd_ps(hi);
    const __m128i same = _mm_cmpeq_epi32(_mm_castps_si128(a), _mm_castps_si128(b));
    return (~_mm_movemask_ps(_mm_castsi128_ps(same)) | _mm_movemask_ps(_mm_cmpunord_ps(a, a))) & 0xF;
  }
  static int undecided16(__m128i a, __m128i b, __m128 lo) {  // 4 results in the low 64 bits
    const __m128i same = _mm_cvtepi16_epi32(_mm_cmpeq_epi16(a, b));
    return (~_mm_movemask_ps(_mm_castsi128_ps(same)) | _mm_movemask_ps(_mm_cmpunord_ps(lo, lo))) & 0xF;
  }
  static int undecided(const F16*, V lo, V hi) { return undecided16(f16_bits(lo), f16_bits(hi), narrow(lo)); }
  static int undecided(const BF16*, V lo, V hi) { return undecided16(bf16_bits(lo), bf16_bits(hi), narrow(lo)); }
  // As ScalarOps::decided_by_bits32, every lane: the low words of a and b in one vector of 32-bit
  // lanes, and e against min(|a|, |b|) (vminpd drops a NaN a, which only a NaN or infinite input
  // gives, and that makes e NaN or +Inf, which fails the compare).
  static bool decided_by_bits32(V e, V a, V b, U offset, U most) {
    const __m256i cell = _mm256_set1_epi32((1 << 29) - 1);
    const V large = _mm256_cmp_pd(e, _mm256_min_pd(abs(a), abs(b)), _CMP_LT_OQ);
    const __m256i low = _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castpd_ps(a), _mm256_castpd_ps(b), 0x88));
    const __m256i near = _mm256_cmpgt_epi32(_mm256_and_si256(_mm256_add_epi32(low, offset), cell), most);
    return _mm256_movemask_ps(_mm256_andnot_ps(_mm256_castsi256_ps(near), _mm256_castpd_ps(large))) == 0xFF;
  }
  // Both outputs of the pairs at once (kernel-inl.h settle64): a lane fails if either does.
  static int undecided_pair(const float* t, V lo_a, V hi_a, V lo_b, V hi_b) {
    const __m128i differ =
        _mm_or_si128(_mm_xor_si128(_mm_castps_si128(_mm256_cvtpd_ps(lo_a)), _mm_castps_si128(_mm256_cvtpd_ps(hi_a))),
                     _mm_xor_si128(_mm_castps_si128(_mm256_cvtpd_ps(lo_b)), _mm_castps_si128(_mm256_cvtpd_ps(hi_b))));
    const int kept = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(differ, _mm_setzero_si128())));
    static_cast<void>(t);
    return (~kept | _mm256_movemask_pd(_mm256_cmp_pd(lo_a, lo_b, _CMP_UNORD_Q))) & 0xF;
  }
  template <class T>
  static int undecided_pair(const T* t, V lo_a, V hi_a, V lo_b, V hi_b) {
    return undecided(t, lo_a, hi_a) | undecided(t, lo_b, hi_b);
  }

  static U load_u(const std::uint64_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static U set_u(std::uint64_t v) { return _mm256_set1_epi64x(static_cast<long long>(v)); }
  static U add_u(U a, U b) { return _mm256_add_epi64(a, b); }
  static U and_u(U a, U b) { return _mm256_and_si256(a, b); }
  static U xor_u(U a, U b) { return _mm256_xor_si256(a, b); }
  template <int n>
  static U shl_u(U a) {
    return _mm256_slli_epi64(a, n);
  }
  template <int n>
  static U shr_u(U a) {
    return _mm256_srli_epi64(a, n);
  }
  static V as_double(U bits) { return _mm256_castsi256_pd(bits); }
  static U as_bits(V v) { return _mm256_castpd_si256(v); }
  static V select(U mask, V if_set, V if_clear) { return _mm256_blendv_pd(if_clear, if_set, _mm256_castsi256_pd(mask)); }
  // as ScalarOps::same_binary32, every lane (bits compared as integers: +0 and −0 differ)
  static bool same_binary32(V a, V b) {
    const __m128i equal = _mm_cmpeq_epi32(_mm_castps_si128(_mm256_cvtpd_ps(a)), _mm_castps_si128(_mm256_cvtpd_ps(b)));
    return _mm_movemask_epi8(equal) == 0xFFFF;
  }

  // (x0 y0 x1 y1)(x2 y2 x3 y3) -> x = (x0 x1 x2 x3), y = (y0 y1 y2 y3)
  template <class T>
  static void load_pairs(const T* p, V& x, V& y) {
    const V v0 = load(p);
    const V v1 = load(p + 4);
    x = _mm256_permute4x64_pd(_mm256_unpacklo_pd(v0, v1), 0xD8);
    y = _mm256_permute4x64_pd(_mm256_unpackhi_pd(v0, v1), 0xD8);
  }
  template <class T>
  static void store_pairs(T* p, V x, V y) {
    const V xs = _mm256_permute4x64_pd(x, 0xD8);  // (x0 x2 x1 x3)
    const V ys = _mm256_permute4x64_pd(y, 0xD8);
    store(p, _mm256_unpacklo_pd(xs, ys));      // (x0 y0 x1 y1)
    store(p + 4, _mm256_unpackhi_pd(xs, ys));  // (x2 y2 x3 y3)
  }
};

// AVX2 + FMA + F16C operations on 8 binary32 lanes: the rotation of 16-bit data on the fly; same
// contract as ScalarOps32 (ops_scalar-inl.h). Included INSIDE the avx2 kernel namespace.
struct Avx2Ops32 {
  static constexpr int lanes = 8;
  using V = __m256;

  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V load(const F16* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static V load(const BF16* p) {
    const __m256i words = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(words, 16));
  }

  static __m128i f16_bits(V v) { return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // bits + 0x7FFF + (lowest kept bit): the bfloat16 result, round to nearest even, in the high 16
  // bits of each lane (float_to_bf16 without its NaN branch). A NaN reaching a store here has zero
  // low 16 bits — it is an input converted from bfloat16 or the default NaN, quieted by an x86
  // operation that keeps the payload (the table's cos/sin are finite) — so the addition carries
  // nothing out of them and gives float_to_bf16's (bits >> 16) | 0x40 (the quiet bit is set).
  static __m256i bf16_rounded_high(V v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i lowest_kept = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    return _mm256_add_epi32(bits, _mm256_add_epi32(lowest_kept, _mm256_set1_epi32(0x7FFF)));
  }
  static void store(F16* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), f16_bits(v)); }
  static __m128i bf16_bits(V v) {
    const __m256i halves = _mm256_srli_epi32(bf16_rounded_high(v), 16);  // 8 values < 2^16
    return _mm_packus_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
  }
  static void store(BF16* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bf16_bits(v)); }
  // Non-temporal stores (CallView::streaming_stores: p is 16-byte aligned).
  static void stream(F16* p, V v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), f16_bits(v)); }
  static void stream(BF16* p, V v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), bf16_bits(v)); }

  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fmsub(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V set(float v) { return _mm256_set1_ps(v); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  // As ScalarOps32::undecided: a bit per lane.
  static int undecided(const F16*, V lo, V hi) {
    const __m256i same = _mm256_cvtepi16_epi32(_mm_cmpeq_epi16(f16_bits(lo), f16_bits(hi)));
    return (~_mm256_movemask_ps(_mm256_castsi256_ps(same)) | _mm256_movemask_ps(_mm256_cmp_ps(lo, lo, _CMP_UNORD_Q))) &
           0xFF;
  }
  static int undecided(const BF16*, V lo, V hi) {
    const __m256i mask = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
    const __m256i a = _mm256_and_si256(bf16_rounded_high(lo), mask);
    const __m256i b = _mm256_and_si256(bf16_rounded_high(hi), mask);
    return (~_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b))) |
            _mm256_movemask_ps(_mm256_cmp_ps(lo, lo, _CMP_UNORD_Q))) &
           0xFF;
  }
  // Both outputs of the pairs at once by conversion (undecided_cells' binary16 pairs below its
  // cells' floor): a lane fails if either does, or if lo_a or lo_b is NaN.
  static int undecided_pair(const F16*, V lo_a, V hi_a, V lo_b, V hi_b) {
    const __m128i differ = _mm_or_si128(_mm_xor_si128(f16_bits(lo_a), f16_bits(hi_a)),
                                        _mm_xor_si128(f16_bits(lo_b), f16_bits(hi_b)));
    const __m128i same = _mm_cmpeq_epi16(differ, _mm_setzero_si128());
    const int kept = _mm_movemask_epi8(_mm_packs_epi16(same, same)) & 0xFF;
    return (~kept | _mm256_movemask_ps(_mm256_cmp_ps(lo_a, lo_b, _CMP_UNORD_Q))) & 0xFF;
  }

  // kernel-inl.h decide32's cell test (ScalarOps32::undecided_cells: the same decision per lane):
  // the keys of lo and hi of both outputs compared at once (cell_differ: nonzero under the cell
  // mask where a lane fails), so a vector whose lanes all pass costs one vptest; the lanes are
  // sorted out only when some fail.
  static __m256i cell_differ(std::uint32_t bias, V lo_a, V hi_a, V lo_b, V hi_b) {
    const __m256i b = _mm256_set1_epi32(static_cast<int>(bias));
    const auto key = [b](V v) { return _mm256_add_epi32(_mm256_castps_si256(v), b); };
    return _mm256_or_si256(_mm256_xor_si256(key(lo_a), key(hi_a)), _mm256_xor_si256(key(lo_b), key(hi_b)));
  }
  static int lanes_set(__m256i v, __m256i mask) {
    const __m256i zero = _mm256_cmpeq_epi32(_mm256_and_si256(v, mask), _mm256_setzero_si256());
    return ~_mm256_movemask_ps(_mm256_castsi256_ps(zero)) & 0xFF;
  }
  static int undecided_cells(const F16* t, V a, V lo_a, V hi_a, V b, V lo_b, V hi_b) {
    const __m256i differ = cell_differ(kHalfCellBias, lo_a, hi_a, lo_b, hi_b);
    const V floor = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(kHalfCellFloorBits)));
    const V below = _mm256_or_ps(_mm256_cmp_ps(abs(a), floor, _CMP_NGE_UQ), _mm256_cmp_ps(abs(b), floor, _CMP_NGE_UQ));
    const __m256i mask = _mm256_set1_epi32(static_cast<int>(kHalfCellMask));
    if (__builtin_expect(_mm256_testz_si256(_mm256_or_si256(differ, _mm256_castps_si256(below)), mask), 1)) return 0;
    const int low = _mm256_movemask_ps(below);
    return (lanes_set(differ, mask) & ~low) | (undecided_pair(t, lo_a, hi_a, lo_b, hi_b) & low);
  }
  static int undecided_cells(const BF16*, V a, V lo_a, V hi_a, V b, V lo_b, V hi_b) {
    K key_a;
    K key_b;
    return undecided_cells_keys(a, lo_a, hi_a, b, lo_b, hi_b, key_a, key_b);
  }
  // bfloat16, also giving the keys of lo_a and lo_b (kernel-inl.h decide32_keys).
  using K = __m256i;
  static int undecided_cells_keys(V a, V lo_a, V hi_a, V b, V lo_b, V hi_b, K& key_a, K& key_b) {
    const __m256i bias = _mm256_set1_epi32(static_cast<int>(kBf16CellBias));
    key_a = _mm256_add_epi32(_mm256_castps_si256(lo_a), bias);
    key_b = _mm256_add_epi32(_mm256_castps_si256(lo_b), bias);
    const __m256i differ = _mm256_or_si256(_mm256_xor_si256(key_a, _mm256_add_epi32(_mm256_castps_si256(hi_a), bias)),
                                           _mm256_xor_si256(key_b, _mm256_add_epi32(_mm256_castps_si256(hi_b), bias)));
    const __m256i failed = _mm256_or_si256(differ, _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_UNORD_Q)));
    const __m256i mask = _mm256_set1_epi32(static_cast<int>(kBf16CellMask));
    if (__builtin_expect(_mm256_testz_si256(failed, mask), 1)) return 0;
    return lanes_set(failed, mask);
  }
  // The words of x and y (x in the low halves) from keys whose high halves are their bfloat16 bits
  // (kernel-inl.h decide32_keys: every lane passed): bf16_pair_words(x, y)'s words.
  static __m256i key_pair_words(K key_x, K key_y) { return _mm256_blend_epi16(_mm256_srli_epi32(key_x, 16), key_y, 0xAA); }
  static void store_words(BF16* p, __m256i words) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), words); }
  static void stream_words(BF16* p, __m256i words) { _mm256_stream_si256(reinterpret_cast<__m256i*>(p), words); }

  // bfloat16 in blocks of 16 elements (kernel-inl.h rotate_blocks, half layout): one 32-byte load
  // holds 16 elements in 8 words; shifting each word left by 16 bits gives the binary32 values of
  // the even elements (0 2 … 14), masking its low half those of the odd ones (1 3 … 15), and the
  // results go back the same way (bf16_pair_words). The token's binary32 table is split once into
  // the same even/odd order per block (split_block), so that one block costs no shuffles. The same
  // values as the 8-element loads and stores, in fewer instructions.
  static constexpr bool even_odd_blocks(const void*) { return false; }
  static constexpr bool even_odd_blocks(const BF16*) { return true; }
  static constexpr int block_pairs = 2 * lanes;
  // 16 table entries in place: (0 1 … 15) → (0 2 … 14 | 1 3 … 15).
  static void split_block(float* p) {
    const V first = _mm256_loadu_ps(p);
    const V second = _mm256_loadu_ps(p + 8);
    // shuffle_ps per 128-bit half: (f0 f2 s0 s2 | f4 f6 s4 s6); qwords 0 2 1 3 give (f0 f2 f4 f6 s0 s2 s4 s6)
    const __m256d even = _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(first, second, 0x88)), 0xD8);
    const __m256d odd = _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(first, second, 0xDD)), 0xD8);
    _mm256_storeu_ps(p, _mm256_castpd_ps(even));
    _mm256_storeu_ps(p + 8, _mm256_castpd_ps(odd));
  }

  // Interleaved pairs, 8 pairs (16 elements): each 32-bit word holds a pair, x in its low half.
  static void load_pairs(const BF16* p, V& x, V& y) {
    const __m256i words = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    x = _mm256_castsi256_ps(_mm256_slli_epi32(words, 16));
    y = _mm256_castsi256_ps(_mm256_and_si256(words, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
  static void load_pairs(const F16* p, V& x, V& y) {
    const __m256i words = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i xs = _mm256_and_si256(words, _mm256_set1_epi32(0xFFFF));
    const __m256i ys = _mm256_srli_epi32(words, 16);
    // packus per 128-bit half: (x0..x3 y0..y3 | x4..x7 y4..y7); qwords 0 2 1 3 give (x0..x7 | y0..y7)
    const __m256i halves = _mm256_permute4x64_epi64(_mm256_packus_epi32(xs, ys), 0xD8);
    x = _mm256_cvtph_ps(_mm256_castsi256_si128(halves));
    y = _mm256_cvtph_ps(_mm256_extracti128_si256(halves, 1));
  }
  // The bfloat16 words of x (low halves) and y (high halves), rounded to nearest even as
  // bf16_rounded_high, in 16-bit lanes: the truncated results t (x's high half moved down, y's in
  // place) and the dropped halves d (x's in place, y's moved up), then per 16-bit lane the carry of
  // d + 0x7FFF + (lowest kept bit of t) out of 16 bits — the top bit of
  // avg(d, 0x7FFE + lowest kept bit) = (d + lowest kept bit + 0x7FFF) >> 1 (vpavgw rounds up, in
  // 17 bits) — added to t: the high halves of the 32-bit sums of bf16_rounded_high (mod 2^16), so
  // the same words for every input, in 9 instructions instead of 11.
  static __m256i bf16_pair_words(V x, V y) {
    const __m256i x_bits = _mm256_castps_si256(x);
    const __m256i y_bits = _mm256_castps_si256(y);
    const __m256i truncated = _mm256_blend_epi16(_mm256_srli_epi32(x_bits, 16), y_bits, 0xAA);
    const __m256i dropped = _mm256_blend_epi16(x_bits, _mm256_slli_epi32(y_bits, 16), 0xAA);
    const __m256i lowest_kept = _mm256_and_si256(truncated, _mm256_set1_epi16(1));
    const __m256i half_sum = _mm256_avg_epu16(dropped, _mm256_or_si256(lowest_kept, _mm256_set1_epi16(0x7FFE)));
    return _mm256_add_epi16(truncated, _mm256_srli_epi16(half_sum, 15));
  }
  static void store_pairs(BF16* p, V x, V y) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), bf16_pair_words(x, y));
  }
  static void store_pairs(F16* p, V x, V y) {
    const __m128i xs = f16_bits(x);
    const __m128i ys = f16_bits(y);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm_unpacklo_epi16(xs, ys));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p) + 1, _mm_unpackhi_epi16(xs, ys));
  }
  static void stream_pairs(BF16* p, V x, V y) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(p), bf16_pair_words(x, y));
  }
  static void stream_pairs(F16* p, V x, V y) {
    const __m128i xs = f16_bits(x);
    const __m128i ys = f16_bits(y);
    _mm_stream_si128(reinterpret_cast<__m128i*>(p), _mm_unpacklo_epi16(xs, ys));
    _mm_stream_si128(reinterpret_cast<__m128i*>(p) + 1, _mm_unpackhi_epi16(xs, ys));
  }
};
