#include "gate/shard.h"

#include <cstdio>
#include <cstdlib>

#include "base/errors.h"
#include "gate/echo.h"

namespace ropecheck::gate {
namespace {

// A variable's value as an integer in [0, kMaxValue], or UsageError naming it. Slurm's array
// indices are below MaxArraySize (at most 4000001, slurm.conf(5)); Kubernetes' completion index
// is below `completions` (an int32).
constexpr std::int64_t kMaxValue = 2147483647;

std::optional<std::int64_t> variable(const Environment& environment, const char* name) {
  const auto it = environment.find(name);
  if (it == environment.end()) return std::nullopt;
  const std::string& text = it->second;
  std::int64_t value = 0;
  bool digits = !text.empty() && text.size() <= 10;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      digits = false;
      break;
    }
    value = value * 10 + (c - '0');
  }
  if (!digits || value > kMaxValue) {
    throw UsageError(std::string("--shard auto: ") + name + ": expected an integer from 0 to 2147483647, got '" + text + "'");
  }
  return value;
}

std::string assignment(const char* name, std::int64_t value) { return std::string(name) + "=" + std::to_string(value); }

// The shard a Slurm job array names, when any of its variables is set.
std::optional<Shard> slurm_shard(const Environment& environment) {
  const auto id = variable(environment, kSlurmTaskId);
  const auto count = variable(environment, kSlurmTaskCount);
  const auto min = variable(environment, kSlurmTaskMin);
  const auto max = variable(environment, kSlurmTaskMax);
  const auto step = variable(environment, kSlurmTaskStep);
  if (!id && !count && !min && !max && !step) return std::nullopt;
  auto fail = [](const char* name, const std::string& expected) {
    throw UsageError(std::string("--shard auto: ") + name + ": expected " + expected);
  };
  const char* some = count ? kSlurmTaskCount : min ? kSlurmTaskMin : max ? kSlurmTaskMax : kSlurmTaskStep;
  if (!id) fail(kSlurmTaskId, std::string("this task's index in the Slurm job array (sbatch --array), got none while ") + some + " is set");
  if (min.has_value() != max.has_value()) {
    fail(min ? kSlurmTaskMax : kSlurmTaskMin, std::string("the array's ") + (min ? "largest" : "smallest") + " index with " +
                                                  (min ? kSlurmTaskMin : kSlurmTaskMax) + " (Slurm sets both), got none");
  }
  Shard shard;
  if (!min) {
    // SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT only: indices 0 .. COUNT − 1.
    if (step) fail(kSlurmTaskMin, std::string("the array's smallest index with ") + kSlurmTaskStep + " (Slurm sets both), got none");
    if (!count) fail(kSlurmTaskCount, "the number of tasks in the job array (or SLURM_ARRAY_TASK_MIN and _MAX), got none");
    if (*count < 1 || *count > kMaxShards) fail(kSlurmTaskCount, "a task count from 1 to 2^20, got " + std::to_string(*count));
    if (*id >= *count) {
      fail(kSlurmTaskId, "an index below " + assignment(kSlurmTaskCount, *count) + " (indices 0.." + std::to_string(*count - 1) +
                             "), got " + std::to_string(*id));
    }
    shard.index = static_cast<int>(*id);
    shard.count = static_cast<int>(*count);
    shard.source = "Slurm array task " + assignment(kSlurmTaskId, *id) + " of " + assignment(kSlurmTaskCount, *count);
    return shard;
  }
  // MIN, MIN + STEP, ..., MAX (sbatch --array=MIN-MAX:STEP): the shard is the task's rank in it.
  const std::int64_t stride = step.value_or(1);
  const std::string range = std::to_string(*min) + "-" + std::to_string(*max) + (stride == 1 ? "" : ":" + std::to_string(stride));
  if (stride < 1) fail(kSlurmTaskStep, "a step of 1 or more, got 0");
  if (*max < *min) fail(kSlurmTaskMax, "an index >= " + assignment(kSlurmTaskMin, *min) + ", got " + std::to_string(*max));
  if ((*max - *min) % stride != 0) {
    fail(kSlurmTaskMax,
         assignment(kSlurmTaskMin, *min) + " plus a multiple of " + assignment(kSlurmTaskStep, stride) + ", got " + std::to_string(*max));
  }
  if (*id < *min || *id > *max || (*id - *min) % stride != 0) {
    fail(kSlurmTaskId, "one of the array's indices " + range + ", got " + std::to_string(*id));
  }
  const std::int64_t tasks = (*max - *min) / stride + 1;
  if (tasks > kMaxShards) fail(kSlurmTaskMax, "at most 2^20 tasks in " + range + ", got " + std::to_string(tasks));
  if (count && *count != tasks) {
    // An array of listed indices (--array=1,3,7) that are not MIN..MAX in steps of STEP: its tasks
    // have no rank to shard by.
    fail(kSlurmTaskCount,
         std::to_string(tasks) + ", the tasks of " + range + ", got " + std::to_string(*count) +
             (*count >= 1 ? " (submit an evenly spaced array such as --array=0-" + std::to_string(*count - 1) + ")" : std::string()));
  }
  shard.index = static_cast<int>((*id - *min) / stride);
  shard.count = static_cast<int>(tasks);
  shard.source = "Slurm array task " + assignment(kSlurmTaskId, *id) + " of " + range;
  return shard;
}

