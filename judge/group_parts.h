// Finished groups joined: the parts of one RoPE group whose tests were judged apart (a sweep's
// shards, each a finished group of every Nth call: runner/sweep.h) come to the group one
// GroupComparer would have finished over all the tests (judge/group.h), by the same tally. For a
// caller that holds the parts as reports give them back (gate/merge.cpp reads a sweep's shard
// reports): what the reports leave out (Case::severity, the outcomes of passing tests) is not used.
#pragma once

#include <vector>

#include "judge/group.h"
#include "judge/tolerance.h"

namespace ropecheck::judge {

// The severity a RoPE group's case was recorded at (detail::GroupTally::record_case), from what a
// report keeps of it: a pair judged by its value (judge/pair_rule.h Verdict::measured: a tolerance
// failure, a signed zero of finite inputs) at its e, or its ulp under an ulp tolerance; any other
// case (special values, pass-through, a whole test) infinitely severe. NaN is never measured
// (judge/pair_rule.cpp): read as infinite, it cannot break the ordering.
double recorded_severity(const Case& c, Tolerance::Kind metric);

// `parts` (at least one) of one RoPE group, each test in one part, their tests in order of position
// over all the parts (a sweep's calls): counts add up; the worst e is the largest, the first in
// position order on ties; the other worst values are maxima; points, failed and skipped tests
// join in test order; the worst cases are ranked again (detail::GroupTally::finish: `worst_cases`
// per list, a test's later cases at second_severity); verdict, horizon and --require-horizon from
// the joined figures. The identity (kind, suite, spec, tolerance, ...) is the first part's; the
// diagnosis is left to the caller (which part's holds depends on how the parts were judged).
GroupResult join_group_parts(const std::vector<GroupResult>& parts, const Settings& settings);

}  // namespace ropecheck::judge
