// The verdict of a whole run (`check`, `run`, `sweep`, Python's check and gate, the GoogleTest
// matcher): written once here. A run fails when a group fails or an identity fails, and when
// nothing was judged — every group skipped and no identity run is not a pass.
#pragma once

#include <span>

#include "judge/group.h"

namespace ropecheck::judge {

struct RunVerdict {
  bool pass = false;
  bool judged_nothing = false;  // every group skipped (unsupported, --skip-flags, --max-position) and no identity judged
};

// `identities_failed` / `identities_judged`: the identities of the catalog that ran (`--props`),
// not counting those that found no case the implementation supports.
RunVerdict run_verdict(std::span<const GroupResult> groups, int identities_failed = 0, int identities_judged = 0);

}  // namespace ropecheck::judge
