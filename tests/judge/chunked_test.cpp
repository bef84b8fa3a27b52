// GroupComparer::add_evaluated (sidecar tests, direct checks, sweeps) judges a test's tokens on
// several threads, chunk by chunk, each chunk's expected values computed on the spot, and merges
// the per-thread tallies. Its result must be add's — every count, figure, point, outcome and listed
// case, in the same order — with the whole test's expected values computed in one call, for any
// thread count and any split into chunks. The candidate carries planted failures of many kinds and
// severities (sign flips, ulp offsets with ties, NaN, pass-through changes) spread over chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "base/random.h"
#include "judge/diagnosis.h"
#include "judge/group.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "runner/adapters.h"
#include "runner/golden_run.h"
#include "runner/sweep.h"

namespace ropecheck::judge {
namespace {

using runner::FunctionImplementation;
using runner::judge_golden;
using runner::Judgement;
using runner::kSweepMinCalls;
using runner::load_golden;
using runner::LoadedGolden;
using runner::sample_positions;
using runner::Shape;
using runner::sweep;
using runner::sweep_calls;
using runner::SweepOptions;

// Everything a report prints of a group, as text (equal text: equal reports).
std::string summary(const GroupResult& r) {
  std::ostringstream o;
  o.precision(17);
  o << name(r.verdict) << " tests " << r.tests << "/" << r.tests_failed << "/" << r.tests_skipped << " pairs " << r.pairs_checked << "/"
    << r.pairs_failed << " ordinary " << r.ordinary_checked << "/" << r.ordinary_failed << " special " << r.special_checked << "/"
    << r.special_failed << " edge " << r.edge_failed << " zeros " << r.signed_zero_failed << " passthrough " << r.passthrough_checked << "/"
    << r.passthrough_failed << " beyond " << r.tokens_beyond_max_position << "/" << r.beyond_required_failed << " by_position "
    << r.skipped_by_position << "\nworst e " << r.worst_e << " at " << r.worst_e_position << " pair " << r.worst_e_pair << " ulp "
    << r.worst_ulp << " abs " << r.worst_abs << " margin " << r.worst_margin << " max_position " << r.max_position << " horizon "
    << (r.horizon ? std::to_string(*r.horizon) : "none") << (r.horizon_complete ? " complete" : "") << " reason " << r.verdict_reason
    << "\n";
  for (const TestOutcome& t : r.outcomes) o << "outcome " << t.id << " " << name(t.status) << " " << t.reason << "\n";
  for (const Point& p : r.points) o << "point " << p.position << " " << p.e << " " << p.pass << "\n";
  for (const Case& c : r.worst) {
    o << "case " << c.suite << " " << c.test_id << " " << name(c.kind) << " " << c.accuracy << " " << (c.domain ? name(*c.domain) : "")
      << " token " << c.token << " head " << c.head << " dims " << c.dim << "," << c.second_dim << " position " << c.position << " e "
      << c.e << " ulp " << c.ulp << " abs " << c.abs << " tolerance " << c.tolerance << " severity " << c.severity << " " << c.message
      << "\n";
  }
  return o.str();
}

Call make_test(const Spec& spec, std::int64_t id, std::int64_t tokens, std::int64_t heads, std::int64_t stride) {
  Call t;
  t.id = id;
  t.tokens = tokens;
  t.heads = heads;
  t.head_dim = spec.head_dim;
  for (std::int64_t k = 0; k < tokens; ++k) t.positions.push_back(k * stride);
  SplitMix64 rng(7 + static_cast<std::uint64_t>(id));
  for (std::int64_t i = 0; i < tokens * heads * spec.head_dim; ++i) {
    t.input.push_back(reference::round_to_format(4 * rng.unit() - 2, spec.dtype));
  }
  t.expected = reference::apply(spec, {t.tokens, t.heads, t.head_dim}, t.positions, t.input);
  return t;
}

// The correctly rounded outputs with failures planted every `every` values: a sign flip, a few
// ulps off (equal offsets give equal severities: ties), a NaN, a changed pass-through value.
std::vector<double> planted(const Spec& spec, const Call& t, std::int64_t every) {
  std::vector<double> out = t.expected;
  SplitMix64 rng(99 + static_cast<std::uint64_t>(t.id));
  for (std::size_t i = 0; i < out.size(); i += static_cast<std::size_t>(every) + rng.below(static_cast<std::uint64_t>(every))) {
    const auto dim = static_cast<int>(i % static_cast<std::size_t>(spec.head_dim));
    if (dim >= spec.rotary_dim) {
      out[i] = out[i] + reference::ulp(out[i], spec.dtype);
      continue;
    }
    switch (rng.below(4)) {
      case 0: out[i] = -out[i]; break;
      case 1: out[i] = out[i] + 3 * reference::ulp(out[i], spec.dtype); break;
      case 2: out[i] = out[i] + 40 * reference::ulp(out[i], spec.dtype); break;
      default: out[i] = std::nan(""); break;
    }
  }
  return out;
}

struct Judged {
  Call test;
  std::vector<double> output;
};

GroupResult judge_whole(const Spec& spec, const std::vector<Judged>& tests, const Settings& options) {
  GroupComparer comparer("chunks", 0, spec, Model::exact, default_tolerance(Model::exact, spec), options);
  for (const Judged& j : tests) {
    const reference::Evaluation e =
        reference::evaluate(spec, {j.test.tokens, j.test.heads, j.test.head_dim}, j.test.positions, j.test.input);
    comparer.add(j.test, j.output, Expected{e.exact, j.test.expected});
  }
  return comparer.finish();
}

GroupResult judge_chunked(const Spec& spec, const std::vector<Judged>& tests, const Settings& options, int threads) {
  GroupComparer comparer("chunks", 0, spec, Model::exact, default_tolerance(Model::exact, spec), options);
  for (const Judged& j : tests) comparer.add_evaluated(j.test, j.output, threads);
  return comparer.finish();
}

TEST(AddEvaluated, JudgesAsAddDoesForAnyThreadCountAndChunking) {
  const Spec spec = parse_spec("layout=half,head_dim=64,rotary_dim=48,base=10000,dtype=bf16");
  // 2^18 values per chunk: 1100 tokens x 4 heads x 64 = 281600 values is two chunks on one thread
  // and one or two on each of two or three threads; the second test is smaller than one chunk.
  std::vector<Judged> tests;
  for (const auto& [id, tokens, stride, every] : {std::tuple{1, 1100, 3, 997}, std::tuple{2, 300, 41, 331}}) {
    Call t = make_test(spec, id, tokens, 4, stride);
    std::vector<double> output = planted(spec, t, every);
    tests.push_back({std::move(t), std::move(output)});
  }
  Settings few;
  few.worst_cases = 3;
  Settings limited;
  limited.max_position = 2000;
  limited.require_horizon = 1000;
  for (const Settings& options : {Settings{}, few, limited}) {
    const std::string whole = summary(judge_whole(spec, tests, options));
    ASSERT_NE(whole.find("case chunks 1 "), std::string::npos) << whole;  // the planted failures are listed
    ASSERT_NE(whole.find("case chunks 2 "), std::string::npos) << whole;
    for (int threads : {1, 2, 3}) {
      EXPECT_EQ(summary(judge_chunked(spec, tests, options, threads)), whole) << threads << " threads";
    }
  }
}

TEST(AddEvaluated, CarefulOutputsPass) {
  const Spec spec = parse_spec("layout=interleaved,head_dim=32,base=500000,dtype=f32,scaling=llama3");
  const Call t = make_test(spec, 1, 9000, 1, 13);
  const GroupResult r = judge_chunked(spec, {{t, t.expected}}, Settings{}, 2);
  EXPECT_EQ(r.verdict, ropecheck::judge::Verdict::pass);
  EXPECT_EQ(r.pairs_checked, 9000 * 16);
  EXPECT_LE(r.worst_e, 1.0);  // correctly rounded: e ≤ 1 (judge/pair_rule.h)
  EXPECT_EQ(r.points.size(), 9000u);
}

// A test of `tokens` tokens × 2 heads × head_dim 4 (8 values a token), positions and inputs from
// `seed`, for the samplers' tests.
Call sample_test(std::int64_t id, std::int64_t tokens, std::uint64_t seed) {
  Call t;
  t.id = id;
  t.tokens = tokens;
  t.heads = 2;
  t.head_dim = 4;
  SplitMix64 rng(seed);
  for (std::int64_t k = 0; k < tokens; ++k) t.positions.push_back(static_cast<std::int64_t>(rng.range(0, 1000)));
  for (std::int64_t k = 0; k < tokens * 8; ++k) t.input.push_back(rng.unit());
  return t;
}

// The sample a sampler keeps of the worst test so far is replaced in place (its arrays used again):
// replaced by a shorter test, it holds what a fresh sample of that test holds, nothing of the
// longer one it replaced.
TEST(DiagnosisSampler, SampleReplacedInPlaceIsTheFreshSample) {
  const Call a = sample_test(1, 20, 1), b = sample_test(2, 40, 2), c = sample_test(3, 13, 3);
  const std::vector<double> out_a(a.input.size(), 0.5), out_b(b.input.size(), -0.25), out_c(c.input.size(), 2.0);
  constexpr std::int64_t kMaxValues = 64;  // 8 tokens of 8 values
  DiagnosisSampler sampler(kMaxValues);
  sampler.offer(a, out_a, 1, 1.0, 0);
  sampler.offer(b, out_b, 1, 2.0, 20);  // worse: the sample is b's
  ASSERT_NE(sampler.sample(), nullptr);
  EXPECT_EQ(sampler.sample()->test.id, 2);
  sampler.offer(c, out_c, 1, 3.0, 60);  // worse again: c's, in b's arrays
  const DiagnosisSample fresh = diagnosis_sample(c, out_c, 1, kMaxValues, 60);
  const DiagnosisSample* kept = sampler.sample();
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->test.id, 3);
  EXPECT_EQ(kept->test.tokens, fresh.test.tokens);
  EXPECT_EQ(kept->test.positions, fresh.test.positions);
  EXPECT_EQ(kept->test.input, fresh.test.input);
  EXPECT_EQ(kept->output, fresh.output);
  EXPECT_EQ(kept->output, std::vector<double>(static_cast<std::size_t>(fresh.test.tokens * 8), 2.0));
  EXPECT_EQ(kept->first_token, 60);
  EXPECT_EQ(kept->token_stride, fresh.token_stride);
  EXPECT_EQ(kept->token_index, fresh.token_index);
  sampler.offer(a, out_a, 1, 2.5, 0);  // not worse: the sample stays c's
  EXPECT_EQ(sampler.sample()->test.id, 3);
  EXPECT_EQ(sampler.sample()->output, fresh.output);
}

// A test without tokens gives an empty sample (its stride divided by zero before).
TEST(DiagnosisSampler, TestWithoutTokensGivesAnEmptySample) {
  const Call empty = sample_test(4, 0, 6);
  const DiagnosisSample sample = diagnosis_sample(empty, {}, 1, 64, 0);
  EXPECT_EQ(sample.test.tokens, 0);
  EXPECT_TRUE(sample.test.input.empty());
  EXPECT_TRUE(sample.output.empty());
}

// The samples two samplers diagnose from, compared field by field.
void expect_same_samples(const DiagnosisSampler& got_sampler, const DiagnosisSampler& want_sampler) {
  const std::vector<DiagnosedTest> want = want_sampler.diagnosed(), got = got_sampler.diagnosed();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].test->tokens, want[i].test->tokens) << i;
    EXPECT_EQ(got[i].test->positions, want[i].test->positions) << i;
    EXPECT_EQ(got[i].test->input, want[i].test->input) << i;
    EXPECT_TRUE(std::equal(got[i].output.begin(), got[i].output.end(), want[i].output.begin(), want[i].output.end())) << i;
    EXPECT_EQ(got[i].first_token, want[i].first_token) << i;
    EXPECT_EQ(got[i].token_stride, want[i].token_stride) << i;
    EXPECT_TRUE(std::equal(got[i].token_index.begin(), got[i].token_index.end(), want[i].token_index.begin(),
                           want[i].token_index.end())) << i;
  }
}

