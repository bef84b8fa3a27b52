// `--shard K/N` and `--shard auto` (gate/shard.h): the shard each scheduler's environment names, and
// a UsageError naming the variable and the value expected for every partial or inconsistent one.
// The environments are those Slurm 22.05 gives the tasks of `sbatch --array=0-3`, `=1-7:2` and
// `=1,3,7` (SLURM_ARRAY_TASK_STEP is 1 for a list), and Kubernetes an Indexed Job's pod.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "base/errors.h"
#include "gate/shard.h"

namespace ropecheck::gate {
namespace {

Environment slurm(int id, int count, int min, int max, int step) {
  return {{"SLURM_ARRAY_TASK_ID", std::to_string(id)},
          {"SLURM_ARRAY_TASK_COUNT", std::to_string(count)},
          {"SLURM_ARRAY_TASK_MIN", std::to_string(min)},
          {"SLURM_ARRAY_TASK_MAX", std::to_string(max)},
          {"SLURM_ARRAY_TASK_STEP", std::to_string(step)}};
}

// The UsageError's text, or "" when none was thrown.
std::string error_of(const std::string& text, std::optional<std::int64_t> count, const Environment& environment) {
  try {
    resolve_shard(text, count, environment);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

void expect_refused(const std::string& text, std::optional<std::int64_t> count, const Environment& environment,
                    const std::vector<std::string>& words) {
  const std::string message = error_of(text, count, environment);
  ASSERT_FALSE(message.empty()) << "accepted: " << text;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& w : words) EXPECT_NE(message.find(w), std::string::npos) << "no '" << w << "' in: " << message;
}

TEST(Shard, ExplicitKOverN) {
  const Shard s = resolve_shard("2/5", std::nullopt, slurm(1, 4, 0, 3, 1));  // the environment is not read
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  for (const char* bad : {"5/5", "-1/4", "1/0", "1/4x", "1", "", "a/b", "0/1048577"}) {
    expect_refused(bad, std::nullopt, {}, {"--shard", "K/N"});
  }
  expect_refused("1/4", 4, {}, {"--shard-count", "only with --shard auto"});
}

// No --shard: the whole sweep (0/1); --shard-count alone names what is missing, not a "0/1" the
// user never gave.
TEST(Shard, NoShardGiven) {
  const Shard s = resolve_shard(std::nullopt, std::nullopt, slurm(1, 4, 0, 3, 1));  // no --shard auto: not read
  EXPECT_EQ(s.index, 0);
  EXPECT_EQ(s.count, 1);
  const std::string message = [] {
    try {
      resolve_shard(std::nullopt, 4, {});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  EXPECT_NE(message.find("--shard-count 4 without --shard"), std::string::npos) << message;
  EXPECT_EQ(message.find("0/1"), std::string::npos) << message;
  // a long --shard is echoed cut
  const std::string long_text(5000, '7');
  const std::string echoed = error_of(long_text, std::nullopt, {});
  EXPECT_LT(echoed.size(), 300u) << echoed.substr(0, 300);
}

TEST(Shard, SlurmArrayFromZero) {
  for (int id = 0; id < 4; ++id) {
    const Shard s = resolve_shard("auto", std::nullopt, slurm(id, 4, 0, 3, 1));
    EXPECT_EQ(s.index, id);
    EXPECT_EQ(s.count, 4);
    EXPECT_NE(s.source.find("SLURM_ARRAY_TASK_ID=" + std::to_string(id)), std::string::npos) << s.source;
  }
}

// --array=1-7:2: tasks 1, 3, 5, 7 are shards 0..3 of 4.
TEST(Shard, SlurmArrayWithMinAndStep) {
  for (int id : {1, 3, 5, 7}) {
    const Shard s = resolve_shard("auto", std::nullopt, slurm(id, 4, 1, 7, 2));
    EXPECT_EQ(s.index, (id - 1) / 2);
    EXPECT_EQ(s.count, 4);
  }
  // SLURM_ARRAY_TASK_COUNT is optional beside MIN and MAX; a --shard-count that agrees is accepted.
  Environment e = slurm(5, 4, 1, 7, 2);
  e.erase("SLURM_ARRAY_TASK_COUNT");
  EXPECT_EQ(resolve_shard("auto", 4, e).index, 2);
}

// ID and COUNT alone: indices 0..COUNT-1.
TEST(Shard, SlurmIdAndCountAlone) {
  const Shard s = resolve_shard("auto", std::nullopt, {{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "8"}});
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 8);
  expect_refused("auto", std::nullopt, {{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_COUNT", "8"}},
                 {"SLURM_ARRAY_TASK_ID", "below SLURM_ARRAY_TASK_COUNT=8", "got 8"});
  expect_refused("auto", std::nullopt, {{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "0"}},
                 {"SLURM_ARRAY_TASK_COUNT", "from 1", "got 0"});
}

TEST(Shard, PartialSlurmVariablesAreRefused) {
  expect_refused("auto", std::nullopt, {{"SLURM_ARRAY_TASK_ID", "2"}}, {"SLURM_ARRAY_TASK_COUNT", "got none"});
  expect_refused("auto", std::nullopt, {{"SLURM_ARRAY_TASK_COUNT", "4"}}, {"SLURM_ARRAY_TASK_ID", "got none"});
  expect_refused("auto", std::nullopt, {{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_MIN", "0"}}, {"SLURM_ARRAY_TASK_MAX", "got none"});
  expect_refused("auto", std::nullopt, {{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_MAX", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}},
                 {"SLURM_ARRAY_TASK_MIN", "got none"});
  expect_refused("auto", std::nullopt, {{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_STEP", "1"}, {"SLURM_ARRAY_TASK_COUNT", "4"}},
                 {"SLURM_ARRAY_TASK_MIN", "got none"});
}

TEST(Shard, InconsistentSlurmVariablesAreRefused) {
  // --array=1,3,7: COUNT 3, MIN 1, MAX 7, STEP 1: no rank to shard by.
  expect_refused("auto", std::nullopt, slurm(3, 3, 1, 7, 1), {"SLURM_ARRAY_TASK_COUNT", "expected 7", "got 3", "--array=0-2"});
  // an ID outside MIN..MAX, or between its steps
  expect_refused("auto", std::nullopt, slurm(9, 4, 1, 7, 2), {"SLURM_ARRAY_TASK_ID", "1-7:2", "got 9"});
  expect_refused("auto", std::nullopt, slurm(4, 4, 1, 7, 2), {"SLURM_ARRAY_TASK_ID", "1-7:2", "got 4"});
  expect_refused("auto", std::nullopt, slurm(1, 4, 1, 8, 2), {"SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP=2", "got 8"});
  expect_refused("auto", std::nullopt, slurm(1, 4, 5, 3, 1), {"SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_MIN=5", "got 3"});
  expect_refused("auto", std::nullopt, slurm(1, 4, 0, 3, 0), {"SLURM_ARRAY_TASK_STEP", "1 or more"});
  for (const char* bad : {"", "x", "-1", "1.5", "+2", "99999999999", " 1"}) {
    expect_refused("auto", std::nullopt, {{"SLURM_ARRAY_TASK_ID", bad}, {"SLURM_ARRAY_TASK_COUNT", "4"}},
                   {"SLURM_ARRAY_TASK_ID", "an integer from 0", std::string("'") + bad + "'"});
  }
  // a --shard-count that disagrees with the array
  expect_refused("auto", 3, slurm(1, 4, 0, 3, 1), {"--shard-count", "expected 4", "got 3"});
}

TEST(Shard, KubernetesIndexedJob) {
  const Shard s = resolve_shard("auto", 6, {{"JOB_COMPLETION_INDEX", "5"}});
  EXPECT_EQ(s.index, 5);
  EXPECT_EQ(s.count, 6);
  expect_refused("auto", std::nullopt, {{"JOB_COMPLETION_INDEX", "1"}}, {"--shard-count", "completions", "got none"});
  expect_refused("auto", 6, {{"JOB_COMPLETION_INDEX", "6"}}, {"JOB_COMPLETION_INDEX", "below --shard-count 6", "got 6"});
  expect_refused("auto", 0, {{"JOB_COMPLETION_INDEX", "0"}}, {"--shard-count", "from 1", "got 0"});
  expect_refused("auto", 4, {{"JOB_COMPLETION_INDEX", "two"}}, {"JOB_COMPLETION_INDEX", "'two'"});
}

TEST(Shard, SlurmAndKubernetesMustAgree) {
  Environment both = slurm(2, 4, 0, 3, 1);
  both["JOB_COMPLETION_INDEX"] = "2";
  const Shard s = resolve_shard("auto", 4, both);
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  both["JOB_COMPLETION_INDEX"] = "1";
  expect_refused("auto", 4, both, {"JOB_COMPLETION_INDEX", "expected shard 2/4", "got shard 1/4"});
  both["JOB_COMPLETION_INDEX"] = "2";
  expect_refused("auto", 5, both, {"expected shard 2/4", "got shard 2/5"});
}

// No scheduler variable at all: `auto` is not a silent unsharded run.
TEST(Shard, AutoWithoutASchedulerIsRefused) {
  expect_refused("auto", std::nullopt, {}, {"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "got neither"});
  expect_refused("auto", 4, {{"OTHER", "1"}}, {"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "got neither"});
}

}  // namespace
}  // namespace ropecheck::gate
