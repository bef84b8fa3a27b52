// End-to-end tests of `ropecheck check` and its reports: a correct candidate passes in every file
// format, candidates made wrong on purpose fail with the right test ids, reports are valid XML/HTML.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "gate/report.h"
#include "tensorio/writers.h"
#include "judge/group.h"
#include "gate_test_support.h"
#include "reference/multiprecision.h"
#include "reference/rope.h"
#include "spec/schedule.h"

namespace ropecheck::gate {
namespace {

using namespace testing;

const std::string kBin = ROPECHECK_BIN;

// The candidate file of per-test outputs, tensors named gate-small/ID/output.
std::string write_candidate(const TempDir& dir, const std::string& name, const golden::GoldenFile& file,
                            const std::vector<std::vector<double>>& outputs, const std::string& format = "npz") {
  std::vector<OutTensor> tensors;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& t = file.groups[0].rope_tests[i];
    tensors.push_back({file.suite + "/" + std::to_string(t.id) + "/output", "F32", {t.tokens, t.heads, t.head_dim}, outputs[i], {}});
  }
  const std::string path = dir / name;
  spit(path, format == "npz" ? encode_npz(tensors) : encode_safetensors(tensors));
  return path;
}

std::vector<std::vector<double>> expected_outputs(const golden::GoldenFile& file) {
  std::vector<std::vector<double>> out;
  for (const auto& t : file.groups[0].rope_tests) out.push_back(t.expected);
  return out;
}

// The values of every test's output, concatenated in golden order (the lone .npy layout, gate/README.md).
std::vector<double> concatenated(const std::vector<std::vector<double>>& outputs) {
  std::vector<double> all;
  for (const auto& o : outputs) all.insert(all.end(), o.begin(), o.end());
  return all;
}

// Worst-case messages of the report, by test id.
std::map<std::int64_t, std::vector<std::string>> messages_by_test(const nlohmann::json& report) {
  std::map<std::int64_t, std::vector<std::string>> out;
  for (const auto& g : report["groups"]) {
    for (const auto& c : g["worst_cases"]) {
      out[c["test_id"].get<std::int64_t>()].push_back(c["kind"].get<std::string>() + ": " + c["message"].get<std::string>());
    }
  }
  return out;
}

struct CheckFixture : ::testing::Test {
  TempDir dir;
  golden::GoldenFile file = small_golden();
  std::string golden_path = dir / "small.json";
  void SetUp() override { spit(golden_path, golden::write_golden(file)); }

