// One rule (issue "One judge", judge/README.md): the same hand-made outputs — a zero of the wrong
// sign, +Inf where the exact value is within the tolerance of the overflow threshold, +Inf where it
// is far from it, a changed pass-through dim — judged through every path that judges: `check` (a
// candidate file), `run` (a plugin making the same edits: tests/gate/plugins/test_plugin.c variant
// 6), `fuzz --replay` (the same plugin) and the GoogleTest matcher (MatchesGolden). Every path must
// give every case the same class, by default and under --strict-zeros; the expected classes are
// those judge/README.md decides, worked out from IEEE 754 facts.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <ropecheck/gtest.h>
#include <ropecheck/reference.h>

#include "golden/golden.h"
#include "reference/rope.h"
#include "reference/rounding.h"

namespace ropecheck::judge {
namespace {

namespace fs = std::filesystem;

const char* const kSpec = "layout=interleaved,head_dim=4,rotary_dim=2,base=10000,dtype=f32";

struct OneCase {
  const char* name;
  double x, y;              // the rotated pair's input; the pass-through dims are 0 (as fuzz's background 0)
  const char* by_default;   // the class every path must give
  const char* strict_zeros; // ... under --strict-zeros
};

// At position 0 the rotation is the identity: the exact outputs are the inputs.
const OneCase kCases[] = {
    // (1, 0) → (1, +0): the candidate gives −0. Equal by default; the wrong IEEE sign when strict.
    {"zero-sign", 1, 0, "pass", "signed_zero"},
    // (FLT_MAX, 0) → FLT_MAX exactly, given as +Inf: values from FLT_MAX + 2^103 round to +Inf, and
    // e ≤ 4 allows 4·u·ρ = 4·2^-24·FLT_MAX ≈ 2^106 of error: within the tolerance (a near-overflow pair).
    {"inf-at-threshold", FLT_MAX, 0, "pass", "pass"},
    // (1000, 0) → 1000, given as +Inf: no value within e ≤ 4 of 1000 rounds to +Inf.
    {"inf-far-from-threshold", 1000, 0, "special_value", "special_value"},
    // (0.5, 0.25) → unchanged, and pass-through dim 2 changed from 0 to 1.
    {"passthrough", 0.5, 0.25, "passthrough", "passthrough"},
};

// The edit test_plugin.c variant 6 makes, on one head [x, y, p0, p1] of outputs.
void edit(std::vector<double>& out, double x, double y) {
  if (x == 1 && y == 0) out[1] = -out[1];
  if (x == FLT_MAX || x == 1000) out[0] = std::numeric_limits<double>::infinity();
  if (x == 0.5) out[2] += 1;
}

struct Ran {
  int code = -1;
  std::string out;
};

Ran run(const std::string& command) {
  Ran r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
  const int raw = ::pclose(pipe);
  r.code = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

class OneRule : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ropecheck-one-rule-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One golden file holding the case's one test, and a candidate JSON with the edited outputs.
  std::string golden_file(const OneCase& c) {
    golden::GoldenFile file;
    file.suite = std::string("one-rule-") + c.name;
    file.description = "one hand-made case";
    file.number_of_tests = 1;
    golden::Group group;
    group.spec = parse_spec(kSpec);
    golden::RopeTest test;
    test.id = 1;
    test.comment = c.name;
    test.positions = {0};
    test.tokens = 1;
    test.heads = 1;
    test.head_dim = 4;
    test.input = {c.x, c.y, 0, 0};
    test.expected = reference::apply(group.spec, {1, 1, 4}, test.positions, test.input);
    group.rope_tests.push_back(test);
    file.groups.push_back(group);
    const fs::path path = dir_ / (file.suite + ".json");
    std::ofstream(path) << golden::write_golden(file);
    std::vector<double> out = test.expected;
    edit(out, c.x, c.y);
    nlohmann::json candidate;
    nlohmann::json values = nlohmann::json::array();
    for (double v : out) values.push_back(reference::to_hex(v));
    candidate[file.suite + "/1/output"] = values;
    std::ofstream(dir_ / (file.suite + ".candidate.json")) << candidate.dump();
    return path.string();
  }

  // The class a JSON report gives its one test.
  std::string report_class(const fs::path& report) {
    std::ifstream in(report);
    const nlohmann::json j = nlohmann::json::parse(in);
    const nlohmann::json& g = j.at("groups").at(0);
    if (g.at("verdict") == "pass") return "pass";
    return g.at("worst_cases").at(0).at("kind").get<std::string>();
  }

  fs::path dir_;
};

TEST_F(OneRule, EveryPathGivesEveryCaseTheSameClass) {
  const std::string bin = ROPECHECK_BIN;
  const std::string plugin = PLUGIN_DIR "/libgate_plugin_edited.so";
  for (const OneCase& c : kCases) {
    const std::string golden = golden_file(c);
    const std::string candidate = (dir_ / (std::string("one-rule-") + c.name + ".candidate.json")).string();
    for (bool strict : {false, true}) {
      const std::string expected = strict ? c.strict_zeros : c.by_default;
      const std::string flag = strict ? " --strict-zeros" : "";
      SCOPED_TRACE(std::string(c.name) + (strict ? " --strict-zeros" : ""));

      const fs::path check_report = dir_ / "check.json";
      const Ran check = run(bin + " check --golden " + golden + " --candidate " + candidate + " --json " + check_report.string() + flag);
      ASSERT_EQ(check.code, expected == "pass" ? 0 : 1) << check.out;
      EXPECT_EQ(report_class(check_report), expected) << "check\n" << check.out;

      const fs::path run_report = dir_ / "run.json";
      const Ran ran = run(bin + " run --plugin " + plugin + " --golden " + golden + " --json " + run_report.string() + flag);
      ASSERT_EQ(ran.code, expected == "pass" ? 0 : 1) << ran.out;
      EXPECT_EQ(report_class(run_report), expected) << "run\n" << ran.out;

      const std::string replay = "position=0;pair=0;x=" + reference::to_hex(c.x) + ";y=" + reference::to_hex(c.y) + ";background=0";
      const Ran fuzz = run(bin + " fuzz --plugin " + plugin + " --spec " + kSpec + " --replay '" + replay + "'" + flag);
      ASSERT_EQ(fuzz.code, expected == "pass" ? 0 : 1) << fuzz.out;
      const std::string fuzz_class = expected == "pass" ? "none" : expected;
      EXPECT_NE(fuzz.out.find(", " + fuzz_class), std::string::npos) << "fuzz --replay\n" << fuzz.out;

      GoldenOptions options;
      options.strict_zeros = strict;
      const ::testing::AssertionResult matched = MatchesGolden(
          golden,
          [&](const RopeSpec& spec, TensorShape shape, std::span<const std::int64_t> positions, std::span<const double> input) {
            std::vector<double> out = apply_exact(spec, shape, positions, input);
            edit(out, input[0], input[1]);
            return out;
          },
          options);
      if (expected == "pass") {
        EXPECT_TRUE(matched) << "MatchesGolden\n" << matched.message();
      } else {
        EXPECT_FALSE(matched);
        EXPECT_NE(std::string(matched.message()).find("[" + expected + "]"), std::string::npos) << "MatchesGolden\n"
                                                                                              << matched.message();
      }
    }
  }
}

}  // namespace
}  // namespace ropecheck::judge
