// Tests of `ropecheck fuzz` (fuzz/search/, gate/commands/fuzz_command.cpp): it finds a breach of a
// deliberately wrong implementation within a few trials and prints a replay command that reproduces
// the same worst case; it reports special-value and pass-through violations as their own classes;
// it is deterministic; shards partition the trials and their merged reports equal the unsharded one.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <ropecheck/kernel.h>

#include "fuzz/search/generators.h"
#include "fuzz/search/search.h"
#include "runner/registry.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/spec.h"

namespace ropecheck::fuzz {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// A small f32 spec keeps each trial cheap (8 pairs).
const char* const kSpec = "layout=interleaved,head_dim=16,base=10000,dtype=f32";

struct Captured {
  int status = -1;
  std::string out;
};

// Runs a shell command line, capturing stdout (stderr joins it).
Captured shell(const std::string& command) {
  Captured c;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return c;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) c.out.append(buffer, n);
  const int raw = ::pclose(pipe);
  c.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return c;
}

std::string binary() { return ROPECHECK_BINARY; }

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

using runner::ApplyResult;

std::unique_ptr<runner::Implementation> make_implementation(const std::string& name) { return runner::make_implementation({name, ""}, {}); }

judge::Tolerance tolerance_e(double e) { return judge::Tolerance{judge::Tolerance::Kind::e, e, 0, "test"}; }

FuzzOptions options_for(const char* spec, std::int64_t trials, std::uint64_t seed = 7) {
  FuzzOptions options;
  options.specs = {parse_spec(spec)};
  options.trials = trials;
  options.seed = seed;
  return options;
}

// The float32 recipe's angle error is ≈ p·θ_j·2^-24 rad (docs/rope.md §5), i.e. e ≈ p·θ_j in u = 2^-24
// units: far above the gate's default tolerance 4 for p·θ_0 = p ≥ 4, which the position generators reach at
// once (2^k, 2^31 − 1, log-uniform). The search must find it in its first trials.
TEST(Fuzz, FindsTheFloat32RecipeBreachAndShrinksIt) {
  const auto candidate = make_implementation("reference-f32-recipe");
  const FuzzReport report = run_fuzz(*candidate, options_for(kSpec, 3));
  ASSERT_FALSE(report.worst.empty());
  EXPECT_GT(report.worst[0].outcome.e, 1000.0);  // p·θ_0 at p ≈ 2^31 is ≈ 2^31 u; 1000 is far below
  // The recipe's wrong angle also flips the IEEE signs of zero outputs (special_value findings);
  // the tolerance breach is the one this test is about.
  const auto found = std::find_if(report.violations.begin(), report.violations.end(),
                                  [](const Finding& f) { return f.outcome.violation == Violation::tolerance; });
  ASSERT_NE(found, report.violations.end());
  const Finding& breach = *found;
  // Shrunk: zeros elsewhere; and shrinking keeps it a breach of the same class.
  EXPECT_EQ(breach.fuzz_case.background, 0u);
  const Spec spec = parse_spec(kSpec);
  EXPECT_EQ(evaluate(*candidate, spec, candidate->tolerance(spec), {breach.fuzz_case})[0].violation, Violation::tolerance);
  // Minimal: moving the position halfway to 0 is no longer guaranteed to breach, but the shrinker
  // tried p/2, p − 1 and fewer set bits; at least the result is no larger than any of the trials'.
  EXPECT_LE(breach.fuzz_case.position[0], report.worst[0].fuzz_case.position[0] * 2 + 1);
}

TEST(Fuzz, CorrectlyRoundedReferencePassesWithinOne) {
  const auto candidate = make_implementation("reference");
  const FuzzReport report = run_fuzz(*candidate, options_for(kSpec, 3));
  EXPECT_TRUE(report.violations.empty()) << report.violations[0].outcome.message;
  ASSERT_FALSE(report.worst.empty());
  EXPECT_LE(report.worst[0].outcome.e, 1.0);  // correct rounding: e ≤ 1 (judge/pair_rule.h)
}

