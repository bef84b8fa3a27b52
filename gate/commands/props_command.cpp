// `ropecheck props`: runs the identity catalog (proofs/catalog.h) against one implementation from
// the registry (runner/registry.h) and prints one row per identity; on a failure, the shrunk
// counterexample as hex floats and the command that replays it.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "gate/commands/command.h"
#include "gate/commands/judge_options.h"
#include "runner/adapters.h"
#include "runner/registry.h"
#include "proofs/catalog.h"
#include "proofs/runner.h"

namespace ropecheck::gate {
namespace {

struct PropsArguments {
  std::string implementation;  // empty: "reference-exact", or "auto" with --plugin (as `run --plugin`)
  std::string plugin;
  double timeout = 10;
  std::int64_t memory_limit_mib = runner::kDefaultMemoryLimitMiB;
  int precision_bits = 256;
  std::string model = "exact";
  std::string tolerance;
  std::optional<std::int64_t> max_position;
  int cases = 100;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::string only;
  bool no_shrink = false;
};

constexpr int kMaxCases = 100000;  // as `run --props-cases`
// The catalog's allowed discrepancy for reference-exact is about 2^-P: a binary64 0 past P ≈ 1074,
// so that from 2048 bits identities read VIOLATED (0 > 0). 1024 bits take seconds; 16384 took
// 46 s per identity, and 10^8 never ended.
constexpr int kMaxPrecisionBits = 1024;

std::string discrepancy_text(const proofs::IdentityReport& report, bool bits) {
  char buffer[64];
  if (bits) {
    if (report.tally.worst_relative == 0) return "exact";
    std::snprintf(buffer, sizeof buffer, "%.1f bits", -std::log2(report.tally.worst_relative));
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3g u*rho", report.tally.worst_units);
  }
  return buffer;
}

int run_props(const PropsArguments& args) {
  // A plugin's implementation defaults to "auto"; otherwise the reference's unrounded outputs, whose
  // agreement the catalog reports in bits.
  const std::string name = !args.implementation.empty() ? args.implementation : args.plugin.empty() ? "reference-exact" : "auto";
  // Both bound the work: an identity costs about cases x precision^1.6 (MPFR's sin/cos).
  if (args.cases < 1 || args.cases > kMaxCases) {
    throw UsageError("--cases: expected an integer >= 1 and <= " + std::to_string(kMaxCases) + ", got " + std::to_string(args.cases));
  }
  if (args.precision_bits < 64 || args.precision_bits > kMaxPrecisionBits) {
    throw UsageError("--precision: expected >= 64 and <= " + std::to_string(kMaxPrecisionBits) + " bits, got " +
                     std::to_string(args.precision_bits));
  }
  if (args.max_position && *args.max_position < 1) {
    throw UsageError("--max-position: expected an integer >= 1, got " + std::to_string(*args.max_position));
  }
  if (!args.only.empty() && !proofs::find_identity(args.only)) {
    std::string names;
    for (const auto& identity : proofs::catalog()) names += (names.empty() ? "" : ", ") + std::string(identity.name);
    throw UsageError("--only: expected one of " + names + ", got '" + args.only + "'");
  }
  runner::RegistryOptions registry;
  registry.claims.model = judge::parse_model(args.model);
  if (!args.tolerance.empty()) registry.claims.tolerance = judge::parse_tolerance(args.tolerance).rope;
  registry.precision_bits = args.precision_bits;
  registry.timeout_seconds = args.timeout;
  registry.memory_limit_mib = args.memory_limit_mib;
  // Kernels and plugins in a child process: a crash is that case's failure, not the command's.
  registry.isolate_kernels = true;
  std::unique_ptr<runner::Implementation> implementation = runner::make_implementation({name, args.plugin}, registry);
  if (args.max_position) {
    implementation = std::make_unique<runner::PositionLimit>(std::move(implementation), *args.max_position);
  }
  const bool bits = implementation->exact_precision_bits() > 0;

  proofs::RunOptions run;
  run.cases = args.cases;
  run.seed = args.seed_given ? args.seed : std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32);
  run.shrink = !args.no_shrink;

