// The deterministic generator of the checked-in suites (golden/suites/*.json).
//
// Determinism: inputs come from splitmix64 (Steele, Lea, Flood 2014; the same constants as
// java.util.SplittableRandom), re-seeded per group from (generator seed, suite name, group index),
// and are turned into dtype values by integer arithmetic and exact ldexp only — no std::
// distribution (their algorithms differ between standard libraries), no libm call whose last bit
// may differ between C libraries. Where an input depends on an angle (Cancellation, Overflow), the
// angle and its cos/sin come from MPFR (correctly rounded, hence identical everywhere). Expected
// values come from the reference only (reference::apply, rotate_exact, attention).
#include <algorithm>
#include <array>
#include <functional>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include <mpfr.h>

#include "base/random.h"
#include "golden/golden.h"
#include "golden/internal.h"
#include "reference/attention.h"
#include "reference/multiprecision.h"
#include "reference/rope.h"
#include "reference/rounding.h"

namespace ropecheck::golden {
namespace {

using reference::Real;

// The one seed of every checked-in suite; each group derives its own stream from it.
constexpr std::uint64_t kSeed = 1;
constexpr int kPrecisionBits = 256;

// ---------------------------------------------------------------------------------------------
// Random numbers.

using Rng = SplitMix64;

// FNV-1a, to fold the suite name into the group seeds.
std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// A normal value of the dtype with exponent in [low, high]: random sign and significand bits.
double normal_value(Rng& rng, Dtype dtype, int low, int high) {
  const reference::Format f = reference::format_of(dtype);
  low = std::max(low, f.emin);
  high = std::min(high, f.emax);
  const int e = static_cast<int>(rng.range(low, high));
  const int fraction_bits = f.precision - 1;
  const std::uint64_t fraction = fraction_bits >= 64 ? rng.next() : rng.next() >> (64 - fraction_bits);
  const double magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(fraction), -fraction_bits), e);
  return rng.chance(1, 2) ? -magnitude : magnitude;
}

// Activations of useful magnitudes: mostly around 1, sometimes small or large, never so large that
// a rotation (growth ≤ √2) overflows.
double random_value(Rng& rng, Dtype dtype) {
  const std::uint64_t r = rng.below(16);
  if (r < 12) return normal_value(rng, dtype, -4, 2);
  if (r < 15) return normal_value(rng, dtype, -10, 6);
  return normal_value(rng, dtype, -30, 12);
}

double subnormal_value(Rng& rng, Dtype dtype) {
  const reference::Format f = reference::format_of(dtype);
  const int fraction_bits = f.precision - 1;
  const std::uint64_t m = 1 + rng.below((std::uint64_t{1} << fraction_bits) - 1);
  const double magnitude = std::ldexp(static_cast<double>(m), f.emin - fraction_bits);
  return rng.chance(1, 2) ? -magnitude : magnitude;
}

}  // namespace

