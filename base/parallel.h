// How work is spread over threads in every layer (0 threads: one per hardware thread):
// indices [0, n) handed out to the threads as they come free (parallel_for), over a test's tokens
// cut into a few ranges per thread (token_ranges, map_token_ranges); or a pipeline of items made on
// the calling thread in order and finished on every thread (ordered_pipeline). The first exception
// thrown by any call is rethrown after every thread has joined.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace ropecheck {

// A thread of parallel_for's or ordered_pipeline's, started on another CPU than the calling
// thread's where the process may run on another and has no more threads than there are other
// CPUs, then free to run on any of them: left to itself the kernel may start a new thread on its
// busy creator's CPU while another CPU idles. Where the process has more threads, the other CPUs
// may be as busy as the creator's, and the kernel's choice is kept (bench/README.md
// "A sweep's serial part: threads"). Joined by
// join() (which must be called before destruction, as std::thread's); a body that throws
// terminates, as std::thread's.
class WorkerThread {
 public:
  explicit WorkerThread(std::function<void()> body);  // throws std::system_error when no thread is had
  WorkerThread(WorkerThread&& other) noexcept;
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;
  WorkerThread& operator=(WorkerThread&&) = delete;
  ~WorkerThread();
  void join();

 private:
  struct State;
  static void* run(void* state);  // the thread's start: its CPUs, then the body
  std::unique_ptr<State> state_;
};

inline unsigned resolve_threads(int threads) {
  if (threads > 0) return static_cast<unsigned>(threads);
  return std::max(1u, std::thread::hardware_concurrency());
}

// The threads parallel_for uses for n indices: at least 1, at most n.
inline std::size_t parallel_workers(std::size_t n, int threads) {
  return std::max<std::size_t>(1, std::min<std::size_t>(resolve_threads(threads), n));
}

// The threads each of `items` items run by ordered_pipeline on `threads` threads may use for its
// own work: `threads` as given when the items go one at a time, else the items' share of them (at
// least 1): the pipeline's threads already keep every core busy.
inline int threads_per_item(int threads, std::size_t items) {
  const std::size_t workers = parallel_workers(items, threads);
  if (workers <= 1) return threads;
  return static_cast<int>(std::max<std::size_t>(1, resolve_threads(threads) / workers));
}

