// The oracle never fails itself: over specs at the edges of what validation accepts (bases from
// just above 1 to the largest double, scaling factors from the smallest subnormal to 1e308, attention
// factors, partial rotary, every dtype and input dtype, both layouts, positions up to 2^31 − 1), the
// reference's correctly rounded outputs pass the gate under the default claim (f32-angle), under --model exact
// and under the reference's own claim (e ≤ 1: correct rounding), by both ways the judge takes its
// exact values: reference::evaluate (direct checks and sweeps) and rotate_exact (golden tests).
// The angle m·θ'_j then reaches 2^1100; the exact values hold their bound there only because the
// reference widens the angle's precision with its size (reference/README.md "Huge angles").
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/random.h"
#include "golden/golden.h"
#include "judge/group.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "runner/reference_implementation.h"
#include "runner/sweep.h"
#include "runner/tensor_judge.h"
#include "spec/schedule.h"
#include "spec/spec.h"

namespace ropecheck::judge {
namespace {

using runner::ApplyResult;
using runner::judge_tensors;
using runner::ReferenceImplementation;
using runner::sweep;
using runner::SweepOptions;

// Decimals at the edges of each field's accepted range (spec/README.md: > 0 and finite; base > 1).
const std::vector<std::string> kFactors = {"4.9e-324", "1e-308", "1e-70", "1e-3", "0.5", "1", "8", "1e70", "1e308"};
const std::vector<std::string> kBases = {"1.0000001", "2", "10000", "500000", "1e100", "1e300", "1.7976931348623157e308"};
const std::vector<std::string> kAttention = {"1e-300", "1e-30", "0.5", "1", "3", "1e4"};
const std::vector<std::int64_t> kLengths = {1, 4096, 2147483647};

// Uniform in [low, high) whatever the case's size (RapidCheck's inRange narrows with the size, which
// left the larger choices to the last cases).
template <class T>
T uniform(T low, T high) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(low, high));
}

// One spec in the compact form; validation decides whether it is accepted (RC_PRE below).
std::string spec_text() {
  const int head_dim = 2 * uniform(1, 9);
  const int rotary_dim = 2 * uniform(1, head_dim / 2 + 1);
  const std::string dtype = *rc::gen::element<std::string>("f64", "f32", "f16", "bf16");
  std::string text = "layout=" + *rc::gen::element<std::string>("half", "interleaved") + ",head_dim=" + std::to_string(head_dim) +
                     ",rotary_dim=" + std::to_string(rotary_dim) + ",base=" + *rc::gen::elementOf(kBases) + ",dtype=" + dtype +
                     ",direction=" + *rc::gen::element<std::string>("forward", "inverse");
  // Narrower inputs into a wider output (spec/README.md "Dtypes"); an input_dtype equal to dtype reads as none.
  if (dtype == "f32" || dtype == "f64") text += ",input_dtype=" + *rc::gen::elementOf(std::vector<std::string>{dtype, "f16", "bf16"});
  const auto factor = [] { return *rc::gen::elementOf(kFactors); };
  const auto length = [] { return std::to_string(*rc::gen::elementOf(kLengths)); };
  switch (uniform(0, 8)) {
    case 0:
      break;
    case 1:
      text += ",scaling=linear,factor=" + factor();
      break;
    case 2:
      text += ",scaling=ntk,factor=" + factor();
      break;
    case 3:
      text += ",scaling=dynamic,factor=" + factor() + ",original_max_position=" + length() + ",seq_len=" + length();
      break;
    case 4:
      text +=
          ",scaling=yarn,factor=" + factor() + ",original_max_position=" + length() + ",beta_fast=" + factor() + ",beta_slow=" + factor();
      if (*rc::gen::arbitrary<bool>()) text += ",attention_factor=" + *rc::gen::elementOf(kAttention);
      break;
    case 5:
      text += ",scaling=yarn-ggml,freq_scale=" + factor() + ",original_max_position=" + length() +
              ",ext_factor=" + *rc::gen::element<std::string>("0", "1") + ",attn_factor=" + *rc::gen::elementOf(kAttention);
      break;
    case 6: {
      const bool wide = *rc::gen::arbitrary<bool>();
      text += ",scaling=llama3,factor=" + factor() + ",original_max_position=" + length() +
              (wide ? ",low_freq_factor=1e-300,high_freq_factor=1e300" : ",low_freq_factor=1,high_freq_factor=4");
      break;
    }
    default: {
      std::string short_factor, long_factor;
      for (int j = 0; j < rotary_dim / 2; ++j) {
        short_factor += (j ? "/" : "") + factor();
        long_factor += (j ? "/" : "") + factor();
      }
      text += ",scaling=longrope,short_factor=" + short_factor + ",long_factor=" + long_factor + ",original_max_position=" + length() +
              ",seq_len=" + length();
      if (*rc::gen::arbitrary<bool>()) text += ",attention_factor=" + *rc::gen::elementOf(kAttention);
      break;
    }
  }
  return text;
}

