// `ropecheck golden generate --spec ... --positions ... --tokens N --heads H --out FILE.json`
//: a suite for the user's own config, its safetensors sidecar above 2^20 values,
// and every reader of golden files on it (lint, verify, run, check); then sidecars made wrong on
// purpose, each one line and exit 2. Expected values are compared with tests/gate/rope_recipe.h
// (independent of the generator) and with `ropecheck apply`; candidates come from the recipe.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "gate_test_support.h"
#include "golden/golden.h"
#include "rope_recipe.h"

namespace ropecheck::gate {
namespace {

using namespace testing;
using testing_recipe::Recipe;
namespace fs = std::filesystem;

const std::string kBin = ROPECHECK_BIN;
const std::string kSpec = "layout=half,head_dim=64,base=10000,dtype=f32";
// 2100 tokens x 8 heads x 64 = 1 075 200 values: just above the sidecar threshold (2^20), in tests
// of 512 tokens, the last one of 52.
const std::string kGenerate = " golden generate --spec " + kSpec + " --positions 0:2100 --tokens 512 --heads 8";
constexpr std::int64_t kTests = 5, kHeads = 8, kHeadDim = 64;

Recipe recipe() {
  Recipe r;
  r.half = true;
  r.head_dim = r.rotary_dim = 64;
  r.dtype = Dtype::f32;
  return r;
}

// |a − b| in units of the float32 ulp of the larger: the recipe rounds a long double value once
// more (to double) than the correctly rounded expected value, so the two may differ by 1 at a tie.
double ulps_apart(double a, double b) {
  if (a == b) return 0;
  const double big = std::max(std::fabs(a), std::fabs(b));
  int exponent = 0;
  std::frexp(std::max(big, 0x1p-126), &exponent);
  return std::fabs(a - b) / std::ldexp(1.0, exponent - 24);
}

void expect_one_line_error(const Ran& r, const std::vector<std::string>& words, const std::string& what) {
  EXPECT_EQ(r.code, 2) << what << "\n" << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << "\n" << r.err;
  for (const std::string& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << what << ": no '" << w << "' in " << r.err;
}

std::string tensor_name(std::int64_t id, const std::string& what) { return "my-suite/" + std::to_string(id) + "/" + what; }

struct CustomSuite : ::testing::Test {
  TempDir dir;
  std::string json = dir / "my-suite.json", sidecar = dir / "my-suite.safetensors";

  Ran generate(const std::string& out, const std::string& extra = "") { return run(kBin + kGenerate + " --out " + out + " " + extra, dir); }
  TensorMap sidecar_tensors() { return parse_safetensors(slurp(sidecar), sidecar); }
  // `check --golden` of this suite with the candidate `name` (written from `outputs`), its JSON
  // report in check.json.
  Ran check_candidate(const std::string& name, const std::vector<OutTensor>& outputs) {
    spit(dir / name, encode_safetensors(outputs));
    return run(kBin + " check --golden " + json + " --candidate " + (dir / name) + " --json " + (dir / "check.json"), dir);
  }

  // The candidate file of the recipe's outputs for every test, SUITE/ID/output.
  std::vector<OutTensor> recipe_outputs(const TensorMap& arrays) {
    std::vector<OutTensor> out;
    for (std::int64_t id = 1; id <= kTests; ++id) {
      const Tensor& input = arrays.at(tensor_name(id, "input"));
      const Tensor& positions = arrays.at(tensor_name(id, "positions"));
      const std::vector<std::int64_t> p(positions.values.begin(), positions.values.end());
      out.push_back({tensor_name(id, "output"), "F32", input.shape, testing_recipe::rotate(recipe(), p, kHeads, input.values), {}});
    }
    return out;
  }
};

TEST_F(CustomSuite, SidecarSuiteIsWrittenAndEveryReaderTakesIt) {
  const Ran g = generate(json);
  ASSERT_EQ(g.code, 0) << g.out << g.err;
  ASSERT_TRUE(fs::exists(sidecar));
  const auto j = nlohmann::json::parse(slurp(json));
  // The pair's hash is the sidecar's SHA-256 as coreutils' sha256sum computes it (golden/README.md "Sidecar").
  const Ran digest = run("sha256sum " + sidecar, dir);
  ASSERT_EQ(digest.code, 0) << digest.err;
  EXPECT_EQ(j["sidecar"], (nlohmann::json{{"file", "my-suite.safetensors"}, {"format", "safetensors"},
                                          {"sha256", "sha256:" + digest.out.substr(0, 64)}}));
  EXPECT_EQ(j["suite"], "my-suite");
  EXPECT_EQ(j["number_of_tests"], kTests);
  const auto& tests = j["groups"][0]["tests"];
  ASSERT_EQ(tests.size(), static_cast<std::size_t>(kTests));
  for (std::int64_t id = 1; id <= kTests; ++id) {
    const auto& t = tests[static_cast<std::size_t>(id - 1)];
    const std::int64_t first = (id - 1) * 512, count = std::min<std::int64_t>(512, 2100 - first);
    EXPECT_EQ(t["id"], id);
    EXPECT_EQ(t["shape"], (nlohmann::json{count, kHeads, kHeadDim}));
    EXPECT_EQ(t["input"], (nlohmann::json{{"tensor", tensor_name(id, "input")}}));
    EXPECT_EQ(t["expected"], (nlohmann::json{{"tensor", tensor_name(id, "expected")}}));
    EXPECT_EQ(t["positions"][0], first);
    EXPECT_EQ(t["positions"].back(), first + count - 1);
  }

  // The sidecar: the tensors a candidate reads, the expected values within 1 ulp of the recipe's.
  const TensorMap arrays = sidecar_tensors();
  EXPECT_EQ(arrays.at("suite").text, "my-suite");  // __metadata__ entries, as the reader names them
  EXPECT_EQ(arrays.at("spec").text, to_string(parse_spec(kSpec)));
  double worst = 0;
  for (std::int64_t id = 1; id <= kTests; ++id) {
    const Tensor& input = arrays.at(tensor_name(id, "input"));
    const Tensor& positions = arrays.at(tensor_name(id, "positions"));
    const Tensor& expected = arrays.at(tensor_name(id, "expected"));
    EXPECT_EQ(input.dtype, "F32");
    EXPECT_EQ(positions.dtype, "I64");
    EXPECT_EQ(expected.dtype, "F32");
    EXPECT_EQ(input.shape, tests[static_cast<std::size_t>(id - 1)]["shape"].get<std::vector<std::int64_t>>());
    EXPECT_EQ(positions.values.front(), static_cast<double>((id - 1) * 512));
    for (double x : input.values) EXPECT_TRUE(x >= -2 && x < 2) << x;
    const std::vector<std::int64_t> p(positions.values.begin(), positions.values.end());
    const std::vector<double> mine = testing_recipe::rotate(recipe(), p, kHeads, input.values);
    ASSERT_EQ(mine.size(), expected.values.size());
    for (std::size_t i = 0; i < mine.size(); ++i) worst = std::max(worst, ulps_apart(mine[i], expected.values[i]));
  }
  EXPECT_LE(worst, 1) << "expected values differ from the long double recipe";

  for (const char* command : {" golden lint ", " golden verify "}) {
    const Ran r = run(kBin + command + json, dir);
    EXPECT_EQ(r.code, 0) << command << r.out << r.err;
    EXPECT_NE(r.out.find(": ok"), std::string::npos) << r.out;
  }
  const Ran kernels = run(kBin + " run --impl auto --golden " + json + " --json " + (dir / "run.json"), dir);
  EXPECT_EQ(kernels.code, 0) << kernels.out << kernels.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "run.json"))["groups"][0]["tests"], kTests);

