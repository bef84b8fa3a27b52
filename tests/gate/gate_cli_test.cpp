// End-to-end tests of the command lines the other gate tests leave out: `sweep`, `props` on a
// project kernel or a plugin (a violated identity included), `apply --format json` and its input
// errors, and the parser's own errors. Expectations come from the documented behaviour, the
// kernels' proven bounds (optimized/error_bounds.h) and independent computations, never from the
// commands' output.
#include <gtest/gtest.h>

#include <ropecheck/kernel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/random.h"
#include "gate/report.h"
#include "gate/report_read.h"
#include "gate_test_support.h"
#include "optimized/error_bounds.h"
#include "spec/schedule.h"
#include "spec/spec.h"

namespace ropecheck::gate {
namespace {

using namespace testing;

const std::string kBin = ROPECHECK_BIN;

bool available(const std::string& kernel) { return ropecheck_kernel_available(kernel.c_str()) == 1; }

// Bad input (README "Gate your implementation"): exit 2, exactly one line on stderr holding every
// one of `words`, nothing on stdout.
void expect_usage_error(const Ran& r, const std::vector<std::string>& words, const std::string& what) {
  EXPECT_EQ(r.code, 2) << what << "\n" << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("ropecheck: ", 0), 0u) << what << "\n" << r.err;
  for (const std::string& w : words) {
    EXPECT_NE(r.err.find(w), std::string::npos) << what << ": no '" << w << "' in " << r.err;
  }
  EXPECT_TRUE(r.out.empty()) << what << "\n" << r.out;
}

// The text after "key: " on the first stdout line that starts with it; "" when there is none.
std::string field(const std::string& out, const std::string& key) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ": ", 0) == 0) return line.substr(key.size() + 2);
  }
  return "";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ------------------------------------------------------------------------------------------------
// sweep

// The fixed positions sweep documents (sweep_command.cpp header, `--samples` help): 0..63,
// 2^k − 1, 2^k, 2^k + 1 and the maximum, those ≤ max.
std::set<std::int64_t> fixed_positions(std::int64_t max) {
  std::set<std::int64_t> p;
  for (std::int64_t i = 0; i <= std::min<std::int64_t>(63, max); ++i) p.insert(i);
  for (int k = 6; k <= 62; ++k) {
    for (std::int64_t v : {(std::int64_t{1} << k) - 1, std::int64_t{1} << k, (std::int64_t{1} << k) + 1}) {
      if (v <= max) p.insert(v);
    }
  }
  p.insert(max);
  return p;
}

// How many distinct positions `--max-position max --samples n` samples: every one when the range
// has at most n, else n or the fixed ones when they are more.
std::int64_t expected_samples(std::int64_t max, std::int64_t n) {
  if (max < n) return max + 1;
  return std::max<std::int64_t>(n, static_cast<std::int64_t>(fixed_positions(max).size()));
}

