// AVX-512F operations on 8 doubles and 8 uint64 lanes (with AVX2/FMA/F16C for the 16-bit conversions); same
// contract as ScalarOps (ops_scalar-inl.h). Included INSIDE the avx512 kernel namespace.

struct Avx512Ops {
  static constexpr int lanes = 8;
  static constexpr const char* name = "avx512";
  using V = __m512d;
  using U = __m512i;
  // no 8-element 16-bit path (Avx2Ops::wide): this Ops' own lanes are used
  static constexpr bool wide(const void*) { return false; }

  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V load(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
  static V load(const F16* p) {
    return _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static V load(const BF16* p) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16)));
  }

  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, _mm512_cvtpd_ps(v)); }
  // As convert-inl.h round_to_odd32, every lane (Avx2Ops::narrow).
  static __m256 narrow(V v) {
    const __m256 f = _mm512_cvtpd_ps(v);
    const V back = _mm512_cvtps_pd(f);
    const __mmask16 away = _mm512_cmp_pd_mask(abs(back), abs(v), _CMP_GT_OQ);
    const __mmask16 inexact = _mm512_cmp_pd_mask(back, v, _CMP_NEQ_OQ);
    __m512i bits = _mm512_castsi256_si512(_mm256_castps_si256(f));
    bits = _mm512_mask_sub_epi32(bits, away, bits, _mm512_set1_epi32(1));
    bits = _mm512_mask_or_epi32(bits, inexact, bits, _mm512_set1_epi32(1));
    return _mm256_castsi256_ps(_mm512_castsi512_si256(bits));
  }
  // 8 binary16 / bfloat16 results, rounded once (narrow, then to nearest even).
  static __m128i f16_bits(V v) {
    return _mm256_cvtps_ph(narrow(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // narrow's binary32 values stored (kernel-inl.h settle_second32).
  static void store_odd(float* p, V v) { _mm256_storeu_ps(p, narrow(v)); }
  static __m128i bf16_bits(V v) {
    const __m256 f = narrow(v);
    const __m256i bits = _mm256_castps_si256(f);
    const __m256i lowest_kept = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), lowest_kept), 16);
    const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
    const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
    const __m256i result = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
    // vpmovdw: 8 × int32 -> 8 × int16 (values are < 2^16, truncation is exact)
    const __m256i packed = _mm512_cvtepi32_epi16(_mm512_castsi256_si512(result));
    return _mm256_castsi256_si128(packed);
  }
  static void store(F16* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), f16_bits(v)); }
  static void store(BF16* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bf16_bits(v)); }
  // Non-temporal stores of f32 results (CallView::streaming_stores: p is 32-byte aligned).
  static void stream(float* p, V v) { _mm256_stream_ps(p, _mm512_cvtpd_ps(v)); }
  static void stream_pairs(float* p, V x, V y) {
    stream(p, _mm512_permutex2var_pd(x, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), y));
    stream(p + 8, _mm512_permutex2var_pd(x, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), y));
  }
  // f64 results (kernel_f64-inl.h; p is 64-byte aligned)
  static void stream(double* p, V v) { _mm512_stream_pd(p, v); }
  static void stream_pairs(double* p, V x, V y) {
    stream(p, _mm512_permutex2var_pd(x, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), y));
    stream(p + 8, _mm512_permutex2var_pd(x, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), y));
  }
  static void fence() { _mm_sfence(); }

  static V fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V fmsub(V a, V b, V c) { return _mm512_fmsub_pd(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static V set(double v) { return _mm512_set1_pd(v); }
  static V abs(V a) { return _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(a), _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll))); }
  // As Avx2Ops::undecided_f64.
  static int undecided_f64(V lo_a, V hi_a, V lo_b, V hi_b, V sum, V limit) {
    return _mm512_cmp_pd_mask(lo_a, hi_a, _CMP_NEQ_UQ) | _mm512_cmp_pd_mask(lo_b, hi_b, _CMP_NEQ_UQ) |
           _mm512_cmp_pd_mask(sum, limit, _CMP_NLT_UQ);
  }
  // As ScalarOps::undecided: a bit per lane.
  static int undecided(const float*, V lo, V hi) {
    const __m256 a = _mm512_cvtpd_ps(lo);
    const __m256 b = _mm512_cvtpd_ps(hi);
    const __m256i same = _mm256_cmpeq_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b));
    return (~_mm256_movemask_ps(_mm256_castsi256_ps(same)) | _mm256_movemask_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q))) &
           0xFF;
  }
  static int undecided16(__m128i a, __m128i b, __m256 lo) {  // 8 results
    const __m256i same = _mm256_cvtepi16_epi32(_mm_cmpeq_epi16(a, b));
    return (~_mm256_movemask_ps(_mm256_castsi256_ps(same)) | _mm256_movemask_ps(_mm256_cmp_ps(lo, lo, _CMP_UNORD_Q))) &
           0xFF;
  }
  static int undecided(const F16*, V lo, V hi) { return undecided16(f16_bits(lo), f16_bits(hi), narrow(lo)); }
  static int undecided(const BF16*, V lo, V hi) { return undecided16(bf16_bits(lo), bf16_bits(hi), narrow(lo)); }
  // As Avx2Ops::decided_by_bits32.
  static bool decided_by_bits32(V e, V a, V b, U offset, U most) {
    const __m512i cell = _mm512_set1_epi32((1 << 29) - 1);
    const __mmask8 large = _mm512_cmp_pd_mask(e, _mm512_min_pd(abs(a), abs(b)), _CMP_LT_OQ);
    const __m512i low = _mm512_castps_si512(_mm512_shuffle_ps(_mm512_castpd_ps(a), _mm512_castpd_ps(b), 0x88));
    const __mmask16 near = _mm512_cmpgt_epi32_mask(_mm512_and_si512(_mm512_add_epi32(low, offset), cell), most);
    return ((static_cast<unsigned>(large) ^ 0xFFu) | static_cast<unsigned>(near)) == 0;
  }
  // Both outputs of the pairs at once (kernel-inl.h settle64): a lane fails if either does.
  static int undecided_pair(const float* t, V lo_a, V hi_a, V lo_b, V hi_b) {
    const __m256i differ = _mm256_or_si256(
        _mm256_xor_si256(_mm256_castps_si256(_mm512_cvtpd_ps(lo_a)), _mm256_castps_si256(_mm512_cvtpd_ps(hi_a))),
        _mm256_xor_si256(_mm256_castps_si256(_mm512_cvtpd_ps(lo_b)), _mm256_castps_si256(_mm512_cvtpd_ps(hi_b))));
    const __m512i wide = _mm512_zextsi256_si512(differ);
    static_cast<void>(t);
    return static_cast<int>((_mm512_test_epi32_mask(wide, wide) | _mm512_cmp_pd_mask(lo_a, lo_b, _CMP_UNORD_Q)) & 0xFF);
  }
  template <class T>
  static int undecided_pair(const T* t, V lo_a, V hi_a, V lo_b, V hi_b) {
    return undecided(t, lo_a, hi_a) | undecided(t, lo_b, hi_b);
  }

  static U load_u(const std::uint64_t* p) { return _mm512_loadu_si512(p); }
  static U set_u(std::uint64_t v) { return _mm512_set1_epi64(static_cast<long long>(v)); }
  static U add_u(U a, U b) { return _mm512_add_epi64(a, b); }
  static U and_u(U a, U b) { return _mm512_and_si512(a, b); }
  static U xor_u(U a, U b) { return _mm512_xor_si512(a, b); }
  template <int n>
  static U shl_u(U a) {
    return _mm512_slli_epi64(a, n);
  }
  template <int n>
  static U shr_u(U a) {
    return _mm512_srli_epi64(a, n);
  }
  static V as_double(U bits) { return _mm512_castsi512_pd(bits); }
  static U as_bits(V v) { return _mm512_castpd_si512(v); }
  // as ScalarOps::same_binary32, every lane (bits compared as integers: +0 and −0 differ)
  static bool same_binary32(V a, V b) {
    const __m256i equal = _mm256_cmpeq_epi32(_mm256_castps_si256(_mm512_cvtpd_ps(a)), _mm256_castps_si256(_mm512_cvtpd_ps(b)));
    return _mm256_movemask_epi8(equal) == -1;
  }
  static V select(U mask, V if_set, V if_clear) {
    const __mmask8 set = _mm512_test_epi64_mask(mask, _mm512_set1_epi64(static_cast<long long>(1ull << 63)));
    return _mm512_mask_blend_pd(set, if_clear, if_set);
  }

  template <class T>
  static void load_pairs(const T* p, V& x, V& y) {
    const V v0 = load(p);
    const V v1 = load(p + 8);
    x = _mm512_permutex2var_pd(v0, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), v1);
    y = _mm512_permutex2var_pd(v0, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), v1);
  }
  template <class T>
  static void store_pairs(T* p, V x, V y) {
    store(p, _mm512_permutex2var_pd(x, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), y));
    store(p + 8, _mm512_permutex2var_pd(x, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), y));
  }
};