// Exact values for the optional `exact` field: 40 significant digits, "d.<39 digits>e±NN".
std::string format_exact(const Real& value) {
  mpfr_exp_t exponent = 0;
  char* digits = mpfr_get_str(nullptr, &exponent, 10, 40, value.data(), MPFR_RNDN);
  std::string text(digits);
  mpfr_free_str(digits);
  std::string out;
  std::size_t i = 0;
  if (text[0] == '-') {
    out += '-';
    i = 1;
  }
  const bool zero = mpfr_zero_p(value.data()) != 0;
  out += text[i];
  out += '.';
  out += text.substr(i + 1);
  const long e = zero ? 0 : static_cast<long>(exponent) - 1;  // value = 0.d1d2…·10^exponent
  out += e < 0 ? "e-" : "e+";
  const std::string magnitude = std::to_string(e < 0 ? -e : e);
  if (magnitude.size() < 2) out += '0';
  out += magnitude;
  return out;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Flags.

const std::vector<std::pair<std::string, std::string>>& catalog() {
  static const std::vector<std::pair<std::string, std::string>> flags = {
      {"PositionZero",
       "Every position component is 0: the rotation is the identity, so outputs equal the inputs times "
       "the scaling's attention factor (1 unless yarn, yarn-ggml or longrope set one). Catches a wrong "
       "first row of a cos/sin cache and an attention factor applied where it should not be."},
      {"LargePosition",
       "Positions from 2^16 up to 2^31 - 1, including 2^24 + 1 (not a float32 value). A float32 angle "
       "p*theta carries an absolute error of about p*theta*2^-24, fp16/bf16 position or cache storage "
       "collapses neighbouring positions, and fast sin/cos on unreduced arguments fail here "
       "(docs/rope.md section 5). expected_f32_recipe shows what the common float32 recipe computes."},
      {"HugeBase",
       "A base far beyond common models (10^9 and more): the frequencies span many more orders of "
       "magnitude, so powf/exp-log formulations of base^(-2j/d) and running products lose relative "
       "accuracy in the lowest frequencies."},
      {"Subnormal",
       "Inputs are subnormal numbers of the dtype (or the smallest normals): flush-to-zero and "
       "denormals-are-zero modes (fast-math, some GPU defaults) change the result; the correctly "
       "rounded output is subnormal or zero."},
      {"SignedZero",
       "Inputs +0 and -0 in every combination within a pair. Outputs follow IEEE 754 arithmetic of "
       "x*cos - y*sin and x*sin + y*cos with the exact cos and sin (reference/rope.h), so the sign of "
       "a zero output depends on the order and fusion of the operations an implementation uses."},
      {"NaNInput",
       "A NaN in a rotated pair makes both outputs of that pair NaN, and no other pair; a NaN in a "
       "pass-through dim is copied. Catches kernels that drop NaNs (max/min tricks) or leak them into "
       "other pairs."},
      {"InfInput",
       "+-Inf in a rotated pair: outputs follow IEEE 754 arithmetic of the formula with the exact "
       "cos/sin (Inf*0 = NaN at position 0 where sin = 0, Inf - Inf = NaN, otherwise signed Inf)."},
      {"F16Overflow",
       "float16 pairs of magnitude up to 65504 per component, placed so that the rotation turns the "
       "pair onto an axis: one output component grows by up to sqrt(2) (x = y = 60000 rotated by 45 "
       "degrees gives 84853 > 65504), and the correctly rounded output is +-Inf. Kernels that compute in "
       "float32 must round to Inf when converting back, not saturate."},
      {"Overflow",
       "Pairs with components up to the dtype's largest finite value, placed so that the rotation turns "
       "the pair onto an axis: the exact output exceeds the largest finite value by up to sqrt(2) and "
       "rounds to +-Inf; intermediate products may overflow in implementations that compute in the "
       "dtype itself."},
      {"Cancellation",
       "Inputs chosen (from the exact angle) so that every pair is rotated onto the y axis: the first "
       "output x*cos - y*sin is tiny compared with the pair's norm, so per-element relative or ULP "
       "error is meaningless there and the normwise error of docs/design.md is the fair metric."},
      {"PassThrough",
       "rotary_dim < head_dim and the dims [rotary_dim, head_dim) hold NaN, +-Inf, +-0, subnormal and "
       "largest finite values: they must be copied bit for bit. Catches kernels that rotate or mix them, "
       "and half-layout pairing by head_dim/2 instead of rotary_dim/2."},
      {"MultiHead",
       "Several heads with distinct data in one tensor: every head uses the same angles and heads never "
       "mix (docs/rope.md section 1). Catches stride and indexing bugs."},
      {"ShiftedPositions",
       "The same Q, K and V as the test before it with every position shifted by the same amount: the "
       "exact scores and outputs are identical (<R_m q, R_n k> depends on n - m only: docs/rope.md section 3), so the "
       "expected values are equal; an implementation whose angle error grows with position differs."},
      {"Causal",
       "Causal mask: key j is visible to query i only when k_position[j] <= q_position[i]; masked "
       "scores are still reported (before the mask), the outputs use only visible keys."},
  };
  return flags;
}

// ---------------------------------------------------------------------------------------------
// Test builders. Each returns a test with inputs filled in; expected values are computed at the end
// of a group, by the reference only.

// Position tuples for one token: for M-RoPE, even tokens are text tokens (t = h = w) and odd ones
// vision patches (t, then h and w on a small grid); otherwise each component uniform in [low, high].
std::vector<std::int64_t> random_positions(Rng& rng, const Spec& spec, std::int64_t tokens, std::int64_t low,
                                           std::int64_t high) {
  const int components = position_components(spec);
  std::vector<std::int64_t> out;
  for (std::int64_t t = 0; t < tokens; ++t) {
    if (spec.axes.kind == AxesKind::mrope && t % 2 == 1) {
      out.push_back(rng.range(low, high));
      for (int c = 1; c < components; ++c) out.push_back(rng.range(0, 63));
    } else if (spec.axes.kind == AxesKind::mrope) {
      const std::int64_t p = rng.range(low, high);
      for (int c = 0; c < components; ++c) out.push_back(p);
    } else {
      for (int c = 0; c < components; ++c) out.push_back(rng.range(low, high));
    }
  }
  return out;
}

std::vector<std::int64_t> repeat_positions(const Spec& spec, const std::vector<std::int64_t>& per_token) {
  std::vector<std::int64_t> out;
  for (std::int64_t p : per_token) {
    for (int c = 0; c < position_components(spec); ++c) out.push_back(p);
  }
  return out;
}

class GroupBuilder {
 public:
  GroupBuilder(Spec spec, std::uint64_t seed, bool with_recipe)
      : spec_(std::move(spec)), in_(input_dtype_of(spec_)), rng_(seed), with_recipe_(with_recipe) {}

  const Spec& spec() const { return spec_; }
  Rng& rng() { return rng_; }
  bool partial() const { return spec_.rotary_dim < spec_.head_dim; }

  RopeTest& add(std::string comment, std::vector<std::string> flags, std::int64_t tokens, std::int64_t heads,
                std::vector<std::int64_t> positions) {
    RopeTest t;
    t.comment = std::move(comment);
    t.flags = std::move(flags);
    t.tokens = tokens;
    t.heads = heads;
    t.head_dim = spec_.head_dim;
    t.positions = std::move(positions);
    t.input.resize(static_cast<std::size_t>(tokens * heads * spec_.head_dim));
    for (double& v : t.input) v = random_value(rng_, in_);
    tests_.push_back(std::move(t));
    return tests_.back();
  }

  // -- the batteries --------------------------------------------------------------------------

  void random(std::int64_t tokens, std::int64_t heads, std::int64_t low, std::int64_t high, bool with_exact) {
    std::vector<std::string> flags;
    if (heads > 1) flags.push_back("MultiHead");
    add("random inputs at random positions in [" + std::to_string(low) + ", " + std::to_string(high) + "]", flags,
        tokens, heads, random_positions(rng_, spec_, tokens, low, high));
    if (with_exact) exact_.push_back(tests_.size() - 1);
  }

  void position_zero(std::int64_t heads) {
    add("position 0: the identity rotation (times the attention factor)", {"PositionZero"}, 1, heads,
        repeat_positions(spec_, {0}));
  }

  void large_positions() {
    const std::int64_t max_position = (std::int64_t{1} << 31) - 1;
    add("positions 2^16, between 2^16 and 2^24, and 2^31 - 1", {"LargePosition"}, 3, 1,
        repeat_positions(spec_, {std::int64_t{1} << 16, rng_.range((std::int64_t{1} << 16) + 1, std::int64_t{1} << 24),
                                 max_position}));
    add("positions 2^24 + 1 (not a float32 value), between 2^24 and 2^31, and 10^9 + 7", {"LargePosition"}, 3, 1,
        repeat_positions(spec_, {(std::int64_t{1} << 24) + 1, rng_.range((std::int64_t{1} << 24) + 2, max_position - 1),
                                 1000000007}));
  }

  void cancellation() {
    RopeTest& t = add("every pair rotated onto the y axis: first outputs near zero", {"Cancellation"}, 1, 1,
                      random_positions(rng_, spec_, 1, 1, 1 << 20));
    place_pairs(t, [&](const Real& a, int, std::array<Real, 2>& xy, const Real& half_pi) {
      // input angle φ = π/2 − a, so the rotated angle is π/2: output (≈ 0, ρ)
      const Real rho = Real(std::fabs(normal_value(rng_, in_, -2, 2)));
      const Real phi = half_pi - a;
      xy = {rho * cos(phi), rho * sin(phi)};
    });
  }

  void overflow() {
    const bool f16 = spec_.dtype == Dtype::f16;
    RopeTest& t = add(f16 ? "f16 pairs up to 65504 rotated onto an axis: outputs overflow to +-Inf"
                          : "pairs up to the largest finite value rotated onto an axis: outputs overflow to +-Inf",
                      {f16 ? "F16Overflow" : "Overflow"}, 1, 1, random_positions(rng_, spec_, 1, 1, 1 << 16));
    const Real largest(reference::max_finite(spec_.dtype));
    place_pairs(t, [&](const Real& a, int, std::array<Real, 2>& xy, const Real& half_pi) {
      // Output on an axis: input angle φ = k·π/2 − a; the largest input norm with both components
      // within the format is ρ = max / max(|cos φ|, |sin φ|), up to √2·max when φ is diagonal.
      const Real phi = Real(static_cast<int>(rng_.below(4))) * half_pi - a;
      const Real c = cos(phi), s = sin(phi);
      const Real rho = largest / std::max(Real(abs(c)), Real(abs(s)));
      xy = {rho * c, rho * s};
    });
  }

  void subnormal() {
    RopeTest& t = add("subnormal inputs (and the smallest normals)", {"Subnormal"}, 2, 1,
                      random_positions(rng_, spec_, 2, 0, 1 << 12));
    const reference::Format f = reference::format_of(in_);
    for (double& v : t.input) {
      v = rng_.chance(3, 4) ? subnormal_value(rng_, in_) : normal_value(rng_, in_, f.emin, f.emin + 2);
    }
  }

  void signed_zero() {
    RopeTest& t = add("+0 and -0 in every combination, at position 0 and at a random position", {"SignedZero"}, 2, 1,
                      [&] {
                        auto p = repeat_positions(spec_, {0});
                        auto q = random_positions(rng_, spec_, 1, 1, 1 << 12);
                        p.insert(p.end(), q.begin(), q.end());
                        return p;
                      }());
    const int pairs = spec_.rotary_dim / 2;
    for (std::int64_t token = 0; token < 2; ++token) {
      for (int j = 0; j < pairs; ++j) {
        const reference::PairDims pd = reference::pair_dims(spec_, j);
        double& x = t.input[token * spec_.head_dim + pd.first];
        double& y = t.input[token * spec_.head_dim + pd.second];
        // At position 0 only pairs of two zeros: a zero next to a nonzero there gives an exactly
        // zero output (y·sin 0), which the reference decides only at its maximum precision (slow).
        switch (token == 0 ? j % 4 : j % 6) {
          case 0: x = 0.0, y = 0.0; break;
          case 1: x = -0.0, y = 0.0; break;
          case 2: x = 0.0, y = -0.0; break;
          case 3: x = -0.0, y = -0.0; break;
          case 4: x = -0.0; break;  // y keeps its random value
          case 5: y = -0.0; break;
        }
      }
    }
  }

  void nan_input() {
    RopeTest& t = add("NaN in some pairs (x, y or both); the other pairs are finite", {"NaNInput"}, 1, 1,
                      random_positions(rng_, spec_, 1, 0, 1 << 12));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const int pairs = spec_.rotary_dim / 2;
    for (int j = 0; j < pairs; j += 3) {
      const reference::PairDims pd = reference::pair_dims(spec_, j);
      if (j % 9 == 0) t.input[pd.first] = nan;
      else if (j % 9 == 3) t.input[pd.second] = nan;
      else t.input[pd.first] = t.input[pd.second] = nan;
    }
    if (partial()) t.input[spec_.head_dim - 1] = nan;
  }

  void inf_input() {
    RopeTest& t = add("+-Inf in some pairs, at position 0 (Inf*sin 0 = NaN) and at a random position", {"InfInput"}, 2,
                      1, [&] {
                        auto p = repeat_positions(spec_, {0});
                        auto q = random_positions(rng_, spec_, 1, 1, 1 << 12);
                        p.insert(p.end(), q.begin(), q.end());
                        return p;
                      }());
    const double inf = std::numeric_limits<double>::infinity();
    const int pairs = spec_.rotary_dim / 2;
    for (std::int64_t token = 0; token < 2; ++token) {
      for (int j = 0; j < pairs; j += 2) {
        const reference::PairDims pd = reference::pair_dims(spec_, j);
        double& x = t.input[token * spec_.head_dim + pd.first];
        double& y = t.input[token * spec_.head_dim + pd.second];
        switch ((j / 2) % 5) {
          case 0: x = inf; break;
          case 1: x = -inf; break;
          case 2: y = inf; break;
          case 3: x = inf, y = inf; break;
          case 4: x = inf, y = -inf; break;
        }
      }
    }
  }

  void pass_through() {
    if (!partial()) return;
    RopeTest& t = add("special values in the pass-through dims [rotary_dim, head_dim): copied bit for bit",
                      {"PassThrough"}, 2, 1, random_positions(rng_, spec_, 2, 1, 1 << 16));
    const double specials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity(), 0.0, -0.0,
                               reference::max_finite(in_), -reference::max_finite(in_)};
    for (std::int64_t token = 0; token < 2; ++token) {
      for (int i = spec_.rotary_dim; i < spec_.head_dim; ++i) {
        const int k = (i - spec_.rotary_dim + static_cast<int>(token)) % 9;
        double& v = t.input[token * spec_.head_dim + i];
        if (k < 7) v = specials[k];
        else if (k == 7) v = subnormal_value(rng_, in_);
        // k == 8: keeps its random value
      }
    }
  }

  // Adds `flag` to every test so far (a property of the whole group, e.g. HugeBase).
  void mark_all(const std::string& flag) {
    for (RopeTest& t : tests_) t.flags.insert(t.flags.begin(), flag);
  }

  // The standard battery of one group.
  void battery(bool specials) {
    position_zero(1);
    random(2, 1, 1, 4096, /*with_exact=*/true);
    random(1, 2, 4096, 1 << 16, false);
    large_positions();
    cancellation();
    if (specials) {
      subnormal();
      signed_zero();
      nan_input();
      inf_input();
      // Overflow needs inputs near the output format's largest value: a narrower input dtype has
      // none (f16 and bf16 inputs, f32 outputs), so a mixed-dtype group has no overflow test.
      if (in_ == spec_.dtype) overflow();
    }
    pass_through();
  }

  // A shorter battery for partial rotary_dim groups, whose rotated part the full groups cover.
  void partial_battery() {
    random(1, 1, 1, 4096, /*with_exact=*/true);
    random(1, 2, 4096, 1 << 16, false);
    add("positions between 2^16 and 2^24, 2^24 + 1 (not a float32 value), and 2^31 - 1", {"LargePosition"}, 3, 1,
        repeat_positions(spec_, {rng_.range(std::int64_t{1} << 16, std::int64_t{1} << 24), (std::int64_t{1} << 24) + 1,
                                 (std::int64_t{1} << 31) - 1}));
    cancellation();
    pass_through();
  }

  Group finish(int precision_bits) {
    Group g;
    g.spec = spec_;
    for (std::size_t i = 0; i < tests_.size(); ++i) {
      RopeTest& t = tests_[i];
      const reference::Shape shape{t.tokens, t.heads, t.head_dim};
      t.expected = reference::apply(spec_, shape, t.positions, t.input, {precision_bits, reference::Model::exact});
      if (with_recipe_) {
        t.expected_f32_recipe =
            reference::apply(spec_, shape, t.positions, t.input, {precision_bits, reference::Model::f32_recipe});
      }
      if (std::find(exact_.begin(), exact_.end(), i) != exact_.end()) {
        const std::vector<Real> exact =
            reference::rotate_exact(spec_, shape, t.positions, t.input, precision_bits, reference::Form::elementwise);
        std::vector<std::string> text;
        text.reserve(exact.size());
        for (const Real& v : exact) text.push_back(format_exact(v));
        t.exact = std::move(text);
      }
      g.rope_tests.push_back(std::move(t));
    }
    return g;
  }

 private:
  // Fills every rotated pair of every token and head of `t` from place(angle, pair, xy, π/2),
  // computed at 128 bits and rounded to the dtype (correctly, so identical on every machine).
  template <class Place>
  void place_pairs(RopeTest& t, Place place) {
    const int components = position_components(spec_);
    for (std::int64_t token = 0; token < t.tokens; ++token) {
      std::span<const std::int64_t> position(t.positions.data() + token * components, components);
      for (int j = 0; j < spec_.rotary_dim / 2; ++j) {
        const Real a = reference::angle(spec_, position, j, 128);
        reference::PrecisionScope scope(128);
        const Real half_pi = acos(Real(0));
        for (std::int64_t h = 0; h < t.heads; ++h) {
          std::array<Real, 2> xy;
          place(a, j, xy, half_pi);
          const reference::PairDims pd = reference::pair_dims(spec_, j);
          const std::int64_t row = (token * t.heads + h) * spec_.head_dim;
          t.input[row + pd.first] = static_cast<double>(reference::round_to_format(xy[0], in_));
          t.input[row + pd.second] = static_cast<double>(reference::round_to_format(xy[1], in_));
        }
      }
    }
  }

  Spec spec_;
  Dtype in_;  // the inputs' dtype (spec_.dtype unless input_dtype says otherwise): inputs are its values
  Rng rng_;
  bool with_recipe_;
  std::vector<RopeTest> tests_;
  std::vector<std::size_t> exact_;
};