  std::printf("implementation: %s (%s)\nseed: %llu\n\n", implementation->name().c_str(),
              bits ? ("unrounded outputs at " + std::to_string(args.precision_bits) + " bits").c_str()
                   : "outputs in the spec's dtype",
              static_cast<unsigned long long>(run.seed));
  std::printf("%-28s %7s  %-20s %10s  %-8s  %s\n", "identity", "cases", "worst discrepancy", "of bound", "verdict",
              "proven for all inputs (proofs/formal/coq)");
  std::fflush(stdout);
  int status = 0;
  for (const proofs::Identity& identity : proofs::catalog()) {
    if (!args.only.empty() && identity.name != args.only) continue;
    const proofs::IdentityReport report = proofs::run_identity(identity, *implementation, run);
    const char* verdict = report.holds ? "holds" : report.gave_up ? "GAVE UP" : "VIOLATED";
    char fraction[32];
    std::snprintf(fraction, sizeof fraction, "%.2g", report.tally.worst_fraction);
    const std::string proof = identity.proof.empty() ? "-" : std::string(identity.proof) + " " + report.name;
    std::printf("%-28s %7d  %-20s %10s  %-8s  %s\n", report.name.c_str(), report.cases,
                discrepancy_text(report, bits).c_str(), fraction, verdict, proof.c_str());
    if (!report.holds && report.gave_up) {
      // Too few supported specs to test (e.g. a plugin without multi-axis RoPE): skipped, not
      // failed, as `run --props` reports it.
      std::printf("  skipped: %s\n", report.failure.c_str());
    } else if (!report.holds) {
      status = 1;
      std::printf("  %s\n", report.failure.c_str());
      if (!report.counterexample.empty()) std::printf("  counterexample:\n%s", report.counterexample.c_str());
      // the same implementation of the same plugin: --impl too when it was given
      const std::string target = args.plugin.empty()          ? "--impl " + name
                                 : args.implementation.empty() ? "--plugin " + args.plugin
                                                               : "--plugin " + args.plugin + " --impl " + name;
      std::string extra;
      if (!args.tolerance.empty()) extra += " --tolerance " + args.tolerance;
      if (args.max_position) extra += " --max-position " + std::to_string(*args.max_position);
      if (args.no_shrink) extra += " --no-shrink";
      std::printf("  replay: ropecheck props %s --precision %d --model %s --cases %d --seed %llu --only %s%s\n",
                  target.c_str(), args.precision_bits, args.model.c_str(), args.cases,
                  static_cast<unsigned long long>(run.seed), report.name.c_str(), extra.c_str());
    }
    std::fflush(stdout);
  }
  return status;
}

}  // namespace

void add_props_command(CLI::App& root, int& status) {
  auto args = std::make_shared<PropsArguments>();
  CLI::App* cmd = root.add_subcommand("props", "Check RoPE's identities (proofs/ catalog) against an implementation");
  cmd->add_option("--impl", args->implementation,
                  "Implementation under test (runner/registry.h; default: reference-exact, or auto with --plugin)");
  cmd->add_option("--plugin", args->plugin, "A shared library exporting the C ABI of include/ropecheck/kernel.h");
  add_child_options(cmd, args->timeout, args->memory_limit_mib);
  cmd->add_option("--precision", args->precision_bits, "Working precision of the reference in bits (64 to 1024)")->capture_default_str();
  cmd->add_option("--model", args->model, "What the implementation claims: exact | f32-recipe (its default tolerance)")
      ->capture_default_str();
  cmd->add_option("--tolerance", args->tolerance, "The bound the implementation claims: e=NUMBER (u*rho units)");
  cmd->add_option("--max-position", args->max_position, "Largest |position| the identities generate");
  cmd->add_option("--cases", args->cases, "Successful cases required per identity")->capture_default_str();
  cmd->add_option_function<std::uint64_t>(
      "--seed", [args](const std::uint64_t& seed) { args->seed = seed, args->seed_given = true; },
      "RapidCheck seed (random when absent; printed)");
  cmd->add_option("--only", args->only, "Run one identity");
  cmd->add_flag("--no-shrink", args->no_shrink, "Report the first failing case without shrinking");
  cmd->callback([args, &status] { status = run_props(*args); });
}

}  // namespace ropecheck::gate
