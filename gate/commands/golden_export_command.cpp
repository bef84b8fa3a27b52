// `ropecheck golden export`: writes the golden inputs and positions as .npz or safetensors, in the
// layout `ropecheck check` reads candidates back in (gate/README.md "File layout"):
//   SUITE/ID/input      [tokens, heads, head_dim] in the spec's dtype (npz: bfloat16 as float32)
//   SUITE/ID/positions  int64 [tokens] (single-axis) or [tokens, components] (2d, mrope)
//   SUITE/ID/spec       the canonical spec text (npz: a 0-d unicode array; safetensors: __metadata__)
//   format              "ropecheck-export/1"
// A candidate writes SUITE/ID/output with the input's shape.
#include <cstdio>
#include <memory>

#include "gate/commands/command.h"
#include "gate/golden_set.h"
#include "gate/report.h"
#include "gate/writers/tensor_writer.h"

namespace ropecheck::gate {

void add_golden_export_command(CLI::App& golden, int& status) {
  CLI::App* cmd = golden.add_subcommand("export", "Write golden inputs and positions as .npz or safetensors for a candidate to run on");
  struct Args {
    std::string golden, format, out;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--golden", args->golden, "Golden suite file, or a folder of them")->required();
  cmd->add_option("--format", args->format, "npz | safetensors")->required()->check(CLI::IsMember({"npz", "safetensors"}));
  cmd->add_option("--out", args->out, "File to write")->required();
  cmd->callback([args, &status] {
    const std::vector<LoadedGolden> suites = load_golden(args->golden);
    std::vector<OutTensor> tensors;
    tensors.push_back({"format", "U", {}, {}, "ropecheck-export/1"});
    std::vector<std::string> inputs;
    std::int64_t exported = 0;
    for (const LoadedGolden& loaded : suites) {
      inputs.push_back(loaded.path);
      const golden::GoldenFile& file = loaded.file;
      if (file.kind != golden::Kind::rope) {
        std::fprintf(stderr, "ropecheck: note: suite %s (%s tests) not exported: only RoPE suites are\n", file.suite.c_str(),
                     std::string(golden::name(file.kind)).c_str());
        continue;
      }
      for (const golden::Group& group : file.groups) {
        const std::string dtype = group.spec.dtype == Dtype::f64   ? "F64"
                                  : group.spec.dtype == Dtype::f32 ? "F32"
                                  : group.spec.dtype == Dtype::f16 ? "F16"
                                                                   : "BF16";
        const int components = position_components(group.spec);
        for (const golden::RopeTest& test : group.rope_tests) {
          OutTensor input{tensor_name(file.suite, test.id, "input"), dtype, {test.tokens, test.heads, test.head_dim}, test.input, {}};
          OutTensor positions{tensor_name(file.suite, test.id, "positions"), "I64", {test.tokens}, {}, {}};
          if (components > 1) positions.shape.push_back(components);
          for (std::int64_t p : test.positions) positions.values.push_back(static_cast<double>(p));
          tensors.push_back(std::move(input));
          tensors.push_back(std::move(positions));
          tensors.push_back({tensor_name(file.suite, test.id, "spec"), "U", {}, {}, to_string(group.spec)});
          ++exported;
        }
      }
    }
    const std::string bytes = args->format == "npz" ? encode_npz(tensors) : encode_safetensors(tensors);
    write_atomically(args->out, bytes, inputs);
    std::fprintf(stderr, "ropecheck: exported %lld tests to %s\n", static_cast<long long>(exported), args->out.c_str());
    status = 0;
  });
}

}  // namespace ropecheck::gate
