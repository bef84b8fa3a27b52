// The direct check of the user's own tensors: runner/tensor_judge.h TensorJudge in the
// process and `ropecheck check --spec ... --positions ... --input ... --candidate ...` end to end.
// Candidates come from tests/gate/rope_recipe.h (long double, from docs/rope.md's formula), never from
// the code under test; the mistakes are planted in them on purpose and must be caught and named.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <numeric>

#include "base/errors.h"
#include "base/parallel.h"
#include "gate_test_support.h"
#include "rope_recipe.h"
#include "runner/tensor_judge.h"
#include "tensorio/readers.h"

namespace ropecheck::gate {
namespace {

using namespace testing;
using testing_recipe::Recipe;

const std::string kBin = ROPECHECK_BIN;
const std::string kSpec = "layout=half,head_dim=64,base=10000,dtype=f32";
constexpr std::int64_t kHeads = 2;

Recipe recipe_for_spec() {
  Recipe r;
  r.half = true;
  r.head_dim = r.rotary_dim = 64;
  r.base = 10000;
  r.dtype = Dtype::f32;
  return r;
}

// 48 tokens at positions 0, 100, ..., 4700: enough pairs and angles for the diagnosis to tell
// the usual mistakes apart.
std::vector<std::int64_t> positions_of_range(std::int64_t start, std::int64_t stop, std::int64_t step) {
  std::vector<std::int64_t> p;
  for (std::int64_t x = start; x < stop; x += step) p.push_back(x);
  return p;
}
const std::string kPositions = "0:4800:100";

struct Planted {
  const char* name;
  void (*plant)(Recipe&);
  const char* mistake;  // what the diagnosis must say reproduces the outputs
};
const Planted kPlanted[] = {
    {"sin_sign", [](Recipe& r) { r.flip_sin = true; }, "sign flipped"},
    {"position_plus_one", [](Recipe& r) { r.position_shift = 1; }, "positions offset by +1"},
    {"layout_swapped", [](Recipe& r) { r.swap_layout = true; }, "layout=interleaved"},
};

std::string npy(const TempDir& dir, const std::string& name, const std::vector<double>& values, std::int64_t tokens,
                std::int64_t heads, std::int64_t head_dim, const std::string& dtype = "F32") {
  spit(dir / name, encode_npy({"", dtype, {tokens, heads, head_dim}, values, {}}));
  return dir / name;
}

struct DirectFixture : ::testing::Test {
  TempDir dir;
  Spec spec = parse_spec(kSpec);
  std::vector<std::int64_t> positions = positions_of_range(0, 4800, 100);
  std::int64_t tokens = static_cast<std::int64_t>(positions.size());
  std::vector<double> input = testing_recipe::draw(static_cast<std::size_t>(tokens * kHeads * 64), Dtype::f32);