// AVX-512F operations on 16 binary32 lanes: the rotation of 16-bit data on the fly; same contract as
// ScalarOps32 (ops_scalar-inl.h). Included INSIDE the avx512 kernel namespace.
struct Avx512Ops32 {
  static constexpr int lanes = 16;
  using V = __m512;
  // bfloat16 in even/odd blocks of 32 elements (kernel-inl.h rotate_blocks, half layout), as
  // Avx2Ops32's blocks of 16: one 64-byte load's 16 words shifted and masked give the even and odd
  // elements as binary32 (load_pairs), the results go back as words (pair_words), and the table is
  // split once per token into the same order (split_block). Per 32 elements that is 2 instructions
  // to widen instead of 4 (two vpmovzxwd and two shifts), and one store instead of two vpmovdw and
  // two stores, so fewer instructions per element than the loads and stores they sit between
  // (the figures: bench/README.md "Even/odd blocks on AVX-512").
  // The avx512bf16 kernel's words come from vcvtne2ps2bf16 (pair_words).
  static constexpr bool even_odd_blocks(const void*) { return false; }
  static constexpr bool even_odd_blocks(const BF16*) { return true; }
  static constexpr int block_pairs = 2 * lanes;
  // 32 table entries in place: (0 1 … 31) → (0 2 … 30 | 1 3 … 31).
  static void split_block(float* p) {
    const V first = _mm512_loadu_ps(p);
    const V second = _mm512_loadu_ps(p + 16);
    const __m512i even_index = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd_index = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const V even = _mm512_permutex2var_ps(first, even_index, second);  // index 16 + k: second[k]
    const V odd = _mm512_permutex2var_ps(first, odd_index, second);
    _mm512_storeu_ps(p, even);
    _mm512_storeu_ps(p + 16, odd);
  }

  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V load(const F16* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static V load(const BF16* p) {
    const __m512i words = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(words, 16));
  }

