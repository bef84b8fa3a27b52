// Kernel throughput (issue 4): 4096 tokens × 32 heads × 128 dims, base 500000, half layout, f32 and
// bf16, 1 and 2 threads, every CPU kernel this machine runs, on-the-fly and cache modes. GB/s counts
// input + output bytes. In the same run a plain memcpy of the same bytes (split over the same
// threads) is timed, and each kernel reports:
//   vs_copy   = copy time / kernel time   (target ≥ 0.9 for avx2, on the fly, f32, 1 thread)
//   vs_scalar = scalar time / kernel time (same mode, dtype and threads)
// Results are in bench/README.md.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <ropecheck/kernel.h>

#include "optimized/c_spec.h"
#include "spec/spec.h"

namespace {

constexpr std::int64_t kTokens = 4096;
constexpr std::int64_t kHeads = 32;
constexpr std::int64_t kHeadDim = 128;
constexpr std::int64_t kElements = kTokens * kHeads * kHeadDim;

struct Workload {
  explicit Workload(const std::string& dtype)
      : spec(ropecheck::parse_spec("layout=half,head_dim=128,base=500000,dtype=" + dtype)),
        c_spec(spec),
        bytes(static_cast<std::size_t>(kElements) * ropecheck_dtype_size(static_cast<std::int32_t>(spec.dtype))),
        input(bytes),
        output(bytes),
        positions(kTokens),
        cos_cache(kTokens * kHeadDim / 2),
        sin_cache(kTokens * kHeadDim / 2) {
    for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<unsigned char>((i * 37 + 11) % 63);  // finite values
    for (std::int64_t t = 0; t < kTokens; ++t) positions[static_cast<std::size_t>(t)] = t;
    ropecheck_kernel_fill_cache(c_spec.get(), 0, kTokens, ROPECHECK_DTYPE_F32, cos_cache.data(), sin_cache.data());
    std::memset(output.data(), 0, output.size());
  }
  ropecheck_call call(bool cache, int threads) {
    ropecheck_call c{};
    c.spec = c_spec.get();
    c.tokens = kTokens;
    c.positions = positions.data();
    c.q = ropecheck_tensor{kHeads, input.data(), kHeads * kHeadDim, kHeadDim, output.data(), kHeads * kHeadDim, kHeadDim};
    c.threads = threads;
    if (cache) {
      c.cos_cache = cos_cache.data();
      c.sin_cache = sin_cache.data();
      c.cache_dtype = ROPECHECK_DTYPE_F32;
      c.cache_rows = kTokens;
      c.cache_row_stride = kHeadDim / 2;
    }
    return c;
  }
  ropecheck::Spec spec;
  ropecheck::kernels::CSpec c_spec;
  std::size_t bytes;
  std::vector<unsigned char> input;
  std::vector<unsigned char> output;
  std::vector<std::int64_t> positions;
  std::vector<float> cos_cache;
  std::vector<float> sin_cache;
};

Workload& workload(const std::string& dtype) {
  static std::map<std::string, Workload> loads;
  auto it = loads.find(dtype);
  if (it == loads.end()) it = loads.emplace(dtype, Workload(dtype)).first;
  return it->second;
}

// Seconds per iteration of the baselines, keyed by (what, dtype, threads): filled by the copy and
// scalar benchmarks, which are registered (and so run) first.
std::map<std::tuple<std::string, std::string, int>, double>& baselines() {
  static std::map<std::tuple<std::string, std::string, int>, double> m;
  return m;
}

void copy(unsigned char* out, const unsigned char* in, std::size_t bytes, int threads) {
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

template <class F>
double timed(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_Copy(benchmark::State& state, std::string dtype, int threads) {
  Workload& w = workload(dtype);
  double total = 0;
  for (auto _ : state) {
    const double s = timed([&] { copy(w.output.data(), w.input.data(), w.bytes, threads); });
    state.SetIterationTime(s);
    total += s;
  }
  baselines()[{"copy", dtype, threads}] = total / static_cast<double>(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * w.bytes));
}

void BM_Kernel(benchmark::State& state, std::string implementation, std::string mode, std::string dtype, int threads) {
  if (ropecheck_kernel_available(implementation.c_str()) != 1) {
    state.SkipWithError((implementation + " is not available on this machine").c_str());
    return;
  }
  Workload& w = workload(dtype);
  const ropecheck_call call = w.call(mode == "cache", threads);
  double total = 0;
  for (auto _ : state) {
    std::int32_t status = 0;
    const double s = timed([&] { status = ropecheck_kernel_apply(implementation.c_str(), &call); });
    if (status != ROPECHECK_OK) {
      state.SkipWithError(ropecheck_status_message(status));
      return;
    }
    state.SetIterationTime(s);
    total += s;
  }
  const double per_iteration = total / static_cast<double>(state.iterations());
  if (implementation == "scalar") baselines()[{"scalar-" + mode, dtype, threads}] = per_iteration;
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * w.bytes));
  const auto copy_time = baselines().find({"copy", dtype, threads});
  if (copy_time != baselines().end()) state.counters["vs_copy"] = copy_time->second / per_iteration;
  const auto scalar_time = baselines().find({"scalar-" + mode, dtype, threads});
  if (scalar_time != baselines().end()) state.counters["vs_scalar"] = scalar_time->second / per_iteration;
}

const int kRegistered = [] {
  for (const char* dtype : {"f32", "bf16"}) {
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark((std::string("copy/") + dtype + "/threads:" + std::to_string(threads)).c_str(), BM_Copy,
                                   std::string(dtype), threads)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5);
      for (const char* mode : {"on_the_fly", "cache"}) {
        for (const char* implementation : {"scalar", "avx2", "avx512"}) {
          benchmark::RegisterBenchmark(
              (std::string("kernel/") + implementation + "/" + mode + "/" + dtype + "/threads:" + std::to_string(threads)).c_str(),
              BM_Kernel, std::string(implementation), std::string(mode), std::string(dtype), threads)
              ->UseManualTime()
              ->Unit(benchmark::kMillisecond)
              ->MinTime(0.5);
        }
      }
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