  // check --golden with the recipe's outputs passes; one value flipped fails that test alone.
  std::vector<OutTensor> outputs = recipe_outputs(arrays);
  const Ran good = check_candidate("candidate.safetensors", outputs);
  EXPECT_EQ(good.code, 0) << good.out << good.err;
  outputs[3].values[100 * kHeads * kHeadDim + 3 * kHeadDim + 7] *= -1;  // test 4, token 100, head 3, dim 7
  const Ran bad = check_candidate("flipped.safetensors", outputs);
  EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
  const auto report = nlohmann::json::parse(slurp(dir / "check.json"));
  EXPECT_EQ(failed_tests(report), (std::set<std::int64_t>{4}));
  ASSERT_FALSE(report["groups"][0]["worst_cases"].empty());
  EXPECT_EQ(report["groups"][0]["worst_cases"][0]["position"], 3 * 512 + 100);
  EXPECT_EQ(report["groups"][0]["worst_cases"][0]["head"], 3);

  // export refuses a sidecar suite, saying where its inputs already are.
  expect_one_line_error(run(kBin + " golden export --golden " + json + " --format npz --out " + (dir / "x.npz"), dir),
                        {"my-suite.json", "sidecar", "my-suite.safetensors"}, "export of a sidecar suite");
  EXPECT_FALSE(fs::exists(dir / "x.npz"));
}