  judge::GroupResult judge_in_process(const std::vector<double>& output) {
    return runner::judge_tensors(spec, kHeads, positions, input, output, judge::Settings{}, "tensors");
  }
  Ran check(const std::string& input_path, const std::string& candidate, const std::string& extra = "",
            const std::string& spec_option = "--spec " + kSpec) {
    return run(kBin + " check " + spec_option + " --positions " + kPositions + " --input " + input_path + " --candidate " +
                   candidate + " --json " + (dir / "report.json") + " " + extra,
               dir);
  }
  nlohmann::json report() { return nlohmann::json::parse(slurp(dir / "report.json")); }
};

void expect_one_line_error(const Ran& r, const std::vector<std::string>& words, const std::string& what) {
  EXPECT_EQ(r.code, 2) << what << "\n" << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << "\n" << r.err;
  for (const std::string& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << what << ": no '" << w << "' in " << r.err;
}

TEST_F(DirectFixture, IndependentCandidatePassesInProcessAndThroughTheCli) {
  const std::vector<double> output = testing_recipe::rotate(recipe_for_spec(), positions, kHeads, input);
  const judge::GroupResult g = judge_in_process(output);
  EXPECT_EQ(g.verdict, ropecheck::judge::Verdict::pass);
  EXPECT_EQ(g.pairs_checked, tokens * kHeads * 32);  // every pair judged, none left out
  EXPECT_LE(g.worst_e, 4);
  EXPECT_EQ(g.max_position, 4700);
  const Ran r = check(npy(dir, "in.npy", input, tokens, kHeads, 64), npy(dir, "out.npy", output, tokens, kHeads, 64));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const auto rep = report();
  const auto& group = rep["groups"][0];
  EXPECT_EQ(group["verdict"], "pass");
  EXPECT_EQ(group["pairs_checked"], g.pairs_checked);
  EXPECT_EQ(group["spec"], to_string(spec));
}

// Each planted mistake fails, in the process and through the CLI alike (same worst e, same worst
// case), and the diagnosis names it.
TEST_F(DirectFixture, PlantedMistakesFailAndTheDiagnosisNamesThem) {
  const std::string in = npy(dir, "in.npy", input, tokens, kHeads, 64);
  for (const Planted& planted : kPlanted) {
    SCOPED_TRACE(planted.name);
    Recipe r = recipe_for_spec();
    planted.plant(r);
    const std::vector<double> output = testing_recipe::rotate(r, positions, kHeads, input);
    const judge::GroupResult g = judge_in_process(output);
    EXPECT_EQ(g.verdict, ropecheck::judge::Verdict::fail);
    ASSERT_TRUE(g.diagnosis.has_value());
    EXPECT_NE(g.diagnosis->mistake.find(planted.mistake), std::string::npos) << g.diagnosis->mistake;
    ASSERT_FALSE(g.worst.empty());

    const Ran ran = check(in, npy(dir, std::string(planted.name) + ".npy", output, tokens, kHeads, 64));
    EXPECT_EQ(ran.code, 1) << ran.out << ran.err;
    const auto rep = report();
    const auto& group = rep["groups"][0];
    EXPECT_EQ(group["verdict"], "fail");
    EXPECT_EQ(group["worst_e"].get<double>(), g.worst_e);
    EXPECT_EQ(group["pairs_failed"], g.pairs_failed);
    EXPECT_EQ(group["worst_cases"][0]["token"], g.worst[0].token);
    EXPECT_EQ(group["worst_cases"][0]["position"], g.worst[0].position);
    EXPECT_NE(group["diagnosis"]["mistake"].get<std::string>().find(planted.mistake), std::string::npos) << group["diagnosis"];
    EXPECT_NE(ran.out.find(planted.mistake), std::string::npos) << "the printed table's diagnosis\n" << ran.out;
  }
}

// .npy and safetensors floating-point tensors are mapped and read in place, a safetensors tensor at
// an offset not aligned to its width is read in chunks; npz and JSON are read whole, choosing the
// tensor "input" / "output" or the only one. Every format and route gives the same group, figures,
// cases and diagnosis, for the same values, in f32, bf16 and f16 storage.
TEST_F(DirectFixture, EveryFileFormatGivesTheSameVerdict) {
  Recipe wrong = recipe_for_spec();
  wrong.flip_sin = true;
  for (const bool bad : {false, true}) {
    SCOPED_TRACE(bad ? "sign flipped" : "correct");
    const std::vector<double> output = testing_recipe::rotate(bad ? wrong : recipe_for_spec(), positions, kHeads, input);
    const std::vector<std::int64_t> shape{tokens, kHeads, 64};
    const std::string tag = bad ? "bad" : "good";
    spit(dir / (tag + "_in.safetensors"), encode_safetensors({{"q", "F32", shape, input, {}}}));
    spit(dir / (tag + "_out.safetensors"), encode_safetensors({{"q_rotated", "F32", shape, output, {}}}));
    // Both tensors in one npz: --input takes "input", --candidate "output".
    spit(dir / (tag + "_both.npz"), encode_npz({{"input", "F32", shape, input, {}}, {"output", "F32", shape, output, {}}}));
    spit(dir / (tag + "_only_out.npz"), encode_npz({{"rotated", "F32", shape, output, {}}}));
    nlohmann::json both = {{"input", input}, {"output", output}};
    spit(dir / (tag + "_both.json"), both.dump());
    // A 2-byte tensor first: "input" and "output" then start 2 bytes into the data (not 4-aligned).
    spit(dir / (tag + "_odd.safetensors"), encode_safetensors({{"a", "F16", {1}, {1.0}, {}}, {"input", "F32", shape, input, {}},
                                                               {"output", "F32", shape, output, {}}}));
    {
      const tensorio::TensorFile odd = tensorio::TensorFile::open(dir / (tag + "_odd.safetensors"), "output");
      ASSERT_NE(odd.find("output")->offset % 4, 0u) << "the odd file's tensor must sit off its alignment";
      ASSERT_FALSE(odd.map().has_value());
    }
    const std::vector<std::pair<std::string, std::string>> routes = {
        {npy(dir, tag + "_in.npy", input, tokens, kHeads, 64), npy(dir, tag + "_out.npy", output, tokens, kHeads, 64)},
        {dir / (tag + "_in.safetensors"), dir / (tag + "_out.safetensors")},
        {dir / (tag + "_both.npz"), dir / (tag + "_both.npz")},
        {dir / (tag + "_in.safetensors"), dir / (tag + "_only_out.npz")},
        {dir / (tag + "_both.json"), dir / (tag + "_both.json")},
        {dir / (tag + "_odd.safetensors"), dir / (tag + "_odd.safetensors")},
        {dir / (tag + "_in.safetensors"), dir / (tag + "_odd.safetensors")},
    };
    std::optional<nlohmann::json> first;
    for (const auto& [in, out] : routes) {
      SCOPED_TRACE(in + " / " + out);
      const Ran r = check(in, out);
      EXPECT_EQ(r.code, bad ? 1 : 0) << r.out << r.err;
      if (r.code > 1) continue;
      nlohmann::json group = report()["groups"][0];
      ASSERT_TRUE(group.contains("suite"));
      group.erase("suite");  // the candidate file's name
      if (first) {
        EXPECT_EQ(group, *first);
      } else {
        first = group;
        EXPECT_GT(group["pairs_checked"].get<std::int64_t>(), 0);
      }
    }
  }
  // 16-bit storage: mapped bf16 and f16 tensors (widened from their bit patterns) judge as the same
  // values held whole in an npz.
  for (const auto& [dtype, spec_dtype] : {std::pair<std::string, std::string>{"BF16", "bf16"}, {"F16", "f16"}}) {
    SCOPED_TRACE(dtype);
    const std::string spec16 = "layout=half,head_dim=64,base=10000,dtype=" + spec_dtype;
    Recipe r16 = recipe_for_spec();
    r16.dtype = spec_dtype == "bf16" ? Dtype::bf16 : Dtype::f16;
    const std::vector<double> input16 = testing_recipe::draw(input.size(), r16.dtype);
    const std::vector<double> output16 = testing_recipe::rotate(r16, positions, kHeads, input16);
    const std::vector<std::int64_t> shape{tokens, kHeads, 64};
    spit(dir / "in16.safetensors", encode_safetensors({{"q", dtype, shape, input16, {}}}));
    spit(dir / "out16.npy", encode_npy({"", dtype, shape, output16, {}}));
    spit(dir / "both16.npz", encode_npz({{"input", dtype, shape, input16, {}}, {"output", dtype, shape, output16, {}}}));
    ASSERT_TRUE(tensorio::TensorFile::open(dir / "out16.npy").map().has_value());
    std::optional<nlohmann::json> first;
    for (const auto& [in, out] : {std::pair<std::string, std::string>{dir / "in16.safetensors", dir / "out16.npy"},
                                  {dir / "both16.npz", dir / "both16.npz"}}) {
      SCOPED_TRACE(in);
      const Ran ran = check(in, out, "", "--spec " + spec16);
      EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
      nlohmann::json group = report()["groups"][0];
      group.erase("suite");
      if (first) EXPECT_EQ(group, *first);
      else first = group;
    }
  }
}

// Sizes that disagree are one line naming the file or option, exit 2, before any judging.
TEST_F(DirectFixture, MismatchedSizesAreOneLineNamingTheFileOrOption) {
  const std::vector<double> output = testing_recipe::rotate(recipe_for_spec(), positions, kHeads, input);
  const std::string in = npy(dir, "in.npy", input, tokens, kHeads, 64), out = npy(dir, "out.npy", output, tokens, kHeads, 64);
  // One token short of --positions' 48.
  const std::vector<double> short_input(input.begin(), input.end() - kHeads * 64);
  const std::string short_in = npy(dir, "short_in.npy", short_input, tokens - 1, kHeads, 64);
  expect_one_line_error(check(short_in, out), {"short_in.npy", "shape", "tokens 48", "head_dim 64"}, "input one token short");
  // Half a head more: not a whole number of heads.
  std::vector<double> ragged(input);
  ragged.resize(input.size() + 32, 0.5);
  expect_one_line_error(check(npy(dir, "ragged.npy", ragged, 1, 1, static_cast<std::int64_t>(ragged.size())), out),
                        {"ragged.npy", "shape"}, "input not whole heads");
  // The candidate one value short of the input.
  std::vector<double> short_output(output.begin(), output.end() - 1);
  const std::string short_out = npy(dir, "short_out.npy", short_output, 1, 1, static_cast<std::int64_t>(short_output.size()));
  expect_one_line_error(check(in, short_out), {"short_out.npy", "shape", std::to_string(output.size()), "in.npy"},
                        "candidate one value short");
  // --heads that does not divide the input's size.
  expect_one_line_error(check(in, out, "--heads 3"), {"in.npy", "heads 3"}, "--heads 3 of 2");
  expect_one_line_error(check(in, out, "--heads -1"), {"--heads"}, "--heads -1");
  // No --input, no --positions.
  expect_one_line_error(run(kBin + " check --spec " + kSpec + " --positions 0:48 --candidate " + out, dir), {"--input"}, "no --input");
  expect_one_line_error(run(kBin + " check --spec " + kSpec + " --input " + in + " --candidate " + out, dir), {"--positions"},
                        "no --positions");
  // npz of two tensors, neither named "output".
  spit(dir / "two.npz", encode_npz({{"a", "F32", {tokens, kHeads, 64}, output, {}}, {"b", "F32", {tokens, kHeads, 64}, output, {}}}));
  expect_one_line_error(check(in, dir / "two.npz"), {"two.npz", "output"}, "two tensors, none named output");
  // Nothing was written for any of them.
  EXPECT_FALSE(std::filesystem::exists(dir / "report.json"));
}

// --hf-config instead of --spec: the config's spec (Llama 2: half, head_dim 128, f16) is judged.
TEST_F(DirectFixture, HfConfigStandsForTheSpec) {
  const std::string config = std::string(ROPECHECK_SOURCE_DIR) + "/hfconfig/examples/llama-2-7b.json";
  Recipe r;
  r.half = true;
  r.head_dim = r.rotary_dim = 128;
  r.base = 10000;
  r.dtype = Dtype::f16;
  const std::int64_t heads = 3;
  const std::vector<double> in16 = testing_recipe::draw(static_cast<std::size_t>(tokens * heads * 128), Dtype::f16);
  const std::string in = npy(dir, "in16.npy", in16, tokens, heads, 128, "F16");
  const std::string out = npy(dir, "out16.npy", testing_recipe::rotate(r, positions, heads, in16), tokens, heads, 128, "F16");
  const Ran good = check(in, out, "", "--hf-config " + config);
  EXPECT_EQ(good.code, 0) << good.out << good.err;
  EXPECT_EQ(report()["groups"][0]["spec"], "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=f16,direction=forward,scaling=none");
  r.position_shift = -1;
  const std::string off = npy(dir, "off16.npy", testing_recipe::rotate(r, positions, heads, in16), tokens, heads, 128, "F16");
  const Ran bad = check(in, off, "", "--hf-config " + config);
  EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
  EXPECT_NE(report()["groups"][0]["diagnosis"]["mistake"].get<std::string>().find("positions offset by -1"), std::string::npos)
      << report()["groups"][0]["diagnosis"];
}

// TensorJudge takes chunks of any size: a mistake in the last chunk only is caught, and its cases
// name the token over all chunks (not within its chunk).
TEST_F(DirectFixture, ChunksInTheProcessNameGlobalTokens) {
  std::vector<double> output = testing_recipe::rotate(recipe_for_spec(), positions, kHeads, input);
  const std::int64_t bad_token = tokens - 2, token_size = kHeads * 64;
  output[static_cast<std::size_t>(bad_token * token_size + 64 + 5)] += 0.25;  // head 1, dim 5
  runner::TensorJudge judge(spec, kHeads, {}, "chunks");
  for (std::int64_t t = 0; t < tokens; t += 7) {
    const std::int64_t n = std::min<std::int64_t>(7, tokens - t);
    judge.add(std::span(positions).subspan(static_cast<std::size_t>(t), static_cast<std::size_t>(n)),
              std::span(input).subspan(static_cast<std::size_t>(t * token_size), static_cast<std::size_t>(n * token_size)),
              std::span(output).subspan(static_cast<std::size_t>(t * token_size), static_cast<std::size_t>(n * token_size)));
  }
  const judge::GroupResult g = judge.finish();
  EXPECT_EQ(g.verdict, ropecheck::judge::Verdict::fail);
  EXPECT_EQ(g.pairs_failed, 1);
  // The tensor is one test, however many chunks it came in (7 here): one outcome, failed.
  EXPECT_EQ(g.tests, 1);
  EXPECT_EQ(g.tests_failed, 1);
  EXPECT_EQ(g.tests_skipped, 0);
  ASSERT_EQ(g.outcomes.size(), 1u);
  EXPECT_EQ(g.outcomes[0].status, ropecheck::judge::Verdict::fail);
  ASSERT_EQ(g.worst.size(), 1u);
  EXPECT_EQ(g.worst[0].token, bad_token);
  EXPECT_EQ(g.worst[0].position, positions[static_cast<std::size_t>(bad_token)]);
  EXPECT_EQ(g.worst[0].head, 1);
  EXPECT_EQ(g.worst[0].dim, 5);
  // A chunk whose sizes disagree is refused, naming what.
  EXPECT_THROW(runner::TensorJudge(spec, kHeads, {}, "x")
                   .add(std::span(positions).subspan(0, 2), std::span(input).subspan(0, 3 * static_cast<std::size_t>(token_size)),
                        std::span(input).subspan(0, 3 * static_cast<std::size_t>(token_size))),
               InputError);
  EXPECT_THROW(runner::TensorJudge(spec, 0, {}, "x"), UsageError);
}

// An input handed over to the judge comes back in its own storage, its values rounded to the
// spec's input dtype (the CLI reads the next chunk but one into it), and is judged as the same
// values given by span are.
TEST_F(DirectFixture, HandedOverInputComesBackRoundedInItsOwnStorage) {
  const std::vector<double> output = testing_recipe::rotate(recipe_for_spec(), positions, kHeads, input);
  std::vector<double> off_grid = input;  // plus a quarter to a half ulp: no longer float32 values
  for (double& v : off_grid) v += std::fabs(v) * 0x1p-25;
  runner::TensorJudge by_span(spec, kHeads, {}, "span");
  by_span.add(positions, off_grid, output);
  runner::TensorJudge handed(spec, kHeads, {}, "handed");
  std::vector<double> buffer = off_grid;
  const double* storage = buffer.data();
  const std::vector<double> back = handed.add(positions, std::move(buffer), output);
  EXPECT_EQ(back.data(), storage);
  ASSERT_EQ(back.size(), input.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    ASSERT_EQ(back[i], static_cast<double>(static_cast<float>(off_grid[i]))) << i;
    ASSERT_EQ(back[i], input[i]) << i;  // less than half an ulp rounds back
  }
  const judge::GroupResult a = by_span.finish(), b = handed.finish();
  EXPECT_EQ(b.verdict, ropecheck::judge::Verdict::pass);
  EXPECT_EQ(b.verdict, a.verdict);
  EXPECT_EQ(b.worst_e, a.worst_e);
  EXPECT_EQ(b.pairs_checked, a.pairs_checked);
  EXPECT_EQ(b.inputs_rounded, static_cast<std::int64_t>(input.size()) - std::count(input.begin(), input.end(), 0.0));
  EXPECT_EQ(b.inputs_rounded, a.inputs_rounded);
}

// The CLI streams in chunks of kChunkElements values: a tensor just over two chunks with a mistake
// in its last chunk only is caught there, at its token over the whole tensor. The third chunk is
// read into the first one's arrays, and is shorter: inputs or outputs left from the first chunk
// would fail thousands of pairs, not one. rotary_dim 8 of 64 keeps it quick: 56 dims of each head
// pass through (judged, but with no angle to compute).
TEST_F(DirectFixture, CliChunkBoundaryMistakeInLastChunkNamesTheGlobalToken) {
  const std::int64_t heads = 4, head_dim = 64, token_size = heads * head_dim;
  const std::int64_t chunk_tokens = runner::TensorJudge::kChunkElements / token_size;
  const std::int64_t big_tokens = 2 * chunk_tokens + 100;
  ASSERT_GT(big_tokens * token_size, 2 * runner::TensorJudge::kChunkElements);
  Recipe r = recipe_for_spec();
  r.rotary_dim = 8;
  const std::vector<std::int64_t> big_positions = positions_of_range(0, big_tokens, 1);
  const std::vector<double> big_input = testing_recipe::draw(static_cast<std::size_t>(big_tokens * token_size), Dtype::f32, 7);
  std::vector<double> big_output = testing_recipe::rotate(r, big_positions, heads, big_input);
  const std::int64_t bad_token = 2 * chunk_tokens + 66;  // in the third (last) chunk
  big_output[static_cast<std::size_t>(bad_token * token_size + 2 * head_dim + 5)] *= -1;  // head 2, dim 5 (pair 1's second)
  const std::string in = npy(dir, "big_in.npy", big_input, big_tokens, heads, head_dim);
  const std::string out = npy(dir, "big_out.npy", big_output, big_tokens, heads, head_dim);
  const Ran ran = run(kBin + " check --spec " + kSpec + ",rotary_dim=8 --positions 0:" + std::to_string(big_tokens) + " --input " + in +
                          " --candidate " + out + " --json " + (dir / "report.json") + " --junit " + (dir / "report.xml"),
                      dir);
  EXPECT_EQ(ran.code, 1) << ran.out << ran.err;
  // Three chunks, one tensor: one test, failed, in the table, the JSON and the JUnit report alike.
  EXPECT_NE(ran.out.find("1 tests, 1 failed, 0 skipped"), std::string::npos) << ran.out;
  const std::string junit = slurp(dir / "report.xml");
  EXPECT_NE(junit.find("1 failing test(s): 1;"), std::string::npos) << junit;
  EXPECT_NE(junit.find("<system-out>tests 1,"), std::string::npos) << junit;
  EXPECT_EQ(report()["summary"]["tests"], 1);
  EXPECT_EQ(report()["summary"]["tests_failed"], 1);
  const auto group = report()["groups"][0];
  EXPECT_EQ(group["tests"], 1);
  EXPECT_EQ(group["failed_tests"], nlohmann::json::array({1}));
  EXPECT_EQ(group["pairs_checked"], big_tokens * heads * 4);
  EXPECT_EQ(group["passthrough_checked"], big_tokens * heads * 56);
  EXPECT_EQ(group["pairs_failed"], 1);
  ASSERT_EQ(group["worst_cases"].size(), 1u) << group["worst_cases"];
  const auto& c = group["worst_cases"][0];
  EXPECT_EQ(c["token"], bad_token);
  EXPECT_EQ(c["position"], bad_token);
  EXPECT_EQ(c["head"], 2);
  EXPECT_EQ(c["dims"], nlohmann::json::array({1, 5}));
}

// Spec text as people type it (spaces after commas, the ecosystem's names): the same group as the
// canonical text, printed canonically.
TEST_F(DirectFixture, SpecWithBlanksAndEcosystemNamesIsTheCanonicalSpec) {
  const std::vector<double> output = testing_recipe::rotate(recipe_for_spec(), positions, kHeads, input);
  const std::string in = npy(dir, "in.npy", input, tokens, kHeads, 64), out = npy(dir, "out.npy", output, tokens, kHeads, 64);
  const Ran r = check(in, out, "", "--spec 'layout=neox, head_dim = 64, rope_theta=10000, dtype=f32'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(report()["groups"][0]["spec"], to_string(spec));
  const Ran printed = run(kBin + " spec --spec 'layout=gptj, head_dim=128, rope_theta=500000'", dir);
  EXPECT_EQ(printed.code, 0) << printed.err;
  EXPECT_EQ(printed.out, "layout=interleaved,head_dim=128,rotary_dim=128,base=500000,dtype=f32,direction=forward,scaling=none\n");
}

// M-RoPE positions as Qwen2-VL's position_ids hold them, [3, tokens], are read as their transpose
// [tokens, 3] (gate/positions.h components_axis, Python's rule too). Every component equal to the
// token's position rotates as the 1-D recipe does; read untransposed, the tuples would mix tokens.
TEST_F(DirectFixture, MropePositionsComponentsFirstAreReadAsPythonReadsThem) {
  const std::string mrope = "--spec " + kSpec + ",axes=mrope,sections=8/12/12";
  const std::vector<double> output = testing_recipe::rotate(recipe_for_spec(), positions, kHeads, input);
  const std::string in = npy(dir, "in.npy", input, tokens, kHeads, 64), out = npy(dir, "out.npy", output, tokens, kHeads, 64);
  std::vector<double> first, last;  // [3, tokens] and [tokens, 3]
  for (int k = 0; k < 3; ++k) first.insert(first.end(), positions.begin(), positions.end());
  for (std::int64_t p : positions) last.insert(last.end(), {double(p), double(p), double(p)});
  spit(dir / "first.npy", encode_npy({"", "I64", {3, tokens}, first, {}}));
  spit(dir / "last.npy", encode_npy({"", "I64", {tokens, 3}, last, {}}));
  std::optional<double> worst_e;
  for (const std::string name : {"first.npy", "last.npy"}) {
    SCOPED_TRACE(name);
    const Ran r = run(kBin + " check " + mrope + " --positions " + (dir / name) + " --input " + in + " --candidate " + out +
                          " --json " + (dir / "report.json"),
                      dir);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    if (r.code != 0) continue;
    const double e = report()["groups"][0]["worst_e"].get<double>();
    if (worst_e) {
      EXPECT_EQ(e, *worst_e);
    }
    worst_e = e;
  }
}

// HF transformers' [batch, heads, tokens, head_dim] has the values' count of [tokens, heads,
// head_dim] and was judged row-major against the wrong positions; it is refused, one line naming
// the file, the shape got, the shapes expected and the transpose.
TEST_F(DirectFixture, HfHeadsFirstLayoutIsRefusedNamingTheTranspose) {
  const std::vector<double> output = testing_recipe::rotate(recipe_for_spec(), positions, kHeads, input);
  const std::string out = npy(dir, "out.npy", output, tokens, kHeads, 64);
  spit(dir / "hf.npy", encode_npy({"", "F32", {1, kHeads, tokens, 64}, input, {}}));
  expect_one_line_error(check(dir / "hf.npy", out),
                        {"hf.npy: shape [1, 2, 48, 64]", "[batch, heads, tokens, head_dim]", "[tokens, heads, head_dim]",
                         "x.transpose(1, 2)"},
                        "HF's layout");
  EXPECT_FALSE(std::filesystem::exists(dir / "report.json"));
}

// The bf16 value nearest to `x` (ties to even), from its float32 bits: written here, not taken from
// reference/rounding.h, to count what the gate must report. Inputs are finite and far from overflow.
double bf16_nearest(double x) {
  const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(x));
  const std::uint32_t rounded = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
  return static_cast<double>(std::bit_cast<float>(rounded));
}

// A float32 tensor checked against a bf16 spec: its values are rounded to bf16 (the values a bf16
// kernel is given), and the report says how many were not bf16 values. Judged unrounded, the
// pass-through dims (rotary_dim 32 of 64) of a correct candidate would all differ from the input.
TEST_F(DirectFixture, InputsOutsideTheSpecsDtypeAreRoundedWithANote) {
  const std::string bf16_spec = "layout=half,head_dim=64,rotary_dim=32,base=10000,dtype=bf16";
  Recipe r = recipe_for_spec();
  r.rotary_dim = 32;
  r.dtype = Dtype::bf16;
  // float32 values (draw rounds to f32), not bf16 ones, and the bf16 values a kernel receives.
  std::vector<double> as_bf16;
  std::int64_t not_bf16 = 0;
  for (double x : input) {
    as_bf16.push_back(bf16_nearest(x));
    not_bf16 += as_bf16.back() != x;
  }
  ASSERT_GT(not_bf16, static_cast<std::int64_t>(input.size()) / 2);
  const std::vector<double> output = testing_recipe::rotate(r, positions, kHeads, as_bf16);
  const std::string out = npy(dir, "out.npy", output, tokens, kHeads, 64);
  const std::string note = "input: " + std::to_string(not_bf16) + " value(s) were not values of bf16 (the spec's input dtype)";
  const Ran f32 = check(npy(dir, "in_f32.npy", input, tokens, kHeads, 64), out, "", "--spec " + bf16_spec);
  EXPECT_EQ(f32.code, 0) << f32.out << f32.err;
  EXPECT_NE(f32.out.find("note: " + note), std::string::npos) << f32.out;
  const auto notes = report()["notes"];
  EXPECT_EQ(std::count_if(notes.begin(), notes.end(), [&](const auto& n) { return n.template get<std::string>().rfind(note, 0) == 0; }), 1)
      << notes;
  EXPECT_EQ(report()["groups"][0]["passthrough_failed"], 0);
  // The same values given as bf16: the same verdict and worst e, and no note.
  const double e = report()["groups"][0]["worst_e"].get<double>();
  const Ran bf16 = check(npy(dir, "in_bf16.npy", as_bf16, tokens, kHeads, 64, "BF16"), out, "", "--spec " + bf16_spec);
  EXPECT_EQ(bf16.code, 0) << bf16.out << bf16.err;
  EXPECT_EQ(bf16.out.find("were not values of"), std::string::npos) << bf16.out;
  EXPECT_EQ(report()["groups"][0]["worst_e"].get<double>(), e);
}

// A chunk buffer sized for overwriting (base/parallel.h resize_for_overwrite): grown into new
// memory it holds n zeros however many threads populated its pages (a range left out, or a missed
// swap, would show as a wrong size or as the old values); sized down or within its capacity it
// keeps its storage, as the chunks after the first rely on.
TEST(ResizeForOverwrite, NewMemoryIsSizedAndZeroedAndOldStorageIsKept) {
  for (int threads : {1, 2, 3}) {
    std::vector<double> values(1000, 7.0);
    const std::size_t big = (std::size_t{5} << 20) + 3;  // 40 MB and a partial page
    resize_for_overwrite(values, big, threads);
    ASSERT_EQ(values.size(), big) << threads;
    EXPECT_TRUE(std::all_of(values.begin(), values.end(), [](double v) { return v == 0; })) << threads;
    std::fill(values.begin(), values.end(), 1.5);
    const double* storage = values.data();
    resize_for_overwrite(values, 4096, threads);
    EXPECT_EQ(values.size(), 4096u);
    EXPECT_EQ(values.data(), storage);
    resize_for_overwrite(values, big, threads);
    EXPECT_EQ(values.size(), big);
    EXPECT_EQ(values.data(), storage) << "within its capacity: the same storage";
    std::vector<double> small(3, 2.0);
    resize_for_overwrite(small, 100, threads);  // below the populated size: a plain resize
    EXPECT_EQ(small.size(), 100u);
  }
}

}  // namespace
}  // namespace ropecheck::gate
