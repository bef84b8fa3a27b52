#include "runner/isolation.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>

#include <ropecheck/kernel.h>

#include "runner/abi_call.h"

namespace ropecheck::runner {
namespace {

using Clock = std::chrono::steady_clock;

// The child's exit status after a write into the protected pages beside its output.
constexpr int kGuardPageExit = 86;

class Writer {
 public:
  template <class T>
  void put(const T& v) {
    const char* p = reinterpret_cast<const char*>(&v);
    bytes.append(p, sizeof v);
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    bytes += s;
  }
  template <class T>
  void put_vector(std::span<const T> v) {
    put<std::uint64_t>(v.size());
    bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string bytes;
};

// Reads what Writer wrote; sizes are bounded so a confused peer cannot make us allocate wildly.
class Reader {
 public:
  Reader(int fd, const Clock::time_point* deadline) : fd_(fd), deadline_(deadline) {}
  template <class T>
  bool get(T& v) {
    return read_all(fd_, &v, sizeof v, deadline_, &timed_out);
  }
  bool get_string(std::string& s) {
    std::uint64_t n = 0;
    if (!get(n) || n > (1u << 20)) return false;
    s.resize(n);
    return read_all(fd_, s.data(), n, deadline_, &timed_out);
  }
  // At most `max_count` elements: the size comes from the other process, so it is checked before
  // anything is allocated (a reply carries exactly as many values as the call sent).
  template <class T>
  bool get_vector(std::vector<T>& v, std::uint64_t max_count = std::uint64_t{1} << 31) {
    std::uint64_t n = 0;
    if (!get(n) || n > max_count) return false;
    v.resize(n);
    return read_all(fd_, v.data(), n * sizeof(T), deadline_, &timed_out);
  }
  bool timed_out = false;