// ---------------------------------------------------------------------------------------------
// Attention tests.

class AttentionBuilder {
 public:
  AttentionBuilder(Spec spec, std::uint64_t seed) : spec_(std::move(spec)), rng_(seed) {}

  AttentionTest& add(std::string comment, std::vector<std::string> flags, bool causal, std::int64_t heads,
                     std::int64_t v_dim, std::vector<std::int64_t> q_positions, std::vector<std::int64_t> k_positions) {
    AttentionTest t;
    t.comment = std::move(comment);
    t.flags = std::move(flags);
    if (causal) t.flags.push_back("Causal");
    if (heads > 1) t.flags.push_back("MultiHead");
    t.causal = causal;
    t.q_tokens = static_cast<std::int64_t>(q_positions.size());
    t.k_tokens = static_cast<std::int64_t>(k_positions.size());
    t.heads = heads;
    t.head_dim = spec_.head_dim;
    t.v_dim = v_dim;
    t.q_positions = std::move(q_positions);
    t.k_positions = std::move(k_positions);
    auto fill = [&](std::vector<double>& values, std::int64_t count) {
      values.resize(static_cast<std::size_t>(count));
      for (double& v : values) v = normal_value(rng_, spec_.dtype, -3, 0);  // |v| < 1: softmax stays informative
    };
    fill(t.q, t.q_tokens * heads * spec_.head_dim);
    fill(t.k, t.k_tokens * heads * spec_.head_dim);
    fill(t.v, t.k_tokens * heads * v_dim);
    tests_.push_back(std::move(t));
    return tests_.back();
  }

