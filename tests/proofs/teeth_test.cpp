// The catalog has teeth: each deliberately wrong implementation (faulty_implementations.h) is caught
// by at least one identity, and the correctly rounded and float32-recipe references (dtype
// implementations judged in u·ρ) are caught by none.
#include <gtest/gtest.h>

#include "faulty_implementations.h"
#include "proofs/catalog.h"
#include "runner/reference_implementation.h"
#include "proofs/runner.h"

namespace ropecheck::proofs {

using runner::ReferenceImplementation;
namespace {

class Teeth : public ::testing::TestWithParam<int> {};

TEST_P(Teeth, FaultIsCaughtByAnIdentity) {
  const testing::Fault fault = testing::classic_faults().at(static_cast<std::size_t>(GetParam()));
  const testing::FaultyReference faulty(fault, 128);
  RunOptions options;
  options.cases = 100;
  options.seed = 7;
  options.shrink = false;  // caught is enough here; replay_test covers shrinking
  std::string caught_by;
  for (const Identity& identity : catalog()) {
    const IdentityReport report = run_identity(identity, faulty, options);
    EXPECT_FALSE(report.gave_up) << identity.name;
    if (!report.holds && !report.gave_up) {
      caught_by = report.name;
      EXPECT_FALSE(report.failure.empty());
      break;
    }
  }
  EXPECT_FALSE(caught_by.empty()) << fault.name << " passed every identity";
  std::printf("%s caught by %s\n", fault.name.c_str(), caught_by.c_str());
}

INSTANTIATE_TEST_SUITE_P(ClassicFaults, Teeth, ::testing::Range(0, 6), [](const auto& info) {
  std::string name = testing::classic_faults().at(static_cast<std::size_t>(info.param)).name;
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
});

// Dtype implementations: the reference correctly rounded (claims ≤ 1 u·ρ) and the float32 recipe
// (claims u + γ₃·|φ|) must satisfy every identity with tolerances propagated from those claims.
TEST(TeethControls, RoundedReferencesHoldEveryIdentity) {
  // Few cases: reference::apply currently takes its slowest path (a Ziv loop up to 16384 bits) for
  // outputs that are exactly zero, which basis-vector blocks at position 0 produce for every pair;
  // `ropecheck props --impl reference --cases N` runs more.
  RunOptions options;
  options.cases = 3;
  options.seed = 11;
  for (reference::Model model : {reference::Model::exact, reference::Model::f32_recipe}) {
    const ReferenceImplementation rounded(128, model, ReferenceImplementation::Output::rounded);
    for (const Identity& identity : catalog()) {
      const IdentityReport report = run_identity(identity, rounded, options);
      EXPECT_TRUE(report.holds) << rounded.name() << " " << identity.name << ": " << report.failure << "\n"
                                << report.counterexample;
    }
  }
}

}  // namespace
}  // namespace ropecheck::proofs