TEST(Fuzz, ProjectKernelMeetsItsBound) {
  const auto candidate = make_implementation("auto");
  FuzzOptions options = options_for("layout=half,head_dim=32,base=500000,dtype=bf16", 3);
  const FuzzReport report = run_fuzz(*candidate, options);
  EXPECT_TRUE(report.violations.empty()) << report.violations[0].outcome.message;
  EXPECT_EQ(report.trials_unsupported, 0);
}

// The reference with its result edited by `edit` (given the spec and the batch's positions): the
// one test candidate behind every deliberate defect below. It claims e <= 1; an exception from the
// edit is that call's error status, as FunctionImplementation reports it.
class Edited final : public runner::Implementation {
 public:
  using Edit = std::function<void(const Spec&, std::span<const std::int64_t> positions, ApplyResult&)>;
  explicit Edited(Edit edit) : runner::Implementation(runner::Claims{judge::Model::exact, tolerance_e(1)}), edit_(std::move(edit)) {}
  std::string name() const override { return "edited"; }
  std::string selector() const override { return "--impl edited"; }
  ApplyResult run(const Spec& spec, reference::Shape shape, std::span<const std::int64_t> positions,
                  std::span<const double> input) const override {
    ApplyResult r;
    r.output = reference::apply(spec, shape, positions, input);
    try {
      edit_(spec, positions, r);
    } catch (const std::exception& e) {
      return {ApplyResult::Status::kernel_error, std::string("threw: ") + e.what(), {}};
    }
    return r;
  }

 private:
  Edit edit_;
};

// The reference with one special-value defect, to check the violation classes.
enum class Defect { nan_to_zero, passthrough_bit, overflow_saturates };
Edited defective(Defect defect) {
  return Edited([defect](const Spec& spec, std::span<const std::int64_t>, ApplyResult& r) {
    for (std::size_t i = 0; i < r.output.size(); ++i) {
      const bool rotary = static_cast<int>(i % static_cast<std::size_t>(spec.head_dim)) < spec.rotary_dim;
      double& v = r.output[i];
      if (defect == Defect::nan_to_zero && std::isnan(v)) v = 0;
      if (defect == Defect::passthrough_bit && !rotary && v != 0) v = -v;
      if (defect == Defect::overflow_saturates && std::isinf(v)) v = std::copysign(reference::max_finite(spec.dtype), v);
    }
  });
}

TEST(Fuzz, ReportsSpecialValueDisagreementsAsTheirOwnClass) {
  const Edited candidate = defective(Defect::nan_to_zero);
  const FuzzReport report = run_fuzz(candidate, options_for("layout=half,head_dim=16,base=10000,dtype=f16", 4));
  EXPECT_GT(report.violation_counts[static_cast<int>(Violation::special_value)], 0);
  EXPECT_EQ(report.violation_counts[static_cast<int>(Violation::tolerance)], 0);
  ASSERT_FALSE(report.violations.empty());
  EXPECT_EQ(report.violations[0].outcome.violation, Violation::special_value);
}

// Saturating every infinity also saturates those of infinite inputs, where the IEEE policy gives
// ±Inf: special-value violations. (Saturated overflow of finite inputs is judged by the tolerance:
// OverflowPairsJudgeTheFiniteComponentByTheTolerance.)
TEST(Fuzz, SaturatedInfinitiesOfInfiniteInputsAreSpecialValues) {
  const Edited candidate = defective(Defect::overflow_saturates);
  const FuzzReport report = run_fuzz(candidate, options_for("layout=half,head_dim=16,base=10000,dtype=f16", 4));
  EXPECT_GT(report.violation_counts[static_cast<int>(Violation::special_value)], 0);
}

