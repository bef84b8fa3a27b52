// A fused plugin for the tests of the fused ABI (include/ropecheck/fused.h), in C++ against that
// header alone: a careful float32 fused kernel as the trackers' kernels compute it (the RMSNorm's
// sum of squares in order, 1/sqrt(mean + eps); inv_freq = 1/base^(2j/r) and the angle
// float(position)·inv_freq in float32, cos/sin of that float angle; the rotation's products and
// sums in float32), then one rounding to the data dtype, or t = v/ŝ in float32 quantized to FP8
// (round to nearest even, saturating as the spec says) with ŝ = amax/max per token or per head,
// returned. Single-axis specs without scaling, f32/f16/bf16 data; anything else is unsupported.
//
// Compiled once per BUG variant: 0 careful, 1 q and k norm weights swapped, 2 returned scale ×2
// (the stored values quantized at the true scale), 3 segfault on every call, 4 no entry point,
// 5 hangs on every call.
#include <unistd.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <ropecheck/fused.h>

#ifndef BUG
#define BUG 0
#endif

namespace {

// v rounded to nearest even at `precision` significand bits with exponent floor `emin` (the
// exponent of the smallest normal), exponent unbounded above. Exact in double for p ≤ 24.
double round_to(double v, int precision, int emin) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  std::frexp(std::fabs(v), &e);  // |v| = m·2^e, 0.5 ≤ m < 1
  const int q = std::max(e - precision, emin - precision + 1);
  const double t = std::ldexp(std::fabs(v), -q);
  double n = std::floor(t);
  const double fraction = t - n;
  if (fraction > 0.5 || (fraction == 0.5 && std::fmod(n, 2) != 0)) n += 1;
  return std::copysign(std::ldexp(n, q), v);
}

// A binary format: significand bits with the hidden one, exponent bits, exponent of the smallest normal.
struct Format {
  int precision, exponent_bits, emin;
};
constexpr Format kF16{11, 5, -14}, kBf16{8, 8, -126}, kE4m3{4, 4, -6}, kE5m2{3, 5, -14};

// The bit pattern of a value of the format (already rounded to it; finite, or ±Inf for IEEE formats).
std::uint32_t encode(double r, Format f) {
  const std::uint32_t sign = std::signbit(r) ? 1u << (f.precision - 1 + f.exponent_bits) : 0u;
  const int m = f.precision - 1;
  if (std::isinf(r)) return sign | (((1u << f.exponent_bits) - 1) << m);
  const double a = std::fabs(r);
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);
  e -= 1;                                                                               // a = 1.f·2^e
  if (e < f.emin) return sign | static_cast<std::uint32_t>(std::ldexp(a, m - f.emin));  // subnormal
  const auto field = static_cast<std::uint32_t>(e - f.emin + 1);
  const auto fraction = static_cast<std::uint32_t>(std::ldexp(a, m - e) - std::ldexp(1.0, m));
  return sign | (field << m) | fraction;
}

double decode(std::uint32_t bits, Format f) {
  const int m = f.precision - 1;
  const bool negative = (bits >> (m + f.exponent_bits)) & 1;
  const auto field = static_cast<int>((bits >> m) & ((1u << f.exponent_bits) - 1));
  const double fraction = static_cast<double>(bits & ((1u << m) - 1));
  double v = field == 0 ? std::ldexp(fraction, f.emin - m) : std::ldexp(fraction + std::ldexp(1.0, m), field - 1 + f.emin - m);
  if (f.exponent_bits >= 5 && field == (1 << f.exponent_bits) - 1) v = fraction == 0 ? INFINITY : NAN;
  return negative ? -v : v;
}

float load(const void* data, std::int32_t dtype, std::int64_t i) {
  if (dtype == ROPECHECK_DTYPE_F32) return static_cast<const float*>(data)[i];
  const std::uint16_t bits = static_cast<const std::uint16_t*>(data)[i];
  return static_cast<float>(decode(bits, dtype == ROPECHECK_DTYPE_F16 ? kF16 : kBf16));
}

