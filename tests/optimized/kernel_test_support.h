// Shared machinery of the kernel tests: a Case (spec, shape, positions, strides, mode), running it
// through the C ABI with guard bytes around every output buffer, and checking the result against
// the exact reference by the one pair rule (judge/pair_rule.h) with the bounds of optimized/error_bounds.h.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <ropecheck/kernel.h>

#include "optimized/c_spec.h"
#include "optimized/error_bounds.h"
#include "judge/group.h"
#include "judge/pair_rule.h"
#include "reference/multiprecision.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"
#include "spec/spec.h"

namespace ropecheck::kernels::testing {

inline constexpr unsigned char kGuardByte = 0xA5;
inline constexpr std::size_t kGuardBytes = 64;

struct Case {
  Case() = default;
  Case(std::string text, std::int64_t token_count, std::int64_t head_count, std::vector<std::int64_t> position_list)
      : spec_text(std::move(text)), tokens(token_count), heads(head_count), positions(std::move(position_list)) {}

  std::string spec_text;
  std::int64_t tokens = 1;
  std::int64_t heads = 1;
  // Cycled to fill tokens × position_components; empty: a spread of positions up to 2^31 − 1.
  std::vector<std::int64_t> positions;
  std::int64_t k_heads = 0;  // > 0: rotate a k tensor in the same call
  std::int64_t input_head_padding = 0;
  std::int64_t input_token_padding = 0;
  std::int64_t output_head_padding = 0;
  std::int64_t output_token_padding = 0;
  bool in_place = false;
  bool cache = false;
  Dtype cache_dtype = Dtype::f32;
  int threads = 1;
  std::vector<double> fixed_input;  // when set: every head row starts with these values
  int magnitude_exponent = 0;       // inputs scaled by 2^+e and 2^-e in alternate pairs

  Spec spec() const { return parse_spec(spec_text); }

  // The parameters, as the test name (and filter): [A-Za-z0-9_] only.
  std::string name() const {
    std::ostringstream out;
    // long lists (longrope factors) are named by their length
    std::string shown;
    std::stringstream fields(spec_text);
    for (std::string field; std::getline(fields, field, ',');) {
      const auto eq = field.find('=');
      if (eq != std::string::npos && std::count(field.begin(), field.end(), '/') > 4) {
        const auto count = std::count(field.begin(), field.end(), '/') + 1;
        field.resize(eq + 1);
        field += std::to_string(count);
        field += "values";
      }
      if (!shown.empty()) shown += ',';
      shown += field;
    }
    out << shown << "_t" << tokens << "_h" << heads;
    if (k_heads) out << "_k" << k_heads;
    if (input_head_padding || input_token_padding || output_head_padding || output_token_padding) {
      out << "_strided" << input_head_padding << "x" << input_token_padding << "x" << output_head_padding << "x"
          << output_token_padding;
    }
    if (in_place) out << "_inplace";
    if (cache) out << "_cache" << ropecheck::name(cache_dtype);
    if (threads != 1) out << "_threads" << threads;
    if (!fixed_input.empty()) out << "_fixedinput";
    if (magnitude_exponent) out << "_magnitude" << magnitude_exponent;
    std::string s = out.str();
    for (char& ch : s) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    return s;
  }

