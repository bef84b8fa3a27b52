// AVX-512F operations on 8 doubles (with AVX2/FMA/F16C for the 16-bit conversions); same
// contract as ScalarOps (ops_scalar-inl.h). Included INSIDE the avx512 kernel namespace.

struct Avx512Ops {
  static constexpr int lanes = 8;
  static constexpr const char* name = "avx512";
  using V = __m512d;

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
  static void store(F16* p, V v) {
    const __m128i h = _mm256_cvtps_ph(_mm512_cvtpd_ps(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
  }
  static void store(BF16* p, V v) {
    const __m256 f = _mm512_cvtpd_ps(v);
    const __m256i bits = _mm256_castps_si256(f);
    const __m256i lowest_kept = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), lowest_kept), 16);
    const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
    const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
    const __m256i result = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
    // vpmovdw: 8 × int32 -> 8 × int16 (values are < 2^16, truncation is exact)
    const __m256i packed = _mm512_cvtepi32_epi16(_mm512_castsi256_si512(result));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }

  static V fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V fmsub(V a, V b, V c) { return _mm512_fmsub_pd(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }

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
