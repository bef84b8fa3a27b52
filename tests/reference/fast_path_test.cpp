// The fast path of apply/evaluate (double-double cos/sin, bit-level rounding test) against the
// MPFR path (cos/sin in MPFR per token and pair, the generic rounding test), bit for bit: over
// every golden suite (and against the suites' expected values) and over random specs — every
// layout, dtype, scaling type, multi-axis form and direction — with random inputs including
// subnormals, huge and tiny magnitudes, zeros, NaN and ±Inf, and positions up to 2^31 − 1, a few
// beyond 2^40 and 2^53, negative ones. And evaluate's exact values against rotate_exact at 320 bits
// within their written bound 2^-61·|A|·ρ.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "base/random.h"
#include "golden/golden.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck {
namespace {

using reference::Real;

std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// First index where the two differ in bits (NaN payloads included), or −1.
std::int64_t first_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (bits_of(a[i]) != bits_of(b[i])) return static_cast<std::int64_t>(i);
  }
  return -1;
}

// First index where the outputs differ as values of the dtype (any NaN equals any NaN: golden files
// store NaN without payload).
std::int64_t first_value_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (bits_of(a[i]) != bits_of(b[i])) return static_cast<std::int64_t>(i);
  }
  return -1;
}

reference::Options options(reference::Model model, reference::Path path) {
  reference::Options o;
  o.model = model;
  o.path = path;
  return o;
}

TEST(FastPath, MatchesMpfrPathAndExpectedOnEveryGoldenSuite) {
  int tests = 0;
  std::int64_t elements = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ROPECHECK_GOLDEN_SUITES)) {
    if (entry.path().extension() != ".json") continue;
    const golden::GoldenFile file = golden::read_golden_file(entry.path().string());
    for (const golden::Group& group : file.groups) {
      for (const golden::RopeTest& t : group.rope_tests) {
        const reference::Shape shape{t.tokens, t.heads, group.spec.head_dim};
        for (const reference::Model model : {reference::Model::exact, reference::Model::f32_recipe}) {
          const std::vector<double> fast =
              reference::apply(group.spec, shape, t.positions, t.input, options(model, reference::Path::fast));
          const std::vector<double> mpfr =
              reference::apply(group.spec, shape, t.positions, t.input, options(model, reference::Path::mpfr));
          const std::int64_t i = first_difference(fast, mpfr);
          ASSERT_EQ(i, -1) << entry.path().filename() << " " << t.id << " model " << static_cast<int>(model)
                           << " element " << i << ": fast " << reference::to_hex(fast[i]) << " mpfr "
                           << reference::to_hex(mpfr[i]);
          const std::vector<double>* expected = model == reference::Model::exact ? &t.expected
                                                : t.expected_f32_recipe          ? &*t.expected_f32_recipe
                                                                                 : nullptr;
          if (expected) {
            const std::int64_t k = first_value_difference(fast, *expected);
            ASSERT_EQ(k, -1) << entry.path().filename() << " " << t.id << " element " << k << ": fast "
                             << reference::to_hex(fast[k]) << " golden " << reference::to_hex((*expected)[k]);
          }
          elements += static_cast<std::int64_t>(fast.size());
        }
        ++tests;
      }
    }
  }
  EXPECT_GT(tests, 1000);  // the checked-in suites hold ≈ 1200 rope tests
  std::printf("golden: %d tests, %lld elements per path\n", tests, static_cast<long long>(elements));
}

// ---- random specs ----------------------------------------------------------------------------

std::string pick(SplitMix64& rng, std::initializer_list<const char*> options) {
  return *(options.begin() + rng.below(options.size()));
}

