#include "gate/judge_args.h"

#include <cstdio>

#include "base/errors.h"

namespace ropecheck::gate {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

runner::Claims claims_of(const JudgeArguments& args) { return runner::Claims::parse(args.model, args.tolerance); }

runner::JudgeOptions judge_options_of(const JudgeArguments& args) {
  if (args.max_position && *args.max_position < 0) {
    throw UsageError("--max-position: expected an integer >= 0, got " + std::to_string(*args.max_position));
  }
  if (args.require_horizon && *args.require_horizon < 0) {
    throw UsageError("--require-horizon: expected an integer >= 0, got " + std::to_string(*args.require_horizon));
  }
  if (args.threads < 0 || args.threads > 4096) {
    throw UsageError("--threads: expected an integer from 0 (all cores) to 4096, got " + std::to_string(args.threads));
  }
  if (args.worst < 1 || args.worst > 1000) {
    throw UsageError("--worst: expected an integer from 1 to 1000, got " + std::to_string(args.worst));
  }
  runner::JudgeOptions o;
  o.group.worst_cases = args.worst;
  o.group.strict_zeros = args.strict_zeros;
  o.group.max_position = args.max_position;
  o.group.require_horizon = args.require_horizon;
  if (!args.tolerance.empty()) {
    const judge::ToleranceOverrides overrides = judge::parse_tolerance(args.tolerance);
    o.group.attention_scores = overrides.attention_scores;
    o.group.attention_outputs = overrides.attention_outputs;
  }
  o.skip_flags = split_list(args.skip_flags);
  o.threads = args.threads;
  o.allow_missing = args.allow_missing;
  return o;
}

JudgedScope scope_of(const JudgeArguments& args, std::int64_t skipped_by_flags, std::int64_t skipped_by_position) {
  JudgedScope scope;
  scope.max_position = args.max_position;
  scope.require_horizon = args.require_horizon;
  scope.skip_flags = split_list(args.skip_flags);
  scope.strict_zeros = args.strict_zeros;
  scope.skipped_by_flags = skipped_by_flags;
  scope.skipped_by_position = skipped_by_position;
  return scope;
}

}  // namespace ropecheck::gate