 private:
  int fd_;
  const Clock::time_point* deadline_;
};

// ---- the gate's side: children to end with the gate ---------------------------------------------
// The supervisors of the live children, so that SIGINT, SIGTERM or SIGHUP ending the gate ends
// them too (their groups do not receive the terminal's signals): SIGTERM makes a supervisor end
// every process in its tree (a /proc walk is no work for a signal handler), SIGCONT first should
// its worker have stopped it. Async-signal-safe: atomics only.
constexpr int kMaxTrackedChildren = 64;
std::atomic<pid_t> g_child_groups[kMaxTrackedChildren];

void end_children_and_reraise(int sig) {
  for (auto& group : g_child_groups) {
    const pid_t g = group.load();
    if (g <= 0) continue;
    ::kill(g, SIGCONT);
    ::kill(g, SIGTERM);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void track_child(pid_t group) {
  static std::atomic<bool> installed{false};
  if (!installed.exchange(true)) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      // A signal the gate was started to ignore (nohup) stays ignored.
      if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
      struct sigaction action {};
      action.sa_handler = end_children_and_reraise;
      sigemptyset(&action.sa_mask);
      ::sigaction(sig, &action, nullptr);
    }
  }
  for (auto& slot : g_child_groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, group)) return;
  }
}

void untrack_child(pid_t group) {
  for (auto& slot : g_child_groups) {
    pid_t expected = group;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

// ---- the child ----------------------------------------------------------------------------------
using AbiVersionFn = std::uint32_t (*)();
using ResolveFn = const char* (*)(const char*);
using ApplyFn = std::int32_t (*)(const char*, const ropecheck_call*);

constexpr std::uint32_t kHelloOk = 0, kHelloLoadFailed = 1;
using AvailableFn = std::int32_t (*)(const char*);

// A fault in the protected pages beside the output (runner/abi_call.h) is a guard violation: the
// child ends with kGuardPageExit. Any other fault: the handler was reset on entry (SA_RESETHAND),
// so returning faults again and the default action names the signal.
void on_fault(int, siginfo_t* info, void*) {
  if (in_guard_pages(info->si_addr)) ::_exit(kGuardPageExit);
}

[[noreturn]] void serve(Source source, const std::string& plugin_path, const std::string& implementation, const ChildLimits& limits, int in,
                        int out) {
  // A crashing plugin must not leave core files behind in the user's folder.
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  // Whatever the kernel prints goes to stderr: stdout carries the gate's table.
  ::dup2(2, 1);
  struct sigaction fault {};
  fault.sa_sigaction = on_fault;
  fault.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&fault.sa_mask);
  ::sigaction(SIGSEGV, &fault, nullptr);
  limit_address_space(limits.memory_limit_mib);
  // Should the gate die without ending this process (SIGKILL), a call still ends by this alarm.
  const unsigned watchdog = static_cast<unsigned>(std::min(86400.0 * 3, std::ceil(2 * limits.timeout_seconds) + 1));
  AbiVersionFn abi_version = &ropecheck_kernel_abi_version;
  ResolveFn resolve = &ropecheck_kernel_resolve;
  ApplyFn apply_fn = &ropecheck_kernel_apply;
  AvailableFn available = &ropecheck_kernel_available;
  Writer hello;
  ::alarm(watchdog);
  if (source == Source::plugin) {
    void* handle = ::dlopen(plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const char* missing = nullptr;
    if (handle) {
      abi_version = reinterpret_cast<AbiVersionFn>(::dlsym(handle, "ropecheck_kernel_abi_version"));
      resolve = reinterpret_cast<ResolveFn>(::dlsym(handle, "ropecheck_kernel_resolve"));
      apply_fn = reinterpret_cast<ApplyFn>(::dlsym(handle, "ropecheck_kernel_apply"));
      available = reinterpret_cast<AvailableFn>(::dlsym(handle, "ropecheck_kernel_available"));
      if (!abi_version)
        missing = "ropecheck_kernel_abi_version";
      else if (!apply_fn)
        missing = "ropecheck_kernel_apply";
    }
    if (!handle || missing) {
      const char* err = handle ? nullptr : ::dlerror();
      hello.put(kHelloLoadFailed);
      hello.put<std::uint32_t>(0);
      hello.put_string(handle ? std::string("missing entry point ") + missing
                              : std::string("dlopen failed: ") + (err ? err : "unknown error"));
      write_all(out, hello.bytes.data(), hello.bytes.size());
      ::_exit(0);
    }
  }
  const std::uint32_t version = abi_version();
  std::string resolved = implementation;
  // Whether the implementation runs on this machine (1), as the plugin says; a plugin without the
  // entry point is taken to run.
  std::int32_t runs_here = 1;
  if (version == ROPECHECK_KERNEL_ABI_VERSION) {
    if (resolve) {
      const char* r = resolve(implementation.c_str());
      resolved = r ? std::string(r).substr(0, 200) : implementation + " (unresolved)";
    }
    if (available) runs_here = available(implementation.c_str());
  }
  ::alarm(0);
  hello.put(kHelloOk);
  hello.put(version);
  hello.put(runs_here);
  hello.put_string(resolved);
  if (!write_all(out, hello.bytes.data(), hello.bytes.size())) ::_exit(0);
  if (version != ROPECHECK_KERNEL_ABI_VERSION) ::_exit(0);

  for (;;) {
    Reader r(in, nullptr);
    std::string spec_text;
    std::int64_t tokens = 0, heads = 0, head_dim = 0;
    std::vector<std::int64_t> positions;
    std::vector<double> input;
    if (!r.get_string(spec_text) || !r.get(tokens) || !r.get(heads) || !r.get(head_dim) || !r.get_vector(positions) ||
        !r.get_vector(input)) {
      ::_exit(0);  // the parent closed the pipe
    }
    std::int32_t status = ROPECHECK_OK;
    std::uint32_t guard_ok = 1;
    std::vector<double> result;
    ::alarm(watchdog);
    try {
      const Spec spec = parse_spec(spec_text);
      AbiCallResult call = call_kernel(apply_fn, implementation.c_str(), spec, reference::Shape{tokens, heads, head_dim}, positions, input,
                                       1, OutputGuard::pages);
      status = call.status;
      guard_ok = call.guard_intact ? 1 : 0;
      result = std::move(call.output);
    } catch (const std::exception&) {
      // The gate's own conversion failed (a spec the ABI cannot express): an error, not a crash.
      status = ROPECHECK_ERROR_INTERNAL;
      result.clear();
    }
    ::alarm(0);
    Writer reply;
    reply.put(status);
    reply.put(guard_ok);
    reply.put_vector<double>(result);
    if (!write_all(out, reply.bytes.data(), reply.bytes.size())) ::_exit(0);
  }
}

// Waits until `pid` has ended or `deadline` passes, without reaping it: while it is unreaped its
// pid, and so its process group, cannot be taken by another process.
bool wait_for_exit(pid_t pid, Clock::time_point deadline) {
  for (;;) {
    if (has_ended(pid)) return true;  // ended, or not our child (any more): nothing to wait for
    if (Clock::now() > deadline) return false;
    ::usleep(1000);
  }
}

// Ends the child's supervisor and every process in its tree, and reaps the supervisor.
int end_group(pid_t supervisor) {
  const int status = end_supervised(supervisor);
  untrack_child(supervisor);
  return status;
}

}  // namespace

IsolatedKernel::IsolatedKernel(Source source, std::string plugin_path, std::string implementation, ChildLimits limits)
    : source_(source), plugin_path_(std::move(plugin_path)), implementation_(std::move(implementation)), limits_(limits) {
  // A child that dies while we write to it must not take the gate down with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
}

IsolatedKernel::~IsolatedKernel() { stop(false); }

Clock::time_point IsolatedKernel::deadline() const {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits_.timeout_seconds));
}

