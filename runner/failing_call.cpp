#include "runner/failing_call.h"

#include <algorithm>
#include <vector>

#include "judge/group.h"

namespace ropecheck::runner {

std::pair<std::int64_t, ApplyResult> first_failing_call(const Implementation& implementation, const Spec& spec, const judge::Call& call,
                                                        ApplyResult failed) {
  const int components = position_components(spec);
  const std::int64_t token_size = call.heads * call.head_dim;
  std::vector<std::int64_t> order(static_cast<std::size_t>(call.tokens));
  for (std::int64_t t = 0; t < call.tokens; ++t) order[static_cast<std::size_t>(t)] = t;
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t l, std::int64_t r) {
    return judge::token_position(call, spec, l) < judge::token_position(call, spec, r);
  });
  std::vector<std::int64_t> positions;
  std::vector<double> input;
  const auto prefix = [&](std::int64_t n) {  // the first n tokens in position order
    positions.clear();
    input.clear();
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t t = order[static_cast<std::size_t>(k)];
      positions.insert(positions.end(), call.positions.begin() + t * components, call.positions.begin() + (t + 1) * components);
      input.insert(input.end(), call.input.begin() + t * token_size, call.input.begin() + (t + 1) * token_size);
    }
    return implementation.run(spec, Shape{n, call.heads, call.head_dim}, positions, input);
  };
  std::int64_t low = 0, high = call.tokens;  // the prefix of `high` tokens fails, of `low` does not
  // Only an error the call returned (an exception, an error status) is bisected: a crash or a
  // time-out would cost a child process, or the time limit, per step.
  if (failed.status != ApplyResult::Status::kernel_error) low = high - 1;
  while (high - low > 1) {
    const std::int64_t mid = low + (high - low) / 2;
    ApplyResult part = prefix(mid);
    if (part.status == ApplyResult::Status::ok || part.status == ApplyResult::Status::unsupported) {
      low = mid;
    } else {
      high = mid;
      failed = std::move(part);
    }
  }
  if (failed.status != ApplyResult::Status::kernel_error && call.tokens > 0)
    return {judge::token_position(call, spec, order[0]), std::move(failed)};
  return {call.tokens > 0 ? judge::token_position(call, spec, order[static_cast<std::size_t>(high - 1)]) : 0, std::move(failed)};
}
}  // namespace ropecheck::runner
