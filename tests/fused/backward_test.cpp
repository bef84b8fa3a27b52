// The fused backward pass (fused/backward.h): the exact gradients on cases computed by hand, a
// careful float32 backward kernel written here (g = R(−θ)·dy with float32 cos/sin of the float32
// angle, then the RMSNorm backward in float32, one rounding to the data dtype) passing, and the
// same kernel with the forward rotation in place of the inverse one (the sign of θ) failing.
#include "fused/backward.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "reference/rounding.h"

namespace ropecheck::fused {
namespace {

struct CarefulBackward {
  const FusedSpec& spec;
  bool forward_rotation = false;  // the bug: R(θ)·dy in place of R(−θ)·dy

  // One head: dx (into dx) and its share of dw (added to dw), in float32.
  void head(const std::vector<double>& x, const std::vector<double>& dy, const std::vector<double>& weight, std::int64_t position,
            std::int64_t base, std::vector<float>& dx, std::vector<float>& dw) const {
    const int d = spec.rope.head_dim, rot = spec.rope.rotary_dim;
    const bool half = spec.rope.layout == Layout::half;
    const float b = std::stof(spec.rope.base);
    std::vector<float> g(d);
    for (int i = 0; i < d; ++i) g[i] = static_cast<float>(dy[base + i]);
    for (int j = 0; j < rot / 2; ++j) {
      const float inv_freq = 1.0f / std::pow(b, static_cast<float>(2 * j) / static_cast<float>(rot));
      const float angle = static_cast<float>(position) * inv_freq;
      const float c = static_cast<float>(std::cos(static_cast<double>(angle)));
      const float s = (forward_rotation ? 1.0f : -1.0f) * static_cast<float>(std::sin(static_cast<double>(angle)));
      const int f = half ? j : 2 * j, h = half ? j + rot / 2 : 2 * j + 1;
      const float a = g[f] * c - g[h] * s;
      const float e = g[f] * s + g[h] * c;
      g[f] = a;
      g[h] = e;
    }
    if (spec.norm == NormPlace::none) {
      for (int i = 0; i < d; ++i) dx[base + i] = g[i];
      return;
    }
    float sum = 0;
    for (int i = 0; i < d; ++i) sum += static_cast<float>(x[base + i]) * static_cast<float>(x[base + i]);
    const float inv_r = 1.0f / std::sqrt(sum / static_cast<float>(d) + std::stof(spec.eps));
    std::vector<float> xhat(d), h(d);
    float mean = 0;
    for (int i = 0; i < d; ++i) {
      xhat[i] = static_cast<float>(x[base + i]) * inv_r;
      const float w = spec.weight == NormWeight::one_plus ? 1.0f + static_cast<float>(weight[i]) : static_cast<float>(weight[i]);
      h[i] = w * g[i];
      mean += h[i] * xhat[i];
      dw[i] += g[i] * xhat[i];
    }
    mean /= static_cast<float>(d);
    for (int i = 0; i < d; ++i) dx[base + i] = (h[i] - xhat[i] * mean) * inv_r;
  }

  void tensor(const FusedInputs& in, const std::vector<double>& x, const std::vector<double>& dy, const std::vector<double>& weight,
              std::int64_t heads, std::vector<double>& dx, std::vector<double>& dw) const {
    const int d = spec.rope.head_dim;
    std::vector<float> fdx(x.size()), fdw(static_cast<std::size_t>(d), 0.0f);
    for (std::int64_t t = 0; t < in.tokens; ++t) {
      for (std::int64_t h = 0; h < heads; ++h) head(x, dy, weight, in.positions[t], (t * heads + h) * d, fdx, fdw);
    }
    const auto round = [&](float v) { return static_cast<double>(reference::round_to_format(static_cast<double>(v), spec.rope.dtype)); };
    for (float v : fdx) dx.push_back(round(v));
    if (spec.norm != NormPlace::none) {
      for (float v : fdw) dw.push_back(round(v));
    }
  }