// A few tokens at positions from 0 to 2^31 − 1: the ends, powers of two and their neighbours, any.
std::vector<std::int64_t> positions(int tokens) {
  std::vector<std::int64_t> out;
  for (int t = 0; t < tokens; ++t) {
    const int k = uniform(0, 31);
    out.push_back(*rc::gen::oneOf(rc::gen::element<std::int64_t>(0, 1, 2147483647, std::int64_t{1} << k, (std::int64_t{1} << k) + 1),
                                  rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::int64_t>(0, 2147483647))));
  }
  return out;
}

// Values of the input dtype: mostly in [−2, 2), some scaled towards the dtype's extremes.
std::vector<double> inputs(const Spec& spec, std::int64_t count, std::uint64_t seed) {
  SplitMix64 rng(seed);
  const Dtype dtype = input_dtype_of(spec);
  std::vector<double> out;
  for (std::int64_t i = 0; i < count; ++i) {
    double v = 4 * rng.unit() - 2;
    if (rng.chance(1, 16)) v = std::ldexp(v, static_cast<int>(rng.range(-30, 30)));
    out.push_back(reference::round_to_format(v, dtype));
  }
  return out;
}

Claims claims_of(Model model, std::optional<Tolerance> tolerance = std::nullopt) {
  Claims c;
  c.model = model;
  c.tolerance = std::move(tolerance);
  return c;
}

Settings with_claims(Settings settings, const Claims& claims) {
  settings.claims = claims;
  return settings;
}

// The reference's own claim (runner/reference_implementation.h, Output::rounded): correct rounding,
// e ≤ 1 against the exact values.
Tolerance correct_rounding() {
  Tolerance t;
  t.value = 1;
  t.source = "correct rounding";
  return t;
}

std::string failure_text(const GroupResult& g) {
  std::string text =
      std::string(name(g.verdict)) + ": worst e " + std::to_string(g.worst_e) + " at position " + std::to_string(g.worst_e_position);
  for (const Case& c : g.worst) text += "\n  " + c.message;
  return text;
}

RC_GTEST_PROP(ExtremeOracle, ReferencePassesItsOwnGate, ()) {
  const std::string text = spec_text();
  Spec spec;
  bool accepted = true;
  try {
    spec = parse_spec(text);
  } catch (const SpecError&) {
    accepted = false;
  }
  RC_PRE(accepted);
  RC_TAG(std::string(name(spec.scaling.type)));
  const std::int64_t heads = uniform(1, 3);
  Call test;
  test.id = 1;
  test.tokens = uniform(1, 5);
  test.heads = heads;
  test.head_dim = spec.head_dim;
  test.positions = positions(static_cast<int>(test.tokens));
  test.input = inputs(spec, test.tokens * heads * spec.head_dim, *rc::gen::arbitrary<std::uint64_t>());
  const reference::Shape shape{test.tokens, heads, spec.head_dim};
  test.expected = reference::apply(spec, shape, test.positions, test.input);
  long double largest_angle = 0;
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    for (std::int64_t p : test.positions) largest_angle = std::max(largest_angle, p * frequency<long double>(spec, j));
  }
  RC_CLASSIFY(largest_angle > 0x1p64L, "angle above 2^64");
  RC_CLASSIFY(largest_angle > 0x1p1024L, "angle above 2^1024");
  RC_LOG() << to_string(spec) << " positions";
  for (std::int64_t p : test.positions) RC_LOG() << " " << p;
  RC_LOG() << "\n";

  Settings options;
  options.threads = 1;
  const std::vector<Claims> claims = {claims_of(kDefaultModel), claims_of(Model::exact), claims_of(Model::exact, correct_rounding())};
  for (const Claims& c : claims) {
    // A direct check (check --spec, Python's check): exact values from reference::evaluate.
    const GroupResult direct = judge_tensors(spec, heads, test.positions, test.input, test.expected, with_claims(options, c));
    if (direct.verdict != judge::Verdict::pass) RC_FAIL("direct check, model " + std::string(name(c.model)) + ": " + failure_text(direct));
    // A golden test in memory: exact values from reference::rotate_exact.
    GroupComparer comparer("extreme", 0, spec, c.model, c.tolerance ? *c.tolerance : default_tolerance(c.model, spec), {});
    comparer.add(test, test.expected, expected_values(spec, test, c.model));
    const GroupResult golden = comparer.finish();
    if (golden.verdict != judge::Verdict::pass) RC_FAIL("golden test, model " + std::string(name(c.model)) + ": " + failure_text(golden));
  }
}

