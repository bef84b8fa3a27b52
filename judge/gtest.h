// A GoogleTest helper for users' own test suites: judges a RoPE function over every test of a
// golden file exactly as `ropecheck check` does (judge/golden_run.h: the same pair rule, the same
// default tolerance for the claimed model). Link ropecheck::judge and GTest.
//
//   #include "judge/gtest.h"
//   TEST(MyRope, MatchesGolden) {
//     EXPECT_TRUE(ropecheck::judge::MatchesGolden("interleaved-f32-base10000.json",
//         [](const ropecheck::Spec& spec, ropecheck::reference::Shape shape,
//            std::span<const std::int64_t> positions, std::span<const double> input) {
//           return my_rope(spec, shape, positions, input);   // outputs as doubles, row-major
//         }));
//   }
//
// The default bound is the model's (e ≤ 4 for the exact model, 6 with an attention factor:
// judge/tolerance.cpp); `claims.tolerance` overrides it. On failure the message names each failing
// group with its worst cases (ordinary inputs first), as the text report does.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "judge/adapters.h"
#include "judge/golden_run.h"

namespace ropecheck::judge {

inline ::testing::AssertionResult MatchesGolden(const std::string& golden_path, const RopeFunction& rope, Claims claims = {},
                                                JudgeOptions options = {}) {
  const std::vector<LoadedGolden> suites = load_golden(golden_path);
  const FunctionImplementation implementation("MatchesGolden function", rope, std::move(claims));
  const Judgement judgement = judge_golden(suites, implementation, options);
  std::ostringstream failures;
  int failed = 0;
  for (const GroupResult& g : judgement.groups) {
    if (g.verdict != "fail") continue;
    ++failed;
    failures << "\n  " << g.suite << "#" << g.index << " (" << g.spec << "; tolerance e <= " << g.tolerance.value
             << "): worst e " << g.worst_e << ", horizon " << (g.horizon ? std::to_string(*g.horizon) : std::string("none"));
    for (std::size_t i = 0; i < g.worst.size() && i < 5; ++i) {
      const Case& c = g.worst[i];
      failures << "\n    test " << c.test_id << " [" << c.kind << "] position " << c.position << ": " << c.message;
    }
  }
  if (failed == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failed << " failing group(s) in " << golden_path << failures.str();
}

}  // namespace ropecheck::judge