// A random valid spec (specs the validator rejects are drawn again).
Spec random_spec(SplitMix64& rng) {
  for (;;) {
    std::string text = "layout=" + pick(rng, {"interleaved", "half"});
    const int rotary_dim = 4 * static_cast<int>(rng.range(1, 16));
    const int head_dim = rotary_dim + 2 * static_cast<int>(rng.range(0, 2));
    text += ",head_dim=" + std::to_string(head_dim) + ",rotary_dim=" + std::to_string(rotary_dim);
    text += ",base=" + pick(rng, {"10000", "500000", "1000000", "2.5", "100000000000"});
    text += ",dtype=" + pick(rng, {"f64", "f32", "f16", "bf16"});
    text += ",direction=" + pick(rng, {"forward", "inverse"});
    const int pairs = rotary_dim / 2;
    switch (rng.below(3)) {
      case 0: break;
      case 1: text += ",axes=2d"; break;
      default: {
        const int first = static_cast<int>(rng.range(1, pairs - 1));
        text += ",axes=mrope,sections=" + std::to_string(first) + "/" + std::to_string(pairs - first);
      }
    }
    const int frequencies = text.find("axes=2d") != std::string::npos ? pairs / 2 : pairs;
    switch (rng.below(8)) {
      case 0: break;
      case 1: text += ",scaling=linear,factor=" + pick(rng, {"4", "0.5", "32"}); break;
      case 2: text += ",scaling=ntk,factor=" + pick(rng, {"2", "8"}); break;
      case 3:
        text += ",scaling=dynamic,factor=2,original_max_position=4096,seq_len=" + pick(rng, {"100", "9000"});
        break;
      case 4:
        text += ",scaling=yarn,factor=" + pick(rng, {"4", "16"}) + ",original_max_position=4096" +
                pick(rng, {"", ",truncate=false", ",mscale=1,mscale_all_dim=0.5", ",attention_factor=0.7"});
        break;
      case 5:
        text += ",scaling=yarn-ggml,freq_scale=0.25,original_max_position=4096,ext_factor=" + pick(rng, {"0", "0.5", "1"}) +
                ",attn_factor=" + pick(rng, {"1", "2"});
        break;
      case 6: text += ",scaling=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,original_max_position=8192"; break;
      default: {
        std::string short_factors, long_factors;
        for (int k = 0; k < frequencies; ++k) {
          short_factors += (k ? "/" : "") + pick(rng, {"1", "1.5", "0.25"});
          long_factors += (k ? "/" : "") + pick(rng, {"2", "3.75", "8"});
        }
        text += ",scaling=longrope,short_factor=" + short_factors + ",long_factor=" + long_factors +
                ",original_max_position=4096,seq_len=" + pick(rng, {"100", "8192"});
      }
    }
    try {
      return parse_spec(text);
    } catch (const SpecError&) {
      continue;
    }
  }
}

// Bits of `dtype` as stored by decode_bits: random patterns, NaN and Inf included.
double random_pattern(SplitMix64& rng, Dtype dtype) {
  const int width = dtype == Dtype::f64 ? 64 : dtype == Dtype::f32 ? 32 : 16;
  const std::uint64_t mask = width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
  return reference::decode_bits(rng.next() & mask, dtype);
}

// A value of `dtype`: mostly moderate, sometimes random bit patterns (subnormals, huge, NaN, ±Inf),
// zeros, or magnitudes at the dtype's extremes.
double random_input(SplitMix64& rng, Dtype dtype) {
  const reference::Format f = reference::format_of(dtype);
  const double signed_unit = 2 * rng.unit() - 1;
  switch (rng.below(16)) {
    case 0: {
      const double v = random_pattern(rng, dtype);
      return std::isfinite(v) ? v : 0.5;
    }
    case 1: return rng.chance(1, 2) ? 0.0 : -0.0;
    case 2: return reference::round_to_format(std::ldexp(signed_unit, f.emin - static_cast<int>(rng.below(f.precision))), dtype);
    case 3: return reference::round_to_format(std::ldexp(signed_unit, f.emax - static_cast<int>(rng.below(3))), dtype);
    case 4: return reference::round_to_format(std::ldexp(signed_unit, static_cast<int>(rng.range(f.emin, f.emax))), dtype);
    default: return reference::round_to_format(signed_unit, dtype);
  }
}

std::int64_t random_position(SplitMix64& rng) {
  std::int64_t p = 0;
  switch (rng.below(10)) {
    case 0: p = 0; break;
    case 1: p = rng.range(std::int64_t{1} << 40, std::int64_t{1} << 53); break;
    case 2: p = rng.range(std::int64_t{1} << 53, std::int64_t{1} << 62); break;
    case 3: p = (std::int64_t{1} << 31) - 1 - rng.range(0, 3); break;
    default: p = rng.range(0, (std::int64_t{1} << 31) - 1); break;
  }
  return rng.chance(1, 5) ? -p : p;
}

struct Case {
  Spec spec;
  reference::Shape shape;
  std::vector<std::int64_t> positions;
  std::vector<double> input;
};

Case random_case(SplitMix64& rng) {
  Case c;
  c.spec = random_spec(rng);
  c.shape = {rng.range(1, 4), rng.range(1, 3), c.spec.head_dim};
  c.positions.resize(static_cast<std::size_t>(c.shape.tokens * position_components(c.spec)));
  for (std::int64_t& p : c.positions) p = random_position(rng);
  c.input.resize(static_cast<std::size_t>(c.shape.elements()));
  const bool specials = rng.chance(1, 4);
  for (double& v : c.input) v = specials && rng.chance(1, 8) ? random_pattern(rng, c.spec.dtype) : random_input(rng, c.spec.dtype);
  return c;
}

