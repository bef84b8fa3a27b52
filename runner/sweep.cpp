#include "runner/sweep.h"

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "base/errors.h"
#include "base/parallel.h"
#include "base/random.h"
#include "judge/diagnosis.h"
#include "reference/rounding.h"
#include "runner/failing_call.h"
#include "spec/schedule.h"

namespace ropecheck::runner {

namespace {

// The positions every sweep up to max_position samples: 0..63, 2^k − 1, 2^k, 2^k + 1, the
// maximum; sorted, distinct.
std::vector<std::int64_t> fixed_positions(std::int64_t max_position) {
  std::vector<std::int64_t> p;
  for (std::int64_t i = 0; i <= std::min<std::int64_t>(63, max_position); ++i) p.push_back(i);
  for (int k = 6; k < 63 && (std::int64_t{1} << k) - 1 <= max_position; ++k) {
    for (std::int64_t d : {-1, 0, 1}) {
      const std::int64_t v = (std::int64_t{1} << k) + d;
      if (v <= max_position) p.push_back(v);
    }
  }
  p.push_back(max_position);
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

// How many positions sample_positions gives, without drawing them: the whole range where it holds
// at most `samples`, else the fixed ones and random ones up to `samples`.
std::int64_t sample_count(std::int64_t max_position, std::int64_t samples) {
  const std::int64_t wanted = std::max<std::int64_t>(samples, 1);
  if (max_position < wanted) return std::max<std::int64_t>(0, max_position + 1);
  return std::max(wanted, static_cast<std::int64_t>(fixed_positions(max_position).size()));
}

}  // namespace

std::vector<std::int64_t> sample_positions(std::int64_t max_position, std::int64_t samples, std::uint64_t seed) {
  std::vector<std::int64_t> p = fixed_positions(max_position);
  const std::int64_t wanted = std::max<std::int64_t>(samples, 1);
  if (max_position < wanted) {  // the whole range (not max + 1 <= wanted: it overflows at INT64_MAX)
    p.clear();
    for (std::int64_t i = 0; i <= max_position; ++i) p.push_back(i);
    return p;
  }
  // Distinct random ones, drawn one at a time until there are `samples`; the ones seen so far in an
  // open-addressing table of at least twice as many slots, a position or −1 (none: positions are
  // >= 0) in each, probed from its Fibonacci hash (no node per position, as a std::unordered_set
  // allocates: bench/README.md "A sweep's positions").
  const auto slots = std::bit_ceil(2 * std::max(static_cast<std::size_t>(wanted), p.size()));
  const int shift = 64 - std::countr_zero(slots);
  std::vector<std::int64_t> seen(slots, -1);
  const auto insert = [&](std::int64_t v) {
    // slots >= 2: shift <= 63
    for (auto i = static_cast<std::size_t>((static_cast<std::uint64_t>(v) * 0x9e3779b97f4a7c15ULL) >> shift);; i = (i + 1) & (slots - 1)) {
      if (seen[i] == v) return false;
      if (seen[i] < 0) {
        seen[i] = v;
        return true;
      }
    }
  };
  for (const std::int64_t v : p) insert(v);
  SplitMix64 rng(seed);
  while (static_cast<std::int64_t>(p.size()) < wanted) {
    const std::int64_t v = rng.range(0, max_position);
    if (insert(v)) p.push_back(v);
  }
  std::sort(p.begin(), p.end());
  return p;
}

namespace {

// The sweep's call `c`: its positions, one head of random inputs in [−2, 2) per position (values of
// the dtype, from (seed, position) alone), id c + 1.
judge::Call sweep_call(const Spec& spec, const std::vector<std::int64_t>& positions, const SweepCalls& calls, std::int64_t c,
                       std::uint64_t seed) {
  const auto begin = static_cast<std::size_t>(c * calls.per_call);
  const std::size_t end = std::min(positions.size(), begin + static_cast<std::size_t>(calls.per_call));
  const int components = position_components(spec);
  const std::int64_t d = spec.head_dim;
  judge::Call call;
  call.id = test_id_of_call(c);
  call.tokens = static_cast<std::int64_t>(end - begin);
  call.heads = 1;
  call.head_dim = d;
  // every component of a multi-axis position tuple takes the sampled position
  for (std::size_t t = begin; t < end; ++t) call.positions.insert(call.positions.end(), static_cast<std::size_t>(components), positions[t]);
  for (std::size_t t = begin; t < end; ++t) {
    SplitMix64 rng(seed + 1 + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(positions[t]));
    for (std::int64_t k = 0; k < d; ++k) call.input.push_back(reference::round_to_format(4 * rng.unit() - 2, input_dtype_of(spec)));
  }
  return call;
}

SweepCalls calls_of(std::int64_t positions, const Spec& spec, const SweepOptions& o) {
  SweepCalls calls;
  calls.positions = positions;
  const std::int64_t by_values = kMaxSweepCallElements / std::max<std::int64_t>(spec.head_dim, 1);
  const std::int64_t by_count = positions / kSweepMinCalls;  // ceil(positions / by_count) >= kSweepMinCalls
  calls.per_call = std::max<std::int64_t>(1, std::min({o.chunk_tokens, by_values, by_count}));
  calls.calls = (positions + calls.per_call - 1) / calls.per_call;
  return calls;
}

}  // namespace

SweepCalls sweep_calls(const Spec& spec, const SweepOptions& o) { return calls_of(sample_count(o.max_position, o.samples), spec, o); }

judge::GroupResult sweep(const Implementation& implementation, const Spec& spec, const SweepOptions& o, const judge::Settings& settings) {
  if (o.max_position < 0) throw UsageError("--max-position: expected an integer >= 0, got " + std::to_string(o.max_position));
  if (o.samples < 1 || o.samples > kMaxSweepSamples) {
    throw UsageError("--samples: expected an integer >= 1 and <= " + std::to_string(kMaxSweepSamples) + ", got " +
                     std::to_string(o.samples));
  }
  if (o.threads < 0) throw UsageError("--threads: expected an integer >= 0, got " + std::to_string(o.threads));
  const std::string shard = std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count);
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count) {
    throw UsageError("--shard: expected K/N with 0 <= K < N, got " + shard);
  }
  validate(spec);
  const std::vector<std::int64_t> positions = sample_positions(o.max_position, o.samples, o.seed);
  const SweepCalls calls = calls_of(static_cast<std::int64_t>(positions.size()), spec, o);
  if (o.shard_count > calls.calls) {
    throw UsageError("--shard " + shard + ": expected at most " + std::to_string(calls.calls) + " shards: this sweep makes " +
                     std::to_string(calls.calls) + " calls of up to " + std::to_string(calls.per_call) + " of its " +
                     std::to_string(calls.positions) +
                     " sampled positions, and a shard makes whole calls (fewer shards, or more --samples)");
  }

