// End-to-end tests of `ropecheck check` on the attention suite (golden/suites/attention.json) and of
// the export of its inputs: a candidate computed as the derived bound's hypotheses describe (RoPE by
// the project's scalar kernel in the data dtype, attention in binary32/binary64 with std::exp)
// passes; candidates wrong on purpose fail on the tests the golden data says they must; exported
// inputs read back equal the golden values; reports parse and conform to their schema.
//
// No expected value comes from the gate: the candidates are computed here from the exported inputs,
// the verdicts they must get follow from the golden file's positions and flags, and the tolerances
// are the gate's derived bounds (judge/tolerance.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <regex>
#include <sstream>

#include <ropecheck/kernel.h>

#include "gate_test_support.h"
#include "judge/group.h"
#include "optimized/c_spec.h"
#include "spec/schedule.h"
#include "tensorio/readers.h"
#include "tensorio/writers.h"

namespace ropecheck::gate {
namespace {

using namespace testing;

const std::string kBin = ROPECHECK_BIN;
const std::string kGolden = ATTENTION_GOLDEN;

// One attention test as a candidate sees it: read back from `ropecheck golden export`.
struct Inputs {
  Spec spec;
  std::string prefix;  // "attention/ID/"
  std::int64_t id = 0;
  std::int64_t q_tokens = 0, k_tokens = 0, heads = 0, head_dim = 0, v_dim = 0;
  std::vector<double> q, k, v;
  std::vector<std::int64_t> q_positions, k_positions;
  bool causal = false;
};

std::vector<std::int64_t> as_positions(const Tensor& t) {
  std::vector<std::int64_t> out;
  for (double v : t.values) out.push_back(static_cast<std::int64_t>(v));
  return out;
}

// Every test of an exported file, in id order.
std::vector<Inputs> read_exported(const TensorMap& file) {
  std::map<std::int64_t, Inputs> by_id;
  for (const auto& [name, tensor] : file) {
    const std::string tail = "/spec";
    if (name.size() < tail.size() || name.compare(name.size() - tail.size(), tail.size(), tail) != 0) continue;
    const std::string prefix = name.substr(0, name.size() - 4);  // "SUITE/ID/"
    Inputs in;
    in.prefix = prefix;
    in.id = std::stoll(prefix.substr(prefix.find('/') + 1));
    in.spec = parse_spec(tensor.text);
    const Tensor& q = file.at(prefix + "q");
    const Tensor& v = file.at(prefix + "v");
    in.q_tokens = q.shape.at(0);
    in.heads = q.shape.at(1);
    in.head_dim = q.shape.at(2);
    in.k_tokens = file.at(prefix + "k").shape.at(0);
    in.v_dim = v.shape.at(2);
    in.q = q.values;
    in.k = file.at(prefix + "k").values;
    in.v = v.values;
    in.q_positions = as_positions(file.at(prefix + "q_positions"));
    in.k_positions = as_positions(file.at(prefix + "k_positions"));
    in.causal = file.at(prefix + "causal").values.at(0) != 0;
    by_id[in.id] = std::move(in);
  }
  std::vector<Inputs> out;
  for (auto& [id, in] : by_id) out.push_back(std::move(in));
  return out;
}

// RoPE of [tokens, heads, head_dim] by the project's scalar kernel, in the data dtype (its proven
// bound, optimized/error_bounds.h, is within the gate's e <= 4: hypothesis H1 of the derivation).
std::vector<double> scalar_rope(const Spec& spec, std::int64_t tokens, std::int64_t heads, const std::vector<std::int64_t>& positions,
                                const std::vector<double>& x) {
  const int w = spec.dtype == Dtype::f64 ? 8 : spec.dtype == Dtype::f32 ? 4 : 2;
  std::vector<unsigned char> in(x.size() * w), out(x.size() * w);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint64_t bits = reference::encode_bits(x[i], spec.dtype);
    std::memcpy(in.data() + i * w, &bits, w);  // little-endian
  }
  const kernels::CSpec c_spec(spec);
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = tokens;
  call.positions = positions.data();
  call.q.heads = heads;
  call.q.input = in.data();
  call.q.input_token_stride = heads * spec.head_dim;
  call.q.input_head_stride = spec.head_dim;
  call.q.output = out.data();
  call.q.output_token_stride = heads * spec.head_dim;
  call.q.output_head_stride = spec.head_dim;
  call.threads = 1;
  EXPECT_EQ(ropecheck_kernel_apply("scalar", &call), ROPECHECK_OK);
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, out.data() + i * w, w);
    y[i] = reference::decode_bits(bits, spec.dtype);
  }
  return y;
}

// How a candidate goes wrong (or not).
struct Recipe {
  std::function<std::vector<double>(const Inputs&, bool is_q)> rope;  // rotated q or k, in the data dtype
  bool scale = true;                                                  // multiply the scores by 1/√head_dim
  bool mask = true;                                                   // apply the causal mask
  bool online = false;  // FlashAttention-style online softmax, P rounded to the data dtype before PV
};

std::vector<double> rope_by_scalar_kernel(const Inputs& in, bool is_q) {
  return is_q ? scalar_rope(in.spec, in.q_tokens, in.heads, in.q_positions, in.q)
              : scalar_rope(in.spec, in.k_tokens, in.heads, in.k_positions, in.k);
}