TEST(FastPath, MatchesMpfrPathOnRandomSpecs) {
  SplitMix64 rng(0x18f4);
  std::int64_t elements = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const Case c = random_case(rng);
    for (const reference::Model model : {reference::Model::exact, reference::Model::f32_recipe}) {
      const std::vector<double> fast =
          reference::apply(c.spec, c.shape, c.positions, c.input, options(model, reference::Path::fast));
      const std::vector<double> mpfr =
          reference::apply(c.spec, c.shape, c.positions, c.input, options(model, reference::Path::mpfr));
      const std::int64_t i = first_difference(fast, mpfr);
      ASSERT_EQ(i, -1) << "trial " << trial << " " << to_string(c.spec) << " model " << static_cast<int>(model)
                       << " element " << i << ": fast " << reference::to_hex(fast[i]) << " mpfr "
                       << reference::to_hex(mpfr[i]) << " input " << reference::to_hex(c.input[i]);
      // evaluate's rounded values are apply's.
      if (trial % 4 == 0) {
        const reference::Evaluation e =
            reference::evaluate(c.spec, c.shape, c.positions, c.input, options(model, reference::Path::fast));
        ASSERT_EQ(first_difference(e.rounded, fast), -1) << "trial " << trial;
      }
      elements += static_cast<std::int64_t>(fast.size());
    }
  }
  std::printf("random specs: %lld elements per path\n", static_cast<long long>(elements));
}

// ApplyPlan::apply_into and apply_chunked (what the CLI and the Python module call) against the MPFR
// path's apply, bit for bit: one plan for several calls, into a buffer holding a NaN pattern (every
// value must be written, pass-through dims included), in place (out = input), and a token chunk at a
// time through apply_chunked (2^15 values per chunk: head_dim up to 68 and ≤ 3 heads hold every
// random case in one chunk, so the chunked case uses 4096 heads, a token of 2^16 values in two).
TEST(ApplyPlan, IntoBuffersInPlaceAndByChunksMatchTheMpfrPath) {
  SplitMix64 rng(0xa991);
  const double garbage = reference::decode_bits(0x7ff4dead0000beefULL, Dtype::f64);  // a NaN no output has
  for (int trial = 0; trial < 300; ++trial) {
    const Case c = random_case(rng);
    for (const reference::Model model : {reference::Model::exact, reference::Model::f32_recipe}) {
      const std::vector<double> expected =
          reference::apply(c.spec, c.shape, c.positions, c.input, options(model, reference::Path::mpfr));
      const reference::ApplyPlan plan(c.spec, options(model, reference::Path::fast));
      for (int call = 0; call < 2; ++call) {  // the plan is only read: a second call gives the same
        std::vector<double> out(c.input.size(), garbage);
        plan.apply_into(c.shape, c.positions, c.input, out);
        ASSERT_EQ(first_difference(out, expected), -1) << "trial " << trial << " call " << call << " " << to_string(c.spec);
      }
      std::vector<double> in_place = c.input;
      plan.apply_into(c.shape, c.positions, in_place, in_place);
      ASSERT_EQ(first_difference(in_place, expected), -1) << "in place, trial " << trial << " " << to_string(c.spec);
      // The free function is the same plan's call.
      std::vector<double> out(c.input.size(), garbage);
      reference::apply_into(c.spec, c.shape, c.positions, c.input, out, options(model, reference::Path::fast));
      ASSERT_EQ(first_difference(out, expected), -1) << "apply_into, trial " << trial;
    }
  }
  // Chunks: 3 tokens of 4096 heads × head_dim 16 (65536 values a token: two chunks of 2048 heads),
  // random inputs with special values, positions of every kind.
  const Spec spec = parse_spec("layout=interleaved,head_dim=16,rotary_dim=12,base=10000,dtype=bf16");
  const reference::Shape shape{3, 4096, 16};
  std::vector<std::int64_t> positions = {0, 123456, -(std::int64_t{1} << 54)};
  std::vector<double> input(static_cast<std::size_t>(shape.elements()));
  for (double& v : input) v = rng.chance(1, 50) ? random_pattern(rng, Dtype::bf16) : random_input(rng, Dtype::bf16);
  const std::vector<double> expected = reference::apply(spec, shape, positions, input, options(reference::Model::exact, reference::Path::mpfr));
  const reference::ApplyPlan plan(spec);
  std::vector<double> got(input.size(), garbage);
  std::vector<std::int64_t> firsts;
  reference::apply_chunked(
      plan, shape, positions,
      [&](std::int64_t first, std::span<double> values) {
        ASSERT_LE(static_cast<std::int64_t>(values.size()), reference::kApplyChunkValues);
        std::copy_n(input.begin() + first, values.size(), values.begin());
        firsts.push_back(first);
      },
      [&](std::int64_t first, std::span<const double> values) { std::copy(values.begin(), values.end(), got.begin() + first); });
  EXPECT_EQ(firsts, (std::vector<std::int64_t>{0, 32768, 65536, 98304, 131072, 163840}));
  EXPECT_EQ(first_difference(got, expected), -1);
  // Sizes are checked as apply checks them.
  EXPECT_THROW(plan.apply_into({2, 1, 16}, std::vector<std::int64_t>{1}, std::vector<double>(32), got), std::invalid_argument);
  EXPECT_THROW(plan.apply_into({1, 1, 16}, std::vector<std::int64_t>{1}, std::vector<double>(16), std::span(got).first(15)),
               std::invalid_argument);
  EXPECT_THROW(reference::ApplyPlan(spec, reference::Options{32}), std::invalid_argument);
}