  static __m256i f16_bits(V v) { return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // As Avx2Ops32::bf16_rounded_high (the same argument about NaNs holds).
  static __m512i bf16_rounded_high(V v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i lowest_kept = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    return _mm512_add_epi32(bits, _mm512_add_epi32(lowest_kept, _mm512_set1_epi32(0x7FFF)));
  }
  static void store(F16* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), f16_bits(v)); }
#if defined(__AVX512BF16__)
  // The avx512bf16 kernel (isa/kernel_avx512bf16.cpp) rounds with vcvtneps2bf16, which gives
  // bf16_rounded_high's bits for every input but one kind: it takes binary32 subnormals as zeros
  // (its DAZ and FTZ are fixed, MXCSR is not read; Intel SDM, VCVTNEPS2BF16). Normal values round
  // to nearest even as the integer code does (the same bias 0x7FFF + lowest kept bit), ±Inf stay,
  // overflow gives ±Inf; a NaN keeps its high half with the quiet bit set — the integer code's
  // bits for the kernels' NaNs, which are quiet with a zero low half (the argument above). So a
  // vector holding a subnormal (vfpclassps category 0x20: never in a rotation of normal data) takes
  // the integer code, the cold path; the others the instruction.
  static bool has_subnormal(V v) { return _mm512_fpclass_ps_mask(v, 0x20) != 0; }
  static __m256i bf16_bits(V v) {
    if (__builtin_expect(has_subnormal(v), 0)) return bf16_bits_integer(v);
    return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
  }
#else
  static __m256i bf16_bits(V v) { return bf16_bits_integer(v); }