// prepare (a direct check calls it while its first chunk is read) only writes the arrays in
// advance: the samples kept are those of a sampler never prepared, and the first test's sample
// lands in the prepared storage (no array grows past it).
TEST(DiagnosisSampler, PreparedSamplerKeepsTheSameSamples) {
  const Call a = sample_test(1, 30, 4), b = sample_test(2, 30, 5);
  const std::vector<double> out_a(a.input.size(), 0.5), out_b(b.input.size(), -0.25);
  constexpr std::int64_t kMaxValues = 64;  // 8 tokens of 8 values
  DiagnosisSampler plain(kMaxValues), prepared(kMaxValues);
  prepared.prepare(8, 1, 60);
  for (DiagnosisSampler* s : {&plain, &prepared}) {
    s->offer(a, out_a, 1, 1.0, 0);
  }
  const std::size_t capacity = prepared.sample()->test.input.capacity();
  EXPECT_GE(capacity, 8u * 8u);  // the first sample's 8 tokens, in the storage prepare wrote
  for (DiagnosisSampler* s : {&plain, &prepared}) {
    s->offer(b, out_b, 1, 2.0, 30);  // worse: b's sample, in a's arrays
  }
  EXPECT_EQ(prepared.sample()->test.input.capacity(), capacity);
  ASSERT_EQ(prepared.diagnosed().size(), 2u);  // the worst test's sample and the spread one
  expect_same_samples(prepared, plain);
}