  Ran check(const std::string& candidate, const std::string& extra = "") {
    return run(kBin + " check --golden " + golden_path + " --candidate " + candidate + " --json " + (dir / "report.json") + " " + extra,
               dir);
  }
  nlohmann::json report() { return nlohmann::json::parse(slurp(dir / "report.json")); }
};

// The default tolerances are the constants of the Coq theorems their source cites: for each model,
// with and without an attention factor, the cited theorem's statement in GateTolerance.v bounds the
// error by exactly that many u·ρ (u·G·ρ with the factor G = |g|). Fails if either side changes alone.
TEST(DefaultTolerance, IsTheConstantOfTheCitedCoqTheorem) {
  std::ifstream in(std::string(ROPECHECK_SOURCE_DIR) + "/proofs/formal/coq/GateTolerance.v");
  std::stringstream text;
  text << in.rdbuf();
  const std::string coq = text.str();
  ASSERT_NE(coq.find("Theorem gate_exact_default"), std::string::npos) << "GateTolerance.v not found";
  const std::string plain = "layout=half,head_dim=64,base=10000,dtype=f32";
  const std::string yarn = "layout=half,head_dim=64,base=10000,scaling=yarn,factor=8,original_max_position=4096,dtype=f32";
  ASSERT_NE(attention_factor<double>(parse_spec(yarn)), 1.0);
  for (const std::string& text_of_spec : {plain, yarn}) {
    const Spec spec = parse_spec(text_of_spec);
    const bool scaled = attention_factor<double>(spec) != 1.0;
    for (const Model model : {Model::exact, Model::f32_angle, Model::f32_recipe}) {
      const Tolerance t = default_tolerance(model, spec);
      const std::smatch cited = [&] {
        std::smatch m;
        std::regex_search(t.source, m, std::regex("Coq (gate_[a-z0-9_]+)"));
        return m;
      }();
      ASSERT_FALSE(cited.empty()) << "no Coq theorem cited in: " << t.source;
      const std::string theorem = cited[1];
      EXPECT_EQ(theorem.find("scaled") != std::string::npos, scaled) << theorem;
      const std::size_t at = coq.find("Theorem " + theorem + " ");
      ASSERT_NE(at, std::string::npos) << theorem << " is not in GateTolerance.v";
      const std::string statement = coq.substr(at, coq.find("Proof.", at) - at);
      const std::string bound = std::to_string(static_cast<int>(t.value)) + (scaled ? " * u * G * rho" : " * u * rho");
      EXPECT_EQ(static_cast<double>(static_cast<int>(t.value)), t.value);
      EXPECT_NE(statement.find(bound), std::string::npos) << theorem << " does not bound by " << bound << ":\n" << statement;
      if (model == Model::f32_angle) {
        // The growing part: eta·|p·theta|·rho (·G), eta = (1 + w)^2·(1 + 2k·w) − 1 with w = 2^-24,
        // and per radian eta/u: k = 8 and u = 2^-24 give 18 + 33·2^-24 + 16·2^-48.
        const std::string growth = std::string("((1 + w) * (1 + w) * (1 + 2 * k * w) - 1) * Rabs (p * theta)") + (scaled ? " * G * rho" : " * rho");
        EXPECT_NE(statement.find(growth), std::string::npos) << theorem << " does not grow by " << growth << ":\n" << statement;
        EXPECT_EQ(kDefaultThetaUlps, 8);
        EXPECT_GE(t.per_radian, 18 + 33 * 0x1p-24);
        EXPECT_LE(t.per_radian, 18 + 34 * 0x1p-24);
      } else {
        EXPECT_EQ(t.per_radian, 0);
      }
    }
  }
}

// A careful float32 candidate for a spec with an attention factor, computed as HF transformers does
// it: cos/sin of the angle rounded to f32 (faithful), multiplied by g rounded to f32, in f32, then
// the rotation in f32. It passes the default (e ≤ 6 when g ≠ 1, judge/tolerance.cpp), whose source
// names the scaled theorem; e = 1 would fail it (its errors are several u, measured by the report).
TEST(ScaledCandidate, CarefulFloat32WithAnAttentionFactorPassesTheDefault) {
  TempDir dir;
  const golden::GoldenFile file = small_golden(
      "layout=interleaved,head_dim=8,rotary_dim=6,base=10000,scaling=yarn,factor=8,original_max_position=4096,dtype=f32");
  const Spec& spec = file.groups[0].spec;
  const float g = static_cast<float>(attention_factor<double>(spec));
  ASSERT_NE(g, 1.0f);
  reference::PrecisionScope scope(256);
  std::vector<std::vector<double>> outputs;
  for (const auto& t : file.groups[0].rope_tests) {
    std::vector<double> out = t.input;  // pass-through dims as they are
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const reference::Real angle = reference::angle(spec, t.positions, j, 256);
      const float c = g * static_cast<float>(cos(angle).convert_to<double>());
      const float s = g * static_cast<float>(sin(angle).convert_to<double>());
      for (std::int64_t h = 0; h < t.heads; ++h) {
        const std::size_t first = static_cast<std::size_t>(h * t.head_dim + 2 * j);
        const float x = static_cast<float>(t.input[first]);
        const float y = static_cast<float>(t.input[first + 1]);
        const float xc = x * c;
        const float ys = y * s;
        const float xs = x * s;
        const float yc = y * c;
        out[first] = xc - ys;
        out[first + 1] = xs + yc;
      }
    }
    outputs.push_back(out);
  }
  const std::string golden_path = dir / "yarn.json";
  spit(golden_path, golden::write_golden(file));
  const std::string candidate = write_candidate(dir, "hf-style.npz", file, outputs);
  const std::string report = dir / "report.json";
  const Ran r = run(kBin + " check --golden " + golden_path + " --candidate " + candidate + " --json " + report, dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(j["groups"][0]["tolerance"]["value"].get<double>(), 6.0);
  // The default claim is f32-angle (judge/tolerance.h kDefaultModel): its bound with the factor.
  EXPECT_NE(j["groups"][0]["tolerance"]["source"].get<std::string>().find("gate_f32_angle_scaled_default"), std::string::npos)
      << j["groups"][0]["tolerance"].dump();
  std::printf("HF-style f32 candidate, g = %.9g: worst e %.3f (default %g)\n", static_cast<double>(g),
              j["groups"][0]["worst_e"].get<double>(), j["groups"][0]["tolerance"]["value"].get<double>());
  EXPECT_GT(j["groups"][0]["worst_e"].get<double>(), 1.0);  // not the golden values themselves
  const Ran strict = run(kBin + " check --golden " + golden_path + " --candidate " + candidate + " --tolerance e=1", dir);
  EXPECT_NE(strict.code, 0) << "a tolerance of 1 should fail this candidate";
}

TEST_F(CheckFixture, CorrectCandidatePassesInEveryFormat) {
  for (const std::string format : {"npz", "safetensors"}) {
    const Ran r = check(write_candidate(dir, "good." + format, file, expected_outputs(file), format));
    EXPECT_EQ(r.code, 0) << format << "\n" << r.out << r.err;
    const auto j = report();
    EXPECT_EQ(j["verdict"], "pass");
    // Correctly rounded outputs: each component within half an ulp ≤ u·|A| ≤ u·ρ of the exact one, so e ≤ 1.
    EXPECT_LE(j["groups"][0]["worst_e"].get<double>(), 1.0);
    EXPECT_EQ(j["groups"][0]["tests"], 7);
    EXPECT_EQ(j["groups"][0]["horizon"], 2147483647);
    EXPECT_EQ(j["groups"][0]["horizon_complete"], true);
  }
  // The JSON form, values as hex strings.
  nlohmann::json candidate;
  candidate["implementation"] = "hand-written JSON";
  for (const auto& t : file.groups[0].rope_tests) {
    std::vector<std::string> hex;
    for (double v : t.expected) hex.push_back(reference::to_hex(v));
    candidate["gate-small/" + std::to_string(t.id) + "/output"] = hex;
  }
  spit(dir / "good.json", candidate.dump());
  const Ran r = check(dir / "good.json");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("hand-written JSON"), std::string::npos) << r.out;
}

TEST_F(CheckFixture, RecipeAnglesFailUnderTheExactModelAtLargePositionsOnly) {
  std::vector<std::vector<double>> outputs;
  for (const auto& t : file.groups[0].rope_tests) outputs.push_back(*t.expected_f32_recipe);
  const std::string candidate = write_candidate(dir, "recipe.npz", file, outputs);
  const Ran r = check(candidate, "--model exact");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  // The summary says the weaker claim of binary32 angles fits what fails the exact one.
  EXPECT_NE(r.out.find("note: under the weaker claim --model f32-angle"), std::string::npos) << r.out;
  const auto failed = failed_tests(report());
  // Position 0: the recipe is exact. Position 1: the angle is RN32(θ_j), within 2^-25·θ_j ≤ 2^-25
  // rad of θ_j, moving each component by ≤ 2^-25·ρ = u·ρ/2 besides the final rounding (≤ u·ρ):
  // e ≤ 1.5 < 4. Positions 2^24 + 1 and 2^31 − 1: RN32(p) ≠ p moves pair 0's angle (θ_0 = 1) by
  // 1 rad and 64 rad — off by far more than 4 u.
  EXPECT_FALSE(failed.count(1));
  EXPECT_FALSE(failed.count(2));
  EXPECT_TRUE(failed.count(6));
  EXPECT_TRUE(failed.count(7));
  const auto horizon = report()["groups"][0]["horizon"].get<std::int64_t>();
  EXPECT_GE(horizon, 1);
  EXPECT_LT(horizon, (1 << 24) + 1);
  // The same outputs are exactly what the f32-recipe model expects.
  EXPECT_EQ(check(candidate, "--model f32-recipe").code, 0);
}