// The query rotated one position later than it is (pair 0 turned by θ_0 = 1 rad more); keys right.
std::vector<double> rope_query_one_later(const Inputs& in, bool is_q) {
  if (!is_q) return rope_by_scalar_kernel(in, false);
  std::vector<std::int64_t> shifted = in.q_positions;
  for (std::int64_t& p : shifted) ++p;
  return scalar_rope(in.spec, in.q_tokens, in.heads, shifted, in.q);
}

// The common float32 recipe (reference/rope.h Model::f32_recipe): θ, position and angle rounded to
// float32 — in the f32-angle class.
std::vector<double> rope_by_f32_recipe(const Inputs& in, bool is_q) {
  reference::Options o;
  o.model = reference::Model::f32_recipe;
  return is_q ? reference::apply(in.spec, {in.q_tokens, in.heads, in.head_dim}, in.q_positions, in.q, o)
              : reference::apply(in.spec, {in.k_tokens, in.heads, in.head_dim}, in.k_positions, in.k, o);
}

struct Outputs {
  std::vector<double> scores;   // [heads, q_tokens, k_tokens], rounded to the data dtype
  std::vector<double> outputs;  // [q_tokens, heads, v_dim], rounded to the data dtype
};

// Attention in working precision W (float for f32/f16/bf16 data, double for f64), std::exp.
template <class W>
Outputs attention_in(const Inputs& in, const Recipe& recipe) {
  const std::vector<double> q = recipe.rope(in, true), k = recipe.rope(in, false);
  const std::int64_t H = in.heads, d = in.head_dim, nq = in.q_tokens, nk = in.k_tokens, vd = in.v_dim;
  const W scale = recipe.scale ? W(1) / std::sqrt(static_cast<W>(d)) : W(1);
  auto round = [&](W x) { return reference::round_to_format(static_cast<double>(x), in.spec.dtype); };
  Outputs out;
  out.scores.assign(static_cast<std::size_t>(H * nq * nk), 0);
  out.outputs.assign(static_cast<std::size_t>(nq * H * vd), 0);
  for (std::int64_t h = 0; h < H; ++h) {
    for (std::int64_t i = 0; i < nq; ++i) {
      std::vector<W> s(static_cast<std::size_t>(nk));
      std::vector<bool> visible(static_cast<std::size_t>(nk));
      for (std::int64_t j = 0; j < nk; ++j) {
        W dot = 0;
        for (std::int64_t x = 0; x < d; ++x) dot += static_cast<W>(q[(i * H + h) * d + x]) * static_cast<W>(k[(j * H + h) * d + x]);
        s[j] = dot * scale;
        out.scores[(h * nq + i) * nk + j] = round(s[j]);
        visible[j] = !recipe.mask || !in.causal || in.k_positions[j] <= in.q_positions[i];
      }
      std::vector<W> acc(static_cast<std::size_t>(vd), 0);
      W total = 0;
      if (recipe.online) {
        W m = -std::numeric_limits<W>::infinity();
        for (std::int64_t j = 0; j < nk; ++j) {
          if (!visible[j]) continue;
          const W m_new = std::max(m, s[j]);
          const W r = std::exp(m - m_new), p = std::exp(s[j] - m_new);
          const W p_data = static_cast<W>(round(p));  // FlashAttention's PV operand in the data dtype
          total = total * r + p;
          for (std::int64_t x = 0; x < vd; ++x) acc[x] = acc[x] * r + p_data * static_cast<W>(in.v[(j * H + h) * vd + x]);
          m = m_new;
        }
      } else {
        W m = -std::numeric_limits<W>::infinity();
        for (std::int64_t j = 0; j < nk; ++j) {
          if (visible[j]) m = std::max(m, s[j]);
        }
        for (std::int64_t j = 0; j < nk; ++j) {
          if (!visible[j]) continue;
          const W p = std::exp(s[j] - m);
          total += p;
          for (std::int64_t x = 0; x < vd; ++x) acc[x] += p * static_cast<W>(in.v[(j * H + h) * vd + x]);
        }
      }
      for (std::int64_t x = 0; x < vd; ++x) out.outputs[(i * H + h) * vd + x] = round(acc[x] / total);
    }
  }
  return out;
}

Outputs attention(const Inputs& in, const Recipe& recipe) {
  return in.spec.dtype == Dtype::f64 ? attention_in<double>(in, recipe) : attention_in<float>(in, recipe);
}

std::string dtype_tag(Dtype dtype) {
  return dtype == Dtype::f64 ? "F64" : dtype == Dtype::f32 ? "F32" : dtype == Dtype::f16 ? "F16" : "BF16";
}

struct AttentionFixture : ::testing::Test {
  TempDir dir;
  golden::GoldenFile golden = golden::read_golden_file(kGolden);
  std::vector<Inputs> inputs;

  void SetUp() override {
    const Ran e = run(kBin + " golden export --golden " + kGolden + " --format npz --out " + (dir / "inputs.npz"), dir);
    ASSERT_EQ(e.code, 0) << e.err;
    inputs = read_exported(parse_candidate(read_file_bytes(dir / "inputs.npz"), "inputs.npz"));
    ASSERT_EQ(static_cast<std::int64_t>(inputs.size()), golden.number_of_tests);
  }