// expect_tokens (a direct check tells the sampler its tensor's tokens before the first chunk) only
// starts the spread sample at the stride it would end at: over chunks whose tokens are a multiple
// of that stride, the samples kept are those of a sampler never told, at every split tried; over
// chunks that are not, at most the spread's budget of tokens is kept, each at a multiple of the
// final stride from its chunk's first token.
TEST(DiagnosisSampler, ExpectedTokensKeepTheSameSpread) {
  constexpr std::int64_t kMaxValues = 64;  // 8 tokens of 8 values; the spread keeps at most 4
  for (const std::int64_t chunk : {16, 32, 64}) {
    constexpr std::int64_t kTokens = 64;  // final stride 16: ceil(64 / 16) = 4 tokens kept
    DiagnosisSampler plain(kMaxValues), told(kMaxValues);
    told.expect_tokens(8, kTokens);
    for (std::int64_t first = 0; first < kTokens; first += chunk) {
      const Call t = sample_test(first / chunk + 1, chunk, static_cast<std::uint64_t>(first + 7));
      std::vector<double> out(t.input.size());
      for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<double>(first) + static_cast<double>(k);
      const double worst = static_cast<double>(first % 3);  // the worst test is not the last one
      for (DiagnosisSampler* s : {&plain, &told}) s->offer(t, out, 1, worst, first);
    }
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    expect_same_samples(told, plain);
    const std::vector<DiagnosedTest> spread = told.diagnosed();
    if (chunk < kTokens) {
      ASSERT_EQ(spread.size(), 2u);
      EXPECT_EQ(std::vector<std::int64_t>(spread[1].token_index.begin(), spread[1].token_index.end()),
                (std::vector<std::int64_t>{0, 16, 32, 48}));
    }
  }
  // Chunks of 12 tokens: 6 chunks and 2 more tokens, none a multiple of the stride 16.
  DiagnosisSampler told(kMaxValues);
  told.expect_tokens(8, 74);
  for (std::int64_t first = 0; first < 74; first += 12) {
    const std::int64_t n = std::min<std::int64_t>(12, 74 - first);
    const Call t = sample_test(first + 1, n, static_cast<std::uint64_t>(first + 3));
    const std::vector<double> out(t.input.size(), 1.0);
    told.offer(t, out, 1, 1.0, first);
  }
  const std::vector<DiagnosedTest> spread = told.diagnosed();
  ASSERT_EQ(spread.size(), 2u);
  EXPECT_GE(spread[1].test->tokens, 1);
  EXPECT_LE(spread[1].test->tokens, 4);
  for (const std::int64_t token : spread[1].token_index) EXPECT_EQ(token % 12 % 16, 0) << token;
}

