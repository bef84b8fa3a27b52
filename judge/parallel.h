// One way work is spread over threads in judge/: indices [0, n) split into `threads` contiguous
// ranges (0: one per hardware thread), each range on its own std::thread. The first exception
// thrown by any call is rethrown after every thread has joined.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ropecheck::judge {

inline unsigned resolve_threads(int threads) {
  if (threads > 0) return static_cast<unsigned>(threads);
  return std::max(1u, std::thread::hardware_concurrency());
}

inline void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body) {
  const std::size_t workers = std::min<std::size_t>(resolve_threads(threads), n);
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w) {
    const std::size_t begin = n * w / workers, end = n * (w + 1) / workers;
    pool.emplace_back([&, begin, end] {
      try {
        for (std::size_t i = begin; i < end; ++i) body(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// Tokens [0, tokens) cut into contiguous ranges, one per thread (at least one range): how the
// reference's work on a big test is spread (GroupComparer::add_evaluated, golden generate).
struct TokenRange {
  std::int64_t begin = 0, end = 0;
};
inline std::vector<TokenRange> token_ranges(std::int64_t tokens, int threads) {
  const auto n = static_cast<std::int64_t>(
      std::max<std::size_t>(1, std::min<std::size_t>(resolve_threads(threads), static_cast<std::size_t>(std::max<std::int64_t>(tokens, 1)))));
  std::vector<TokenRange> ranges;
  for (std::int64_t w = 0; w < n; ++w) ranges.push_back({tokens * w / n, tokens * (w + 1) / n});
  return ranges;
}

}  // namespace ropecheck::judge
