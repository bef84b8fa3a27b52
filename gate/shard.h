// `--shard` of `sweep` and `fuzz`: which part of the work this process does. `K/N` names it; `auto`
// reads it from the scheduler that started the process:
//   - a Slurm job array (sbatch --array): SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN, _MAX and
//     _STEP (shard = (ID − MIN) / STEP of (MAX − MIN) / STEP + 1; SLURM_ARRAY_TASK_COUNT, when set,
//     must agree), or with SLURM_ARRAY_TASK_COUNT alone (shard = ID of COUNT);
//   - a Kubernetes Indexed Job: JOB_COMPLETION_INDEX, with the Job's `completions` given as
//     `--shard-count N` (Kubernetes puts no count in the pod's environment).
// Anything partial or inconsistent (an ID without a count, an index past the count, an array whose
// indices are not evenly spaced, Slurm and Kubernetes naming different shards) is a UsageError
// naming the variable and the value expected — never a silent unsharded run. The CLI reads the
// process environment once (shard_environment) and passes it in as a value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace ropecheck::gate {

struct Shard {
  int index = 0;
  int count = 1;
  std::string source;  // where it came from, for the output: "--shard", or the variables read
};

// The variables resolve_shard may read, as a map of name to value.
using Environment = std::map<std::string, std::string>;

// The scheduler variables of this process's environment (only those resolve_shard reads).
Environment shard_environment();

// `text` is --shard: "K/N" (0 <= K < N) or "auto", none when not given (0/1: no sharding);
// `shard_count` is --shard-count (with auto only). Throws UsageError naming the option or variable
// and the value expected.
Shard resolve_shard(const std::optional<std::string>& text, std::optional<std::int64_t> shard_count, const Environment& environment);

// The names this reads (documented in gate/README.md "Sharded sweeps on a cluster").
inline constexpr const char* kSlurmTaskId = "SLURM_ARRAY_TASK_ID";
inline constexpr const char* kSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT";
inline constexpr const char* kSlurmTaskMin = "SLURM_ARRAY_TASK_MIN";
inline constexpr const char* kSlurmTaskMax = "SLURM_ARRAY_TASK_MAX";
inline constexpr const char* kSlurmTaskStep = "SLURM_ARRAY_TASK_STEP";
inline constexpr const char* kJobCompletionIndex = "JOB_COMPLETION_INDEX";

// Most shards: the count `report merge` accepts (gate/merge.cpp).
inline constexpr std::int64_t kMaxShards = std::int64_t{1} << 20;

}  // namespace ropecheck::gate
