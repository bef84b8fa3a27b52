// A Python callable as the implementation the judge calls (runner/implementation.h), in this
// process or one forked child process per call (python/README.md "Isolation of a callable").
//
// In process, an exception from the callable is that call's `kernel_error` ("threw: TYPE: message",
// the message's first line within its first kMaxMessageBytes bytes), as runner/adapters.h
// FunctionImplementation reports any exception. Isolated, the call runs in a child forked from
// this process under a supervisor (runner/child_process.h fork_supervised: whatever the callable starts
// is killed with the call, in its process group or not), which sends the outputs, or the same
// exception text, back through a pipe (the callable need not be picklable: the child has it
// already); a child that dies (a segfault, os._exit, abort) is that call's `crash`, one that stops
// its supervisor (SIGSTOP to its parent) too, and one past the timeout its `timeout`, with the
// one-line messages runner/isolation.h gives a plugin's child. A KeyboardInterrupt or
// SystemExit raised by the callable, in either mode, is no call's failure: it ends the judge and
// is raised again in Python (PythonStop).
#pragma once

#include <Python.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bindings.h"
#include "runner/implementation.h"

namespace ropecheck::python {

// The most of an exception's message a call's failure keeps, in UTF-8 bytes, in both modes: a
// message is one line of a report (python/ropecheck/_callable.py MESSAGE_CHARACTERS cuts the
// description's message alike, in characters).
inline constexpr std::size_t kMaxMessageBytes = 8192;

// A KeyboardInterrupt or SystemExit raised inside the user's function, or a signal's exception
// (Ctrl-C while an isolated call runs): not that call's failure but the end of the judge. The
// exception as Python raised it (owned references from PyErr_Fetch), raised again by
// raise_again() once the judge has unwound with the GIL held. No std::exception: the judge's
// adapters record those as the call's failure.
struct PythonStop {
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* trace = nullptr;

  // The Python error now set (GIL held), taken over; the error indicator is cleared.
  static PythonStop fetch();
  // Sets it as the current Python error again (GIL held) and throws py::error_already_set.
  [[noreturn]] void raise_again() const;
};

// How the callable is run: in this process, or in a forked child per call with an optional time
// limit per call (seconds).
struct CallableLimits {
  bool isolate = false;
  std::optional<double> timeout_seconds;
};

class CallableImplementation final : public runner::Implementation {
 public:
  // `fn(spec, x, positions) -> array`: the package's wrapper of the user's function (its tensor
  // library, dtype and signature), x float64 [tokens, heads, head_dim], positions int64
  // [tokens, components]; its outputs any float array of tokens·heads·head_dim values.
  CallableImplementation(std::string name, py::function fn, CallableLimits limits, runner::Claims claims);
  std::string name() const override { return name_; }
  std::string selector() const override { return name_; }
  // Called without the GIL; takes it for the call (and, isolated, only to fork and to look for
  // signals while it waits).
  runner::ApplyResult run(const Spec& spec, reference::Shape shape, std::span<const std::int64_t> positions,
                          std::span<const double> input) const override;
  // Isolated with a timeout: after runner::kCircuitBreakerTimeouts consecutive timeouts no further
  // call is made (each answers `timeout` at once), as for a plugin; this says so.
  std::optional<std::string> stopped_reason() const override;

 private:
  runner::ApplyResult run_forked(const Spec& spec, reference::Shape shape, std::span<const std::int64_t> positions,
                                 std::span<const double> input) const;

  std::string name_;
  py::function fn_;  // made and released with the GIL held (gate() and sweep() in judging.cpp)
  CallableLimits limits_;
  mutable std::mutex mutex_;  // isolated calls one at a time (the circuit breaker's count)
  mutable int consecutive_timeouts_ = 0;
};

}  // namespace ropecheck::python