  std::vector<std::int64_t> position_values() const {
    const std::int64_t count = tokens * position_components(spec());
    std::vector<std::int64_t> out(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      if (positions.empty()) {
        out[static_cast<std::size_t>(i)] = cache ? i % 37 : (i * 2654435761LL) % 2147483647LL;
      } else {
        out[static_cast<std::size_t>(i)] = positions[static_cast<std::size_t>(i) % positions.size()];
      }
    }
    return out;
  }
};

// A strided tensor in its dtype's bytes, surrounded by guard bytes; padding bytes are guard bytes too.
struct Buffer {
  std::vector<unsigned char> bytes;
  std::int64_t token_stride = 0;
  std::int64_t head_stride = 0;
  std::size_t element_size = 0;
  void* data() { return bytes.data() + kGuardBytes; }
  const void* data() const { return bytes.data() + kGuardBytes; }
  std::size_t offset(std::int64_t t, std::int64_t h, std::int64_t i) const {
    return kGuardBytes + static_cast<std::size_t>(t * token_stride + h * head_stride + i) * element_size;
  }
};

inline Buffer make_buffer(std::int64_t tokens, std::int64_t heads, int head_dim, std::int64_t head_padding,
                          std::int64_t token_padding, Dtype dtype) {
  Buffer b;
  b.element_size = ropecheck_dtype_size(static_cast<std::int32_t>(dtype));
  b.head_stride = head_dim + head_padding;
  b.token_stride = heads * b.head_stride + token_padding;
  b.bytes.assign(2 * kGuardBytes + static_cast<std::size_t>(tokens * b.token_stride) * b.element_size, kGuardByte);
  return b;
}

// `value` (exactly representable in `dtype`) stored in dtype's encoding at p.
inline void write_element(unsigned char* p, double value, Dtype dtype) {
  switch (dtype) {
    case Dtype::f64: std::memcpy(p, &value, 8); break;
    case Dtype::f32: {
      const float f = static_cast<float>(value);
      std::memcpy(p, &f, 4);
      break;
    }
    case Dtype::f16:
    case Dtype::bf16: {
      const auto bits = static_cast<std::uint16_t>(reference::encode_bits(value, dtype));
      std::memcpy(p, &bits, 2);
      break;
    }
  }
}

inline void write_element(Buffer& b, std::size_t offset, double value, Dtype dtype) {
  write_element(b.bytes.data() + offset, value, dtype);
}

inline double read_element(const Buffer& b, std::size_t offset, Dtype dtype) {
  const unsigned char* p = b.bytes.data() + offset;
  switch (dtype) {
    case Dtype::f64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case Dtype::f32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case Dtype::f16:
    case Dtype::bf16: {
      std::uint16_t bits;
      std::memcpy(&bits, p, 2);
      return reference::decode_bits(bits, dtype);
    }
  }
  return 0;
}

// One tensor of a case: its contiguous input values (for the reference) and its buffers.
struct TensorData {
  std::int64_t heads = 0;
  std::vector<double> input;  // [tokens, heads, head_dim], contiguous
  Buffer input_buffer;
  Buffer output_buffer;  // unused when in place
};

struct KernelRun {
  std::int32_t status = ROPECHECK_ERROR_INTERNAL;
  TensorData q;
  TensorData k;
  // the CUDA kernel rotates f64 data in binary64 (faithful: no double-double path, optimized/README.md)
  bool correctly_rounded_f64 = true;
  const Buffer& output(const Case& c, const TensorData& t) const { return c.in_place ? t.input_buffer : t.output_buffer; }
};

inline TensorData make_tensor(const Case& c, std::int64_t heads, std::uint32_t seed) {
  const Spec spec = c.spec();
  TensorData t;
  t.heads = heads;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  const std::int64_t d = spec.head_dim;
  t.input.resize(static_cast<std::size_t>(c.tokens * heads * d));
  for (std::size_t i = 0; i < t.input.size(); ++i) {
    const std::int64_t dim = static_cast<std::int64_t>(i) % d;
    double v = uniform(rng);
    if (!c.fixed_input.empty() && dim < static_cast<std::int64_t>(c.fixed_input.size())) v = c.fixed_input[dim];
    if (c.magnitude_exponent) v = std::ldexp(v, (dim / 2) % 2 ? c.magnitude_exponent : -c.magnitude_exponent);
    t.input[i] = reference::round_to_format(v, spec.dtype);
  }
  t.input_buffer = make_buffer(c.tokens, heads, spec.head_dim, c.input_head_padding, c.input_token_padding, spec.dtype);
  for (std::int64_t tok = 0; tok < c.tokens; ++tok) {
    for (std::int64_t h = 0; h < heads; ++h) {
      for (std::int64_t i = 0; i < d; ++i) {
        write_element(t.input_buffer, t.input_buffer.offset(tok, h, i), t.input[static_cast<std::size_t>((tok * heads + h) * d + i)],
                      spec.dtype);
      }
    }
  }
  if (c.in_place) {
    t.output_buffer = Buffer{};
  } else {
    t.output_buffer = make_buffer(c.tokens, heads, spec.head_dim, c.output_head_padding, c.output_token_padding, spec.dtype);
  }
  return t;
}

inline ropecheck_tensor c_tensor(const Case& c, TensorData& t) {
  ropecheck_tensor v{};
  v.heads = t.heads;
  v.input = t.input_buffer.data();
  v.input_token_stride = t.input_buffer.token_stride;
  v.input_head_stride = t.input_buffer.head_stride;
  Buffer& out = c.in_place ? t.input_buffer : t.output_buffer;
  v.output = out.data();
  v.output_token_stride = out.token_stride;
  v.output_head_stride = out.head_stride;
  return v;
}

// The cos/sin cache [rows, pairs] of a case from the reference: A·cos and A·sin of the forward
// angle at 128 bits, correctly rounded to the cache dtype, stored in its encoding.
struct Cache {
  std::vector<unsigned char> cos_bytes;
  std::vector<unsigned char> sin_bytes;
  std::int64_t rows = 0;
};

inline Cache reference_cache(const Case& c) {
  Spec forward = c.spec();
  forward.direction = Direction::forward;  // kernel.h: the kernel negates sin for inverse
  const auto positions = c.position_values();
  Cache cache;
  cache.rows = *std::max_element(positions.begin(), positions.end()) + 1;
  const int pairs = forward.rotary_dim / 2;
  const std::size_t element = ropecheck_dtype_size(static_cast<std::int32_t>(c.cache_dtype));
  cache.cos_bytes.resize(static_cast<std::size_t>(cache.rows * pairs) * element);
  cache.sin_bytes.resize(cache.cos_bytes.size());
  reference::PrecisionScope scope(128);
  const reference::Real attention = attention_factor<reference::Real>(forward);
  std::vector<std::int64_t> tuple(static_cast<std::size_t>(position_components(forward)));
  Buffer cos_buffer;
  Buffer sin_buffer;
  cos_buffer.element_size = sin_buffer.element_size = element;
  cos_buffer.bytes.assign(cache.cos_bytes.size() + 2 * kGuardBytes, 0);
  sin_buffer.bytes.assign(cache.cos_bytes.size() + 2 * kGuardBytes, 0);
  for (std::int64_t row = 0; row < cache.rows; ++row) {
    std::fill(tuple.begin(), tuple.end(), row);
    for (int j = 0; j < pairs; ++j) {
      const reference::Real angle = reference::angle(forward, tuple, j, 128);
      const double cos_value =
          reference::round_to_format(reference::Real(cos(angle) * attention), c.cache_dtype).convert_to<double>();
      const double sin_value =
          reference::round_to_format(reference::Real(sin(angle) * attention), c.cache_dtype).convert_to<double>();
      const std::size_t offset = kGuardBytes + static_cast<std::size_t>(row * pairs + j) * element;
      write_element(cos_buffer, offset, cos_value, c.cache_dtype);
      write_element(sin_buffer, offset, sin_value, c.cache_dtype);
    }
  }
  std::memcpy(cache.cos_bytes.data(), cos_buffer.bytes.data() + kGuardBytes, cache.cos_bytes.size());
  std::memcpy(cache.sin_bytes.data(), sin_buffer.bytes.data() + kGuardBytes, cache.sin_bytes.size());
  return cache;
}

inline KernelRun run_case(const Case& c, const std::string& implementation) {
  const Spec spec = c.spec();
  const CSpec c_spec(spec);
  KernelRun run;
  run.q = make_tensor(c, c.heads, static_cast<std::uint32_t>(std::hash<std::string>{}(c.name())));
  if (c.k_heads > 0) run.k = make_tensor(c, c.k_heads, static_cast<std::uint32_t>(std::hash<std::string>{}(c.name() + "k")));
  const auto positions = c.position_values();
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = c.tokens;
  call.positions = positions.data();
  call.q = c_tensor(c, run.q);
  if (c.k_heads > 0) call.k = c_tensor(c, run.k);
  call.threads = c.threads;
  Cache cache;
  if (c.cache) {
    cache = reference_cache(c);
    call.cos_cache = cache.cos_bytes.data();
    call.sin_cache = cache.sin_bytes.data();
    call.cache_dtype = static_cast<std::int32_t>(c.cache_dtype);
    call.cache_rows = cache.rows;
    call.cache_row_stride = spec.rotary_dim / 2;
  }
  run.correctly_rounded_f64 = implementation != "cuda";
  run.status = ropecheck_kernel_apply(implementation.c_str(), &call);
  return run;
}

inline bool unavailable(const std::string& implementation) {
  return ropecheck_kernel_available(implementation.c_str()) != 1;
}
inline std::string unavailable_message(const std::string& implementation) {
  if (implementation == "cuda") {
#if ROPECHECK_HAVE_CUDA
    return "no CUDA device: cuda kernel not run (the CUDA kernel is built; a machine with an sm_80+ GPU runs it)";
#else
    return "no CUDA device: cuda kernel not run (CUDA not built: no nvcc or -DROPECHECK_CUDA=OFF)";
#endif
  }
  return "implementation '" + implementation + "' is not available on this machine (not built, or no CPU support per CPUID)";
}

// Every byte outside the tensor's elements (guards and padding) still holds the guard pattern.
inline void check_untouched(const Case& c, const Buffer& b, std::int64_t heads, const char* what) {
  const Spec spec = c.spec();
  std::vector<bool> element(b.bytes.size(), false);
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::size_t begin = b.offset(t, h, 0);
      std::fill(element.begin() + static_cast<std::ptrdiff_t>(begin),
                element.begin() + static_cast<std::ptrdiff_t>(begin + static_cast<std::size_t>(spec.head_dim) * b.element_size), true);
    }
  }
  for (std::size_t i = 0; i < b.bytes.size(); ++i) {
    if (!element[i]) {
      ASSERT_EQ(b.bytes[i], kGuardByte) << what << ": byte " << i << " outside the tensor was written";
    }
  }
}

