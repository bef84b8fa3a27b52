// `ropecheck check` and `ropecheck run` as functions (the command line in gate/commands/ only fills
// the arguments): both judge an implementation over the golden suites through the one golden loop
// (runner/golden_run.h) — `check` a candidate file's outputs, `run` a project kernel or a plugin —
// print the verdict table, write the reports, and return the exit status (0 pass, 1 fail). Bad
// arguments or input throw UsageError / InputError (exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gate/judge_args.h"
#include "gate/report.h"
#include "runner/golden_run.h"
#include "runner/implementation.h"
#include "runner/isolation.h"
#include "spec/spec.h"

namespace ropecheck::gate {

// The golden loop (runner/golden_run.h) with a progress bar on a terminal, and the report every
// route over the golden suites prints: `check`, `run`, and Python's gate() and assert_rope_close.
// The --skip-flags are checked against the suites first (runner::check_skip_flags).
Report judge_into_report(const std::vector<runner::LoadedGolden>& suites, const runner::Implementation& implementation,
                         const judge::Settings& settings, std::string command);

struct ReportPaths {
  std::string json, junit, html;
  TextForm text = TextForm::summary;  // --verbose: the table; `ropecheck explain`: the explanation
};

struct CheckArguments {
  std::string golden;     // a suite file or a folder of them
  std::string candidate;  // .npz, .npy, safetensors or JSON
  // A direct check of the user's own tensors (no golden file; runner/tensor_judge.h): the spec, the
  // positions (gate/positions.h), the input file and the heads per token (0: from the sizes).
  // .npy and single-tensor safetensors files stream in chunks; other formats are read whole.
  std::optional<Spec> spec;  // from --spec or --hf-config (gate/commands/spec_options.h)
  std::string positions, input;
  std::int64_t heads = 0;
  JudgeArguments judge;
  ReportPaths reports;
};
// With `spec` set: the direct check, else the golden check.
int run_check(const CheckArguments& args);

struct RunArguments {
  std::string implementation;  // --impl
  std::string plugin;          // --plugin
  std::string golden;
  JudgeArguments judge;
  ReportPaths reports;
  bool props = false;          // also the identity catalog
  int props_cases = 25;
  std::uint64_t seed = 1;
  std::string property;        // --property: the one identity --props runs; empty: all
  double timeout = 10;         // seconds per plugin call
  std::int64_t memory_limit_mib = runner::kDefaultMemoryLimitMiB;  // a plugin's child process
};
// `ropecheck run`: a project kernel (--impl) or a plugin (--plugin) judged over the golden suites.
int run_implementation(const RunArguments& args);

}  // namespace ropecheck::gate