// A sidecar suite's tests are judged on the threads while the next one is read (runner/
// golden_run.cpp): a suite whose tests pass, fail, are missing and are flipped gives the same
// verdicts, and the same report bytes, on one thread and on three, with and without
// --allow-missing.
TEST_F(CustomSuite, SidecarTestsInEveryStateSameReportOnAnyThreadCount) {
  ASSERT_EQ(generate(json).code, 0);
  std::vector<OutTensor> outputs = recipe_outputs(sidecar_tensors());
  outputs[2].values[7 * kHeads * kHeadDim + 5] += 1;  // test 3 fails, token 7
  for (double& v : outputs[4].values) v = -v;           // test 5 fails everywhere
  outputs.erase(outputs.begin() + 1);                   // test 2 missing
  spit(dir / "mixed.safetensors", encode_safetensors(outputs));
  for (const std::string missing : {"", " --allow-missing"}) {
    std::string first;
    for (const std::string threads : {" --threads 1", " --threads 3"}) {
      const std::string report = dir / ("mixed" + threads.substr(11) + ".json");
      const Ran r = run(kBin + " check --golden " + json + " --candidate " + (dir / "mixed.safetensors") + threads + missing +
                            " --json " + report,
                        dir);
      EXPECT_EQ(r.code, 1) << threads << missing << "\n" << r.out << r.err;
      const auto j = nlohmann::json::parse(slurp(report));
      EXPECT_EQ(failed_tests(j), missing.empty() ? (std::set<std::int64_t>{2, 3, 5}) : (std::set<std::int64_t>{3, 5}))
          << threads << missing;
      EXPECT_EQ(j["groups"][0]["tests"], kTests) << threads << missing;
      // The diagnosis reads the worst test's sample: test 5 (every value negated), offered after it
      // was judged, though it is the last one; test 3's one wrong value would not be a negation.
      const std::string explanation = j["groups"][0]["diagnosis"]["explanation"];
      EXPECT_NE(explanation.find("negation"), std::string::npos) << explanation;
      if (first.empty()) {
        first = slurp(report);
      } else {
        EXPECT_TRUE(first == slurp(report)) << "reports differ between thread counts" << missing;
      }
    }
  }
}

// A failing sidecar suite is diagnosed too, though its tests are bigger than what the diagnosis
// keeps (2^20 values, sampled at a stride over the tokens): two tests of 2100 tokens x 8 heads x 64
// (1 075 200 values each), the first one right, the second with the sine's sign flipped — the
// worst test's sample is the one that names the mistake.
TEST_F(CustomSuite, BigFailingSidecarTestIsDiagnosed) {
  const Ran made = run(kBin + " golden generate --spec " + kSpec + " --positions 0:4200 --tokens 2100 --heads 8 --out " + json, dir);
  ASSERT_EQ(made.code, 0) << made.out << made.err;
  const TensorMap arrays = sidecar_tensors();
  std::vector<OutTensor> outputs;
  for (std::int64_t id = 1; id <= 2; ++id) {
    const Tensor& input = arrays.at(tensor_name(id, "input"));
    ASSERT_GT(input.values.size(), std::size_t{1} << 20);
    const Tensor& positions = arrays.at(tensor_name(id, "positions"));
    Recipe r = recipe();
    r.flip_sin = id == 2;
    outputs.push_back({tensor_name(id, "output"), "F32", input.shape,
                       testing_recipe::rotate(r, std::vector<std::int64_t>(positions.values.begin(), positions.values.end()),
                                              kHeads, input.values),
                       {}});
  }
  const Ran ran = check_candidate("candidate.safetensors", outputs);
  EXPECT_EQ(ran.code, 1) << ran.out << ran.err;
  const auto report = nlohmann::json::parse(slurp(dir / "check.json"));
  EXPECT_EQ(failed_tests(report), (std::set<std::int64_t>{2}));
  const auto& diagnosis = report["groups"][0]["diagnosis"];
  ASSERT_TRUE(diagnosis.is_object()) << report["groups"][0];
  ASSERT_TRUE(diagnosis["mistake"].is_string()) << diagnosis;
  EXPECT_NE(diagnosis["mistake"].get<std::string>().find("sign flipped"), std::string::npos) << diagnosis;
}