inline void check_guards_and_padding(const Case& c, const KernelRun& run) {
  check_untouched(c, run.output(c, run.q), run.q.heads, "q output");
  if (c.k_heads > 0) check_untouched(c, run.output(c, run.k), run.k.heads, "k output");
}

// Exact and correctly rounded results per case (computed once; every implementation compares with
// the same values). Non-finite inputs are replaced by zeros for the exact values: those pairs are
// judged by class against the correctly rounded ones (judge/pair_rule.h).
inline const judge::Expected& expected_for(const Case& c, const TensorData& t, const std::string& tag) {
  static std::mutex mutex;
  static std::map<std::string, judge::Expected> memo;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string key = c.name() + "/" + tag;
  auto it = memo.find(key);
  if (it != memo.end()) return it->second;
  const Spec spec = c.spec();
  const auto positions = c.position_values();
  const reference::Shape shape{c.tokens, t.heads, spec.head_dim};
  judge::Expected out;
  std::vector<double> finite = t.input;
  for (double& v : finite) {
    if (!std::isfinite(v)) v = 0;
  }
  for (const auto& v : reference::rotate_exact(spec, shape, positions, finite, 128, reference::Form::elementwise)) {
    out.exact.push_back(static_cast<long double>(v));
  }
  out.rounded = reference::apply(spec, shape, positions, t.input);
  return memo.emplace(key, std::move(out)).first->second;
}