class SweepKernel : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(SweepKernel, PassesEveryPositionUpTo2To31WithinItsProvenBound) {
  const auto& [kernel, dtype] = GetParam();
  if (!available(kernel)) GTEST_SKIP() << kernel << " does not run on this machine (ropecheck_kernel_available)";
  TempDir dir;
  const std::string spec = "layout=half,head_dim=16,base=500000,dtype=" + dtype;
  const Ran r = run(kBin + " sweep --impl " + kernel + " --spec " + spec + " --samples 150 --seed 3 --threads 1", dir);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(field(r.out, "implementation"), "ropecheck kernel " + kernel + " (--impl " + kernel + ")");
  // --max-position defaults to 2^31 − 1 (README); head_dim 16 has 8 pairs
  EXPECT_EQ(field(r.out, "samples"), std::to_string(expected_samples(2147483647, 150)) + " positions in [0, 2147483647], 8 pairs each");
  // The kernels' bound holds for every |position| < 2^40 (optimized/error_bounds.h), so no sampled
  // position exceeds it: the horizon is the largest one.
  EXPECT_EQ(field(r.out, "accuracy horizon"), "2147483647 (every sampled position)");
  EXPECT_EQ(field(r.out, "result"), "pass");
  const double bound = kernels::on_the_fly_bound(parse_spec(spec).dtype, true);
  const double worst = std::strtod(field(r.out, "worst e").c_str(), nullptr);
  EXPECT_LE(worst, bound) << r.out;
  // exact rotations at positions >= 1 are irrational, outputs in the dtype are not: e > 0 somewhere
  EXPECT_GT(worst, 0) << r.out;
  // the default tolerance is that bound, printed to 9 significant digits
  EXPECT_NEAR(std::strtod(field(r.out, "tolerance").c_str(), nullptr), bound, 1e-8 * bound) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Kernels, SweepKernel,
                         ::testing::Combine(::testing::Values("scalar", "avx2", "avx512", "avx512bf16", "cuda"),
                                            ::testing::Values("f64", "f32", "bf16")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

TEST(Sweep, SamplesTheDocumentedNumberOfDistinctPositions) {
  TempDir dir;
  const std::string spec = "layout=interleaved,head_dim=4,base=10000,dtype=f32";
  const struct {
    std::int64_t max, samples;
  } cases[] = {
      {0, 256},                    // one position
      {10, 256},                   // the whole range, all fixed
      {199, 256},                  // the whole range, 70 fixed + 130 random (random draws alone would miss some)
      {300, 300},                  // all but one of the range
      {1000, 100},                 // 76 fixed + 24 random
      {1000, 10},                  // the fixed ones are more than --samples
      {9223372036854775807, 300},  // INT64_MAX: max + 1 overflows
  };
  for (const auto& c : cases) {
    const Ran r = run(kBin + " sweep --impl auto --spec " + spec + " --max-position " + std::to_string(c.max) + " --samples " +
                          std::to_string(c.samples) + " --tolerance e=1e300",  // judging is not the point here
                      dir);
    EXPECT_EQ(r.code, 0) << c.max << " " << c.samples << "\n" << r.out << r.err;
    EXPECT_EQ(field(r.out, "samples"),
              std::to_string(expected_samples(c.max, c.samples)) + " positions in [0, " + std::to_string(c.max) + "], 2 pairs each")
        << c.max << " " << c.samples;
  }
}

TEST(Sweep, SameSeedSameReportWhateverTheThreads) {
  // --seed fixes the positions and the inputs; --threads only splits the work
  TempDir dir;
  const std::string command = kBin + " sweep --impl scalar --spec layout=half,head_dim=8,base=10000,dtype=f32 --samples 120 --seed 9";
  const Ran one = run(command + " --threads 1", dir);
  const Ran again = run(command + " --threads 1", dir);
  const Ran two = run(command + " --threads 2", dir);
  ASSERT_EQ(one.code, 0) << one.out << one.err;
  EXPECT_EQ(one.out, again.out);
  EXPECT_EQ(one.out, two.out);
}

TEST(Sweep, ZeroToleranceFailsByPositionOne) {
  // At position 1 the exact rotation is irrational and an f32 output is not, so e > 0 = tolerance:
  // the horizon is 0 (position 0 is the identity, exact) or none, never the maximum.
  TempDir dir;
  const Ran r = run(kBin +
                        " sweep --impl auto --spec layout=half,head_dim=8,base=10000,dtype=f32 --max-position 1000 "
                        "--samples 80 --tolerance e=0",
                    dir);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(field(r.out, "result"), "fail");
  EXPECT_EQ(field(r.out, "tolerance"), "0 (--tolerance e=0)");
  const std::string horizon = field(r.out, "accuracy horizon");
  EXPECT_TRUE(horizon == "0" || horizon.rfind("none", 0) == 0) << horizon;
  EXPECT_GT(std::strtod(field(r.out, "worst e").c_str(), nullptr), 0);
}

TEST(Sweep, HorizonNoneWhenPositionZeroAlreadyFails) {
  // YaRN's attention factor g = 0.1·ln(4) + 1 is irrational: at position 0 the exact output g·x is
  // not an f32 value, so e > 0 = tolerance at the first sampled position.
  const std::string spec = "layout=half,head_dim=8,base=10000,scaling=yarn,factor=4,original_max_position=64,dtype=f32";
  ASSERT_NE(attention_factor<double>(parse_spec(spec)), 1.0);
  TempDir dir;
  const Ran r = run(kBin + " sweep --impl auto --spec " + spec + " --max-position 100 --samples 70 --tolerance e=0", dir);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(field(r.out, "accuracy horizon"), "none (e exceeds the tolerance at position 0)");
  EXPECT_EQ(field(r.out, "result"), "fail");
}

// --shard K/N makes every Nth call of the sweep (runner/sweep.h); `report merge` of the shards'
// reports is the unsharded sweep's report, byte for byte (gate/merge.h): counts, points, worst e,
// horizon, the worst cases ranked again and the diagnosis, whatever order the shards come in.
TEST(Sweep, ShardsMergeToTheUnshardedReportByteForByte) {
  TempDir dir;
  const struct {
    std::string arguments;
    int code;  // the unsharded sweep's exit status
  } sweeps[] = {
      // the recipe fails the exact model: failing points, worst cases of both lists, a diagnosis
      {"--impl reference-f32-recipe --model exact --spec layout=half,head_dim=16,base=10000,dtype=f32 --samples 200 "
       "--max-position 100000",
       1},
      {"--impl reference-f32-recipe --model exact --spec layout=half,head_dim=12,rotary_dim=8,base=10000,dtype=f32 --samples 500 "
       "--worst 3 --strict-zeros",
       1},
      // a passing kernel close to its bound (a diagnosis too: judge/diagnosis.h needs_diagnosis)
      {"--impl scalar --spec layout=interleaved,head_dim=64,base=500000,dtype=bf16 --samples 1000", 0},
      // --require-horizon beyond the sampled range: the verdict's reason is recomputed
      {"--impl scalar --spec layout=half,head_dim=8,base=10000,dtype=f16 --samples 300 --max-position 5000 "
       "--require-horizon 100000",
       0},
  };
  for (const auto& sweep : sweeps) {
    const std::string command = kBin + " sweep " + sweep.arguments + " --threads 1";
    ASSERT_EQ(run(command + " --json " + (dir / "whole.json"), dir).code, sweep.code) << sweep.arguments;
    for (int shards : {2, 3, 7}) {
      std::string paths;
      for (int k = shards - 1; k >= 0; --k) {  // the last shard first: the order does not matter
        const std::string path = dir / ("shard" + std::to_string(k) + ".json");
        const Ran r = run(command + " --shard " + std::to_string(k) + "/" + std::to_string(shards) + " --json " + path, dir);
        ASSERT_LE(r.code, 1) << sweep.arguments << " " << k << "/" << shards << "\n" << r.err;
        paths += " " + path;
      }
      const Ran merged = run(kBin + " report merge" + paths + " --out " + (dir / "merged.json"), dir);
      EXPECT_EQ(merged.code, sweep.code) << sweep.arguments << " in " << shards << "\n" << merged.out << merged.err;
      EXPECT_EQ(slurp(dir / "merged.json"), slurp(dir / "whole.json")) << sweep.arguments << " in " << shards;
      const auto whole = nlohmann::json::parse(slurp(dir / "whole.json"))["groups"][0];
      EXPECT_EQ(field(merged.out, "accuracy horizon"),
                whole["horizon"].is_null() ? std::string("none")
                                           : std::to_string(whole["horizon"].get<std::int64_t>()) +
                                                 (whole["horizon_complete"].get<bool>() ? " (every sampled position)" : ""));
    }
    // The unsharded report alone merges to itself.
    ASSERT_EQ(run(kBin + " report merge " + (dir / "whole.json") + " --out " + (dir / "self.json"), dir).code, sweep.code);
    EXPECT_EQ(slurp(dir / "self.json"), slurp(dir / "whole.json")) << sweep.arguments;
  }
}

// A crashing call (the segv plugin crashes on a call whose first position is 7): the merged report
// names it, as the unsharded one does, with its test id and the diagnosis's explanation.
TEST(Sweep, ShardsOfACrashingPluginMergeToTheUnshardedReport) {
  TempDir dir;
  // 460 samples: calls of 7 positions (runner/sweep.h sweep_calls), so the second call starts at 7.
  const std::string command =
      kBin + " sweep --plugin " + plugin("segv") + " --spec layout=half,head_dim=8,base=10000,dtype=f32 --samples 460 --threads 1";
  ASSERT_EQ(run(command + " --json " + (dir / "whole.json"), dir).code, 1);
  const auto whole = nlohmann::json::parse(slurp(dir / "whole.json"))["groups"][0];
  EXPECT_EQ(whole["failed_tests"], nlohmann::json::array({2}));
  for (int k = 0; k < 3; ++k)
    run(command + " --shard " + std::to_string(k) + "/3 --json " + (dir / ("s" + std::to_string(k) + ".json")), dir);
  const Ran merged = run(
      kBin + " report merge " + (dir / "s0.json") + " " + (dir / "s1.json") + " " + (dir / "s2.json") + " --out " + (dir / "m.json"), dir);
  EXPECT_EQ(merged.code, 1) << merged.err;
  EXPECT_EQ(slurp(dir / "m.json"), slurp(dir / "whole.json"));
}

// `report merge` refuses shards of different sweeps, a shard missing or given twice: one line
// naming the file and the field, exit 2, no --out written.
TEST(Sweep, MergeRefusesShardsThatAreNotOneSweep) {
  TempDir dir;
  const std::string spec = "layout=half,head_dim=8,base=10000,dtype=f32";
  auto sweep_of = [&](const std::string& impl, const std::string& spec_text, const std::string& samples, const std::string& extra) {
    return kBin + " sweep --impl " + impl + " --spec " + spec_text + " --samples " + samples + " --threads 1" + extra;
  };
  const std::string sweep = sweep_of("scalar", spec, "256", "");
  run(sweep + " --shard 0/2 --json " + (dir / "s0.json"), dir);
  run(sweep + " --shard 1/2 --json " + (dir / "s1.json"), dir);
  ASSERT_EQ(run(kBin + " report merge " + (dir / "s0.json") + " " + (dir / "s1.json") + " --out " + (dir / "ok.json"), dir).code, 0);
  const struct {
    std::string name, arguments;  // shard 1/2 of another sweep
    std::vector<std::string> words;
  } others[] = {
      {"spec", sweep_of("scalar", "layout=half,head_dim=8,base=500000,dtype=f32", "256", ""), {"groups[0].spec", "base=10000"}},
      {"seed", sweep_of("scalar", spec, "256", " --seed 2"), {"sweep.seed", "expected 1"}},
      {"model", sweep_of("scalar", spec, "256", " --model exact"), {"model", "\"f32-angle\""}},
      {"samples", sweep_of("scalar", spec, "300", ""), {"sweep.samples", "expected 256"}},
      {"max_position", sweep_of("scalar", spec, "256", " --max-position 100000"), {"sweep.max_position", "2147483647"}},
      {"implementation", sweep_of("reference", spec, "256", ""), {"implementation", "ropecheck kernel scalar"}},
      {"tolerance", sweep_of("scalar", spec, "256", " --tolerance e=2"), {"groups[0].tolerance"}},
      {"worst", sweep_of("scalar", spec, "256", " --worst 3"), {"sweep.worst_cases", "expected 10"}},
      {"options", sweep_of("scalar", spec, "256", " --strict-zeros"), {"options", "strict_zeros"}},
  };
  for (const auto& other : others) {
    const std::string path = dir / ("other_" + other.name + ".json");
    ASSERT_LE(run(other.arguments + " --shard 1/2 --json " + path, dir).code, 1) << other.name;
    std::vector<std::string> words = other.words;
    words.push_back("other_" + other.name + ".json");
    expect_usage_error(run(kBin + " report merge " + (dir / "s0.json") + " " + path + " --out " + (dir / "m.json"), dir), words,
                       other.name);
    EXPECT_FALSE(std::filesystem::exists(dir / "m.json")) << other.name;
  }
  // Another count of shards: 1/3 beside 0/2.
  run(sweep + " --shard 1/3 --json " + (dir / "third.json"), dir);
  expect_usage_error(run(kBin + " report merge " + (dir / "s0.json") + " " + (dir / "third.json") + " --out " + (dir / "m.json"), dir),
                     {"third.json", "sweep.shard.count", "expected 2"}, "shard count");
  // A shard missing, or given twice.
  expect_usage_error(run(kBin + " report merge " + (dir / "s0.json") + " --out " + (dir / "m.json"), dir),
                     {"sweep.shard", "expected every shard K/2", "no shard 1/2"}, "missing shard");
  expect_usage_error(
      run(kBin + " report merge " + (dir / "s0.json") + " " + (dir / "s0.json") + " " + (dir / "s1.json") + " --out " + (dir / "m.json"),
          dir),
      {"s0.json", "sweep.shard.index", "each shard once", "0/2"}, "repeated shard");
  // Another ropecheck version: written into a copy of shard 1.
  auto edited = nlohmann::ordered_json::parse(slurp(dir / "s1.json"));
  edited["tool"]["version"] = "0.0.1";
  spit(dir / "other_version.json", edited.dump(1));
  expect_usage_error(
      run(kBin + " report merge " + (dir / "s0.json") + " " + (dir / "other_version.json") + " --out " + (dir / "m.json"), dir),
      {"other_version.json", "tool", "0.0.1"}, "version");
  EXPECT_FALSE(std::filesystem::exists(dir / "m.json"));
}

// `--shard auto` in a Slurm array task's environment makes the same shard as `--shard K/N`; without
// a scheduler's variables it is refused (never a silent unsharded run).
TEST(Sweep, ShardAutoReadsTheSchedulersEnvironment) {
  TempDir dir;
  const std::string sweep = kBin + " sweep --impl scalar --spec layout=half,head_dim=8,base=10000,dtype=f32 --samples 256 --threads 1";
  const std::string clean =
      "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_MIN -u SLURM_ARRAY_TASK_MAX "
      "-u SLURM_ARRAY_TASK_STEP -u JOB_COMPLETION_INDEX ";
  ASSERT_EQ(run(sweep + " --shard 2/4 --json " + (dir / "explicit.json"), dir).code, 0);
  // sbatch --array=1-7:2: task 5 is the third of 1, 3, 5, 7
  const Ran slurm = run(clean +
                            "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=7 "
                            "SLURM_ARRAY_TASK_STEP=2 " +
                            sweep + " --shard auto --json " + (dir / "slurm.json"),
                        dir);
  ASSERT_EQ(slurm.code, 0) << slurm.err;
  EXPECT_EQ(field(slurm.out, "shard").rfind("2/4 (Slurm array task SLURM_ARRAY_TASK_ID=5 of 1-7:2)", 0), 0u) << slurm.out;
  EXPECT_EQ(slurp(dir / "slurm.json"), slurp(dir / "explicit.json"));
  const Ran kubernetes = run(clean + "JOB_COMPLETION_INDEX=2 " + sweep + " --shard auto --shard-count 4 --json " + (dir / "k8s.json"), dir);
  ASSERT_EQ(kubernetes.code, 0) << kubernetes.err;
  EXPECT_EQ(slurp(dir / "k8s.json"), slurp(dir / "explicit.json"));
  expect_usage_error(run(clean + sweep + " --shard auto", dir),
                     {"--shard auto", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "got neither"}, "no scheduler");
  expect_usage_error(run(clean + "SLURM_ARRAY_TASK_ID=3 " + sweep + " --shard auto", dir), {"SLURM_ARRAY_TASK_COUNT", "got none"},
                     "ID alone");
  expect_usage_error(run(clean + "JOB_COMPLETION_INDEX=2 " + sweep + " --shard auto", dir), {"--shard-count", "got none"},
                     "Indexed Job without its count");
  // fuzz takes it too
  expect_usage_error(run(clean + kBin + " fuzz --impl scalar --trials 4 --shard auto", dir), {"--shard auto", "got neither"}, "fuzz");
  const Ran fuzz =
      run(clean + "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 " + kBin + " fuzz --impl scalar --trials 4 --shard auto", dir);
  EXPECT_EQ(fuzz.code, 0) << fuzz.err;
  EXPECT_NE(fuzz.out.find("shard 1/2"), std::string::npos) << fuzz.out;
}

// A shard's report edited after the sweep is refused by `report merge`, naming the file and the
// field: another shard's index (its points and test ids are the calls c with c mod N = K of
// runner/sweep.h, so shard 2 relabelled 3 names calls of shard 2), a worst e that is not the
// largest e of its points, a verdict that contradicts its counts.
TEST(Sweep, MergeRefusesForgedShards) {
  TempDir dir;
  const std::string passing = kBin + " sweep --impl scalar --spec layout=half,head_dim=8,base=10000,dtype=f32 --samples 256 --threads 1";
  // the recipe under the exact model fails: failed tests and worst cases of its own calls
  const std::string failing = kBin +
                              " sweep --impl reference-f32-recipe --model exact --spec layout=half,head_dim=16,base=10000,dtype=f32 "
                              "--samples 200 --max-position 100000 --threads 1";
  for (int k = 0; k < 4; ++k) {
    ASSERT_EQ(run(passing + " --shard " + std::to_string(k) + "/4 --json " + (dir / ("p" + std::to_string(k) + ".json")), dir).code, 0);
    ASSERT_EQ(run(failing + " --shard " + std::to_string(k) + "/4 --json " + (dir / ("f" + std::to_string(k) + ".json")), dir).code, 1);
  }
  auto merge = [&](const std::vector<std::string>& names) {
    std::string paths;
    for (const std::string& name : names) paths += " " + (dir / name);
    return run(kBin + " report merge" + paths + " --out " + (dir / "m.json"), dir);
  };
  ASSERT_EQ(merge({"p0.json", "p1.json", "p2.json", "p3.json"}).code, 0);
  std::filesystem::remove(dir / "m.json");
  auto edit = [&](const std::string& from, const std::string& to, const std::function<void(nlohmann::ordered_json&)>& change) {
    auto report = nlohmann::ordered_json::parse(slurp(dir / from));
    change(report);
    spit(dir / to, report.dump(1));
  };
  // Shard 2 as shard 3, shard 3 never judged: passing calls only, its points name shard 2's calls.
  edit("p2.json", "p2as3.json", [](auto& r) { r["sweep"]["shard"]["index"] = 3; });
  expect_usage_error(merge({"p0.json", "p1.json", "p2.json", "p2as3.json"}), {"p2as3.json", "groups[0].points", "shard 3/4", "shard 2/4"},
                     "index edited, passing");
  edit("f2.json", "f2as3.json", [](auto& r) { r["sweep"]["shard"]["index"] = 3; });
  expect_usage_error(merge({"f0.json", "f1.json", "f2.json", "f2as3.json"}), {"f2as3.json", "shard 3/4"}, "index edited, failing");
  // A test id of another shard's call (call 0 is shard 0's).
  edit("f1.json", "f1_id.json", [](auto& r) { r["groups"][0]["failed_tests"] = nlohmann::ordered_json::array({1}); });
  expect_usage_error(merge({"f0.json", "f1_id.json", "f2.json", "f3.json"}),
                     {"f1_id.json", "groups[0].failed_tests[0]", "shard 1/4", "test 1"}, "test id of another shard");
  // A worst e of 1e300 in a passing shard: not the largest e of its points.
  edit("p1.json", "p1_e.json", [](auto& r) { r["groups"][0]["worst_e"] = 1e300; });
  expect_usage_error(merge({"p0.json", "p1_e.json", "p2.json", "p3.json"}), {"p1_e.json", "groups[0].worst_e", "largest e", "1e+300"},
                     "worst e edited");
  // A failing shard relabelled as passing, its counts left as they were.
  edit("f1.json", "f1_pass.json", [](auto& r) { r["groups"][0]["verdict"] = "pass"; });
  expect_usage_error(merge({"f0.json", "f1_pass.json", "f2.json", "f3.json"}), {"f1_pass.json", "groups[0].verdict", "\"fail\""},
                     "verdict edited");
  // ... and with its failed tests cleared too: its points and pair counts still fail.
  edit("f1.json", "f1_clean.json", [](auto& r) {
    r["groups"][0]["verdict"] = "pass";
    r["groups"][0]["tests_failed"] = 0;
    r["groups"][0]["failed_tests"] = nlohmann::ordered_json::array();
  });
  expect_usage_error(merge({"f0.json", "f1_clean.json", "f2.json", "f3.json"}), {"f1_clean.json", "groups[0].tests_failed"},
                     "failures cleared");
  // A listed case's input that is no hex float (reports write reference/rounding.h to_hex).
  edit("f1.json", "f1_input.json", [](auto& r) { r["groups"][0]["worst_cases"][0]["input"][0] = "1.5"; });
  expect_usage_error(merge({"f0.json", "f1_input.json", "f2.json", "f3.json"}),
                     {"f1_input.json", "groups[0].worst_cases[0].input[0]", "hex float"}, "input not hex");
  EXPECT_FALSE(std::filesystem::exists(dir / "m.json"));
}

// A JSON report read back (gate/report_read.h) and written again by to_json is the same bytes:
// failing groups and their cases, diagnoses, identities, notes and options.
TEST(ReportRead, AReportReadBackIsWrittenAgainByteForByte) {
  TempDir dir;
  const std::string golden = std::string(ROPECHECK_SOURCE_DIR) + "/golden/suites";
  const Ran r = run(kBin + " run --impl reference-f32-recipe --model exact --golden " + golden +
                        " --props --props-cases 5 --skip-flags Overflow --require-horizon 4096 --json " + (dir / "r.json"),
                    dir);
  ASSERT_EQ(r.code, 1) << r.err;
  const std::string text = slurp(dir / "r.json");
  const Report report = report_from_json("r.json", nlohmann::ordered_json::parse(text));
  // What the comparison covers: else it would pass on a report without it.
  EXPECT_TRUE(std::any_of(report.groups.begin(), report.groups.end(), [](const GroupResult& g) { return g.diagnosis.has_value(); }));
  EXPECT_TRUE(std::any_of(report.groups.begin(), report.groups.end(), [](const GroupResult& g) { return !g.worst.empty(); }));
  EXPECT_FALSE(report.properties.empty());
  EXPECT_EQ(to_json(report), text);
}

// More shards than calls would leave shards with nothing to judge: refused, naming the most.
TEST(Sweep, MoreShardsThanCallsAreRefused) {
  TempDir dir;
  // 256 samples: 64 calls of 4 positions (runner/sweep.h kSweepMinCalls)
  expect_usage_error(run(kBin + " sweep --impl scalar --spec layout=half,head_dim=8,base=10000,dtype=f32 --samples 256 --shard 3/65", dir),
                     {"--shard 3/65", "at most 64 shards"}, "65 shards");
}

// A plugin's own sweep: the test plugin (long double angles, float32 outputs) within the default
// bound at every sampled position up to 2^31 − 1.
TEST(Sweep, TakesAPlugin) {
  TempDir dir;
  const Ran r =
      run(kBin + " sweep --plugin " + plugin("good") + " --spec layout=interleaved,head_dim=8,base=10000,dtype=f32 --samples 100", dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(field(r.out, "accuracy horizon"), "2147483647 (every sampled position)");
}

TEST(Sweep, BadArgumentsAreOneLineUsageErrors) {
  TempDir dir;
  const std::string sweep = kBin + " sweep --spec layout=half,head_dim=8,base=10000,dtype=f32 ";
  expect_usage_error(run(sweep + "--max-position -1", dir), {"--max-position", ">= 0", "-1"}, "max-position");
  expect_usage_error(run(sweep + "--samples 0", dir), {"--samples", ">= 1"}, "samples");
  expect_usage_error(run(sweep + "--threads -1", dir), {"--threads", ">= 0"}, "threads");
  // a negative or NaN tolerance is not "the default bound"
  expect_usage_error(run(sweep + "--tolerance e=-1", dir), {"--tolerance", ">= 0"}, "negative tolerance");
  expect_usage_error(run(sweep + "--tolerance e=nan", dir), {"--tolerance", ">= 0"}, "NaN tolerance");
  // one --tolerance grammar for every command (judge/tolerance.h): a bare number is not it
  expect_usage_error(run(sweep + "--tolerance 3", dir), {"--tolerance", "e=N"}, "bare number");
  expect_usage_error(run(sweep + "--impl nosuch", dir), {"--impl", "'nosuch'", "scalar"}, "unknown kernel");
  for (const std::string kernel : {"avx2", "avx512", "avx512bf16", "cuda"}) {
    if (available(kernel)) continue;
    expect_usage_error(run(sweep + "--impl " + kernel, dir), {"--impl", kernel, "not available"}, kernel);
  }
  expect_usage_error(run(kBin + " sweep --spec layout=half,head_dim=8,base=10000,dtype=f8", dir), {"dtype", "f8"}, "bad spec");
  expect_usage_error(run(kBin + " sweep", dir), {"--spec", "required"}, "no spec");
  expect_usage_error(run(sweep + "--samples many", dir), {"--samples", "many"}, "not an integer");
  // the default tolerance is the kernels' bound, derived for positions below 2^40 only
  expect_usage_error(run(sweep + "--max-position 1099511627776", dir), {"--max-position", "2^40", "--tolerance"},
                     "beyond the bound's range");
}

// ------------------------------------------------------------------------------------------------
// props

// The identity rows of `props` output: name → (cases, verdict).
std::map<std::string, std::pair<int, std::string>> identity_rows(const std::string& out) {
  static const std::regex row(R"(^([a-z_]+) +([0-9]+)  .*  (holds|VIOLATED|GAVE UP) +.*$)");
  std::map<std::string, std::pair<int, std::string>> rows;
  for (const std::string& line : lines_of(out)) {
    std::smatch m;
    if (std::regex_match(line, m, row)) rows[m[1]] = {std::stoi(m[2]), m[3]};
  }
  return rows;
}

class PropsKernel : public ::testing::TestWithParam<std::string> {};

TEST_P(PropsKernel, ProjectKernelHoldsEveryIdentity) {
  // The kernels meet their proven bound (optimized/error_bounds.h), which is the claim the catalog
  // derives its tolerances from: every identity holds, each on the requested number of cases.
  const std::string kernel = GetParam();
  if (!available(kernel)) GTEST_SKIP() << kernel << " does not run on this machine (ropecheck_kernel_available)";
  TempDir dir;
  const Ran r = run(kBin + " props --impl " + kernel + " --cases 3 --seed 5", dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(field(r.out, "implementation").rfind("ropecheck kernel " + kernel + " ", 0), 0u) << r.out;
  EXPECT_EQ(field(r.out, "seed"), "5");
  const auto rows = identity_rows(r.out);
  EXPECT_GE(rows.size(), 10u) << r.out;  // the catalog (docs/design.md) has more than ten identities
  for (const auto& [name, row] : rows) {
    EXPECT_EQ(row.second, "holds") << name << "\n" << r.out;
    EXPECT_EQ(row.first, 3) << name;
  }
  EXPECT_EQ(r.out.find("replay:"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Kernels, PropsKernel, ::testing::Values("scalar", "avx2", "avx512", "avx512bf16", "cuda"),
                         [](const auto& info) { return info.param; });

TEST(Props, PluginHoldsHeadIndependence) {
  // The tiny plugin computes every head with the same code: identical heads give identical bits.
  TempDir dir;
  const Ran r = run(kBin + " props --plugin " + plugin("good") + " --only head_independence --cases 3 --seed 5", dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // `--impl` of a plugin defaults to auto (gate/README.md), which the tiny plugin resolves to "tiny"
  EXPECT_EQ(field(r.out, "implementation").rfind("plugin " + plugin("good") + ": tiny ", 0), 0u) << r.out;
  const auto rows = identity_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows.at("head_independence"), std::make_pair(3, std::string("holds")));
}

TEST(Props, IdentityWithoutSupportedSpecsIsSkippedNotFailed) {
  // The tiny plugin refuses multi-axis specs (test_plugin.c), so multi_axis_relative finds no case
  // to run: reported as GAVE UP with the reason, no replay line, and not a failure (as run --props
  // reports it skipped).
  TempDir dir;
  const Ran r = run(kBin + " props --plugin " + plugin("good") + " --only multi_axis_relative --cases 3 --seed 5", dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const auto rows = identity_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows.at("multi_axis_relative").second, "GAVE UP");
  EXPECT_NE(r.out.find("  skipped: unsupported spec"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("replay:"), std::string::npos) << r.out;
}

TEST(Props, ViolatedIdentityPrintsCounterexampleAndAReplayThatReproducesIt) {
  // The tiny plugin's angle p·θ is good to about 2^-63 relative (test_plugin.c): fine for f32
  // outputs, but in f64 an angle beyond ~2^14 rad is off by more than the 4 u the gate allows a
  // plugin (judge/tolerance.cpp), so R_mᵀR_n = R_{n−m} breaks on an f64 case with a large position.
  TempDir dir;
  const std::string command = kBin + " props --plugin " + plugin("good") + " --impl tiny --only relative_matrix --cases 20 --seed 5";
  const Ran r = run(command, dir);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto rows = identity_rows(r.out);
  ASSERT_EQ(rows.count("relative_matrix"), 1u) << r.out;
  EXPECT_EQ(rows.at("relative_matrix").second, "VIOLATED");
  const std::vector<std::string> lines = lines_of(r.out);
  const auto at = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("relative_matrix ", 0) == 0; });
  ASSERT_NE(at, lines.end());
  ASSERT_GE(lines.end() - at, 5) << r.out;
  // the failure: which quantity, and by how much it exceeds what is allowed
  EXPECT_NE(at[1].find("> allowed"), std::string::npos) << at[1];
  EXPECT_EQ(at[2], "  counterexample:");
  // its spec: an f64 one, for the reason above
  const Spec counter = parse_spec(at[3]);
  EXPECT_EQ(counter.dtype, Dtype::f64) << at[3];
  // the replay names the same plugin and implementation, seed and identity
  const std::string replay = field(r.out, "  replay");
  EXPECT_EQ(replay.rfind("ropecheck props --plugin " + plugin("good") + " --impl tiny ", 0), 0u) << replay;
  EXPECT_NE(replay.find(" --seed 5 "), std::string::npos) << replay;
  EXPECT_NE(replay.find(" --only relative_matrix"), std::string::npos) << replay;
  // ... and replays the same counterexample
  const Ran again = run(kBin + replay.substr(std::string("ropecheck").size()), dir);
  EXPECT_EQ(again.code, 1);
  const std::size_t table = r.out.find("identity ");
  ASSERT_NE(table, std::string::npos);
  EXPECT_EQ(again.out.substr(again.out.find("identity ")), r.out.substr(table));
}

TEST(Props, PluginThatRefusesEveryCallViolatesWithItsError) {
  // The "abi" plugin speaks ABI version 2: every call is refused, which is the identity's failure,
  // reported with the reason; the plugin's implementation defaults to auto, not "reference".
  TempDir dir;
  const Ran r = run(kBin + " props --plugin " + plugin("abi") + " --only group_law --cases 2 --seed 1 --no-shrink", dir);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::string implementation = field(r.out, "implementation");
  EXPECT_EQ(implementation.rfind("plugin " + plugin("abi") + ": auto ", 0), 0u) << implementation;
  EXPECT_NE(implementation.find("ABI version mismatch"), std::string::npos) << implementation;
  EXPECT_EQ(identity_rows(r.out).at("group_law").second, "VIOLATED") << r.out;
  EXPECT_NE(r.out.find("abi: ABI version mismatch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  counterexample:\n"), std::string::npos) << r.out;
  // without --impl the replay does not add one; --no-shrink is kept
  EXPECT_EQ(field(r.out, "  replay"),
            "ropecheck props --plugin " + plugin("abi") + " --precision 256 --model exact --cases 2 --seed 1 --only group_law --no-shrink");
}

TEST(Props, BadArgumentsAreOneLineUsageErrors) {
  TempDir dir;
  expect_usage_error(run(kBin + " props --model bogus", dir), {"--model", "exact", "f32-recipe", "'bogus'"}, "model");
  expect_usage_error(run(kBin + " props --impl nonesuch", dir), {"--impl", "'nonesuch'", "reference", "scalar"}, "impl");
  expect_usage_error(run(kBin + " props --impl scalar --cases 0", dir), {"--cases", ">= 1"}, "cases");
  expect_usage_error(run(kBin + " props --precision 32", dir), {"--precision", ">= 64"}, "precision");
  expect_usage_error(run(kBin + " props --plugin " + (dir / "absent.so"), dir), {"--plugin", "absent.so"}, "plugin");
  for (const std::string kernel : {"avx2", "avx512", "avx512bf16", "cuda"}) {
    if (available(kernel)) continue;
    expect_usage_error(run(kBin + " props --impl " + kernel, dir), {"--impl " + kernel, "not available on this machine"}, kernel);
  }
}

// ------------------------------------------------------------------------------------------------
// apply

TEST(Apply, JsonFormatHoldsTheSpecShapePositionsAndTheHexOutputs) {
  // README's example: pair (1, 0) at position 1 with θ_0 = base^0 = 1 rotates to (cos 1, sin 1).
  TempDir dir;
  const std::string args = " apply --spec layout=interleaved,head_dim=2,base=10000,dtype=f64 --positions 1 --input 1,0";
  const Ran json = run(kBin + args + " --format json", dir);
  const Ran hex = run(kBin + args + " --format hex", dir);
  ASSERT_EQ(json.code, 0) << json.err;
  ASSERT_EQ(hex.code, 0) << hex.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["spec"]["layout"], "interleaved");
  EXPECT_EQ(j["spec"]["head_dim"], 2);
  EXPECT_EQ(j["spec"]["base"], "10000");
  EXPECT_EQ(j["spec"]["dtype"], "f64");
  EXPECT_EQ(j["model"], "exact");
  EXPECT_EQ(j["shape"], nlohmann::json({1, 1, 2}));
  EXPECT_EQ(j["positions"], nlohmann::json({1}));
  ASSERT_EQ(j["output"].size(), 2u);
  // the same values as the hex format, line for line
  EXPECT_EQ(lines_of(hex.out), j["output"].get<std::vector<std::string>>());
  // correctly rounded: within half an ulp, ≤ 2^-53·|v|; cosl/sinl err by ~2^-64, far below
  const double c = std::strtod(j["output"][0].get<std::string>().c_str(), nullptr);
  const double s = std::strtod(j["output"][1].get<std::string>().c_str(), nullptr);
  EXPECT_LE(std::fabs(static_cast<long double>(c) - std::cos(1.0L)), 0x1p-53L * std::fabs(c)) << c;
  EXPECT_LE(std::fabs(static_cast<long double>(s) - std::sin(1.0L)), 0x1p-53L * std::fabs(s)) << s;
}

TEST(Apply, JsonShapeInfersHeadsAndKeepsTwoAxisPositions) {
  // 16 values for 2 tokens of head_dim 4: 2 heads (README: heads inferred from the input size)
  TempDir dir;
  const Ran r = run(kBin +
                        " apply --spec layout=half,head_dim=4,base=10000,dtype=f32,axes=2d --positions 3:5,4:5 "
                        "--input 1,2,3,4,5,6,7,8,1,2,3,4,5,6,7,8 --model f32-recipe --format json",
                    dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["shape"], nlohmann::json({2, 2, 4}));
  EXPECT_EQ(j["spec"]["axes"], "2d");
  EXPECT_EQ(j["model"], "f32-recipe");
  std::vector<std::int64_t> positions;                   // token by token, component by component, however nested
  const nlohmann::json flat = j["positions"].flatten();  // kept alive for the loop
  for (const auto& item : flat.items()) positions.push_back(item.value().get<std::int64_t>());
  EXPECT_EQ(positions, (std::vector<std::int64_t>{3, 5, 4, 5}));
  EXPECT_EQ(j["output"].size(), 16u);
}

TEST(Apply, PositionsNeedOneComponentPerAxis) {
  TempDir dir;
  const std::string input = " --input 1,0,0,0,0,0,0,0";
  expect_usage_error(run(kBin + " apply --spec layout=half,head_dim=8,base=10000,axes=2d --positions 1" + input, dir),
                     {"--positions", "expected 2", "'1'"}, "2d, one component");
  expect_usage_error(run(kBin + " apply --spec layout=half,head_dim=8,base=10000,axes=mrope,sections=1/1/2 --positions 1:2" + input, dir),
                     {"--positions", "expected 3", "'1:2'"}, "mrope, two components");
  // A 1-D spec reads START:STOP[:STEP] as a range (gate/positions.h): 1:2 is the one token at 1.
  expect_usage_error(run(kBin + " apply --spec layout=half,head_dim=8,base=10000 --positions 1:2:3:4" + input, dir),
                     {"--positions", "START:STOP[:STEP]", "'1:2:3:4'"}, "plain, four parts");
  const Ran range = run(kBin + " apply --spec layout=half,head_dim=8,base=10000 --positions 1:2" + input, dir);
  const Ran list = run(kBin + " apply --spec layout=half,head_dim=8,base=10000 --positions 1" + input, dir);
  EXPECT_EQ(range.code, 0) << range.err;
  EXPECT_EQ(range.out, list.out);
  expect_usage_error(run(kBin + " apply --spec layout=half,head_dim=8,base=10000 --positions 1,x" + input, dir),
                     {"--positions", "integer", "'x'"}, "not an integer");
}

TEST(Apply, JsonInputValuesMustBeNumbersOrStrings) {
  TempDir dir;
  const std::string apply = kBin + " apply --spec layout=interleaved,head_dim=2,base=10000,dtype=f64 --positions 1 --input ";
  const struct {
    const char* content;
    const char* shown;
  } cases[] = {{"[1, true]", "true"}, {"[1, null]", "null"}, {"{\"input\": [1, {\"x\": 1}]}", "{\"x\":1}"}};
  for (const auto& c : cases) {
    spit(dir / "input.json", c.content);
    expect_usage_error(run(apply + (dir / "input.json"), dir), {"input.json", "input value", "number", c.shown}, c.content);
  }
  // a string that is no float, holding a newline: still one line
  spit(dir / "input.json", "[1, \"a\\nb\"]");
  expect_usage_error(run(apply + (dir / "input.json"), dir), {"input.json", "input value"}, "newline in a string");
}

// `apply --out F.npy`: the outputs as a .npy of the spec's dtype, [tokens, heads, head_dim], each
// value the MPFR path's correctly rounded one (reference::apply with Path::mpfr, computed here).
// A small input (read whole) with special values, and one above 16 MiB, which the command reads a
// chunk at a time (gate/commands/apply_command.cpp kReadWholeBytes), checked at chunk boundaries.
std::vector<double> mpfr_apply(const Spec& spec, std::int64_t tokens, std::int64_t heads, std::vector<std::int64_t> positions,
                               std::vector<double> input) {
  reference::Options options;
  options.path = reference::Path::mpfr;
  for (double& v : input) {
    if (std::isfinite(v)) v = reference::round_to_format(v, input_dtype_of(spec));  // as apply --input is read
  }
  return reference::apply(spec, {tokens, heads, spec.head_dim}, positions, input, options);
}

bool same_values(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

TEST(Apply, OutWritesTheOutputsAsNpy) {
  TempDir dir;
  const struct {
    const char* spec;
    const char* descr;
  } cases[] = {{"layout=half,head_dim=8,rotary_dim=6,base=10000,dtype=f32", "<f4"},
               {"layout=interleaved,head_dim=8,base=500000,dtype=bf16", "<f4"},  // bfloat16 as float32
               {"layout=half,head_dim=8,base=10000,dtype=f16,direction=inverse", "<f2"},
               {"layout=half,head_dim=8,base=10000,dtype=f64", "<f8"}};
  std::vector<double> input;
  for (int i = 0; i < 3 * 2 * 8; ++i) input.push_back(std::ldexp(std::sin(i * 0.77), i % 7 - 3));
  input[1] = std::nan("");
  input[9] = -INFINITY;
  input[16] = input[17] = 0.0;
  input[18] = -0.0;
  spit(dir / "x.npy", tensorio::encode_npy({"", "F64", {3, 2, 8}, input, {}}));
  for (const auto& c : cases) {
    const Spec spec = parse_spec(c.spec);
    const std::string out = dir / (std::string(name(spec.dtype)) + ".npy");
    const Ran r = run(kBin + " apply --spec " + c.spec + " --positions 0,7,70000 --input " + (dir / "x.npy") + " --out " + out, dir);
    ASSERT_EQ(r.code, 0) << c.spec << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    const std::string bytes = slurp(out);
    EXPECT_NE(bytes.find(std::string("'descr': '") + c.descr + "'"), std::string::npos) << c.spec;
    const tensorio::Tensor t = tensorio::parse_npy_tensor(bytes, out);
    EXPECT_EQ(t.shape, (std::vector<std::int64_t>{3, 2, 8})) << c.spec;
    const std::vector<double> expected = mpfr_apply(spec, 3, 2, {0, 7, 70000}, input);
    ASSERT_EQ(t.values.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_TRUE(same_values(t.values[i], expected[i]))
          << c.spec << " value " << i << ": " << reference::to_hex(t.values[i]) << " expected " << reference::to_hex(expected[i]);
    }
  }
  // Above 16 MiB: 1030 tokens × 32 heads × 128 f32 (4.2 M values); chunks of 8 tokens.
  const Spec spec = parse_spec("layout=half,head_dim=128,base=500000,dtype=f32");
  const std::int64_t tokens = 1030, heads = 32, per_token = heads * 128;
  std::vector<double> big(static_cast<std::size_t>(tokens * per_token));
  SplitMix64 rng(77);
  for (double& v : big) v = static_cast<float>(2 * rng.unit() - 1);
  big[5 * per_token + 3] = std::nan("");
  spit(dir / "big.npy", tensorio::encode_npy({"", "F32", {tokens, heads, 128}, big, {}}));
  ASSERT_GT(std::filesystem::file_size(dir / "big.npy"), std::uintmax_t{1} << 24);
  const Ran r = run(kBin + " apply --spec layout=half,head_dim=128,base=500000,dtype=f32 --positions 0:" + std::to_string(3 * tokens) +
                        ":3 --input " + (dir / "big.npy") + " --out " + (dir / "big_out.npy"),
                    dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const tensorio::Tensor t = tensorio::parse_npy_tensor(slurp(dir / "big_out.npy"), "big_out.npy");
  ASSERT_EQ(t.values.size(), big.size());
  for (const std::int64_t token : {0, 5, 7, 8, 9, 511, 512, 1023, 1024, 1029}) {
    const auto first = big.begin() + token * per_token;
    const std::vector<double> expected = mpfr_apply(spec, 1, heads, {3 * token}, {first, first + per_token});
    for (std::int64_t i = 0; i < per_token; ++i) {
      ASSERT_TRUE(same_values(t.values[static_cast<std::size_t>(token * per_token + i)], expected[static_cast<std::size_t>(i)]))
          << "token " << token << " value " << i;
    }
  }
  // Bad --out: one line, exit 2, nothing written over.
  const std::string apply =
      kBin + " apply --spec layout=half,head_dim=8,base=10000,dtype=f32 --positions 0,7,70000 --input " + (dir / "x.npy");
  spit(dir / "kept.npy", "keep me");
  expect_usage_error(run(apply + " --out " + (dir / "kept.npy"), dir), {"kept.npy", "expected a new file", "--force"}, "existing");
  EXPECT_EQ(slurp(dir / "kept.npy"), "keep me");
  EXPECT_EQ(run(apply + " --out " + (dir / "kept.npy") + " --force", dir).code, 0);
  EXPECT_EQ(tensorio::parse_npy_tensor(slurp(dir / "kept.npy"), "kept.npy").values.size(), 48u);
  expect_usage_error(run(apply + " --out " + (dir / "x.npy") + " --force", dir), {"x.npy"}, "the input itself");
  expect_usage_error(run(apply + " --out " + (dir / "out.txt"), dir), {"--out", ".npy", "out.txt"}, "not .npy");
  expect_usage_error(run(apply + " --out " + (dir / "o.npy") + " --format hex", dir), {"--out", "--format"}, "--out with --format");
  EXPECT_FALSE(std::filesystem::exists(dir / "o.npy"));
}

// ------------------------------------------------------------------------------------------------
// the parser (gate/main.cpp)

TEST(Parser, ParseErrorsAreOneLineAndExit2) {
  TempDir dir;
  const std::string spec = " --spec layout=half,head_dim=8,base=10000,dtype=f32";
  expect_usage_error(run(kBin + " sweep" + spec + " --nonesuch", dir), {"--nonesuch"}, "unknown option");
  expect_usage_error(run(kBin + " apply" + spec + " --input 1,0,0,0,0,0,0,0", dir), {"--positions", "required"}, "missing option");
  expect_usage_error(run(kBin + " apply" + spec + " --positions 1 --input 1,0,0,0,0,0,0,0 --format xml", dir), {"--format", "xml"},
                     "value not in the set");
  expect_usage_error(run(kBin + " props --timeout 0", dir), {"--timeout"}, "out of range");
  expect_usage_error(run(kBin, dir), {"subcommand"}, "no command");
  // a misspelt command is named, with the commands there are
  expect_usage_error(run(kBin + " swep" + spec, dir), {"'swep'", "sweep", "apply", "props"}, "unknown command");
}

// Integers beyond what an option holds are refused by name, never saturated or wrapped (CLI11 kept
// strtoll's 2^63 - 1 and strtoull's 2^64 - 1 for -1).
TEST(Parser, IntegersOutOfRangeAreRefusedByName) {
  TempDir dir;
  const std::string sweep = kBin + " sweep --impl scalar --spec layout=half,head_dim=8,base=10000,dtype=f32 --samples 64 --tolerance e=1";
  expect_usage_error(
      run(sweep + " --max-position 99999999999999999999999", dir),
      {"--max-position", "expected an integer from -9223372036854775808 to 9223372036854775807", "'99999999999999999999999'"},
      "above int64");
  expect_usage_error(run(sweep + " --seed -1", dir), {"--seed", "from 0 to 18446744073709551615", "'-1'"}, "negative unsigned");
  expect_usage_error(run(sweep + " --seed 18446744073709551616", dir), {"--seed", "'18446744073709551616'"}, "above uint64");
  // the largest values are still taken
  EXPECT_EQ(run(sweep + " --seed 18446744073709551615", dir).code, 0);
}

// One spec where a command judges one: two are refused by name, and the help does not call --spec
// repeatable; fuzz takes several. --shard-count without --shard says --shard is missing.
TEST(Parser, SpecCountsAndShardCountMessagesSayWhatIsMissing) {
  TempDir dir;
  const std::string spec = " --spec layout=half,head_dim=2,base=10000,dtype=f32";
  const std::pair<std::string, std::string> commands[] = {{"explain", " --positions 0 --input 1,0 --candidate c.npy"},
                                                          {"check", " --positions 0 --input 1,0 --candidate c.npy"},
                                                          {"sweep", ""},
                                                          {"apply", " --positions 0 --input 1,0"}};
  for (const auto& [command, rest] : commands) {
    expect_usage_error(run(kBin + " " + command + spec + spec + rest, dir), {"--spec", "expected one spec", "got 2"},
                       command + " with two --spec");
    const Ran help = run(kBin + " " + command + " --help", dir);
    EXPECT_EQ(help.out.find("repeatable"), std::string::npos) << command << ": " << help.out;
  }
  const Ran fuzz =
      run(kBin + " fuzz --impl reference --trials 2" + spec + " --spec layout=interleaved,head_dim=4,base=10000,dtype=f32", dir);
  EXPECT_EQ(fuzz.code, 0) << fuzz.err;
  const Ran no_shard = run(kBin + " sweep --impl scalar" + spec + " --samples 64 --shard-count 4", dir);
  expect_usage_error(no_shard, {"--shard-count", "--shard auto", "without --shard"}, "shard count alone");
  EXPECT_EQ(no_shard.err.find("0/1"), std::string::npos) << no_shard.err;
}

// A config's integer above 2^63 - 1 is refused as written, not read as -1.
TEST(Parser, HfConfigIntegersAboveInt64AreNamedAsWritten) {
  TempDir dir;
  spit(dir / "config.json",
       R"({"model_type": "llama", "hidden_size": 128, "num_attention_heads": 2, "rope_theta": 500000, "torch_dtype": "float32",
           "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1,
           "high_freq_factor": 4, "original_max_position_embeddings": 18446744073709551615}})");
  const Ran r = run(kBin + " spec --hf-config " + (dir / "config.json"), dir);
  expect_usage_error(r, {"config.json", "original_max_position_embeddings", "18446744073709551615"}, "2^64 - 1");
  EXPECT_EQ(r.err.find("'-1'"), std::string::npos) << r.err;
}

TEST(Parser, HelpIsNotAnError) {
  TempDir dir;
  const Ran r = run(kBin + " sweep --help", dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("--max-position"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

}  // namespace
}  // namespace ropecheck::gate
