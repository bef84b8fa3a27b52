#include "gate/check.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "base/errors.h"
#include "gate/positions.h"
#include "gate/progress.h"
#include "proofs/catalog.h"
#include "proofs/runner.h"
#include "runner/adapters.h"
#include "runner/registry.h"
#include "runner/tensor_files.h"

namespace ropecheck::gate {
namespace {

int finish(Report& report, const ReportPaths& paths, const std::vector<std::string>& inputs) {
  report.decide();
  emit_reports(report, paths.json, paths.junit, paths.html, inputs, paths.text);
  return report.verdict == judge::Verdict::pass ? 0 : 1;
}

int run_direct_check(const CheckArguments& args) {
  if (!args.golden.empty()) throw UsageError("check: expected --golden or --spec, not both");
  if (args.positions.empty()) throw UsageError("check --spec: expected --positions (a list, a range START:STOP, or a file)");
  if (args.input.empty()) throw UsageError("check --spec: expected --input FILE (the tensor the candidate rotated)");
  if (args.heads < 0) throw UsageError("--heads: expected an integer >= 1 (or 0: from the sizes), got " + std::to_string(args.heads));
  check_report_paths({args.reports.json, args.reports.junit, args.reports.html}, {args.candidate, args.input, args.positions});
  const judge::Settings settings = settings_of(args.judge);
  if (!settings.skip_flags.empty()) throw UsageError("--skip-flags: golden flags do not apply to check --spec");
  const Spec& spec = *args.spec;
  const int components = position_components(spec);
  // The counts first, from what is known before any position is read (a range, a .npy header).
  const std::optional<std::int64_t> known_tokens = positions_option_tokens(args.positions, components);
  runner::TensorSource input(args.input, "input");
  runner::TensorSource output(args.candidate, "output");
  const auto head_dim = static_cast<std::uint64_t>(spec.head_dim);
  std::uint64_t heads = 0, token_size = 0, elements = 0;
  const auto check_sizes = [&](std::uint64_t tokens) {
    if (tokens == 0) throw UsageError("--positions: expected at least one token");
    // Any shape with the right count is read row-major as [tokens, heads, head_dim]; HF's
    // [batch, heads, tokens, head_dim] has it too, in another order: refused, naming the transpose.
    for (const auto& [path, source] : {std::pair{&args.input, &input}, std::pair{&args.candidate, &output}}) {
      const std::string message = heads_before_tokens(source->shape(), static_cast<std::int64_t>(tokens), spec.head_dim, *path);
      if (!message.empty()) throw InputError(message);
    }
    heads = static_cast<std::uint64_t>(std::max<std::int64_t>(args.heads, 0));
    if (heads == 0) heads = input.elements() / tokens / head_dim;
    if (heads == 0 || __builtin_mul_overflow(heads, head_dim, &token_size) || __builtin_mul_overflow(token_size, tokens, &elements) ||
        elements != input.elements()) {
      throw InputError(args.input + ": shape: expected tokens x heads x head_dim values (tokens " + std::to_string(tokens) +
                       " from --positions, head_dim " + std::to_string(head_dim) +
                       (args.heads ? ", heads " + std::to_string(args.heads) : std::string()) + "), got " +
                       std::to_string(input.elements()));
    }
    if (output.elements() != elements) {
      throw InputError(args.candidate + ": shape: expected " + std::to_string(elements) + " values (as many as " + args.input + "), got " +
                       std::to_string(output.elements()));
    }
  };
  if (known_tokens) check_sizes(static_cast<std::uint64_t>(*known_tokens));
  const std::vector<std::int64_t> positions = parse_positions_option(args.positions, components);
  const auto tokens = static_cast<std::uint64_t>(positions.size() / static_cast<std::size_t>(components));
  check_sizes(tokens);
  Report report;
  report.command = "check";
  report.model = settings.claims.model;
  report.implementation = "candidate file " + args.candidate;
  report.candidate = args.candidate;
  report.scope = scope_of(settings, 0, 0);
  report.worst_listed = settings.worst_cases;
  report.notes.push_back("direct check: " + std::to_string(tokens) + " tokens x " + std::to_string(heads) + " heads of " + to_string(spec) +
                         " from " + args.input + ", positions " + args.positions);
  Progress progress(static_cast<std::int64_t>(tokens));
  report.groups.push_back(runner::judge_tensor_sources(spec, heads, positions, input, output, settings, args.candidate,
                                                       [&](std::int64_t done) { progress.update(done, "tokens"); }));
  if (const std::string note = rounded_inputs_note(report.groups.back()); !note.empty()) report.notes.push_back(note);
  return finish(report, args.reports, {args.input, args.candidate, args.positions});
}

// `text` as one shell word: as is when it has only characters no shell treats specially, else in
// single quotes (POSIX sh: nothing inside is special; a ' is written '\'').
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./=,:+-@%").find(c) != std::string_view::npos;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The `run` command that replays one identity of `run --props`: the same implementation, claim,
// child limits, cases and seed (RapidCheck's same cases and shrinks), that identity alone. Options
// left at their defaults are left out.
std::string replay_command(const RunArguments& args, const std::string& identity) {
  const RunArguments defaults;
  std::string command = "ropecheck run";
  if (!args.plugin.empty()) command += " --plugin " + shell_word(args.plugin);
  if (!args.implementation.empty()) command += " --impl " + shell_word(args.implementation);
  if (args.judge.model != defaults.judge.model) command += " --model " + shell_word(args.judge.model);
  if (!args.judge.tolerance.empty()) command += " --tolerance " + shell_word(args.judge.tolerance);
  if (args.timeout != defaults.timeout) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.17g", args.timeout);
    command += " --timeout " + std::string(seconds);
  }
  if (args.memory_limit_mib != defaults.memory_limit_mib) command += " --memory-limit " + std::to_string(args.memory_limit_mib);
  command += " --props";
  if (args.props_cases != defaults.props_cases) command += " --props-cases " + std::to_string(args.props_cases);
  return command + " --seed " + std::to_string(args.seed) + " --property " + identity;
}

// --property: a catalog identity's name, and only with --props.
void check_property_option(const RunArguments& args) {
  if (args.property.empty()) return;
  if (!args.props) throw UsageError("--property: runs one identity of --props; expected --props too");
  if (proofs::find_identity(args.property)) return;
  std::string names;
  for (const proofs::Identity& identity : proofs::catalog()) names += (names.empty() ? "" : ", ") + std::string(identity.name);
  throw UsageError("--property: expected one of " + names + ", got '" + args.property + "'");
}

}  // namespace