#endif
  static __m256i bf16_bits_integer(V v) {
    // vpmovdw keeps the low 16 bits of each lane: the values shifted down are < 2^16
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(bf16_rounded_high(v), 16));
  }
  static void store(BF16* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), bf16_bits(v)); }
  // Non-temporal stores (CallView::streaming_stores: p is 32-byte aligned).
  static void stream(F16* p, V v) { _mm256_stream_si256(reinterpret_cast<__m256i*>(p), f16_bits(v)); }
  static void stream(BF16* p, V v) { _mm256_stream_si256(reinterpret_cast<__m256i*>(p), bf16_bits(v)); }

  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fmsub(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V set(float v) { return _mm512_set1_ps(v); }
  static V abs(V a) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7FFFFFFF))); }
  // As ScalarOps32::undecided: a bit per lane.
  static int undecided(const F16*, V lo, V hi) {
    const __m512i a = _mm512_cvtepu16_epi32(f16_bits(lo));
    const __m512i b = _mm512_cvtepu16_epi32(f16_bits(hi));
    return static_cast<int>(_mm512_cmpneq_epi32_mask(a, b) | _mm512_cmp_ps_mask(lo, lo, _CMP_UNORD_Q));
  }
  static int undecided(const BF16*, V lo, V hi) {
    const __m512i mask = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
    const __m512i a = _mm512_and_si512(bf16_rounded_high(lo), mask);
    const __m512i b = _mm512_and_si512(bf16_rounded_high(hi), mask);
    return static_cast<int>(_mm512_cmpneq_epi32_mask(a, b) | _mm512_cmp_ps_mask(lo, lo, _CMP_UNORD_Q));
  }

  // Both outputs of the pairs at once by conversion (undecided_cells' binary16 pairs below its
  // cells' floor): a lane fails if either does, or if lo_a or lo_b is NaN.
  static int undecided_pair(const F16*, V lo_a, V hi_a, V lo_b, V hi_b) {
    const __m256i differ = _mm256_or_si256(_mm256_xor_si256(f16_bits(lo_a), f16_bits(hi_a)),
                                           _mm256_xor_si256(f16_bits(lo_b), f16_bits(hi_b)));
    const __m512i wide = _mm512_cvtepu16_epi32(differ);
    return static_cast<int>(_mm512_test_epi32_mask(wide, wide) | _mm512_cmp_ps_mask(lo_a, lo_b, _CMP_UNORD_Q));
  }

  // kernel-inl.h decide32's cell test (ScalarOps32::undecided_cells: the same decision per lane), as
  // Avx2Ops32's; 0xBE is (A xor B) or C.
  static __m512i cell_differ(std::uint32_t bias, V lo_a, V hi_a, V lo_b, V hi_b) {
    const __m512i b = _mm512_set1_epi32(static_cast<int>(bias));
    const auto key = [b](V v) { return _mm512_add_epi32(_mm512_castps_si512(v), b); };
    return _mm512_ternarylogic_epi32(key(lo_a), key(hi_a), _mm512_xor_si512(key(lo_b), key(hi_b)), 0xBE);
  }
  static int undecided_cells(const F16* t, V a, V lo_a, V hi_a, V b, V lo_b, V hi_b) {
    const __mmask16 outside = _mm512_test_epi32_mask(cell_differ(kHalfCellBias, lo_a, hi_a, lo_b, hi_b),
                                                      _mm512_set1_epi32(static_cast<int>(kHalfCellMask)));
    const V floor = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(kHalfCellFloorBits)));
    const __mmask16 low = _mm512_cmp_ps_mask(abs(a), floor, _CMP_NGE_UQ) | _mm512_cmp_ps_mask(abs(b), floor, _CMP_NGE_UQ);
    if (__builtin_expect((outside | low) == 0, 1)) return 0;
    return static_cast<int>((outside & ~low) | (undecided_pair(t, lo_a, hi_a, lo_b, hi_b) & low));
  }
  static int undecided_cells(const BF16*, V a, V lo_a, V hi_a, V b, V lo_b, V hi_b) {
    K key_a;
    K key_b;
    return undecided_cells_keys(a, lo_a, hi_a, b, lo_b, hi_b, key_a, key_b);
  }
  // bfloat16, also giving the keys of lo_a and lo_b (kernel-inl.h decide32_keys).
  using K = __m512i;
  static int undecided_cells_keys(V a, V lo_a, V hi_a, V b, V lo_b, V hi_b, K& key_a, K& key_b) {
    const __m512i bias = _mm512_set1_epi32(static_cast<int>(kBf16CellBias));
    key_a = _mm512_add_epi32(_mm512_castps_si512(lo_a), bias);
    key_b = _mm512_add_epi32(_mm512_castps_si512(lo_b), bias);
    const __m512i differ = _mm512_ternarylogic_epi32(
        key_a, _mm512_add_epi32(_mm512_castps_si512(hi_a), bias),
        _mm512_xor_si512(key_b, _mm512_add_epi32(_mm512_castps_si512(hi_b), bias)), 0xBE);
    const __mmask16 failed = _mm512_test_epi32_mask(differ, _mm512_set1_epi32(static_cast<int>(kBf16CellMask))) |
                             _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q);
    return static_cast<int>(failed);
  }
  // The words of x and y (x in the low halves) from keys whose high halves are their bfloat16 bits
  // (kernel-inl.h decide32_keys: every lane passed): pair_words(x, y)'s words. 0xF8 is A or (B and C).
  static __m512i key_pair_words(K key_x, K key_y) {
    return _mm512_ternarylogic_epi32(_mm512_srli_epi32(key_x, 16), key_y,
                                     _mm512_set1_epi32(static_cast<int>(kBf16CellMask)), 0xF8);
  }
  static void store_words(BF16* p, __m512i words) { _mm512_storeu_si512(p, words); }
  static void stream_words(BF16* p, __m512i words) { _mm512_stream_si512(reinterpret_cast<__m512i*>(p), words); }

  // Interleaved pairs, 16 pairs (32 elements): each 32-bit word holds a pair, x in its low half.
  static void load_pairs(const BF16* p, V& x, V& y) {
    const __m512i words = _mm512_loadu_si512(p);
    x = _mm512_castsi512_ps(_mm512_slli_epi32(words, 16));
    y = _mm512_castsi512_ps(_mm512_and_si512(words, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
  static void load_pairs(const F16* p, V& x, V& y) {
    const __m512i words = _mm512_loadu_si512(p);
    x = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(words));  // low halves
    y = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(words, 16)));
  }