// The expected values of a test equal `ropecheck apply` on that test's input and positions.
TEST_F(CustomSuite, ExpectedValuesAreWhatApplyPrints) {
  ASSERT_EQ(generate(json).code, 0);
  const TensorMap arrays = sidecar_tensors();
  const Tensor& input = arrays.at(tensor_name(5, "input"));  // the short last test: tokens 2048..2099
  spit(dir / "in5.npy", encode_npy({"", "F32", input.shape, input.values, {}}));
  const Ran r = run(kBin + " apply --spec " + kSpec + " --positions 2048:2100 --input " + (dir / "in5.npy"), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  std::string expected;
  for (double v : arrays.at(tensor_name(5, "expected")).values) expected += reference::to_hex(v) + "\n";
  EXPECT_EQ(r.out, expected);
}

// Same arguments, same bytes, on any number of threads (each generates its slice of a test's
// stream); another seed, other inputs; below the threshold, arrays inline.
TEST_F(CustomSuite, DeterministicAndInlineBelowTheThreshold) {
  ASSERT_EQ(generate(json).code, 0);
  for (const char* threads : {"--threads 1", "--threads 3"}) {
    fs::remove_all(dir / "again");
    fs::create_directory(dir / "again");
    ASSERT_EQ(generate(dir / "again/my-suite.json", threads).code, 0);
    EXPECT_EQ(slurp(json), slurp(dir / "again/my-suite.json")) << threads;
    EXPECT_TRUE(slurp(sidecar) == slurp(dir / "again/my-suite.safetensors")) << "sidecars differ with " << threads;
  }
  fs::create_directory(dir / "seed2");
  ASSERT_EQ(generate(dir / "seed2/my-suite.json", "--seed 2").code, 0);
  EXPECT_FALSE(slurp(sidecar) == slurp(dir / "seed2/my-suite.safetensors"));

  const Ran small = run(kBin + " golden generate --spec " + kSpec + " --positions 0:10 --tokens 4 --heads 2 --out " +
                            (dir / "small-suite.json"),
                        dir);
  ASSERT_EQ(small.code, 0) << small.err;
  EXPECT_FALSE(fs::exists(dir / "small-suite.safetensors"));
  const golden::GoldenFile file = golden::read_golden_file(dir / "small-suite.json");
  EXPECT_TRUE(file.sidecar.empty());
  ASSERT_EQ(file.groups[0].rope_tests.size(), 3u);  // 4 + 4 + 2 tokens
  for (const golden::RopeTest& t : file.groups[0].rope_tests) {
    EXPECT_FALSE(t.sidecar.has_value());
    ASSERT_EQ(t.input.size(), static_cast<std::size_t>(t.tokens * 2 * kHeadDim));
    const std::vector<double> mine = testing_recipe::rotate(recipe(), t.positions, 2, t.input);
    for (std::size_t i = 0; i < mine.size(); ++i) EXPECT_LE(ulps_apart(mine[i], t.expected[i]), 1) << "test " << t.id << " value " << i;
  }
  for (const char* command : {" golden lint ", " golden verify ", " run --impl auto --golden "}) {
    const Ran r = run(kBin + command + (dir / "small-suite.json"), dir);
    EXPECT_EQ(r.code, 0) << command << r.out << r.err;
  }
}

// An existing suite is replaced only with --force; refused, both files keep their bytes.
TEST_F(CustomSuite, ForceIsNeededToReplaceAndARefusalChangesNothing) {
  ASSERT_EQ(generate(json).code, 0);
  const std::string json_bytes = slurp(json), sidecar_bytes = slurp(sidecar);
  expect_one_line_error(generate(json, "--seed 2"), {"my-suite.json", "--force"}, "existing JSON");
  EXPECT_EQ(slurp(json), json_bytes);
  EXPECT_TRUE(slurp(sidecar) == sidecar_bytes);
  // Only the sidecar is there: still refused, naming it.
  fs::remove(json);
  expect_one_line_error(generate(json, "--seed 2"), {"my-suite.safetensors", "--force"}, "existing sidecar");
  EXPECT_FALSE(fs::exists(json));
  EXPECT_TRUE(slurp(sidecar) == sidecar_bytes);
  const Ran forced = generate(json, "--seed 2 --force");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_FALSE(slurp(sidecar) == sidecar_bytes);
  EXPECT_EQ(run(kBin + " golden verify " + json, dir).code, 0);
}

// Arguments a golden file cannot hold are refused before anything is written.
TEST_F(CustomSuite, BadArgumentsAreOneLineAndWriteNothing) {
  const std::string gen = kBin + " golden generate --spec " + kSpec;
  // Golden positions are >= 0 (the format's range): a negative one would make a file no reader takes.
  expect_one_line_error(run(gen + " --positions -3:3 --tokens 4 --out " + (dir / "neg.json"), dir), {"--positions", ">= 0", "-3"},
                        "negative position");
  EXPECT_FALSE(fs::exists(dir / "neg.json"));
  expect_one_line_error(run(gen + " --positions 0:10 --tokens 0 --out " + (dir / "t.json"), dir), {"--tokens"}, "tokens 0");
  expect_one_line_error(run(gen + " --positions 0:10 --tokens 4 --heads 0 --out " + (dir / "t.json"), dir), {"--heads"}, "heads 0");
  expect_one_line_error(run(gen + " --positions 0:10 --tokens 4 --out " + (dir / "t.npz"), dir), {"--out", ".json"}, "not .json");
  expect_one_line_error(run(gen + " --positions 0:10 --tokens 4 --out " + (dir / "Bad_Name.json"), dir), {"--out", "Bad_Name"},
                        "not a suite name");
  expect_one_line_error(run(gen + " --positions 10:0 --tokens 4 --out " + (dir / "t.json"), dir), {"--positions"}, "STOP < START");
  expect_one_line_error(run(kBin + " golden generate --positions 0:10 --tokens 4 --out " + (dir / "t.json"), dir), {"--positions", "--spec"},
                        "no spec");
  EXPECT_FALSE(fs::exists(dir / "t.json"));
}

// A big .npy or safetensors candidate (over 2^24 bytes) is read a test at a time: the same verdicts
// as a small file. The file is made big by a tensor of zeros no test reads, written in pieces.
TEST_F(CustomSuite, BigCandidateIsReadLazilyWithTheSameVerdicts) {
  const Ran small = run(kBin + " golden generate --spec " + kSpec + " --positions 0:40 --tokens 8 --heads 2 --out " +
                            (dir / "lazy-suite.json"),
                        dir);
  ASSERT_EQ(small.code, 0) << small.err;
  const golden::GoldenFile file = golden::read_golden_file(dir / "lazy-suite.json");
  for (const bool flip : {false, true}) {
    std::vector<TensorLayout> layout;
    std::vector<std::vector<double>> values;
    for (const golden::RopeTest& t : file.groups[0].rope_tests) {
      layout.push_back({"lazy-suite/" + std::to_string(t.id) + "/output", "F32", {t.tokens, t.heads, t.head_dim}});
      values.push_back(testing_recipe::rotate(recipe(), t.positions, t.heads, t.input));
    }
    if (flip) values[2][5] = -values[2][5] + 1;  // test 3
    const std::int64_t padding = (std::int64_t{1} << 24) / 8 + 1;  // F64 values: just over 2^24 bytes
    layout.push_back({"padding", "F64", {padding}});
    const std::string path = dir / "big.safetensors";
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      const std::string header = safetensors_header(layout);
      out.write(header.data(), static_cast<std::streamsize>(header.size()));
      for (const auto& v : values) {
        const std::string bytes = encode_values("F32", v);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      }
      const std::string zeros(std::size_t{1} << 20, '\0');
      for (std::int64_t left = padding * 8; left > 0; left -= static_cast<std::int64_t>(zeros.size())) {
        out.write(zeros.data(), static_cast<std::streamsize>(std::min<std::int64_t>(left, static_cast<std::int64_t>(zeros.size()))));
      }
    }
    ASSERT_GT(fs::file_size(path), std::uintmax_t{1} << 24);
    const Ran r = run(kBin + " check --golden " + (dir / "lazy-suite.json") + " --candidate " + path + " --json " + (dir / "lazy.json"), dir);
    EXPECT_EQ(r.code, flip ? 1 : 0) << r.out << r.err;
    if (flip) {
      EXPECT_EQ(failed_tests(nlohmann::json::parse(slurp(dir / "lazy.json"))), (std::set<std::int64_t>{3}));
    }
    fs::remove(path);
  }
}

