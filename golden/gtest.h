// A GoogleTest helper for users' own test suites: checks a RoPE function against every test of a
// golden file, with the error metric of reference/error_metric.h.
//
//   #include "golden/gtest.h"
//   TEST(MyRope, MatchesGolden) {
//     EXPECT_TRUE(ropecheck::golden::MatchesGolden("interleaved-f32-base10000.json",
//         [](const ropecheck::Spec& spec, ropecheck::reference::Shape shape,
//            std::span<const std::int64_t> positions, std::span<const double> input) {
//           return my_rope(spec, shape, positions, input);   // outputs as doubles, row-major
//         }));
//   }
//
// Tolerance: `tolerance_e` bounds the candidate's TRUE error in units of u·ρ·max(1, |g|). The golden
// file holds the correctly rounded value R, within 1 unit of the exact value (|R − A| ≤ u·|A| ≤ u·ρ·|g|),
// so the distance to R that is checked is at most tolerance_e + 1 (error_metric.h, "Which expected").
// Pass-through dims must be bit-identical; NaN/±Inf/overflow must match exactly (pair_error's rules).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "golden/golden.h"
#include "reference/error_metric.h"
#include "reference/rope.h"
#include "spec/schedule.h"

namespace ropecheck::golden {

using RopeFunction = std::function<std::vector<double>(const Spec&, reference::Shape, std::span<const std::int64_t>,
                                                       std::span<const double>)>;

inline ::testing::AssertionResult MatchesGolden(const std::string& golden_path, const RopeFunction& rope,
                                                double tolerance_e = 2.0, int max_reported = 5) {
  const GoldenFile file = read_golden_file(golden_path);
  std::ostringstream failures;
  int failed = 0;
  for (const Group& group : file.groups) {
    const Spec& spec = group.spec;
    const double attention = attention_factor<double>(spec);
    for (const RopeTest& test : group.rope_tests) {
      const reference::Shape shape{test.tokens, test.heads, test.head_dim};
      const std::vector<double> out = rope(spec, shape, test.positions, test.input);
      auto report = [&](const std::string& what) {
        if (failed++ < max_reported) failures << "\n  " << file.suite << " test " << test.id << ": " << what;
      };
      if (out.size() != test.expected.size()) {
        report("expected " + std::to_string(test.expected.size()) + " outputs, got " + std::to_string(out.size()));
        continue;
      }
      for (std::int64_t row = 0; row < test.tokens * test.heads; ++row) {
        const std::int64_t base = row * test.head_dim;
        for (int j = 0; j < spec.rotary_dim / 2; ++j) {
          const reference::PairDims pd = reference::pair_dims(spec, j);
          const double e = reference::pair_error(out[base + pd.first], out[base + pd.second], test.expected[base + pd.first],
                                                 test.expected[base + pd.second], test.input[base + pd.first],
                                                 test.input[base + pd.second], spec.dtype, attention);
          if (!(e <= tolerance_e + 1)) {
            report("pair " + std::to_string(j) + " of row " + std::to_string(row) + ": e = " + std::to_string(e) +
                   " > " + std::to_string(tolerance_e) + " + 1");
          }
        }
        for (std::int64_t d = spec.rotary_dim; d < test.head_dim; ++d) {
          if (std::memcmp(&out[base + d], &test.input[base + d], sizeof(double)) != 0) {
            report("pass-through dim " + std::to_string(d) + " of row " + std::to_string(row) + " changed");
          }
        }
      }
    }
  }
  if (failed == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failed << " mismatch(es) against " << golden_path << failures.str();
}

}  // namespace ropecheck::golden
