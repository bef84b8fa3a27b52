#include "gate/check.h"

#include <memory>

#include "judge/adapters.h"
#include "judge/errors.h"
#include "judge/registry.h"
#include "proofs/catalog.h"
#include "proofs/runner.h"
#include "tensorio/readers.h"

namespace ropecheck::gate {
namespace {

int finish(Report& report, const ReportPaths& paths, const std::vector<std::string>& inputs) {
  report.decide();
  emit_reports(report, paths.json, paths.junit, paths.html, inputs);
  return report.verdict == "pass" ? 0 : 1;
}

}  // namespace

int run_check(const CheckArguments& args) {
  check_report_paths({args.reports.json, args.reports.junit, args.reports.html}, {args.golden, args.candidate});
  const judge::Claims claims = claims_of(args.judge);
  judge_options_of(args.judge);  // every option checked before the work
  const std::vector<judge::LoadedGolden> suites = judge::load_golden(args.golden);
  tensorio::TensorMap tensors;
  try {
    tensors = tensorio::parse_candidate(tensorio::read_file_bytes(args.candidate), args.candidate);
  } catch (const tensorio::ReaderError& e) {
    throw InputError(e.what());
  }
  std::vector<const golden::GoldenFile*> files;
  for (const judge::LoadedGolden& g : suites) files.push_back(&g.file);
  const judge::CandidateFile candidate(args.candidate, std::move(tensors), files, claims);
  Report report = judge_into_report(suites, candidate, args.judge, "check");
  report.candidate = args.candidate;
  for (const std::string& note : candidate.notes()) report.notes.push_back(note);
  std::vector<std::string> inputs = report.golden_files;
  inputs.push_back(args.candidate);
  return finish(report, args.reports, inputs);
}

int run_run(const RunArguments& args) {
  if (args.implementation.empty() && args.plugin.empty()) throw UsageError("run: expected --impl NAME or --plugin PATH");
  check_report_paths({args.reports.json, args.reports.junit, args.reports.html}, {args.golden, args.plugin});
  judge::RegistryOptions registry;
  registry.claims = claims_of(args.judge);
  registry.timeout_seconds = args.timeout;
  registry.memory_limit_mib = args.memory_limit_mib;
  judge_options_of(args.judge);
  const std::unique_ptr<judge::Implementation> implementation =
      judge::make_implementation({args.implementation, args.plugin}, registry);
  const std::vector<judge::LoadedGolden> suites = judge::load_golden(args.golden);
  Report report = judge_into_report(suites, *implementation, args.judge, "run");
  report.candidate = args.plugin.empty() ? args.implementation : args.plugin;
  if (const auto* isolated = dynamic_cast<const judge::IsolatedImplementation*>(implementation.get())) {
    if (const judge::ApplyResult* e = isolated->start_error()) {
      report.notes.push_back(std::string(judge::kind_name(e->status)) + ": " + e->message);
    }
  }
  if (const std::optional<std::string> reason = implementation->stopped_reason()) report.notes.push_back("stopped: " + *reason);
  if (args.props) {
    proofs::RunOptions run_options;
    run_options.cases = args.props_cases;
    run_options.seed = args.seed;
    for (const proofs::Identity& identity : proofs::catalog()) {
      const proofs::IdentityReport r = proofs::run_identity(identity, *implementation, run_options);
      PropertyResult p;
      p.name = r.name;
      p.formula = std::string(identity.formula);
      p.proof = std::string(identity.proof);
      p.holds = r.holds;
      p.cases = r.cases;
      p.gave_up = r.gave_up;
      p.worst_units = r.tally.worst_units;
      p.failure = r.failure;
      p.counterexample = r.counterexample;
      report.properties.push_back(std::move(p));
    }
  }
  std::vector<std::string> inputs = report.golden_files;
  if (!args.plugin.empty()) inputs.push_back(args.plugin);
  return finish(report, args.reports, inputs);
}

}  // namespace ropecheck::gate
