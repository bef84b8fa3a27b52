#include "proofs/generators.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck {
void showValue(const Spec& spec, std::ostream& os) { os << to_string(spec); }
}  // namespace ropecheck

namespace ropecheck::proofs {

void showValue(const Values& values, std::ostream& os) {
  os << '[';
  for (std::size_t i = 0; i < values.data.size(); ++i) os << (i ? ", " : "") << reference::to_hex(values.data[i]);
  os << ']';
}

namespace gen {
namespace {

using rc::gen::element;
using rc::gen::inRange;

// A decimal string for a value drawn from a small list of typical ones or from a range.
std::string decimal_of(std::int64_t integer_part, int thousandths) {
  if (thousandths == 0) return std::to_string(integer_part);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%lld.%03d", static_cast<long long>(integer_part), thousandths);
  return buffer;
}

std::string pick_base() {
  return *rc::gen::weightedOneOf<std::string>({
      {4, rc::gen::just<std::string>("10000")},
      {1, rc::gen::just<std::string>("500000")},
      {1, rc::gen::just<std::string>("1000000")},
      {1, rc::gen::just<std::string>("2")},
      {2, rc::gen::map(inRange<std::int64_t>(2, 10000001), [](std::int64_t b) { return std::to_string(b); })},
      {1, rc::gen::exec([] {
         const std::int64_t whole = *inRange<std::int64_t>(2, 10000000);
         return decimal_of(whole, *inRange(1, 1000));
       })},
  });
}

// A factor > 1 as a decimal string (scaling factors are ≥ 1 in practice; linear also allows < 1).
std::string pick_factor() {
  return *rc::gen::weightedOneOf<std::string>({
      {3, element<std::string>("2", "4", "8", "16", "32", "40")},
      {1, rc::gen::exec([] { return decimal_of(*inRange<std::int64_t>(1, 64), *inRange(1, 1000)); })},
  });
}

std::int64_t pick_context() {
  return *rc::gen::weightedOneOf<std::int64_t>({
      {3, element<std::int64_t>(2048, 4096, 8192, 32768)},
      {1, inRange<std::int64_t>(16, 200000)},
  });
}

Scaling pick_scaling(const Spec& spec) {
  const bool two_d = spec.axes.kind == AxesKind::two_d;
  const int frequency_dim = two_d ? spec.rotary_dim / 2 : spec.rotary_dim;
  Scaling sc;
  sc.type = *rc::gen::weightedElement<ScalingType>({{6, ScalingType::none},
                                                    {2, ScalingType::linear},
                                                    {1, ScalingType::ntk},
                                                    {1, ScalingType::dynamic},
                                                    {2, ScalingType::yarn},
                                                    {1, ScalingType::yarn_ggml},
                                                    {2, ScalingType::llama3},
                                                    {1, ScalingType::longrope}});
  switch (sc.type) {
    case ScalingType::none: break;
    case ScalingType::linear:
      sc.factor = *rc::gen::weightedOneOf<std::string>({{4, rc::gen::exec(pick_factor)}, {1, rc::gen::just<std::string>("0.5")}});
      break;
    case ScalingType::ntk:
    case ScalingType::dynamic:
      if (frequency_dim <= 2) {  // d/(d−2) undefined: the parser rejects NTK here
        sc.type = ScalingType::linear;
        sc.factor = pick_factor();
        break;
      }
      sc.factor = pick_factor();
      if (sc.type == ScalingType::dynamic) {
        sc.original_max_position = pick_context();
        sc.seq_len = *inRange<std::int64_t>(1, 4 * sc.original_max_position);
      }
      break;
    case ScalingType::yarn:
      sc.factor = pick_factor();
      sc.original_max_position = pick_context();
      if (*rc::gen::inRange(0, 3) == 0) {
        const int slow = *inRange(1, 8);
        sc.beta_slow = std::to_string(slow);
        sc.beta_fast = std::to_string(slow + *inRange(1, 64));
      }
      sc.truncate = *rc::gen::element(true, false);
      switch (*inRange(0, 4)) {
        case 0: sc.attention_factor = decimal_of(*inRange<std::int64_t>(0, 3), *inRange(1, 1000)); break;
        case 1:
          sc.mscale = *element<std::string>("1", "0.707", "0");
          sc.mscale_all_dim = *element<std::string>("1", "0.707", "0.5");
          break;
        default: break;
      }
      break;
    case ScalingType::yarn_ggml: {
      const std::string factor = *element<std::string>("2", "4", "8", "16", "32");
      // freq_scale = 1/factor, exact in decimal
      const int f = std::stoi(factor);
      sc.freq_scale = f == 2 ? "0.5" : f == 4 ? "0.25" : f == 8 ? "0.125" : f == 16 ? "0.0625" : "0.03125";
      sc.original_max_position = pick_context();
      sc.ext_factor = *element<std::string>("1", "0", "0.5");
      sc.attn_factor = *element<std::string>("1", "0.8", "1.2");
      break;
    }
    case ScalingType::llama3:
      sc.factor = *rc::gen::weightedOneOf<std::string>({{3, rc::gen::just<std::string>("8")}, {1, rc::gen::exec(pick_factor)}});
      sc.original_max_position = *rc::gen::weightedOneOf<std::int64_t>(
          {{3, rc::gen::just<std::int64_t>(8192)}, {1, rc::gen::exec(pick_context)}});
      if (*inRange(0, 3) == 0) {
        sc.low_freq_factor = *element<std::string>("1", "0.5", "2");
        sc.high_freq_factor = sc.low_freq_factor == "2" ? "8" : *element<std::string>("4", "2", "8");
      }
      break;
    case ScalingType::longrope: {
      const int count = frequency_dim / 2;
      for (int i = 0; i < count; ++i) sc.short_factor.push_back(decimal_of(*inRange<std::int64_t>(1, 5), *inRange(0, 1000)));
      for (int i = 0; i < count; ++i) sc.long_factor.push_back(decimal_of(*inRange<std::int64_t>(1, 64), *inRange(0, 1000)));
      sc.original_max_position = *element<std::int64_t>(2048, 4096);
      sc.seq_len = *inRange<std::int64_t>(1, 2 * sc.original_max_position + 1);
      if (*element(true, false)) sc.factor = *element<std::string>("32", "16");
      if (*inRange(0, 4) == 0) sc.attention_factor = decimal_of(1, *inRange(0, 1000));
      break;
    }
  }
  return sc;
}

}  // namespace

rc::Gen<Spec> spec(SpecOptions options) {
  return rc::gen::exec([options] {
    Spec s;
    s.layout = *element(Layout::interleaved, Layout::half);
    AxesKind kind = AxesKind::none;
    switch (options.axes) {
      case AxesChoice::single: kind = AxesKind::none; break;
      case AxesChoice::multi: kind = *element(AxesKind::two_d, AxesKind::mrope, AxesKind::imrope); break;
      case AxesChoice::any:
        kind = *rc::gen::weightedElement<AxesKind>(
            {{8, AxesKind::none}, {1, AxesKind::two_d}, {1, AxesKind::mrope}, {1, AxesKind::imrope}});
        break;
    }
    // rotary_dim/2 pairs, biased small: the reference's cost grows with it, and small dims reach the
    // same code paths; a few specs go up to 128 pairs (rotary_dim 256).
    const int max_pairs = std::max(2, std::min(options.max_pairs, 128));
    int pairs = *rc::gen::weightedOneOf<int>({{10, inRange(1, std::min(4, max_pairs) + 1)},
                                              {6, inRange(1, std::min(16, max_pairs) + 1)},
                                              {3, inRange(1, std::min(64, max_pairs) + 1)},
                                              {1, inRange(1, max_pairs + 1)}});
    if (kind == AxesKind::two_d && pairs % 2 != 0) pairs = pairs < max_pairs ? pairs + 1 : pairs - 1;
    if (kind == AxesKind::two_d && pairs < 2) pairs = 2;
    if (kind == AxesKind::mrope && pairs < 2) pairs = 2;
    if (kind == AxesKind::imrope && pairs < 3) pairs = std::min(3, max_pairs);
    s.rotary_dim = 2 * pairs;
    const int room = (256 - s.rotary_dim) / 2;
    const bool partial = room > 0 && *inRange(0, 10) < (options.partial_rotary ? 8 : 3);
    s.head_dim = s.rotary_dim + (partial ? 2 * *inRange(1, std::min(room, 16) + 1) : 0);
    s.axes.kind = kind;
    if (kind == AxesKind::mrope) {  // Qwen2-VL: (t, h, w) sections; here 2 or 3 sections
      const int sections = std::min(pairs, *inRange(2, 4));
      int left = pairs;
      for (int k = 0; k < sections - 1; ++k) {
        const int n = *inRange(1, left - (sections - 1 - k) + 1);
        s.axes.sections.push_back(n);
        left -= n;
      }
      s.axes.sections.push_back(left);
    }
    if (kind == AxesKind::imrope) {  // Qwen3-VL: t/h/w, or ggml's t/h/w/e; a section may be 0
      const int sections = *inRange(3, 5);
      int left = pairs;
      for (int k = 0; k < sections - 1; ++k) {
        const int n = *inRange(0, left + 1);
        s.axes.sections.push_back(n);
        left -= n;
      }
      s.axes.sections.push_back(left);
    }
    s.base = pick_base();
    s.scaling = pick_scaling(s);
    s.direction = *rc::gen::weightedElement<Direction>({{4, Direction::forward}, {1, Direction::inverse}});
    s.dtype = *element(Dtype::f32, Dtype::f64, Dtype::f16, Dtype::bf16);
    validate(s);  // a generator bug, not a property failure, if this throws
    return s;
  });
}

rc::Gen<std::int64_t> position(const Spec& s, std::int64_t max_position, bool allow_negative) {
  return rc::gen::exec([s, max_position, allow_negative] {
    const std::int64_t max = std::max<std::int64_t>(max_position, 1);
    const int max_log = static_cast<int>(std::floor(std::log2(static_cast<double>(max))));
    std::int64_t p = *rc::gen::weightedOneOf<std::int64_t>({
        {2, rc::gen::just<std::int64_t>(0)},
        {2, rc::gen::just<std::int64_t>(1)},
        {2, inRange<std::int64_t>(0, std::min<std::int64_t>(max, 4096) + 1)},
        {4, rc::gen::exec([max_log] {  // 2^k − 1, 2^k, 2^k + 1
           const int k = *inRange(1, max_log + 1);
           return (std::int64_t{1} << k) + *inRange<std::int64_t>(-1, 2);
         })},
        {5, rc::gen::exec([s, max] {  // m·θ'_j within a few units of k·π/2
           const int j = *inRange(0, s.rotary_dim / 2);
           const long double theta = frequency<long double>(s, j);
           const long double quarter = std::numbers::pi_v<long double> / 2;
           const long double top = static_cast<long double>(max) * theta / quarter;
           const std::int64_t k = top < 1 ? 0 : *inRange<std::int64_t>(0, static_cast<std::int64_t>(std::min<long double>(top, 0x1p62L)) + 1);
           return static_cast<std::int64_t>(std::llround(static_cast<long double>(k) * quarter / theta)) + *inRange<std::int64_t>(-2, 3);
         })},
        {3, inRange<std::int64_t>(0, max + 1)},
    });
    p = std::clamp<std::int64_t>(p, 0, max);
    if (allow_negative && *inRange(0, 5) == 0) p = -p;
    return p;
  });
}

rc::Gen<std::vector<std::int64_t>> position_tuple(const Spec& s, std::int64_t max_position, bool allow_negative) {
  return rc::gen::exec([s, max_position, allow_negative] {
    std::vector<std::int64_t> tuple;
    for (int c = 0; c < position_components(s); ++c) tuple.push_back(*position(s, max_position, allow_negative));
    return tuple;
  });
}

namespace {
struct BitLayout {
  int exponent_bits;
  int mantissa_bits;
};
BitLayout bit_layout(Dtype d) {
  switch (d) {
    case Dtype::f64: return {11, 52};
    case Dtype::f32: return {8, 23};
    case Dtype::f16: return {5, 10};
    case Dtype::bf16: return {8, 7};
  }
  return {11, 52};
}

double from_fields(Dtype dtype, bool negative, std::uint64_t exponent, std::uint64_t mantissa) {
  const BitLayout layout = bit_layout(dtype);
  const std::uint64_t bits = (std::uint64_t{negative} << (layout.exponent_bits + layout.mantissa_bits)) |
                             (exponent << layout.mantissa_bits) | mantissa;
  return reference::decode_bits(bits, dtype);
}
}  // namespace

rc::Gen<double> value(Dtype dtype) {
  return rc::gen::exec([dtype] {
    const BitLayout layout = bit_layout(dtype);
    const std::uint64_t top_exponent = (std::uint64_t{1} << layout.exponent_bits) - 2;  // largest finite
    const std::uint64_t bias = (std::uint64_t{1} << (layout.exponent_bits - 1)) - 1;
    const std::uint64_t mantissa_end = std::uint64_t{1} << layout.mantissa_bits;
    const bool negative = *rc::gen::arbitrary<bool>();
    enum Kind { zero, subnormal, large, near_one, any };
    const Kind kind = *rc::gen::weightedElement<Kind>({{4, near_one}, {1, zero}, {1, subnormal}, {1, large}, {3, any}});
    std::uint64_t exponent = 0;
    std::uint64_t mantissa = *inRange<std::uint64_t>(0, mantissa_end);
    switch (kind) {
      case zero: mantissa = 0; break;
      case subnormal: if (mantissa == 0) mantissa = 1; break;
      case large: exponent = top_exponent - *inRange<std::uint64_t>(0, 3); break;
      case near_one: exponent = bias - 6 + *inRange<std::uint64_t>(0, 13); break;
      case any: exponent = *inRange<std::uint64_t>(0, top_exponent + 1); break;
    }
    return from_fields(dtype, negative, exponent, mantissa);
  });
}

rc::Gen<double> moderate_value(Dtype dtype) {
  return rc::gen::exec([dtype] {
    const BitLayout layout = bit_layout(dtype);
    const std::uint64_t bias = (std::uint64_t{1} << (layout.exponent_bits - 1)) - 1;
    const bool negative = *rc::gen::arbitrary<bool>();
    if (*inRange(0, 8) == 0) return negative ? -0.0 : 0.0;
    const std::uint64_t exponent = bias - 6 + *inRange<std::uint64_t>(0, 13);
    return from_fields(dtype, negative, exponent, *inRange<std::uint64_t>(0, std::uint64_t{1} << layout.mantissa_bits));
  });
}

rc::Gen<Values> values(Dtype dtype, std::size_t count) {
  return rc::gen::map(rc::gen::container<std::vector<double>>(count, value(dtype)),
                      [](std::vector<double> v) { return Values{std::move(v)}; });
}

rc::Gen<Values> moderate_values(Dtype dtype, std::size_t count) {
  return rc::gen::map(rc::gen::container<std::vector<double>>(count, moderate_value(dtype)),
                      [](std::vector<double> v) { return Values{std::move(v)}; });
}

}  // namespace gen
}  // namespace ropecheck::proofs