TEST(FastPath, LargePositionsAndF64AgreeWithMpfrPath) {
  // Every token at positions where the fast domain ends (|m·θ| near 2^40, |m| near 2^53) and f64
  // outputs, whose rounding test is the tightest.
  SplitMix64 rng(0x40);
  const Spec spec = parse_spec("layout=half,head_dim=16,base=10000,dtype=f64");
  std::vector<std::int64_t> positions;
  for (std::int64_t p : {std::int64_t{1} << 40, (std::int64_t{1} << 40) + 1, (std::int64_t{1} << 41) - 1,
                         (std::int64_t{1} << 53), (std::int64_t{1} << 53) + 1, -(std::int64_t{1} << 53),
                         std::int64_t{1} << 62, -(std::int64_t{1} << 62), std::int64_t{1}, -std::int64_t{1}}) {
    positions.push_back(p);
  }
  const reference::Shape shape{static_cast<std::int64_t>(positions.size()), 4, 16};
  std::vector<double> input(static_cast<std::size_t>(shape.elements()));
  for (double& v : input) v = random_input(rng, Dtype::f64);
  const std::vector<double> fast = reference::apply(spec, shape, positions, input, options(reference::Model::exact, reference::Path::fast));
  const std::vector<double> mpfr = reference::apply(spec, shape, positions, input, options(reference::Model::exact, reference::Path::mpfr));
  EXPECT_EQ(first_difference(fast, mpfr), -1);
}

TEST(FastPath, ExactValuesWithinTheirBound) {
  SplitMix64 rng(0xe4ac7);
  int checked = 0;
  double worst = 0;  // |exact − true| / (|A|·ρ), largest seen
  for (int trial = 0; trial < 200; ++trial) {
    const Case c = random_case(rng);
    const reference::Evaluation e = reference::evaluate(c.spec, c.shape, c.positions, c.input);
    std::vector<double> finite_input = c.input;
    for (double& v : finite_input) {
      if (!std::isfinite(v)) v = 0;
    }
    constexpr int kBits = 320;
    const std::vector<Real> truth =
        reference::rotate_exact(c.spec, c.shape, c.positions, finite_input, kBits, reference::Form::elementwise);
    reference::PrecisionScope scope(kBits);
    const Real attention = abs(attention_factor<Real>(c.spec));
    const int pairs = c.spec.rotary_dim / 2;
    for (std::int64_t row = 0; row < c.shape.tokens * c.shape.heads; ++row) {
      const std::int64_t base = row * c.spec.head_dim;
      for (int d = c.spec.rotary_dim; d < c.spec.head_dim; ++d) {
        ASSERT_EQ(e.exact[base + d], static_cast<long double>(c.input[base + d])) << "pass-through dim " << d;
      }
      for (int j = 0; j < pairs; ++j) {
        const reference::PairDims pd = reference::pair_dims(c.spec, j);
        const double x = c.input[base + pd.first], y = c.input[base + pd.second];
        for (const int dim : {pd.first, pd.second}) {
          const long double got = e.exact[base + dim];
          if (!std::isfinite(x) || !std::isfinite(y)) {
            ASSERT_EQ(got, 0.0L) << "non-finite pair, trial " << trial;
            continue;
          }
          const Real rho = sqrt(Real(x) * Real(x) + Real(y) * Real(y));
          // The written bound, plus rotate_exact's own error (≈ 2^-P·(1 + |angle|)·ρ, angle ≤ 2^70).
          const Real bound = attention * rho * ldexp(Real(1), -61) + rho * ldexp(Real(1), 70 - kBits);
          const Real deviation = abs(Real(Real(got) - truth[base + dim]));
          ASSERT_LE(deviation, bound) << "trial " << trial << " " << to_string(c.spec) << " x " << reference::to_hex(x)
                                      << " y " << reference::to_hex(y) << " got " << static_cast<double>(got);
          if (rho > 0) worst = std::max(worst, static_cast<double>(Real(deviation / (attention * rho))));
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 10000);
  std::printf("exact: %d components, worst |exact − true|/(|A|·ρ) = 2^%.2f (bound 2^-61)\n", checked, std::log2(worst));
}

}  // namespace
}  // namespace ropecheck
