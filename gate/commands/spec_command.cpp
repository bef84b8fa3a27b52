// `ropecheck spec`: the canonical spec of a spec text, or every rotation of a transformers
// config.json. A config whose layers all rotate alike prints its one spec, as a spec text does; a
// config whose layers differ (hfconfig ModelRotations) prints one line per rotation:
//
//   KIND    layers LIST (COUNT of NUM_LAYERS)  SPEC       (SPEC: "no rotation" for NoPE layers)
//
// KIND is what `--layer KIND` names, LIST the 0-based layers as ascending ranges ("0-4,6-10,12"),
// and SPEC last on the line, whole, so that it can be copied into --spec. `--layer N|KIND` prints
// the one spec it picks instead. What the mapping assumed goes to stderr ("FILE: note: TEXT"); the
// --json form of several rotations carries it as "notes".
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/commands/command.h"
#include "gate/commands/spec_options.h"

namespace ropecheck::gate {
namespace {

std::string rotation_line(const hfconfig::LayerRotation& r, std::int64_t num_layers) {
  std::string kind(hfconfig::layer_kind_name(r.kind));
  kind.resize(std::max<std::size_t>(kind.size(), 6), ' ');
  std::string count = std::to_string(r.layers.size());
  if (num_layers > 0) count += " of " + std::to_string(num_layers);
  const std::string layers = r.layers.empty() ? "layers not listed" : "layers " + hfconfig::layer_ranges(r.layers) + " (" + count + ")";
  return kind + "  " + layers + "  " + (r.spec ? to_string(*r.spec) : std::string("no rotation"));
}

// The JSON form of several rotations: {"model_type", "source" (the model code read),
// "num_layers", "rotations": [{"kind", "layers", "spec": the spec's JSON form, or null for NoPE
// layers}], "notes"}.
std::string rotations_json(const hfconfig::ModelRotations& m) {
  nlohmann::ordered_json out;
  out["model_type"] = m.model_type;
  out["source"] = m.source;
  out["num_layers"] = m.num_layers;
  out["rotations"] = nlohmann::ordered_json::array();
  for (const hfconfig::LayerRotation& r : m.rotations) {
    nlohmann::ordered_json row;
    row["kind"] = std::string(hfconfig::layer_kind_name(r.kind));
    row["layers"] = r.layers;
    row["spec"] = r.spec ? nlohmann::ordered_json::parse(to_json(*r.spec)) : nlohmann::ordered_json(nullptr);
    out["rotations"].push_back(std::move(row));
  }
  out["notes"] = m.notes;
  return out.dump();
}

// `spec --hf-config FILE` without --layer: the one spec, or every rotation.
void print_config_rotations(const SpecOptions& options, bool json) {
  const std::string& path = options.hf_configs.front();
  const hfconfig::ModelRotations m = hfconfig::rotations_from_hf_config(read_hf_config(path), seq_len_of(options), path);
  const bool one = m.rotations.size() == 1 && m.rotations.front().kind == hfconfig::LayerKind::kAll && m.rotations.front().spec;
  if (one) {
    const Spec& spec = *m.rotations.front().spec;
    std::printf("%s\n", (json ? to_json(spec) : to_string(spec)).c_str());
    print_notes(path, m.notes);
    return;
  }
  if (json) {
    std::printf("%s\n", rotations_json(m).c_str());
    return;
  }
  for (const hfconfig::LayerRotation& r : m.rotations) std::printf("%s\n", rotation_line(r, m.num_layers).c_str());
  print_notes(path, m.notes);
}

}  // namespace

void add_spec_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand("spec",
                                  "Print the canonical spec of --spec TEXT, or every rotation of --hf-config config.json [--seq-len N] "
                                  "(one line per kind of layer; --layer N|all|global|local: the one it picks; --json: the JSON form)");
  struct Args {
    SpecOptions spec;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  add_spec_options(cmd, args->spec, SpecCount::one);
  cmd->add_flag("--json", args->json, "Print the JSON form (as golden files store it) instead of key=value");
  cmd->callback([args, &status] {
    const SpecOptions& options = args->spec;
    if (options.specs.empty() && options.hf_configs.size() == 1 && options.layer.empty()) {
      print_config_rotations(options, args->json);
    } else {
      const Spec spec = resolve_spec(options);
      std::printf("%s\n", (args->json ? to_json(spec) : to_string(spec)).c_str());
    }
    status = 0;
  });
}

}  // namespace ropecheck::gate