// The shard a Kubernetes Indexed Job names, when JOB_COMPLETION_INDEX is set.
std::optional<Shard> kubernetes_shard(const Environment& environment, std::optional<std::int64_t> completions) {
  const auto index = variable(environment, kJobCompletionIndex);
  if (!index) return std::nullopt;
  if (!completions) {
    throw UsageError(std::string("--shard-count: expected the Indexed Job's completions with --shard auto (") +
                     assignment(kJobCompletionIndex, *index) + " is set), got none");
  }
  if (*index >= *completions) {
    throw UsageError(std::string("--shard auto: ") + kJobCompletionIndex + ": expected an index below --shard-count " +
                     std::to_string(*completions) + ", got " + std::to_string(*index));
  }
  Shard shard;
  shard.index = static_cast<int>(*index);
  shard.count = static_cast<int>(*completions);
  shard.source = "Kubernetes Indexed Job " + assignment(kJobCompletionIndex, *index) + " of --shard-count " + std::to_string(*completions);
  return shard;
}

std::string fraction(const Shard& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

}  // namespace

Environment shard_environment() {
  Environment environment;
  for (const char* name : {kSlurmTaskId, kSlurmTaskCount, kSlurmTaskMin, kSlurmTaskMax, kSlurmTaskStep, kJobCompletionIndex}) {
    if (const char* value = std::getenv(name)) environment[name] = value;
  }
  return environment;
}

Shard resolve_shard(const std::optional<std::string>& given, std::optional<std::int64_t> shard_count, const Environment& environment) {
  if (shard_count && (*shard_count < 1 || *shard_count > kMaxShards)) {
    throw UsageError("--shard-count: expected an integer from 1 to 2^20, got " + std::to_string(*shard_count));
  }
  if (!given) {
    if (shard_count) {
      throw UsageError("--shard-count: expected only with --shard auto (the count of a Kubernetes Indexed Job), got --shard-count " +
                       std::to_string(*shard_count) + " without --shard");
    }
    return Shard{0, 1, "--shard"};
  }
  const std::string& text = *given;
  if (text != "auto") {
    if (shard_count) {
      throw UsageError("--shard-count: expected only with --shard auto (--shard K/N names the count), got --shard " + echo(text));
    }
    int index = -1, count = 0;
    char slash = 0;
    std::size_t used = 0;
    if (std::sscanf(text.c_str(), "%d%c%d%zn", &index, &slash, &count, &used) != 3 || slash != '/' || used != text.size() || count < 1 ||
        count > kMaxShards || index < 0 || index >= count) {
      throw UsageError("--shard: expected K/N with 0 <= K < N <= 2^20 (e.g. 0/4), or auto, got " + echo(text));
    }
    return Shard{index, count, "--shard"};
  }
  const std::optional<Shard> slurm = slurm_shard(environment);
  const std::optional<Shard> kubernetes = kubernetes_shard(environment, shard_count);
  if (slurm && kubernetes) {
    if (slurm->index != kubernetes->index || slurm->count != kubernetes->count) {
      throw UsageError(std::string("--shard auto: ") + kJobCompletionIndex + ": expected shard " + fraction(*slurm) + " as the " +
                       slurm->source + " names, got shard " + fraction(*kubernetes) + " (" + kubernetes->source + ")");
    }
    return *slurm;
  }
  if (slurm) {
    if (shard_count && *shard_count != slurm->count) {
      throw UsageError("--shard-count: expected " + std::to_string(slurm->count) + " as the " + slurm->source + " names, got " +
                       std::to_string(*shard_count));
    }
    return *slurm;
  }
  if (kubernetes) return *kubernetes;
  throw UsageError(std::string("--shard auto: expected ") + kSlurmTaskId + " (a Slurm job array) or " + kJobCompletionIndex +
                   " (a Kubernetes Indexed Job, with --shard-count N) in the environment, got neither (outside a scheduler, "
                   "give --shard K/N)");
}

}  // namespace ropecheck::gate
