// `ropecheck sweep`: how accurate is an implementation across positions? runner/sweep.h samples
// positions up to --max-position (every small one, 2^k − 1, 2^k, 2^k + 1, random ones), runs the
// implementation (a project kernel, the reference, or --plugin) and judges every pair by the one
// group rule; prints the worst e, where it occurred, the accuracy horizon and the result, and writes
// the same JSON/JUnit/HTML reports as check and run. `--shard K/N` or `--shard auto` (gate/shard.h:
// a Slurm job array, a Kubernetes Indexed Job) makes every Nth call; `report merge` of the shards'
// --json reports is the unsharded report (gate/README.md "Sharded sweeps on a cluster").
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <optional>

#include "gate/commands/command.h"
#include "gate/commands/judge_options.h"
#include "gate/commands/spec_options.h"
#include "gate/report.h"
#include "gate/shard.h"
#include "optimized/error_bounds.h"
#include "runner/registry.h"
#include "runner/sweep.h"

namespace ropecheck::gate {
namespace {

struct SweepArguments {
  std::string implementation = "auto";
  std::string plugin;
  SpecOptions spec;
  JudgeArguments judge;
  ReportPaths reports;
  runner::SweepOptions sweep;
  double timeout = 10;
  std::int64_t memory_limit_mib = runner::kDefaultMemoryLimitMiB;
  std::string shard = "0/1";
  std::optional<std::int64_t> shard_count;  // --shard-count, with --shard auto
  Shard resolved;
};

int run_sweep(const SweepArguments& a) {
  check_report_paths({a.reports.json, a.reports.junit, a.reports.html}, {a.plugin});
  if (a.sweep.threads < 0) throw UsageError("--threads: expected an integer >= 0, got " + std::to_string(a.sweep.threads));
  const judge::Settings settings = settings_of(a.judge);
  const runner::Claims& claims = settings.claims;
  // The kernels' bound (optimized/error_bounds.h) is derived for positions below 2^40 only: beyond
  // that the default tolerance would be a number without a proof. An explicit --tolerance may go further.
  if (!claims.tolerance && a.sweep.max_position >= kernels::kMaxBoundPosition) {
    throw UsageError("--max-position: expected at most 2^40 - 1 = " + std::to_string(kernels::kMaxBoundPosition - 1) +
                     " (the default bounds are derived below 2^40; give --tolerance to sweep further), got " +
                     std::to_string(a.sweep.max_position));
  }
  const Spec spec = resolve_spec(a.spec);
  runner::RegistryOptions registry;
  registry.claims = claims;
  registry.timeout_seconds = a.timeout;
  registry.memory_limit_mib = a.memory_limit_mib;
  // One thread per kernel call: the calls run in the sweep's pipeline beside the judging of earlier
  // ones (runner/sweep.cpp), which keeps every thread busy; a call split over threads of its own
  // only competed with them (at 32768 samples, 512 positions a call, it took a second thread).
  registry.kernel_threads = 1;
  const std::unique_ptr<runner::Implementation> implementation = runner::make_implementation({a.implementation, a.plugin}, registry);
  runner::SweepOptions sweep = a.sweep;
  GroupResult g = runner::sweep(*implementation, spec, sweep, settings);

  std::printf("implementation: %s (%s)\n", implementation->name().c_str(), implementation->selector().c_str());
  std::printf("claim: %s\n", judge::claim_text(claims.model).c_str());
  std::printf("spec: %s\n", to_string(spec).c_str());
  const runner::SweepCalls calls = runner::sweep_calls(spec, a.sweep);
  std::printf("samples: %" PRId64 " positions in [0, %" PRId64 "], %d pairs each\n", calls.positions, a.sweep.max_position,
              spec.rotary_dim / 2);
  if (a.sweep.shard_count > 1 || a.resolved.source != "--shard") {
    std::printf("shard: %d/%d (%s): calls c with c mod %d = %d of %" PRId64 " calls of up to %" PRId64 " positions\n", a.sweep.shard_index,
                a.sweep.shard_count, a.resolved.source.c_str(), a.sweep.shard_count, a.sweep.shard_index, calls.calls, calls.per_call);
  }
  if (g.verdict == judge::Verdict::skip) {
    std::printf("result: skipped (%s)\n", g.outcomes.empty() ? "" : g.outcomes.front().reason.c_str());
  } else {
    std::printf("worst e: %.6g at position %" PRId64 ", pair %d (%s)\n", g.worst_e, g.worst_e_position, g.worst_e_pair,
                margin_text(g.worst_margin).c_str());
    if (g.tolerance.per_radian > 0) {
      std::printf("tolerance: %.9g + %.9g*|angle| (%s)\n", g.tolerance.value, g.tolerance.per_radian, g.tolerance.source.c_str());
    } else {
      std::printf("tolerance: %.9g (%s)\n", g.tolerance.value, g.tolerance.source.c_str());
    }
    if (!g.horizon) {
      std::printf("accuracy horizon: none (e exceeds the tolerance at position %" PRId64 ")\n",
                  g.points.empty() ? std::int64_t{0} : g.points.front().position);
    } else {
      std::printf("accuracy horizon: %" PRId64 "%s\n", *g.horizon, g.horizon_complete ? " (every sampled position)" : "");
    }
    const std::string edge = edge_summary(g);
    if (!edge.empty()) std::printf("edge cases: %s\n", edge.c_str());
    for (const Case& c : g.worst) {
      if (&c - g.worst.data() >= settings.worst_cases) break;
      std::printf("  %s position %" PRId64 " dims (%d, %d): %s\n", std::string(judge::name(c.kind)).c_str(), c.position, c.dim,
                  c.second_dim, c.message.c_str());
    }
    if (!g.verdict_reason.empty()) std::printf("note: %s\n", g.verdict_reason.c_str());
    if (g.diagnosis) {
      for (const std::string& line : g.diagnosis->lines) {
        std::printf("%s: %s\n", line == g.diagnosis->explanation ? "explanation" : "diagnosis", line.c_str());
      }
    }
    std::printf("result: %s\n", std::string(judge::name(g.verdict)).c_str());
  }
  std::fflush(stdout);
  Report report;
  report.command = "sweep";
  report.implementation = implementation->name();
  report.candidate = implementation->selector();
  report.model = claims.model;
  report.scope = scope_of(settings, 0, 0);
  report.sweep =
      SweepScope{a.sweep.seed, a.sweep.samples, a.sweep.max_position, a.sweep.shard_index, a.sweep.shard_count, settings.worst_cases};
  report.groups.push_back(std::move(g));
  report.decide();
  const std::vector<std::string> inputs = {a.plugin};
  if (!a.reports.json.empty()) write_atomically(a.reports.json, to_json(report), inputs);
  if (!a.reports.junit.empty()) write_atomically(a.reports.junit, to_junit(report), inputs);
  if (!a.reports.html.empty()) write_atomically(a.reports.html, to_html(report), inputs);
  return report.verdict == judge::Verdict::pass ? 0 : 1;
}

}  // namespace

void add_sweep_command(CLI::App& root, int& status) {
  auto args = std::make_shared<SweepArguments>();
  CLI::App* cmd =
      root.add_subcommand("sweep", "Measure an implementation's worst error e across sampled positions and its accuracy horizon");
  cmd->add_option("--impl", args->implementation,
                  "Implementation (runner/registry.h): a project kernel (scalar, avx2, avx512, avx512bf16, cuda, auto), a reference "
                  "variant, or with --plugin the name passed to the plugin")
      ->capture_default_str();
  cmd->add_option("--plugin", args->plugin, "A shared library exporting the C ABI of include/ropecheck/kernel.h");
  add_spec_options(cmd, args->spec, SpecCount::one);
  cmd->add_option("--max-position", args->sweep.max_position, "Largest position sampled")->capture_default_str();
  cmd->add_option("--samples", args->sweep.samples, "Distinct positions sampled (at least the fixed 0..63, 2^k - 1, 2^k, 2^k + 1)")
      ->capture_default_str();
  cmd->add_option("--seed", args->sweep.seed, "Seed of the random positions and inputs")->capture_default_str();
  add_child_options(cmd, args->timeout, args->memory_limit_mib);
  CLI::Option* shard = cmd->add_option("--shard", args->shard,
                                       "K/N: make the calls c (of up to 4096 sampled positions, at least 64 calls) with c mod N = K; "
                                       "`ropecheck report merge` joins the shards' --json reports into the unsharded one. auto: K/N from "
                                       "a Slurm job array (SLURM_ARRAY_TASK_ID, _MIN, _MAX, _STEP) or a Kubernetes Indexed Job "
                                       "(JOB_COMPLETION_INDEX with --shard-count); refused when they are missing or inconsistent "
                                       "(gate/README.md \"Sharded sweeps on a cluster\")")
                           ->capture_default_str();
  cmd->add_option("--shard-count", args->shard_count,
                  "With --shard auto: the number of shards where the scheduler does not say it (a Kubernetes "
                  "Indexed Job's completions); checked against a Slurm array's count");
  add_judge_options(cmd, args->judge, {.skip_flags = false, .max_position = false});
  add_report_options(cmd, args->reports, false);
  cmd->callback([args, shard, &status] {
    args->resolved = resolve_shard(shard->count() > 0 ? std::optional(args->shard) : std::nullopt, args->shard_count, shard_environment());
    args->sweep.shard_index = args->resolved.index;
    args->sweep.shard_count = args->resolved.count;
    if (!args->plugin.empty() && args->implementation == "auto") args->implementation.clear();
    args->sweep.threads = args->judge.settings.threads;
    status = run_sweep(*args);
  });
}

}  // namespace ropecheck::gate
