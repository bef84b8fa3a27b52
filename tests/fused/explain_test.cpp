// The explanation of fused bugs (fused/explain.h): each bug of a careful float32 kernel
// (tests/fused/explain_kernel.h) fails and is named by the change that reproduces it; the careful
// kernel passes and names nothing; two bugs together are no single change.
#include "fused/explain.h"

#include <string>

#include <gtest/gtest.h>

#include "tests/fused/explain_kernel.h"

namespace ropecheck::fused {
namespace {

using testing::Bugs;
using testing::CarefulKernel;

const char* kDefault =
    "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=per_token,destination=paged,"
    "block_size=16,q_heads=4,k_heads=2";

struct Outcome {
  FusedJudgement judgement;
  FusedExplanation explanation;
};

Outcome run(const std::string& text, Bugs bug, double input_scale = 1) {
  const FusedSpec spec = parse_fused_spec(text);
  FusedInputs in = random_inputs(spec, 24, 7);
  for (double& v : in.q) v *= input_scale;
  for (double& v : in.k) v *= input_scale;
  const FusedOutputs out = CarefulKernel{spec, bug}.run(in);
  return {judge_fused(spec, in, out, judge::kDefaultModel), explain_fused(spec, in, out, judge::kDefaultModel)};
}

// The bug fails, its change is named with a fit of every value, and the judgement's report says it.
void expect_named(const std::string& text, Bugs bug, ChangeKind kind, const std::string& words, double input_scale = 1) {
  SCOPED_TRACE(text + " / " + std::string(name(kind)));
  const Outcome r = run(text, bug, input_scale);
  EXPECT_EQ(r.judgement.verdict, judge::Verdict::fail);
  ASSERT_TRUE(r.explanation.named.has_value()) << r.explanation.text;
  EXPECT_EQ(r.explanation.named->kind, kind) << r.explanation.text;
  EXPECT_TRUE(r.explanation.named->reproduces);
  EXPECT_EQ(r.explanation.named->within, r.explanation.named->judged);
  EXPECT_LE(r.explanation.named->worst_e, 1.0);
  EXPECT_NE(r.explanation.text.find(words), std::string::npos) << r.explanation.text;
  EXPECT_EQ(r.explanation.text.rfind("reproduced by ", 0), 0u) << r.explanation.text;
  EXPECT_EQ(r.judgement.explanation, r.explanation.text);
  EXPECT_NE(fused_report_text(r.judgement).find("explanation: " + r.explanation.text), std::string::npos);
}

void expect_careful(const std::string& text, double input_scale = 1) {
  SCOPED_TRACE(text);
  const Outcome r = run(text, Bugs{}, input_scale);
  EXPECT_EQ(r.judgement.verdict, judge::Verdict::pass) << fused_report_text(r.judgement);
  EXPECT_FALSE(r.explanation.named.has_value());
  EXPECT_TRUE(r.explanation.text.empty()) << r.explanation.text;
  EXPECT_TRUE(r.judgement.explanation.empty()) << r.judgement.explanation;
}

const std::string kAfter = "layout=half,head_dim=64,base=10000,dtype=bf16,norm=after,fp8=e4m3,scale=per_token,q_heads=2";
const std::string kOnePlus = "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,norm_weight=one_plus,fp8=e4m3,scale=per_token";
const std::string kFixed = "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=fixed,scale_value=0.00390625";
const std::string kPartial = "layout=half,head_dim=128,rotary_dim=64,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=per_token";
const std::string kPlainBf16 = "layout=interleaved,head_dim=64,base=10000,dtype=bf16,norm=before,q_heads=2,k_heads=2";

TEST(FusedExplain, CarefulKernelPassesAndNamesNothing) {
  for (const std::string& text : {std::string(kDefault), kAfter, kOnePlus, kFixed, kPartial, kPlainBf16}) expect_careful(text);
  expect_careful(kDefault, 1e-3);
}

TEST(FusedExplain, NormBugsAreNamed) {
  expect_named(kDefault, {.swap_weights = true}, ChangeKind::weights_swapped, "q and k norm weights swapped");
  expect_named(kDefault, {.norm_moved = true}, ChangeKind::norm_place, "norm=after (expected before)");
  expect_named(kAfter, {.norm_moved = true}, ChangeKind::norm_place, "norm=before (expected after)");
  expect_named(kOnePlus, {.weight_flipped = true}, ChangeKind::norm_weight, "norm_weight=plain (expected one_plus)");
  expect_named(kPlainBf16, {.weight_flipped = true}, ChangeKind::norm_weight, "norm_weight=one_plus (expected plain)");
  // eps shows where the mean of squares is near it: inputs of magnitude 4e-3 (mean of squares ≈ 5e-6).
  expect_named(kDefault, {.eps = 1e-5f}, ChangeKind::eps, "eps=1e-05 (expected 1e-6)", 1e-3);
}

TEST(FusedExplain, QuantizationBugsAreNamed) {
  expect_named(kDefault, {.scale_factor = 2}, ChangeKind::scale_factor, "returned scale 2×");
  expect_named(kDefault, {.scale_factor = 0.5}, ChangeKind::scale_factor, "returned scale 0.5×");
  // Saturation shows where values pass 448 at a fixed scale: |v| up to ≈ 2.6, ŝ = 1/256.
  expect_named(kFixed, {.saturation_flipped = true}, ChangeKind::saturation, "saturate=false (expected true)");
}

TEST(FusedExplain, CacheAndRotationBugsAreNamed) {
  expect_named(kDefault, {.slot_shift = 1}, ChangeKind::slot_offset, "one slot after");
  expect_named(kDefault, {.slot_shift = -16}, ChangeKind::slot_offset, "one block (16 slots) before");
  expect_named(kDefault, {.pairing_mixed = true}, ChangeKind::layout, "layout=interleaved (expected half)");
  expect_named(kPlainBf16, {.pairing_mixed = true}, ChangeKind::layout, "layout=half (expected interleaved)");
  expect_named(kPartial, {.partial_lost = true}, ChangeKind::rotary_dim, "rotary_dim=128 (expected 64)");
}

TEST(FusedExplain, TwoBugsAreNoSingleChange) {
  for (const Bugs bug : {Bugs{.swap_weights = true, .pairing_mixed = true}, Bugs{.norm_moved = true, .slot_shift = 1},
                         Bugs{.weight_flipped = true, .scale_factor = 2}}) {
    const Outcome r = run(kDefault, bug);
    EXPECT_EQ(r.judgement.verdict, judge::Verdict::fail);
    EXPECT_FALSE(r.explanation.named.has_value()) << r.explanation.text;
    EXPECT_EQ(r.explanation.text.rfind("no single change explains this", 0), 0u) << r.explanation.text;
  }
}

TEST(FusedExplain, RotationAloneUsesTheRopeInference) {
  // No norm and no FP8: judge/'s RoPE inference names what no fused key does (here the base).
  const std::string text = "layout=half,head_dim=64,base=10000,dtype=f32,q_heads=2,k_heads=2";
  const FusedSpec spec = parse_fused_spec(text);
  FusedSpec wrong = spec;
  wrong.rope.base = "500000";
  const FusedInputs in = random_inputs(spec, 32, 5);
  const FusedExplanation e = explain_fused(spec, in, fused_reference(wrong, in), judge::kDefaultModel);
  EXPECT_FALSE(e.named.has_value()) << e.text;
  EXPECT_NE(e.rope.find("500000"), std::string::npos) << e.text;
  EXPECT_NE(e.text.find("as a rotation: "), std::string::npos) << e.text;
}

}  // namespace
}  // namespace ropecheck::fused
