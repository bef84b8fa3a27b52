// Multi-axis sections against the rules they come from, written again here from their sources:
// ggml's ggml_mrope_cache_init (ggml-org/llama.cpp ggml/src/ggml-cpu/ops.cpp: sector = i % Σs, the
// contiguous t/h/w/e ranges, and the IMROPE branch `sector % 3 == 1 && sector < 3 * sections[1]`
// ...) and HF transformers' Qwen3-VL apply_interleaved_mrope (t everywhere, then h at slice(1,
// 3·s_h, 3) and w at slice(2, 3·s_w, 3)). Then the reference's outputs for one token against a
// direct long-double rotation with the components the rule picks.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference/rope.h"
#include "spec/schedule.h"

namespace ropecheck {
namespace {

// ggml, four sections (t, h, w, e), either branch.
int ggml_component(const std::vector<int>& s, int i, bool imrope) {
  const int sect_dims = s[0] + s[1] + s[2] + s[3];
  const int sec_w = s[1] + s[0];
  const int sector = i % sect_dims;
  if (imrope) {
    if (sector % 3 == 1 && sector < 3 * s[1]) return 1;
    if (sector % 3 == 2 && sector < 3 * s[2]) return 2;
    if (sector % 3 == 0 && sector < 3 * s[0]) return 0;
    return 3;
  }
  if (sector >= s[0] && sector < sec_w) return 1;
  if (sector >= sec_w && sector < sec_w + s[2]) return 2;
  if (sector >= sec_w + s[2]) return 3;
  return 0;
}

// HF Qwen3-VL, three sections: a slice assignment per axis over the pair index.
int hf_interleaved_component(const std::vector<int>& s, int j) {
  int component = 0;
  for (int dim = 1; dim <= 2; ++dim) {
    const int offset = dim, length = 3 * s[dim];
    if (j >= offset && j < length && (j - offset) % 3 == 0) component = dim;
  }
  return component;
}

std::string sections_text(const std::vector<int>& s) {
  std::string out;
  for (std::size_t k = 0; k < s.size(); ++k) out += (k ? "/" : "") + std::to_string(s[k]);
  return out;
}

// Every pair of a spec per section list against `rule`, and the components a token carries.
template <class Rule>
void expect_rule(const std::string& axes, const std::vector<std::vector<int>>& lists, Rule rule) {
  for (const std::vector<int>& s : lists) {
    int pairs = 0;
    for (int n : s) pairs += n;
    const Spec spec = parse_spec("layout=half,head_dim=" + std::to_string(2 * pairs) + ",base=10000,axes=" + axes +
                                 ",sections=" + sections_text(s));
    EXPECT_EQ(position_components(spec), static_cast<int>(s.size()));
    for (int j = 0; j < pairs; ++j) EXPECT_EQ(position_component(spec, j), rule(s, j)) << sections_text(s) << " pair " << j;
  }
}

TEST(MultiAxisRule, ImropeFourSectionsIsGgmlsSectorRule) {
  expect_rule("imrope", {{24, 20, 20, 0}, {11, 11, 10, 0}, {16, 24, 24, 0}, {2, 3, 1, 4}, {5, 0, 3, 2}, {1, 1, 1, 13}},
              [](const std::vector<int>& s, int j) { return ggml_component(s, j, true); });
  // By hand, Qwen3-VL's 24/20/20 in ggml's form: the interleaving ends at pair 59 (3·20); pairs 60
  // and 63 are t (60, 63 < 72, multiples of 3), 61 and 62 fall through to e.
  const Spec qwen = parse_spec("layout=half,head_dim=128,base=5000000,axes=imrope,sections=24/20/20/0");
  const int expected[] = {0, 1, 2, 0, 1, 2};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(position_component(qwen, j), expected[j]);
  EXPECT_EQ(position_component(qwen, 59), 2);
  EXPECT_EQ(position_component(qwen, 60), 0);
  EXPECT_EQ(position_component(qwen, 61), 3);
  EXPECT_EQ(position_component(qwen, 62), 3);
  EXPECT_EQ(position_component(qwen, 63), 0);
}

TEST(MultiAxisRule, ImropeThreeSectionsIsHfsInterleaving) {
  expect_rule("imrope", {{24, 20, 20}, {16, 24, 24}, {2, 3, 1}, {0, 4, 4}}, hf_interleaved_component);
  const Spec qwen = parse_spec("layout=half,head_dim=128,base=5000000,axes=imrope,sections=24/20/20");
  EXPECT_EQ(position_component(qwen, 61), 0);  // HF: t, where ggml's 24/20/20/0 says e
  EXPECT_EQ(position_component(qwen, 62), 0);
}

TEST(MultiAxisRule, MropeFourSectionsIsGgmlsContiguousRule) {
  expect_rule("mrope", {{16, 24, 24, 0}, {3, 0, 4, 1}, {0, 2, 2, 2}, {1, 1, 1, 1}},
              [](const std::vector<int>& s, int j) { return ggml_component(s, j, false); });
}

// One token: out = (x·cos α − y·sin α, x·sin α + y·cos α) with α = m_c(j)·b^(−2j/d), c(j) from the
// rule above, in long double (relative error ~2^-60 for |α| < 20), against the correctly rounded
// f64 reference: within 1 ulp of f64 plus that.
void expect_one_token(const std::string& text, const std::vector<int>& s, bool imrope, bool hf) {
  const Spec spec = parse_spec(text);
  const int pairs = spec.rotary_dim / 2;
  const std::vector<std::int64_t> position = {5, 7, 11, 13};
  std::vector<std::int64_t> tuple(position.begin(), position.begin() + static_cast<long>(s.size()));
  std::vector<double> input;
  for (int i = 0; i < spec.head_dim; ++i) input.push_back(std::ldexp(static_cast<double>((i * 37) % 17) - 8, -3));
  reference::Options options;
  const auto out = reference::apply(spec, reference::Shape{1, 1, spec.head_dim}, tuple, input, options);
  ASSERT_EQ(out.size(), input.size());
  for (int j = 0; j < pairs; ++j) {
    const int c = hf ? hf_interleaved_component(s, j) : ggml_component(s, j, imrope);
    const long double alpha = static_cast<long double>(position[static_cast<std::size_t>(c)]) *
                              std::pow(10000.0L, -2.0L * j / spec.rotary_dim);
    const long double x = input[static_cast<std::size_t>(j)], y = input[static_cast<std::size_t>(j + pairs)];
    const long double first = x * std::cos(alpha) - y * std::sin(alpha);
    const long double second = x * std::sin(alpha) + y * std::cos(alpha);
    EXPECT_LE(std::fabs(out[static_cast<std::size_t>(j)] - first), 0x1p-52L * std::fabs(first) + 0x1p-60L) << text << " pair " << j;
    EXPECT_LE(std::fabs(out[static_cast<std::size_t>(j + pairs)] - second), 0x1p-52L * std::fabs(second) + 0x1p-60L)
        << text << " pair " << j;
  }
}

TEST(MultiAxisRule, ReferenceRotatesOneTokenByTheRulesComponents) {
  expect_one_token("layout=half,head_dim=20,base=10000,dtype=f64,axes=imrope,sections=3/2/2/3", {3, 2, 2, 3}, true, false);
  expect_one_token("layout=half,head_dim=16,base=10000,dtype=f64,axes=imrope,sections=2/3/3", {2, 3, 3}, true, true);
  expect_one_token("layout=half,head_dim=16,base=10000,dtype=f64,axes=mrope,sections=3/0/4/1", {3, 0, 4, 1}, false, false);
}

}  // namespace
}  // namespace ropecheck