TEST(Fuzz, ReportsPassThroughChangesAsTheirOwnClass) {
  const Edited candidate = defective(Defect::passthrough_bit);
  const FuzzReport report = run_fuzz(candidate, options_for("layout=half,head_dim=16,rotary_dim=8,base=10000,dtype=f32", 2));
  ASSERT_FALSE(report.violations.empty());
  EXPECT_EQ(report.violations[0].outcome.violation, Violation::passthrough);
}

TEST(Fuzz, SameSeedSameReportOtherSeedOtherReport) {
  const auto candidate = make_implementation("reference-f32-recipe");
  const std::string first = to_json(run_fuzz(*candidate, options_for(kSpec, 2, 11))).dump();
  const std::string second = to_json(run_fuzz(*candidate, options_for(kSpec, 2, 11))).dump();
  const std::string other = to_json(run_fuzz(*candidate, options_for(kSpec, 2, 12))).dump();
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other);
}

TEST(Fuzz, ShardsPartitionTheTrialsAndMergeToTheUnshardedReport) {
  const auto candidate = make_implementation("reference-f32-recipe");
  const FuzzOptions whole_options = options_for(kSpec, 5);
  const ordered_json whole = to_json(run_fuzz(*candidate, whole_options));
  std::vector<std::pair<std::string, ordered_json>> parts;
  std::int64_t trials = 0;
  for (int k = 0; k < 3; ++k) {
    FuzzOptions o = whole_options;
    o.shard_index = k;
    o.shard_count = 3;
    const FuzzReport part = run_fuzz(*candidate, o);
    for (const Finding& f : part.worst) EXPECT_EQ(f.trial % 3, k);  // shard k runs trials t ≡ k (mod 3)
    trials += part.trials_run;
    parts.emplace_back("shard" + std::to_string(k), to_json(part));
  }
  EXPECT_EQ(trials, 5);
  const ordered_json merged = merge_reports(parts);
  for (const char* field : {"trials", "cases", "worst", "violations", "violation_counts", "verdict"}) {
    EXPECT_EQ(merged.at(field), whole.at(field)) << field;
  }
  EXPECT_EQ(merged.at("shards").size(), 3u);
}

TEST(Fuzz, MergeRefusesReportsOfDifferentSearches) {
  const auto candidate = make_implementation("reference-f32-recipe");
  const ordered_json a = to_json(run_fuzz(*candidate, options_for(kSpec, 1, 1)));
  const ordered_json b = to_json(run_fuzz(*candidate, options_for(kSpec, 1, 2)));
  EXPECT_THROW(merge_reports({{"a.json", a}, {"b.json", b}}), std::invalid_argument);
  EXPECT_THROW(merge_reports({{"a.json", a}, {"a-again.json", a}}), std::invalid_argument);  // shard 0/1 twice
  EXPECT_THROW(merge_reports({{"x.json", ordered_json{{"schema", "other/1"}}}}), std::invalid_argument);
}

TEST(Fuzz, CaseTextRoundTrips) {
  const Spec spec = parse_spec("layout=half,head_dim=128,base=1000000,dtype=bf16,axes=mrope,sections=16/24/24");
  Rng rng(3);
  for (int i = 0; i < 200; ++i) {
    const FuzzCase c = edge_case(spec, rng);
    const FuzzCase back = parse_case(case_text(c), spec);
    EXPECT_EQ(case_text(back), case_text(c));  // text, so that NaN inputs compare equal
  }
  EXPECT_THROW(parse_case("position=1;pair=99;x=0x1p+0;y=0x0p+0;background=0", spec), std::invalid_argument);
}

