// The consecutive reference (angle addition, reference/consecutive.h) against the present path
// (ApplyPlan: cos/sin of every position on its own), bit for bit: every dtype, both layouts, every
// scaling type the issue names, positions around 0 and up to 2^31, blocks crossed; evaluate's exact
// values within the written bound; and the fallbacks forced (zero angle, |sin| below 2^-60·|A|,
// seeds outside fast_trig's domain, special values, the f32 recipe).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/random.h"
#include "reference/consecutive.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck {
namespace {

using reference::ConsecutiveReference;
using reference::ConsecutiveStats;

std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Random values of the dtype, magnitudes 2^-8 … 2^4, both signs.
std::vector<double> random_inputs(Dtype dtype, std::size_t n, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<double> v(n);
  for (double& x : v) {
    const double m = std::ldexp(1 + rng.unit(), static_cast<int>(rng.range(-8, 4)));
    x = reference::round_to_format(rng.chance(1, 2) ? -m : m, dtype);
  }
  return v;
}

// The present path's outputs of tokens at first, first + 1, … (position tuples (p, …, p)).
std::vector<double> present(const Spec& spec, std::int64_t first, std::int64_t count, std::int64_t heads,
                            const std::vector<double>& input) {
  const int components = position_components(spec);
  std::vector<std::int64_t> positions;
  for (std::int64_t t = 0; t < count; ++t) positions.insert(positions.end(), components, first + t);
  return reference::ApplyPlan(spec).apply({count, heads, spec.head_dim}, positions, input);
}

// First index whose bits differ, or −1.
std::int64_t first_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (bits_of(a[i]) != bits_of(b[i])) return static_cast<std::int64_t>(i);
  }
  return -1;
}

ConsecutiveStats expect_same_bits(const std::string& text, std::int64_t first, std::int64_t count, std::int64_t heads, std::uint64_t seed,
                                  std::vector<double> input = {}) {
  const Spec spec = parse_spec(text);
  if (input.empty()) input = random_inputs(spec.dtype, static_cast<std::size_t>(count * heads * spec.head_dim), seed);
  const std::vector<double> expected = present(spec, first, count, heads, input);
  const ConsecutiveReference consecutive(spec);
  std::vector<double> out(input.size());
  ConsecutiveStats stats;
  consecutive.apply_into(first, count, heads, input, out, &stats);
  const std::int64_t at = first_difference(out, expected);
  EXPECT_EQ(at, -1) << text << " first=" << first << ": element " << at << " (token " << at / (heads * spec.head_dim) << ") got "
                    << (at >= 0 ? out[at] : 0) << " expected " << (at >= 0 ? expected[at] : 0);
  EXPECT_EQ(stats.tokens, count);
  return stats;
}

const char* kDtypes[] = {"f64", "f32", "f16", "bf16"};
const char* kLayouts[] = {"half", "interleaved"};
const char* kScalings[] = {
    "scaling=none",
    "scaling=linear,factor=4",
    "scaling=ntk,factor=8",
    "scaling=yarn,factor=8,original_max_position=4096",
    "scaling=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,original_max_position=8192",
    "scaling=longrope,short_factor=1/1.5/2/4/1/1.5/2/4,long_factor=2/2/3/0.5/2/2/3/0.5,original_max_position=4096,"
    "seq_len=8000,factor=32",
};

// Positions around 0 (negative ones, the zero angle, a block boundary) and below 2^31 (two blocks).
TEST(Consecutive, EqualsThePresentPathBitForBit) {
  std::uint64_t seed = 1;
  std::int64_t fallback = 0, tokens = 0;
  for (const char* dtype : kDtypes) {
    for (const char* layout : kLayouts) {
      for (const char* scaling : kScalings) {
        const std::string text = std::string("layout=") + layout + ",head_dim=20,rotary_dim=16,base=500000," + scaling + ",dtype=" + dtype;
        for (std::int64_t first : {std::int64_t{-5}, (std::int64_t{1} << 31) - 1500}) {
          const ConsecutiveStats stats = expect_same_bits(text, first, 1100, 2, seed++);
          fallback += stats.fallback_tokens;
          tokens += stats.tokens;
        }
      }
    }
  }
  // Only the zero angle takes the present path here, once per call that crosses it.
  EXPECT_EQ(fallback, 4 * 2 * 6);
  EXPECT_EQ(tokens, 4 * 2 * 6 * 2 * 1100);
}