void IsolatedKernel::stop(bool kill_child) {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (child_ > 0) {
    // Closing its request pipe makes a healthy child exit; a stuck one is killed after the
    // timeout, one whose supervisor it stopped at once. Either way its tree goes too: nothing it
    // started lingers.
    if (!kill_child && supervisor_stopped(child_) == 0) wait_for_exit(child_, deadline());
    end_group(child_);
  }
  child_ = -1;
}

bool IsolatedKernel::start() {
  if (child_ > 0) return true;
  if (start_failed_) return false;
  int request[2], reply[2];
  if (::pipe2(request, O_CLOEXEC) != 0) return false;
  if (::pipe2(reply, O_CLOEXEC) != 0) {
    ::close(request[0]);
    ::close(request[1]);
    return false;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork_supervised();
  if (pid < 0) {
    for (int fd : {request[0], request[1], reply[0], reply[1]}) ::close(fd);
    return false;
  }
  if (pid == 0) {
    ::close(request[1]);
    ::close(reply[0]);
    // A candidate's fault must end the child with its signal, so that the report names it
    // (SIGSEGV, SIGBUS, ...), and the gate's own handlers are not the child's.
    for (int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGINT, SIGTERM, SIGHUP, SIGALRM}) {
      ::signal(signal_number, SIG_DFL);
    }
    serve(source_, plugin_path_, implementation_, limits_, request[0], reply[1]);
  }
  track_child(pid);
  ::close(request[0]);
  ::close(reply[1]);
  child_ = pid;
  to_child_ = request[1];
  from_child_ = reply[0];
  const auto load_deadline = deadline();
  Reader r(from_child_, &load_deadline);
  std::uint32_t hello = 0, version = 0;
  std::int32_t runs_here = 1;
  std::string text;
  if (!r.get(hello) || !r.get(version) || (hello == kHelloOk && !r.get(runs_here)) || !r.get_string(text)) {
    start_error_ = r.timed_out ? timed_out("loading the implementation") : child_failure("loading the implementation");
    if (start_error_.status != ApplyResult::Status::crash && start_error_.status != ApplyResult::Status::timeout) {
      start_error_.status = ApplyResult::Status::load;
    }
    start_failed_ = true;
    return false;
  }
  if (hello == kHelloLoadFailed) {
    start_error_ = {ApplyResult::Status::load, plugin_path_ + ": " + text, {}};
    start_failed_ = true;
    stop(false);
    return false;
  }
  if (version != ROPECHECK_KERNEL_ABI_VERSION) {
    start_error_ = {ApplyResult::Status::abi,
                    "ABI version mismatch: the implementation was built for version " + std::to_string(version) +
                        ", this gate speaks version " + std::to_string(ROPECHECK_KERNEL_ABI_VERSION),
                    {}};
    start_failed_ = true;
    stop(false);
    return false;
  }
  if (runs_here != 1) {
    start_error_ = {
        ApplyResult::Status::unavailable,
        implementation_ + ": not available on this machine (ropecheck_kernel_available returned " + std::to_string(runs_here) + ")",
        {}};
    start_failed_ = true;
    stop(false);
    return false;
  }
  resolved_ = text;
  return true;
}

