#include "proofs/runner.h"

#include <rapidcheck.h>

namespace ropecheck::proofs {

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
  const rc::detail::TestResult result = rc::detail::checkTestable(property, metadata, params);

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