int run_check(const CheckArguments& args) {
  if (args.spec) return run_direct_check(args);
  if (args.golden.empty()) throw UsageError("check: expected --golden FILE|FOLDER, or --spec with --positions and --input");
  check_report_paths({args.reports.json, args.reports.junit, args.reports.html}, {args.golden, args.candidate});
  const judge::Settings settings = settings_of(args.judge);  // every option checked before the work
  const runner::Claims& claims = settings.claims;
  const std::vector<runner::LoadedGolden> suites = runner::load_golden(args.golden, settings.threads);
  std::vector<const golden::GoldenFile*> files;
  for (const runner::LoadedGolden& g : suites) files.push_back(&g.file);
  const std::unique_ptr<runner::CandidateFile> candidate = runner::open_candidate_file(args.candidate, files, claims);
  Report report = judge_into_report(suites, *candidate, settings, "check");
  report.candidate = args.candidate;
  for (const std::string& note : candidate->notes()) report.notes.push_back(note);
  std::vector<std::string> inputs = report.golden_files;
  inputs.push_back(args.candidate);
  return finish(report, args.reports, inputs);
}

int run_implementation(const RunArguments& args) {
  if (args.implementation.empty() && args.plugin.empty()) throw UsageError("run: expected --impl NAME or --plugin PATH");
  check_property_option(args);
  check_report_paths({args.reports.json, args.reports.junit, args.reports.html}, {args.golden, args.plugin});
  const judge::Settings settings = settings_of(args.judge);
  runner::RegistryOptions registry;
  registry.claims = settings.claims;
  registry.timeout_seconds = args.timeout;
  registry.memory_limit_mib = args.memory_limit_mib;
  const std::unique_ptr<runner::Implementation> implementation = runner::make_implementation({args.implementation, args.plugin}, registry);
  const std::vector<runner::LoadedGolden> suites = runner::load_golden(args.golden, settings.threads);
  Report report = judge_into_report(suites, *implementation, settings, "run");
  report.candidate = args.plugin.empty() ? args.implementation : args.plugin;
  if (const auto* isolated = dynamic_cast<const runner::IsolatedImplementation*>(implementation.get())) {
    if (const runner::ApplyResult* e = isolated->start_error()) {
      report.notes.push_back(std::string(runner::kind_name(e->status)) + ": " + e->message);
    }
  }
  if (const std::optional<std::string> reason = implementation->stopped_reason()) report.notes.push_back("stopped: " + *reason);
  if (args.props) {
    proofs::RunOptions run_options;
    run_options.cases = args.props_cases;
    run_options.seed = args.seed;
    for (const proofs::Identity& identity : proofs::catalog()) {
      if (!args.property.empty() && identity.name != args.property) continue;
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
      if (!p.holds && !p.gave_up) p.replay = replay_command(args, p.name);
      report.properties.push_back(std::move(p));
    }
  }
  std::vector<std::string> inputs = report.golden_files;
  if (!args.plugin.empty()) inputs.push_back(args.plugin);
  return finish(report, args.reports, inputs);
}

}  // namespace ropecheck::gate
