// End-to-end tests of `ropecheck run`: plugins built beside this test (tests/gate/plugins/) that
// are correct, segfault, abort, hang, speak another ABI version or write out of bounds are each
// reported as that plugin's failure with the test id, and the run completes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "gate_test_support.h"

namespace ropecheck::gate {
namespace {

using namespace testing;

const std::string kBin = ROPECHECK_BIN;

// The identity testcases of a JUnit report, by name.
std::map<std::string, nlohmann::json> identity_cases(const nlohmann::json& junit) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& c : junit["testcases"]) {
    if (c["classname"] == "ropecheck.identities") out[c["name"].get<std::string>()] = c;
  }
  return out;
}

// The HTML report's identity lines ("identity NAME: STATUS (N cases) ..."): name -> [span class, text].
std::map<std::string, std::pair<std::string, std::string>> identity_lines(const nlohmann::json& page) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const auto& p : page["paragraphs"]) {
    const std::string text = p["text"];
    if (text.rfind("identity ", 0) != 0 || p["spans"].size() != 1) continue;
    const std::string name = text.substr(9, text.find(':') - 9);
    out[name] = {p["spans"][0][0].get<std::string>(), p["spans"][0][1].get<std::string>()};
  }
  return out;
}

struct RunFixture : ::testing::Test {
  TempDir dir;
  std::string golden_path = dir / "small.json";
  void SetUp() override { spit(golden_path, golden::write_golden(small_golden())); }

  Ran run_plugin(const std::string& variant, const std::string& extra = "") {
    return run(kBin + " run --plugin " + plugin(variant) + " --golden " + golden_path + " --timeout 1 --json " +
                   (dir / "report.json") + " " + extra,
               dir);
  }
  nlohmann::json report() { return nlohmann::json::parse(slurp(dir / "report.json")); }
  // The kinds of the failures reported for each failing test.
  std::map<std::int64_t, std::string> failure_kinds() {
    std::map<std::int64_t, std::string> kinds;
    const nlohmann::json j = report();  // kept alive for the loop (a temporary's member would dangle)
    for (const auto& c : j["groups"][0]["worst_cases"]) kinds[c["test_id"].get<std::int64_t>()] = c["kind"].get<std::string>();
    return kinds;
  }
};

TEST_F(RunFixture, CorrectPluginPasses) {
  const Ran r = run_plugin("good");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const auto j = report();
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_NE(j["implementation"].get<std::string>().find("tiny"), std::string::npos) << j["implementation"];
  // Long double angles (error < 2^-31 rad) and one rounding to float32: e ≤ 1 + 2^-31/2^-24·√2 < 1.02.
  EXPECT_LT(j["groups"][0]["worst_e"].get<double>(), 1.02);
}

TEST_F(RunFixture, CrashesAreTheCandidatesFailureWithTheTestId) {
  // Test 3 is the one at position 7, where the misbehaving plugins misbehave; the others must still
  // run in a fresh child and pass.
  const struct {
    const char* variant;
    const char* kind;
    const char* text;
  } cases[] = {{"segv", "crash", "SIGSEGV"}, {"abort", "crash", "SIGABRT"}, {"hang", "timeout", "no answer within 1 s"},
               {"guard", "guard", "outside its output"}};
  for (const auto& c : cases) {
    const auto start = std::chrono::steady_clock::now();
    const Ran r = run_plugin(c.variant);
    EXPECT_EQ(r.code, 1) << c.variant << "\n" << r.out << r.err;
    EXPECT_EQ(failed_tests(report()), (std::set<std::int64_t>{3})) << c.variant << "\n" << r.out;
    EXPECT_EQ(failure_kinds()[3], c.kind) << c.variant;
    EXPECT_NE(r.out.find(c.text), std::string::npos) << c.variant << "\n" << r.out;
    EXPECT_EQ(report()["groups"][0]["tests"], 7) << c.variant;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20)) << c.variant;
  }
}

