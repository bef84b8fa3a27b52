// `ropecheck run`: runs a project kernel (--impl) or an external plugin (--plugin) over the golden
// suites, each call in a child process (gate/isolation.h), and, with --props, over the identity
// catalog (proofs/); then judges the outputs exactly as `check` does. gate/README.md.
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>

#include "gate/commands/command.h"
#include "gate/compare.h"
#include "gate/golden_set.h"
#include "gate/isolation.h"
#include "gate/kernel_implementation.h"
#include "gate/report.h"
#include "proofs/catalog.h"
#include "proofs/implementation.h"
#include "proofs/runner.h"
#include "spec/schedule.h"

#ifndef ROPECHECK_GOLDEN_DIR
#define ROPECHECK_GOLDEN_DIR "golden/suites"
#endif

namespace ropecheck::gate {
namespace {

}  // namespace

void add_run_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand("run", "Run a project kernel or a plugin over the golden suites (and the identities) and judge it");
  struct Args {
    std::string impl, plugin, golden = ROPECHECK_GOLDEN_DIR, model = "exact", tolerance, json, junit, html;
    bool props = false;
    double timeout = 10;
    int props_cases = 25;
    std::uint64_t seed = 1;
    int worst = 10;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--impl", args->impl,
                  "Project kernel: scalar | avx2 | avx512 | cuda | auto | reference (the exact reference, a self-check); "
                  "with --plugin: the name passed to the plugin (default auto)");
  cmd->add_option("--plugin", args->plugin, "Shared library exporting the C ABI of include/ropecheck/kernel.h");
  cmd->add_option("--golden", args->golden, "Golden suite file or folder (default: the repository's golden/suites)");
  cmd->add_option("--model", args->model, "Rounding model the implementation claims: exact | f32-recipe")
      ->check(CLI::IsMember({"exact", "f32-recipe"}));
  cmd->add_option("--tolerance", args->tolerance, "Override the default bound: e=NUMBER or ulp=NUMBER");
  cmd->add_flag("--props", args->props, "Also run the identity catalog (proofs/) against the implementation");
  cmd->add_option("--props-cases", args->props_cases, "Cases per identity with --props")->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", args->seed, "RapidCheck seed of --props (the same seed replays the same cases)");
  cmd->add_option("--timeout", args->timeout, "Seconds allowed per call before the child is killed")->check(CLI::Range(0.01, 86400.0));
  cmd->add_option("--json", args->json, "Write the JSON report here");
  cmd->add_option("--junit", args->junit, "Write a JUnit XML file here");
  cmd->add_option("--html", args->html, "Write a self-contained HTML report here");
  cmd->add_option("--worst", args->worst, "Worst cases listed per group")->check(CLI::Range(1, 1000));
  cmd->callback([args, &status] {
    if (args->impl.empty() && args->plugin.empty()) throw UsageError("run: expected --impl NAME or --plugin PATH");
    check_report_paths({args->json, args->junit, args->html}, {args->golden, args->plugin});
    CompareOptions options;
    options.model = args->model == "exact" ? Model::exact : Model::f32_recipe;
    if (!args->tolerance.empty()) options.tolerance = parse_tolerance(args->tolerance);
    options.worst_cases = args->worst;

    const Candidate candidate = resolve_candidate(args->impl, args->plugin);
    const Source source = candidate.source;
    const std::string& implementation = candidate.implementation;
    // The project's own kernels are held to their proven bounds, not the gate's generic default.
    if (source == Source::library && options.model == Model::exact) {
      options.claimed_bound = [](const Spec& spec) -> std::optional<Tolerance> { return project_kernel_bound(spec); };
    }
    const std::vector<LoadedGolden> suites = load_golden(args->golden);

    IsolatedKernel kernel(source, args->plugin, implementation, args->timeout);
    Report report;
    report.command = "run";
    report.model = options.model;
    report.candidate = source == Source::plugin ? args->plugin : implementation;
    report.implementation = source == Source::plugin ? "plugin " + args->plugin + ": " + kernel.describe()
                                                     : "ropecheck kernel " + kernel.describe();
    if (const ApplyResult* e = kernel.start_error()) report.notes.push_back(std::string(kind_name(e->status)) + ": " + e->message);

    std::int64_t total = 0;
    for (const LoadedGolden& g : suites) total += g.file.number_of_tests;
    std::int64_t done = 0;
    {
      Progress progress(total);
      for (const LoadedGolden& loaded : suites) {
        report.golden_files.push_back(loaded.path);
        const golden::GoldenFile& file = loaded.file;
        if (file.kind != golden::Kind::rope) {
          report.notes.push_back("suite " + file.suite + " (" + std::string(golden::name(file.kind)) +
                                 " tests) is not run: the kernel ABI applies RoPE only");
          continue;
        }
        for (std::size_t gi = 0; gi < file.groups.size(); ++gi) {
          const golden::Group& group = file.groups[gi];
          GroupComparer comparer(file.suite, static_cast<int>(gi), group, options);
          for (const golden::RopeTest& test : group.rope_tests) {
            progress.update(++done, file.suite);
            const ApplyResult r =
                kernel.apply(group.spec, reference::Shape{test.tokens, test.heads, test.head_dim}, test.positions, test.input);
            if (r.status == ApplyResult::Status::ok) {
              comparer.add(test, r.output);
            } else if (r.status == ApplyResult::Status::unsupported) {
              comparer.skip(test, r.message);
            } else {
              comparer.fail(test, std::string(kind_name(r.status)), r.message + " (suite " + file.suite + ", test " +
                                                                       std::to_string(test.id) + ")");
            }
          }
          report.groups.push_back(comparer.finish());
        }
      }
    }
    if (args->props) {
      KernelImplementation adapter(kernel, source, report.implementation, options.model, options.tolerance);
      proofs::RunOptions run_options;
      run_options.cases = args->props_cases;
      run_options.seed = args->seed;
      for (const proofs::Identity& identity : proofs::catalog()) {
        const proofs::IdentityReport r = proofs::run_identity(identity, adapter, run_options);
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
    report.decide();
    std::vector<std::string> inputs = report.golden_files;
    if (!args->plugin.empty()) inputs.push_back(args->plugin);
    emit_reports(report, args->json, args->junit, args->html, inputs);
    status = report.verdict == "pass" ? 0 : 1;
  });
}

}  // namespace ropecheck::gate