  // Writes the candidate's scores and/or outputs (in the data dtype) and runs check on it.
  Ran check(const Recipe& recipe, bool with_scores, bool with_outputs, const std::string& extra = "", const std::string& format = "npz") {
    std::vector<OutTensor> tensors;
    for (const Inputs& in : inputs) {
      const Outputs o = attention(in, recipe);
      const std::string dtype = dtype_tag(in.spec.dtype);
      if (with_scores) tensors.push_back({in.prefix + "scores", dtype, {in.heads, in.q_tokens, in.k_tokens}, o.scores, {}});
      if (with_outputs) tensors.push_back({in.prefix + "outputs", dtype, {in.q_tokens, in.heads, in.v_dim}, o.outputs, {}});
    }
    const std::string path = dir / ("candidate." + format);
    spit(path, format == "npz" ? encode_npz(tensors) : encode_safetensors(tensors));
    // The exact claim unless a test sets `claim` ("" for the default claim, f32-angle).
    return run(kBin + " check " + (claim.empty() ? "" : "--model " + claim) + " --golden " + kGolden + " --candidate " + path + " --json " +
                   (dir / "report.json") + " " + extra,
               dir);
  }
  nlohmann::json report() { return nlohmann::json::parse(slurp(dir / "report.json")); }
  std::string claim = "exact";  // check()'s --model; "" names none

  std::set<std::int64_t> all_ids() const {
    std::set<std::int64_t> ids;
    for (const Inputs& in : inputs) ids.insert(in.id);
    return ids;
  }
  // Ids of the golden tests for which `predicate(group spec, test)` holds.
  std::set<std::int64_t> ids_where(const std::function<bool(const Spec&, const golden::AttentionTest&)>& predicate) const {
    std::set<std::int64_t> ids;
    for (const golden::Group& g : golden.groups) {
      for (const golden::AttentionTest& t : g.attention_tests) {
        if (predicate(g.spec, t)) ids.insert(t.id);
      }
    }
    return ids;
  }
};

bool has_flag(const golden::AttentionTest& t, const std::string& flag) {
  return std::find(t.flags.begin(), t.flags.end(), flag) != t.flags.end();
}

// Some key visible to a query only without the causal mask.
bool mask_matters(const golden::AttentionTest& t) {
  if (!t.causal) return false;
  for (std::int64_t q : t.q_positions) {
    for (std::int64_t k : t.k_positions) {
      if (k > q) return true;
    }
  }
  return false;
}

std::set<std::int64_t> minus(std::set<std::int64_t> a, const std::set<std::int64_t>& b) {
  for (std::int64_t x : b) a.erase(x);
  return a;
}

