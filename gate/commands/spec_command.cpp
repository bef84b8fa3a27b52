// `ropecheck spec`: the canonical spec of a spec text or of a transformers config.json.
#include "gate/commands/command.h"
#include "gate/commands/spec_options.h"

#include <cstdio>

namespace ropecheck::gate {

void add_spec_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand(
      "spec", "Print the canonical spec of --spec TEXT or of --hf-config config.json [--seq-len N] (--json: its JSON form)");
  struct Args {
    SpecOptions spec;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  add_spec_options(cmd, args->spec, SpecCount::one);
  cmd->add_flag("--json", args->json, "Print the JSON form (as golden files store it) instead of key=value");
  cmd->callback([args, &status] {
    const Spec spec = resolve_spec(args->spec);
    std::printf("%s\n", (args->json ? to_json(spec) : to_string(spec)).c_str());
    status = 0;
  });
}

}  // namespace ropecheck::gate
