// `ropecheck check`: judges a candidate's outputs for the golden inputs (a .npz, .npy, safetensors or
// JSON file, tensors named SUITE/ID/output; for attention suites SUITE/ID/scores and
// SUITE/ID/outputs) against the golden expectations; gate/README.md.
#include <memory>

#include "gate/commands/command.h"
#include "gate/compare.h"
#include "gate/golden_set.h"
#include "gate/readers/tensors.h"
#include "gate/report.h"

namespace ropecheck::gate {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<std::int64_t> without_ones(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> out;
  for (std::int64_t n : shape) {
    if (n != 1) out.push_back(n);
  }
  return out;
}

// The values of attention tensor `key` when the candidate has it, else null. Its shape must be
// `expected` up to size-1 dimensions (which leave the row-major order unchanged: a batch of 1, a
// squeezed head), or 1-D with as many values; anything else is an input error (exit 2), since a
// transposed tensor would be judged element by element against the wrong values.
const std::vector<double>* attention_tensor(const TensorMap& candidate, const std::string& key,
                                            const std::vector<std::int64_t>& expected, const char* dims,
                                            const std::string& file) {
  const auto it = candidate.find(key);
  if (it == candidate.end()) return nullptr;
  const Tensor& t = it->second;
  if (t.dtype == "U") throw InputError(file + ": " + key + ": expected numbers of shape " + shape_text(expected) + " " + dims + ", got text");
  std::int64_t count = 1;
  for (std::int64_t n : expected) count *= n;
  const bool flat = t.shape.size() == 1 && t.shape[0] == count;
  if ((!flat && without_ones(t.shape) != without_ones(expected)) || static_cast<std::int64_t>(t.values.size()) != count) {
    throw InputError(file + ": " + key + ": expected shape " + shape_text(expected) + " " + dims + ", got " + shape_text(t.shape));
  }
  return &t.values;
}

}  // namespace

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
                  "Candidate outputs: .npz/.npy/safetensors/JSON with tensors named SUITE/ID/output, or SUITE/ID/scores and "
                  "SUITE/ID/outputs for attention suites (gate/README.md)")
      ->required();
  cmd->add_option("--model", args->model, "Rounding model the candidate claims: exact | f32-recipe")
      ->check(CLI::IsMember({"exact", "f32-recipe"}));
  cmd->add_option("--tolerance", args->tolerance,
                  "Override the default bounds, comma-separated: e=NUMBER (u*rho units) or ulp=NUMBER for RoPE suites; "
                  "attention_scores=NUMBER, attention_outputs=NUMBER for attention suites");
  cmd->add_option("--json", args->json, "Write the JSON report (gate/schema/report.schema.json) here");
  cmd->add_option("--junit", args->junit, "Write a JUnit XML file (one testcase per group) here");
  cmd->add_option("--html", args->html, "Write a self-contained HTML report here");
  cmd->add_flag("--allow-missing", args->allow_missing, "Skip tests the candidate has no output for (default: they fail)");
  cmd->add_option("--worst", args->worst, "Worst cases listed per group")->check(CLI::Range(1, 1000));
  cmd->callback([args, &status] {
    check_report_paths({args->json, args->junit, args->html}, {args->golden, args->candidate});
    CompareOptions options;
    options.model = args->model == "exact" ? Model::exact : Model::f32_recipe;
    if (!args->tolerance.empty()) {
      const ToleranceOverrides overrides = parse_tolerances(args->tolerance);
      options.tolerance = overrides.rope;
      options.attention_scores = overrides.attention_scores;
      options.attention_outputs = overrides.attention_outputs;
    }
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
      if (file.kind == golden::Kind::attention) {
        for (std::size_t gi = 0; gi < file.groups.size(); ++gi) {
          AttentionComparer comparer(file.suite, static_cast<int>(gi), file.groups[gi], options);
          for (const golden::AttentionTest& test : file.groups[gi].attention_tests) {
            progress.update(++done, file.suite);
            if (options.model != Model::exact) {
              comparer.skip(test, "attention tests carry no f32-recipe expectations: judged under --model exact only");
              continue;
            }
            const std::string scores_key = tensor_name(file.suite, test.id, "scores");
            const std::string outputs_key = tensor_name(file.suite, test.id, "outputs");
            const std::vector<double>* scores =
                attention_tensor(candidate, scores_key, {test.heads, test.q_tokens, test.k_tokens}, "(heads, q_tokens, k_tokens)",
                                 args->candidate);
            const std::vector<double>* outputs =
                attention_tensor(candidate, outputs_key, {test.q_tokens, test.heads, test.v_dim}, "(q_tokens, heads, v_dim)",
                                 args->candidate);
            if (!scores && !outputs) {
              const std::string what = lone != candidate.end() ? " (a lone .npy holds RoPE outputs only)" : "";
              if (args->allow_missing) {
                comparer.skip(test, "no " + scores_key + " nor " + outputs_key + " in the candidate" + what);
              } else {
                comparer.fail(test, "missing", "no tensor " + scores_key + " nor " + outputs_key + " in " + args->candidate + what);
              }
              continue;
            }
            std::vector<std::string> missing;
            if (!args->allow_missing) {
              if (!scores) missing.push_back("no tensor " + scores_key + " in " + args->candidate);
              if (!outputs) missing.push_back("no tensor " + outputs_key + " in " + args->candidate);
            }
            comparer.add(test, scores, outputs, missing);
          }
          report.groups.push_back(comparer.finish());
        }
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
              const std::string why = args->candidate + " ends before this test's outputs (offset " + std::to_string(cursor) + ")";
              if (args->allow_missing) {
                comparer.skip(test, why);
              } else {
                comparer.fail(test, "missing", why);
              }
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