inline double case_bound(const Case& c) {
  const Spec spec = c.spec();
  const bool attention_is_one = attention_factor<long double>(spec) == 1.0L;
  return c.cache ? cache_mode_bound(spec.dtype, c.cache_dtype) : on_the_fly_bound(spec.dtype, attention_is_one);
}

// The kernels' outputs are correctly rounded on the fly for every dtype
// (optimized/error_bounds.h "ROUNDING TEST", kernel_f64-inl.h); cache mode keeps its bounds.
inline bool is_correctly_rounded(const Case& c) { return !c.cache; }

// The same value of the dtype: equal bits of the decoded binary64 values, or both NaN.
inline bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  std::uint64_t x;
  std::uint64_t y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x == y;
}

inline void check_tensor_against_exact(const Case& c, const KernelRun& run, const TensorData& t, const std::string& tag) {
  const Spec spec = c.spec();
  const judge::Expected& expected = expected_for(c, t, tag);
  const Buffer& out = run.output(c, t);
  const double bound = case_bound(c);
  // THE pair rule (judge/pair_rule.h) with the kernel's proven bound; the kernels compute in a wider
  // format and round once, so one subnormal rounding at most.
  judge::PairRule rule;
  rule.dtype = spec.dtype;
  rule.attention_factor = static_cast<double>(attention_factor<long double>(spec));
  rule.tolerance = judge::Tolerance{judge::Tolerance::Kind::e, bound, 0, "optimized/error_bounds.h"};
  rule.underflow_roundings = 1;
  const std::int64_t d = spec.head_dim;
  const bool correctly_rounded = is_correctly_rounded(c) && (spec.dtype != Dtype::f64 || run.correctly_rounded_f64);
  double worst = 0;
  for (std::int64_t tok = 0; tok < c.tokens; ++tok) {
    for (std::int64_t h = 0; h < t.heads; ++h) {
      const std::size_t row = static_cast<std::size_t>((tok * t.heads + h) * d);
      for (int j = 0; j < spec.rotary_dim / 2; ++j) {
        const auto dims = reference::pair_dims(spec, j);
        const double a = read_element(out, out.offset(tok, h, dims.first), spec.dtype);
        const double b = read_element(out, out.offset(tok, h, dims.second), spec.dtype);
        const std::size_t i1 = row + static_cast<std::size_t>(dims.first), i2 = row + static_cast<std::size_t>(dims.second);
        judge::Pair pair;
        pair.x = t.input[i1];
        pair.y = t.input[i2];
        pair.a = a;
        pair.b = b;
        pair.exact_a = expected.exact[i1];
        pair.exact_b = expected.exact[i2];
        pair.rounded_a = expected.rounded[i1];
        pair.rounded_b = expected.rounded[i2];
        if (correctly_rounded) {  // error_bounds.h "ROUNDING TEST": the reference's bits
          ASSERT_TRUE(same_value(a, pair.rounded_a) && same_value(b, pair.rounded_b))
              << tag << " token " << tok << " head " << h << " pair " << j << ": (" << reference::to_hex(a) << ", "
              << reference::to_hex(b) << ") instead of the correctly rounded (" << reference::to_hex(pair.rounded_a)
              << ", " << reference::to_hex(pair.rounded_b) << ") for input (" << reference::to_hex(pair.x) << ", "
              << reference::to_hex(pair.y) << ") at position " << c.position_values()[static_cast<std::size_t>(tok)];
        }
        const judge::PairVerdict v = judge::judge_pair(pair, rule);
        if (v.measured) worst = std::max(worst, v.e);
        ASSERT_TRUE(v.pass()) << tag << " token " << tok << " head " << h << " pair " << j << ": " << v.message << " for input ("
                              << reference::to_hex(pair.x) << ", " << reference::to_hex(pair.y) << "), bound " << bound;
      }
      // pass-through dims: bit for bit (kernel.h; docs/design.md)
      for (std::int64_t i = spec.rotary_dim; i < d; ++i) {
        const Buffer& in = t.input_buffer;
        ASSERT_EQ(std::memcmp(&out.bytes[out.offset(tok, h, i)], &in.bytes[in.offset(tok, h, i)], out.element_size), 0)
            << tag << " pass-through dim " << i << " changed";
      }
    }
  }
  ::testing::Test::RecordProperty(tag + "_worst_e", std::to_string(worst));
}

inline void check_against_exact(const Case& c, const KernelRun& run) {
  check_tensor_against_exact(c, run, run.q, "q");
  if (c.k_heads > 0) check_tensor_against_exact(c, run, run.k, "k");
}

// All output elements (q then k) decoded to doubles, in logical order.
inline std::vector<double> outputs_as_double(const Case& c, const KernelRun& run) {
  const Spec spec = c.spec();
  std::vector<double> out;
  for (const TensorData* t : {&run.q, &run.k}) {
    if (t->heads == 0) continue;
    const Buffer& b = run.output(c, *t);
    for (std::int64_t tok = 0; tok < c.tokens; ++tok) {
      for (std::int64_t h = 0; h < t->heads; ++h) {
        for (std::int64_t i = 0; i < spec.head_dim; ++i) out.push_back(read_element(b, b.offset(tok, h, i), spec.dtype));
      }
    }
  }
  return out;
}

}  // namespace ropecheck::kernels::testing