// The child died (or closed the pipe): end its group, reap it and say how. A child that closed
// the pipe but lives on is given the timeout to end, then killed.
ApplyResult IsolatedKernel::child_failure(const std::string& during) {
  ApplyResult result;
  result.status = ApplyResult::Status::crash;
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (child_ <= 0) {
    result.message = "lost while " + during;
    return result;
  }
  const bool ended = wait_for_exit(child_, deadline());
  const int status = end_group(child_);
  child_ = -1;
  const std::string limit = limits_.memory_limit_mib > 0
                                ? " (address space limited to " + std::to_string(limits_.memory_limit_mib) + " MiB more: --memory-limit)"
                                : "";
  if (!ended) {
    result.message = "closed its pipe and did not exit within the timeout while " + during + " (killed)";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == kGuardPageExit) {
    result.status = ApplyResult::Status::guard;
    result.message = "wrote outside its output buffer (into the protected pages beside it) while " + during;
  } else if (WIFSIGNALED(status)) {
    result.message = "killed by " + signal_text(WTERMSIG(status)) + " while " + during + limit;
  } else {
    result.message = "exited with status " + std::to_string(WEXITSTATUS(status)) + " while " + during + limit;
  }
  return result;
}

ApplyResult IsolatedKernel::timed_out(const std::string& during) {
  stop(true);
  ++consecutive_timeouts_;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", limits_.timeout_seconds);
  return {ApplyResult::Status::timeout, std::string("no answer within ") + seconds + " s while " + during + " (killed)", {}};
}

std::string IsolatedKernel::describe() {
  start();
  if (start_failed_) return implementation_ + " (" + start_error_.message + ")";
  return resolved_;
}

const ApplyResult* IsolatedKernel::start_error() {
  start();
  return start_failed_ ? &start_error_ : nullptr;
}

ApplyResult IsolatedKernel::apply(const Spec& spec, reference::Shape shape, std::span<const std::int64_t> positions,
                                  std::span<const double> input) {
  if (circuit_open()) {
    return {ApplyResult::Status::timeout,
            "not called: the previous " + std::to_string(kCircuitBreakerTimeouts) +
                " calls timed out (circuit breaker: the implementation is taken to hang)",
            {}};
  }
  if (!start()) {
    if (start_failed_) return start_error_;
    return {ApplyResult::Status::crash, "could not start a child process", {}};
  }
  if (std::string why = abi_declines(spec); !why.empty()) return {ApplyResult::Status::unsupported, why, {}};
  Writer w;
  w.put_string(to_string(spec));
  w.put(shape.tokens);
  w.put(shape.heads);
  w.put(shape.head_dim);
  w.put_vector(positions);
  w.put_vector(input);
  const auto call_deadline = deadline();
  bool send_timed_out = false;
  if (!write_all(to_child_, w.bytes.data(), w.bytes.size(), &call_deadline, &send_timed_out)) {
    return send_timed_out ? timed_out("receiving the call") : child_failure("receiving the call");
  }
  ApplyResult result;
  const ReplyRead read = read_reply(from_child_, call_deadline, input.size(), result);
  if (read == ReplyRead::timed_out) return timed_out("running the call");
  consecutive_timeouts_ = 0;
  if (read == ReplyRead::broken) return child_failure("running the call");
  return result;
}

ReplyRead read_reply(int fd, Clock::time_point deadline, std::size_t expected_elements, ApplyResult& result) {
  Reader r(fd, &deadline);
  std::int32_t status = 0;
  std::uint32_t guard_ok = 0;
  result = ApplyResult{};
  if (!r.get(status) || !r.get(guard_ok) || !r.get_vector(result.output, expected_elements)) {
    result.output.clear();
    return r.timed_out ? ReplyRead::timed_out : ReplyRead::broken;
  }
  if (!guard_ok) {
    result.status = ApplyResult::Status::guard;
    result.message = "wrote outside its output buffer (guard bytes changed)";
  } else if (status == ROPECHECK_ERROR_UNSUPPORTED) {
    result.status = ApplyResult::Status::unsupported;
    result.message = "the implementation reports this spec as unsupported";
  } else if (status != ROPECHECK_OK) {
    result.status = ApplyResult::Status::kernel_error;
    result.message = "returned status " + std::to_string(status) + " (" + ropecheck_status_message(status) + ")";
  } else if (result.output.size() != expected_elements) {
    result.status = ApplyResult::Status::kernel_error;
    result.message = "returned " + std::to_string(result.output.size()) + " values";
  }
  return ReplyRead::ok;
}

std::vector<KernelInfo> project_kernels() {
  std::vector<KernelInfo> out;
  const std::int32_t n = ropecheck_kernel_count();
  for (std::int32_t i = 0; i < n; ++i) {
    const char* name = ropecheck_kernel_name(i);
    if (!name) continue;
    out.push_back({name, ropecheck_kernel_available(name) == 1});
  }
  return out;
}

}  // namespace ropecheck::runner
