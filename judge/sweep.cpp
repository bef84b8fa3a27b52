#include "judge/sweep.h"

#include <algorithm>
#include <future>
#include <tuple>
#include <unordered_set>

#include "judge/diagnosis.h"
#include "judge/errors.h"
#include "judge/parallel.h"
#include "reference/rounding.h"
#include "spec/random.h"
#include "spec/schedule.h"

namespace ropecheck::judge {

std::vector<std::int64_t> sample_positions(std::int64_t max_position, std::int64_t samples, std::uint64_t seed) {
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
  const std::int64_t wanted = std::max<std::int64_t>(samples, 1);
  if (max_position < wanted) {  // the whole range (not max + 1 <= wanted: it overflows at INT64_MAX)
    p.clear();
    for (std::int64_t i = 0; i <= max_position; ++i) p.push_back(i);
    return p;
  }
  // Distinct random ones, drawn one at a time until there are `samples`.
  SplitMix64 rng(seed);
  std::unordered_set<std::int64_t> seen(p.begin(), p.end());
  while (static_cast<std::int64_t>(p.size()) < wanted) {
    const std::int64_t v = rng.range(0, max_position);
    if (seen.insert(v).second) p.push_back(v);
  }
  std::sort(p.begin(), p.end());
  return p;
}

GroupResult sweep(const Implementation& implementation, const Spec& spec, const SweepOptions& o,
                  const GroupOptions& group_options) {
  if (o.max_position < 0) throw UsageError("--max-position: expected an integer >= 0, got " + std::to_string(o.max_position));
  if (o.samples < 1 || o.samples > kMaxSweepSamples) {
    throw UsageError("--samples: expected an integer >= 1 and <= " + std::to_string(kMaxSweepSamples) + ", got " +
                     std::to_string(o.samples));
  }
  if (o.threads < 0) throw UsageError("--threads: expected an integer >= 0, got " + std::to_string(o.threads));
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count) {
    throw UsageError("--shard: expected K/N with 0 <= K < N, got " + std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count));
  }
  validate(spec);
  std::vector<std::int64_t> positions;
  {
    const std::vector<std::int64_t> all = sample_positions(o.max_position, o.samples, o.seed);
    for (std::size_t i = static_cast<std::size_t>(o.shard_index); i < all.size(); i += static_cast<std::size_t>(o.shard_count)) {
      positions.push_back(all[i]);
    }
  }
  const int components = position_components(spec);
  const std::int64_t d = spec.head_dim;

  golden::Group group;
  group.spec = spec;
  GroupComparer comparer("sweep", 0, group, implementation.claims().model, implementation.tolerance(spec), group_options);
  // At most kMaxSweepCallElements values per call, whatever the head_dim.
  const auto chunk_tokens = static_cast<std::size_t>(std::max<std::int64_t>(1, std::min(o.chunk_tokens, kMaxSweepCallElements / d)));
  const std::size_t chunks = (positions.size() + chunk_tokens - 1) / chunk_tokens;

  // One chunk's test and what the implementation gave for it: built and called in chunk order, one
  // call at a time (an implementation may keep state between calls: its calls are always the same
  // sequence), a failed call bisected to its first failing position before the next chunk's call.
  struct CalledChunk {
    golden::RopeTest test;
    ApplyResult result;
    std::int64_t first_failing_position = 0;
    ApplyResult first_failing_call;
  };
  auto call_chunk = [&](std::size_t c) {
    CalledChunk called;
    golden::RopeTest& test = called.test;
    const std::size_t begin = c * chunk_tokens, end = std::min(positions.size(), begin + chunk_tokens);
    test.id = static_cast<std::int64_t>(c) * o.shard_count + o.shard_index + 1;
    test.tokens = static_cast<std::int64_t>(end - begin);
    test.heads = 1;
    test.head_dim = d;
    // every component of a multi-axis position tuple takes the sampled position
    for (std::size_t t = begin; t < end; ++t) test.positions.insert(test.positions.end(), static_cast<std::size_t>(components), positions[t]);
    // random inputs in [−2, 2), values of the dtype, from (seed, position) alone
    test.input.reserve((end - begin) * static_cast<std::size_t>(d));
    for (std::size_t t = begin; t < end; ++t) {
      SplitMix64 rng(o.seed + 1 + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(positions[t]));
      for (std::int64_t k = 0; k < d; ++k) test.input.push_back(reference::round_to_format(4 * rng.unit() - 2, input_dtype_of(spec)));
    }
    called.result = implementation.run(spec, Shape{test.tokens, 1, d}, test.positions, test.input);
    if (called.result.status != ApplyResult::Status::ok && called.result.status != ApplyResult::Status::unsupported) {
      std::tie(called.first_failing_position, called.first_failing_call) = first_failing_call(implementation, spec, test, called.result);
    }
    return called;
  };

  // The chunks judged, kept for the diagnosis up to kDiagnosisSampleValues values (their positions
  // span the sampled range); the first call that gave no output, bisected to its first position.
  std::vector<golden::RopeTest> kept_tests;
  std::vector<std::vector<double>> kept_outputs;
  std::int64_t kept_values = 0;
  FailedCalls failed_calls;
  // With several threads the next chunk's call runs while this chunk is judged on every thread
  // (the call is one thread's work, often in a child process: judge/isolation.h); one thread calls
  // and judges in turn. Either way the tests are judged and recorded in chunk order.
  const bool overlap = resolve_threads(o.threads) > 1;
  std::future<CalledChunk> next;
  if (chunks > 0) next = std::async(overlap ? std::launch::async : std::launch::deferred, call_chunk, std::size_t{0});
  for (std::size_t c = 0; c < chunks; ++c) {
    CalledChunk called = next.get();
    if (c + 1 < chunks) next = std::async(overlap ? std::launch::async : std::launch::deferred, call_chunk, c + 1);
    golden::RopeTest& test = called.test;
    const ApplyResult& result = called.result;
    if (result.status != ApplyResult::Status::ok) {
      if (result.status == ApplyResult::Status::unsupported) {
        comparer.skip(test, result.message);
      } else {
        failed_calls.offer(called.first_failing_position, std::string(kind_name(called.first_failing_call.status)),
                           called.first_failing_call.message);
        comparer.fail(test, std::string(kind_name(result.status)), result.message);
      }
      continue;
    }
    // The correctly rounded and the exact values (reference::evaluate), chunk by chunk on every thread.
    comparer.add_evaluated(test, result.output, o.threads);
    if (kept_values < kDiagnosisSampleValues && result.output.size() == test.input.size()) {
      kept_values += static_cast<std::int64_t>(result.output.size());
      kept_outputs.push_back(std::move(called.result.output));
      kept_tests.push_back(std::move(test));
    }
  }
  GroupResult g = comparer.finish();
  if (needs_diagnosis(g) && !kept_tests.empty()) {
    std::vector<DiagnosedTest> judged;
    for (std::size_t i = 0; i < kept_tests.size(); ++i) judged.push_back({.test = &kept_tests[i], .output = kept_outputs[i]});
    g.diagnosis = diagnose(spec, judged, implementation.claims().model, g.verdict == "fail", o.threads);
  }
  failed_calls.explain(g);
  return g;
}

}  // namespace ropecheck::judge