// head_dim 128, the inverse direction, multi-axis specs (every component the position), an
// attention factor ≠ 1 (yarn), base 10000.
TEST(Consecutive, OtherSpecs) {
  expect_same_bits("layout=half,head_dim=128,base=500000,dtype=bf16", (std::int64_t{1} << 31) - 2100, 2100, 1, 11);
  expect_same_bits("layout=interleaved,head_dim=16,base=10000,dtype=f32,direction=inverse", -1030, 2100, 1, 12);
  expect_same_bits("layout=half,head_dim=32,base=1000000,axes=mrope,sections=4/6/6,dtype=f16", 100000, 1500, 3, 13);
  expect_same_bits("layout=half,head_dim=16,base=10000,scaling=yarn,factor=16,original_max_position=64,dtype=f64",
                   (std::int64_t{1} << 31) - 700, 1400, 1, 14);
}

// A large |θ·p| block near 2^40 / 2^53: the seeds leave fast_trig's domain, and those blocks take the
// present path whole (with the right bits).
TEST(Consecutive, SeedsOutsideTheFastDomainFallBack) {
  const ConsecutiveStats beyond = expect_same_bits("layout=half,head_dim=8,base=10000,dtype=f32", (std::int64_t{1} << 53) - 10, 40, 1, 21);
  EXPECT_EQ(beyond.fallback_tokens, 40);  // the first block's seed at 2^53 − 10 is in the domain
                                          // only if |p·θ_0| ≤ 2^40: it is not (θ_0 = 1)
  const ConsecutiveStats near = expect_same_bits("layout=half,head_dim=8,base=10000,dtype=f32", (std::int64_t{1} << 62) - 40, 41, 1, 22);
  EXPECT_EQ(near.fallback_tokens, 41);
}

// θ'_1 = 1e-4/2e16 < 2^-60 (linear factor 2e16): |sin| < 2^-60·|A| at positions ±1, so those
// take the present path (with the zero angle), the others angle addition across 0.
TEST(Consecutive, TinySinFallsBack) {
  const ConsecutiveStats stats =
      expect_same_bits("layout=half,head_dim=4,base=10000,scaling=linear,factor=2e16,dtype=f64", -150, 300, 1, 31);
  EXPECT_EQ(stats.fallback_tokens, 3);
}

// evaluate_unit_probes (head 1 the image of head 0) against evaluate_into of the two heads' inputs:
// the same rounded and exact values bit for bit (zeros' signs included) and the same fallbacks,
// around position 0 (negative positions too), near 2^31 and 2^53 (seeds outside the fast domain),
// with a tiny sine (the present path), both layouts, pass-through dims, every dtype.
void expect_unit_probes_as_evaluated(const std::string& text, std::int64_t first, std::int64_t count) {
  SCOPED_TRACE(text + " from " + std::to_string(first));
  const Spec spec = parse_spec(text);
  const ConsecutiveReference consecutive(spec);
  const std::int64_t d = spec.head_dim;
  std::vector<double> input(static_cast<std::size_t>(count * 2 * d), 1.0);
  for (std::int64_t t = 0; t < count; ++t) {
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const reference::PairDims pd = reference::pair_dims(spec, j);
      input[static_cast<std::size_t>(t * 2 * d + pd.second)] = 0;
      input[static_cast<std::size_t>((t * 2 + 1) * d + pd.first)] = 0;
    }
  }
  std::vector<double> rounded(input.size()), probes_rounded(input.size());
  std::vector<long double> exact(input.size()), probes_exact(input.size());
  ConsecutiveStats stats, probes_stats;
  consecutive.evaluate_into(first, count, 2, input, rounded, exact, &stats);
  consecutive.evaluate_unit_probes(first, count, probes_rounded, probes_exact, &probes_stats);
  EXPECT_EQ(probes_stats.tokens, stats.tokens);
  EXPECT_EQ(probes_stats.fallback_tokens, stats.fallback_tokens);
  std::int64_t differing = 0;
  for (std::size_t i = 0; i < input.size(); ++i) {
    differing += bits_of(probes_rounded[i]) != bits_of(rounded[i]) || std::memcmp(&probes_exact[i], &exact[i], 10) != 0;
  }
  EXPECT_EQ(differing, 0);
}

TEST(Consecutive, UnitProbesAsEvaluated) {
  const std::string llama =
      "layout=half,head_dim=128,base=500000,scaling=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,original_max_position=8192";
  for (const char* dtype : {"bf16", "f16", "f32", "f64"}) {
    expect_unit_probes_as_evaluated(llama + ",dtype=" + dtype, (std::int64_t{1} << 31) - 2100, 2100);
    expect_unit_probes_as_evaluated(llama + ",dtype=" + dtype, 0, 1100);
  }
  expect_unit_probes_as_evaluated("layout=interleaved,head_dim=64,rotary_dim=48,base=10000,dtype=f32", -40, 1200);
  expect_unit_probes_as_evaluated("layout=interleaved,head_dim=16,base=10000,dtype=bf16,direction=inverse", 5, 1500);
  expect_unit_probes_as_evaluated("layout=half,head_dim=8,base=10000,dtype=f32", (std::int64_t{1} << 53) - 10, 40);
  expect_unit_probes_as_evaluated("layout=half,head_dim=4,base=10000,scaling=linear,factor=2e16,dtype=f64", 1, 300);
  expect_unit_probes_as_evaluated("layout=half,head_dim=16,base=10000,scaling=yarn,factor=16,original_max_position=64,"
                                  "attention_factor=1.5,dtype=f16",
                                  (std::int64_t{1} << 24) - 500, 1200);
}

