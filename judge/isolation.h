// Runs an implementation under test in a child process (DESIGN.md "Plugin C ABI"): the child is
// forked once, loads the plugin there (dlopen), and serves apply requests through two pipes; a
// crash, an abort, a hang (per-call timeout, then SIGKILL) or an ABI version mismatch becomes that
// call's failure and the next call starts a fresh child. The gate itself never runs plugin code.
//
// Out-of-bounds writes: the output buffer is surrounded by guard bytes (judge/abi_call.h); a kernel
// that writes past its output is reported as failing the call.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <chrono>
#include <string>
#include <vector>

#include "judge/implementation.h"
#include "reference/rope.h"
#include "spec/spec.h"

namespace ropecheck::judge {

enum class Source {
  library,  // the project's kernels (target ropecheck_kernels, linked in)
  plugin,   // a shared library exporting include/ropecheck/kernel.h's entry points
};

class IsolatedKernel {
 public:
  // `plugin_path` for Source::plugin; `implementation` is the name passed to
  // ropecheck_kernel_apply ("auto", "scalar", ...). `timeout_seconds` bounds each call.
  IsolatedKernel(Source source, std::string plugin_path, std::string implementation, double timeout_seconds);
  ~IsolatedKernel();
  IsolatedKernel(const IsolatedKernel&) = delete;
  IsolatedKernel& operator=(const IsolatedKernel&) = delete;

  // What runs, as reports print it (the kernel's resolved name, e.g. "avx2"); starts the child.
  // On a load or ABI failure, `start_error` says so and every apply() fails with it.
  std::string describe();
  const ApplyResult* start_error();

  ApplyResult apply(const Spec& spec, reference::Shape shape, std::span<const std::int64_t> positions,
                    std::span<const double> input);

 private:
  bool start();
  void stop(bool kill_child);
  ApplyResult child_failure(const std::string& during);

  Source source_;
  std::string plugin_path_;
  std::string implementation_;
  double timeout_seconds_;
  pid_t child_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string resolved_;
  bool start_failed_ = false;
  ApplyResult start_error_;
};

// The parent's side of one reply from the child process (the plugin result handling): status,
// guard flag and outputs read from `fd` until `deadline`, the output count checked against
// `expected_elements` before anything is allocated, then classified into `result`. Exposed for the
// fuzz target fuzz/targets/fuzz_plugin_reply.cpp.
enum class ReplyRead { ok, broken, timed_out };
ReplyRead read_reply(int fd, std::chrono::steady_clock::time_point deadline, std::size_t expected_elements,
                     ApplyResult& result);

// Names of the project's kernels and whether each can run here (empty when the kernel library is
// not linked into this build).
struct KernelInfo {
  std::string name;
  bool available = false;
};
std::vector<KernelInfo> project_kernels();

}  // namespace ropecheck::judge
