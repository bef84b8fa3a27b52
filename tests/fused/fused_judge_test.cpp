// The fused reference and judge (fused/fused.h): the reference on cases computed by hand, and the
// judge on a careful float32 implementation written here (float32 norm and rotation, one rounding
// to bf16 or an FP8 quantization at the returned per-token scale, the paged cache), which passes on
// default settings, and on that implementation with one fused bug each, which fails.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "fused/fp8.h"
#include "fused/fused.h"
#include "reference/rounding.h"

namespace ropecheck::fused {
namespace {

enum class Bug { none, swap_weights, norm_after, eps_wrong, plain_weight, scale_x2, no_saturation, slot_off, pairing_mixed, partial_lost };

// A careful fused kernel in float32, as the trackers' kernels compute: inv_freq = 1/base^(2j/r),
// the angle float(m)·inv_freq, cos/sin of that float angle, the norm's sum of squares in order,
// 1/sqrt(mean + eps), the rotation's products and sums in float32, then one rounding to the data
// dtype or t = v/ŝ in float32 quantized to FP8 with ŝ = amax/M (per token) returned (v the float32
// value, or its rounding to the data dtype under rounding=intermediate).
struct Careful {
  const FusedSpec& spec;
  Bug bug;

  std::vector<float> head(const FusedInputs& in, bool is_k, std::int64_t t, std::int64_t h) const {
    const int d = spec.rope.head_dim;
    const bool half = (spec.rope.layout == Layout::half) != (bug == Bug::pairing_mixed);
    const int rot = bug == Bug::partial_lost ? d : spec.rope.rotary_dim;
    const std::int64_t heads = is_k ? spec.k_heads : spec.q_heads;
    const std::vector<double>& x = is_k ? in.k : in.q;
    const bool swap = bug == Bug::swap_weights;
    const std::vector<double>& weight = (is_k != swap) ? in.k_weight : in.q_weight;
    std::vector<float> v(d);
    for (int i = 0; i < d; ++i) v[i] = static_cast<float>(x[(t * heads + h) * d + i]);
    NormPlace norm = spec.norm;
    if (bug == Bug::norm_after && norm == NormPlace::before) norm = NormPlace::after;
    auto normalize = [&] {
      float sum = 0;
      for (float a : v) sum += a * a;
      const float eps = bug == Bug::eps_wrong ? 1e-5f : std::stof(spec.eps);
      const float r = 1.0f / std::sqrt(sum / static_cast<float>(d) + eps);
      const bool one_plus = spec.weight == NormWeight::one_plus && bug != Bug::plain_weight;
      for (int i = 0; i < d; ++i) {
        const float w = one_plus ? 1.0f + static_cast<float>(weight[i]) : static_cast<float>(weight[i]);
        v[i] = (v[i] * r) * w;
      }
    };
    if (norm == NormPlace::before) normalize();
    const float base = std::stof(spec.rope.base);
    const float position = static_cast<float>(in.positions[t]);
    for (int j = 0; j < rot / 2; ++j) {
      const float inv_freq = 1.0f / std::pow(base, static_cast<float>(2 * j) / static_cast<float>(rot));
      const float angle = position * inv_freq;
      const float c = static_cast<float>(std::cos(static_cast<double>(angle)));
      const float s = static_cast<float>(std::sin(static_cast<double>(angle)));
      const int f = half ? j : 2 * j, g = half ? j + rot / 2 : 2 * j + 1;
      const float a = v[f] * c - v[g] * s;
      const float b = v[f] * s + v[g] * c;
      v[f] = a;
      v[g] = b;
    }
    if (norm == NormPlace::after) normalize();
    return v;
  }

  // One tensor: the stored values and the per-token scales.
  void tensor(const FusedInputs& in, bool is_k, std::vector<double>& out, std::vector<double>& scales) const {
    const int d = spec.rope.head_dim;
    const std::int64_t heads = is_k ? spec.k_heads : spec.q_heads;
    for (std::int64_t t = 0; t < in.tokens; ++t) {
      std::vector<std::vector<float>> rows;
      float amax = 0;
      for (std::int64_t h = 0; h < heads; ++h) {
        rows.push_back(head(in, is_k, t, h));
        for (float& a : rows.back()) {
          if (spec.fp8 != Fp8::none && spec.rounding == Rounding::intermediate) {
            a = static_cast<float>(reference::round_to_format(static_cast<double>(a), spec.rope.dtype));
          }
          amax = std::max(amax, std::fabs(a));
        }
      }
      const float max = static_cast<float>(fp8_format(spec.fp8).max);
      const float scale = spec.scale == ScaleMode::fixed ? std::stof(spec.scale_value) : amax / max;
      if (spec.fp8 != Fp8::none && spec.scale == ScaleMode::per_token) scales.push_back(bug == Bug::scale_x2 ? 2.0 * scale : scale);
      const bool saturate = spec.saturate && bug != Bug::no_saturation;
      for (const auto& row : rows) {
        for (int i = 0; i < d; ++i) {
          if (spec.fp8 == Fp8::none) {
            out.push_back(static_cast<double>(reference::round_to_format(static_cast<double>(row[i]), spec.rope.dtype)));
          } else {
            const float t_scaled = row[i] / scale;
            out.push_back(quantize_fp8(static_cast<double>(t_scaled), spec.fp8, saturate));
          }
        }
      }
    }
  }

