// The sweep: how accurate is an implementation across positions, not only at the golden ones?
// Samples positions (every small one, then 2^k − 1, 2^k, 2^k + 1 and random ones up to
// max_position), one head of random inputs in [−2, 2) per position, every pair index, and judges the
// implementation's outputs by the one group rule (judge/group.h): worst e and where, the accuracy
// horizon (the largest sampled position up to which every ordinary pair is within tolerance).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "judge/group.h"
#include "judge/settings.h"
#include "runner/implementation.h"

namespace ropecheck::runner {

struct SweepOptions {
  std::int64_t max_position = 2147483647;
  std::int64_t samples = 256;
  std::uint64_t seed = 1;
  int threads = 0;  // the reference's threads (0: all cores)
  // Positions per call of the implementation (fewer for a wide head: a call holds at most
  // kMaxSweepCallElements values): bounds the memory of a sweep with many samples.
  std::int64_t chunk_tokens = 4096;
  // This run judges the calls c (sweep_calls) with c mod shard_count = shard_index. A call's
  // positions, inputs (from (seed, position) alone) and test id c + 1 are the unsharded run's, so
  // `report merge` of the shards gives the unsharded report (gate/merge.h).
  int shard_index = 0;
  int shard_count = 1;
};

// How a sweep calls the implementation: its sampled positions in order, `per_call` at a time (the
// last call takes the rest). At most chunk_tokens positions and kMaxSweepCallElements values a
// call, and at least min(kSweepMinCalls, positions) calls: the calls are the unit of sharding, so
// that every sweep splits into that many shards (a shard holds whole calls: a call is one test,
// whose worst cases are ranked together, judge/group.h).
struct SweepCalls {
  std::int64_t positions = 0;
  std::int64_t per_call = 1;
  std::int64_t calls = 0;
};
inline constexpr std::int64_t kSweepMinCalls = 64;
SweepCalls sweep_calls(const Spec& spec, const SweepOptions& options);

// The shard schedule, the one rule sweep() follows and `report merge` checks shards against
// (gate/merge.cpp): call c samples positions [c·per_call, (c + 1)·per_call) of sample_positions (the
// last call fewer), is made by shard c mod N, and is the test of id c + 1.
inline std::int64_t shard_of_call(std::int64_t call, std::int64_t shard_count) { return call % shard_count; }
inline std::int64_t test_id_of_call(std::int64_t call) { return call + 1; }
// The k-th call shard K of N makes (k from 0), and how many calls it makes.
inline std::int64_t shard_call(std::int64_t shard_index, std::int64_t shard_count, std::int64_t k) { return shard_index + k * shard_count; }
inline std::int64_t shard_call_count(const SweepCalls& calls, std::int64_t shard_index, std::int64_t shard_count) {
  return std::max<std::int64_t>(0, (calls.calls - shard_index + shard_count - 1) / shard_count);
}

// Most samples a sweep takes (its plot and report keep one point per sample: `report merge` of
// sweep shards recomputes the horizon from them). At the cap a sweep's memory is about 300 MB,
// and 1.9 GB with --json and --html (measured, head_dim 2; 272 MB of JSON).
inline constexpr std::int64_t kMaxSweepSamples = std::int64_t{1} << 22;
// Most values per call, whatever the head_dim (4096 positions of head_dim 128; 4096 positions of
// head_dim 65536 were 2^28 values, several GB, in one call).
inline constexpr std::int64_t kMaxSweepCallElements = std::int64_t{1} << 19;

// Sorted, distinct positions: 0..63, then 2^k − 1, 2^k, 2^k + 1, the maximum, then uniform random
// ones until `samples` (more when those fixed ones are more; every position when the range has at
// most `samples`). splitmix64 (base/random.h): the same on every platform.
std::vector<std::int64_t> sample_positions(std::int64_t max_position, std::int64_t samples, std::uint64_t seed);

// Throws UsageError for options out of range, and for more shards than calls. Test ids of the
// result are the calls: call c has id c + 1, in whichever shard judges it.
// A shard's diagnosis (when it needs one: judge/diagnosis.h needs_diagnosis) is fitted on the
// unsharded run's sample, the first calls up to kDiagnosisSampleValues values, made again where
// another shard judges them: the shards that need one give the unsharded run's. The model and
// tolerance are the implementation's claims; the comparer reads `settings` (judge/settings.h).
judge::GroupResult sweep(const Implementation& implementation, const Spec& spec, const SweepOptions& options,
                         const judge::Settings& settings);

}  // namespace ropecheck::runner
