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

judge::Settings settings_of(const JudgeArguments& args) {
  judge::Settings s = args.settings;
  s.claims = judge::Claims::parse(args.model, args.tolerance);
  if (s.max_position && *s.max_position < 0) {
    throw UsageError("--max-position: expected an integer >= 0, got " + std::to_string(*s.max_position));
  }
  if (s.require_horizon && *s.require_horizon < 0) {
    throw UsageError("--require-horizon: expected an integer >= 0, got " + std::to_string(*s.require_horizon));
  }
  if (s.threads < 0 || s.threads > 4096) {
    throw UsageError("--threads: expected an integer from 0 (all cores) to 4096, got " + std::to_string(s.threads));
  }
  if (s.worst_cases < 1 || s.worst_cases > 1000) {
    throw UsageError("--worst: expected an integer from 1 to 1000, got " + std::to_string(s.worst_cases));
  }
  if (!args.tolerance.empty()) {
    const judge::ToleranceOverrides overrides = judge::parse_tolerance(args.tolerance);
    s.attention_scores = overrides.attention_scores;
    s.attention_outputs = overrides.attention_outputs;
  }
  s.skip_flags = split_list(args.skip_flags);
  return s;
}

JudgedScope scope_of(const judge::Settings& settings, std::int64_t skipped_by_flags, std::int64_t skipped_by_position) {
  JudgedScope scope;
  scope.max_position = settings.max_position;
  scope.require_horizon = settings.require_horizon;
  scope.skip_flags = settings.skip_flags;
  scope.strict_zeros = settings.strict_zeros;
  scope.skipped_by_flags = skipped_by_flags;
  scope.skipped_by_position = skipped_by_position;
  return scope;
}

}  // namespace ropecheck::gate
