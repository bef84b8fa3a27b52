// The one registry of implementation names, for every command's `--impl NAME` / `--plugin PATH`:
//   scalar, avx2, avx512, avx512bf16, cuda, auto   the project's kernels (in process; claim their proven bounds)
//   reference                          the exact reference correctly rounded to the dtype (e ≤ 1)
//   reference-exact                    its unrounded outputs at --precision bits (the identity catalog
//                                      reports agreement in bits); run() gives the rounded ones
//   reference-f32-recipe               the float32 recipe (reference/rope.h), correctly rounded
//   --plugin PATH [--impl NAME]        a plugin in a child process (NAME passed to it, default auto)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runner/implementation.h"
#include "runner/isolation.h"

namespace ropecheck::runner {

struct Selection {
  std::string implementation;  // --impl (empty: "auto" with a plugin, else required)
  std::string plugin;          // --plugin
};

struct RegistryOptions {
  Claims claims;
  double timeout_seconds = 10;  // per plugin call
  std::int64_t memory_limit_mib = kDefaultMemoryLimitMiB;  // a plugin's child process (runner/isolation.h); 0: none
  int precision_bits = 256;     // of the reference variants
  int kernel_threads = 1;       // ropecheck_call.threads of in-process kernels (0: all cores)
  bool isolate_kernels = false; // run the project's kernels in a child process too
};

// Throws UsageError (one line) for an unknown name, a kernel that does not run on this machine, or
// a plugin path that is not a regular file. A plugin that cannot be loaded is made (each call then
// fails with its load error): `run` reports that as the tests' failures.
std::unique_ptr<Implementation> make_implementation(const Selection& selection, const RegistryOptions& options);

struct RegistryEntry {
  std::string name;
  std::string description;
  bool available = true;  // false: a project kernel this machine cannot run
};
std::vector<RegistryEntry> implementation_names();

}  // namespace ropecheck::runner