// Special values (NaN, ±Inf, zeros, subnormals, huge magnitudes) go to apply's general rules.
TEST(Consecutive, SpecialValuesTakeTheGeneralRules) {
  const Spec spec = parse_spec("layout=interleaved,head_dim=8,base=10000,dtype=f16");
  std::vector<double> input = random_inputs(spec.dtype, 8 * 300, 41);
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {std::nan(""), inf, -inf, 0.0, -0.0, 0x1p-24, 65504.0, -65504.0};
  for (std::size_t i = 0; i < input.size(); i += 7) input[i] = specials[(i / 7) % 8];
  const ConsecutiveStats stats = expect_same_bits("layout=interleaved,head_dim=8,base=10000,dtype=f16", 1000, 300, 1, 0, input);
  EXPECT_GT(stats.general_pairs, 0);
}

// The f32 recipe's angle does not add up: every token takes the present path.
TEST(Consecutive, F32RecipeTakesThePresentPath) {
  const Spec spec = parse_spec("layout=half,head_dim=8,base=10000,dtype=f32");
  const std::vector<double> input = random_inputs(spec.dtype, 8 * 50, 51);
  std::vector<std::int64_t> positions(50);
  for (int t = 0; t < 50; ++t) positions[t] = 70000 + t;
  reference::Options options;
  options.model = reference::Model::f32_recipe;
  const std::vector<double> expected = reference::apply(spec, {50, 1, 8}, positions, input, options);
  std::vector<double> out(input.size());
  ConsecutiveStats stats;
  ConsecutiveReference(spec, reference::Model::f32_recipe).apply_into(70000, 50, 1, input, out, &stats);
  EXPECT_EQ(first_difference(out, expected), -1);
  EXPECT_EQ(stats.fallback_tokens, 50);
}

// evaluate's exact values: both within 2^-61·|A|·ρ of the truth (rope.h Evaluation), so within
// twice that of the present path's; the rounded values bit for bit.
TEST(Consecutive, EvaluateMatchesWithinTheBound) {
  const Spec spec = parse_spec("layout=half,head_dim=16,base=500000,dtype=f32");
  const std::int64_t first = (std::int64_t{1} << 31) - 1200, count = 1200;
  const std::vector<double> input = random_inputs(spec.dtype, static_cast<std::size_t>(count * 16), 61);
  std::vector<std::int64_t> positions(static_cast<std::size_t>(count));
  for (std::int64_t t = 0; t < count; ++t) positions[t] = first + t;
  const reference::Evaluation expected = reference::evaluate(spec, {count, 1, 16}, positions, input);
  std::vector<double> rounded(input.size());
  std::vector<long double> exact(input.size());
  ConsecutiveReference(spec).evaluate_into(first, count, 1, input, rounded, exact);
  EXPECT_EQ(first_difference(rounded, expected.rounded), -1);
  for (std::int64_t t = 0; t < count; ++t) {
    for (int j = 0; j < 8; ++j) {
      const std::size_t a = static_cast<std::size_t>(t * 16 + j), b = a + 8;
      const long double rho = std::hypot(static_cast<long double>(input[a]), static_cast<long double>(input[b]));
      ASSERT_LE(std::fabs(exact[a] - expected.exact[a]), 2 * 0x1p-61L * rho) << t << " " << j;
      ASSERT_LE(std::fabs(exact[b] - expected.exact[b]), 2 * 0x1p-61L * rho) << t << " " << j;
    }
  }
}

TEST(Consecutive, RejectsBadSizesAndPositions) {
  const ConsecutiveReference consecutive(parse_spec("layout=half,head_dim=8,base=10000,dtype=f32"));
  std::vector<double> in(16), out(16);
  EXPECT_THROW(consecutive.apply_into(0, 3, 1, in, out), std::invalid_argument);
  EXPECT_THROW(consecutive.apply_into((std::int64_t{1} << 62) - 0, 2, 1, in, out), std::invalid_argument);
  EXPECT_THROW(consecutive.apply_into(0, -1, 1, in, out), std::invalid_argument);
  EXPECT_NO_THROW(consecutive.apply_into(-(std::int64_t{1} << 62), 2, 1, in, out));
}

}  // namespace
}  // namespace ropecheck
