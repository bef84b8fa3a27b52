#include "proofs/runner.h"

#include <rapidcheck.h>

#include <string>
#include <unordered_map>

namespace ropecheck::proofs {
namespace {

// Receives RapidCheck's events and prints nothing. rc::detail::checkProperty without a listener uses
// RapidCheck's global one, which at exit prints an RC_PARAMS line to reproduce any failure, and
// without a reproduce map it reads the global configuration's, loading it (which prints "Using
// configuration: seed=..." on stderr and reads RC_PARAMS). Both are given here, the map empty:
// the callers print their own replay command (gate/commands/props_command.cpp, gate/check.cpp).
class SilentListener final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

}  // namespace

IdentityReport run_identity(const Identity& identity, const Implementation& implementation, const RunOptions& options) {
  IdentityReport report;
  report.name = std::string(identity.name);
  rc::detail::TestParams params;
  params.seed = options.seed;
  params.maxSuccess = options.cases;
  params.maxSize = options.max_size;
  params.disableShrinking = !options.shrink;
  rc::detail::TestMetadata metadata;
  metadata.id = implementation.name() + "/" + report.name;
  metadata.description = report.name;
  Tally& tally = report.tally;
  const auto property = [&identity, &implementation, &tally] { identity.property(implementation, tally); };
  SilentListener listener;
  const std::unordered_map<std::string, rc::detail::Reproduce> no_reproduce;
  const rc::detail::TestResult result = rc::detail::checkTestable(property, metadata, params, listener, no_reproduce);

  if (result.is<rc::detail::SuccessResult>()) {
    report.holds = true;
    report.cases = result.get<rc::detail::SuccessResult>().numSuccess;
  } else if (result.is<rc::detail::FailureResult>()) {
    const auto& failure = result.get<rc::detail::FailureResult>();
    report.cases = failure.numSuccess + 1;
    report.failure = failure.description;
    for (const auto& [type, value] : failure.counterExample) report.counterexample += value + "\n";
  } else if (result.is<rc::detail::GaveUpResult>()) {
    const auto& gave_up = result.get<rc::detail::GaveUpResult>();
    report.holds = false;  // nothing violated, but nothing established either
    report.gave_up = true;
    report.cases = gave_up.numSuccess;
    report.failure = gave_up.description;
  } else {
    report.failure = result.get<rc::detail::Error>().description;
  }
  return report;
}

}  // namespace ropecheck::proofs
