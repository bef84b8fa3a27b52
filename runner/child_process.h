// Child processes that run code under test, for the plugin's child (runner/isolation.h) and
// Python's isolate=True (python/callable.cpp): pipe I/O with a deadline, a signal's name, and a
// supervisor between the gate and the child that ends whatever the child starts.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ropecheck::runner {

// ---- pipe I/O -----------------------------------------------------------------------------------
// Writes all of `data` before `deadline` (none: wait forever): a child that stops reading cannot
// block the gate once the pipe is full. False on an error or a timeout (`timed_out` set).
bool write_all(int fd, const void* data, std::size_t size, const std::chrono::steady_clock::time_point* deadline = nullptr,
               bool* timed_out = nullptr);
// Reads exactly `size` bytes before `deadline` (none: wait forever). False on EOF, error or timeout;
// `timed_out` tells which.
bool read_all(int fd, void* data, std::size_t size, const std::chrono::steady_clock::time_point* deadline, bool* timed_out = nullptr);

// Limits the calling process's address space (RLIMIT_AS) to what it maps now plus `limit_mib` MiB
// (0 or less: no limit): a child that starts as a copy of the gate is not charged for that copy.
void limit_address_space(std::int64_t limit_mib);

// "SIGSEGV (Segmentation fault)": a signal as reports name it.
std::string signal_text(int sig);

// Whether the child `pid` has ended (or is no child of this process), without reaping it: while it
// is unreaped its pid, and so its process group, cannot be taken by another process.
bool has_ended(pid_t pid);

// ---- a supervisor between the gate and a child that runs code under test --------------------------
// The gate forks a supervisor, which makes itself the reaper of its descendants
// (PR_SET_CHILD_SUBREAPER, proc(5) prctl(2)) and forks the worker that runs the code: a
// descendant that leaves the worker's process group or session (setsid, a double fork) is
// reparented to the supervisor, not to init, so it stays in the supervisor's tree and is found
// there by walking /proc. The supervisor leads its own process group (the terminal's signals are
// the gate's), closes every descriptor from 3 up (the pipes are the worker's), blocks every signal
// it can (it waits for SIGCHLD and SIGTERM; SIGKILL and SIGSTOP, which cannot be blocked, are the
// gate's to see) and, when the worker ends, kills every remaining descendant (SIGKILL), reaps them
// and ends as the worker ended (its exit status, or its signal raised again without a core file).
// It does the same when the gate ends (its parent changes) or sends it SIGTERM.
//
// fork_supervised(): 0 in the worker (its signal mask the caller's, killed by SIGKILL should the
// supervisor end: PR_SET_PDEATHSIG), the supervisor's pid in the gate, -1 (errno set) when the
// gate's fork failed (a failed fork of the worker is the supervisor's exit status 1).
pid_t fork_supervised();

// Ends a supervisor from the gate, whatever state it is in (running, stopped by its worker, already
// ended): every living descendant of it is killed (SIGKILL, repeated over /proc until none lives),
// then the supervisor itself and its process group, and it is reaped. Its wait status.
int end_supervised(pid_t supervisor);

// Whether the gate's child `supervisor` is stopped (SIGSTOP from its worker, say): a supervisor
// never stops by itself. The stop signal, or 0.
int supervisor_stopped(pid_t supervisor);

// The living (not yet ended) descendants of `root` as /proc shows them now, `root` excluded.
std::vector<pid_t> living_descendants(pid_t root);

}  // namespace ropecheck::runner
