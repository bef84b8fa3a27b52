// `ropecheck check`: judges a candidate's outputs for the golden inputs (a .npz, .npy, safetensors or
// JSON file, tensors named SUITE/ID/output) against the golden expectations; gate/README.md.
#include <memory>

#include "gate/commands/command.h"
#include "gate/compare.h"
#include "gate/golden_set.h"
#include "gate/readers/tensors.h"
#include "gate/report.h"

namespace ropecheck::gate {

void add_check_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand("check", "Judge a candidate's outputs for the golden inputs: verdict, horizon, reports");
  struct Args {
    std::string golden, candidate, model = "exact", tolerance, json, junit, html;
    bool allow_missing = false;
    int worst = 10;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--golden", args->golden, "Golden suite file, or a folder of them")->required();
  cmd->add_option("--candidate", args->candidate,
                  "Candidate outputs: .npz/.npy/safetensors/JSON with tensors named SUITE/ID/output (gate/README.md)")
      ->required();
  cmd->add_option("--model", args->model, "Rounding model the candidate claims: exact | f32-recipe")
      ->check(CLI::IsMember({"exact", "f32-recipe"}));
  cmd->add_option("--tolerance", args->tolerance, "Override the default bound: e=NUMBER (u*rho units) or ulp=NUMBER");
  cmd->add_option("--json", args->json, "Write the JSON report (gate/schema/report.schema.json) here");
  cmd->add_option("--junit", args->junit, "Write a JUnit XML file (one testcase per group) here");
  cmd->add_option("--html", args->html, "Write a self-contained HTML report here");
  cmd->add_flag("--allow-missing", args->allow_missing, "Skip tests the candidate has no output for (default: they fail)");
  cmd->add_option("--worst", args->worst, "Worst cases listed per group")->check(CLI::Range(1, 1000));
  cmd->callback([args, &status] {
    CompareOptions options;
    options.model = args->model == "exact" ? Model::exact : Model::f32_recipe;
    if (!args->tolerance.empty()) options.tolerance = parse_tolerance(args->tolerance);
    options.worst_cases = args->worst;
    const std::vector<LoadedGolden> suites = load_golden(args->golden);
    TensorMap candidate;
    try {
      const std::string bytes = read_file_bytes(args->candidate);
      candidate = parse_candidate(bytes, args->candidate);
    } catch (const ReaderError& e) {
      throw InputError(e.what());
    }

    Report report;
    report.command = "check";
    report.candidate = args->candidate;
    report.model = options.model;
    const auto meta = candidate.find("implementation");
    report.implementation = meta != candidate.end() && meta->second.dtype == "U" ? meta->second.text + " (" + args->candidate + ")"
                                                                                 : "candidate file " + args->candidate;
    // A lone .npy holds every output concatenated in golden order (suites as loaded, tests in file order).
    const auto lone = candidate.find("");
    std::size_t cursor = 0;
    std::int64_t total = 0;
    for (const LoadedGolden& g : suites) total += g.file.number_of_tests;
    Progress progress(total);
    std::int64_t done = 0;
    for (const LoadedGolden& loaded : suites) {
      report.golden_files.push_back(loaded.path);
      const golden::GoldenFile& file = loaded.file;
      if (file.kind != golden::Kind::rope) {
        report.notes.push_back("suite " + file.suite + " (" + std::string(golden::name(file.kind)) +
                               " tests) is not judged by check: only RoPE suites are");
        continue;
      }
      for (std::size_t gi = 0; gi < file.groups.size(); ++gi) {
        GroupComparer comparer(file.suite, static_cast<int>(gi), file.groups[gi], options);
        for (const golden::RopeTest& test : file.groups[gi].rope_tests) {
          progress.update(++done, file.suite);
          const std::size_t elements = static_cast<std::size_t>(test.tokens * test.heads * test.head_dim);
          if (lone != candidate.end()) {
            const auto& values = lone->second.values;
            if (values.size() - std::min(values.size(), cursor) < elements) {
              comparer.fail(test, "missing", args->candidate + " ends before this test's outputs (offset " +
                                                 std::to_string(cursor) + ")");
            } else {
              comparer.add(test, std::span<const double>(values.data() + cursor, elements));
            }
            cursor += elements;
            continue;
          }
          const std::string key = tensor_name(file.suite, test.id, "output");
          const auto it = candidate.find(key);
          if (it == candidate.end()) {
            if (args->allow_missing) {
              comparer.skip(test, "no output " + key + " in the candidate");
            } else {
              comparer.fail(test, "missing", "no tensor " + key + " in " + args->candidate);
            }
          } else if (it->second.dtype == "U") {
            comparer.fail(test, "shape", key + " is text, expected numbers");
          } else {
            comparer.add(test, it->second.values);
          }
        }
        report.groups.push_back(comparer.finish());
      }
    }
    if (lone != candidate.end() && cursor < lone->second.values.size()) {
      report.notes.push_back(args->candidate + " holds " + std::to_string(lone->second.values.size() - cursor) +
                             " values beyond the golden tests' outputs");
    }
    report.decide();
    std::vector<std::string> inputs = report.golden_files;
    inputs.push_back(args->candidate);
    emit_reports(report, args->json, args->junit, args->html, inputs);
    status = report.verdict == "pass" ? 0 : 1;
  });
}

}  // namespace ropecheck::gate
