// The fused reference and judge (fused/fused.h): the reference on cases computed by hand, and the
// judge on the careful float32 kernel of tests/fused/explain_kernel.h (float32 norm and rotation,
// one rounding to bf16 or an FP8 quantization at the returned per-token scale, the paged cache),
// which passes on default settings, and on that kernel with one fused bug each, which fails.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "fused/fp8.h"
#include "fused/fused.h"
#include "reference/rounding.h"
#include "tests/fused/explain_kernel.h"

namespace ropecheck::fused {
namespace {

using testing::Bugs;
using testing::CarefulKernel;
using testing::kDefault;

FusedJudgement judge_careful(const std::string& text, const Bugs& bug, double input_scale = 1) {
  const FusedSpec spec = parse_fused_spec(text);
  FusedInputs in = random_inputs(spec, 24, 7);
  for (double& v : in.q) v *= input_scale;
  for (double& v : in.k) v *= input_scale;
  return judge_fused(spec, in, CarefulKernel{spec, bug}.run(in), judge::kDefaultModel);
}

TEST(FusedJudge, CarefulPassesOnDefaults) {
  for (const std::string& text :
       {std::string(kDefault), std::string("layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,q_heads=2,k_heads=2"),
        std::string("layout=interleaved,head_dim=64,rotary_dim=32,base=10000,dtype=bf16,norm=after,norm_weight=one_plus,"
                    "fp8=e5m2,scale=per_token,q_heads=2"),
        std::string("layout=half,head_dim=128,base=500000,dtype=f16,norm=before,eps=1e-5,fp8=e4m3,scale=fixed,scale_value=0.03125"),
        std::string("layout=half,head_dim=96,base=10000,dtype=bf16,norm=before,fp8=e4m3,saturate=false,scale=per_token"),
        std::string("layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,fp8=e4m3,rounding=intermediate,scale=per_token")}) {
    const FusedJudgement j = judge_careful(text, Bugs{});
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

void expect_fails(const std::string& text, const Bugs& bug, const char* what, double input_scale = 1) {
  const FusedJudgement j = judge_careful(text, bug, input_scale);
  EXPECT_EQ(j.verdict, judge::Verdict::fail) << what << "\n" << fused_report_text(j);
}

TEST(FusedJudge, EachFusedBugFails) {
  expect_fails(kDefault, Bugs{.swap_weights = true}, "q and k norm weights swapped");
  expect_fails(kDefault, Bugs{.norm_moved = true}, "norm after where the spec says before");
  expect_fails(kDefault, Bugs{.scale_factor = 2}, "returned scale off by 2");
  expect_fails(kDefault, Bugs{.slot_shift = 1}, "slot one off");
  expect_fails(kDefault, Bugs{.pairing_mixed = true}, "neox and gptj pairing mixed");
  const std::string partial = "layout=half,head_dim=128,rotary_dim=64,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=per_token";
  EXPECT_EQ(judge_careful(partial, Bugs{}).verdict, judge::Verdict::pass);
  expect_fails(partial, Bugs{.partial_lost = true}, "partial rotary lost");
  const std::string one_plus = "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,norm_weight=one_plus,fp8=e4m3,scale=per_token";
  EXPECT_EQ(judge_careful(one_plus, Bugs{}).verdict, judge::Verdict::pass);
  expect_fails(one_plus, Bugs{.weight_flipped = true}, "the 1 + w form lost");
  // eps shows where the mean of squares is near it: inputs of magnitude 4e-3 (mean of squares ≈ 5e-6).
  EXPECT_EQ(judge_careful(kDefault, Bugs{}, 1e-3).verdict, judge::Verdict::pass);
  expect_fails(kDefault, Bugs{.eps = 1e-5f}, "eps 1e-5 for 1e-6", 1e-3);
  // Saturation shows where values pass 448 at a fixed scale: |v| up to ≈ 2.6, ŝ = 1/256.
  const std::string fixed = "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=fixed,scale_value=0.00390625";
  EXPECT_EQ(judge_careful(fixed, Bugs{}).verdict, judge::Verdict::pass);
  expect_fails(fixed, Bugs{.saturation_flipped = true}, "no saturation");
}

TEST(FusedReference, NormThenRotationByHand) {
  // head_dim 2, position 0 (identity rotation): y = x·w/sqrt((x1² + x2²)/2 + eps), x = (3, 4), w = (1, 0.5),
  // eps = 0: rms = sqrt(12.5); y = (3/sqrt(12.5), 2/sqrt(12.5)), correctly rounded to f32.
  const FusedSpec spec = parse_fused_spec("head_dim=2,dtype=f32,norm=before,eps=0");
  const FusedInputs in{.tokens = 1,
                       .q = {3, 4},
                       .k = {3, 4},
                       .positions = {0},
                       .q_weight = {1, 0.5},
                       .k_weight = {0.5, 1},
                       .slot_mapping = {},
                       .num_blocks = 0};
  const FusedOutputs out = fused_reference(spec, in);
  const long double r = std::sqrt(12.5L);
  EXPECT_EQ(out.q_out[0], static_cast<float>(3 / r));
  EXPECT_EQ(out.q_out[1], static_cast<float>(2 / r));
  EXPECT_EQ(out.k_out[0], static_cast<float>(1.5L / r));
  EXPECT_EQ(out.k_out[1], static_cast<float>(4 / r));
}

TEST(FusedReference, LayerNormPerHeadByHand) {
  // head_dim 4, position 0 (identity rotation), eps = 0. Head 0: x = (1, 2, 3, 4), mean 2.5, variance
  // 1.25: y = (x − 2.5)·w/sqrt(1.25); head 1: x = (2, 2, 2, 6), mean 3, variance 3: y = (x − 3)·w/sqrt(3).
  // Per-head weights: head 0 (1, 1, 1, 1), head 1 (2, 2, 2, 0.5); k with q's rows swapped.
  const FusedSpec spec =
      parse_fused_spec("head_dim=4,dtype=f32,norm=before,norm_kind=layer,weight_shape=per_head,eps=0,q_heads=2,k_heads=2");
  FusedInputs in;
  in.tokens = 1;
  in.q = {1, 2, 3, 4, 2, 2, 2, 6};
  in.k = in.q;
  in.positions = {0};
  in.q_weight = {1, 1, 1, 1, 2, 2, 2, 0.5};
  in.k_weight = {2, 2, 2, 0.5, 1, 1, 1, 1};
  const FusedOutputs out = fused_reference(spec, in);
  const long double r0 = std::sqrt(1.25L), r1 = std::sqrt(3.0L);
  EXPECT_EQ(out.q_out[0], static_cast<float>(-1.5L / r0));
  EXPECT_EQ(out.q_out[3], static_cast<float>(1.5L / r0));
  EXPECT_EQ(out.q_out[4], static_cast<float>(-2 / r1));
  EXPECT_EQ(out.q_out[7], static_cast<float>(1.5L / r1));
  EXPECT_EQ(out.k_out[0], static_cast<float>(-3 / r0));
  EXPECT_EQ(out.k_out[3], static_cast<float>(0.75L / r0));
  EXPECT_EQ(out.k_out[4], static_cast<float>(-1 / r1));
  EXPECT_EQ(out.k_out[7], static_cast<float>(3 / r1));
}

TEST(FusedJudge, LayerNormWithoutBoundFailsClosed) {
  // Head 0's mean (2^40) is far above 2^23/d times its spread (about 1), so λ > 1/2 and no bound is
  // derived (docs/fused-bounds.md §1b): even the exact outputs must not pass unjudged.
  const FusedSpec spec = parse_fused_spec("head_dim=4,dtype=f32,norm=before,norm_kind=layer,eps=0,q_heads=1,k_heads=1");
  FusedInputs in;
  in.tokens = 1;
  const double big = std::ldexp(1.0, 40);
  in.q = {big + 1, big - 1, big + 2, big - 2};
  in.k = {1, 2, 3, 4};
  in.positions = {0};
  in.q_weight = {1, 1, 1, 1};
  in.k_weight = {1, 1, 1, 1};
  const FusedOutputs out = fused_reference(spec, in);
  const FusedJudgement j = judge_fused(spec, in, out, judge::Model::exact);
  EXPECT_EQ(j.verdict, judge::Verdict::fail);
  ASSERT_TRUE(j.first_failure.has_value());
  EXPECT_EQ(j.first_failure->tensor, "q_out");
  EXPECT_NE(fused_report_text(j).find("no bound applies"), std::string::npos) << fused_report_text(j);
}

TEST(FusedJudge, PerHeadWeightsSizeNamed) {
  const FusedSpec spec = parse_fused_spec("head_dim=8,norm=before,weight_shape=per_head,q_heads=2,k_heads=1");
  FusedInputs in = random_inputs(spec, 2, 3);
  EXPECT_EQ(in.q_weight.size(), 16u);
  EXPECT_EQ(in.k_weight.size(), 8u);
  in.q_weight.resize(8);  // one vector where the spec has one per head
  try {
    (void)fused_reference(spec, in);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("q_weight: expected 16 values ([q_heads][head_dim]"), std::string::npos) << e.what();
  }
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