// The generators reach every class the issue lists (docs/rope.md §5).
TEST(Fuzz, EdgeGeneratorsReachEveryClass) {
  const Spec spec = parse_spec("layout=half,head_dim=64,base=10000,dtype=f16");
  const double max = reference::max_finite(Dtype::f16);
  Rng rng(5);
  bool subnormal = false, zero = false, negative_zero = false, nan = false, inf = false, near_overflow = false,
       far_apart = false, top_position = false, power_of_two = false;
  for (int i = 0; i < 4000; ++i) {
    const FuzzCase c = edge_case(spec, rng);
    for (double v : {c.x, c.y}) {
      subnormal |= v != 0 && std::fabs(v) < 0x1p-14;
      zero |= v == 0 && !std::signbit(v);
      negative_zero |= v == 0 && std::signbit(v);
      nan |= std::isnan(v);
      inf |= std::isinf(v);
      near_overflow |= std::isfinite(v) && std::fabs(v) >= max / 2;
    }
    far_apart |= std::isfinite(c.x) && std::isfinite(c.y) && c.x != 0 && c.y != 0 &&
                 std::fabs(std::log2(std::fabs(c.x)) - std::log2(std::fabs(c.y))) >= 11;
    top_position |= c.position[0] == kMaxPosition;
    power_of_two |= c.position[0] > 1 && (c.position[0] & (c.position[0] - 1)) == 0;
  }
  EXPECT_TRUE(subnormal);
  EXPECT_TRUE(zero);
  EXPECT_TRUE(negative_zero);
  EXPECT_TRUE(nan);
  EXPECT_TRUE(inf);
  EXPECT_TRUE(near_overflow);
  EXPECT_TRUE(far_apart);
  EXPECT_TRUE(top_position);
  EXPECT_TRUE(power_of_two);
}

// The reference, except on batches holding a case at position 7: there it misbehaves in one of
// the ways a plugin can (a status, too few outputs, an exception), or refuses every batch.
enum class Fault { error_status, short_output, throws, unsupported };
Edited picky(Fault fault) {
  return Edited([fault](const Spec&, std::span<const std::int64_t> positions, ApplyResult& r) {
    if (fault == Fault::unsupported) {
      r.status = ApplyResult::Status::unsupported;
      r.output.clear();
      return;
    }
    if (std::find(positions.begin(), positions.end(), 7) == positions.end()) return;
    switch (fault) {
      case Fault::error_status:
        r.status = ApplyResult::Status::kernel_error;
        r.message = "refused position 7";
        r.output.clear();
        break;
      case Fault::short_output: r.output.pop_back(); break;
      case Fault::throws: throw std::runtime_error("position 7");
      case Fault::unsupported: break;
    }
  });
}

FuzzCase case_at(std::int64_t position) {
  FuzzCase c;
  c.position = {position};
  c.pair = 1;
  c.x = 0.75;
  c.y = -0.5;
  return c;
}

// A failed batch is split and re-run case by case, so the failure lands on the one case that
// causes it, with the candidate's own words; the other cases of the batch are judged normally.
TEST(Fuzz, FailedBatchesAreAttributedToTheirCase) {
  const Spec spec = parse_spec(kSpec);
  const std::vector<FuzzCase> cases = {case_at(1), case_at(7), case_at(9)};
  const std::pair<Fault, std::string> faults[] = {
      {Fault::error_status, "status: refused position 7"},
      {Fault::short_output, "expected 16 outputs, got 15"},  // head_dim 16, one value short
      {Fault::throws, "status: threw: position 7"},
  };
  for (const auto& [fault, message] : faults) {
    const std::vector<Outcome> outcomes = evaluate(picky(fault), spec, tolerance_e(1), cases);
    ASSERT_EQ(outcomes.size(), 3u);
    EXPECT_EQ(outcomes[1].violation, Violation::status) << message;
    EXPECT_EQ(outcomes[1].message, message);
    for (int i : {0, 2}) {
      EXPECT_EQ(outcomes[i].violation, Violation::none) << message << ": case " << i;
      EXPECT_LE(outcomes[i].e, 1.0);  // the reference, correctly rounded: e ≤ 1
    }
  }
}

