// How a command names its spec: `--spec TEXT` (spec/README.md) or `--hf-config FILE` (a
// transformers config.json, mapped by hfconfig/) with `--seq-len N` for the rope types that need a
// sequence length. Every command that takes a spec uses these two functions, so the options read
// and fail alike everywhere:
//
//   SpecOptions spec_options;                         // in the command's argument struct
//   add_spec_options(cmd, spec_options, SpecCount::one);
//   ... in the callback: const Spec spec = resolve_spec(spec_options);
//
// Errors: a bad spec text or config throws SpecError (one line naming the field; the config's
// naming the file too), an unreadable file InputError, a wrong number of specs UsageError — all
// exit 2 in gate/main.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "spec/spec.h"

namespace ropecheck::gate {

struct SpecOptions {
  std::vector<std::string> specs;       // --spec, in the order given
  std::vector<std::string> hf_configs;  // --hf-config, in the order given
  std::int64_t seq_len = 0;             // --seq-len; 0: not given
};

// one: the command judges one spec (given by --spec or --hf-config; resolve_spec refuses two by
// name, resolve_optional_spec also takes none);
// any: --spec and --hf-config may repeat, and none at all is allowed (fuzz: it has defaults).
enum class SpecCount { one, any };

void add_spec_options(CLI::App* cmd, SpecOptions& options, SpecCount count);

// Every spec named: the --spec texts first, then the --hf-config files, each validated.
std::vector<Spec> resolve_specs(const SpecOptions& options);

// The one spec named (UsageError unless exactly one of --spec / --hf-config was given once).
Spec resolve_spec(const SpecOptions& options);

// For a command where a spec is optional and switches it to another mode (check, golden generate):
// the spec when one is named; else none, and each of `dependents` (the options of that mode) and
// --seq-len given alone is a UsageError naming it and `mode`.
std::optional<Spec> resolve_optional_spec(const SpecOptions& options, const std::vector<CLI::Option*>& dependents,
                                          const std::string& mode);

}  // namespace ropecheck::gate