// With several threads a sweep judges one chunk while the next one is called, and the diagnosis
// runs on every thread: the result, its diagnosis and explanation, and the sequence of calls the
// implementation sees must be one thread's. The implementation fails (the float32 recipe judged by
// the exact model), so the explanation runs too.
TEST(Sweep, SeveralThreadsGiveOneThreadsResultAndCalls) {
  const Spec spec = parse_spec("layout=half,head_dim=16,base=500000,dtype=f32");
  auto sweep_with = [&](int threads, std::vector<std::int64_t>& first_positions) {
    reference::Options recipe;
    recipe.model = reference::Model::f32_recipe;
    const FunctionImplementation f32_recipe(
        "f32 recipe", [&](const Spec& s, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input) {
          first_positions.push_back(positions.empty() ? -1 : positions.front());
          return reference::apply(s, shape, positions, input, recipe);
        });
    SweepOptions o;
    o.samples = 3000;
    o.threads = threads;
    return sweep(f32_recipe, spec, o, Settings{});
  };
  std::vector<std::int64_t> calls_one, calls_two, calls_three;
  const GroupResult one = sweep_with(1, calls_one);
  const GroupResult two = sweep_with(2, calls_two);
  const GroupResult three = sweep_with(3, calls_three);
  EXPECT_EQ(calls_one, calls_three);
  EXPECT_EQ(summary(one), summary(three));
  EXPECT_EQ(one.verdict, ropecheck::judge::Verdict::fail);
  SweepOptions o;
  o.samples = 3000;
  EXPECT_GE(calls_one.size(), static_cast<std::size_t>(sweep_calls(spec, o).calls));  // and the diagnosis's own
  EXPECT_GE(sweep_calls(spec, o).calls, kSweepMinCalls);
  EXPECT_EQ(calls_one, calls_two);
  EXPECT_EQ(summary(one), summary(two));
  ASSERT_TRUE(one.diagnosis.has_value());
  ASSERT_TRUE(two.diagnosis.has_value());
  EXPECT_EQ(one.diagnosis->lines, two.diagnosis->lines);
  EXPECT_EQ(one.diagnosis->explanation, two.diagnosis->explanation);
  EXPECT_EQ(one.diagnosis->frequency_error_ulps, two.diagnosis->frequency_error_ulps);
  EXPECT_EQ(one.diagnosis->angle_error_rad, two.diagnosis->angle_error_rad);
}