TEST_F(AttentionFixture, WorkingPrecisionCandidatePasses) {
  for (const bool online : {false, true}) {
    Recipe recipe{rope_by_scalar_kernel};
    recipe.online = online;
    const Ran r = check(recipe, true, true, "--verbose --junit " + (dir / "junit.xml") + " --html " + (dir / "r.html"));
    EXPECT_EQ(r.code, 0) << (online ? "online" : "two-pass") << "\n" << r.out << r.err;
    const auto j = report();
    spit(dir / (online ? "report-online.json" : "report-two-pass.json"), j.dump(1));  // for ROPECHECK_KEEP_TEST_FILES
    EXPECT_EQ(j["verdict"], "pass");
    ASSERT_EQ(j["groups"].size(), golden.groups.size());
    for (const auto& g : j["groups"]) {
      EXPECT_EQ(g["kind"], "attention");
      const auto& a = g["attention"];
      // Something was measured, and stayed within the derived bounds.
      EXPECT_GT(a["scores_checked"].get<int>(), 0);
      EXPECT_GT(a["outputs_checked"].get<int>(), 0);
      EXPECT_LE(a["worst_score_e"].get<double>(), a["score_tolerance"].get<double>());
      EXPECT_LE(a["worst_output_margin"].get<double>(), 1.0);
    }
    // The table (--verbose) has one row per attention group and no "not judged" note.
    EXPECT_NE(r.out.find("attention group"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("not judged"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("attention#5"), std::string::npos) << r.out;
  }
  // Reports: JUnit and XHTML parse; the JSON report conforms to its schema.
  EXPECT_EQ(run("/usr/bin/python3 -c \"import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
                "assert len(r.findall('.//testcase')) == 6 and not r.findall('.//failure')\" " +
                    (dir / "junit.xml"),
                dir)
                .code,
            0);
  EXPECT_EQ(run("/usr/bin/python3 -c \"import sys, xml.etree.ElementTree as E; r = E.fromstring(open(sys.argv[1]).read()); "
                "assert len(r.findall('.//{http://www.w3.org/2000/svg}svg')) == 6\" " +
                    (dir / "r.html"),
                dir)
                .code,
            0);
  const Ran v =
      run("/usr/bin/python3 -c \"import sys, json, jsonschema; jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))"
          ".validate(json.load(open(sys.argv[2])))\" " SCHEMA_PATH " " +
              (dir / "report.json"),
          dir);
  EXPECT_EQ(v.code, 0) << v.err;
}

TEST_F(AttentionFixture, SafetensorsCandidateAndScoresOrOutputsAlone) {
  const Recipe good{rope_by_scalar_kernel};
  EXPECT_EQ(check(good, true, true, "", "safetensors").code, 0);
  // One of the two missing fails every test (kind "missing") unless --allow-missing.
  Ran r = check(good, true, false);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(failed_tests(report()), all_ids());
  EXPECT_EQ(check(good, true, false, "--allow-missing").code, 0);
  EXPECT_EQ(report()["groups"][0]["attention"]["outputs_checked"], 0);
  EXPECT_EQ(check(good, false, true, "--allow-missing").code, 0);
  // Neither: skipped with --allow-missing, so nothing is judged and the verdict fails.
  r = check(good, false, false, "--allow-missing");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(report()["summary"]["tests_skipped"], golden.number_of_tests);
}

TEST_F(AttentionFixture, NoRopeFailsEveryRotatedTest) {
  Recipe recipe;
  recipe.rope = [](const Inputs& in, bool is_q) { return is_q ? in.q : in.k; };
  EXPECT_EQ(check(recipe, true, true).code, 1);
  // At position 0 the rotation is the identity, times the attention factor: only groups without one
  // (g = 1) pass there.
  const auto pass = ids_where(
      [](const Spec& s, const golden::AttentionTest& t) { return has_flag(t, "PositionZero") && attention_factor<double>(s) == 1.0; });
  EXPECT_FALSE(pass.empty());
  EXPECT_EQ(failed_tests(report()), minus(all_ids(), pass));
}

TEST_F(AttentionFixture, QueryPositionsOffByOneFail) {
  // Relative position n − m off by one: pair 0 turns by θ_0 = 1 rad more (every group's base gives
  // θ_0 = 1). The scores move by a few percent of |c|·‖q‖·‖k‖ (|s| itself is typically ≈ that over
  // √d): thousands of u in f32/f64, where every test must fail; in bf16 the bound is 13.5 u =
  // 0.053·|c|·‖q‖·‖k‖ (11.3 of it the e ≤ 4 RoPE allowance, judge/tolerance.cpp), the same order as
  // the shift's effect here (e ≈ 14 to 27), so the bf16 group must fail but not every test of it.
  Recipe recipe;
  recipe.rope = rope_query_one_later;
  const auto not_bf16 = ids_where([](const Spec& s, const golden::AttentionTest&) { return s.dtype != Dtype::bf16; });
  EXPECT_EQ(check(recipe, true, false, "--allow-missing").code, 1);
  const auto j = report();
  EXPECT_TRUE(std::ranges::includes(failed_tests(j), not_bf16));
  for (const auto& g : j["groups"]) EXPECT_EQ(g["verdict"], "fail") << g["spec"];
  // Outputs: the bf16 output bound is loose (≈ 100 u = 0.4·max|v|, judge/tolerance.cpp); f32/f64
  // groups must fail.
  EXPECT_EQ(check(recipe, false, true, "--allow-missing").code, 1);
  EXPECT_TRUE(std::ranges::includes(failed_tests(report()), not_bf16));
}

TEST_F(AttentionFixture, ShiftingBothPositionsIsInvisible) {
  // ⟨R_{m+t} q, R_{n+t} k⟩ = ⟨R_m q, R_n k⟩: attention sees relative positions only, so a candidate
  // that adds the same offset to every position is right (the gate must not fail it).
  Recipe recipe;
  recipe.rope = [](const Inputs& in, bool is_q) {
    std::vector<std::int64_t> p = is_q ? in.q_positions : in.k_positions;
    for (std::int64_t& x : p) x += 1;
    return is_q ? scalar_rope(in.spec, in.q_tokens, in.heads, p, in.q) : scalar_rope(in.spec, in.k_tokens, in.heads, p, in.k);
  };
  const Ran r = check(recipe, true, true);
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST_F(AttentionFixture, Float32RecipeAnglesFailNearPosition2To31) {
  // The common float32 recipe (reference/rope.h Model::f32_recipe): θ, position and angle rounded
  // to float32. Near 2^31, RN32(p) moves positions by up to 64, pair 0's angle by up to 64 rad.
  Recipe recipe;
  recipe.rope = rope_by_f32_recipe;
  EXPECT_EQ(check(recipe, true, true).code, 1);
  const auto failed = failed_tests(report());
  const auto near_2_31 = ids_where([](const Spec&, const golden::AttentionTest& t) {
    return *std::min_element(t.k_positions.begin(), t.k_positions.end()) >= (std::int64_t{1} << 30);
  });
  EXPECT_EQ(near_2_31.size(), golden.groups.size());
  EXPECT_TRUE(std::ranges::includes(failed, near_2_31));
  // At position 0 the recipe is exact (angle 0): those tests pass.
  for (std::int64_t id : ids_where([](const Spec&, const golden::AttentionTest& t) { return has_flag(t, "PositionZero"); })) {
    EXPECT_FALSE(failed.count(id)) << id;
  }
}

// The default claim (f32-angle) judges attention suites too, with H1 holding q and k to the
// f32-angle bound at their tokens' angles (judge/tolerance.cpp): the float32 recipe, which fails
// the exact claim near 2^31 (above), is in the f32-angle class and passes every test; a careful
// candidate passes; no rotation fails where the positions are small; a query off by one position (pair 0 turned by
// 1 rad, scores moved by a few percent of |c|·‖q‖·‖k‖) fails every f32/f64 test whose positions
// all stay below 1000, where ε_t ≤ √2·(4u + 1000·η) ≈ 1.5e-3 keeps the score bound near 3e-3·N.
TEST_F(AttentionFixture, DefaultClaimJudgesAttentionWithTheAngleBound) {
  claim = "";
  Recipe f32_angles;
  f32_angles.rope = rope_by_f32_recipe;
  Ran r = check(f32_angles, true, true);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = report();
  EXPECT_EQ(j["summary"]["tests_skipped"], 0) << j["summary"];
  for (const auto& g : j["groups"]) {
    EXPECT_GT(g["attention"]["scores_checked"].get<int>(), 0);
    EXPECT_NE(g["attention"]["score_tolerance_source"].get<std::string>().find("f32-angle"), std::string::npos);
  }
  EXPECT_NE(r.out.find("model f32-angle"), std::string::npos) << r.out;
  EXPECT_EQ(check(Recipe{rope_by_scalar_kernel}, true, true).code, 0);

  // Tests whose positions all stay below 1000 (after the shift below); at positions near 2^30 the
  // f32-angle claim allows angle errors of radians, and no attention test can tell a rotation from none.
  const auto below_1000 = [](const golden::AttentionTest& t) {
    const auto below = [](const std::vector<std::int64_t>& p) {
      return std::all_of(p.begin(), p.end(), [](std::int64_t x) { return x + 1 < 1000; });
    };
    return below(t.q_positions) && below(t.k_positions);
  };
  Recipe none;
  none.rope = [](const Inputs& in, bool is_q) { return is_q ? in.q : in.k; };
  EXPECT_EQ(check(none, true, true).code, 1);
  const auto zero = ids_where(
      [](const Spec& s, const golden::AttentionTest& t) { return has_flag(t, "PositionZero") && attention_factor<double>(s) == 1.0; });
  const auto small_any = ids_where([&](const Spec&, const golden::AttentionTest& t) { return below_1000(t); });
  EXPECT_TRUE(std::ranges::includes(failed_tests(report()), minus(small_any, zero)));

  Recipe off_by_one;
  off_by_one.rope = rope_query_one_later;
  EXPECT_EQ(check(off_by_one, true, false, "--allow-missing").code, 1);
  const auto small = ids_where([&](const Spec& s, const golden::AttentionTest& t) { return s.dtype != Dtype::bf16 && below_1000(t); });
  EXPECT_FALSE(small.empty());
  EXPECT_TRUE(std::ranges::includes(failed_tests(report()), small));
}

TEST_F(AttentionFixture, MissingScaleFails) {
  Recipe recipe{rope_by_scalar_kernel};
  recipe.scale = false;
  // Scores √d = 4 or 8 times too large.
  EXPECT_EQ(check(recipe, true, false, "--allow-missing").code, 1);
  EXPECT_EQ(failed_tests(report()), all_ids());
  // Outputs of a √d-times sharper softmax: f32/f64 groups must fail (bf16's bound is loose).
  EXPECT_EQ(check(recipe, false, true, "--allow-missing").code, 1);
  EXPECT_TRUE(std::ranges::includes(failed_tests(report()),
                                    ids_where([](const Spec& s, const golden::AttentionTest&) { return s.dtype != Dtype::bf16; })));
}

TEST_F(AttentionFixture, IgnoredCausalMaskFailsOutputsWhereTheMaskMatters) {
  Recipe recipe{rope_by_scalar_kernel};
  recipe.mask = false;
  EXPECT_EQ(check(recipe, true, true).code, 1);
  const auto failed = failed_tests(report());
  // Scores are reported before the mask: only outputs can fail, and only where a key is masked.
  const auto j = report();
  for (const auto& g : j["groups"]) EXPECT_EQ(g["attention"]["scores_failed"], 0);
  const auto matters = ids_where([](const Spec&, const golden::AttentionTest& t) { return mask_matters(t); });
  EXPECT_FALSE(matters.empty());
  EXPECT_TRUE(std::ranges::includes(matters, failed));
  EXPECT_TRUE(std::ranges::includes(
      failed, ids_where([](const Spec& s, const golden::AttentionTest& t) { return mask_matters(t) && s.dtype != Dtype::bf16; })));
}

TEST_F(AttentionFixture, MaskedScoresMayBeMinusInfinity) {
  // A library that applies the mask to its scores reports −inf there: accepted, not measured; −inf
  // at a visible key is a special-value failure.
  std::vector<OutTensor> tensors;
  std::int64_t masked = 0;
  std::int64_t spoiled_id = -1;
  for (const Inputs& in : inputs) {
    Outputs o = attention(in, Recipe{rope_by_scalar_kernel});
    for (std::int64_t h = 0; h < in.heads; ++h) {
      for (std::int64_t i = 0; i < in.q_tokens; ++i) {
        for (std::int64_t j = 0; j < in.k_tokens; ++j) {
          if (in.causal && in.k_positions[j] > in.q_positions[i]) {
            o.scores[(h * in.q_tokens + i) * in.k_tokens + j] = -INFINITY;
            ++masked;
          }
        }
      }
    }
    if (!in.causal && spoiled_id < 0 && in.id > 1) {
      spoiled_id = in.id;
      o.scores[0] = -INFINITY;  // key 0 is visible without a mask
    }
    tensors.push_back({in.prefix + "scores", dtype_tag(in.spec.dtype), {in.heads, in.q_tokens, in.k_tokens}, o.scores, {}});
    tensors.push_back({in.prefix + "outputs", dtype_tag(in.spec.dtype), {in.q_tokens, in.heads, in.v_dim}, o.outputs, {}});
  }
  spit(dir / "masked.npz", encode_npz(tensors));
  const Ran r = run(
      kBin + " check --model exact --golden " + kGolden + " --candidate " + (dir / "masked.npz") + " --json " + (dir / "report.json"), dir);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(failed_tests(report()), (std::set<std::int64_t>{spoiled_id}));
  std::int64_t accepted = 0;
  const auto j = report();
  for (const auto& g : j["groups"]) accepted += g["attention"]["scores_masked"].get<std::int64_t>();
  EXPECT_EQ(accepted, masked);
  EXPECT_GT(masked, 0);
}

TEST_F(AttentionFixture, ToleranceOverridesAndOneWrongValue) {
  const Recipe good{rope_by_scalar_kernel};
  // A zero bound fails any measured error; the derived ones pass the same candidate.
  EXPECT_EQ(check(good, true, true, "--tolerance attention_scores=0").code, 1);
  EXPECT_EQ(check(good, true, true, "--tolerance attention_outputs=0,attention_scores=1e9").code, 1);
  EXPECT_EQ(check(good, true, true, "--tolerance e=4,attention_scores=1e9,attention_outputs=1e9").code, 0);
  const Ran bad = check(good, true, true, "--tolerance attention_scores=x");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("attention_scores"), std::string::npos) << bad.err;
  EXPECT_EQ(check(good, true, true, "--tolerance zeta=1").code, 2);
}

TEST_F(AttentionFixture, ExportedInputsRoundTrip) {
  const Ran e = run(kBin + " golden export --golden " + kGolden + " --format safetensors --out " + (dir / "inputs.safetensors"), dir);
  ASSERT_EQ(e.code, 0) << e.err;
  for (const std::string name : {"inputs.npz", "inputs.safetensors"}) {
    const TensorMap file = parse_candidate(read_file_bytes(dir / name), name);
    EXPECT_EQ(file.at("format").text, "ropecheck-export/1");
    for (const golden::Group& g : golden.groups) {
      const std::string dtype = dtype_tag(g.spec.dtype);
      for (const golden::AttentionTest& t : g.attention_tests) {
        const std::string prefix = "attention/" + std::to_string(t.id) + "/";
        SCOPED_TRACE(name + " " + prefix);
        const Tensor& q = file.at(prefix + "q");
        const Tensor& k = file.at(prefix + "k");
        const Tensor& v = file.at(prefix + "v");
        // npz has no bfloat16: stored as float32, exact (gate/README.md).
        EXPECT_EQ(q.dtype, name == "inputs.npz" && dtype == "BF16" ? "F32" : dtype);
        EXPECT_EQ(q.shape, (std::vector<std::int64_t>{t.q_tokens, t.heads, t.head_dim}));
        EXPECT_EQ(k.shape, (std::vector<std::int64_t>{t.k_tokens, t.heads, t.head_dim}));
        EXPECT_EQ(v.shape, (std::vector<std::int64_t>{t.k_tokens, t.heads, t.v_dim}));
        EXPECT_EQ(q.values, t.q);
        EXPECT_EQ(k.values, t.k);
        EXPECT_EQ(v.values, t.v);
        EXPECT_EQ(file.at(prefix + "q_positions").dtype, "I64");
        EXPECT_EQ(file.at(prefix + "q_positions").shape, (std::vector<std::int64_t>{t.q_tokens}));
        EXPECT_EQ(as_positions(file.at(prefix + "q_positions")), t.q_positions);
        EXPECT_EQ(as_positions(file.at(prefix + "k_positions")), t.k_positions);
        EXPECT_EQ(file.at(prefix + "causal").values, (std::vector<double>{t.causal ? 1.0 : 0.0}));
        EXPECT_EQ(parse_spec(file.at(prefix + "spec").text), g.spec);
      }
    }
  }
  // NumPy reads the npz with the documented dtypes and shapes.
  const std::string script =
      "import sys, numpy as np\n"
      "d = np.load(sys.argv[1])\n"
      "assert d['attention/3/q'].dtype == np.float64 and d['attention/3/q'].shape == (2, 2, 16)\n"
      "assert d['attention/3/k_positions'].dtype == np.int64 and d['attention/3/k_positions'].tolist()[0] == 1048579\n"
      "assert d['attention/3/causal'].shape == () and int(d['attention/3/causal']) == 1\n"
      "assert str(d['attention/3/spec']).startswith('layout=interleaved')\n";
  spit(dir / "read.py", script);
  const Ran p = run("/usr/bin/python3 " + (dir / "read.py") + " " + (dir / "inputs.npz"), dir);
  EXPECT_EQ(p.code, 0) << p.err;
}

TEST_F(AttentionFixture, WrongShapeIsOneLineAndExitCode2) {
  const Inputs& in = inputs.at(3);  // test 4: heads 2, q_tokens 3, k_tokens 4
  ASSERT_EQ(in.id, 4);
  ASSERT_EQ(in.heads, 2);
  ASSERT_EQ(in.q_tokens, 3);
  const Outputs o = attention(in, Recipe{rope_by_scalar_kernel});
  // [q_tokens, heads, k_tokens] instead of [heads, q_tokens, k_tokens]: same count, wrong order.
  spit(dir / "transposed.npz", encode_npz({{in.prefix + "scores", "F64", {in.q_tokens, in.heads, in.k_tokens}, o.scores, {}}}));
  const Ran r = run(
      kBin + " check --model exact --golden " + kGolden + " --candidate " + (dir / "transposed.npz") + " --json " + (dir / "report.json"),
      dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("transposed.npz: attention/4/scores: expected shape [2, 3, 4] (heads, q_tokens, k_tokens), got [3, 2, 4]"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// Attention golden values are the exact ones: under --model f32-recipe every attention test is
// skipped with that reason (gate/README.md), even when the candidate has its tensors, and the
// RoPE suite checked beside it is judged as usual, so the run passes on it alone. JUnit shows the
// skipped groups as <skipped> with the reason.
TEST_F(AttentionFixture, F32RecipeModelSkipsAttentionGroupsWithTheirReason) {
  std::filesystem::create_directory(dir / "golden");
  std::filesystem::copy_file(kGolden, dir / ("golden" + std::string("/attention.json")));
  const golden::GoldenFile small = small_golden();
  spit(dir / ("golden" + std::string("/small.json")), golden::write_golden(small));
  std::vector<OutTensor> tensors;
  for (const golden::RopeTest& t : small.groups[0].rope_tests) {
    tensors.push_back(
        {"gate-small/" + std::to_string(t.id) + "/output", "F32", {t.tokens, t.heads, t.head_dim}, *t.expected_f32_recipe, {}});
  }
  for (const Inputs& in : inputs) {
    const Outputs o = attention(in, Recipe{rope_by_scalar_kernel});
    tensors.push_back({in.prefix + "scores", dtype_tag(in.spec.dtype), {in.heads, in.q_tokens, in.k_tokens}, o.scores, {}});
    tensors.push_back({in.prefix + "outputs", dtype_tag(in.spec.dtype), {in.q_tokens, in.heads, in.v_dim}, o.outputs, {}});
  }
  spit(dir / "both.npz", encode_npz(tensors));
  const Ran r = run(kBin + " check --model f32-recipe --golden " + (dir / "golden") + " --candidate " + (dir / "both.npz") + " --json " +
                        (dir / "report.json") + " --junit " + (dir / "junit.xml"),
                    dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const auto j = report();
  std::size_t attention_groups = 0;
  for (const auto& g : j["groups"]) {
    if (g["suite"] == "gate-small") {
      EXPECT_EQ(g["verdict"], "pass");
      EXPECT_EQ(g["tests_skipped"], 0);
      continue;
    }
    ++attention_groups;
    EXPECT_EQ(g["verdict"], "skip");
    EXPECT_EQ(g["tests_skipped"], g["tests"]);
    EXPECT_EQ(g["attention"]["scores_checked"], 0);
    for (const auto& s : g["skipped_tests"]) {
      EXPECT_NE(s["reason"].get<std::string>().find("judged under --model exact or f32-angle, not f32-recipe"), std::string::npos) << s;
    }
  }
  EXPECT_EQ(attention_groups, golden.groups.size());
  EXPECT_EQ(j["summary"]["tests_skipped"], golden.number_of_tests);

  const nlohmann::json junit = read_xml_report(dir, dir / "junit.xml");
  EXPECT_EQ(junit["root"]["skipped"], std::to_string(golden.groups.size()));
  EXPECT_EQ(junit["root"]["failures"], "0");
  ASSERT_EQ(junit["testcases"].size(), golden.groups.size() + 1);
  for (const auto& c : junit["testcases"]) {
    EXPECT_TRUE(c["failure"].is_null()) << c;
    if (c["classname"] == "ropecheck.gate-small") {
      EXPECT_TRUE(c["skipped"].is_null()) << c;
    } else {
      ASSERT_FALSE(c["skipped"].is_null()) << c;
      EXPECT_NE(c["skipped"].get<std::string>().find("judged under --model exact or f32-angle, not f32-recipe"), std::string::npos) << c;
    }
  }
}

// A value cell of the HTML case table: its exact hex float, the first word of its hover title; the
// decimal shown reads back as that value in binary32 or binary64 (the shortest decimal of the value
// in its dtype's format, gate/report_html.cpp). NaN when the cell shows no value.
double shown_value(const nlohmann::json& cell) {
  const auto& titles = cell["titles"];
  if (titles.size() != 1) return std::nan("");
  const std::string title = titles[0];
  const std::optional<double> hex = reference::parse_hex(title.substr(0, title.find(' ')));
  if (!hex) return std::nan("");
  const std::string text = cell["text"];
  const bool reads_back = std::strtod(text.c_str(), nullptr) == *hex || static_cast<double>(std::strtof(text.c_str(), nullptr)) == *hex;
  EXPECT_TRUE(reads_back) << text << " shown for " << title;
  return *hex;
}

// Scores without 1/√d fail every test (MissingScaleFails). The JUnit <failure> of each group lists
// exactly that group's test ids, and its text one line per worst case naming a test of the group;
// the HTML table's score rows show the golden score and the candidate's score at the (head,
// query, key) they name, both read back here from the golden file and the candidate computed here.
TEST_F(AttentionFixture, FailingGroupsReportTheirTestsAndWorstScores) {
  Recipe recipe{rope_by_scalar_kernel};
  recipe.scale = false;
  const Ran r = check(recipe, true, false, "--allow-missing --junit " + (dir / "junit.xml") + " --html " + (dir / "r.html"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;

  const nlohmann::json junit = read_xml_report(dir, dir / "junit.xml");
  ASSERT_EQ(junit["testcases"].size(), golden.groups.size());
  EXPECT_EQ(junit["root"]["failures"], std::to_string(golden.groups.size()));
  for (std::size_t gi = 0; gi < golden.groups.size(); ++gi) {
    const nlohmann::json& c = junit["testcases"][gi];
    SCOPED_TRACE(c.dump());
    EXPECT_EQ(c["name"].get<std::string>().rfind("attention#" + std::to_string(gi) + " ", 0), 0u);
    ASSERT_FALSE(c["failure"].is_null());
    std::set<std::int64_t> group_ids;
    for (const auto& t : golden.groups[gi].attention_tests) group_ids.insert(t.id);
    const std::string message = c["failure"]["message"];
    std::smatch m;
    ASSERT_TRUE(std::regex_search(message, m, std::regex("^(\\d+) failing test\\(s\\): ([0-9, ]+);")));
    EXPECT_EQ(std::stoul(m[1]), group_ids.size());
    std::set<std::int64_t> listed;
    std::stringstream ids(m[2].str());
    for (std::string id; std::getline(ids, id, ',');) listed.insert(std::stoll(id));
    EXPECT_EQ(listed, group_ids);
    EXPECT_NE(message.find("score e"), std::string::npos);
    std::stringstream text(c["failure"]["text"].get<std::string>());
    int lines = 0;
    for (std::string line; std::getline(text, line);) {
      if (line.empty()) continue;
      ++lines;
      ASSERT_TRUE(std::regex_search(line, m, std::regex("^attention test (\\d+) \\[tolerance\\]: score \\(head"))) << line;
      EXPECT_TRUE(group_ids.count(std::stoll(m[1]))) << line;
    }
    EXPECT_GT(lines, 0);
  }

  std::map<std::int64_t, const golden::AttentionTest*> by_id;
  for (const golden::Group& g : golden.groups) {
    for (const golden::AttentionTest& t : g.attention_tests) by_id[t.id] = &t;
  }
  const nlohmann::json page = read_xml_report(dir, dir / "r.html");
  std::set<std::int64_t> shown;
  for (const auto& row : page["rows"]) {
    // test, kind, position, query (token), head, key (dims), where, expected, got, e, ulp
    if (row.size() != 11 || row[6]["text"].get<std::string>().rfind("score (", 0) != 0) continue;
    SCOPED_TRACE(row.dump());
    const std::int64_t id = std::stoll(row[0]["text"].get<std::string>());
    ASSERT_TRUE(by_id.count(id));
    const golden::AttentionTest& t = *by_id[id];
    const Inputs& in = *std::find_if(inputs.begin(), inputs.end(), [&](const Inputs& x) { return x.id == id; });
    const std::int64_t i = std::stoll(row[3]["text"].get<std::string>()), h = std::stoll(row[4]["text"].get<std::string>()),
                       k = std::stoll(row[5]["text"].get<std::string>());
    ASSERT_TRUE(i >= 0 && i < t.q_tokens && h >= 0 && h < t.heads && k >= 0 && k < t.k_tokens);
    const std::size_t at = static_cast<std::size_t>((h * t.q_tokens + i) * t.k_tokens + k);
    EXPECT_EQ(row[1]["text"], "tolerance");
    EXPECT_EQ(std::stoll(row[2]["text"].get<std::string>()), t.q_positions[static_cast<std::size_t>(i)]);
    EXPECT_EQ(row[6]["text"].get<std::string>().rfind(
                  "score (head " + std::to_string(h) + ", query " + std::to_string(i) + ", key " + std::to_string(k) + ")", 0),
              0u);
    EXPECT_EQ(shown_value(row[7]), t.expected_scores[at]);
    EXPECT_EQ(shown_value(row[8]), attention(in, recipe).scores[at]);
    EXPECT_EQ(row[10]["text"], "-");  // no ULP error for an attention value
    shown.insert(id);
  }
  // Every group failed, so every group's table shows at least one of its tests.
  for (const golden::Group& g : golden.groups) {
    EXPECT_TRUE(std::any_of(g.attention_tests.begin(), g.attention_tests.end(), [&](const auto& t) { return shown.count(t.id) > 0; }))
        << to_string(g.spec);
  }
}

}  // namespace
}  // namespace ropecheck::gate