  // Q, K, V of the previous test at positions shifted by `shift`.
  void shifted(std::int64_t shift) {
    AttentionTest t = tests_.back();
    t.comment = "the previous test's Q, K, V with every position shifted by " + std::to_string(shift);
    t.flags.erase(std::remove(t.flags.begin(), t.flags.end(), "PositionZero"), t.flags.end());
    t.flags.insert(t.flags.begin(), "ShiftedPositions");
    if (shift >= (std::int64_t{1} << 16)) t.flags.insert(t.flags.begin() + 1, "LargePosition");
    for (auto& p : t.q_positions) p += shift;
    for (auto& p : t.k_positions) p += shift;
    tests_.push_back(std::move(t));
  }

  std::vector<std::int64_t> positions(std::int64_t count, std::int64_t low, std::int64_t high) {
    std::vector<std::int64_t> out;
    for (std::int64_t i = 0; i < count; ++i) out.push_back(rng_.range(low, high));
    std::sort(out.begin(), out.end());
    return out;
  }

  void battery(int heads, int v_dim) {
    add("queries and keys at position 0: no rotation", {"PositionZero"}, false, 1, v_dim, {0, 0}, {0, 0, 0});
    add("consecutive positions, causal", {}, true, heads, v_dim, {2, 3}, {0, 1, 2, 3});
    shifted((std::int64_t{1} << 20) + 3);
    // Query positions are drawn before key positions, in separate statements: the evaluation order
    // of function arguments differs between compilers, and the bytes must not.
    std::vector<std::int64_t> q_positions = positions(3, 0, 4095);
    std::vector<std::int64_t> k_positions = positions(4, 0, 4095);
    add("random positions below 4096", {}, false, heads, v_dim, q_positions, k_positions);
    shifted(1000);
    q_positions = positions(2, (std::int64_t{1} << 31) - 64, (std::int64_t{1} << 31) - 1);
    k_positions = positions(3, (std::int64_t{1} << 31) - 128, (std::int64_t{1} << 31) - 65);
    add("positions near 2^31 - 1", {"LargePosition"}, true, 1, v_dim, q_positions, k_positions);
  }