// ---------------------------------------------------------------------------------------------
// Hostile sidecars: a tiny suite written here (two tests of 2 tokens x 1 head x 8, f32), then
// broken one way at a time. Every reader refuses it with one line naming what, exit 2.

struct HostileSidecar : ::testing::Test {
  TempDir dir;
  Spec spec = parse_spec("layout=half,head_dim=8,base=10000,dtype=f32");
  golden::GoldenFile file;
  std::vector<OutTensor> arrays;  // of the sidecar

  void SetUp() override {
    file.suite = "tiny";
    file.description = "a sidecar suite made by hand";
    file.sidecar = "tiny.safetensors";
    golden::Group group;
    group.spec = spec;
    for (std::int64_t id = 1; id <= 2; ++id) {
      golden::RopeTest t;
      t.id = id;
      t.comment = "test " + std::to_string(id);
      t.tokens = 2;
      t.heads = 1;
      t.head_dim = 8;
      t.positions = {id * 10, id * 10 + 1};
      t.sidecar = golden::RopeTest::SidecarArrays{"tiny/" + std::to_string(id) + "/input", "tiny/" + std::to_string(id) + "/expected"};
      const std::vector<double> input = testing_recipe::draw(16, Dtype::f32, static_cast<std::uint64_t>(id));
      arrays.push_back({t.sidecar->input, "F32", {2, 1, 8}, input, {}});
      arrays.push_back({t.sidecar->expected, "F32", {2, 1, 8}, reference::apply(spec, {2, 1, 8}, t.positions, input), {}});
      group.rope_tests.push_back(std::move(t));
    }
    file.groups.push_back(std::move(group));
    file.number_of_tests = 2;
    // A candidate that answers both tests (the expected values themselves).
    spit(dir / "candidate.safetensors",
         encode_safetensors({{"tiny/1/output", "F32", {2, 1, 8}, arrays[1].values, {}}, {"tiny/2/output", "F32", {2, 1, 8}, arrays[3].values, {}}}));
  }
  void write(const std::string& json_text, const std::vector<OutTensor>& tensors) {
    spit(dir / "tiny.json", json_text);
    spit(dir / "tiny.safetensors", encode_safetensors(tensors));
  }
  // Every reader of the suite: verify, run and check must each refuse with one line holding `words`.
  void expect_refused_everywhere(const std::vector<std::string>& words, const std::string& what) {
    const std::string json = dir / "tiny.json";
    expect_one_line_error(run(kBin + " golden verify " + json, dir), words, what + " (verify)");
    expect_one_line_error(run(kBin + " run --impl auto --golden " + json + " --json " + (dir / "r.json"), dir), words, what + " (run)");
    expect_one_line_error(run(kBin + " check --golden " + json + " --candidate " + (dir / "candidate.safetensors") + " --json " +
                                  (dir / "r.json"),
                              dir),
                          words, what + " (check)");
    EXPECT_FALSE(fs::exists(dir / "r.json")) << what;
    // lint reports it too (as a problem: exit 1), never "ok".
    const Ran lint = run(kBin + " golden lint " + json, dir);
    EXPECT_NE(lint.code, 0) << what << " (lint)\n" << lint.out << lint.err;
  }
};

