#include "gate/check.h"

#include "gate/progress.h"

// judge_into_report has a file of its own: it needs the golden loop and the reports only, not the
// identity catalog `run --props` adds (and with it RapidCheck, which the Python module cannot link:
// Debian's librapidcheck.a is not position-independent).
namespace ropecheck::gate {

Report judge_into_report(const std::vector<runner::LoadedGolden>& suites, const runner::Implementation& implementation,
                         const judge::Settings& settings, std::string command) {
  runner::check_skip_flags(settings.skip_flags, suites);
  std::int64_t total = 0;
  for (const runner::LoadedGolden& g : suites) total += g.file.number_of_tests;
  Progress progress(total);
  runner::Judgement judgement = runner::judge_golden(
      suites, implementation, settings, [&](std::int64_t done, std::int64_t, const std::string& label) { progress.update(done, label); });
  Report report;
  report.command = std::move(command);
  report.model = implementation.claims().model;
  report.implementation = implementation.name();
  for (const runner::LoadedGolden& g : suites) report.golden_files.push_back(g.path);
  report.groups = std::move(judgement.groups);
  report.notes = std::move(judgement.notes);
  report.scope = scope_of(settings, judgement.skipped_by_flags, judgement.skipped_by_position);
  report.worst_listed = settings.worst_cases;
  return report;
}

}  // namespace ropecheck::gate
