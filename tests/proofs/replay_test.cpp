// A printed seed replays the same counterexample: two runs with the same seed (as `ropecheck props
// --seed S --only NAME` does) fail on the same shrunk case with the same description.
#include <cstdio>

#include <gtest/gtest.h>

#include "faulty_implementations.h"
#include "proofs/catalog.h"
#include "proofs/runner.h"

namespace ropecheck::proofs {
namespace {

TEST(Replay, SameSeedSameShrunkCounterexample) {
  const testing::Fault fault = testing::classic_faults().at(2);  // position off by one
  ASSERT_EQ(fault.name, "position-off-by-one");
  const testing::FaultyReference faulty(fault, 96);
  const Identity* identity = find_identity("complex_equivalence");
  ASSERT_NE(identity, nullptr);
  RunOptions options;
  options.cases = 50;
  options.seed = 424242;
  const IdentityReport first = run_identity(*identity, faulty, options);
  const IdentityReport second = run_identity(*identity, faulty, options);
  ASSERT_FALSE(first.holds);
  EXPECT_FALSE(first.counterexample.empty());
  EXPECT_EQ(first.counterexample, second.counterexample);
  EXPECT_EQ(first.failure, second.failure);
  EXPECT_EQ(first.cases, second.cases);
  // Counterexample values are printed as C99 hex floats (exact, replayable by hand).
  EXPECT_NE(first.counterexample.find("0x"), std::string::npos) << first.counterexample;
  std::printf("replayed counterexample:\n%s%s\n", first.counterexample.c_str(), first.failure.c_str());
}

}  // namespace
}  // namespace ropecheck::proofs