  FusedOutputs run(const FusedInputs& in) const {
    FusedOutputs out;
    tensor(in, false, out.q_out, out.q_scale);
    std::vector<double> k;
    tensor(in, true, k, out.k_scale);
    if (spec.destination == Destination::contiguous) {
      out.k_out = k;
      return out;
    }
    const std::int64_t row = spec.k_heads * spec.rope.head_dim;
    const std::int64_t slots = in.num_blocks * spec.block_size;
    out.k_cache.assign(static_cast<std::size_t>(slots * row), 0.0);
    for (std::int64_t t = 0; t < in.tokens; ++t) {
      std::int64_t s = in.slot_mapping[t];
      if (s < 0) continue;
      if (bug == Bug::slot_off) s = (s + 1) % slots;
      std::copy(k.begin() + t * row, k.begin() + (t + 1) * row, out.k_cache.begin() + s * row);
    }
    return out;
  }
};

const char* kDefault =
    "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=per_token,destination=paged,"
    "block_size=16,q_heads=4,k_heads=2";

FusedJudgement judge_careful(const std::string& text, Bug bug, double input_scale = 1) {
  const FusedSpec spec = parse_fused_spec(text);
  FusedInputs in = random_inputs(spec, 24, 7);
  for (double& v : in.q) v *= input_scale;
  for (double& v : in.k) v *= input_scale;
  return judge_fused(spec, in, Careful{spec, bug}.run(in), judge::kDefaultModel);
}

TEST(FusedJudge, CarefulPassesOnDefaults) {
  for (const std::string& text :
       {std::string(kDefault), std::string("layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,q_heads=2,k_heads=2"),
        std::string("layout=interleaved,head_dim=64,rotary_dim=32,base=10000,dtype=bf16,norm=after,norm_weight=one_plus,"
                    "fp8=e5m2,scale=per_token,q_heads=2"),
        std::string("layout=half,head_dim=128,base=500000,dtype=f16,norm=before,eps=1e-5,fp8=e4m3,scale=fixed,scale_value=0.03125"),
        std::string("layout=half,head_dim=96,base=10000,dtype=bf16,norm=before,fp8=e4m3,saturate=false,scale=per_token"),
        std::string("layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,fp8=e4m3,rounding=intermediate,scale=per_token")}) {
    const FusedJudgement j = judge_careful(text, Bug::none);
    EXPECT_EQ(j.verdict, judge::Verdict::pass) << text << "\n" << fused_report_text(j);
  }
}

TEST(FusedJudge, ReferencePassesItsOwnJudge) {
  for (const char* text : {kDefault, "layout=interleaved,head_dim=64,dtype=f32,norm=after,fp8=e5m2,scale=per_head,q_heads=3",
                           "head_dim=32,dtype=bf16,norm=before,fp8=e4m3,rounding=intermediate,scale=per_token"}) {
    const FusedSpec spec = parse_fused_spec(text);
    const FusedInputs in = random_inputs(spec, 8, 3);
    const FusedJudgement j = judge_fused(spec, in, fused_reference(spec, in), judge::Model::exact);
    EXPECT_EQ(j.verdict, judge::Verdict::pass) << text << "\n" << fused_report_text(j);
    for (const auto& r : j.tensors) EXPECT_GT(r.judged, 0) << r.tensor;
  }
}

void expect_fails(const std::string& text, Bug bug, const char* what, double input_scale = 1) {
  const FusedJudgement j = judge_careful(text, bug, input_scale);
  EXPECT_EQ(j.verdict, judge::Verdict::fail) << what << "\n" << fused_report_text(j);
}

TEST(FusedJudge, EachFusedBugFails) {
  expect_fails(kDefault, Bug::swap_weights, "q and k norm weights swapped");
  expect_fails(kDefault, Bug::norm_after, "norm after where the spec says before");
  expect_fails(kDefault, Bug::scale_x2, "returned scale off by 2");
  expect_fails(kDefault, Bug::slot_off, "slot one off");
  expect_fails(kDefault, Bug::pairing_mixed, "neox and gptj pairing mixed");
  const std::string partial = "layout=half,head_dim=128,rotary_dim=64,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=per_token";
  EXPECT_EQ(judge_careful(partial, Bug::none).verdict, judge::Verdict::pass);
  expect_fails(partial, Bug::partial_lost, "partial rotary lost");
  const std::string one_plus = "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,norm_weight=one_plus,fp8=e4m3,scale=per_token";
  EXPECT_EQ(judge_careful(one_plus, Bug::none).verdict, judge::Verdict::pass);
  expect_fails(one_plus, Bug::plain_weight, "the 1 + w form lost");
  // eps shows where the mean of squares is near it: inputs of magnitude 4e-3 (mean of squares ≈ 5e-6).
  EXPECT_EQ(judge_careful(kDefault, Bug::none, 1e-3).verdict, judge::Verdict::pass);
  expect_fails(kDefault, Bug::eps_wrong, "eps 1e-5 for 1e-6", 1e-3);
  // Saturation shows where values pass 448 at a fixed scale: |v| up to ≈ 2.6, ŝ = 1/256.
  const std::string fixed = "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=fixed,scale_value=0.00390625";
  EXPECT_EQ(judge_careful(fixed, Bug::none).verdict, judge::Verdict::pass);
  expect_fails(fixed, Bug::no_saturation, "no saturation");
}

TEST(FusedReference, NormThenRotationByHand) {
  // head_dim 2, position 0 (identity rotation): y = x·w/sqrt((x1² + x2²)/2 + eps), x = (3, 4), w = (1, 0.5),
  // eps = 0: rms = sqrt(12.5); y = (3/sqrt(12.5), 2/sqrt(12.5)), correctly rounded to f32.
  const FusedSpec spec = parse_fused_spec("head_dim=2,dtype=f32,norm=before,eps=0");
  FusedInputs in;
  in.tokens = 1;
  in.q = {3, 4};
  in.k = {3, 4};
  in.positions = {0};
  in.q_weight = {1, 0.5};
  in.k_weight = {0.5, 1};
  const FusedOutputs out = fused_reference(spec, in);
  const long double r = std::sqrt(12.5L);
  EXPECT_EQ(out.q_out[0], static_cast<float>(3 / r));
  EXPECT_EQ(out.q_out[1], static_cast<float>(2 / r));
  EXPECT_EQ(out.k_out[0], static_cast<float>(1.5L / r));
  EXPECT_EQ(out.k_out[1], static_cast<float>(4 / r));
}

TEST(FusedReference, PerTokenScaleAndPagedPlacement) {
  // No norm, position 0: the values themselves; per-token amax 448 gives ŝ = 1 and the codes the values.
  const FusedSpec spec = parse_fused_spec("head_dim=2,dtype=f32,fp8=e4m3,scale=per_token,destination=paged,block_size=2");
  FusedInputs in;
  in.tokens = 2;
  in.q = {448, -224, 1, 0.5};
  in.k = {-448, 3, 2, 1};
  in.positions = {0, 0};
  in.slot_mapping = {3, 0};
  in.num_blocks = 2;
  const FusedOutputs out = fused_reference(spec, in);
  EXPECT_EQ(out.q_scale[0], 1.0);
  EXPECT_EQ(out.q_out[0], 448.0);
  EXPECT_EQ(out.q_out[1], -224.0);
  EXPECT_EQ(out.q_scale[1], static_cast<double>(1.0f / 448.0f));
  // Slot 3: block 1, row 1 (values 6, 7 of the cache); slot 0: block 0, row 0.
  ASSERT_EQ(out.k_cache.size(), 8u);
  EXPECT_EQ(out.k_cache[6], -448.0);
  EXPECT_EQ(out.k_cache[7], 3.0);
  EXPECT_EQ(out.k_cache[0], 448.0);  // 2/ŝ with ŝ = fl32(2/448): 448·(1 ± 2^-24), saturated or rounded to 448
  EXPECT_EQ(out.k_cache[2], 0.0);    // slot 1: not written
  EXPECT_TRUE(out.k_out.empty());
}

TEST(FusedJudge, BadSizesNameTheTensor) {
  const FusedSpec spec = parse_fused_spec(kDefault);
  const FusedInputs in = random_inputs(spec, 4, 1);
  FusedOutputs out = fused_reference(spec, in);
  out.k_cache.pop_back();
  try {
    (void)judge_fused(spec, in, out, judge::kDefaultModel);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("k_cache"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ropecheck::fused