TEST_F(HostileSidecar, TheWellFormedOnePasses) {
  write(golden::write_golden(file), arrays);
  for (const char* command : {" golden lint ", " golden verify ", " run --impl auto --golden "}) {
    const Ran r = run(kBin + command + (dir / "tiny.json"), dir);
    EXPECT_EQ(r.code, 0) << command << r.out << r.err;
  }
  const Ran c = run(kBin + " check --golden " + (dir / "tiny.json") + " --candidate " + (dir / "candidate.safetensors"), dir);
  EXPECT_EQ(c.code, 0) << c.out << c.err;
}

// The message names the JSON (the file the user ran the command on) and the sidecar it points to.
TEST_F(HostileSidecar, MissingSidecarFile) {
  spit(dir / "tiny.json", golden::write_golden(file));
  expect_refused_everywhere({"tiny.json", "sidecar.file", "tiny.safetensors"}, "no sidecar file");
}

TEST_F(HostileSidecar, SidecarIsAFolder) {
  spit(dir / "tiny.json", golden::write_golden(file));
  fs::create_directory(dir / "tiny.safetensors");
  expect_refused_everywhere({"tiny.json", "tiny.safetensors", "folder"}, "sidecar a folder");
}

TEST_F(HostileSidecar, TensorMissing) {
  std::vector<OutTensor> tensors = arrays;
  tensors[3].name = "tiny/2/expectd";
  write(golden::write_golden(file), tensors);
  expect_refused_everywhere({"tiny.safetensors", "tiny/2/expected"}, "tensor missing");
}