// body(i, worker) for every i in [0, n), each index once, on parallel_workers(n, threads) threads
// (the calling thread one of them; worker in [0, parallel_workers) names the thread, for a
// workspace of its own), indices handed out in order as threads come free: a thread slowed down by
// another process takes fewer. Callers write body's result to slot i, so what they compute does
// not depend on which thread ran which index. After an exception no further index is started.
inline void parallel_for_workers(std::size_t n, int threads, const std::function<void(std::size_t, std::size_t)>& body) {
  const std::size_t workers = std::min<std::size_t>(resolve_threads(threads), n);
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) body(i, 0);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  const auto work = [&](std::size_t worker) {
    try {
      for (std::size_t i = next++; i < n && !failed; i = next++) body(i, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<WorkerThread> pool;
  try {
    pool.reserve(workers - 1);
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back([&work, w] { work(w); });
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!error) error = std::current_exception();  // no thread to be had: the started ones stop
    failed = true;
  }
  work(0);
  for (WorkerThread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// body(i) for every i in [0, n): parallel_for_workers without the worker.
inline void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body) {
  parallel_for_workers(n, threads, [&](std::size_t i, std::size_t) { body(i); });
}

// Items [0, n) in three steps on `threads` threads (0: one per hardware thread; the calling thread
// is one of them): prepare(i) and then in_order(i, item) on the calling thread, item after item in
// index order (a stateful callee sees the same sequence whatever the thread count, on the thread
// it was called from: a Python callable sees Ctrl-C only on the main thread); finish(i, item) on
// any thread, the calling thread too while it has no item to make; commit(i, item) one item at a
// time in index order, on whichever thread finished the item it waited for. At most
// window_per_worker·threads items are between prepare and commit at once (bounded memory; items
// of uneven cost want a wider window: the oldest unfinished one holds it, and a thread with no item
// to take waits). The first exception thrown by any step stops the pipeline and is rethrown after
// every thread has joined. With one thread: the four steps item after item, no thread started.
template <class Item, class Prepare, class InOrder, class Finish, class Commit>
void ordered_pipeline(std::size_t n, int threads, Prepare prepare, InOrder in_order, Finish finish, Commit commit,
                      std::size_t window_per_worker = 2) {
  const std::size_t workers = std::min<std::size_t>(resolve_threads(threads), n);
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) {
      Item item = prepare(i);
      in_order(i, item);
      finish(i, item);
      commit(i, std::move(item));
    }
    return;
  }
  const std::size_t window = std::max<std::size_t>(1, window_per_worker) * workers;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::pair<std::size_t, Item>> made;   // through in_order, to be finished
  std::vector<std::optional<Item>> slots(window);  // finished, to be committed
  std::size_t next = 0, committed = 0;
  bool committing = false;  // a thread is committing the finished items in order
  std::exception_ptr error;
  bool stop = false;
  const auto fail = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    if (!error) error = std::current_exception();
    stop = true;
    changed.notify_all();
  };
  // With the lock held and an item made: finishes it, then, unless another thread is at it,
  // commits every finished item in order (a deposit made while that thread checks is seen by it:
  // both under the lock). Returns with the lock held.
  const auto finish_one = [&](std::unique_lock<std::mutex>& lock) {
    std::pair<std::size_t, Item> work = std::move(made.front());
    made.pop_front();
    lock.unlock();
    finish(work.first, work.second);
    lock.lock();
    slots[work.first % window].emplace(std::move(work.second));
    if (committing) return;
    committing = true;
    while (!stop && slots[committed % window].has_value()) {
      std::optional<Item> ready;
      ready.swap(slots[committed % window]);
      const std::size_t index = committed;
      lock.unlock();
      commit(index, std::move(*ready));
      lock.lock();
      ++committed;
      changed.notify_all();
    }
    committing = false;
  };
  const auto work = [&] {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stop || !made.empty() || committed == n; });
      if (stop || made.empty()) return;
      try {
        finish_one(lock);
      } catch (...) {
        if (lock.owns_lock()) lock.unlock();
        fail();
        return;
      }
    }
  };
  std::vector<WorkerThread> pool;
  try {
    pool.reserve(workers - 1);
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  } catch (...) {
    fail();  // no thread to be had: the started ones stop, and the error is rethrown
  }
  // The calling thread: the next item while the window allows, else a made item to finish.
  {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stop) {
      try {
        if (next < n && next < committed + window) {
          const std::size_t i = next++;
          lock.unlock();
          Item item = prepare(i);
          in_order(i, item);
          lock.lock();
          made.emplace_back(i, std::move(item));
          changed.notify_all();
        } else if (!made.empty()) {
          finish_one(lock);
        } else if (committed == n) {
          break;
        } else {
          changed.wait(lock);
        }
      } catch (...) {
        if (lock.owns_lock()) lock.unlock();
        fail();
        lock.lock();
        break;
      }
    }
  }
  for (WorkerThread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// Below this many values a copy (a chunk widened, a diagnosis sample taken) runs on the calling
// thread: starting threads would cost more than the copy.
inline constexpr std::size_t kParallelCopyValues = std::size_t{1} << 18;

// Pair indices [0, pairs) in blocks of this many (the last may be fewer), one task per block, for
// work that walks a test's rows once per block: a row's values of neighbouring pairs share cache
// lines, read once per block. At most 8 pairs (a 64-byte line of doubles in each half of a
// half-layout row, two neighbouring lines of an interleaved one), and about 4 blocks per thread where there are pairs enough, so that no thread is left alone with
// the last block for long (the diagnosis's decomposition and the spec inference's fits).
inline int pair_block_size(int pairs, int threads) {
  constexpr int kMostPairs = 8, kBlocksPerThread = 4;
  return std::clamp(pairs / (kBlocksPerThread * static_cast<int>(resolve_threads(threads))), 1, kMostPairs);
}

// Tokens [0, tokens) cut into contiguous ranges for `threads` threads (at least one range): one
// range on one thread, else up to kRangesPerThread per thread, handed out by parallel_for as threads
// come free, so that a slowed thread's last range is short while the others wait (bench/README.md
// "Judging on two cores"). How the
// reference's and the diagnosis's work on a big test is spread (GroupComparer::add_evaluated,
// diagnose, the spec inference, golden generate); each caller merges the ranges' results in token
// order, so the cut changes nothing but the speed.
inline constexpr std::int64_t kRangesPerThread = 16;
struct TokenRange {
  std::int64_t begin = 0, end = 0;
};
inline std::vector<TokenRange> token_ranges(std::int64_t tokens, int threads) {
  const std::int64_t workers = resolve_threads(threads);
  const std::int64_t wanted = workers == 1 ? 1 : workers * kRangesPerThread;
  const std::int64_t n = std::max<std::int64_t>(1, std::min(wanted, tokens));
  std::vector<TokenRange> ranges;
  for (std::int64_t w = 0; w < n; ++w) ranges.push_back({tokens * w / n, tokens * (w + 1) / n});
  return ranges;
}

// fn(range) for each range of token_ranges(tokens, threads), the ranges handed to the threads by
// parallel_for; the results in token order, each computed in an object of its own thread (slots
// of a shared vector written per value share cache lines between threads). The caller joins them
// in that order (sums, maxima with the first on ties, concatenations), so the cut changes nothing
// but the speed.
template <class Fn>
auto map_token_ranges(std::int64_t tokens, int threads, Fn fn) {
  const std::vector<TokenRange> ranges = token_ranges(tokens, threads);
  std::vector<decltype(fn(ranges.front()))> parts(ranges.size());
  parallel_for(ranges.size(), threads, [&](std::size_t w) { parts[w] = fn(ranges[w]); });
  return parts;
}

// Faults in the whole pages inside [data, data + bytes) on `threads` threads (madvise
// MADV_POPULATE_WRITE over ranges of pages, its aligned 2 MiB blocks advised as transparent huge
// pages first): new memory that is about to be written whole. Where the system refuses the advice
// (before Linux 5.14) it does nothing, and the writes fault the pages in as they would have.
void populate_pages(void* data, std::size_t bytes, int threads);

// `values` sized to n for a caller that overwrites every value (a chunk's buffer before it is read
// or widened into, an array a later insert fills): when that takes new memory, its pages are
// faulted in on `threads` threads first (populate_pages), then zeroed as a resize zeroes them:
// the page faults of fresh memory are split over the threads instead of taken on one
// (bench/README.md "A check's memory: population"). Below 1 MB a plain resize (its faults cost
// less than the threads).
template <class T>
void resize_for_overwrite(std::vector<T>& values, std::size_t n, int threads) {
  constexpr std::size_t kPopulatedBytes = std::size_t{1} << 20;
  if (n <= values.capacity() || n < kPopulatedBytes / sizeof(T)) {
    values.resize(n);
    return;
  }
  std::vector<T> fresh;
  fresh.reserve(n);
  populate_pages(fresh.data(), n * sizeof(T), threads);
  fresh.resize(n);
  values.swap(fresh);
}

}  // namespace ropecheck