// How many calls a sweep makes (the command prints it, a shard's report carries it) is counted
// without drawing the positions: the count must be the drawn positions' count, whether the range
// is smaller than the samples, the fixed positions more than them, or random ones fill them up.
TEST(Sweep, CallsCountTheSampledPositions) {
  const Spec spec = parse_spec("layout=half,head_dim=128,base=500000,dtype=f32");
  for (const std::int64_t max_position : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{1}, std::int64_t{62}, std::int64_t{63}, std::int64_t{64},
                                          std::int64_t{100}, std::int64_t{4095}, std::int64_t{4096}, std::int64_t{100000},
                                          std::int64_t{2147483647}, std::int64_t{1} << 40, std::numeric_limits<std::int64_t>::max()}) {
    for (const std::int64_t samples : {std::int64_t{1}, std::int64_t{50}, std::int64_t{64}, std::int64_t{67}, std::int64_t{300},
                                       std::int64_t{4096}, std::int64_t{5000}}) {
      SweepOptions o;
      o.max_position = max_position;
      o.samples = samples;
      o.seed = 7;
      const auto drawn = static_cast<std::int64_t>(sample_positions(max_position, samples, o.seed).size());
      EXPECT_EQ(sweep_calls(spec, o).positions, drawn) << max_position << " " << samples;
    }
  }
}