  Group finish(int precision_bits) {
    Group g;
    g.spec = spec_;
    for (AttentionTest& t : tests_) {
      const reference::AttentionRounded r =
          reference::attention(spec_, t.q_tokens, t.k_tokens, t.heads, t.v_dim, t.q_positions, t.k_positions, t.q, t.k,
                               t.v, t.causal, precision_bits);
      t.expected_scores = r.scores;
      t.expected_outputs = r.outputs;
      g.attention_tests.push_back(std::move(t));
    }
    return g;
  }

 private:
  Spec spec_;
  Rng rng_;
  std::vector<AttentionTest> tests_;
};

// ---------------------------------------------------------------------------------------------
// Suite definitions.

struct SuiteContext {
  GoldenFile file;
  std::uint64_t group_seed() {
    return fnv1a(file.suite) ^ (kSeed * 0x9e3779b97f4a7c15ULL) ^ (0x632be59bd9b4e019ULL * (file.groups.size() + 1));
  }
  GroupBuilder group(const std::string& spec_text) {
    Spec s = parse_spec(spec_text);
    const bool recipe = s.dtype != Dtype::f64;
    return GroupBuilder(std::move(s), group_seed(), recipe);
  }
  void add(GroupBuilder& builder) { file.groups.push_back(builder.finish(kPrecisionBits)); }
  void add(AttentionBuilder& builder) { file.groups.push_back(builder.finish(kPrecisionBits)); }
};

struct SuiteDefinition {
  std::string name;
  Kind kind;
  std::string description;
  std::function<void(SuiteContext&)> body;
};

// Literature parameters (cited where the suites use them).
// Phi-3 128k LongRoPE factors (48 = head_dim 96 / 2): the rope_scaling of the config of
// microsoft/Phi-3-vision-128k-instruct (an early Phi-3 128k config: type "su",
// original_max_position_embeddings 4096, max_position_embeddings 131072, rope_theta 10000,
// hidden_size 3072 / 32 heads), as reproduced in huggingface/diffusers' OmniGen pipeline test
// (tests/pipelines/omnigen). Later Phi-3/3.5 revisions ship other lists; these are data, not a claim
// about any current checkpoint.
const char* kPhi3LongFactor =
    "1.0299999713897705/1.0499999523162842/1.0499999523162842/1.0799999237060547/1.2299998998641968/"
    "1.2299998998641968/1.2999999523162842/1.4499999284744263/1.5999999046325684/1.6499998569488525/"
    "1.8999998569488525/2.859999895095825/3.68999981880188/5.419999599456787/5.489999771118164/"
    "5.489999771118164/9.09000015258789/11.579999923706055/15.65999984741211/15.769999504089355/"
    "15.789999961853027/18.360000610351562/21.989999771118164/23.079999923706055/30.009998321533203/"
    "32.35000228881836/32.590003967285156/35.56000518798828/39.95000457763672/53.840003967285156/"
    "56.20000457763672/57.95000457763672/59.29000473022461/59.77000427246094/59.920005798339844/"
    "61.190006256103516/61.96000671386719/62.50000762939453/63.3700065612793/63.48000717163086/"
    "63.48000717163086/63.66000747680664/63.850006103515625/64.08000946044922/64.760009765625/"
    "64.80001068115234/64.81001281738281/64.81001281738281";
