// What the judge judges: one call of the implementation under test, as given to it — inputs
// [tokens, heads, head_dim] at one position tuple per token — and, where a golden file carries them,
// the values it is expected to return. Each runner builds its own (runner/README.md): the golden
// loop one per golden test, the sweep one per call, a direct check one per chunk of the user's
// tensors. The candidate's outputs travel beside it as a span (their storage is the runner's: a
// call's result, a chunk buffer), row-major like `input`.
//
// The calls of one group share a spec, which the group's comparer holds (judge/group.h
// GroupComparer): a group of calls is the comparer and the Calls added to it in order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ropecheck::judge {

struct Call {
  // The test this call is in every report: a golden test's id, a sweep's call c + 1 (runner/sweep.h
  // test_id_of_call), 1 for a direct check's tensor.
  std::int64_t id = 0;
  std::int64_t tokens = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::vector<std::int64_t> positions;  // row-major [tokens, position_components(spec)]
  std::vector<double> input;            // values of the spec's input dtype, row-major [tokens, heads, head_dim]
  // The correctly rounded exact result (Model::exact) where a golden file carries it; empty: the
  // judge computes it (reference::evaluate).
  std::vector<double> expected;
  std::optional<std::vector<double>> expected_f32_recipe;  // Model::f32_recipe's, where a golden file carries it
};

}  // namespace ropecheck::judge