  FusedBackwardOutputs run(const FusedInputs& in, const FusedGradients& gr) const {
    FusedBackwardOutputs out;
    tensor(in, in.q, gr.dq_out, in.q_weight, spec.q_heads, out.dq, out.dq_weight);
    tensor(in, in.k, gr.dk_out, in.k_weight, spec.k_heads, out.dk, out.dk_weight);
    return out;
  }
};

FusedJudgement judge_kernel(const std::string& text, bool forward_rotation) {
  const FusedSpec spec = parse_fused_spec(text);
  const FusedInputs in = random_inputs(spec, 16, 11);
  const FusedGradients gr = random_gradients(spec, 16, 11);
  return judge_backward(spec, in, gr, CarefulBackward{spec, forward_rotation}.run(in, gr), judge::kDefaultModel);
}

const char* kSpecs[] = {
    "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,q_heads=4,k_heads=2",
    "layout=interleaved,head_dim=64,rotary_dim=32,base=10000,dtype=f32,norm=before,norm_weight=one_plus,q_heads=2",
    "layout=half,head_dim=64,base=500000,dtype=f16",
    "layout=half,head_dim=96,base=10000,dtype=f32,norm=before,eps=1e-5",
};

TEST(FusedBackward, CarefulFloat32BackwardPasses) {
  for (const char* text : kSpecs) {
    const FusedJudgement j = judge_kernel(text, false);
    EXPECT_EQ(j.verdict, judge::Verdict::pass) << text << "\n" << fused_report_text(j);
    EXPECT_TRUE(j.explanation.empty()) << j.explanation;
    for (const TensorResult& r : j.tensors) EXPECT_GT(r.judged, 0) << r.tensor;
  }
}

TEST(FusedBackward, ForwardRotationInBackwardFails) {
  for (const char* text : kSpecs) {
    const FusedJudgement j = judge_kernel(text, true);
    EXPECT_EQ(j.verdict, judge::Verdict::fail) << text << "\n" << fused_report_text(j);
    ASSERT_TRUE(j.first_failure.has_value());
    EXPECT_EQ(j.first_failure->tensor, "dq") << fused_report_text(j);
    EXPECT_EQ(j.explanation.rfind("reproduced by the forward rotation R(θ)·dy in place of R(−θ)·dy", 0), 0u) << j.explanation;
  }
}

TEST(FusedBackward, ReferencePassesItsOwnJudge) {
  for (const char* text : kSpecs) {
    const FusedSpec spec = parse_fused_spec(text);
    const FusedInputs in = random_inputs(spec, 8, 3);
    const FusedGradients gr = random_gradients(spec, 8, 3);
    const FusedJudgement j = judge_backward(spec, in, gr, backward_reference(spec, in, gr), judge::Model::exact);
    EXPECT_EQ(j.verdict, judge::Verdict::pass) << text << "\n" << fused_report_text(j);
  }
}

TEST(FusedBackward, InverseRotationByHand) {
  // head_dim 2 (θ_0 = base^0 = 1), position 1: g = R(−1)·dy = (cos 1·a + sin 1·b, −sin 1·a + cos 1·b).
  const FusedSpec spec = parse_fused_spec("head_dim=2,base=10000,dtype=f32");
  FusedInputs in;
  in.tokens = 1;
  in.q = {0.5, 0.25};
  in.k = {1, 1};
  in.positions = {1};
  const FusedGradients gr{{3, 4}, {1, 0}};
  const FusedBackwardOutputs out = backward_reference(spec, in, gr);
  const long double c = std::cos(1.0L), s = std::sin(1.0L);
  EXPECT_EQ(out.dq[0], static_cast<float>(c * 3 + s * 4));
  EXPECT_EQ(out.dq[1], static_cast<float>(-s * 3 + c * 4));
  EXPECT_EQ(out.dk[0], static_cast<float>(c));
  EXPECT_EQ(out.dk[1], static_cast<float>(-s));
  EXPECT_TRUE(out.dq_weight.empty());
}

TEST(FusedBackward, NormBackwardByHand) {
  // head_dim 2, position 0 (no rotation), eps 0, x = (3, 4), w = (1, 2), dy = (1, 0): r = sqrt(12.5),
  // x̂ = x/r, h = w·g = (1, 0), mean(h·x̂) = 3/(2r); dx = (h − x̂·3/(2r))/r = (1 − 9/25, −12/25)/r,
  // dw = g·x̂ = (3/r, 0).
  const FusedSpec spec = parse_fused_spec("head_dim=2,dtype=f32,norm=before,eps=0");
  FusedInputs in;
  in.tokens = 1;
  in.q = {3, 4};
  in.k = {3, 4};
  in.positions = {0};
  in.q_weight = {1, 2};
  in.k_weight = {1, 2};
  const FusedGradients gr{{1, 0}, {1, 0}};
  const FusedBackwardOutputs out = backward_reference(spec, in, gr);
  const long double r = std::sqrt(12.5L);
  EXPECT_EQ(out.dq[0], static_cast<float>((1 - 9.0L / 25) / r));
  EXPECT_EQ(out.dq[1], static_cast<float>((-12.0L / 25) / r));
  EXPECT_EQ(out.dq_weight[0], static_cast<float>(3 / r));
  EXPECT_EQ(out.dq_weight[1], 0.0);
}

TEST(FusedBackward, SpecsWithoutABackwardAreRefused) {
  for (const char* text :
       {"head_dim=64,dtype=bf16,norm=after", "head_dim=64,dtype=bf16,fp8=e4m3", "head_dim=64,dtype=bf16,destination=paged"}) {
    const FusedSpec spec = parse_fused_spec(text);
    EXPECT_THROW(check_backward_spec(spec), InputError) << text;
  }
}

}  // namespace
}  // namespace ropecheck::fused
