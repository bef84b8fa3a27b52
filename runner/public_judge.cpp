// The public judge_golden_file (include/ropecheck/judge.h): the user's function as a
// FunctionImplementation through the one golden loop (runner/golden_run.h), its options read by the
// judge's own parsers (judge/tolerance.h), and the verdict copied into the public result types.
#include <ropecheck/judge.h>

#include <stdexcept>
#include <utility>

#include "base/errors.h"
#include "judge/verdict.h"
#include "runner/adapters.h"
#include "runner/golden_run.h"
#include "spec/public_spec.h"

namespace ropecheck {

namespace {

using detail::SpecAccess;

// The public options as the judge's settings, parsed once; the default claim is the judge's one
// (judge/tolerance.h kDefaultModel).
judge::Settings settings_of(const GoldenOptions& options) {
  judge::Settings s;
  s.claims =
      judge::Claims::parse(options.model.empty() ? std::string(judge::name(judge::kDefaultModel)) : options.model, options.tolerance);
  if (options.max_position && *options.max_position < 0) {
    throw UsageError("max_position: expected an integer >= 0, got " + std::to_string(*options.max_position));
  }
  if (options.threads < 0 || options.threads > 4096) {
    throw UsageError("threads: expected an integer from 0 (all cores) to 4096, got " + std::to_string(options.threads));
  }
  s.strict_zeros = options.strict_zeros;
  s.max_position = options.max_position;
  s.skip_flags = options.skip_flags;
  s.threads = options.threads;
  return s;
}

GoldenGroup public_group(const judge::GroupResult& g) {
  GoldenGroup out;
  out.suite = g.suite;
  out.index = g.index;
  out.spec = g.spec;
  out.verdict = std::string(judge::name(g.verdict));
  out.tolerance_kind = g.tolerance.kind == judge::Tolerance::Kind::ulp ? "ulp" : "e";
  out.tolerance = g.tolerance.value;
  out.tolerance_per_radian = g.tolerance.per_radian;
  out.worst_e = g.worst_e;
  out.horizon = g.horizon;
  for (const judge::Case& c : g.worst) out.worst.push_back({c.test_id, std::string(judge::name(c.kind)), c.position, c.message});
  if (g.diagnosis) out.explanation = g.diagnosis->explanation;
  return out;
}

}  // namespace

GoldenVerdict judge_golden_file(const std::string& golden_file_or_folder, const RopeFunction& rope,
                                const GoldenOptions& options) {
  try {
    const judge::Settings settings = settings_of(options);
    const std::vector<runner::LoadedGolden> suites = runner::load_golden(golden_file_or_folder);
    runner::check_skip_flags(settings.skip_flags, suites);
    const runner::FunctionImplementation implementation(
        "MatchesGolden function",
        [&rope](const Spec& spec, reference::Shape shape, std::span<const std::int64_t> positions, std::span<const double> input) {
          return rope(SpecAccess::make(spec), TensorShape{shape.tokens, shape.heads, shape.head_dim}, positions, input);
        },
        settings.claims);
    const runner::Judgement judgement = runner::judge_golden(suites, implementation, settings);
    GoldenVerdict verdict;
    for (const judge::GroupResult& g : judgement.groups) verdict.groups.push_back(public_group(g));
    // The run's verdict is the gate's (judge/verdict.h): every group skipped is not a pass.
    const judge::RunVerdict run = judge::run_verdict(judgement.groups);
    verdict.passed = run.pass;
    verdict.model = std::string(judge::name(settings.claims.model));
    for (const judge::ExplanationLine& line : judge::distinct_explanations(judgement.groups)) {
      verdict.explanations.push_back(line.text);
    }
    verdict.notes = judgement.notes;
    if (run.judged_nothing) verdict.notes.emplace_back(judge::kNothingJudgedNote);
    return verdict;
  } catch (const UsageError& e) {
    throw std::invalid_argument(e.what());
  } catch (const InputError& e) {  // every reader's (base/errors.h)
    throw std::invalid_argument(e.what());
  }
}

}  // namespace ropecheck