// The sampled positions: sorted, distinct, in range, the fixed ones (0..63, 2^k − 1, 2^k, 2^k + 1,
// the maximum) among them, as many as asked; the same for the same seed, others for another.
TEST(Sweep, SampledPositionsAreDistinctSortedAndSeeded) {
  for (const std::int64_t max_position : {std::int64_t{100}, std::int64_t{5000}, std::int64_t{2147483647}}) {
    for (const std::int64_t samples : {std::int64_t{300}, std::int64_t{4096}}) {
      const std::vector<std::int64_t> p = sample_positions(max_position, samples, 7);
      EXPECT_EQ(static_cast<std::int64_t>(p.size()), std::min(samples, max_position + 1)) << max_position << " " << samples;
      for (std::size_t i = 1; i < p.size(); ++i) ASSERT_LT(p[i - 1], p[i]);
      ASSERT_FALSE(p.empty());
      EXPECT_GE(p.front(), 0);
      EXPECT_EQ(p.back(), max_position);
      const auto has = [&](std::int64_t v) { return std::binary_search(p.begin(), p.end(), v); };
      for (std::int64_t v = 0; v <= 63; ++v) EXPECT_TRUE(has(v)) << v;
      for (int k = 6; (std::int64_t{1} << k) + 1 <= max_position; ++k) {
        EXPECT_TRUE(has((std::int64_t{1} << k) - 1) && has(std::int64_t{1} << k) && has((std::int64_t{1} << k) + 1)) << k;
      }
      EXPECT_EQ(sample_positions(max_position, samples, 7), p);
      if (max_position > samples) {
        EXPECT_NE(sample_positions(max_position, samples, 8), p);
      }
    }
  }
}

// The same when the explanation scores the spec's variants and the memory checks (on every thread
// too): a base the spec does not say is named, with the same figures, whatever the thread count.
TEST(Sweep, SeveralThreadsGiveOneThreadsExplanation) {
  const Spec spec = parse_spec("layout=half,head_dim=32,base=500000,dtype=f32");
  const Spec used = parse_spec("layout=half,head_dim=32,base=10000,dtype=f32");
  const FunctionImplementation wrong_base(
      "base 10000", [&](const Spec&, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input) {
        return reference::apply(used, shape, positions, input);
      });
  auto sweep_with = [&](int threads) {
    SweepOptions o;
    o.samples = 2000;
    o.threads = threads;
    return sweep(wrong_base, spec, o, Settings{});
  };
  const GroupResult one = sweep_with(1);
  ASSERT_TRUE(one.diagnosis.has_value());
  EXPECT_EQ(one.verdict, ropecheck::judge::Verdict::fail);
  EXPECT_EQ(one.diagnosis->explanation_kind, "base") << one.diagnosis->explanation;
  EXPECT_NE(one.diagnosis->explanation.find("10000"), std::string::npos) << one.diagnosis->explanation;
  for (int threads : {2, 3}) {
    const GroupResult other = sweep_with(threads);
    EXPECT_EQ(summary(one), summary(other)) << threads;
    ASSERT_TRUE(other.diagnosis.has_value());
    EXPECT_EQ(one.diagnosis->lines, other.diagnosis->lines) << threads;
    EXPECT_EQ(one.diagnosis->explanation, other.diagnosis->explanation) << threads;
    EXPECT_EQ(one.diagnosis->mistake_within, other.diagnosis->mistake_within) << threads;
    EXPECT_EQ(one.diagnosis->mistake_identical, other.diagnosis->mistake_identical) << threads;
  }
}

