// ropecheck's public C++ API (include/README.md): `MatchesGolden`, a RoPE function judged over a
// golden file as a GoogleTest assertion. Link ropecheck::ropecheck and GTest.
//
//   #include <ropecheck/gtest.h>
//   TEST(MyRope, MatchesGolden) {
//     EXPECT_TRUE(ropecheck::MatchesGolden(golden_dir + "/interleaved-f32-base10000.json",
//         [](const ropecheck::RopeSpec& spec, ropecheck::TensorShape shape,
//            std::span<const std::int64_t> positions, std::span<const double> input) {
//           return my_rope(spec, shape, positions, input);   // outputs as doubles, row-major
//         }));
//   }
//
// The default claim is f32-angle (the angle computed in binary32; GoldenOptions::model = "exact"
// holds a function to the true rotation) and the bound is that claim's (judge/README.md "Models");
// GoldenOptions::tolerance overrides it. On failure the message states the claim, says why the
// outputs fail (one line per distinct explanation, as every summary does), then names each failing
// group with its worst cases (ordinary inputs first), as the text report does. A golden
// file that cannot be read, or a bad option, fails the assertion with its one-line message.
#pragma once

#include <gtest/gtest.h>
#include <ropecheck/judge.h>

#include <cstddef>
#include <exception>
#include <sstream>
#include <string>

namespace ropecheck {

inline ::testing::AssertionResult MatchesGolden(const std::string& golden_path, const RopeFunction& rope,
                                                const GoldenOptions& options = {}) {
  GoldenVerdict verdict;
  try {
    verdict = judge_golden_file(golden_path, rope, options);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << e.what();
  }
  std::ostringstream failures;
  int failed = 0;
  for (const GoldenGroup& g : verdict.groups) {
    if (g.verdict != "fail") continue;
    ++failed;
    failures << "\n  " << g.suite << "#" << g.index << " (" << g.spec << "; tolerance " << g.tolerance_kind
             << " <= " << g.tolerance;
    if (g.tolerance_per_radian != 0) failures << " + " << g.tolerance_per_radian << "*|angle|";
    failures << "): worst e " << g.worst_e << ", horizon " << (g.horizon ? std::to_string(*g.horizon) : std::string("none"));
    for (std::size_t i = 0; i < g.worst.size() && i < 5; ++i) {
      const GoldenCase& c = g.worst[i];
      failures << "\n    test " << c.test_id << " [" << c.kind << "] position " << c.position << ": " << c.message;
    }
  }
  if (failed == 0) return ::testing::AssertionSuccess();
  std::ostringstream why;
  for (const std::string& line : verdict.explanations) why << "\n  explanation: " << line;
  return ::testing::AssertionFailure() << failed << " failing group(s) in " << golden_path << " under model " << verdict.model
                                       << why.str() << failures.str();
}

}  // namespace ropecheck
