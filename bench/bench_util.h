// Helpers shared by the benchmark executables of bench/ (kernel_bench, peers_bench).
#ifndef ROPECHECK_BENCH_BENCH_UTIL_H
#define ROPECHECK_BENCH_BENCH_UTIL_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include <ropecheck/kernel.h>

namespace ropecheck::bench {

// The throughput workload of kernel_bench and peers_bench: a prefill of 4096 tokens ×
// 32 heads × 128 dims (Llama 3 8B's q), contiguous [tokens, heads, head_dim].
constexpr std::int64_t kTokens = 4096;
constexpr std::int64_t kHeads = 32;
constexpr std::int64_t kHeadDim = 128;
constexpr std::int64_t kElements = kTokens * kHeads * kHeadDim;

// A call rotating the workload's q from `input` to `output` (both contiguous; the same pointer
// for in place) on `threads` threads, angles computed by the kernel (no cache).
inline ropecheck_call workload_call(const ropecheck_spec* spec, const std::int64_t* positions, const void* input,
                                    void* output, int threads) {
  ropecheck_call c{};
  c.spec = spec;
  c.tokens = kTokens;
  c.positions = positions;
  c.q = ropecheck_tensor{kHeads, input, kHeads * kHeadDim, kHeadDim, output, kHeads * kHeadDim, kHeadDim};
  c.threads = threads;
  return c;
}

// The baseline of every vs_copy ratio: a plain memcpy of `bytes`, split in `threads` contiguous
// slices copied by as many threads (the caller's thread alone when threads <= 1), as a kernel
// call with the same thread count splits its work.
inline void copy(unsigned char* out, const unsigned char* in, std::size_t bytes, int threads) {
  if (threads <= 1) {
    std::memcpy(out, in, bytes);
    return;
  }
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) {
    const std::size_t begin = bytes * static_cast<std::size_t>(w) / static_cast<std::size_t>(threads);
    const std::size_t end = bytes * static_cast<std::size_t>(w + 1) / static_cast<std::size_t>(threads);
    pool.emplace_back([=] { std::memcpy(out + begin, in + begin, end - begin); });
  }
  for (auto& t : pool) t.join();
}

// Wall-clock seconds of one call of f (steady clock: the benchmarks use manual time).
template <class F>
double timed(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The calling thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID). A difference of two readings
// around work done on the calling thread alone is the time it took minus the time the thread was
// not running, so on a shared machine it does not count the slices other processes took (it still
// counts the time the core waited for memory, which is the work's own).
inline double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace ropecheck::bench

#endif  // ROPECHECK_BENCH_BENCH_UTIL_H
