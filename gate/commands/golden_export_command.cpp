// `ropecheck golden export`: writes the golden inputs and positions as .npz or safetensors, in the
// layout `ropecheck check` reads candidates back in (gate/README.md "File layout"):
//   SUITE/ID/input      [tokens, heads, head_dim] in the spec's dtype (npz: bfloat16 as float32)
//   SUITE/ID/positions  int64 [tokens] (single-axis) or [tokens, components] (2d, mrope)
//   SUITE/ID/spec       the canonical spec text (npz: a 0-d unicode array; safetensors: __metadata__)
//   format              "ropecheck-export/1"
// A candidate writes SUITE/ID/output with the input's shape. Attention suites export instead
//   SUITE/ID/q, k, v    [q_tokens|k_tokens, heads, head_dim|v_dim] in the spec's dtype
//   SUITE/ID/q_positions, k_positions   int64 [tokens] or [tokens, components]
//   SUITE/ID/causal     int64, 0-d: 1 when the causal mask applies
//   SUITE/ID/spec       as above
// and a candidate writes SUITE/ID/scores [heads, q_tokens, k_tokens] and SUITE/ID/outputs
// [q_tokens, heads, v_dim].
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "gate/commands/command.h"
#include "runner/golden_run.h"
#include "gate/report.h"
#include "tensorio/writers.h"

namespace ropecheck::gate {

using runner::load_golden;
using runner::LoadedGolden;
using runner::tensor_name;
using tensorio::OutTensor;
namespace {

// int64 [tokens] (single-axis) or [tokens, components] (2d, mrope).
OutTensor positions_tensor(std::string name, const std::vector<std::int64_t>& positions, std::int64_t tokens, int components) {
  OutTensor t{std::move(name), "I64", {tokens}, {}, {}};
  if (components > 1) t.shape.push_back(components);
  for (std::int64_t p : positions) t.values.push_back(static_cast<double>(p));
  return t;
}

}  // namespace

void add_golden_export_command(CLI::App& golden, int& status) {
  CLI::App* cmd = golden.add_subcommand("export", "Write golden inputs and positions (RoPE and attention suites) as .npz or safetensors for a candidate to run on");
  struct Args {
    std::string golden, format, out;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--golden", args->golden, "Golden suite file, or a folder of them")->required();
  cmd->add_option("--format", args->format, "npz | safetensors")->required()->check(CLI::IsMember({"npz", "safetensors"}));
  cmd->add_option("--out", args->out, "File to write (a new one, unless --force)")->required();
  cmd->add_flag("--force", args->force, "Replace an existing file");
  cmd->callback([args, &status] {
    std::vector<std::string> inputs = {args->golden};  // the folder too: a *.json there is read as a suite
    const std::vector<LoadedGolden> suites = load_golden(args->golden);
    // As `golden generate`: an existing file is replaced only when asked, refused before the export.
    struct stat st {};
    if (!args->force && ::lstat(args->out.c_str(), &st) == 0) {
      throw UsageError(args->out + ": expected a new file, got an existing one (use --force to replace it)");
    }
    check_report_paths({args->out}, inputs);
    std::vector<OutTensor> tensors;
    tensors.push_back({"format", "U", {}, {}, "ropecheck-export/1"});
    std::int64_t exported = 0;
    std::optional<std::string> first_rope_test, first_attention_test;  // the key the message shows
    for (const LoadedGolden& loaded : suites) {
      inputs.push_back(loaded.path);
      const golden::GoldenFile& file = loaded.file;
      if (file.kind == golden::Kind::attention) {
        for (const golden::Group& group : file.groups) {
          const std::string dtype = tensorio::storage_dtype(group.spec.dtype);
          const int components = position_components(group.spec);
          for (const golden::AttentionTest& test : group.attention_tests) {
            auto name = [&](const char* what) { return tensor_name(file.suite, test.id, what); };
            tensors.push_back({name("q"), dtype, {test.q_tokens, test.heads, test.head_dim}, test.q, {}});
            tensors.push_back({name("k"), dtype, {test.k_tokens, test.heads, test.head_dim}, test.k, {}});
            tensors.push_back({name("v"), dtype, {test.k_tokens, test.heads, test.v_dim}, test.v, {}});
            tensors.push_back(positions_tensor(name("q_positions"), test.q_positions, test.q_tokens, components));
            tensors.push_back(positions_tensor(name("k_positions"), test.k_positions, test.k_tokens, components));
            tensors.push_back({name("causal"), "I64", {}, {test.causal ? 1.0 : 0.0}, {}});
            tensors.push_back({name("spec"), "U", {}, {}, to_string(group.spec)});
            if (!first_attention_test) first_attention_test = name("scores");
            ++exported;
          }
        }
        continue;
      }
      if (!file.sidecar.empty()) {
        // Its sidecar already is the export: SUITE/ID/input and SUITE/ID/positions, as written here.
        throw UsageError(loaded.path + ": golden export: expected a suite without a sidecar; this one's inputs and positions are "
                         "already in " + file.sidecar_path + " (tensors " + file.suite + "/ID/input, " + file.suite +
                         "/ID/positions): run your implementation on those");
      }
      for (const golden::Group& group : file.groups) {
        const std::string dtype = tensorio::storage_dtype(input_dtype_of(group.spec));  // the inputs' own dtype (GPT-J: f16)
        const int components = position_components(group.spec);
        for (const golden::RopeTest& test : group.rope_tests) {
          OutTensor input{tensor_name(file.suite, test.id, "input"), dtype, {test.tokens, test.heads, test.head_dim}, test.input, {}};
          tensors.push_back(std::move(input));
          tensors.push_back(positions_tensor(tensor_name(file.suite, test.id, "positions"), test.positions, test.tokens, components));
          tensors.push_back({tensor_name(file.suite, test.id, "spec"), "U", {}, {}, to_string(group.spec)});
          if (!first_rope_test) first_rope_test = tensor_name(file.suite, test.id, "output");
          ++exported;
        }
      }
    }
    const std::string bytes = args->format == "npz" ? tensorio::encode_npz(tensors) : tensorio::encode_safetensors(tensors);
    write_atomically(args->out, bytes, inputs);
    std::fprintf(stderr, "ropecheck: exported %lld tests to %s\n", static_cast<long long>(exported), args->out.c_str());
    // What `check --candidate` reads back (gate/README.md "File layout"): one tensor per test,
    // named as its input is, in the input's shape.
    if (first_rope_test) {
      std::fprintf(stderr,
                   "ropecheck: for each SUITE/ID/input (with SUITE/ID/positions and SUITE/ID/spec), write your rotated "
                   "tensor as SUITE/ID/output, same shape [tokens, heads, head_dim], in one .npz or .safetensors file "
                   "(e.g. %s); then: ropecheck check --golden %s --candidate FILE\n",
                   first_rope_test->c_str(), args->golden.c_str());
    }
    if (first_attention_test) {
      std::fprintf(stderr,
                   "ropecheck: for attention tests (SUITE/ID/q, k, v, q_positions, k_positions), write SUITE/ID/scores "
                   "[heads, q_tokens, k_tokens] and/or SUITE/ID/outputs [q_tokens, heads, v_dim] (e.g. %s)\n",
                   first_attention_test->c_str());
    }
    status = 0;
  });
}

}  // namespace ropecheck::gate