// A pair whose exact rotation overflows in one component only: at position 1, pair 0 (θ_0 = 1
// rad), x = −y = max_f32 gives a = max·(cos 1 + sin 1) ≈ 1.38·max → +Inf and b = max·(sin 1 − cos 1)
// ≈ 0.30·max, finite. Both are judged by the tolerance (judge/README.md "Overflow at the
// threshold"): correct output passes, a finite component 64 ulps off is a tolerance breach, and so
// is the largest finite value in place of the infinity (0.38·max away from the exact value); an
// infinity of the wrong sign is a special-value violation.
TEST(Fuzz, OverflowPairsJudgeTheFiniteComponentByTheTolerance) {
  const Spec spec = parse_spec(kSpec);
  FuzzCase c = case_at(1);
  c.pair = 0;
  c.x = reference::max_finite(Dtype::f32);
  c.y = -c.x;
  std::vector<double> seen;
  const Outcome correct = evaluate(Edited([&seen](const Spec&, auto, ApplyResult& r) { seen = r.output; }), spec, tolerance_e(1), {c})[0];
  ASSERT_EQ(seen.size(), 16u);
  ASSERT_TRUE(std::isinf(seen[0]) && seen[0] > 0) << seen[0];  // the premise: a overflows, b does not
  ASSERT_TRUE(std::isfinite(seen[1])) << seen[1];
  EXPECT_EQ(correct.violation, Violation::none) << correct.message;

  const Outcome partner_off = evaluate(Edited([](const Spec&, auto, ApplyResult& r) { r.output[1] += 64 * std::ldexp(std::fabs(r.output[1]), -23); }),
                                       spec, tolerance_e(1), {c})[0];
  EXPECT_EQ(partner_off.violation, Violation::tolerance) << partner_off.message;
  EXPECT_EQ(partner_off.worst_pair, 0);

  const Outcome saturated = evaluate(Edited([](const Spec&, auto, ApplyResult& r) { r.output[0] = reference::max_finite(Dtype::f32); }),
                                     spec, tolerance_e(1), {c})[0];
  EXPECT_EQ(saturated.violation, Violation::tolerance) << saturated.message;

  const Outcome wrong_sign = evaluate(Edited([](const Spec&, auto, ApplyResult& r) { r.output[0] = -r.output[0]; }), spec,
                                      tolerance_e(1), {c})[0];
  EXPECT_EQ(wrong_sign.violation, Violation::special_value) << wrong_sign.message;
}

// A candidate that refuses a spec is not failed: its trials are counted as unsupported.
TEST(Fuzz, UnsupportedTrialsAreCountedNotFailed) {
  const FuzzReport report = run_fuzz(picky(Fault::unsupported), options_for(kSpec, 3));
  EXPECT_EQ(report.trials_run, 3);
  EXPECT_EQ(report.trials_unsupported, 3);
  EXPECT_TRUE(report.violations.empty());
  EXPECT_TRUE(report.worst.empty());
  // ... and a search that judged nothing fails, as every gate report does (one rule): it was a pass.
  const ordered_json j = to_json(report);
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_NE(to_text(j).find("nothing was judged"), std::string::npos) << to_text(j);
  EXPECT_EQ(verdict_status(j), 1);
}

// --seconds alone: no trial budget, the clock stops the search and the report says so.
TEST(Fuzz, SecondsBudgetStopsAnUnboundedSearch) {
  FuzzOptions options;
  options.specs = {parse_spec(kSpec)};
  options.seconds = 0.2;
  const FuzzReport report = run_fuzz(*make_implementation("reference"), options);
  EXPECT_TRUE(report.stopped_by_time);
  EXPECT_GE(report.trials_run, 1);
}

