// A Python callable as the judge's implementation (callable.h): in process, or one forked child
// per call whose crash or hang is that call's failure.
#include "callable.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "judge/inference.h"  // first_line, kThrewPrefix
#include "runner/child_process.h"
#include "runner/isolation.h"  // kCircuitBreakerTimeouts

namespace ropecheck::python {

using reference::Shape;
using runner::ApplyResult;
using runner::end_supervised;  // ends the supervisor and every process in its tree, and reaps it
using runner::fork_supervised;
using runner::has_ended;
using runner::signal_text;
using runner::supervisor_stopped;
using runner::write_all;
using Clock = std::chrono::steady_clock;

PythonStop PythonStop::fetch() {
  PythonStop stop;
  PyErr_Fetch(&stop.type, &stop.value, &stop.trace);
  PyErr_NormalizeException(&stop.type, &stop.value, &stop.trace);
  return stop;
}

void PythonStop::raise_again() const {
  PyErr_Restore(type, value, trace);  // takes over the references
  throw py::error_already_set();
}

namespace {

// The first `kMaxMessageBytes` bytes of `text`'s UTF-8 form, cut at a character's start; only the
// characters kept are converted (a 100 MiB str costs no copy of it).
std::string bounded_utf8(PyObject* text) {
  PyObject* prefix = PyUnicode_Substring(text, 0, static_cast<Py_ssize_t>(kMaxMessageBytes));
  if (prefix == nullptr) {
    PyErr_Clear();
    return "?";
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(prefix, &size);
  std::string out;
  if (data == nullptr) {  // a lone surrogate: not UTF-8
    PyErr_Clear();
    out = "?";
  } else {
    out.assign(data, static_cast<std::size_t>(size));
  }
  Py_DECREF(prefix);
  if (out.size() > kMaxMessageBytes) {
    std::size_t cut = kMaxMessageBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // a continuation byte
    out.resize(cut);
  }
  return out;
}

// str(value), bounded as bounded_utf8; "?" when str() itself raises.
std::string text_of(PyObject* value) {
  if (value == nullptr) return {};
  PyObject* text = PyObject_Str(value);
  if (text == nullptr) {
    PyErr_Clear();
    return "?";
  }
  std::string out = bounded_utf8(text);
  Py_DECREF(text);
  return out;
}

// The one-line description the package's wrapper stores on an exception from the user's function
// (python/ropecheck/_callable.py describe: "TYPE: message (raised at FILE:LINE in FUNCTION); hint:
// ..."); else "TYPE: first line of str(exception)" (pybind11's what() without the traceback; an
// exception of the wrapper itself, or one that takes no attribute). Either bounded by
// kMaxMessageBytes: pybind11's what() would copy the whole message and traceback.
std::string description_of(const py::error_already_set& e) {
  const py::object& value = e.value();
  if (value && py::hasattr(value, "_ropecheck_description")) {
    const py::object text = value.attr("_ropecheck_description");
    if (PyUnicode_Check(text.ptr())) return judge::first_line(bounded_utf8(text.ptr()));
  }
  const std::string message = value ? judge::first_line(text_of(value.ptr())) : std::string();
  const std::string type = e.type() ? py::detail::obj_class_name(e.type().ptr()) : "exception";
  return message.empty() ? type : type + ": " + message;
}

// One call of `fn` with the GIL held: its outputs, tokens·heads·head_dim values as doubles; a
// PythonStop for KeyboardInterrupt and SystemExit; std::runtime_error with the first line of any
// other exception ("IndexError: ...", without the traceback pybind11 appends: reports show it on
// one line; the wrapper's description_of when it gave one) or of a wrong output.
std::vector<double> call_python(const py::function& fn, const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                std::span<const double> input) {
  try {
    py::array_t<double> x({shape.tokens, shape.heads, shape.head_dim});
    std::memcpy(x.mutable_data(), input.data(), input.size_bytes());
    const auto components = static_cast<py::ssize_t>(position_components(spec));
    py::array_t<std::int64_t> where({static_cast<py::ssize_t>(shape.tokens), components});
    std::memcpy(where.mutable_data(), positions.data(), positions.size_bytes());
    const Doubles out = Doubles::ensure(fn(spec, x, where));
    if (!out) throw std::runtime_error("expected an array of numbers as output");
    if (out.size() != static_cast<py::ssize_t>(input.size())) {
      throw std::runtime_error("expected " + std::to_string(input.size()) + " output values (tokens*heads*head_dim), got " +
                               std::to_string(out.size()));
    }
    return std::vector<double>(out.data(), out.data() + out.size());
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) {
      e.restore();
      throw PythonStop::fetch();
    }
    // Converted while the GIL is held: the Python error object must not outlive it.
    throw std::runtime_error(description_of(e));
  }
}

// ---- the forked call ---------------------------------------------------------------------------

// What the child sends back: a header, then `size` doubles (values) or bytes (the texts); for
// exit_code, `size` is the code. Native byte order: the same program on both ends of the pipe.
enum class ReplyKind : std::uint32_t {
  values,              // the outputs
  error,               // another exception (or a wrong output): its one-line text
  keyboard_interrupt,  // KeyboardInterrupt: str() of it
  exit_code,           // SystemExit with an integer code
  exit_text,           // SystemExit with another code: str() of it
  exit_none,           // SystemExit with code None
};
struct ReplyHeader {
  std::uint32_t kind = 0;
  std::uint32_t unused = 0;
  std::uint64_t size = 0;
};
// A text longer than this is not a reply of this file's child (its texts are bounded alike).
constexpr std::uint64_t kMaxReplyText = kMaxMessageBytes;

// Python's own buffers of sys.stdout and sys.stderr, and C's: written out before the fork (the
// child would write the parent's unwritten output again) and before the child ends (_exit drops
// them). Errors are ignored: output is not the call's result.
void flush_output() {
  for (const char* name : {"stdout", "stderr"}) {
    PyObject* stream = PySys_GetObject(name);  // borrowed
    if (stream == nullptr || stream == Py_None) continue;
    PyObject* result = PyObject_CallMethod(stream, "flush", nullptr);
    if (result == nullptr) PyErr_Clear();
    Py_XDECREF(result);
  }
  std::fflush(nullptr);
}

// The child's side, under its supervisor (runner/isolation.h fork_supervised, which also kills it
// should the supervisor end): the call made, its
// reply written, the child ended. Never returns.
[[noreturn]] void serve_in_child(int out, const py::function& fn, const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                 std::span<const double> input) {
  // A fault must end the child with its signal, so that the report names it: Python's faulthandler
  // (pytest enables it) would print a traceback and end it otherwise.
  for (int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(signal_number, SIG_DFL);
  std::string reply;
  auto put = [&](ReplyKind kind, std::uint64_t size, const void* data, std::size_t bytes) {
    const ReplyHeader header{static_cast<std::uint32_t>(kind), 0, size};
    reply.append(reinterpret_cast<const char*>(&header), sizeof header);
    reply.append(static_cast<const char*>(data), bytes);
  };
  auto put_text = [&](ReplyKind kind, const std::string& text) {
    const std::string cut = text.substr(0, kMaxReplyText);
    put(kind, cut.size(), cut.data(), cut.size());
  };
  try {
    const std::vector<double> values = call_python(fn, spec, shape, positions, input);
    put(ReplyKind::values, values.size(), values.data(), values.size() * sizeof(double));
  } catch (const PythonStop& stop) {
    if (PyErr_GivenExceptionMatches(stop.type, PyExc_KeyboardInterrupt)) {
      put_text(ReplyKind::keyboard_interrupt, text_of(stop.value));
    } else {
      PyObject* code = stop.value ? PyObject_GetAttrString(stop.value, "code") : nullptr;
      int overflow = 0;
      const long long number = code && PyLong_Check(code) ? PyLong_AsLongLongAndOverflow(code, &overflow) : 0;
      if (code == nullptr || code == Py_None) {
        PyErr_Clear();
        put(ReplyKind::exit_none, 0, nullptr, 0);
      } else if (PyLong_Check(code) && overflow == 0 && !PyErr_Occurred()) {
        put(ReplyKind::exit_code, static_cast<std::uint64_t>(number), nullptr, 0);
      } else {
        PyErr_Clear();
        put_text(ReplyKind::exit_text, text_of(code));
      }
      Py_XDECREF(code);
    }
  } catch (const std::exception& e) {
    put_text(ReplyKind::error, e.what());
  } catch (...) {
    put_text(ReplyKind::error, "unknown C++ exception");
  }
  flush_output();
  write_all(out, reply.data(), reply.size());
  ::_exit(0);
}

// The words for a supervisor its worker stopped: the gate ends it at once (a stopped supervisor
// would hold the call until its timeout, or forever without one).
std::string stopped_text(int sig) { return "stopped the process that supervises it (" + signal_text(sig) + ")"; }

// A signal's exception pending in Python (Ctrl-C: KeyboardInterrupt), looked for with the GIL
// taken while a child runs. Only the main thread runs Python's signal handlers; elsewhere never.
bool signal_raised(std::optional<PythonStop>& stop) {
  py::gil_scoped_acquire locked;
  if (PyErr_CheckSignals() == 0) return false;
  stop = PythonStop::fetch();
  return true;
}

// How often a waiting parent looks for Ctrl-C.
constexpr auto kSignalPoll = std::chrono::milliseconds(50);

// The parent's reading of one reply.
struct Reply {
  enum class State { reading, complete, broken, timed_out } state = State::reading;
  ReplyHeader header;
  std::vector<double> values;
  std::string text;
};

// Where a reply's payload goes once its header is read, the sizes checked before anything is
// allocated: `expected_values` outputs, or a text of at most kMaxReplyText bytes. False when the
// header is not one of this file's child's.
bool expect_payload(Reply& reply, std::size_t expected_values, char*& payload, std::size_t& payload_bytes) {
  const ReplyHeader& h = reply.header;
  switch (static_cast<ReplyKind>(h.kind)) {
    case ReplyKind::values:
      if (h.size != expected_values) return false;
      reply.values.resize(h.size);
      payload = reinterpret_cast<char*>(reply.values.data());
      payload_bytes = h.size * sizeof(double);
      return true;
    case ReplyKind::error:
    case ReplyKind::keyboard_interrupt:
    case ReplyKind::exit_text:
      if (h.size > kMaxReplyText) return false;
      reply.text.resize(h.size);
      payload = reply.text.data();
      payload_bytes = h.size;
      return true;
    case ReplyKind::exit_code:
    case ReplyKind::exit_none:
      payload_bytes = 0;
      return true;
  }
  return false;
}

// The child's reply, read until it is whole, the pipe ends (the child died, or ended and something it
// started holds the pipe) or the deadline passes; Ctrl-C looked for every kSignalPoll (`stop` set).
// `stopped_by`: the signal that stopped the supervisor, or 0.
Reply read_reply(int from_child, pid_t child, std::size_t expected_values, Clock::time_point start,
                 const std::optional<Clock::time_point>& deadline, std::optional<PythonStop>& stop, int& stopped_by) {
  Reply reply;
  std::size_t header_read = 0, payload_read = 0, payload_bytes = 0;
  char* payload = nullptr;
  auto last_signal_check = start;
  while (reply.state == Reply::State::reading) {
    auto wait = kSignalPoll;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()) + std::chrono::milliseconds(1);
      wait = std::clamp(left, std::chrono::milliseconds(0), kSignalPoll);
    }
    pollfd p{from_child, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(wait.count()));
    if (ready > 0) {
      char* target = header_read < sizeof reply.header ? reinterpret_cast<char*>(&reply.header) + header_read : payload + payload_read;
      const std::size_t want = header_read < sizeof reply.header ? sizeof reply.header - header_read : payload_bytes - payload_read;
      const ssize_t n = ::read(from_child, target, want);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        reply.state = Reply::State::broken;
        break;
      }
      if (header_read < sizeof reply.header) {
        header_read += static_cast<std::size_t>(n);
        if (header_read == sizeof reply.header && !expect_payload(reply, expected_values, payload, payload_bytes)) {
          reply.state = Reply::State::broken;
          reply.text = "sent a reply that is not a reply of ropecheck's child";
          break;
        }
      } else {
        payload_read += static_cast<std::size_t>(n);
      }
      if (header_read == sizeof reply.header && payload_read == payload_bytes) reply.state = Reply::State::complete;
    } else if (ready == 0 && has_ended(child)) {
      reply.state = Reply::State::broken;  // ended, and whatever it started holds the pipe
    } else if (ready == 0 && (stopped_by = supervisor_stopped(child)) != 0) {
      reply.state = Reply::State::broken;
    }
    if (reply.state != Reply::State::reading) break;
    if (deadline && Clock::now() >= *deadline) {
      reply.state = Reply::State::timed_out;
      break;
    }
    if (Clock::now() - last_signal_check >= kSignalPoll) {
      last_signal_check = Clock::now();
      if (signal_raised(stop)) break;
    }
  }
  return reply;
}