const char* kPhi3ShortFactor =
    "1.05/1.05/1.05/1.1/1.1/1.1/1.2500000000000002/1.2500000000000002/1.4000000000000004/1.4500000000000004/"
    "1.5500000000000005/1.8500000000000008/1.9000000000000008/2.000000000000001/2.000000000000001/"
    "2.000000000000001/2.000000000000001/2.000000000000001/2.000000000000001/2.000000000000001/"
    "2.000000000000001/2.000000000000001/2.000000000000001/2.000000000000001/2.000000000000001/"
    "2.000000000000001/2.000000000000001/2.000000000000001/2.000000000000001/2.000000000000001/"
    "2.000000000000001/2.000000000000001/2.1000000000000005/2.1000000000000005/2.2/2.3499999999999996/"
    "2.3499999999999996/2.3499999999999996/2.3499999999999996/2.3999999999999995/2.3999999999999995/"
    "2.6499999999999986/2.6999999999999984/2.8999999999999977/2.9499999999999975/3.049999999999997/"
    "3.049999999999997/3.049999999999997";

// The scaling suites: the model family's layout first, every dtype; the other layout in f32.
void scaling_groups(SuiteContext& c, const std::string& common, Layout model_layout) {
  const std::string own = model_layout == Layout::half ? "layout=half," : "layout=interleaved,";
  const std::string other = model_layout == Layout::half ? "layout=interleaved," : "layout=half,";
  for (const char* dtype : {"f32", "bf16", "f16", "f64"}) {
    GroupBuilder g = c.group(own + common + ",dtype=" + dtype);
    g.position_zero(1);
    g.random(2, 1, 1, 4096, std::string(dtype) == "f32");
    g.random(2, 2, 4096, 1 << 17, false);
    g.large_positions();
    g.cancellation();
    c.add(g);
  }
  GroupBuilder g = c.group(other + common + ",dtype=f32");
  g.random(2, 1, 1, 1 << 17, false);
  g.large_positions();
  c.add(g);
}

// The groups of an unscaled suite: head_dim 64 and 128, rotary_dim full and half.
void unscaled_groups(SuiteContext& c, const char* layout, const char* dtype, const char* base) {
  for (int head_dim : {64, 128}) {
    for (int rotary_dim : {head_dim, head_dim / 2}) {
      GroupBuilder g = c.group(std::string("layout=") + layout + ",head_dim=" + std::to_string(head_dim) +
                               ",rotary_dim=" + std::to_string(rotary_dim) + ",base=" + base + ",dtype=" + dtype);
      if (rotary_dim == head_dim)
        g.battery(true);
      else
        g.partial_battery();
      c.add(g);
    }
  }
}

// The groups of suite scaling-dynamic.
void scaling_dynamic_groups(SuiteContext& c) {
  for (const char* seq_len : {"4096", "8192", "16384"}) {
    for (const char* dtype : {"f32", "bf16"}) {
      GroupBuilder g = c.group(std::string("layout=half,head_dim=128,base=10000,scaling=dynamic,factor=2,"
                                           "original_max_position=4096,seq_len=") +
                               seq_len + ",dtype=" + dtype);
      g.position_zero(1);
      g.random(2, 1, 0, 16383, std::string(dtype) == "f32" && std::string(seq_len) == "8192");
      g.large_positions();
      g.cancellation();
      c.add(g);
    }
  }
}

// The groups of suite scaling-yarn.
void scaling_yarn_groups(SuiteContext& c) {
  scaling_groups(c, "head_dim=128,base=1000000,scaling=yarn,factor=4,original_max_position=32768", Layout::half);
  for (const char* dtype : {"f32", "bf16"}) {
    GroupBuilder g = c.group(std::string("layout=half,head_dim=64,base=10000,scaling=yarn,factor=40,"
                                         "original_max_position=4096,mscale=0.707,mscale_all_dim=0.707,dtype=") +
                             dtype);
    g.position_zero(1);
    g.random(2, 1, 1, 1 << 17, false);
    g.large_positions();
    c.add(g);
  }
  GroupBuilder g = c.group(
      "layout=half,head_dim=128,base=1000000,scaling=yarn,factor=4,"
      "original_max_position=32768,truncate=false,dtype=f32");
  g.random(2, 1, 1, 1 << 17, false);
  g.large_positions();
  c.add(g);
}

// The groups of suite scaling-longrope.
void scaling_longrope_groups(SuiteContext& c) {
  for (const char* seq_len : {"4096", "131072"}) {
    for (const char* dtype : {"f32", "bf16", "f16"}) {
      GroupBuilder g =
          c.group(std::string("layout=half,head_dim=96,base=10000,scaling=longrope,short_factor=") + kPhi3ShortFactor +
                  ",long_factor=" + kPhi3LongFactor + ",original_max_position=4096,factor=32,seq_len=" + seq_len + ",dtype=" + dtype);
      g.position_zero(1);
      g.random(2, 1, 1, 4096, std::string(dtype) == "f32");
      g.random(2, 1, 4096, 131071, false);
      g.large_positions();
      g.cancellation();
      c.add(g);
    }
  }
}

