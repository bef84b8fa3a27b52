// The explanation (judge/inference.h, judge/README.md "Explanation") on outputs made by hand from
// the exact reference: memory and per-head faults named by head or by the read index that
// reproduces them, two changes named only when no single one fits, and nothing named on the
// spec's own outputs or on outputs that no change reproduces.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/random.h"
#include "judge/inference.h"
#include "reference/rope.h"
#include "reference/rounding.h"

namespace ropecheck::judge {
namespace {

constexpr std::int64_t kTokens = 256;
constexpr std::int64_t kHeads = 4;

Call make_test(const Spec& spec) {
  Call t;
  t.tokens = kTokens;
  t.heads = kHeads;
  t.head_dim = spec.head_dim;
  for (std::int64_t k = 0; k < kTokens; ++k) t.positions.push_back(3 * k);
  SplitMix64 rng(11);
  for (std::int64_t i = 0; i < kTokens * kHeads * spec.head_dim; ++i) {
    t.input.push_back(reference::round_to_format(4 * rng.unit() - 2, spec.dtype));
  }
  return t;
}

// The exact rotation under `used` of input row source(t, h), at position of token pt(t), into row
// (t, h); a row whose source is outside the test stays zero.
using Source = std::function<void(std::int64_t t, std::int64_t h, std::int64_t& st, std::int64_t& sh, std::int64_t& position)>;
std::vector<double> outputs(const Call& test, const Spec& used, const Source& source) {
  const std::int64_t d = test.head_dim;
  std::vector<double> out(test.input.size(), 0.0);
  for (std::int64_t t = 0; t < test.tokens; ++t) {
    for (std::int64_t h = 0; h < test.heads; ++h) {
      std::int64_t st = t, sh = h, position = test.positions[static_cast<std::size_t>(t)];
      source(t, h, st, sh, position);
      if (st < 0 || st >= test.tokens || sh < 0 || sh >= test.heads) continue;
      const std::span<const double> row(test.input.data() + (st * test.heads + sh) * d, static_cast<std::size_t>(d));
      const std::vector<std::int64_t> p{position};
      const std::vector<double> r = reference::apply(used, reference::Shape{1, 1, d}, p, row);
      std::copy(r.begin(), r.end(), out.begin() + (t * test.heads + h) * d);
    }
  }
  return out;
}

GroupDiagnosis explain(const Spec& spec, const Call& test, const std::vector<double>& out) {
  DiagnosedTest dt;
  dt.test = &test;
  dt.output = out;
  GroupDiagnosis d;
  infer_spec(spec, {dt}, true, 1, d);
  return d;
}

const Spec kSpec = parse_spec("layout=half,head_dim=64,base=10000,dtype=f32");

TEST(Inference, SpecsOwnOutputsNameNothing) {
  const Call test = make_test(kSpec);
  const GroupDiagnosis d = explain(kSpec, test, outputs(test, kSpec, [](auto, auto, auto&, auto&, auto&) {}));
  EXPECT_EQ(d.explanation, "");
  EXPECT_EQ(d.headline, "");
}

TEST(Inference, HeadsLeftUnrotatedAreNamedByHead) {
  const Call test = make_test(kSpec);
  std::vector<double> out = outputs(test, kSpec, [](auto, auto, auto&, auto&, auto&) {});
  for (std::int64_t t = 0; t < kTokens; ++t) {
    for (std::int64_t h = 2; h < kHeads; ++h) {
      for (std::int64_t k = 0; k < kSpec.head_dim; ++k) {
        const std::size_t i = static_cast<std::size_t>((t * kHeads + h) * kSpec.head_dim + k);
        out[i] = test.input[i];
      }
    }
  }
  const GroupDiagnosis d = explain(kSpec, test, out);
  EXPECT_EQ(d.explanation_kind, "head_unrotated") << d.explanation;
  EXPECT_NE(d.explanation.find("heads 2..3 of 4 left unrotated"), std::string::npos) << d.explanation;
  EXPECT_NE(d.headline.find("heads 2..3 of 4"), std::string::npos) << d.headline;
}

TEST(Inference, SwappedHeadsAreNamedWithTheirSources) {
  const Call test = make_test(kSpec);
  const GroupDiagnosis d = explain(kSpec, test, outputs(test, kSpec, [](auto, auto h, auto&, auto& sh, auto&) {
                                     if (h < 2) sh = 1 - h;
                                   }));
  EXPECT_EQ(d.explanation_kind, "head_permuted") << d.explanation;
  EXPECT_NE(d.explanation.find("heads permuted (head 0 holds head 1's input, head 1 holds head 0's input)"), std::string::npos)
      << d.explanation;
  EXPECT_NE(d.explanation.find("100% of pairs within its f32-angle bound"), std::string::npos) << d.explanation;
}

TEST(Inference, RowsReadFromAnOffsetAreNamed) {
  const Call test = make_test(kSpec);
  // Row r = t*heads + h holds row r + 4's input (token t + 1's), rotated at token t's position.
  const GroupDiagnosis d = explain(kSpec, test, outputs(test, kSpec, [](auto t, auto, auto& st, auto&, auto&) { st = t + 1; }));
  EXPECT_EQ(d.explanation_kind, "memory_offset") << d.explanation;
  EXPECT_NE(d.explanation.find("row r (token x head) holds row r+4's input (token t holds token t+1's), rotated at its own position"),
            std::string::npos)
      << d.explanation;
}

TEST(Inference, TokenStrideIgnoredIsNamed) {
  const Call test = make_test(kSpec);
  // The test's rows are a slice of heads 0..3 of a buffer of 8 heads per token (token stride 8
  // rows), walked as contiguous: row t*4 + h of the buffer. Rows landing on heads 4..7 (not the
  // test's) stay zero.
  const GroupDiagnosis d = explain(kSpec, test, outputs(test, kSpec, [](auto t, auto h, auto& st, auto& sh, auto&) {
                                     const std::int64_t row = t * kHeads + h;
                                     st = row / 8;
                                     sh = row % 8 < kHeads ? row % 8 : -1;
                                   }));
  EXPECT_EQ(d.explanation_kind, "memory_stride") << d.explanation;
  EXPECT_NE(d.explanation.find("reads head row 4t + h as if tokens were 4 head rows apart; the data's tokens are 8 head rows apart"),
            std::string::npos)
      << d.explanation;
}

TEST(Inference, PositionsThatDifferByHeadAreNamed) {
  const Call test = make_test(kSpec);
  const GroupDiagnosis d =
      explain(kSpec, test, outputs(test, kSpec, [](auto, auto h, auto&, auto&, auto& position) { position += 5 * h; }));
  EXPECT_EQ(d.explanation_kind, "head_positions") << d.explanation;
  EXPECT_NE(d.explanation.find("head 1 at positions offset by +5, head 2 by +10, head 3 by +15"), std::string::npos) << d.explanation;
}

TEST(Inference, TwoChangesOnlyWhenNoSingleOneFits) {
  const Call test = make_test(kSpec);
  const Spec used = parse_spec("layout=interleaved,head_dim=64,base=500000,dtype=f32");
  const GroupDiagnosis two = explain(kSpec, test, outputs(test, used, [](auto, auto, auto&, auto&, auto&) {}));
  EXPECT_EQ(two.explanation_kind, "two_changes") << two.explanation;
  EXPECT_NE(two.explanation.find("two changes: layout=interleaved (expected half) and base=500000 (expected 10000)"), std::string::npos)
      << two.explanation;
  // One change: named as one.
  const GroupDiagnosis one = explain(
      kSpec, test, outputs(test, parse_spec("layout=half,head_dim=64,base=500000,dtype=f32"), [](auto, auto, auto&, auto&, auto&) {}));
  EXPECT_EQ(one.explanation_kind, "base") << one.explanation;
}

TEST(Inference, OutputsNoChangeReproducesNameNothing) {
  const Call test = make_test(kSpec);
  std::vector<double> out(test.input.size());
  SplitMix64 rng(99);
  for (double& v : out) v = 4 * rng.unit() - 2;
  const GroupDiagnosis d = explain(kSpec, test, out);
  EXPECT_EQ(d.explanation_kind, "") << d.explanation;
  EXPECT_EQ(d.explanation.rfind("no single change of the spec reproduces them", 0), 0u) << d.explanation;
}

}  // namespace
}  // namespace ropecheck::judge
