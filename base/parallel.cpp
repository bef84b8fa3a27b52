#include "base/parallel.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <system_error>
#include <thread>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace ropecheck {

#if defined(__linux__)
struct WorkerThread::State {
  std::function<void()> body;
  pthread_t id{};
  bool joinable = false;
  bool placed = false;  // started with a mask of the CPUs but the creator's: allowed restores it
  cpu_set_t allowed{};
};

void* WorkerThread::run(void* argument) {
  auto* state = static_cast<State*>(argument);
  // Where it was started off its creator's CPU, it may now run on every CPU the process may: it
  // stays where it began unless the kernel moves it.
  if (state->placed) (void)pthread_setaffinity_np(pthread_self(), sizeof state->allowed, &state->allowed);
  try {
    state->body();
  } catch (...) {
    std::terminate();  // as std::thread's: nothing may leave a thread's start routine
  }
  return nullptr;
}

namespace {
// The process's threads now (field 20 of /proc/self/stat, after the command name's closing
// parenthesis: state is field 3), or 0 where it cannot be read.
long process_threads() {
  std::FILE* stat = std::fopen("/proc/self/stat", "r");
  if (stat == nullptr) return 0;
  char text[1024];
  const std::size_t size = std::fread(text, 1, sizeof text - 1, stat);
  std::fclose(stat);
  text[size] = '\0';
  const char* p = std::strrchr(text, ')');
  if (p == nullptr) return 0;
  for (int field = 2; field < 20 && p != nullptr; ++field) p = std::strchr(p + 1, ' ');  // to the space before field 20
  return p == nullptr ? 0 : std::strtol(p + 1, nullptr, 10);
}
}  // namespace

WorkerThread::WorkerThread(std::function<void()> body) : state_(std::make_unique<State>()) {
  state_->body = std::move(body);
  pthread_attr_t attributes;
  if (const int rc = pthread_attr_init(&attributes); rc != 0) throw std::system_error(rc, std::generic_category(), "pthread_attr_init");
  // The CPUs the process may run on, but the one this thread runs on now, where its threads are
  // no more than those (a set of at most CPU_SETSIZE CPUs: on a larger machine sched_getaffinity
  // fails and the thread starts where the kernel puts it).
  const int here = sched_getcpu();
  if (here >= 0 && here < CPU_SETSIZE && sched_getaffinity(0, sizeof state_->allowed, &state_->allowed) == 0) {
    cpu_set_t elsewhere = state_->allowed;
    CPU_CLR(here, &elsewhere);
    const long threads = process_threads();
    if (threads >= 1 && threads <= CPU_COUNT(&elsewhere) && pthread_attr_setaffinity_np(&attributes, sizeof elsewhere, &elsewhere) == 0) {
      state_->placed = true;
    }
  }
  int rc = pthread_create(&state_->id, &attributes, run, state_.get());
  (void)pthread_attr_destroy(&attributes);
  if (rc != 0 && state_->placed) {  // the mask refused (the process's CPUs changed meanwhile): start it anywhere
    state_->placed = false;
    rc = pthread_create(&state_->id, nullptr, run, state_.get());
  }
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "pthread_create");
  state_->joinable = true;
}

void WorkerThread::join() {
  if (!state_ || !state_->joinable) throw std::system_error(std::make_error_code(std::errc::invalid_argument), "WorkerThread::join");
  if (const int rc = pthread_join(state_->id, nullptr); rc != 0) throw std::system_error(rc, std::generic_category(), "pthread_join");
  state_->joinable = false;
}

WorkerThread::~WorkerThread() {
  if (state_ && state_->joinable) std::terminate();  // as std::thread's: a running thread must be joined
}
#else
struct WorkerThread::State {
  std::thread thread;
};

WorkerThread::WorkerThread(std::function<void()> body) : state_(std::make_unique<State>()) {
  state_->thread = std::thread(std::move(body));
}

void WorkerThread::join() { state_->thread.join(); }

WorkerThread::~WorkerThread() = default;
#endif

WorkerThread::WorkerThread(WorkerThread&& other) noexcept = default;

void populate_pages(void* data, std::size_t bytes, int threads) {
#ifdef MADV_POPULATE_WRITE  // Linux 5.14
  constexpr std::uintptr_t kPage = 4096;
  const auto first = (reinterpret_cast<std::uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const auto last = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kPage - 1);
  if (last <= first) return;
#ifdef MADV_HUGEPAGE
  // The aligned 2 MiB blocks inside also advised as transparent huge pages: where the system's
  // THP mode is "madvise" (as on the VMs of bench/README.md), 64 MB of a check's chunk buffers took
  // 16 384 faults in 4 KiB pages — 19-26 ms on one thread, 12 ms on two, 3-5 ms to unmap — against
  // 9-12, 5-6 and 0.2 ms in 32 faults of 2 MiB, and the judging reads them through fewer TLB
  // entries: `check` of 4096 x 32 x 128 f32 took 28-34 ms less CPU on one thread, 7-31 ms on two
  // (medians of 20 interleaved runs, bench/README.md). In "always" mode the advice changes
  // nothing, in "never" it is ignored, and where no huge page is free the faults fall back to
  // 4 KiB pages.
  constexpr std::uintptr_t kHugePage = std::uintptr_t{1} << 21;
  const auto huge_first = (first + kHugePage - 1) & ~(kHugePage - 1);
  const auto huge_last = last & ~(kHugePage - 1);
  if (huge_last > huge_first) (void)madvise(reinterpret_cast<void*>(huge_first), huge_last - huge_first, MADV_HUGEPAGE);
#endif
  const std::vector<TokenRange> ranges = token_ranges(static_cast<std::int64_t>((last - first) / kPage), threads);
  parallel_for(ranges.size(), threads, [&](std::size_t w) {
    const std::uintptr_t begin = first + static_cast<std::uintptr_t>(ranges[w].begin) * kPage;
    const std::uintptr_t end = first + static_cast<std::uintptr_t>(ranges[w].end) * kPage;
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
  });
#else
  (void)data, (void)bytes, (void)threads;
#endif
}

}  // namespace ropecheck