#if defined(__AVX512BF16__)
  // vcvtne2ps2bf16 puts x's 16 results in the low 256 bits and y's in the high; vpermw interleaves
  // them into words (x in the low half). Subnormals: bf16_bits above.
  static __m512i pair_words(BF16*, V x, V y) {
    if (__builtin_expect(has_subnormal(x) || has_subnormal(y), 0)) return pair_words_integer(x, y);
    const __m512i halves = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(y, x));
    // word 2k of the result is word k of halves (x_k), word 2k + 1 is word 16 + k (y_k)
    const __m512i interleave = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                _mm512_setr_epi32(16 << 16, 17 << 16, 18 << 16, 19 << 16, 20 << 16,
                                                                  21 << 16, 22 << 16, 23 << 16, 24 << 16, 25 << 16,
                                                                  26 << 16, 27 << 16, 28 << 16, 29 << 16, 30 << 16,
                                                                  31 << 16));
    return _mm512_permutexvar_epi16(interleave, halves);
  }
#else
  static __m512i pair_words(BF16*, V x, V y) { return pair_words_integer(x, y); }
#endif
  static __m512i pair_words_integer(V x, V y) {
    const __m512i low = _mm512_srli_epi32(bf16_rounded_high(x), 16);
    const __m512i high = _mm512_and_si512(bf16_rounded_high(y), _mm512_set1_epi32(static_cast<int>(0xFFFF0000u)));
    return _mm512_or_si512(low, high);
  }
  static __m512i pair_words(F16*, V x, V y) {
    const __m512i low = _mm512_cvtepu16_epi32(f16_bits(x));
    const __m512i high = _mm512_slli_epi32(_mm512_cvtepu16_epi32(f16_bits(y)), 16);
    return _mm512_or_si512(low, high);
  }
  template <class T>
  static void store_pairs(T* p, V x, V y) {
    _mm512_storeu_si512(p, pair_words(p, x, y));
  }
  template <class T>
  static void stream_pairs(T* p, V x, V y) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(p), pair_words(p, x, y));
  }
};