// The two reproductions, through the runner as the commands call it. `ropecheck sweep
// --impl reference --spec ...,scaling=linear,factor=1e-70 --samples 64`: angles to 2^264, where
// 256-bit exact values had lost every bit of the angle (e = 3.35e7 between identical bits).
TEST(ExtremeOracle, SweepOfTheReferenceAtLinearFactor1e70Passes) {
  const Spec spec = parse_spec("layout=half,head_dim=64,base=10000,dtype=f32,scaling=linear,factor=1e-70");
  const ReferenceImplementation reference(256, reference::Model::exact, ReferenceImplementation::Output::rounded);
  SweepOptions options;
  options.samples = 64;
  options.threads = 2;
  const GroupResult g = sweep(reference, spec, options, Settings{});
  EXPECT_EQ(g.verdict, ropecheck::judge::Verdict::pass) << failure_text(g);
  EXPECT_LE(g.worst_e, 1.0);
}

// `--hf-config` with rope_scaling linear factor 1e-308 (θ'_0 = 1e308): ropecheck.apply's outputs
// judged by check under --model exact, the default claim and the reference's own.
TEST(ExtremeOracle, ApplyThenCheckAtLinearFactor1e308Passes) {
  const Spec spec = parse_spec("layout=half,head_dim=128,base=10000,dtype=f32,scaling=linear,factor=1e-308");
  const std::int64_t tokens = 64, heads = 4;
  std::vector<std::int64_t> where;
  for (std::int64_t t = 0; t < tokens; ++t) where.push_back(t * 1000);
  const std::vector<double> x = inputs(spec, tokens * heads * spec.head_dim, 50);
  const std::vector<double> y = reference::apply(spec, {tokens, heads, spec.head_dim}, where, x);
  Settings options;
  options.threads = 2;
  for (const Claims& c : {claims_of(Model::exact), claims_of(kDefaultModel), claims_of(Model::exact, correct_rounding())}) {
    const GroupResult g = judge_tensors(spec, heads, where, x, y, with_claims(options, c));
    EXPECT_EQ(g.verdict, ropecheck::judge::Verdict::pass) << name(c.model) << ": " << failure_text(g);
  }
}

// The f32-recipe variant's claim needs a finite binary32 angle (runner/reference_implementation.h):
// where a frequency passes 2^87 it declines the spec (a sweep skips it) instead of returning the
// recipe's NaN outputs to be failed; below it, it runs.
TEST(ExtremeOracle, F32RecipeReferenceDeclinesAnOverflowingAngle) {
  const ReferenceImplementation recipe(256, reference::Model::f32_recipe, ReferenceImplementation::Output::rounded);
  const Spec overflowing = parse_spec("layout=half,head_dim=8,base=10000,dtype=f32,scaling=linear,factor=1e-70");
  EXPECT_FALSE(recipe.supports(overflowing));
  const std::vector<double> x(8, 0.5);
  const std::vector<std::int64_t> at = {3};
  EXPECT_EQ(recipe.run(overflowing, {1, 1, 8}, at, x).status, ApplyResult::Status::unsupported);
  SweepOptions options;
  options.samples = 16;
  options.threads = 1;
  EXPECT_EQ(sweep(recipe, overflowing, options, Settings{}).verdict, ropecheck::judge::Verdict::skip);
  // θ'_0 = 1e20 < 2^87: every binary32 angle up to |m| = 2^40 is finite.
  const Spec finite = parse_spec("layout=half,head_dim=8,base=10000,dtype=f32,scaling=linear,factor=1e-20");
  EXPECT_TRUE(recipe.supports(finite));
  EXPECT_EQ(recipe.run(finite, {1, 1, 8}, at, x).status, ApplyResult::Status::ok);
}

}  // namespace
}  // namespace ropecheck::judge
