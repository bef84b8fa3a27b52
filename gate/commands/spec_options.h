// How a command names its spec: `--spec TEXT` (spec/README.md) or `--hf-config FILE` (a
// transformers config.json, mapped by hfconfig/) with `--seq-len N` for the rope types that need a
// sequence length and `--layer N|all|global|local` for a model whose layers rotate differently (the
// same selection for every --hf-config named). Every command that takes a spec uses these
// functions, so the options read and fail alike everywhere:
//
//   SpecOptions spec_options;                         // in the command's argument struct
//   add_spec_options(cmd, spec_options, SpecCount::one);
//   ... in the callback: const Spec spec = resolve_spec(spec_options);
//
// Errors: a bad spec text or config throws SpecError (one line naming the field; the config's
// naming the file too; a model with several rotations and no --layer, naming the choices), an
// unreadable file InputError, a wrong number of specs or --layer without --hf-config UsageError —
// all exit 2 in gate/main.cpp. What a config's mapping assumed (hfconfig ModelRotations::notes)
// goes to stderr as "FILE: note: TEXT" lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hfconfig/hfconfig.h"
#include "spec/spec.h"

namespace ropecheck::gate {

struct SpecOptions {
  std::vector<std::string> specs;       // --spec, in the order given
  std::vector<std::string> hf_configs;  // --hf-config, in the order given
  std::int64_t seq_len = 0;             // --seq-len; 0: not given
  std::string layer;                    // --layer N|all|global|local; "": not given
};

// one: the command judges one spec (given by --spec or --hf-config; resolve_spec refuses two by
// name, resolve_optional_spec also takes none);
// any: --spec and --hf-config may repeat, and none at all is allowed (fuzz: it has defaults).
enum class SpecCount { one, any };

void add_spec_options(CLI::App* cmd, SpecOptions& options, SpecCount count);

// Every spec named: the --spec texts first, then the --hf-config files, each validated.
std::vector<Spec> resolve_specs(const SpecOptions& options);

// A config.json's bytes, read as --hf-config reads it (InputError naming the option and file).
std::string read_hf_config(const std::string& path);

// --seq-len as the hfconfig functions take it (none when not given).
std::optional<std::int64_t> seq_len_of(const SpecOptions& options);

// The rotation --layer picks: an index N >= 0 or a kind, all|global|local (hfconfig LayerKind;
// UsageError for anything else, `nope` included: NoPE layers rotate nothing, no spec to judge).
hfconfig::LayerSelector layer_selector(const SpecOptions& options);

// Each line of `notes` to stderr as "FILE: note: TEXT".
void print_notes(const std::string& file, const std::vector<std::string>& notes);

// The one spec named (UsageError unless exactly one of --spec / --hf-config was given once).
Spec resolve_spec(const SpecOptions& options);

// For a command where a spec is optional and switches it to another mode (check, golden generate):
// the spec when one is named; else none, and each of `dependents` (the options of that mode) and
// --seq-len given alone is a UsageError naming it and `mode`.
std::optional<Spec> resolve_optional_spec(const SpecOptions& options, const std::vector<CLI::Option*>& dependents, const std::string& mode);

}  // namespace ropecheck::gate
