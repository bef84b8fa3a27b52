// AVX2 + FMA + F16C operations on 4 doubles; same contract as ScalarOps (ops_scalar-inl.h).
// Included INSIDE the avx2 kernel namespace (no include guard, no #include).

struct Avx2Ops {
  static constexpr int lanes = 4;
  static constexpr const char* name = "avx2";
  using V = __m256d;

  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V load(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
  static V load(const F16* p) {
    return _mm256_cvtps_pd(_mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static V load(const BF16* p) {
    const __m128i halves = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(halves), 16)));
  }

  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static void store(float* p, V v) { _mm_storeu_ps(p, _mm256_cvtpd_ps(v)); }
  static void store(F16* p, V v) {
    const __m128i h = _mm_cvtps_ph(_mm256_cvtpd_ps(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), h);
  }
  static void store(BF16* p, V v) {
    const __m128 f = _mm256_cvtpd_ps(v);
    const __m128i bits = _mm_castps_si128(f);
    // round to nearest even: (bits + 0x7FFF + lowest kept bit) >> 16, as float_to_bf16
    const __m128i lowest_kept = _mm_and_si128(_mm_srli_epi32(bits, 16), _mm_set1_epi32(1));
    const __m128i rounded =
        _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(bits, _mm_set1_epi32(0x7FFF)), lowest_kept), 16);
    const __m128i quiet_nan = _mm_or_si128(_mm_srli_epi32(bits, 16), _mm_set1_epi32(0x40));
    const __m128i is_nan = _mm_castps_si128(_mm_cmpunord_ps(f, f));
    const __m128i result = _mm_blendv_epi8(rounded, quiet_nan, is_nan);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi32(result, result));
  }

  static V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V fmsub(V a, V b, V c) { return _mm256_fmsub_pd(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }

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
