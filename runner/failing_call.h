// Where a call of the implementation under test starts to fail, by calling it again on shorter
// inputs: the golden loop (runner/golden_run.cpp) and the sweep (runner/sweep.cpp) place a failed
// call's explanation ("raised IndexError at position 4096", judge/inference.h FailedCalls) at the
// position this finds. It runs the implementation, so it lives beside the runners, not in the
// verdict (judge/), which only sees outputs.
#pragma once

#include <cstdint>
#include <utility>

#include "judge/call.h"
#include "runner/implementation.h"
#include "spec/spec.h"

namespace ropecheck::runner {

// Where a failed call starts to fail: the call's tokens ordered by position, the shortest failing
// prefix found by bisection (a cache indexed past its end fails on every prefix that reaches it).
// Returns the position of the prefix's last token and that call's result (`failed` when the first
// token alone fails). A few extra calls, on the failing call only, and only for an error the call
// returned (kernel_error); a crash or a time-out is placed at the call's lowest position.
std::pair<std::int64_t, ApplyResult> first_failing_call(const Implementation& implementation, const Spec& spec, const judge::Call& call,
                                                        ApplyResult failed);

}  // namespace ropecheck::runner
