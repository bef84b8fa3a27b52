#include "fuzz/search/generators.h"

#include <algorithm>
#include <cmath>

#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::fuzz {
namespace {

using reference::decode_bits;
using reference::encode_bits;
using reference::format_of;
using reference::max_finite;
using reference::round_to_format;

int storage_bits(Dtype dtype) {
  switch (dtype) {
    case Dtype::f64: return 64;
    case Dtype::f32: return 32;
    default: return 16;
  }
}

double any_bits(Dtype dtype, Rng& rng) {
  const int bits = storage_bits(dtype);
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  return decode_bits(rng.next() & mask, dtype);
}

double sign(Rng& rng) { return rng.chance(50) ? 1.0 : -1.0; }

// m·2^k, m uniform in [1, 2), k in [low, high], rounded to the dtype (finite: |k| stays in range).
double scaled(Dtype dtype, Rng& rng, int low, int high) {
  const double m = 1.0 + rng.unit();
  return round_to_format(sign(rng) * std::ldexp(m, static_cast<int>(rng.between(low, high))), dtype);
}

double subnormal(Dtype dtype, Rng& rng) {
  const reference::Format f = format_of(dtype);
  // n·2^(emin−p+1), 1 ≤ n < 2^(p−1): every subnormal of the format (exact in a double)
  const std::int64_t top = std::int64_t{1} << std::min(f.precision - 1, 62);
  const auto n = static_cast<double>(rng.between(1, top - 1));
  return sign(rng) * std::ldexp(n, f.emin - f.precision + 1);
}

// Near the overflow threshold: a rotation grows one component by up to √2 (docs/rope.md §5: f16
// x = y = 60000 at 45° gives 84853 > 65504), so values from max/2 up to max.
double near_overflow(Dtype dtype, Rng& rng) {
  return round_to_format(sign(rng) * max_finite(dtype) * (1.0 - 0.5 * rng.unit()), dtype);
}

double special(Rng& rng) {
  switch (rng.below(3)) {
    case 0: return std::nan("");
    case 1: return HUGE_VAL;
    default: return -HUGE_VAL;
  }
}

// One value of a class chosen by weight.
double edge_value(Dtype dtype, Rng& rng) {
  const std::uint64_t pick = rng.below(100);
  if (pick < 30) return scaled(dtype, rng, -3, 3);
  if (pick < 40) return subnormal(dtype, rng);
  if (pick < 46) return rng.chance(50) ? 0.0 : -0.0;
  if (pick < 56) return near_overflow(dtype, rng);
  if (pick < 60) return special(rng);
  if (pick < 72) {  // near 1: 1 ± a few ulps
    const std::uint64_t bits = encode_bits(1.0, dtype);
    return sign(rng) * decode_bits(bits - 2 + rng.below(5), dtype);
  }
  double v = any_bits(dtype, rng);
  if (!std::isfinite(v) && rng.chance(80)) v = scaled(dtype, rng, -3, 3);  // keep specials rare
  return v;
}

// θ'_j and the angle quantum π/2 in long double (for targeting cos or sin ≈ 0).
long double theta(const Spec& spec, int pair) { return frequency<long double>(spec, pair); }

std::int64_t clamp_position(long double p) {
  if (!(p >= 0)) return 0;
  if (p > static_cast<long double>(kMaxPosition)) return kMaxPosition;
  return static_cast<std::int64_t>(std::llround(p));
}

// m with m·θ'_j near a multiple of π/2: there x·cos − y·sin cancels (cos or sin ≈ 0).
std::int64_t near_quarter_turn(const Spec& spec, int pair, Rng& rng) {
  const long double quarter = std::acos(-1.0L) / 2;
  const long double step = theta(spec, pair);
  const long double turns = static_cast<long double>(kMaxPosition) * step / quarter;
  if (!(turns >= 1)) return clamp_position(quarter / step);
  // q log-uniform over [1, turns]: small and huge angles both
  const long double q = std::floor(std::exp(rng.unit() * std::log(turns)));
  return clamp_position(std::max(1.0L, q) * quarter / step + static_cast<long double>(rng.between(-1, 1)));
}

std::int64_t edge_position(const Spec& spec, int pair, Rng& rng) {
  const std::uint64_t pick = rng.below(100);
  if (pick < 6) return static_cast<std::int64_t>(rng.below(3));  // 0, 1, 2
  if (pick < 31) {  // 2^k + δ
    const std::int64_t power = std::int64_t{1} << rng.between(0, 30);
    return std::clamp<std::int64_t>(power + rng.between(-2, 2), 0, kMaxPosition);
  }
  if (pick < 41) return kMaxPosition - static_cast<std::int64_t>(rng.below(4));
  if (pick < 56) return rng.between(0, kMaxPosition);
  if (pick < 71) return clamp_position(std::exp2(31.0L * static_cast<long double>(rng.unit())));  // log-uniform
  return near_quarter_turn(spec, pair, rng);
}

// Pairs where the scaling changes regime (llama3's wavelength bands, YaRN's ramp ends, LongRoPE's
// per-pair factors, M-RoPE section starts): where θ'_j/θ_j stops or starts being constant.
std::vector<int> band_edges(const Spec& spec) {
  const int pairs = spec.rotary_dim / 2;
  std::vector<int> edges = {0, pairs - 1};
  Spec plain = spec;
  plain.scaling = Scaling{};
  std::vector<long double> ratio(static_cast<std::size_t>(pairs));
  for (int j = 0; j < pairs; ++j) ratio[j] = frequency<long double>(spec, j) / frequency<long double>(plain, j);
  auto same = [&](int j) { return std::fabs(ratio[j] - ratio[j - 1]) <= 1e-15L * std::fabs(ratio[j]); };
  for (int j = 1; j + 1 < pairs; ++j) {
    if (same(j) != same(j + 1)) edges.insert(edges.end(), {j - 1, j, j + 1});
  }
  int start = 0;
  for (int section : spec.axes.sections) {
    start += section;
    if (start < pairs) edges.insert(edges.end(), {start - 1, start});
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  return edges;
}

int edge_pair(const Spec& spec, Rng& rng) {
  const int pairs = spec.rotary_dim / 2;
  if (rng.chance(50)) {
    const std::vector<int> edges = band_edges(spec);
    return edges[rng.below(edges.size())];
  }
  return static_cast<int>(rng.below(static_cast<std::uint64_t>(pairs)));
}

// A value `ulps` quanta away from v within the dtype (through its bit pattern).
double step_bits(double v, std::int64_t ulps, Dtype dtype) {
  if (!std::isfinite(v)) return v;
  const std::uint64_t bits = encode_bits(std::fabs(v), dtype);
  const std::int64_t moved = std::max<std::int64_t>(0, static_cast<std::int64_t>(bits) + ulps);
  const double magnitude = decode_bits(static_cast<std::uint64_t>(moved), dtype);
  return std::signbit(v) ? -magnitude : magnitude;
}

}  // namespace

Rng trial_rng(std::uint64_t seed, std::int64_t trial) {
  Rng mixer(seed ^ (0xd1b54a32d192ed03ULL * (static_cast<std::uint64_t>(trial) + 1)));
  return Rng(mixer.next());
}

FuzzCase edge_case(const Spec& spec, Rng& rng) {
  FuzzCase c;
  c.pair = edge_pair(spec, rng);
  const int components = position_components(spec);
  for (int k = 0; k < components; ++k) c.position.push_back(edge_position(spec, c.pair, rng));
  const Dtype dtype = input_dtype_of(spec);  // inputs are values of the input dtype
  const std::uint64_t pick = rng.below(100);
  if (pick < 15) {  // components many orders of magnitude apart
    const reference::Format f = format_of(dtype);
    c.x = scaled(dtype, rng, -2, 2);
    c.y = round_to_format(c.x * std::ldexp(1.0 + rng.unit(), -static_cast<int>(rng.between(f.precision, f.emax - f.emin))), dtype);
    if (rng.chance(50)) std::swap(c.x, c.y);
  } else if (pick < 25) {  // both near overflow: the rotated pair may leave the format
    c.x = near_overflow(dtype, rng);
    c.y = near_overflow(dtype, rng);
  } else {
    c.x = edge_value(dtype, rng);
    c.y = edge_value(dtype, rng);
  }
  c.background = rng.chance(50) ? 0 : rng.next() | 1;
  return c;
}

FuzzCase mutate(const Spec& spec, const FuzzCase& c, Rng& rng) {
  FuzzCase m = c;
  const Dtype dtype = input_dtype_of(spec);  // inputs are values of the input dtype
  const int pairs = spec.rotary_dim / 2;
  const std::uint64_t pick = rng.below(100);
  if (pick < 45) {  // position
    auto& p = m.position[rng.below(m.position.size())];
    switch (rng.below(5)) {
      case 0: p += rng.between(-3, 3); break;
      case 1: p += (rng.chance(50) ? 1 : -1) * (std::int64_t{1} << rng.between(0, 30)); break;
      case 2: p = clamp_position(static_cast<long double>(p) * (1.0L + (rng.unit() - 0.5) * 0x1p-8)); break;
      case 3: p = near_quarter_turn(spec, m.pair, rng); break;
      default: p = edge_position(spec, m.pair, rng); break;
    }
    p = std::clamp<std::int64_t>(p, 0, kMaxPosition);
  } else if (pick < 85) {  // input bits
    double& v = rng.chance(50) ? m.x : m.y;
    switch (rng.below(4)) {
      case 0: v = step_bits(v, rng.between(-4, 4), dtype); break;
      case 1: {  // flip one significand bit
        const int bit = static_cast<int>(rng.below(static_cast<std::uint64_t>(format_of(dtype).precision - 1)));
        if (std::isfinite(v)) v = decode_bits(encode_bits(v, dtype) ^ (std::uint64_t{1} << bit), dtype);
        break;
      }
      case 2: v = -v; break;
      default: std::swap(m.x, m.y); break;
    }
  } else if (pick < 95) {  // pair index
    m.pair = rng.chance(50) ? std::clamp(m.pair + static_cast<int>(rng.between(-1, 1)), 0, pairs - 1)
                            : edge_pair(spec, rng);
  } else {
    m.background = rng.chance(50) ? 0 : rng.next() | 1;
  }
  return m;
}

std::vector<double> head_input(const Spec& spec, const FuzzCase& c) {
  std::vector<double> head(static_cast<std::size_t>(spec.head_dim), 0.0);
  if (c.background != 0) {
    Rng rng(c.background);
    for (double& v : head) v = scaled(input_dtype_of(spec), rng, -4, 1);
  }
  const reference::PairDims dims = reference::pair_dims(spec, c.pair);
  head[static_cast<std::size_t>(dims.first)] = c.x;
  head[static_cast<std::size_t>(dims.second)] = c.y;
  return head;
}

}  // namespace ropecheck::fuzz
