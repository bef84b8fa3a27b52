#include "runner/child_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unordered_map>

namespace ropecheck::runner {
namespace {

using Clock = std::chrono::steady_clock;

// ---- pipe I/O -----------------------------------------------------------------------------------
// Waits until `fd` is ready for `events` or `deadline` passes (none: wait forever). False on a
// timeout (`timed_out` set) or an error.
bool wait_ready(int fd, short events, const Clock::time_point* deadline, bool* timed_out) {
  for (;;) {
    int wait_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) {
        if (timed_out) *timed_out = true;
        return false;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    pollfd pfd{fd, events, 0};
    const int r = ::poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r > 0) return true;  // ready, or hung up: the read or write says which
  }
}

// ---- the supervisor --------------------------------------------------------------------------
struct ProcEntry {
  pid_t pid = 0;
  pid_t parent = 0;
  bool living = false;  // not a zombie (ended, not yet reaped)
};

// Every process /proc lists now: its parent and whether it lives (proc(5) /proc/PID/stat: the
// state and the parent follow the last ')' of the command name, which may itself hold ')').
std::vector<ProcEntry> processes() {
  std::vector<ProcEntry> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // ended meanwhile
    char text[1024];
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (n <= 0) continue;
    text[n] = '\0';
    const char* close = std::strrchr(text, ')');
    char state = 0;
    long parent = 0;
    if (close == nullptr || std::sscanf(close + 1, " %c %ld", &state, &parent) != 2) continue;
    out.push_back({static_cast<pid_t>(pid), static_cast<pid_t>(parent), state != 'Z' && state != 'X'});
  }
  ::closedir(dir);
  return out;
}

// Kills every living descendant of `root` until a walk of /proc finds none (a process forked
// between two walks is found by the next; a killed one cannot fork). `reap`: `root` is this process,
// whose ended children are reaped as it goes. Gives up after `limit` (a process in an uninterruptible
// wait dies when it leaves it).
void kill_descendants(pid_t root, bool reap, Clock::duration limit) {
  const auto give_up = Clock::now() + limit;
  for (;;) {
    const std::vector<pid_t> living = living_descendants(root);
    for (pid_t pid : living) ::kill(pid, SIGKILL);
    if (reap) {
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
    }
    if (living.empty() || Clock::now() > give_up) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Closes every file descriptor from `first` up (close_range(2), Linux 5.9; else each one
// /proc/self/fd lists).
void close_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, 0U) == 0) return;
#endif
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  std::vector<int> open_fds;
  while (const dirent* entry = ::readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    if (fd >= first && fd != ::dirfd(dir)) open_fds.push_back(fd);
  }
  ::closedir(dir);
  for (int fd : open_fds) ::close(fd);
}

// How the supervisor ends: as its worker ended.
[[noreturn]] void end_as(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);  // a signal whose default is not to end the process
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

// The supervisor's loop: reaps whatever ends (the worker, and descendants reparented to it) until
// the worker ends, the gate ends (its parent changes) or SIGTERM comes; then ends every descendant.
[[noreturn]] void supervise(pid_t worker, pid_t gate) {
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGCHLD);
  sigaddset(&waited, SIGTERM);
  int worker_status = 0;
  bool worker_ended = false;
  for (;;) {
    int status = 0;
    pid_t ended = 0;
    while ((ended = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (ended == worker) {
        worker_status = status;
        worker_ended = true;
      }
    }
    if (worker_ended) break;
    if (::getppid() != gate) {  // the gate ended without ending this process
      worker_status = SIGKILL;  // a wait status: killed by SIGKILL
      break;
    }
    // SIGCHLD wakes it at once; the gate's end is seen within this.
    const timespec poll{0, 50'000'000};
    if (::sigtimedwait(&waited, nullptr, &poll) == SIGTERM) {
      worker_status = SIGKILL;
      break;
    }
  }
  kill_descendants(::getpid(), true, std::chrono::seconds(10));
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  end_as(worker_status);
}

}  // namespace