// The groups of suite axes-2d.
void axes_2d_groups(SuiteContext& c) {
  for (const char* layout : {"interleaved", "half"}) {
    for (const char* dtype : {"f32", "bf16", "f64"}) {
      GroupBuilder g = c.group(std::string("layout=") + layout + ",head_dim=64,base=10000,axes=2d,dtype=" + dtype);
      g.position_zero(1);
      g.random(3, 1, 0, 63, std::string(dtype) == "f32");
      g.random(2, 2, 0, 1023, false);
      g.large_positions();
      g.cancellation();
      c.add(g);
    }
  }
}

// The groups of suite axes-mrope.
void axes_mrope_groups(SuiteContext& c) {
  for (const char* dtype : {"f32", "bf16", "f16", "f64"}) {
    GroupBuilder g = c.group(std::string("layout=half,head_dim=128,base=1000000,axes=mrope,sections=16/24/24,dtype=") + dtype);
    g.position_zero(1);
    g.random(4, 1, 0, 4095, std::string(dtype) == "f32");
    g.random(2, 2, 0, 32767, false);
    g.large_positions();
    g.cancellation();
    c.add(g);
  }
}

// The groups of suite direction-inverse.
void direction_inverse_groups(SuiteContext& c) {
  for (const char* layout : {"interleaved", "half"}) {
    for (const char* dtype : {"f32", "bf16", "f64"}) {
      GroupBuilder g = c.group(std::string("layout=") + layout + ",head_dim=64,rotary_dim=32,base=10000,direction=inverse,dtype=" + dtype);
      g.battery(std::string(dtype) == "f32");
      c.add(g);
    }
  }
  GroupBuilder g = c.group("layout=half,head_dim=128,base=500000,scaling=llama3,direction=inverse,dtype=f32");
  g.random(2, 1, 1, 1 << 17, false);
  g.large_positions();
  c.add(g);
}

// The groups of suite multi-head.
void multi_head_groups(SuiteContext& c) {
  for (const char* layout : {"interleaved", "half"}) {
    for (const char* dtype : {"f32", "bf16"}) {
      GroupBuilder g = c.group(std::string("layout=") + layout + ",head_dim=64,base=10000,dtype=" + dtype);
      g.random(3, 4, 0, 1 << 16, false);
      g.random(1, 8, 1 << 20, 1 << 30, false);
      c.add(g);
    }
  }
}

// The groups of suite edge-cases.
void edge_case_groups(SuiteContext& c) {
  for (const char* base : {"1000000000", "1e20"}) {
    for (const char* dtype : {"f32", "bf16"}) {
      GroupBuilder g = c.group(std::string("layout=half,head_dim=64,base=") + base + ",dtype=" + dtype);
      g.random(2, 1, 1, 1 << 16, false);
      g.large_positions();
      g.cancellation();
      g.mark_all("HugeBase");
      c.add(g);
    }
  }
  for (const char* spec :
       {"layout=interleaved,head_dim=64,base=10000.5,dtype=f32", "layout=half,head_dim=8,rotary_dim=2,base=10000,dtype=f32",
        "layout=half,head_dim=80,rotary_dim=32,base=10000,dtype=f16",
        "layout=interleaved,head_dim=80,rotary_dim=32,base=10000,dtype=bf16"}) {
    GroupBuilder g = c.group(spec);
    g.battery(true);
    c.add(g);
  }
}

// The groups of suite attention.
void attention_groups(SuiteContext& c) {
  struct Case {
    const char* spec;
    int heads;
  };
  for (const Case& k :
       {Case{"layout=interleaved,head_dim=16,base=10000,dtype=f64", 2}, Case{"layout=half,head_dim=16,base=10000,dtype=f64", 1},
        Case{"layout=interleaved,head_dim=64,base=10000,dtype=f32", 2}, Case{"layout=half,head_dim=64,base=500000,dtype=f32", 1},
        Case{"layout=half,head_dim=64,base=10000,dtype=bf16", 2},
        Case{"layout=half,head_dim=64,base=1000000,scaling=yarn,factor=4,"
             "original_max_position=32768,dtype=f32",
             1}}) {
    AttentionBuilder g(parse_spec(k.spec), c.group_seed());
    g.battery(k.heads, 8);
    c.add(g);
  }
}

