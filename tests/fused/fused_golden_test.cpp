// Fused golden suites (golden/fused_golden.h, gate/commands/fused_golden_command.h): a suite
// generated for a fused spec is deterministic, carries the spec through fused::to_string, verifies
// against the exact reference; the careful float32 kernel of tests/fused/explain_kernel.h passes it
// and the same kernel with the q and k norm weights swapped fails it with that bug named; the
// reader refuses bad files with one message naming the field, and never throws anything else.
#include <cstdio>
#include <functional>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "fused/fused.h"
#include "gate/commands/fused_files.h"
#include "gate/commands/fused_golden_command.h"
#include "golden/fused_golden.h"
#include "tensorio/writers.h"
#include "tests/fused/explain_kernel.h"
#include "tests/gate/gate_test_support.h"

namespace ropecheck::gate {
namespace {

using fused::testing::Bugs;
using fused::testing::CarefulKernel;
using testing::slurp;
using testing::spit;
using testing::TempDir;

const char* kSpec =
    "layout=half,head_dim=64,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=per_token,destination=paged,block_size=8,"
    "q_heads=2,k_heads=1";

// What `action` prints, captured (and released when it throws).
std::string quietly(const std::function<void()>& action) {
  ::testing::internal::CaptureStdout();
  try {
    action();
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  return ::testing::internal::GetCapturedStdout();
}

// 20 positions up to 2^20, 8 a test: tests of 8, 8 and 4 tokens.
std::string generate(const TempDir& dir, const std::string& name, std::uint64_t seed = 5) {
  const std::string out = dir / (name + ".json");
  quietly([&] { generate_fused_suite({kSpec, "0:1048576:52429", out, "", 8, seed, false}); });
  return out;
}

// The candidate's outputs of every test of the suite, as `check --candidate` reads them.
std::string write_candidate(const TempDir& dir, const std::string& suite_path, const Bugs& bug, std::int64_t skip_id = 0) {
  const golden::FusedGoldenFile file = golden::read_fused_golden_file(suite_path);
  const fused::FusedSpec spec = fused::parse_fused_spec(file.spec);
  const tensorio::TensorMap sidecar = tensorio::parse_safetensors(golden::read_fused_sidecar(file), file.sidecar_path);
  std::vector<tensorio::OutTensor> tensors;
  for (const golden::FusedGoldenTest& t : file.tests) {
    if (t.id == skip_id) continue;
    const std::string prefix = golden::fused_input_prefix(file, t.id);
    const fused::FusedInputs in = read_fused_inputs(spec, FusedTensors(file.sidecar_path, sidecar, prefix));
    for (auto& out : fused_output_tensors(spec, in, CarefulKernel{spec, bug}.run(in), prefix)) tensors.push_back(std::move(out));
  }
  const std::string path = dir / "candidate.npz";
  spit(path, tensorio::encode_npz(tensors));
  return path;
}

struct Checked {
  int status = -1;
  std::string text;
};
Checked check(const std::string& suite, const std::string& candidate, bool allow_missing = false) {
  Checked c;
  c.text = quietly([&] { c.status = check_fused_golden(suite, candidate, judge::kDefaultModel, allow_missing); });
  return c;
}

TEST(FusedGolden, SameArgumentsSameBytes) {
  TempDir a, b;
  const std::string first = generate(a, "fused-suite"), second = generate(b, "fused-suite");
  EXPECT_EQ(slurp(first), slurp(second));
  EXPECT_EQ(slurp(a / "fused-suite.safetensors"), slurp(b / "fused-suite.safetensors"));
  TempDir c;
  generate(c, "fused-suite", 6);
  EXPECT_NE(slurp(a / "fused-suite.safetensors"), slurp(c / "fused-suite.safetensors"));  // another seed, other inputs
}

TEST(FusedGolden, CarriesTheSpecAndItsTests) {
  TempDir dir;
  const golden::FusedGoldenFile file = golden::read_fused_golden_file(generate(dir, "fused-suite"));
  EXPECT_EQ(file.spec, fused::to_string(fused::parse_fused_spec(kSpec)));
  ASSERT_EQ(file.tests.size(), 3u);
  EXPECT_EQ(file.tests[0].tokens, 8);
  EXPECT_EQ(file.tests[2].tokens, 4);
  EXPECT_EQ(file.tests[2].comment, "positions 838864 .. 996151");  // 16·52429 .. 19·52429
  EXPECT_EQ(golden::write_fused_golden(file), slurp(dir / "fused-suite.json"));
  int status = -1;
  EXPECT_NE(quietly([&] { status = verify_fused_golden(dir / "fused-suite.json"); }).find(": ok (3 tests,"), std::string::npos);
  EXPECT_EQ(status, 0);
}

TEST(FusedGolden, CarefulKernelPassesAndSwappedWeightsFailNamed) {
  TempDir dir;
  const std::string suite = generate(dir, "fused-suite");
  const Checked careful = check(suite, write_candidate(dir, suite, Bugs{}));
  EXPECT_EQ(careful.status, 0) << careful.text;
  EXPECT_NE(careful.text.find("fused suite fused-suite: PASS (3 tests)"), std::string::npos) << careful.text;
  EXPECT_EQ(careful.text.find("explanation:"), std::string::npos) << careful.text;

  const Checked swapped = check(suite, write_candidate(dir, suite, Bugs{.swap_weights = true}));
  EXPECT_EQ(swapped.status, 1) << swapped.text;
  EXPECT_NE(swapped.text.find("explanation: reproduced by the q and k norm weights swapped"), std::string::npos) << swapped.text;
  EXPECT_NE(swapped.text.find("fused suite fused-suite: FAIL (3 of 3 tests fail)"), std::string::npos) << swapped.text;
}

TEST(FusedGolden, MissingTestFailsUnlessAllowed) {
  TempDir dir;
  const std::string suite = generate(dir, "fused-suite");
  const std::string candidate = write_candidate(dir, suite, Bugs{}, 2);
  const Checked missing = check(suite, candidate);
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.text.find("fused-suite/2 (positions 419432 .. 786435): FAIL: missing (no fused-suite/2/q_out in"), std::string::npos)
      << missing.text;
  const Checked allowed = check(suite, candidate, true);
  EXPECT_EQ(allowed.status, 0) << allowed.text;
  EXPECT_NE(allowed.text.find("PASS (2 tests, 1 skipped)"), std::string::npos) << allowed.text;
}

// Each bad input: InputError or UsageError (exit 2 in the CLI) whose one line names the file, the field and what
// was expected.
void expect_refused(const std::function<void()>& action, const std::string& message) {
  const auto expect = [&](const std::string& what) {
    EXPECT_NE(what.find(message), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  };
  try {
    action();  // check() and generate() capture what they print
    ADD_FAILURE() << "not refused; expected: " << message;
  } catch (const InputError& e) {
    expect(e.what());
  } catch (const UsageError& e) {
    expect(e.what());
  }
}

TEST(FusedGolden, BadInputNamesFileFieldAndExpected) {
  TempDir dir;
  const std::string suite = generate(dir, "fused-suite");
  const std::string good = slurp(suite);
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    const std::string path = dir / "bad.json";
    spit(path, text);
    return path;
  };
  const std::string candidate = write_candidate(dir, suite, Bugs{});
  expect_refused([&] { check(with("\"number_of_tests\": 3", "\"number_of_tests\": 4"), candidate); },
                 "bad.json: tests: expected 4 tests (number_of_tests), got 3");
  expect_refused([&] { check(with("{\"id\": 2,", "{\"id\": 3,"), candidate); },
                 "bad.json: tests[1].id: expected an integer in [2, 2], got 3");
  expect_refused([&] { check(with("\"tokens\": 8}", "\"tokens\": 8, \"tokns\": 1}"), candidate); },
                 "bad.json: tests[0].tokns: expected one of the fields id, comment, tokens, got an unknown field");
  expect_refused([&] { check(with("\"number_of_tests\": 3,", "\"number_of_tests\": 3, \"number_of_tests\": 2,"), candidate); },
                 "number_of_tests: expected each key once, got it twice");
  expect_refused([&] { check(with("norm=before", "norm=beside"), candidate); }, "bad.json: spec: spec field 'norm'");
  expect_refused([&] { check(with("\"sha256\": \"sha256:", "\"sha256\": \"sha256:0"), candidate); }, "bad.json: sidecar.sha256: expected");
  expect_refused([&] { check(with("\"tokens\": 4}", "\"tokens\": 5}"), candidate); },
                 "fused-suite/3/positions: expected 5 tokens (tests[2].tokens of");
  // Another sidecar's bytes: the hash names both.
  spit(dir / "fused-suite.safetensors", slurp(dir / "fused-suite.safetensors") + " ");
  expect_refused([&] { check(suite, candidate); }, "fused-suite.json: sidecar.sha256: expected");
}

TEST(FusedGolden, CandidateOfAnotherShapeIsRefused) {
  TempDir dir;
  const std::string suite = generate(dir, "fused-suite");
  std::vector<tensorio::OutTensor> tensors = {{"fused-suite/1/q_out", "F32", {3}, {0, 0, 0}, {}}};
  spit(dir / "small.npz", tensorio::encode_npz(tensors));
  expect_refused([&] { check(suite, dir / "small.npz"); }, "small.npz: fused-suite/1/k_cache: expected a tensor");
  expect_refused(
      [&] {
        generate_fused_suite({kSpec, "", dir / "fused-suite.json", "", 8, 1, false});
      },
      "fused-suite.json: expected a new file, got an existing one (use --force to replace it)");
  expect_refused(
      [&] {
        generate_fused_suite({"head_dim=64,norm=sideways", "", dir / "x.json", "", 8, 1, false});
      },
      "--fused: spec field 'norm'");
}

// Truncations and byte corruptions of a valid file: parse_fused_golden either accepts the text or
// throws GoldenError, never anything else (as tests/golden/format_test.cpp's reader test).
TEST(FusedGolden, ReaderNeverThrowsAnythingElseOnCorruptedInput) {
  TempDir dir;
  const std::string good = slurp(generate(dir, "fused-suite"));
  std::mt19937 random(7);
  int rejected = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string text = good;
    if (i % 3 == 0) {
      text.resize(random() % text.size());
    } else {
      for (int e = 0, edits = 1 + static_cast<int>(random() % 4); e < edits; ++e) {
        text[random() % text.size()] = static_cast<char>(i % 3 == 1 ? "0123456789.,:[]{}\"-xpe"[random() % 22] : random());
      }
    }
    EXPECT_NO_THROW((void)golden::is_fused_golden(text));
    try {
      const golden::FusedGoldenFile f = golden::parse_fused_golden(text, "fuzz.json");
      EXPECT_EQ(golden::write_fused_golden(golden::parse_fused_golden(golden::write_fused_golden(f), "again.json")),
                golden::write_fused_golden(f));
    } catch (const golden::GoldenError&) {
      ++rejected;
    } catch (const std::exception& e) {
      FAIL() << "non-GoldenError exception: " << e.what();
    }
  }
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace ropecheck::gate
