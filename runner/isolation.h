// Runs an implementation under test in a child process (docs/design.md "Plugin C ABI"): the child is
// forked once, loads the plugin there (dlopen), and serves apply requests through two pipes; a
// crash, an abort, a hang (per-call timeout, then SIGKILL) or an ABI version mismatch becomes that
// call's failure and the next call starts a fresh child. The gate itself never runs plugin code.
//
// What the child may do is bounded (runner/README.md "Isolation"):
// - its processes: the child runs under a supervisor (runner/child_process.h fork_supervised), the reaper of every
//   process the plugin starts, so whatever it forks, in its process group or not (setsid, a double
//   fork), is killed whenever the child stops, healthy or not, and when the gate is ended by
//   SIGINT, SIGTERM or SIGHUP or dies (the supervisor sees its parent change). A plugin that stops
//   its parent stops the supervisor, not the gate: the call times out and the tree is killed. What
//   no process of the gate's user can be kept from (signals to the gate itself, SIGKILL to the
//   supervisor) is in runner/README.md "Isolation".
// - its address space: RLIMIT_AS at what it maps when forked plus `memory_limit_mib` (0: none);
// - its time: `timeout_seconds` per call; after kCircuitBreakerTimeouts consecutive timeouts the
//   implementation is taken to hang and no further call is made (each answers `timeout` at once;
//   circuit_open() says so), so a plugin that always hangs costs a few timeouts, not one per call;
// - its output buffer: OutputGuard::pages (runner/abi_call.h), a write into the protected pages on
//   either side of the output ends the child and is reported as `guard`, as are changed guard bytes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "reference/rope.h"
#include "runner/child_process.h"
#include "runner/implementation.h"
#include "spec/spec.h"

namespace ropecheck::runner {

enum class Source {
  library,  // the project's kernels (target ropecheck_kernels, linked in)
  plugin,   // a shared library exporting include/ropecheck/kernel.h's entry points
};

// Consecutive timeouts after which no more calls are made.
inline constexpr int kCircuitBreakerTimeouts = 3;
// The default address-space allowance of a plugin's child process, in MiB (`--memory-limit`).
inline constexpr std::int64_t kDefaultMemoryLimitMiB = 4096;

struct ChildLimits {
  double timeout_seconds = 10;        // per call (and for loading); finite, > 0
  std::int64_t memory_limit_mib = 0;  // address space beyond the child's at fork; 0: no limit
};

class IsolatedKernel {
 public:
  // `plugin_path` for Source::plugin; `implementation` is the name passed to
  // ropecheck_kernel_apply ("auto", "scalar", ...).
  IsolatedKernel(Source source, std::string plugin_path, std::string implementation, ChildLimits limits);
  ~IsolatedKernel();
  IsolatedKernel(const IsolatedKernel&) = delete;
  IsolatedKernel& operator=(const IsolatedKernel&) = delete;

  // What runs, as reports print it (the kernel's resolved name, e.g. "avx2"); starts the child.
  // On a load or ABI failure, `start_error` says so and every apply() fails with it.
  std::string describe();
  const ApplyResult* start_error();

  ApplyResult apply(const Spec& spec, reference::Shape shape, std::span<const std::int64_t> positions, std::span<const double> input);

  // True once kCircuitBreakerTimeouts calls in a row timed out: later calls are not made.
  bool circuit_open() const { return consecutive_timeouts_ >= kCircuitBreakerTimeouts; }

 private:
  bool start();
  void stop(bool kill_child);
  ApplyResult child_failure(const std::string& during);
  ApplyResult timed_out(const std::string& during);
  std::chrono::steady_clock::time_point deadline() const;

  Source source_;
  std::string plugin_path_;
  std::string implementation_;
  ChildLimits limits_;
  pid_t child_ = -1;  // the supervisor (fork_supervised), also its process group
  int to_child_ = -1;
  int from_child_ = -1;
  std::string resolved_;
  bool start_failed_ = false;
  ApplyResult start_error_;
  int consecutive_timeouts_ = 0;
};

// The parent's side of one reply from the child process (the plugin result handling): status,
// guard flag and outputs read from `fd` until `deadline`, the output count checked against
// `expected_elements` before anything is allocated, then classified into `result`. Exposed for the
// fuzz target fuzz/targets/fuzz_plugin_reply.cpp.
enum class ReplyRead { ok, broken, timed_out };
ReplyRead read_reply(int fd, std::chrono::steady_clock::time_point deadline, std::size_t expected_elements, ApplyResult& result);

// Names of the project's kernels and whether each can run here (empty when the kernel library is
// not linked into this build).
struct KernelInfo {
  std::string name;
  bool available = false;
};
std::vector<KernelInfo> project_kernels();

}  // namespace ropecheck::runner