std::vector<SuiteDefinition> definitions() {
  std::vector<SuiteDefinition> out;
  // Both layouts × dtypes × bases × head_dim 64/128 × full/half rotary_dim.
  for (const char* layout : {"interleaved", "half"}) {
    for (const char* dtype : {"f64", "f32", "f16", "bf16"}) {
      for (const char* base : {"10000", "500000", "1000000"}) {
        const std::string suite = std::string(layout) + "-" + dtype + "-base" + base;
        out.push_back({suite, Kind::rope,
                       std::string("Unscaled RoPE, ") + layout + " layout, " + dtype + ", base " + base +
                           ": head_dim 64 and 128, rotary_dim full and half, with every edge flag.",
                       [=](SuiteContext& c) { unscaled_groups(c, layout, dtype, base); }});
      }
    }
  }
  out.push_back({"scaling-linear", Kind::rope,
                 "Linear scaling (position interpolation), factor 4 as in Vicuna-7B-v1.5-16k: "
                 "Llama-2 shapes (head_dim 128, base 10000).",
                 [](SuiteContext& c) { scaling_groups(c, "head_dim=128,base=10000,scaling=linear,factor=4", Layout::half); }});
  out.push_back({"scaling-ntk", Kind::rope,
                 "NTK-aware scaling (b' = b*f^(d/(d-2))), alpha 8 as in the example of the original NTK-aware post for "
                 "LLaMA: head_dim 128, base 10000.",
                 [](SuiteContext& c) { scaling_groups(c, "head_dim=128,base=10000,scaling=ntk,factor=8", Layout::half); }});
  out.push_back({"scaling-dynamic", Kind::rope,
                 "Dynamic NTK (HF), factor 2 over Llama-2's 4096 positions, at sequence lengths 4096 "
                 "(no change), 8192 and 16384.",
                 scaling_dynamic_groups});
  out.push_back({"scaling-yarn", Kind::rope,
                 "YaRN (HF): Qwen2.5's setting (factor 4, original_max_position 32768, base 1000000, "
                 "head_dim 128); DeepSeek-V2's (factor 40, mscale = mscale_all_dim = 0.707, "
                 "original_max_position 4096, base 10000, rope head_dim 64); and Qwen2.5's with truncate=false.",
                 scaling_yarn_groups});
  out.push_back({"scaling-yarn-ggml", Kind::rope,
                 "YaRN as llama.cpp computes it (rope_yarn: ramp on angles, magnitude 1 + 0.1*ln(1/freq_scale)) "
                 "for Qwen2.5's setting: freq_scale 1/4, n_ctx_orig 32768, base 1000000, ext_factor 1.",
                 [](SuiteContext& c) {
                   scaling_groups(c, "head_dim=128,base=1000000,scaling=yarn-ggml,freq_scale=0.25,original_max_position=32768",
                                  Layout::half);
                 }});
  out.push_back({"scaling-llama3", Kind::rope,
                 "Llama 3.1 8B: llama3 scaling (factor 8, low_freq_factor 1, high_freq_factor 4, "
                 "original_max_position 8192), base 500000, head_dim 128; half layout as in HF "
                 "transformers, interleaved as in Meta's reference code.",
                 [](SuiteContext& c) {
                   scaling_groups(c,
                                  "head_dim=128,base=500000,scaling=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,"
                                  "original_max_position=8192",
                                  Layout::half);
                 }});
  out.push_back({"scaling-longrope", Kind::rope,
                 "LongRoPE, Phi-3 128k: head_dim 96, base 10000, original_max_position 4096, factor 32 "
                 "(131072/4096), the published short and long factor lists (config of "
                 "microsoft/Phi-3-vision-128k-instruct), at sequence lengths 4096 (short factors) and 131072 (long).",
                 scaling_longrope_groups});
  out.push_back({"axes-2d", Kind::rope,
                 "2-D RoPE (docs/rope.md section 2): groups of 4 dims rotated by (m1*theta_g, m2*theta_g), each axis a 1-D "
                 "RoPE over rotary_dim/2 dims; positions are (row, column) tuples.",
                 axes_2d_groups});
  out.push_back({"axes-mrope", Kind::rope,
                 "M-RoPE as in Qwen2-VL: head_dim 128, half layout, base 1000000, the 64 frequencies split into "
                 "sections 16/24/24 driven by the (temporal, height, width) position components; text tokens "
                 "have t = h = w.",
                 axes_mrope_groups});
  out.push_back({"direction-inverse", Kind::rope,
                 "The inverse rotation R_m^T = R_{-m} (direction=inverse): both layouts, unscaled and Llama 3.1.",
                 direction_inverse_groups});
  out.push_back({"multi-head", Kind::rope,
                 "Several heads with distinct data per token (up to 8 heads), both layouts: every head uses the "
                 "same angles, heads never mix.",
                 multi_head_groups});
  out.push_back({"edge-cases", Kind::rope,
                 "Edge cases beyond the matrix: huge and non-integer bases, the smallest rotary_dim, odd "
                 "partial rotary sizes (phi-2: head_dim 80, rotary_dim 32), every edge flag.",
                 edge_case_groups});
  out.push_back({"attention", Kind::attention,
                 "Attention over RoPE'd queries and keys: scores RoPE(Q)RoPE(K)^T/sqrt(head_dim) (before "
                 "softmax and mask) and outputs softmax(scores + M)V, per head; small shapes, both layouts, "
                 "f64/f32/bf16, and Qwen2.5 YaRN (its attention factor multiplies both Q and K).",
                 attention_groups});
  return out;
}

const std::vector<SuiteDefinition>& all_definitions() {
  static const std::vector<SuiteDefinition> defs = definitions();
  return defs;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& flag_catalog() { return catalog(); }

std::vector<std::string> suite_names() {
  std::vector<std::string> out;
  for (const auto& d : all_definitions()) out.push_back(d.name);
  return out;
}

GoldenFile generate_suite(std::string_view suite_name) {
  for (const auto& d : all_definitions()) {
    if (d.name != suite_name) continue;
    SuiteContext c;
    c.file.suite = d.name;
    c.file.kind = d.kind;
    c.file.description = d.description;
    c.file.generator.precision_bits = kPrecisionBits;
    c.file.generator.seed = kSeed;
    d.body(c);
    // Ids are 1, 2, … in file order; notes explain exactly the flags used, in catalog order.
    std::int64_t id = 0;
    std::set<std::string> used;
    for (Group& g : c.file.groups) {
      for (RopeTest& t : g.rope_tests) {
        t.id = ++id;
        used.insert(t.flags.begin(), t.flags.end());
      }
      for (AttentionTest& t : g.attention_tests) {
        t.id = ++id;
        used.insert(t.flags.begin(), t.flags.end());
      }
    }
    c.file.number_of_tests = id;
    for (const auto& [flag, text] : catalog()) {
      if (used.count(flag)) c.file.notes.emplace_back(flag, text);
    }
    return c.file;
  }
  throw std::invalid_argument("suite: expected one of the names `ropecheck golden list` prints, got '" +
                              std::string(suite_name) + "'");
}

}  // namespace ropecheck::golden