// The built-in edge list keeps the promise of its comment (search.h): every dtype, both layouts
// and directions, every scaling type, partial rotary, 2-D RoPE, M-RoPE and interleaved M-RoPE, bases 2 and 1e9.
TEST(Fuzz, DefaultSpecsCoverTheEdges) {
  const std::vector<Spec> specs = default_specs();
  std::set<Dtype> dtypes;
  std::set<Layout> layouts;
  std::set<Direction> directions;
  std::set<ScalingType> scalings;
  std::set<AxesKind> axes;
  bool partial = false, base_two = false, base_huge = false, head_512 = false;
  for (const Spec& s : specs) {
    dtypes.insert(s.dtype);
    layouts.insert(s.layout);
    directions.insert(s.direction);
    scalings.insert(s.scaling.type);
    axes.insert(s.axes.kind);
    partial = partial || s.rotary_dim < s.head_dim;
    base_two = base_two || s.base == "2";
    base_huge = base_huge || s.base == "1000000000";
    head_512 = head_512 || s.head_dim == 512;
  }
  EXPECT_EQ(dtypes.size(), 4u);
  EXPECT_EQ(layouts.size(), 2u);
  EXPECT_EQ(directions.size(), 2u);
  EXPECT_EQ(scalings.size(), 8u);  // none linear ntk dynamic yarn yarn-ggml llama3 longrope (README)
  EXPECT_EQ(axes.size(), 4u);      // one position, 2-D, M-RoPE, interleaved M-RoPE
  EXPECT_TRUE(partial);
  EXPECT_TRUE(base_two);
  EXPECT_TRUE(base_huge);
  EXPECT_TRUE(head_512);
}

// The project's kernels (through the C ABI) meet their proven bound on every default spec, f64
// and f32 included (ProjectKernelMeetsItsBound covers bf16): one trial per spec.
TEST(Fuzz, ProjectKernelMeetsItsBoundOnEveryDefaultSpec) {
  const auto candidate = make_implementation("auto");
  FuzzOptions options;
  options.trials = static_cast<std::int64_t>(default_specs().size());
  const FuzzReport report = run_fuzz(*candidate, options);
  EXPECT_EQ(report.trials_run, *options.trials);
  EXPECT_EQ(report.trials_unsupported, 0);
  EXPECT_TRUE(report.violations.empty()) << report.violations[0].outcome.message;
}