// How a child whose reply broke off ended, in the words of runner/isolation.cpp child_failure.
std::string broken_reply_text(const Reply& reply, bool ended, int status, const std::string& during) {
  std::string message;
  if (!reply.text.empty()) {
    message = reply.text + during;
  } else if (!ended) {
    message = "closed its pipe and did not exit within the timeout" + during + " (killed)";
  } else if (WIFSIGNALED(status)) {
    message = "killed by " + signal_text(WTERMSIG(status)) + during;
  } else {
    message = "exited with status " + std::to_string(WEXITSTATUS(status)) + during;
  }
  return message;
}

// The KeyboardInterrupt or SystemExit the callable raised in the child, raised here as it was.
[[noreturn]] void raise_as_in_child(const Reply& reply) {
  py::gil_scoped_acquire locked;
  switch (static_cast<ReplyKind>(reply.header.kind)) {
    case ReplyKind::keyboard_interrupt:
      if (reply.text.empty()) {
        PyErr_SetNone(PyExc_KeyboardInterrupt);
      } else {
        PyErr_SetObject(PyExc_KeyboardInterrupt, py::str(reply.text).ptr());
      }
      break;
    case ReplyKind::exit_code:
      PyErr_SetObject(PyExc_SystemExit, py::int_(static_cast<long long>(reply.header.size)).ptr());
      break;
    case ReplyKind::exit_text:
      PyErr_SetObject(PyExc_SystemExit, py::str(reply.text).ptr());
      break;
    default:
      PyErr_SetNone(PyExc_SystemExit);
      break;
  }
  throw PythonStop::fetch();
}

}  // namespace