TEST_F(RunFixture, AbiMismatchFailsEveryTest) {
  const Ran r = run_plugin("abi");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(failed_tests(report()).size(), 7u);
  ASSERT_FALSE(failure_kinds().empty());
  EXPECT_EQ(failure_kinds().begin()->second, "abi");
  EXPECT_NE(r.out.find("ABI version mismatch"), std::string::npos) << r.out;
}

TEST_F(RunFixture, UnsupportedSpecsAreSkippedNotFailed) {
  // The tiny plugin computes f32/f64 only: a bf16 group is reported skipped, and a run where
  // nothing was judged does not pass.
  spit(golden_path, golden::write_golden(small_golden("layout=interleaved,head_dim=8,rotary_dim=6,base=10000,dtype=bf16")));
  const Ran r = run_plugin("good");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(report()["groups"][0]["verdict"], "skip");
  EXPECT_EQ(report()["groups"][0]["tests_skipped"], 7);
}

TEST_F(RunFixture, UsageErrors) {
  Ran r = run(kBin + " run --plugin " + (dir / "absent.so") + " --golden " + golden_path, dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--plugin"), std::string::npos) << r.err;
  r = run(kBin + " run --impl nosuchkernel --golden " + golden_path, dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--impl"), std::string::npos) << r.err;
  // A file that is not a shared library is that candidate's failure (load), not the gate's crash.
  r = run(kBin + " run --plugin " + golden_path + " --golden " + golden_path + " --json " + (dir / "report.json"), dir);
  EXPECT_EQ(r.code, 1) << r.err;
  ASSERT_FALSE(failure_kinds().empty());
  EXPECT_EQ(failure_kinds().begin()->second, "load");
}

TEST_F(RunFixture, ReferenceAndProjectKernelPassTheSmallSuite) {
  for (const std::string impl : {"reference", "scalar"}) {
    const Ran r = run(kBin + " run --impl " + impl + " --golden " + golden_path + " --json " + (dir / "report.json"), dir);
    EXPECT_EQ(r.code, 0) << impl << "\n" << r.out << r.err;
    EXPECT_EQ(report()["groups"][0]["tests"], 7);
  }
}

TEST_F(RunFixture, PropsRunsTheIdentityCatalog) {
  // The exact reference (correctly rounded, e ≤ 1 < 4) satisfies every identity; each appears in
  // the JSON report and as a JUnit testcase. The tiny plugin has no multi-axis support: that
  // identity is skipped, not failed.
  const Ran r = run(kBin + " run --impl reference --props --props-cases 3 --golden " + golden_path + " --json " +
                        (dir / "report.json") + " --junit " + (dir / "junit.xml"),
                    dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json j = report();
  EXPECT_GE(j["properties"].size(), 10u);
  for (const auto& p : j["properties"]) EXPECT_TRUE(p["holds"].get<bool>()) << p.dump();
  EXPECT_NE(slurp(dir / "junit.xml").find("classname=\"ropecheck.identities\" name=\"relative_matrix\""), std::string::npos);
  const Ran tiny = run_plugin("good", "--verbose --props --props-cases 3");
  const nlohmann::json t = report();
  for (const auto& p : t["properties"]) {
    if (p["name"] == "multi_axis_relative") {
      EXPECT_TRUE(p["gave_up"].get<bool>()) << p.dump();
    }
  }
  EXPECT_NE(tiny.out.find("multi_axis_relative: skipped"), std::string::npos) << tiny.out;
}

// A crash has no pair to show: its worst case is one HTML row with the message spanning the value
// columns, and the JUnit failure names the test.
TEST_F(RunFixture, CrashIsAMessageRowInTheReports) {
  const Ran r = run_plugin("segv", "--html " + (dir / "r.html") + " --junit " + (dir / "junit.xml"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const nlohmann::json page = read_xml_report(dir, dir / "r.html");
  const std::vector<nlohmann::json> rows = message_rows(page);
  ASSERT_EQ(rows.size(), 1u) << page["rows"];
  EXPECT_EQ(rows[0][0]["text"], "3");  // the test at position 7, where the plugin crashes
  EXPECT_EQ(rows[0][1]["text"], "crash");
  EXPECT_EQ(rows[0][2]["text"], "7");
  EXPECT_NE(rows[0][6]["text"].get<std::string>().find("SIGSEGV"), std::string::npos) << rows[0];
  const nlohmann::json junit = read_xml_report(dir, dir / "junit.xml");
  ASSERT_EQ(junit["testcases"].size(), 1u);
  ASSERT_FALSE(junit["testcases"][0]["failure"].is_null());
  EXPECT_NE(junit["testcases"][0]["failure"]["message"].get<std::string>().find("1 failing test(s): 3;"), std::string::npos)
      << junit["testcases"][0];
  EXPECT_NE(junit["testcases"][0]["failure"]["text"].get<std::string>().find("SIGSEGV"), std::string::npos) << junit["testcases"][0];
}

// Identities in the JUnit and HTML reports: the tiny plugin has no multi-axis support, so that
// identity is skipped (<skipped>, "skipped"); a plugin of another ABI version answers no call, so
// every identity is violated (<failure type="identity">, "fails"), and the run fails.
TEST_F(RunFixture, PropsReportsSkippedAndViolatedIdentities) {
  const std::string reports = "--props --props-cases 2 --junit " + (dir / "junit.xml") + " --html " + (dir / "r.html");
  Ran r = run_plugin("good", reports);
  nlohmann::json junit = read_xml_report(dir, dir / "junit.xml");
  nlohmann::json page = read_xml_report(dir, dir / "r.html");
  auto cases = identity_cases(junit);
  auto lines = identity_lines(page);
  const std::size_t identities = report()["properties"].size();
  EXPECT_GE(identities, 10u);
  EXPECT_EQ(cases.size(), identities);
  EXPECT_EQ(lines.size(), identities);
  ASSERT_TRUE(cases.count("multi_axis_relative"));
  EXPECT_FALSE(cases["multi_axis_relative"]["skipped"].is_null()) << cases["multi_axis_relative"];
  EXPECT_TRUE(cases["multi_axis_relative"]["failure"].is_null()) << cases["multi_axis_relative"];
  EXPECT_EQ(lines["multi_axis_relative"], (std::pair<std::string, std::string>{"skip", "skipped"}));
  // The plugin copies dims >= rotary_dim with memcpy, bit-exact: passthrough holds.
  EXPECT_EQ(lines["passthrough"], (std::pair<std::string, std::string>{"pass", "holds"}));
  EXPECT_TRUE(cases["passthrough"]["skipped"].is_null() && cases["passthrough"]["failure"].is_null()) << cases["passthrough"];

  r = run_plugin("abi", reports);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  junit = read_xml_report(dir, dir / "junit.xml");
  page = read_xml_report(dir, dir / "r.html");
  cases = identity_cases(junit);
  lines = identity_lines(page);
  EXPECT_EQ(cases.size(), identities);
  EXPECT_EQ(lines.size(), identities);
  for (const auto& [name, c] : cases) {
    ASSERT_FALSE(c["failure"].is_null()) << c;
    EXPECT_EQ(c["failure"]["type"], "identity");
    EXPECT_NE(c["failure"]["message"].get<std::string>().find("ABI version mismatch"), std::string::npos) << c;
    EXPECT_EQ(lines[name], (std::pair<std::string, std::string>{"fail", "fails"})) << name;
  }
  // The golden group fails too (every call refused): one failure per testcase.
  EXPECT_EQ(junit["root"]["failures"], std::to_string(identities + 1));
}

// A failing identity prints the command that replays it (gate/check.cpp replay_command: the
// implementation, the claim and the child limits as given, --props, the cases, the seed,
// --property), and that command runs the identity alone to the same failure; RapidCheck's own
// lines ("Using configuration", the RC_PARAMS reproduce line) show in neither. The tiny plugin's
// long double angle is good to about 2^-63 relative: within the exact claim's 4 u for f32, not for
// f64 beyond ~2^14 rad, so relative_matrix breaks under --model exact on an f64 case (as
// gate_cli_test's Props.ViolatedIdentityPrintsCounterexampleAndAReplayThatReproducesIt).
TEST_F(RunFixture, FailingIdentityPrintsAReplayThatReproducesIt) {
  const Ran r = run_plugin(
      "good", "--impl tiny --model exact --props --props-cases 20 --seed 5 --junit " + (dir / "junit.xml") + " --html " + (dir / "r.html"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::string expected = "ropecheck run --plugin " + plugin("good") +
                               " --impl tiny --model exact --timeout 1 --props --props-cases 20 --seed 5 --property relative_matrix";
  const std::string fail_line = "FAIL identity relative_matrix ";
  const std::size_t at = r.out.find(fail_line);
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::size_t next = r.out.find('\n', at) + 1;
  EXPECT_EQ(r.out.substr(next, r.out.find('\n', next) - next), "  replay: " + expected) << r.out;
  for (const char* rapidcheck : {"Using configuration", "RC_PARAMS"}) {
    EXPECT_EQ(r.out.find(rapidcheck), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find(rapidcheck), std::string::npos) << r.err;
  }
  const nlohmann::json first = report();
  nlohmann::json failing;
  for (const auto& p : first["properties"]) {
    if (p["name"] == "relative_matrix") {
      failing = p;
    } else if (p["holds"].get<bool>() || p["gave_up"].get<bool>()) {
      EXPECT_EQ(p["replay"], "") << p.dump();
    }
  }
  ASSERT_FALSE(failing.is_null()) << first["properties"];
  EXPECT_FALSE(failing["holds"].get<bool>());
  EXPECT_EQ(failing["replay"], expected);
  // ... and in the JUnit failure's text and the HTML page
  auto cases = identity_cases(read_xml_report(dir, dir / "junit.xml"));
  ASSERT_FALSE(cases["relative_matrix"]["failure"].is_null()) << cases["relative_matrix"];
  EXPECT_NE(cases["relative_matrix"]["failure"]["text"].get<std::string>().find("replay: " + expected + "\n"), std::string::npos)
      << cases["relative_matrix"];
  const nlohmann::json page = read_xml_report(dir, dir / "r.html");
  bool on_page = false;
  for (const auto& paragraph : page["paragraphs"]) on_page |= paragraph["text"] == "replay: " + expected;
  EXPECT_TRUE(on_page) << page["paragraphs"];

  // The replay (on the same small suite, and its own report): that identity alone, the same failure.
  const Ran again =
      run(kBin + expected.substr(std::string("ropecheck").size()) + " --golden " + golden_path + " --json " + (dir / "report.json"), dir);
  EXPECT_EQ(again.code, 1) << again.out << again.err;
  for (const char* rapidcheck : {"Using configuration", "RC_PARAMS"}) {
    EXPECT_EQ(again.out.find(rapidcheck), std::string::npos) << again.out;
    EXPECT_EQ(again.err.find(rapidcheck), std::string::npos) << again.err;
  }
  const nlohmann::json replayed = report();
  ASSERT_EQ(replayed["properties"].size(), 1u) << replayed["properties"];
  const nlohmann::json& p = replayed["properties"][0];
  EXPECT_EQ(p["name"], "relative_matrix");
  EXPECT_FALSE(p["holds"].get<bool>());
  EXPECT_EQ(p["failure"], failing["failure"]);
  EXPECT_EQ(p["counterexample"], failing["counterexample"]);
  EXPECT_EQ(p["replay"], expected);
}

TEST_F(RunFixture, PropertyNamesOneIdentityOfProps) {
  Ran r = run(kBin + " run --impl reference --golden " + golden_path + " --props --property nonesuch", dir);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const char* word : {"--property", "relative_matrix", "'nonesuch'"}) {
    EXPECT_NE(r.err.find(word), std::string::npos) << r.err;
  }
  r = run(kBin + " run --impl reference --golden " + golden_path + " --property relative_matrix", dir);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--property"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--props"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ropecheck::gate