// v rounded to the data dtype (f32: itself), as a float.
float round_data(float v, std::int32_t dtype) {
  if (dtype == ROPECHECK_DTYPE_F32) return v;
  return static_cast<float>(
      round_to(v, dtype == ROPECHECK_DTYPE_F16 ? kF16.precision : kBf16.precision, dtype == ROPECHECK_DTYPE_F16 ? kF16.emin : kBf16.emin));
}

void store(void* data, std::int32_t dtype, std::int64_t i, float v) {
  if (dtype == ROPECHECK_DTYPE_F32) {
    static_cast<float*>(data)[i] = v;
    return;
  }
  const Format f = dtype == ROPECHECK_DTYPE_F16 ? kF16 : kBf16;
  double r = round_to(v, f.precision, f.emin);
  if (dtype == ROPECHECK_DTYPE_F16 && std::fabs(r) > 65504) r = std::copysign(INFINITY, r);
  static_cast<std::uint16_t*>(data)[i] = std::isnan(v) ? 0x7e00 : static_cast<std::uint16_t>(encode(r, f));
}

// The OCP FP8 code of t: round to nearest even, then ±max when saturating, else NaN (E4M3) or ±Inf (E5M2).
std::uint8_t quantize(float t, std::int32_t fp8, bool saturate) {
  const Format f = fp8 == ROPECHECK_FP8_E4M3 ? kE4m3 : kE5m2;
  const double max = fp8 == ROPECHECK_FP8_E4M3 ? 448.0 : 57344.0;
  if (std::isnan(t)) return 0x7f;
  double r = round_to(t, f.precision, f.emin);
  if (std::fabs(r) > max) {
    if (saturate) {
      r = std::copysign(max, r);
    } else {
      return fp8 == ROPECHECK_FP8_E4M3 ? 0x7f : static_cast<std::uint8_t>(r < 0 ? 0xfc : 0x7c);
    }
  }
  return static_cast<std::uint8_t>(encode(r, f));
}

// One head of q or k through the norm and the rotation, in float32.
std::vector<float> head(const ropecheck_fused_call* c, bool is_k, std::int64_t t, std::int64_t h) {
  const ropecheck_fused_spec* s = c->spec;
  const ropecheck_spec* rope = s->rope;
  const int d = rope->head_dim, rot = rope->rotary_dim;
  const std::int64_t heads = is_k ? s->k_heads : s->q_heads;
  const void* x = is_k ? c->k : c->q;
  const void* weight = (is_k != (BUG == 1)) ? c->k_weight : c->q_weight;
  std::vector<float> v(static_cast<std::size_t>(d));
  for (int i = 0; i < d; ++i) v[i] = load(x, c->input_dtype, (t * heads + h) * d + i);
  auto normalize = [&] {
    float sum = 0;
    for (float a : v) sum += a * a;
    const float r = 1.0f / std::sqrt(sum / static_cast<float>(d) + static_cast<float>(s->eps));
    for (int i = 0; i < d; ++i) {
      const float w = load(weight, c->input_dtype, i);
      v[i] = (v[i] * r) * (s->norm_weight == ROPECHECK_NORM_WEIGHT_ONE_PLUS ? 1.0f + w : w);
    }
  };
  if (s->norm == ROPECHECK_NORM_BEFORE) normalize();
  const float base = static_cast<float>(rope->base);
  const float position = static_cast<float>(c->positions[t]);
  const bool half = rope->layout == ROPECHECK_LAYOUT_HALF;
  for (int j = 0; j < rot / 2; ++j) {
    const float inv_freq = 1.0f / std::pow(base, static_cast<float>(2 * j) / static_cast<float>(rot));
    const float angle = position * inv_freq;
    const float cs = static_cast<float>(std::cos(static_cast<double>(angle)));
    float sn = static_cast<float>(std::sin(static_cast<double>(angle)));
    if (rope->direction == ROPECHECK_DIRECTION_INVERSE) sn = -sn;
    const int f = half ? j : 2 * j, g = half ? j + rot / 2 : 2 * j + 1;
    const float a = v[f] * cs - v[g] * sn;
    const float b = v[f] * sn + v[g] * cs;
    v[f] = a;
    v[g] = b;
  }
  if (s->norm == ROPECHECK_NORM_AFTER) normalize();
  if (s->rounding == ROPECHECK_ROUNDING_INTERMEDIATE) {
    for (float& a : v) a = round_data(a, rope->dtype);
  }
  return v;
}