// A golden run's groups, across files, go through one pipeline: calls on the calling thread in the
// order of the files, groups and tests, several groups judged at once (judge/README.md "Big tests
// on every thread"). The calls an implementation sees, the groups' results in file order (an
// attention file's note among them) and the diagnoses must be one thread's. The float32 recipe on
// f32 specs, judged by the exact model, fails (the diagnosis runs); the exact values elsewhere pass.
TEST(GoldenRun, SeveralThreadsGiveOneThreadsResultAndCallsAcrossFiles) {
  const std::string suites = std::string(ROPECHECK_SOURCE_DIR) + "/golden/suites/";
  std::vector<LoadedGolden> files;
  for (const char* name : {"half-f32-base500000.json", "attention.json", "half-f16-base10000.json", "edge-cases.json"}) {
    std::vector<LoadedGolden> one = load_golden(suites + name);
    ASSERT_EQ(one.size(), 1u);
    files.push_back(std::move(one.front()));
  }
  auto run_with = [&](int threads, std::vector<std::string>& calls) {
    reference::Options recipe;
    recipe.model = reference::Model::f32_recipe;
    const FunctionImplementation f32_recipe(
        "f32 recipe", [&](const Spec& s, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input) {
          std::ostringstream call;
          call.precision(17);
          call << s.head_dim << " " << shape.tokens << "x" << shape.heads << " " << (positions.empty() ? -1 : positions.front())
               << " " << (input.empty() ? 0.0 : input.front());
          calls.push_back(call.str());
          if (s.dtype != Dtype::f32) return reference::apply(s, shape, positions, input);
          return reference::apply(s, shape, positions, input, recipe);
        });
    Settings options;
    options.threads = threads;
    return judge_golden(files, f32_recipe, options);
  };
  auto text = [](const Judgement& j) {
    std::string out;
    for (const GroupResult& g : j.groups) {
      out += g.suite + " " + std::to_string(g.index) + " " + summary(g);
      if (g.diagnosis) {
        for (const std::string& line : g.diagnosis->lines) out += "diagnosis " + line + "\n";
        out += "explanation " + g.diagnosis->explanation + "\n";
      }
    }
    for (const std::string& note : j.notes) out += "note " + note + "\n";
    return out + "skipped " + std::to_string(j.skipped_by_flags) + " " + std::to_string(j.skipped_by_position) + "\n";
  };
  std::vector<std::string> calls_one;
  const Judgement one = run_with(1, calls_one);
  ASSERT_FALSE(one.groups.empty());
  EXPECT_EQ(one.notes.size(), 1u);  // the attention file: a function applies RoPE only
  bool failed = false, passed = false, diagnosed = false;
  for (const GroupResult& g : one.groups) {
    failed = failed || g.verdict == judge::Verdict::fail;
    passed = passed || g.verdict == judge::Verdict::pass;
    diagnosed = diagnosed || g.diagnosis.has_value();
  }
  EXPECT_TRUE(failed);
  EXPECT_TRUE(passed);
  EXPECT_TRUE(diagnosed);
  EXPECT_EQ(one.groups.front().suite, files.front().file.suite);
  EXPECT_EQ(one.groups.back().suite, files.back().file.suite);
  for (int threads : {2, 3}) {
    std::vector<std::string> calls;
    const Judgement other = run_with(threads, calls);
    EXPECT_EQ(calls_one, calls) << threads;
    EXPECT_EQ(text(one), text(other)) << threads;
  }
}

}  // namespace
}  // namespace ropecheck::judge