TEST_F(CheckFixture, SwappedLayoutFailsEveryRotatedTest) {
  // The half layout pairs (j, j + 3) instead of (2j, 2j + 1): the same rotation at position 0
  // (the identity), a different one everywhere else.
  const golden::GoldenFile swapped = small_golden("layout=half,head_dim=8,rotary_dim=6,base=10000,dtype=f32");
  const Ran r = check(write_candidate(dir, "swapped.npz", file, expected_outputs(swapped)), "--model exact");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(failed_tests(report()), ids_where([](std::int64_t p) { return p != 0; }));
}

TEST_F(CheckFixture, OneFlippedBitFailsExactlyThatTest) {
  auto outputs = expected_outputs(file);
  auto flip = [](double v, int bit) {
    float f = static_cast<float>(v);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits ^= 1u << bit;
    std::memcpy(&f, &bits, 4);
    return static_cast<double>(f);
  };
  outputs[3][0] = flip(outputs[3][0], 22);  // test 4, dim 0: the top significand bit — ≥ 2^-2 relative
  outputs[2][7] = flip(outputs[2][7], 0);   // test 3, dim 7: one ulp on a pass-through dim (must be bit-exact)
  const Ran r = check(write_candidate(dir, "flipped.npz", file, outputs), "--junit " + (dir / "junit.xml") + " --html " + (dir / "r.html"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto j = report();
  EXPECT_EQ(failed_tests(j), (std::set<std::int64_t>{3, 4}));
  std::set<std::string> kinds;
  for (const auto& c : j["groups"][0]["worst_cases"]) kinds.insert(c["kind"].get<std::string>());
  EXPECT_TRUE(kinds.count("tolerance"));
  EXPECT_TRUE(kinds.count("passthrough"));
  EXPECT_EQ(j["groups"][0]["passthrough_failed"], 1);

  // The JUnit file parses as XML and its failure names both tests; the HTML page parses as XML
  // (XHTML) and with Python's HTML parser, and holds one SVG plot of e (beside the explanation's
  // frequency plot of a failing group).
  const std::string junit_check =
      "/usr/bin/python3 -c \"import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
      "f = r.findall('.//failure'); assert r.tag == 'testsuites' and len(f) == 1, f; m = f[0].get('message'); "
      "assert '3' in m and '4' in m, m; print('ok')\" " +
      (dir / "junit.xml");
  EXPECT_EQ(run(junit_check, dir).code, 0) << slurp(dir / "junit.xml");
  const std::string html_check =
      "/usr/bin/python3 -c \"import sys, html.parser, xml.etree.ElementTree as E; t = open(sys.argv[1]).read(); "
      "html.parser.HTMLParser().feed(t); r = E.fromstring(t); "
      "assert len([s for s in r.findall('.//{http://www.w3.org/2000/svg}svg') if s.get('class') != 'frequencies']) == 1; "
      "print('ok')\" " +
      (dir / "r.html");
  EXPECT_EQ(run(html_check, dir).code, 0) << run(html_check, dir).err;
  // The JSON report conforms to its documented schema.
  const std::string schema_check =
      "/usr/bin/python3 -c \"import sys, json, jsonschema; jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))"
      ".validate(json.load(open(sys.argv[2]))); print('ok')\" " SCHEMA_PATH " " + (dir / "report.json");
  const Ran v = run(schema_check, dir);
  EXPECT_EQ(v.code, 0) << v.err;
}

TEST_F(CheckFixture, SpecialValuesAreTheirOwnClass) {
  // A NaN input must give NaN in both outputs of its pair (reference/rope.h); a candidate that
  // writes a number there fails with kind "special", even though e cannot be measured.
  golden::GoldenFile nan_file = file;
  auto& t = nan_file.groups[0].rope_tests[1];
  t.input[0] = std::nan("");
  t.expected = reference::apply(nan_file.groups[0].spec, {1, 2, 8}, t.positions, t.input);
  ASSERT_TRUE(std::isnan(t.expected[0]) && std::isnan(t.expected[1]));
  t.expected_f32_recipe.reset();
  spit(golden_path, golden::write_golden(nan_file));
  auto outputs = expected_outputs(nan_file);
  EXPECT_EQ(check(write_candidate(dir, "nan-ok.npz", nan_file, outputs)).code, 0);
  outputs[1][0] = 0.0;
  EXPECT_EQ(check(write_candidate(dir, "nan-bad.npz", nan_file, outputs)).code, 1);
  const auto j = report();
  EXPECT_EQ(failed_tests(j), (std::set<std::int64_t>{2}));
  EXPECT_EQ(j["groups"][0]["special_failed"], 1);
}

TEST_F(CheckFixture, MissingOutputsFailOrAreSkipped) {
  auto outputs = expected_outputs(file);
  outputs.pop_back();  // no output for test 7
  const std::string candidate = write_candidate(dir, "partial.npz", file, outputs);
  EXPECT_EQ(check(candidate).code, 1);
  EXPECT_EQ(failed_tests(report()), (std::set<std::int64_t>{7}));
  EXPECT_EQ(check(candidate, "--allow-missing").code, 0);
  EXPECT_EQ(report()["groups"][0]["tests_skipped"], 1);
}

TEST_F(CheckFixture, ToleranceOverride) {
  // Correctly rounded outputs have e ≤ 1 but e > 0 somewhere: e=0 must fail them, ulp=0 must pass.
  const std::string candidate = write_candidate(dir, "good.npz", file, expected_outputs(file));
  EXPECT_EQ(check(candidate, "--tolerance e=0").code, 1);
  EXPECT_EQ(check(candidate, "--tolerance ulp=0").code, 0);
  const Ran bad = check(candidate, "--tolerance zeta=1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--tolerance"), std::string::npos) << bad.err;
}

TEST_F(CheckFixture, BadInputIsOneLineAndExitCode2) {
  const std::string good = write_candidate(dir, "good.npz", file, expected_outputs(file));
  std::string bytes = slurp(good);
  spit(dir / "truncated.npz", bytes.substr(0, bytes.size() / 2));
  for (const std::string& candidate : {dir / "truncated.npz", dir / "absent.npz"}) {
    const Ran r = check(candidate);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // A report never overwrites an input.
  const std::string before = slurp(golden_path);
  const Ran r = run(kBin + " check --golden " + golden_path + " --candidate " + good + " --json " + golden_path, dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("not an input"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(golden_path), before);
}

// A report path that cannot be written is refused before the candidate is judged: no table on
// stdout, one line on stderr naming the path, exit 2.
TEST_F(CheckFixture, ReportPathsAreCheckedBeforeTheWork) {
  const std::string good = write_candidate(dir, "good.npz", file, expected_outputs(file));
  const std::string missing_folder = dir / "no-such-folder/report.xml";
  const Ran r = check(good, "--junit " + missing_folder);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(missing_folder + ": file: expected a writable folder"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "report.json"));
}

TEST_F(CheckFixture, ExportRoundTripsThroughNumpy) {
  // Export, then a NumPy candidate that simply returns the expected outputs read from the golden
  // file (np.savez_compressed: deflate members); check must read NumPy's zip64 records.
  const Ran e = run(kBin + " golden export --golden " + golden_path + " --format npz --out " + (dir / "in.npz"), dir);
  ASSERT_EQ(e.code, 0) << e.err;
  const std::string script =
      "import sys, json, numpy as np\n"
      "d = np.load(sys.argv[1]); g = json.load(open(sys.argv[2]))\n"
      "assert str(d['gate-small/4/spec']).startswith('layout=interleaved'), d['gate-small/4/spec']\n"
      "assert d['gate-small/7/positions'].tolist() == [2147483647]\n"
      "out = {}\n"
      "for t in g['groups'][0]['tests']:\n"
      "    x = d['gate-small/%d/input' % t['id']]\n"
      "    assert x.dtype == np.float32 and x.shape == (1, 2, 8)\n"
      "    assert [float.fromhex(v) for v in t['input']] == x.ravel().tolist()\n"
      "    out['gate-small/%d/output' % t['id']] = np.array([float.fromhex(v) for v in t['expected']], np.float32).reshape(x.shape)\n"
      "np.savez_compressed(sys.argv[3], **out)\n";
  spit(dir / "candidate.py", script);
  const Ran p = run("/usr/bin/python3 " + (dir / "candidate.py") + " " + (dir / "in.npz") + " " + golden_path + " " + (dir / "out.npz"), dir);
  ASSERT_EQ(p.code, 0) << p.err;
  const Ran r = check(dir / "out.npz");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // safetensors export carries the same names.
  EXPECT_EQ(run(kBin + " golden export --golden " + golden_path + " --format safetensors --out " + (dir / "in.safetensors"), dir).code, 0);
  const std::string header = slurp(dir / "in.safetensors").substr(8, 4000);
  EXPECT_NE(header.find("\"gate-small/7/positions\""), std::string::npos);
}

// A lone .npy holds every output concatenated in golden order (gate/README.md, "File layout"):
// test ID's 16 values (1 token x 2 heads x head_dim 8) start at offset (ID - 1)·16.
TEST_F(CheckFixture, LoneNpyHoldsEveryOutputInGoldenOrder) {
  const auto outputs = expected_outputs(file);
  const std::size_t per_test = 16;
  ASSERT_EQ(outputs[0].size(), per_test);
  auto npy = [&](const std::string& name, const std::vector<double>& values) {
    spit(dir / name, encode_npy({"", "F32", {static_cast<std::int64_t>(values.size())}, values, {}}));
    return dir / name;
  };
  const std::vector<double> all = concatenated(outputs);

  // Exactly the outputs: judged like the named tensors, correctly rounded, so e <= 1 and no note.
  Ran r = check(npy("all.npy", all));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = report();
  EXPECT_EQ(j["groups"][0]["tests"], 7);
  EXPECT_EQ(j["groups"][0]["tests_failed"], 0);
  EXPECT_LE(j["groups"][0]["worst_e"].get<double>(), 1.0);
  EXPECT_TRUE(j["notes"].empty()) << j["notes"];

  // The order matters: tests in reverse order leave only the middle one (test 4) with its own outputs.
  std::vector<std::vector<double>> reversed(outputs.rbegin(), outputs.rend());
  EXPECT_EQ(check(npy("reversed.npy", concatenated(reversed))).code, 1);
  EXPECT_EQ(failed_tests(report()), (std::set<std::int64_t>{1, 2, 3, 5, 6, 7}));

  // One value short of test 6's end: tests 6 (offset 80) and 7 (offset 96) fail as missing, the
  // first five pass.
  r = check(npy("short.npy", std::vector<double>(all.begin(), all.begin() + 5 * per_test + 15)));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  j = report();
  EXPECT_EQ(failed_tests(j), (std::set<std::int64_t>{6, 7}));
  auto messages = messages_by_test(j);
  for (const auto& [id, offset] : {std::pair<std::int64_t, int>{6, 80}, {7, 96}}) {
    ASSERT_EQ(messages[id].size(), 1u) << id;
    EXPECT_NE(messages[id][0].find("missing: " + (dir / "short.npy") + " ends before this test's outputs (offset " +
                                   std::to_string(offset) + ")"),
              std::string::npos)
        << messages[id][0];
  }
  // --allow-missing skips the tests the short file has no outputs for (gate/README.md), judging the rest.
  r = check(dir / "short.npy", "--allow-missing");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  j = report();
  EXPECT_TRUE(failed_tests(j).empty());
  EXPECT_EQ(j["summary"]["tests_skipped"], 2) << j["summary"];

  // Three values more than the golden tests take: everything passes, and the report says so.
  std::vector<double> longer = all;
  longer.insert(longer.end(), {0.5, 0.25, 0.125});
  r = check(npy("long.npy", longer));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  j = report();
  ASSERT_EQ(j["notes"].size(), 1u) << j["notes"];
  EXPECT_NE(j["notes"][0].get<std::string>().find("holds 3 values beyond the golden tests' outputs"), std::string::npos)
      << j["notes"];
  EXPECT_NE(r.out.find("holds 3 values beyond"), std::string::npos) << r.out;
}

// An output that is text, or has the wrong number of values (16 = tokens·heads·head_dim), fails that
// test as "shape"; the others are judged, and each test is counted once.
TEST_F(CheckFixture, TextOrMiscountedOutputFailsAsShape) {
  const auto outputs = expected_outputs(file);
  std::vector<OutTensor> tensors;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string name = "gate-small/" + std::to_string(i + 1) + "/output";
    std::vector<double> values = outputs[i];
    if (i == 2) {
      tensors.push_back({name, "U", {}, {}, "not numbers"});
      continue;
    }
    if (i == 4) values.pop_back();         // 15 values
    if (i == 5) values.push_back(values[0]);  // 17 values
    tensors.push_back({name, "F32", {static_cast<std::int64_t>(values.size())}, values, {}});
  }
  spit(dir / "shapes.npz", encode_npz(tensors));
  const Ran r = check(dir / "shapes.npz");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto j = report();
  EXPECT_EQ(failed_tests(j), (std::set<std::int64_t>{3, 5, 6}));
  EXPECT_EQ(j["groups"][0]["tests"], 7);
  EXPECT_EQ(j["groups"][0]["tests_failed"], 3);
  auto messages = messages_by_test(j);
  for (std::int64_t id : {3, 5, 6}) {
    ASSERT_EQ(messages[id].size(), 1u) << id;
    EXPECT_EQ(messages[id][0].rfind("shape: ", 0), 0u) << messages[id][0];
  }
  EXPECT_NE(messages[3][0].find("gate-small/3/output"), std::string::npos) << messages[3][0];
  EXPECT_NE(messages[3][0].find("text"), std::string::npos) << messages[3][0];
  EXPECT_NE(messages[5][0].find("expected 16 output values"), std::string::npos) << messages[5][0];
  EXPECT_NE(messages[5][0].find("got 15"), std::string::npos) << messages[5][0];
  EXPECT_NE(messages[6][0].find("got 17"), std::string::npos) << messages[6][0];
}

// A golden file without expected_f32_recipe values: --model f32-recipe computes them (reference/rope.h
// Model::f32_recipe). The recipe's own outputs then pass with e = 0 (identical values), and the
// exact outputs fail where the recipe's angle is far off: positions 2^24 + 1 and 2^31 − 1, where
// RN32(p) ≠ p turns pair 0 (θ_0 = 1) by 1 and 64 rad; at position 0 both are the input itself.
TEST_F(CheckFixture, RecipeModelComputesMissingRecipeExpectations) {
  golden::GoldenFile bare = file;
  std::vector<std::vector<double>> recipe;
  for (auto& t : bare.groups[0].rope_tests) {
    recipe.push_back(*t.expected_f32_recipe);
    t.expected_f32_recipe.reset();
  }
  spit(golden_path, golden::write_golden(bare));
  ASSERT_EQ(slurp(golden_path).find("expected_f32_recipe"), std::string::npos);

  Ran r = check(write_candidate(dir, "recipe.npz", bare, recipe), "--model f32-recipe");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = report();
  EXPECT_EQ(j["groups"][0]["tests"], 7);
  EXPECT_EQ(j["groups"][0]["worst_e"].get<double>(), 0.0);
  EXPECT_EQ(j["groups"][0]["tolerance"]["value"].get<double>(), 5.0);  // the f32-recipe default, gate/README.md

  r = check(write_candidate(dir, "exact.npz", bare, expected_outputs(bare)), "--model f32-recipe");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto failed = failed_tests(report());
  EXPECT_TRUE(failed.count(6));
  EXPECT_TRUE(failed.count(7));
  EXPECT_FALSE(failed.count(1));
}

// `&` and `"` in a name shown by the reports (the JSON candidate's "implementation") are escaped:
// both reports stay well-formed and an XML parser reads the name back unchanged.
TEST_F(CheckFixture, AmpersandAndQuoteAreEscapedInXmlReports) {
  const std::string name = R"(R&D "fast" rope <v2> & 'co')";
  nlohmann::json candidate;
  candidate["implementation"] = name;
  for (const auto& t : file.groups[0].rope_tests) candidate["gate-small/" + std::to_string(t.id) + "/output"] = t.expected;
  candidate["gate-small/2/output"][0] = 2.0;  // one failing test, so the JUnit file has a <failure> too
  spit(dir / "named.json", candidate.dump());
  const Ran r = check(dir / "named.json", "--junit " + (dir / "junit.xml") + " --html " + (dir / "r.html"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const nlohmann::json junit = read_xml_report(dir, dir / "junit.xml");
  ASSERT_EQ(junit["suites"].size(), 1u);
  EXPECT_NE(junit["suites"][0]["name"].get<std::string>().find(name), std::string::npos) << junit["suites"][0];
  ASSERT_EQ(junit["testcases"].size(), 1u);
  EXPECT_FALSE(junit["testcases"][0]["failure"].is_null());
  const nlohmann::json page = read_xml_report(dir, dir / "r.html");
  EXPECT_NE(page["title"].get<std::string>().find(name), std::string::npos) << page["title"];
}

// Every in-page link of the HTML report leads somewhere: each href="#X" has an element id="X", and
// X holds no '#' (a URL fragment may not, RFC 3986 §3.5; group names are SUITE#INDEX).
TEST_F(CheckFixture, HtmlLinksPointToExistingAnchors) {
  const Ran r = check(write_candidate(dir, "good.npz", file, expected_outputs(file)), "--html " + (dir / "r.html"));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const std::string page = slurp(dir / "r.html");
  std::set<std::string> ids, links;
  const std::regex id(R"re(\bid="([^"]*)")re"), href(R"re(href="#([^"]*)")re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), id); it != std::sregex_iterator(); ++it) ids.insert((*it)[1]);
  for (auto it = std::sregex_iterator(page.begin(), page.end(), href); it != std::sregex_iterator(); ++it) links.insert((*it)[1]);
  ASSERT_FALSE(links.empty()) << page;
  for (const std::string& link : links) {
    EXPECT_EQ(link.find('#'), std::string::npos) << link;
    EXPECT_EQ(ids.count(link), 1u) << "no element with id " << link;
  }
}

// Message-only worst cases (no pair to show: here a missing tensor) are one row of the HTML table,
// the message spanning the value columns.
TEST_F(CheckFixture, MissingOutputIsAMessageRowInTheHtmlReport) {
  auto outputs = expected_outputs(file);
  outputs.pop_back();  // no output for test 7
  const Ran r = check(write_candidate(dir, "partial.npz", file, outputs), "--html " + (dir / "r.html"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const nlohmann::json page = read_xml_report(dir, dir / "r.html");
  const std::vector<nlohmann::json> rows = message_rows(page);
  ASSERT_EQ(rows.size(), 1u) << page["rows"];
  EXPECT_EQ(rows[0][0]["text"], "7");
  EXPECT_EQ(rows[0][1]["text"], "missing");
  EXPECT_EQ(rows[0][2]["text"], "2147483647");  // test 7's position
  EXPECT_NE(rows[0][6]["text"].get<std::string>().find("no tensor gate-small/7/output"), std::string::npos) << rows[0];
}


// ------------------------------------------------------------------------------------------------
// The options every judging command takes (judge/README.md), on check.

// The correct outputs, except one component of every test at a position above `above`, off by 0.5.
std::vector<std::vector<double>> wrong_above(const golden::GoldenFile& file, std::int64_t above) {
  std::vector<std::vector<double>> outputs = expected_outputs(file);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (file.groups[0].rope_tests[i].positions[0] > above) outputs[i][0] += 0.5;
  }
  return outputs;
}

TEST_F(CheckFixture, MaxPositionJudgesOnlyTheUsersContext) {
  const std::string candidate = write_candidate(dir, "wrong-above-100.npz", file, wrong_above(file, 100));
  // Under the exact claim: a constant bound, so that 0.5 off fails at every position.
  const Ran all = check(candidate, "--model exact");
  EXPECT_EQ(all.code, 1) << all.out << all.err;
  EXPECT_EQ(failed_tests(report()), (std::set<std::int64_t>{5, 6, 7}));  // positions 65536, 2^24 + 1, 2^31 − 1
  const Ran within = check(candidate, "--model exact --max-position 100");
  EXPECT_EQ(within.code, 0) << within.out << within.err;
  const auto j = report();
  EXPECT_EQ(j["options"]["max_position"], 100);
  EXPECT_EQ(j["summary"]["skipped_by_position"], 3);
  EXPECT_EQ(j["groups"][0]["tests_skipped"], 3);
  EXPECT_EQ(j["groups"][0]["horizon"], 100);
  EXPECT_NE(within.out.find("3 by --max-position"), std::string::npos) << within.out;
  EXPECT_EQ(check(candidate, "--max-position -1").code, 2);
}

TEST_F(CheckFixture, RequireHorizonToleratesFailuresAboveIt) {
  const std::string candidate = write_candidate(dir, "wrong-above-100.npz", file, wrong_above(file, 100));
  const Ran r = check(candidate, "--model exact --require-horizon 100");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  auto j = report();
  EXPECT_EQ(j["groups"][0]["horizon"], 100);  // still measured beyond, and reported
  EXPECT_EQ(j["groups"][0]["horizon_complete"], false);
  EXPECT_EQ(j["groups"][0]["beyond_required_failed"], 3);
  EXPECT_NE(r.out.find("above --require-horizon 100"), std::string::npos) << r.out;
  // The failure at 65536 is within a required horizon of 65536.
  EXPECT_EQ(check(candidate, "--model exact --require-horizon 65536").code, 1);
  EXPECT_EQ(failed_tests(report()), (std::set<std::int64_t>{5}));
}

TEST_F(CheckFixture, SkipFlagsLeaveOutFlaggedTestsAndCountThem) {
  for (auto& t : file.groups[0].rope_tests) {
    if (t.positions[0] > 100) t.flags = {"LargePosition"};
  }
  file.notes = {{"LargePosition", "position above 100"}};
  spit(golden_path, golden::write_golden(file));
  const std::string candidate = write_candidate(dir, "wrong-above-100.npz", file, wrong_above(file, 100));
  const Ran r = check(candidate, "--skip-flags LargePosition --junit " + (dir / "r.xml"));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const auto j = report();
  EXPECT_EQ(j["summary"]["skipped_by_flags"], 3);
  EXPECT_EQ(j["options"]["skip_flags"], nlohmann::json::array({"LargePosition"}));
  EXPECT_NE(r.out.find("3 by --skip-flags"), std::string::npos) << r.out;
  // A flag no suite uses would skip nothing: refused, naming the flags there are.
  const Ran typo = check(candidate, "--skip-flags LargePositon");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("--skip-flags: expected flags the suites use (LargePosition), got 'LargePositon'"), std::string::npos)
      << typo.err;
}

// Horizon = accuracy: a special-value failure fails the verdict, is counted and listed as an edge
// case, after the accuracy cases, and never sets the horizon.
TEST_F(CheckFixture, EdgeCasesFailTheVerdictButNotTheHorizon) {
  auto& tests = file.groups[0].rope_tests;
  tests[6].input[0] = std::numeric_limits<double>::quiet_NaN();  // test 7, position 2^31 − 1, pair 0 of head 0
  tests[6].expected = reference::apply(file.groups[0].spec, {1, 2, 8}, tests[6].positions, tests[6].input);
  spit(golden_path, golden::write_golden(file));
  std::vector<std::vector<double>> outputs = expected_outputs(file);
  outputs[6][0] = outputs[6][1] = 0;  // numbers where the IEEE policy gives NaN
  const Ran edge_only = check(write_candidate(dir, "edge.npz", file, outputs));
  EXPECT_EQ(edge_only.code, 1) << edge_only.out;
  auto j = report();
  EXPECT_EQ(j["groups"][0]["special_failed"], 1);
  EXPECT_EQ(j["groups"][0]["ordinary_failed"], 0);
  EXPECT_EQ(j["groups"][0]["horizon"], 2147483647);
  EXPECT_EQ(j["groups"][0]["horizon_complete"], true);
  EXPECT_NE(edge_only.out.find("edge cases: 1 special-value pair(s)"), std::string::npos) << edge_only.out;
  // With an accuracy failure at position 100 too: the horizon is set by it alone, and the accuracy
  // case is listed before the edge case.
  outputs[3][0] += 0.5;
  const Ran both = check(write_candidate(dir, "both.npz", file, outputs));
  EXPECT_EQ(both.code, 1);
  j = report();
  EXPECT_EQ(j["groups"][0]["horizon"], 7);
  const auto& worst = j["groups"][0]["worst_cases"];
  ASSERT_EQ(worst.size(), 2u) << worst;
  EXPECT_EQ(worst[0]["accuracy"], true);
  EXPECT_EQ(worst[0]["test_id"], 4);
  EXPECT_EQ(worst[1]["kind"], "special_value");
  EXPECT_EQ(worst[1]["accuracy"], false);
  EXPECT_LT(both.out.find("[tolerance]"), both.out.find("[special_value]")) << both.out;
}

TEST_F(CheckFixture, WorstListsThatManyCasesOnStdout) {
  // Every rotated pair of every test at a position > 0 wrong: far more cases than listed.
  std::vector<std::vector<double>> outputs = expected_outputs(file);
  for (std::size_t i = 1; i < outputs.size(); ++i) {
    for (double& v : outputs[i]) v = -v;
  }
  for (int worst : {2, 5}) {
    const Ran r = check(write_candidate(dir, "wrong.npz", file, outputs), "--verbose --worst " + std::to_string(worst));
    EXPECT_EQ(r.code, 1);
    int listed = 0;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) listed += line.rfind("  gate-small test ", 0) == 0;
    EXPECT_EQ(listed, worst) << r.out;
  }
}

TEST_F(CheckFixture, ThreadsDoNotChangeTheReport) {
  const std::string candidate = write_candidate(dir, "wrong-above-100.npz", file, wrong_above(file, 100));
  check(candidate, "--threads 1");
  const std::string one = slurp(dir / "report.json");
  check(candidate, "--threads 2");
  EXPECT_EQ(slurp(dir / "report.json"), one);
  EXPECT_EQ(check(candidate, "--threads -1").code, 2);
}

// A passing group never reports an infinite worst e: the correctly rounded reference over every
// checked-in suite (subnormal, zero-norm and special-value pairs included).
TEST(Run, PassingGroupsNeverReportAnInfiniteWorstE) {
  TempDir dir;
  const Ran r = run(kBin + " run --impl reference --golden " + std::string(ROPECHECK_SOURCE_DIR) + "/golden/suites --json " +
                        (dir / "r.json"),
                    dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // The parsed report must outlive the loop: a range-for over a member of a temporary dangles.
  const nlohmann::json report = nlohmann::json::parse(slurp(dir / "r.json"));
  for (const auto& g : report["groups"]) {
    if (g["kind"] == "attention") continue;
    EXPECT_TRUE(g["worst_e"].is_number()) << g["suite"] << "#" << g["group"] << ": " << g["worst_e"];
    EXPECT_LE(g["worst_e"].get<double>(), 1.0) << g["suite"] << "#" << g["group"];  // correct rounding
  }
}

// An exclusive write (golden generate without --force) never replaces a file that appeared while it
// wrote: the start-of-run "must be new" check cannot see it, the link into place does. A plain
// write replaces it, atomically.
TEST(WriteAtomically, ExclusiveNeverReplacesAFileCreatedMeanwhile) {
  char pattern[] = "/tmp/ropecheck-exclusive-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string folder = pattern;
  const std::string path = folder + "/suite.json";
  { std::ofstream(path) << "theirs"; }
  try {
    write_atomically(path, "ours", {}, true);
    ADD_FAILURE() << "replaced " << path;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("expected a new file, got one created while this one was written"), std::string::npos) << e.what();
  }
  std::stringstream kept;
  kept << std::ifstream(path).rdbuf();
  EXPECT_EQ(kept.str(), "theirs");
  write_atomically(folder + "/new.json", "ours", {}, true);  // a new name: created
  write_atomically(path, "ours", {});                         // not exclusive: replaced
  std::stringstream replaced;
  replaced << std::ifstream(path).rdbuf();
  EXPECT_EQ(replaced.str(), "ours");
  std::filesystem::remove_all(folder);
}

// The summary says why: a candidate computing RoPE with another base
// fails with that base named on the terminal, once, under the claim the first line states; the
// generic angle lines computed against the spec as given do not stand beside it.
TEST_F(CheckFixture, TheSummaryNamesTheExplanationAndTheClaim) {
  const golden::GoldenFile other = small_golden("layout=interleaved,head_dim=8,rotary_dim=6,base=500000,dtype=f32");
  const Ran r = check(write_candidate(dir, "base.npz", file, expected_outputs(other)));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::string first_line = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(first_line.find("judged under model f32-angle"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("explanation: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("base=500000 (expected 10000)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("frequency error"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("diagnosis: "), std::string::npos) << r.out;
  // --verbose: the explanation is the group's only diagnosis line.
  const Ran verbose = check(write_candidate(dir, "base.npz", file, expected_outputs(other)), "--verbose");
  EXPECT_EQ(verbose.out.find("angle: error up to"), std::string::npos) << verbose.out;
}

// A candidate without some outputs names the first missing tensor in the summary.
TEST_F(CheckFixture, TheSummaryNamesTheFirstMissingTensor) {
  auto outputs = expected_outputs(file);
  outputs.pop_back();  // no output for test 7
  const Ran r = check(write_candidate(dir, "partial.npz", file, outputs));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("first: test 7: missing: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/7/output"), std::string::npos) << r.out;
}

// golden export says what to write back, and where.
TEST_F(CheckFixture, ExportSaysWhichTensorsToWriteBack) {
  const Ran r = run(kBin + " golden export --golden " + golden_path + " --format npz --out " + (dir / "in.npz"), dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("write your rotated tensor as SUITE/ID/output"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(e.g. " + file.suite + "/"), std::string::npos) << r.err;
}

// A misspelt option, model, spec key or scaling type gets the closest word; an unrelated one none.
TEST(Messages, DidYouMean) {
  TempDir dir;
  const Ran option = run(kBin + " check --modle exact --golden x --candidate y", dir);
  EXPECT_EQ(option.code, 2);
  EXPECT_NE(option.err.find("(did you mean '--model'?)"), std::string::npos) << option.err;
  const Ran model = run(kBin + " check --model f32-angel --golden x --candidate y", dir);
  EXPECT_EQ(model.code, 2);
  EXPECT_NE(model.err.find("(did you mean 'f32-angle'?)"), std::string::npos) << model.err;
  const Ran key = run(kBin + " sweep --impl scalar --spec layout=half,head_dm=64,base=10000,dtype=f32", dir);
  EXPECT_EQ(key.code, 2);
  EXPECT_NE(key.err.find("(did you mean 'head_dim'?)"), std::string::npos) << key.err;
  const Ran scaling = run(kBin + " sweep --impl scalar --spec layout=half,head_dim=64,base=10000,dtype=f32,scaling=yarnn", dir);
  EXPECT_EQ(scaling.code, 2);
  EXPECT_NE(scaling.err.find("(did you mean 'yarn'?)"), std::string::npos) << scaling.err;
  const Ran command = run(kBin + " chek", dir);
  EXPECT_NE(command.err.find("(did you mean 'check'?)"), std::string::npos) << command.err;
  const Ran unrelated = run(kBin + " check --zzzzzzzz --golden x --candidate y", dir);
  EXPECT_EQ(unrelated.code, 2);
  EXPECT_EQ(unrelated.err.find("did you mean"), std::string::npos) << unrelated.err;
}

// The diagnosis reads only what --max-position leaves judged: a test whose later tokens lie above
// it, where the candidate wrote zeros (a table that ends at the context length), is explained by
// its tokens within it (base 500000 for 10000), never as zeros written.
TEST(MaxPosition, TheExplanationReadsOnlyTheJudgedTokens) {
  TempDir dir;
  golden::GoldenFile file = small_golden("layout=half,head_dim=32,rotary_dim=32,base=10000,dtype=f32");
  golden::Group& group = file.groups[0];
  group.rope_tests.resize(1);
  golden::RopeTest& t = group.rope_tests[0];
  t.tokens = 64;
  t.positions.clear();
  for (std::int64_t k = 0; k < t.tokens; ++k) t.positions.push_back(k < 32 ? 3 * k : 1000000 + k);
  std::uint64_t state = 7;
  t.input.clear();
  for (std::int64_t i = 0; i < t.tokens * t.heads * t.head_dim; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    t.input.push_back(reference::round_to_format(2 * (static_cast<double>(state >> 11) / 9007199254740992.0) - 1, Dtype::f32));
  }
  const reference::Shape shape{t.tokens, t.heads, t.head_dim};
  t.expected = reference::apply(group.spec, shape, t.positions, t.input);
  t.expected_f32_recipe.reset();
  file.number_of_tests = 1;
  const std::string golden_path = dir / "straddle.json";
  spit(golden_path, golden::write_golden(file));
  std::vector<double> out =
      reference::apply(parse_spec("layout=half,head_dim=32,rotary_dim=32,base=500000,dtype=f32"), shape, t.positions, t.input);
  const std::size_t row = static_cast<std::size_t>(t.heads * t.head_dim);
  std::fill(out.begin() + static_cast<std::ptrdiff_t>(32 * row), out.end(), 0.0);
  const std::string candidate = write_candidate(dir, "straddle.npz", file, {out});
  const Ran r = run(kBin + " check --golden " + golden_path + " --candidate " + candidate + " --max-position 100", dir);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("your outputs are RoPE with base=500000 (expected 10000)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("zeros"), std::string::npos) << r.out;
  // The same tensors through the direct route (check --spec): its diagnosis sample alike.
  std::vector<double> positions(t.positions.begin(), t.positions.end());
  spit(dir / "positions.npy", encode_npy({"positions", "I64", {t.tokens}, positions, {}}));
  spit(dir / "input.npy", encode_npy({"input", "F32", {t.tokens, t.heads, t.head_dim}, t.input, {}}));
  spit(dir / "output.npy", encode_npy({"output", "F32", {t.tokens, t.heads, t.head_dim}, out, {}}));
  const Ran direct = run(kBin + " check --spec layout=half,head_dim=32,base=10000,dtype=f32 --positions " + (dir / "positions.npy") +
                             " --input " + (dir / "input.npy") + " --candidate " + (dir / "output.npy") + " --max-position 100",
                         dir);
  EXPECT_EQ(direct.code, 1) << direct.out << direct.err;
  EXPECT_NE(direct.out.find("your outputs are RoPE with base=500000 (expected 10000)"), std::string::npos) << direct.out;
  EXPECT_EQ(direct.out.find("zeros"), std::string::npos) << direct.out;
}

}  // namespace
}  // namespace ropecheck::gate
