// The users' GoogleTest matcher (include/ropecheck/gtest.h, the public API): the correctly rounded
// reference (a perfect candidate) passes, a candidate with the sine's sign flipped fails naming the
// tests, and a golden file or an option the judge refuses fails the assertion with its one line.
#include <ropecheck/gtest.h>
#include <ropecheck/reference.h>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

const std::string kSuite = std::string(ROPECHECK_SOURCE_DIR) + "/golden/suites/interleaved-f32-base10000.json";

std::vector<double> exact(const ropecheck::RopeSpec& spec, ropecheck::TensorShape shape,
                          std::span<const std::int64_t> positions, std::span<const double> input) {
  return ropecheck::apply_exact(spec, shape, positions, input);
}

TEST(GoldenGtestHelper, TheReferencePasses) { EXPECT_TRUE(ropecheck::MatchesGolden(kSuite, exact)); }

TEST(GoldenGtestHelper, AFlippedSineFails) {
  const auto result = ropecheck::MatchesGolden(kSuite, [](const ropecheck::RopeSpec& spec, ropecheck::TensorShape shape,
                                                          std::span<const std::int64_t> positions,
                                                          std::span<const double> input) {
    // Rotating by −θ is the sine-sign bug: the same spec with direction=inverse.
    std::string text = spec.text();
    const std::string forward = "direction=forward";
    text.replace(text.find(forward), forward.size(), "direction=inverse");
    const ropecheck::RopeSpec inverse = ropecheck::RopeSpec::parse(text);
    return ropecheck::apply_exact(inverse, shape, positions, input);
  });
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("interleaved-f32-base10000#"), std::string::npos) << result.message();
  EXPECT_NE(std::string(result.message()).find("[tolerance] position"), std::string::npos) << result.message();
  // The claim judged, and why, before the groups' figures (judge/verdict.h distinct_explanations).
  EXPECT_NE(std::string(result.message()).find("under model f32-angle"), std::string::npos) << result.message();
  EXPECT_NE(std::string(result.message()).find("explanation: "), std::string::npos) << result.message();
  EXPECT_NE(std::string(result.message()).find("direction=inverse"), std::string::npos) << result.message();
}

TEST(GoldenGtestHelper, TheVerdictNamesEveryGroup) {
  const ropecheck::GoldenVerdict verdict = ropecheck::judge_golden_file(kSuite, exact);
  EXPECT_TRUE(verdict.passed);
  ASSERT_FALSE(verdict.groups.empty());
  for (const ropecheck::GoldenGroup& g : verdict.groups) {
    EXPECT_EQ(g.suite, "interleaved-f32-base10000");
    EXPECT_EQ(g.verdict, "pass") << g.spec;
    // The default claim is f32-angle: e <= 4 + per_radian*|angle| for f32 without an attention
    // factor (judge/README.md "Models").
    EXPECT_EQ(g.tolerance_kind, "e");
    EXPECT_EQ(g.tolerance, 4);
    EXPECT_GT(g.tolerance_per_radian, 0);
    EXPECT_LE(g.worst_e, 1) << "the correctly rounded result has e <= 1 (docs/design.md \"Error metric\")";
  }
}

TEST(GoldenGtestHelper, AMissingFileFailsWithOneLine) {
  const auto result = ropecheck::MatchesGolden(kSuite + ".missing", exact);
  EXPECT_FALSE(result);
  const std::string message = result.message();
  EXPECT_NE(message.find(".missing"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(GoldenGtestHelper, ABadOptionIsRefused) {
  ropecheck::GoldenOptions options;
  options.model = "f33-angle";
  EXPECT_THROW(ropecheck::judge_golden_file(kSuite, exact, options), std::invalid_argument);
  options = {};
  options.tolerance = "e=-1";
  EXPECT_THROW(ropecheck::judge_golden_file(kSuite, exact, options), std::invalid_argument);
}

TEST(PublicSpec, ParsesPrintsAndRefuses) {
  const ropecheck::RopeSpec spec = ropecheck::RopeSpec::parse("layout=half,head_dim=128,base=500000,dtype=bf16");
  EXPECT_EQ(spec.layout(), ropecheck::RopeSpec::Layout::half);
  EXPECT_EQ(spec.head_dim(), 128);
  EXPECT_EQ(spec.rotary_dim(), 128);
  EXPECT_EQ(spec.base(), "500000");
  EXPECT_EQ(spec.dtype(), ropecheck::RopeSpec::Dtype::bf16);
  EXPECT_EQ(spec.input_dtype(), ropecheck::RopeSpec::Dtype::bf16);
  EXPECT_EQ(spec.direction(), ropecheck::RopeSpec::Direction::forward);
  EXPECT_EQ(spec.scaling(), "none");
  EXPECT_EQ(spec.position_components(), 1);
  EXPECT_EQ(ropecheck::RopeSpec::parse(spec.text()), spec);
  EXPECT_EQ(ropecheck::RopeSpec::parse_json(spec.json()), spec);
  EXPECT_EQ(ropecheck::RopeSpec::parse("layout=interleaved,head_dim=256,rotary_dim=64,base=10000,dtype=f32,input_dtype=f16")
                .input_dtype(),
            ropecheck::RopeSpec::Dtype::f16);
  try {
    ropecheck::RopeSpec::parse("head_dim=3,base=10000");
    ADD_FAILURE() << "an odd rotary_dim parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rotary_dim"), std::string::npos) << e.what();
  }
}

TEST(PublicReference, TheIssueExample) {
  // cos(1) and sin(1) correctly rounded to binary64 (the command line's test cli_apply_worked_example).
  const std::vector<std::int64_t> positions = {1};
  const std::vector<double> input = {1.0, 0.0};
  const std::vector<double> out = ropecheck::apply_exact(
      ropecheck::RopeSpec::parse("layout=interleaved,head_dim=2,base=10000,dtype=f64"), {1, 1, 2}, positions, input);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], 0x1.14a280fb5068cp-1);
  EXPECT_EQ(out[1], 0x1.aed548f090ceep-1);
  EXPECT_THROW(ropecheck::apply_exact(ropecheck::RopeSpec::parse("head_dim=2,base=10000"), {1, 1, 2}, positions,
                                      std::vector<double>{1.0}),
               std::invalid_argument);
}

}  // namespace