CallableImplementation::CallableImplementation(std::string name, py::function fn, CallableLimits limits, runner::Claims claims)
    : Implementation(std::move(claims)), name_(std::move(name)), fn_(std::move(fn)), limits_(limits) {}

ApplyResult CallableImplementation::run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                        std::span<const double> input) const {
  if (limits_.isolate) return run_forked(spec, shape, positions, input);
  py::gil_scoped_acquire locked;
  try {
    ApplyResult result;
    result.output = call_python(fn_, spec, shape, positions, input);
    return result;
  } catch (const std::exception& e) {  // as FunctionImplementation::run (runner/adapters.cpp)
    return {ApplyResult::Status::kernel_error, std::string(judge::kThrewPrefix) + e.what(), {}};
  }
}

std::optional<std::string> CallableImplementation::stopped_reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (consecutive_timeouts_ < runner::kCircuitBreakerTimeouts) return std::nullopt;
  // The words of runner/adapters.cpp IsolatedImplementation::stopped_reason.
  return std::to_string(runner::kCircuitBreakerTimeouts) +
         " consecutive calls timed out: the implementation is taken to hang "
         "and no further call is made (circuit breaker)";
}

ApplyResult CallableImplementation::run_forked(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                               std::span<const double> input) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (consecutive_timeouts_ >= runner::kCircuitBreakerTimeouts) {
    return {ApplyResult::Status::timeout,
            "not called: the previous " + std::to_string(runner::kCircuitBreakerTimeouts) +
                " calls timed out (circuit breaker: the implementation is taken to hang)",
            {}};
  }
  const std::string during = " while running the call";
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return {ApplyResult::Status::crash, std::string("could not start a child process (pipe: ") + std::strerror(errno) + ")", {}};
  }
  const auto start = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (limits_.timeout_seconds) {
    deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*limits_.timeout_seconds));
  }
  pid_t child = -1;
  int fork_error = 0;
  {
    py::gil_scoped_acquire locked;
    flush_output();
    PyOS_BeforeFork();
    child = fork_supervised();
    if (child == 0) {
      PyOS_AfterFork_Child();
      ::close(pipe_fds[0]);
      serve_in_child(pipe_fds[1], fn_, spec, shape, positions, input);
    }
    fork_error = errno;
    PyOS_AfterFork_Parent();
  }
  ::close(pipe_fds[1]);
  const int from_child = pipe_fds[0];
  if (child < 0) {
    ::close(from_child);
    return {ApplyResult::Status::crash, std::string("could not start a child process (fork: ") + std::strerror(fork_error) + ")", {}};
  }

  std::optional<PythonStop> stop;
  int stopped_by = 0;  // the supervisor was stopped by this signal
  Reply reply = read_reply(from_child, child, input.size(), start, deadline, stop, stopped_by);
  ::close(from_child);

  if (stop) {
    end_supervised(child);
    throw *stop;
  }
  if (reply.state == Reply::State::timed_out) {
    end_supervised(child);
    ++consecutive_timeouts_;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", *limits_.timeout_seconds);
    return {ApplyResult::Status::timeout, std::string("no answer within ") + seconds + " s" + during + " (killed)", {}};
  }
  consecutive_timeouts_ = 0;
  // The child ends once it has replied (or died) and its supervisor after it, having killed what
  // the callable started: given until the deadline to do so, then the tree is killed. A supervisor
  // the callable stopped (SIGSTOP to its parent) stops before it can end, so it is seen here
  // whatever the reply: that call's crash.
  bool ended = has_ended(child);
  while (!ended && stopped_by == 0 && !(deadline && Clock::now() >= *deadline)) {
    if (signal_raised(stop)) {
      end_supervised(child);
      throw *stop;
    }
    if ((stopped_by = supervisor_stopped(child)) != 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ended = has_ended(child);
  }
  const int status = end_supervised(child);
  if (stopped_by != 0) return {ApplyResult::Status::crash, stopped_text(stopped_by) + during + " (killed)", {}};
  if (reply.state == Reply::State::broken) {
    // The child died (or closed the pipe): how it ended is the message, in the words of
    // runner/isolation.cpp child_failure.
    return {ApplyResult::Status::crash, broken_reply_text(reply, ended, status, during), {}};
  }
  switch (static_cast<ReplyKind>(reply.header.kind)) {
    case ReplyKind::values:
      return {ApplyResult::Status::ok, "", std::move(reply.values)};
    case ReplyKind::error:  // the words of the call in process
      return {ApplyResult::Status::kernel_error, std::string(judge::kThrewPrefix) + reply.text, {}};
    default:
      break;
  }
  raise_as_in_child(reply);
}

}  // namespace ropecheck::python