TEST_F(HostileSidecar, WrongElementCount) {
  std::vector<OutTensor> tensors = arrays;
  tensors[2].values.resize(15);
  tensors[2].shape = {15};
  write(golden::write_golden(file), tensors);
  expect_refused_everywhere({"tiny.safetensors", "tiny/2/input", "16"}, "15 values for 16");
}

TEST_F(HostileSidecar, WrongShapeOfTheRightCount) {
  std::vector<OutTensor> tensors = arrays;
  tensors[0].shape = {1, 2, 8};
  write(golden::write_golden(file), tensors);
  expect_refused_everywhere({"tiny.safetensors", "tiny/1/input", "shape"}, "shape [1, 2, 8] for [2, 1, 8]");
}

TEST_F(HostileSidecar, WrongDtype) {
  std::vector<OutTensor> tensors = arrays;
  tensors[1].dtype = "F64";  // f32 values, stored wider: not the group's dtype (schema: sidecarTensor)
  write(golden::write_golden(file), tensors);
  expect_refused_everywhere({"tiny.safetensors", "tiny/1/expected", "F32", "F64"}, "F64 tensor");
  tensors = arrays;
  tensors[0].dtype = "I64";
  for (double& v : tensors[0].values) v = std::round(v * 4);
  write(golden::write_golden(file), tensors);
  expect_refused_everywhere({"tiny.safetensors", "tiny/1/input", "F32", "I64"}, "I64 tensor");
}

TEST_F(HostileSidecar, ValuesNotOfTheSpecsDtype) {
  // An f16 spec whose sidecar holds float32 values (0.1f is no f16 value).
  golden::GoldenFile f16 = file;
  f16.groups[0].spec = parse_spec("layout=half,head_dim=8,base=10000,dtype=f16");
  std::vector<OutTensor> tensors = arrays;
  for (OutTensor& t : tensors) {
    t.dtype = "F16";
    for (double& v : t.values) v = reference::round_to_format(v, Dtype::f16);
  }
  tensors[2].dtype = "F32";
  tensors[2].values[0] = static_cast<double>(0.1f);
  write(golden::write_golden(f16), tensors);
  expect_refused_everywhere({"tiny.safetensors", "tiny/2/input"}, "f32 values in an f16 suite");
}

TEST_F(HostileSidecar, SidecarFileOutsideTheFolderIsRefused) {
  for (const std::string& name : {std::string("../tiny.safetensors"), dir / "tiny.safetensors", std::string("sub/tiny.safetensors"),
                                  std::string(".."), std::string("")}) {
    SCOPED_TRACE(name);
    golden::GoldenFile f = file;
    f.sidecar = "tiny.safetensors";
    std::string text = golden::write_golden(f);
    const std::string quoted = "\"file\": \"tiny.safetensors\"";
    text.replace(text.find(quoted), quoted.size(), "\"file\": " + nlohmann::json(name).dump());
    write(text, arrays);
    expect_refused_everywhere({"tiny.json", "sidecar.file", "no '/'"}, "sidecar " + name);
  }
}

TEST_F(HostileSidecar, TensorReferenceWithoutSidecarIsRefused) {
  golden::GoldenFile f = file;
  f.sidecar.clear();  // the tests still name tensors
  write(golden::write_golden(f), arrays);
  expect_refused_everywhere({"tiny.json", "groups[0].tests[0].input", "no \"sidecar\""}, "tensor without sidecar");
}

TEST_F(HostileSidecar, OtherSidecarFormatIsRefused) {
  std::string text = golden::write_golden(file);
  const std::string format = "\"format\": \"safetensors\"";
  text.replace(text.find(format), format.size(), "\"format\": \"npz\"");
  write(text, arrays);
  expect_refused_everywhere({"tiny.json", "sidecar.format", "safetensors"}, "npz sidecar");
}

}  // namespace
}  // namespace ropecheck::gate