// One tensor (q or k): its rows to `out` (row r of token t at out_row(t), -1: not stored) and scales.
template <class Row>
void tensor(const ropecheck_fused_call* c, bool is_k, void* out, float* scales, Row out_row) {
  const ropecheck_fused_spec* s = c->spec;
  const int d = s->rope->head_dim;
  const std::int64_t heads = is_k ? s->k_heads : s->q_heads;
  const float max = s->fp8 == ROPECHECK_FP8_E4M3 ? 448.0f : 57344.0f;
  for (std::int64_t t = 0; t < c->tokens; ++t) {
    std::vector<std::vector<float>> rows;
    float token_amax = 0;
    for (std::int64_t h = 0; h < heads; ++h) {
      rows.push_back(head(c, is_k, t, h));
      for (float a : rows.back()) token_amax = std::max(token_amax, std::fabs(a));
    }
    const std::int64_t row = out_row(t);
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t first = row < 0 ? -1 : row * heads * d + h * d;
      if (s->fp8 == ROPECHECK_FP8_NONE) {
        if (first >= 0) {
          for (int i = 0; i < d; ++i) store(out, s->rope->dtype, first + i, rows[h][i]);
        }
        continue;
      }
      float amax = token_amax;
      if (s->scale == ROPECHECK_SCALE_PER_HEAD) {
        amax = 0;
        for (float a : rows[h]) amax = std::max(amax, std::fabs(a));
      }
      const float scale = s->scale == ROPECHECK_SCALE_FIXED ? static_cast<float>(s->scale_value) : amax > 0 ? amax / max : 1.0f;
      const float returned = BUG == 2 ? 2 * scale : scale;
      if (s->scale == ROPECHECK_SCALE_PER_HEAD) scales[t * heads + h] = returned;
      if (s->scale == ROPECHECK_SCALE_PER_TOKEN) scales[t] = returned;
      if (first < 0) continue;
      for (int i = 0; i < d; ++i) {
        static_cast<std::uint8_t*>(out)[first + i] = quantize(rows[h][i] / scale, s->fp8, s->saturate != 0);
      }
    }
  }
}

}  // namespace

#if BUG != 4
extern "C" __attribute__((visibility("default"))) std::int32_t ropecheck_fused_v1(const ropecheck_fused_call* c) {
  if (c == nullptr || c->spec == nullptr || c->spec->rope == nullptr) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  if (c->abi_version != ROPECHECK_FUSED_ABI_VERSION) return ROPECHECK_ERROR_UNSUPPORTED;
  const ropecheck_spec* rope = c->spec->rope;
  if (rope->scaling != ROPECHECK_SCALING_NONE || rope->axes != ROPECHECK_AXES_NONE || rope->dtype == ROPECHECK_DTYPE_F64 ||
      c->input_dtype == ROPECHECK_DTYPE_F64) {
    return ROPECHECK_ERROR_UNSUPPORTED;
  }
  if (BUG == 5) {
    for (;;) pause();
  }
  if (BUG == 3) {
    volatile int* nowhere = nullptr;
    *nowhere = 1;
  }
  tensor(c, false, c->q_out, c->q_scale, [](std::int64_t t) { return t; });
  if (c->spec->destination == ROPECHECK_DESTINATION_PAGED) {
    // Slot s is row s of the cache viewed as [num_blocks·block_size][k_heads][head_dim].
    tensor(c, true, c->k_cache, c->k_scale, [c](std::int64_t t) { return c->slot_mapping[t]; });
  } else {
    tensor(c, true, c->k_out, c->k_scale, [](std::int64_t t) { return t; });
  }
  return ROPECHECK_OK;
}
#endif