  judge::GroupComparer comparer("sweep", 0, spec, implementation.claims().model, implementation.tolerance(spec), settings);
  // The calls judged here among the first up to kDiagnosisSampleValues values (the diagnosis's
  // sample, judge/diagnosis.h), by call; the first call that gave no output, bisected to its first
  // position.
  std::map<std::int64_t, std::pair<judge::Call, std::vector<double>>> kept;
  std::set<std::int64_t> no_output;  // this shard's calls that gave none (not made again)
  judge::FailedCalls failed_calls;
  // One call of this shard: what it was given, what the implementation gave (a failed call bisected to its
  // first failing position), and what judging it found. The tests are drawn and the calls made on
  // the calling thread, in order, one at a time (an implementation may keep state between calls: it
  // always sees the same sequence; the call is one thread's work, often in a child process:
  // runner/isolation.h). The judging after it (the reference's values, judge/group.h) runs on every
  // thread, several calls at once; the judged calls are recorded in call order (base/parallel.h
  // ordered_pipeline), so the report is the same bytes whatever the thread count.
  struct CalledTest {
    std::int64_t call = 0;
    judge::Call test;
    ApplyResult result;
    std::int64_t first_failing_position = 0;
    ApplyResult first_failing_call;
    std::optional<judge::GroupComparer::JudgedTest> judged;
  };
  const std::int64_t shard_calls = shard_call_count(calls, o.shard_index, o.shard_count);
  // A shard of fewer calls than threads splits each call's tokens over its share of the threads.
  const int judge_threads = threads_per_item(o.threads, static_cast<std::size_t>(std::max<std::int64_t>(shard_calls, 0)));
  const auto call_of = [&](std::size_t k) { return shard_call(o.shard_index, o.shard_count, static_cast<std::int64_t>(k)); };
  const auto make_test = [&](std::size_t k) {
    CalledTest called;
    called.call = call_of(k);
    called.test = sweep_call(spec, positions, calls, called.call, o.seed);
    return called;
  };
  const auto call_implementation = [&](std::size_t, CalledTest& called) {
    called.result = implementation.run(spec, Shape{called.test.tokens, 1, spec.head_dim}, called.test.positions, called.test.input);
    if (called.result.status != ApplyResult::Status::ok && called.result.status != ApplyResult::Status::unsupported) {
      std::tie(called.first_failing_position, called.first_failing_call) =
          first_failing_call(implementation, spec, called.test, called.result);
    }
  };
  const auto judge_call = [&](std::size_t, CalledTest& called) {
    // The correctly rounded and the exact values (reference::evaluate) and the judgement.
    if (called.result.status == ApplyResult::Status::ok) {
      called.judged = comparer.judge_evaluated(called.test, called.result.output, judge_threads);
    }
  };
  const auto record = [&](std::size_t, CalledTest&& called) {
    const std::int64_t c = called.call;
    judge::Call& test = called.test;
    const ApplyResult& result = called.result;
    if (result.status != ApplyResult::Status::ok || result.output.size() != test.input.size()) no_output.insert(c);
    if (result.status != ApplyResult::Status::ok) {
      if (result.status == ApplyResult::Status::unsupported) {
        comparer.skip(test.id, result.message);
      } else {
        failed_calls.offer(called.first_failing_position, case_kind(called.first_failing_call.status), called.first_failing_call.message);
        comparer.fail(test, case_kind(result.status), result.message);
      }
      return;
    }
    comparer.add_judged(test, result.output, std::move(*called.judged));
    // Only calls that start below kDiagnosisSampleValues values can be in the sample (a call past
    // it is made again in the rare case that earlier calls gave no output): bounded memory.
    if (c * calls.per_call * spec.head_dim < judge::kDiagnosisSampleValues && !no_output.count(c)) {
      kept.emplace(c, std::make_pair(std::move(test), std::move(called.result.output)));
    }
  };
  ordered_pipeline<CalledTest>(static_cast<std::size_t>(std::max<std::int64_t>(shard_calls, 0)), o.threads, make_test, call_implementation,
                               judge_call, record);
  judge::GroupResult g = comparer.finish();
  if (judge::needs_diagnosis(g)) {
    // The unsharded run's sample: the calls in order while fewer than kDiagnosisSampleValues values
    // are kept, each kept when it gave an output of the test's size; another shard's calls made again.
    std::vector<judge::DiagnosedTest> judged;
    std::int64_t sample_values = 0;
    for (std::int64_t c = 0; c < calls.calls && sample_values < judge::kDiagnosisSampleValues; ++c) {
      if (no_output.count(c)) continue;
      auto it = kept.find(c);
      if (it == kept.end()) {
        judge::Call test = sweep_call(spec, positions, calls, c, o.seed);
        const ApplyResult result = implementation.run(spec, Shape{test.tokens, 1, spec.head_dim}, test.positions, test.input);
        if (result.status != ApplyResult::Status::ok || result.output.size() != test.input.size()) continue;
        it = kept.emplace(c, std::make_pair(std::move(test), result.output)).first;
      }
      sample_values += static_cast<std::int64_t>(it->second.second.size());
      judged.push_back({.test = &it->second.first, .output = it->second.second});
    }
    if (!judged.empty()) g.diagnosis = judge::diagnose(spec, judged, implementation.claims().model, g.verdict == judge::Verdict::fail, o.threads, &g);
  }
  failed_calls.explain(g);
  return g;
}

}  // namespace ropecheck::runner
