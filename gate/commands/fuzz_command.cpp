// `ropecheck fuzz`: search for the inputs where an implementation is least accurate (fuzz/README.md).
//   ropecheck fuzz --impl NAME | --plugin PATH.so [--spec SPEC]... [--seconds N] [--trials N] [--seed S]
//                  [--shard K/N | auto [--shard-count N]] [--model M] [--tolerance e=E] [--timeout S] [--json F]
//   ropecheck fuzz --impl NAME | --plugin PATH.so --spec SPEC --replay CASE [--model M] [--tolerance e=E] [--json F]
// Exit status: 0 no violation, 1 a tolerance breach or property violation, 2 bad arguments.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include <unistd.h>

#include "fuzz/search/search.h"
#include "gate/commands/command.h"
#include "gate/commands/judge_options.h"
#include "gate/commands/spec_options.h"
#include "gate/judge_args.h"
#include "gate/report.h"
#include "gate/shard.h"
#include "reference/rounding.h"
#include "runner/adapters.h"
#include "runner/registry.h"
#include "runner/sweep.h"

namespace ropecheck::gate {
namespace {

namespace fs = std::filesystem;

// Writes `text` to `path` through a temporary file and a rename: never a partial file.

}  // namespace

namespace {

// Why the violations happen: each violating spec (at most kExplainedSpecs) swept at 256 sampled
// positions through the same inference as every route (judge/inference.h), one entry
// {spec, explanation} per spec it explains, kept in the report so that `report merge` of shards
// says it too. The search's cases are single pairs: a change of the spec is fitted on a sample.
nlohmann::ordered_json fuzz_explanations(const runner::Implementation& candidate, const nlohmann::ordered_json& report,
                                         std::uint64_t seed) {
  constexpr std::size_t kExplainedSpecs = 3;
  std::vector<std::string> specs;
  for (const auto& v : report.at("violations")) {
    if (v.value("violation", "") == "status") continue;  // a call that failed: its message says why
    const std::string text = v.at("spec").get<std::string>();
    if (std::find(specs.begin(), specs.end(), text) == specs.end() && specs.size() < kExplainedSpecs) specs.push_back(text);
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const std::string& text : specs) {
    runner::SweepOptions options;
    options.samples = 256;
    options.seed = seed;
    const GroupResult g = runner::sweep(candidate, parse_spec(text), options, judge::Settings{});
    if (g.diagnosis && !g.diagnosis->explanation.empty()) out.push_back({{"spec", text}, {"explanation", g.diagnosis->explanation}});
  }
  return out;
}

}  // namespace

void add_fuzz_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand("fuzz", "Search for the inputs where an implementation is least accurate");
  struct Args {
    std::string impl, plugin, shard = "0/1", json, replay;
    SpecOptions spec;
    double seconds = 0;
    std::int64_t trials = 0;
    std::uint64_t seed = 1;
    std::optional<std::int64_t> shard_count;                             // --shard-count, with --shard auto
    std::string model = std::string(judge::name(judge::kDefaultModel));  // judge/tolerance.h
    std::string tolerance;
    double timeout = 10;
    std::int64_t memory_limit_mib = runner::kDefaultMemoryLimitMiB;
    bool strict_zeros = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--impl", args->impl,
                  "Implementation: a kernel (scalar, avx2, avx512, avx512bf16, cuda, auto: through the C ABI), reference, or "
                  "reference-f32-recipe");
  cmd->add_option("--plugin", args->plugin, "A plugin shared library exporting include/ropecheck/kernel.h");
  add_spec_options(cmd, args->spec, SpecCount::any);  // none: the built-in edge specs
  cmd->add_option("--seconds", args->seconds, "Stop starting new trials after this many seconds")->check(number_in(1e-3, 1e9));
  cmd->add_option("--trials", args->trials, "Trials over all shards (deterministic budget; default 100, unlimited with --seconds alone)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", args->seed, "Seed of the search (same seed and trials: same output)");
  CLI::Option* shard = cmd->add_option("--shard", args->shard,
                                       "K/N: run trials t with t mod N = K (0 <= K < N). auto: K/N from a Slurm job array or a Kubernetes "
                                       "Indexed Job (with --shard-count), as for sweep (gate/README.md \"Sharded sweeps on a cluster\")");
  cmd->add_option("--shard-count", args->shard_count,
                  "With --shard auto: the number of shards where the scheduler does not say it (a Kubernetes "
                  "Indexed Job's completions); checked against a Slurm array's count");
  cmd->add_option("--model", args->model,
                  "What the implementation claims to compute: exact | f32-angle (judge/README.md; f32-recipe values are "
                  "golden only)")
      ->capture_default_str();
  cmd->add_option("--tolerance", args->tolerance, "e=NUMBER: tolerance in u*rho units (default: the implementation's bound)");
  cmd->add_flag("--strict-zeros", args->strict_zeros, "Require IEEE signs of zero results (default: +0 and -0 compare equal)");
  add_child_options(cmd, args->timeout, args->memory_limit_mib);
  cmd->add_option("--replay", args->replay, "Evaluate one case (as printed by a replay command) and exit");
  cmd->add_option("--json", args->json, "Write the JSON report (schema ropecheck-fuzz-report/1) to this file");
  cmd->callback([args, shard, &status] {
    if (args->impl.empty() == args->plugin.empty()) throw UsageError("fuzz: expected exactly one of --impl NAME or --plugin PATH");
    const std::vector<std::string> inputs = {args->plugin};  // the report never replaces the plugin
    check_report_paths({args->json}, inputs);
    runner::RegistryOptions registry;
    // The claim, as every judging command reads it (the search compares with the exact values).
    registry.claims.model = judge::parse_model(args->model);
    if (!judge::judges_exact_values(registry.claims.model)) {
      throw UsageError("--model: expected exact or f32-angle (fuzz compares with the exact values), got '" + args->model + "'");
    }
    if (!args->tolerance.empty()) {
      const judge::ToleranceOverrides overrides = judge::parse_tolerance(args->tolerance);
      // The search ranks cases by e: an element-ULP bound does not apply.
      if (!overrides.rope || overrides.rope->kind != judge::Tolerance::Kind::e || overrides.attention_scores ||
          overrides.attention_outputs) {
        throw UsageError("--tolerance: expected e=NUMBER (u*rho units), got '" + args->tolerance + "'");
      }
      registry.claims.tolerance = overrides.rope;
    }
    registry.timeout_seconds = args->timeout;
    registry.memory_limit_mib = args->memory_limit_mib;
    const std::unique_ptr<runner::Implementation> candidate = runner::make_implementation({args->impl, args->plugin}, registry);
    if (const auto* isolated = dynamic_cast<const runner::IsolatedImplementation*>(candidate.get())) {
      if (const runner::ApplyResult* e = isolated->start_error()) throw UsageError("--plugin " + args->plugin + ": " + e->message);
    }
    std::vector<Spec> specs;
    try {
      specs = resolve_specs(args->spec);
    } catch (const SpecError& e) {
      throw UsageError(std::string(args->spec.hf_configs.empty() ? "--spec: " : "") + e.what());
    }

    nlohmann::ordered_json report;
    if (!args->replay.empty()) {
      if (specs.size() != 1) throw UsageError("--replay: expected exactly one --spec");
      fuzz::FuzzCase c;
      try {
        c = fuzz::parse_case(args->replay, specs[0]);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      const judge::Tolerance tolerance = candidate->tolerance(specs[0]);
      const fuzz::Outcome outcome = fuzz::evaluate(*candidate, specs[0], tolerance, {c}, args->strict_zeros)[0];
      const double tol = outcome.bound > 0 ? outcome.bound : tolerance.value;  // at the reported pair's angle
      if (outcome.unsupported) {
        throw UsageError("--spec: the implementation reports this spec as unsupported (ROPECHECK_ERROR_UNSUPPORTED)");
      }
      std::printf("replay %s: e = %.17g (tolerance %.17g), pair %d, input (%s, %s) got (%s, %s) expected (%s, %s), %s%s%s\n",
                  fuzz::case_text(c).c_str(), outcome.e, tol, outcome.worst_pair, reference::to_hex(outcome.x).c_str(),
                  reference::to_hex(outcome.y).c_str(), reference::to_hex(outcome.got_a).c_str(), reference::to_hex(outcome.got_b).c_str(),
                  reference::to_hex(outcome.expected_a).c_str(), reference::to_hex(outcome.expected_b).c_str(),
                  std::string(fuzz::name(outcome.violation)).c_str(), outcome.message.empty() ? "" : ": ", outcome.message.c_str());
      if (!args->json.empty()) {
        nlohmann::ordered_json j;
        j["spec"] = to_string(specs[0]);
        j["case"] = fuzz::case_text(c);
        j["e"] = outcome.e;
        j["violation"] = std::string(fuzz::name(outcome.violation));
        j["message"] = outcome.message;
        write_atomically(args->json, j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n", inputs);
      }
      status = outcome.violation == fuzz::Violation::none ? 0 : 1;
      return;
    }

    fuzz::FuzzOptions options;
    options.specs = specs;
    options.seed = args->seed;
    if (args->trials > 0) options.trials = args->trials;
    if (args->seconds > 0) options.seconds = args->seconds;
    const Shard resolved =
        resolve_shard(shard->count() > 0 ? std::optional(args->shard) : std::nullopt, args->shard_count, shard_environment());
    options.shard_index = resolved.index;
    options.shard_count = resolved.count;
    options.strict_zeros = args->strict_zeros;
    report = fuzz::to_json(fuzz::run_fuzz(*candidate, options));
    if (nlohmann::ordered_json why = fuzz_explanations(*candidate, report, args->seed); !why.empty()) {
      report["explanations"] = std::move(why);
    }
    // Names are bytes (a plugin's, a file's), not always UTF-8: replaced, never a failed report.
    if (!args->json.empty()) {
      write_atomically(args->json, report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n", inputs);
    }
    const std::string text = fuzz::to_text(report);
    std::fputs(text.c_str(), stdout);
    status = fuzz::verdict_status(report);
  });
}

}  // namespace ropecheck::gate