// Writes all of `data` before `deadline` (none: wait forever): a child that stops reading cannot
// block the gate once the pipe is full.
bool write_all(int fd, const void* data, std::size_t size, const Clock::time_point* deadline, bool* timed_out) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    if (deadline && !wait_ready(fd, POLLOUT, deadline, timed_out)) return false;
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes before `deadline` (none: wait forever). False on EOF, error or timeout;
// `timed_out` tells which.
bool read_all(int fd, void* data, std::size_t size, const Clock::time_point* deadline, bool* timed_out) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    if (deadline && !wait_ready(fd, POLLIN, deadline, timed_out)) return false;
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void limit_address_space(std::int64_t limit_mib) {
  if (limit_mib <= 0) return;
  std::uint64_t mapped_pages = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    unsigned long long pages = 0;
    if (std::fscanf(statm, "%llu", &pages) == 1) mapped_pages = pages;
    std::fclose(statm);
  }
  const std::uint64_t limit =
      mapped_pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) + (static_cast<std::uint64_t>(limit_mib) << 20);
  const rlimit address_space{limit, limit};
  ::setrlimit(RLIMIT_AS, &address_space);
}

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* desc = sigdescr_np(sig);
  return std::string("SIG") + (abbrev ? abbrev : std::to_string(sig)) + " (" + (desc ? desc : "signal") + ")";
}

bool has_ended(pid_t pid) {
  siginfo_t info{};
  const int r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  return (r == 0 && info.si_pid == pid) || (r != 0 && errno != EINTR);
}

std::vector<pid_t> living_descendants(pid_t root) {
  std::unordered_multimap<pid_t, const ProcEntry*> children;
  const std::vector<ProcEntry> all = processes();
  for (const ProcEntry& p : all) children.emplace(p.parent, &p);
  std::vector<pid_t> out, frontier{root};
  while (!frontier.empty()) {
    const pid_t parent = frontier.back();
    frontier.pop_back();
    const auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      if (it->second->pid == root) continue;
      frontier.push_back(it->second->pid);
      if (it->second->living) out.push_back(it->second->pid);
    }
  }
  return out;
}

pid_t fork_supervised() {
  const pid_t gate = ::getpid();
  const pid_t supervisor = ::fork();
  if (supervisor != 0) {
    if (supervisor > 0) ::setpgid(supervisor, supervisor);  // as it does itself, whichever runs first
    return supervisor;
  }
  ::setpgid(0, 0);
  sigset_t all, caller;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &caller);
  if (::getppid() != gate) ::_exit(1);  // the gate ended already
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t self = ::getpid();
  const pid_t worker = ::fork();
  if (worker == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != self) ::_exit(1);
    ::sigprocmask(SIG_SETMASK, &caller, nullptr);
    return 0;
  }
  if (worker < 0) ::_exit(1);
  // The gate's pipes are the worker's: a copy held here would keep a pipe open after the worker
  // closed its end (a child waiting for EOF on its requests would wait forever).
  close_from(3);
  supervise(worker, gate);
}

int end_supervised(pid_t supervisor) {
  // While the supervisor has not been reaped its pid is not reused, and while it lives whatever
  // its worker started is in its tree. One that has ended has no tree left to walk: it ended the
  // tree itself (supervise), or was killed and the tree went to init.
  siginfo_t info{};
  const bool ended = ::waitid(P_PID, static_cast<id_t>(supervisor), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == supervisor;
  if (!ended) kill_descendants(supervisor, false, std::chrono::seconds(10));
  ::kill(-supervisor, SIGKILL);
  ::kill(supervisor, SIGKILL);
  int status = 0;
  while (::waitpid(supervisor, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

int supervisor_stopped(pid_t supervisor) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(supervisor), &info, WSTOPPED | WNOHANG | WNOWAIT) != 0) return 0;
  return info.si_pid == supervisor && info.si_code == CLD_STOPPED ? info.si_status : 0;
}

}  // namespace ropecheck::runner
