// Runs catalog identities against an implementation with RapidCheck, in process, with an explicit
// seed (rc::detail::checkTestable with its own TestParams and a listener that prints nothing: no
// RC_PARAMS environment variable, no global configuration, nothing of RapidCheck's on the terminal),
// and summarises each run for reports.
#pragma once

#include <cstdint>
#include <string>

#include "proofs/catalog.h"

namespace ropecheck::proofs {

struct RunOptions {
  int cases = 100;             // successful cases required before the identity is taken to hold
  std::uint64_t seed = 1;      // RapidCheck's seed: the same seed replays the same cases and shrinks
  int max_size = 100;          // RapidCheck's size parameter (generators here mostly ignore it)
  bool shrink = true;          // shrink a counterexample (off: report the first failing case)
};

struct IdentityReport {
  std::string name;
  bool holds = false;
  int cases = 0;               // successful cases, plus the failing one
  bool gave_up = false;        // too many discarded cases (unsupported specs)
  Tally tally;
  std::string failure;         // the violated check, with values as hex floats
  std::string counterexample;  // the shrunk case: spec, positions, inputs as hex floats
};

IdentityReport run_identity(const Identity& identity, const Implementation& implementation, const RunOptions& options);

}  // namespace ropecheck::proofs
