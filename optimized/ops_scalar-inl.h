// Scalar "vector" operations (one lane): the portable kernel, and the tail loops of the SIMD
// kernels. Every SIMD Ops struct (ops_avx2-inl.h, ops_avx512-inl.h) provides the same functions
// with the same IEEE results per lane: loads convert the element exactly to double, fmadd/fmsub
// are fused (one rounding), stores round double -> binary32 (-> binary16/bfloat16) to nearest even.
//
// Included INSIDE each kernel's namespace, after convert-inl.h (no include guard, no #include).

struct ScalarOps {
  static constexpr int lanes = 1;
  static constexpr const char* name = "scalar";
  using V = double;

  static V load(const double* p) { return *p; }
  static V load(const float* p) { return static_cast<double>(*p); }
  static V load(const F16* p) { return static_cast<double>(half_to_float(p->bits)); }
  static V load(const BF16* p) { return static_cast<double>(bf16_to_float(p->bits)); }

  static void store(double* p, V v) { *p = v; }
  static void store(float* p, V v) { *p = static_cast<float>(v); }
  // double -> binary32 -> binary16: the same two roundings as the SIMD kernels (the error bound
  // in error_bounds.h accounts for the first one).
  static void store(F16* p, V v) { p->bits = float_to_half(static_cast<float>(v)); }
  static void store(BF16* p, V v) { p->bits = float_to_bf16(static_cast<float>(v)); }

  // a·b + c and a·b − c, one rounding.
  static V fmadd(V a, V b, V c) { return std::fma(a, b, c); }
  static V fmsub(V a, V b, V c) { return std::fma(a, b, -c); }
  static V mul(V a, V b) { return a * b; }

  // Interleaved pairs: p[2i] is x_i, p[2i+1] is y_i.
  template <class T>
  static void load_pairs(const T* p, V& x, V& y) {
    x = load(p);
    y = load(p + 1);
  }
  template <class T>
  static void store_pairs(T* p, V x, V y) {
    store(p, x);
    store(p + 1, y);
  }
};
