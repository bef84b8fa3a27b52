// The users' GoogleTest helper (judge/gtest.h): the correctly rounded reference (a perfect candidate) passes, and a
// candidate with the sine's sign flipped fails, naming the tests.
#include "judge/gtest.h"

#include <gtest/gtest.h>

namespace ropecheck {
namespace {

const std::string kSuite = std::string(ROPECHECK_SOURCE_DIR) + "/golden/suites/interleaved-f32-base10000.json";

TEST(GoldenGtestHelper, TheReferencePasses) {
  EXPECT_TRUE(judge::MatchesGolden(kSuite, [](const Spec& spec, reference::Shape shape,
                                               std::span<const std::int64_t> positions, std::span<const double> input) {
    return reference::apply(spec, shape, positions, input);
  }));
}

TEST(GoldenGtestHelper, AFlippedSineFails) {
  const auto result = judge::MatchesGolden(kSuite, [](const Spec& spec, reference::Shape shape,
                                                       std::span<const std::int64_t> positions, std::span<const double> input) {
    Spec inverse = spec;  // rotating by −θ is the sine-sign bug
    inverse.direction = Direction::inverse;
    return reference::apply(inverse, shape, positions, input);
  });
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("interleaved-f32-base10000#"), std::string::npos) << result.message();
  EXPECT_NE(std::string(result.message()).find("[tolerance] position"), std::string::npos) << result.message();
}

}  // namespace
}  // namespace ropecheck