// Through the command line: the wrong plugin (float32 angles, run in a child process) breaches;
// the worst case's replay command reproduces the same e, bit for bit in its printed digits; the
// same seed writes the same JSON.
TEST(FuzzCommand, WrongPluginBreachesAndReplayReproducesTheWorstCase) {
  const fs::path dir = fs::temp_directory_path() / ("ropecheck-fuzz-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string plugin = ROPECHECK_TEST_PLUGIN;
  const std::string base = binary() + " fuzz --plugin " + plugin + " --spec '" + kSpec + "' --trials 3 --seed 5 --model exact";
  const Captured run1 = shell(base + " --json " + (dir / "a.json").string());
  EXPECT_EQ(run1.status, 1) << run1.out;
  EXPECT_NE(run1.out.find("[tolerance]"), std::string::npos) << run1.out;
  EXPECT_NE(run1.out.find("claim: model exact"), std::string::npos) << run1.out;
  // Under the default claim, f32-angle, the same float32 angles are within their bound: the bound
  // grows with the angle, and the worst case's tolerance is the one at its pair's angle.
  const Captured lenient = shell(binary() + " fuzz --plugin " + plugin + " --spec '" + kSpec + "' --trials 3 --seed 5");
  EXPECT_NE(lenient.out.find("claim: model f32-angle"), std::string::npos) << lenient.out;
  EXPECT_EQ(lenient.out.find("[tolerance]"), std::string::npos) << lenient.out;
  EXPECT_EQ(lenient.out.find("(tolerance 4)"), std::string::npos) << lenient.out;
  const Captured run2 = shell(base + " --json " + (dir / "b.json").string());
  EXPECT_EQ(run1.out, run2.out);
  EXPECT_EQ(read_file(dir / "a.json"), read_file(dir / "b.json"));

  const ordered_json report = ordered_json::parse(read_file(dir / "a.json"));
  ASSERT_FALSE(report.at("worst").empty());
  const ordered_json& worst = report.at("worst")[0];
  std::string replay = worst.at("replay").get<std::string>();
  ASSERT_EQ(replay.rfind("ropecheck ", 0), 0u) << replay;
  replay = binary() + replay.substr(std::string("ropecheck").size());
  const Captured again = shell(replay);
  EXPECT_EQ(again.status, 1) << again.out;  // the worst case is itself a breach
  char expected_e[64];
  std::snprintf(expected_e, sizeof expected_e, "e = %.17g ", worst.at("e").get<double>());
  EXPECT_NE(again.out.find(expected_e), std::string::npos) << again.out << "\nexpected " << expected_e;
  EXPECT_NE(again.out.find(worst.at("case").get<std::string>()), std::string::npos) << again.out;
  fs::remove_all(dir);
}

// --json naming the plugin itself is refused before the search: the library's bytes survive.
TEST(FuzzCommand, ReportNeverReplacesThePlugin) {
  const fs::path dir = fs::temp_directory_path() / ("ropecheck-fuzz-plugin-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path plugin = dir / "libcopy.so";
  fs::copy_file(ROPECHECK_TEST_PLUGIN, plugin);
  const std::string before = read_file(plugin);
  const Captured r = shell(binary() + " fuzz --plugin " + plugin.string() + " --spec '" + kSpec + "' --trials 1 --json " +
                           plugin.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("not an input"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(plugin), before);
  fs::remove_all(dir);
}

// --replay --json writes the one case's evaluation; a replay on a spec the implementation refuses
// is a usage error (exit 2), not a pass. The refused spec: a linear factor of 2^-17 makes
// θ'_0 = 2^17, above the kernels' proven range (plan.h kMaxProvenFrequency = 2^16).
TEST(FuzzCommand, ReplayWritesItsJsonAndRefusesUnsupportedSpecs) {
  const fs::path dir = fs::temp_directory_path() / ("ropecheck-fuzz-replay-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string replay = " --replay 'position=3;pair=1;x=0x1.8p-1;y=-0x1p-1;background=0'";
  const Captured ok = shell(binary() + " fuzz --impl reference --spec '" + kSpec + "'" + replay + " --json " +
                            (dir / "replay.json").string());
  EXPECT_EQ(ok.status, 0) << ok.out;  // the correctly rounded reference: e ≤ 1 = its tolerance
  const ordered_json j = ordered_json::parse(read_file(dir / "replay.json"));
  EXPECT_EQ(j.at("case"), "position=3;pair=1;x=0x1.8p-1;y=-0x1p-1;background=0");
  EXPECT_EQ(j.at("violation"), "none");
  EXPECT_LE(j.at("e").get<double>(), 1.0);
  EXPECT_EQ(parse_spec(j.at("spec").get<std::string>()).head_dim, 16);

  const std::string outside = "layout=half,head_dim=8,rotary_dim=4,base=10000,scaling=linear,factor=0.00000762939453125,dtype=f32";
  const Captured refused = shell(binary() + " fuzz --impl scalar --spec '" + outside + "'" + replay);
  EXPECT_EQ(refused.status, 2) << refused.out;
  EXPECT_NE(refused.out.find("unsupported"), std::string::npos) << refused.out;
  fs::remove_all(dir);
}

TEST(FuzzCommand, ShardReportsMergeOnTheCommandLine) {
  const fs::path dir = fs::temp_directory_path() / ("ropecheck-merge-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string base = binary() + " fuzz --impl reference-f32-recipe --spec '" + kSpec + "' --trials 4 --seed 9";
  for (int k = 0; k < 2; ++k) {
    shell(base + " --shard " + std::to_string(k) + "/2 --json " + (dir / ("s" + std::to_string(k) + ".json")).string());
  }
  shell(base + " --json " + (dir / "whole.json").string());
  const Captured merge = shell(binary() + " report merge " + (dir / "s0.json").string() + " " +
                               (dir / "s1.json").string() + " --out " + (dir / "merged.json").string());
  EXPECT_EQ(merge.status, 1) << merge.out;  // the merged verdict: the recipe breaches
  const ordered_json merged = ordered_json::parse(read_file(dir / "merged.json"));
  const ordered_json whole = ordered_json::parse(read_file(dir / "whole.json"));
  EXPECT_EQ(merged.at("worst"), whole.at("worst"));
  EXPECT_EQ(merged.at("cases"), whole.at("cases"));
  fs::remove_all(dir);
}

// One trial's size is capped (fuzz/README.md "Budgets": at most 2^18 values, one token of head_dim
// each): at head_dim 65536 a trial is 4 start cases (2^18 / 65536 = 4), not the full
// 16 + 24·8 = 208, so that `--seconds` is not overrun by a whole trial.
TEST(Fuzz, OneTrialAtTheLargestHeadDimIsCapped) {
  const FuzzReport report = run_fuzz(*make_implementation("reference"),
                                     options_for("layout=half,head_dim=65536,base=10000,dtype=f32", 1));
  EXPECT_EQ(report.trials_run, 1);
  EXPECT_EQ(report.cases * 65536, std::int64_t{1} << 18);
}

// `--seconds 2` at head_dim 65536 ends within a generous multiple of its budget: the budget plus
// one capped trial (2^18 values) and the start-up. A bound on behaviour, not a speed target: the
// limit below is many times the capped trial's cost, so a loaded machine still meets it.
TEST(FuzzCommand, SecondsBudgetHoldsAtTheLargestHeadDim) {
  const auto start = std::chrono::steady_clock::now();
  const Captured run = shell(binary() + " fuzz --impl reference --spec layout=half,head_dim=65536,base=10000,dtype=f32 --seconds 2");
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(run.status, 0) << run.out;
  EXPECT_LT(elapsed, 30.0) << run.out;
}

// A failing search says why, as every summary does: the off-by-one plugin's violating spec is swept
// and its explanation printed before the verdict.
TEST(FuzzCommand, AFailingSearchNamesItsExplanation) {
  const Captured r = shell(binary() + " fuzz --plugin " + std::string(ROPECHECK_OFFSET_PLUGIN) + " --spec '" + kSpec +
                           "' --trials 2 --seed 3");
  EXPECT_EQ(r.status, 1) << r.out;
  const std::size_t why = r.out.find("explanation (");
  ASSERT_NE(why, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("positions offset by +1", why), std::string::npos) << r.out;
  EXPECT_LT(why, r.out.rfind("verdict: fail")) << r.out;
}

// The explanation travels in the JSON report, so that `report merge` of a sharded failing search
// says it too, once per spec (both shards meet the same violating spec).
TEST(FuzzCommand, MergedShardsOfAFailingSearchNameTheExplanationOnce) {
  const fs::path dir = fs::temp_directory_path() / ("ropecheck-merge-why-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string base =
      binary() + " fuzz --plugin " + std::string(ROPECHECK_OFFSET_PLUGIN) + " --spec '" + kSpec + "' --trials 4 --seed 3";
  for (int k = 0; k < 2; ++k) {
    shell(base + " --shard " + std::to_string(k) + "/2 --json " + (dir / ("s" + std::to_string(k) + ".json")).string());
    const ordered_json shard = ordered_json::parse(read_file(dir / ("s" + std::to_string(k) + ".json")));
    ASSERT_TRUE(shard.contains("explanations")) << shard.dump();
  }
  const Captured merge = shell(binary() + " report merge " + (dir / "s0.json").string() + " " + (dir / "s1.json").string() +
                               " --out " + (dir / "merged.json").string());
  EXPECT_EQ(merge.status, 1) << merge.out;
  const std::size_t why = merge.out.find("explanation (");
  ASSERT_NE(why, std::string::npos) << merge.out;
  EXPECT_NE(merge.out.find("positions offset by +1", why), std::string::npos) << merge.out;
  EXPECT_EQ(merge.out.find("explanation (", why + 1), std::string::npos) << merge.out;
  EXPECT_LT(why, merge.out.rfind("verdict: fail")) << merge.out;
  EXPECT_EQ(ordered_json::parse(read_file(dir / "merged.json")).at("explanations").size(), 1u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ropecheck::fuzz
