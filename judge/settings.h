// The settings of one judgement (judge/README.md "Settings"): what the implementation claims and
// what is judged, parsed once — from the command line's or Python's words (gate/judge_args.h
// settings_of) or from the public API's GoldenOptions (runner/public_judge.cpp) — and read by every
// step after: the comparers (judge/group.h), the golden loop, the sweep and the direct check
// (runner/). A step reads the fields it needs and passes the rest on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/tolerance.h"

namespace ropecheck::judge {

// What an implementation claims to compute: the model it is judged under and an explicit
// `--tolerance`. An implementation keeps them (runner/implementation.h Implementation::claims),
// so that its tolerance(spec) and claim(spec) answer in one place.
struct Claims {
  Model model = Model::exact;
  std::optional<Tolerance> tolerance;
  double theta_ulps = kDefaultThetaUlps;  // the f32-angle model's k (--tolerance theta_ulps=K)

  // From the words of `--model` and `--tolerance` (parse_model, parse_tolerance; an empty
  // tolerance keeps the model's defaults). Throws UsageError naming the option.
  static Claims parse(std::string_view model, std::string_view tolerance);
};

struct Settings {
  Claims claims;
  // Read by the comparers (judge/group.h GroupComparer, AttentionComparer):
  int worst_cases = 10;                         // cases kept per list (accuracy, edge): --worst
  bool strict_zeros = false;                    // judge/pair_rule.h: --strict-zeros
  std::optional<std::int64_t> max_position;     // tokens above it are not judged: --max-position
  std::optional<std::int64_t> require_horizon;  // accuracy is required up to it only: --require-horizon
  // Attention suites: constant bounds in place of the derived ones (--tolerance attention_scores=,
  // attention_outputs=).
  std::optional<double> attention_scores, attention_outputs;
  // Read by the loops that call the implementation (runner/):
  std::vector<std::string> skip_flags;  // golden tests carrying any of these flags are not judged
  bool allow_missing = false;           // a golden test without output is skipped instead of failed
  int threads = 0;                      // for the exact values (0: all cores)
  int precision_bits = 128;             // of a golden test's exact values: error ≤ 2^(14−P)·|φ|·ρ ≪ u·ρ
};

}  // namespace ropecheck::judge
