// Kernel throughput: 4096 tokens × 32 heads × 128 dims, base 500000, half layout, f32,
// bf16, f16 and f64, 1 and 2 threads, every CPU kernel this machine runs, on-the-fly and cache modes.
// GB/s counts input + output bytes. Every iteration of a kernel benchmark also times a plain memcpy of the same
// bytes (split over the same threads) just before the kernel call, and each kernel reports:
//   vs_copy        = Σ copy time / Σ kernel time over those iterations
//                    (targets, 1 thread, avx2 and avx512/avx512bf16: ≥ 0.9 on the fly out of place for
//                    f32, bf16 and f16; ≥ 1.0 in place for bf16 and f16)
//   vs_copy_median = median over iterations of copy time / kernel time
//   vs_copy_min    = fastest copy / fastest kernel iteration
//   vs_copy_cpu    = Σ copy / Σ kernel in the calling thread's CPU time (1 thread only: on a shared
//                    machine, the ratio without the time slices other processes took), with
//                    cpu_ms and copy_cpu_ms their CPU milliseconds per call
//   vs_scalar      = scalar time / kernel time (same mode, dtype and threads)
//   second_share, exact_share = outputs the rounding test sent to the second path (16-bit data)
//                    and to the exact path, per output (optimized/error_bounds.h "ROUNDING TEST";
//                    targets: ≥ 1.0 out of place for f32, bf16, f16, ≥ 0.5 for f64)
// Modes: on_the_fly (cos/sin computed by the kernel), cache (an f32 cos/sin cache), in_place (on the
// fly, output = input: one read and one write stream, like the copy; out of place, the output lines
// are also read for ownership before being written), in_place_cold (in place, 1 thread, SIMD kernels:
// before each timed copy its source and destination, and before each timed kernel call its tensor,
// are evicted from every cache level, so that both read from memory: a tensor that does not stay
// in the last-level cache, as on CPUs whose L3 is smaller than it or is taken by other processes).
// The copy/* rows time the copy alone (its GB/s). decode/* times one decode step (1 token, 32 q +
// 8 k heads: the library's fixed cost per call); fill_cache/f32 the cos/sin table alone.
// CUDA (where a GPU exists; skipped otherwise): the same workload in device memory, the "cuda"
// kernel with device pointers against a device-to-device copy of the same bytes (vs_copy, target
// ≥ 0.9). Results are in bench/README.md.
#include <benchmark/benchmark.h>
#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>  // _mm_clflush, _mm_mfence (SSE2)
#endif

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include <ropecheck/kernel.h>

#include "bench/bench_util.h"
#include "optimized/c_spec.h"
#include "optimized/cuda/cuda_backend.h"
#include "optimized/exact.h"
#include "spec/spec.h"

namespace {

using namespace ropecheck::bench;  // the workload's shape, copy(), timed()

// A byte buffer aligned to 64 bytes, as framework tensors are (PyTorch's CPU allocator aligns to
// 64 bytes, c10/core/alignment.h); std::vector's large blocks start 16 bytes past a page boundary,
// which would make every other 32-byte access split a cache line.
class AlignedBytes {
 public:
  explicit AlignedBytes(std::size_t size)
      : size_(size), data_(static_cast<unsigned char*>(std::aligned_alloc(kAlignment, rounded_up(size)))) {
    if (data_ == nullptr) throw std::bad_alloc();
  }
  unsigned char* data() { return data_.get(); }
  const unsigned char* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kAlignment = 64;
  static std::size_t rounded_up(std::size_t size) { return (size + kAlignment - 1) / kAlignment * kAlignment; }
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  std::size_t size_;
  std::unique_ptr<unsigned char, Free> data_;
};

// The input: values of magnitude 2^-4 to 2^3 with random signs and significands (a fixed
// SplitMix64 sequence), the scale of a model's activations. Operands far below it (near binary32's
// subnormal range, 2^-126) make the x86 floating-point units take microcode assists on subnormal
// products, which slows the 16-bit kernels' binary32 rotation (bench/README.md "Subnormal operands"); the workload does
// not measure that case.
void fill_activations(unsigned char* out, std::int64_t count, ropecheck::Dtype dtype) {
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (std::int64_t i = 0; i < count; ++i) {
    state += 0x9E3779B97F4A7C15ull;  // SplitMix64
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const std::uint64_t sign = z >> 63;
    const std::uint64_t exponent = (z >> 52) % 7;  // 2^-4 .. 2^2 times a significand in [1, 2)
    switch (dtype) {
      case ropecheck::Dtype::f64: {
        const std::uint64_t bits = sign << 63 | (1019 + exponent) << 52 | (z & ((std::uint64_t{1} << 52) - 1));
        std::memcpy(out + 8 * i, &bits, 8);
        break;
      }
      case ropecheck::Dtype::f32: {
        const auto bits = static_cast<std::uint32_t>(sign << 31 | (123 + exponent) << 23 | (z & 0x7FFFFF));
        std::memcpy(out + 4 * i, &bits, 4);
        break;
      }
      case ropecheck::Dtype::f16: {
        const auto bits = static_cast<std::uint16_t>(sign << 15 | (11 + exponent) << 10 | (z & 0x3FF));
        std::memcpy(out + 2 * i, &bits, 2);
        break;
      }
      case ropecheck::Dtype::bf16: {
        const auto bits = static_cast<std::uint16_t>(sign << 15 | (123 + exponent) << 7 | (z & 0x7F));
        std::memcpy(out + 2 * i, &bits, 2);
        break;
      }
    }
  }
}

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
    fill_activations(input.data(), kElements, spec.dtype);
    for (std::int64_t t = 0; t < kTokens; ++t) positions[static_cast<std::size_t>(t)] = t;
    ropecheck_kernel_fill_cache(c_spec.get(), 0, kTokens, ROPECHECK_DTYPE_F32, cos_cache.data(), sin_cache.data());
    std::memset(output.data(), 0, output.size());
  }
  ropecheck_call call(bool cache, int threads) {
    ropecheck_call c = workload_call(c_spec.get(), positions.data(), input.data(), output.data(), threads);
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
  AlignedBytes input;
  AlignedBytes output;
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

// Seconds per iteration of the baselines, keyed by (what, dtype, threads): filled by the scalar
// kernel (for vs_scalar) and the device copy (for the CUDA rows' vs_copy), which are registered (and
// so run) before the rows that divide by them. The CPU rows time their copy in the same iterations.
std::map<std::tuple<std::string, std::string, int>, double>& baselines() {
  static std::map<std::tuple<std::string, std::string, int>, double> m;
  return m;
}

// Skips the benchmark with a message when this machine cannot run `implementation`.
bool skipped_as_unavailable(benchmark::State& state, const std::string& implementation) {
  if (ropecheck_kernel_available(implementation.c_str()) == 1) return false;
  state.SkipWithError((implementation + " is not available on this machine").c_str());
  return true;
}

// Whether this build can evict lines from the caches (x86 clflush): the in_place_cold rows need it.
#if defined(__x86_64__) || defined(__i386__)
constexpr bool kCanEvict = true;
#else
constexpr bool kCanEvict = false;
#endif

// Writes back and evicts every 64-byte line of [p, p + bytes) from every cache level, so that the
// next access reads memory (nothing where !kCanEvict).
void evict_from_caches(const unsigned char* p, std::size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  for (std::size_t offset = 0; offset < bytes; offset += 64) _mm_clflush(p + offset);
  _mm_mfence();
#else
  (void)p;
  (void)bytes;
#endif
}

void BM_Copy(benchmark::State& state, std::string dtype, int threads) {
  Workload& w = workload(dtype);
  for (auto _ : state) {
    state.SetIterationTime(timed([&] { copy(w.output.data(), w.input.data(), w.bytes, threads); }));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * w.bytes));
}

// Each iteration times one plain copy of the same bytes and then one kernel call, back to back, so
// that both see the same state of a shared machine (other jobs, memory bandwidth taken by other
// tenants of the host); the manual time reported is the kernel's.
void BM_Kernel(benchmark::State& state, std::string implementation, std::string mode, std::string dtype, int threads) {
  if (skipped_as_unavailable(state, implementation)) return;
  Workload& w = workload(dtype);
  ropecheck_call call = w.call(mode == "cache", threads);
  const bool cold = mode == "in_place_cold";
  if (mode == "in_place" || cold) {  // on the fly, rotating the output buffer in place (as vLLM does):
    call.q.input = w.output.data();  // the paired copy refills it with the input every iteration
  }
  if (cold && !kCanEvict) {
    state.SkipWithError("in_place_cold needs a cache-line flush instruction (x86 clflush)");
    return;
  }
  double kernel_total = 0;
  double copy_total = 0;
  double kernel_best = 1e300;
  double copy_best = 1e300;
  double kernel_cpu_total = 0;
  double copy_cpu_total = 0;
  std::vector<double> ratios;  // copy time / kernel time of each iteration
  const std::uint64_t second_before = ropecheck::kernels::second_path_outputs();
  const std::uint64_t exact_before = ropecheck::kernels::exact_path_outputs();
  for (auto _ : state) {
    if (cold) {  // outside the timed calls
      evict_from_caches(w.input.data(), w.bytes);
      evict_from_caches(w.output.data(), w.bytes);
    }
    double c_cpu = thread_cpu_seconds();
    const double c = timed([&] { copy(w.output.data(), w.input.data(), w.bytes, threads); });
    c_cpu = thread_cpu_seconds() - c_cpu;
    if (cold) evict_from_caches(w.output.data(), w.bytes);
    std::int32_t status = 0;
    double s_cpu = thread_cpu_seconds();
    const double s = timed([&] { status = ropecheck_kernel_apply(implementation.c_str(), &call); });
    s_cpu = thread_cpu_seconds() - s_cpu;
    if (status != ROPECHECK_OK) {
      state.SkipWithError(ropecheck_status_message(status));
      return;
    }
    state.SetIterationTime(s);
    kernel_total += s;
    copy_total += c;
    kernel_cpu_total += s_cpu;
    copy_cpu_total += c_cpu;
    kernel_best = std::min(kernel_best, s);
    copy_best = std::min(copy_best, c);
    ratios.push_back(c / s);
  }
  const double per_iteration = kernel_total / static_cast<double>(state.iterations());
  if (implementation == "scalar") baselines()[{"scalar-" + mode, dtype, threads}] = per_iteration;
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * w.bytes));
  state.counters["vs_copy"] = copy_total / kernel_total;
  // the share of outputs the rounding test sent to the slow paths (optimized/error_bounds.h
  // "ROUNDING TEST"): the binary64 second path of 16-bit data, and the exact path
  const double outputs = static_cast<double>(state.iterations()) *
                         static_cast<double>(w.bytes / ropecheck_dtype_size(static_cast<std::int32_t>(w.spec.dtype)));
  state.counters["second_share"] =
      static_cast<double>(ropecheck::kernels::second_path_outputs() - second_before) / outputs;
  state.counters["exact_share"] = static_cast<double>(ropecheck::kernels::exact_path_outputs() - exact_before) / outputs;
  // 1 thread: the same ratio of the calling thread's CPU time (bench_util.h thread_cpu_seconds), which
  // a shared machine's other processes do not inflate; with more threads the workers' time is not
  // the calling thread's, so it is not reported
  if (threads == 1) {
    const auto n = static_cast<double>(state.iterations());
    state.counters["vs_copy_cpu"] = copy_cpu_total / kernel_cpu_total;
    state.counters["cpu_ms"] = 1e3 * kernel_cpu_total / n;  // the kernel's, per call
    state.counters["copy_cpu_ms"] = 1e3 * copy_cpu_total / n;
  }
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
  state.counters["vs_copy_median"] = ratios[ratios.size() / 2];
  state.counters["vs_copy_min"] = copy_best / kernel_best;
  const auto scalar_time = baselines().find({"scalar-" + mode, dtype, threads});
  if (scalar_time != baselines().end()) state.counters["vs_scalar"] = scalar_time->second / per_iteration;
}

// The workload in device memory (CUDA), or unavailable.
struct DeviceWorkload {
  explicit DeviceWorkload(Workload& host)
      : input(ropecheck::kernels::cuda::device_allocate(host.bytes)),
        output(ropecheck::kernels::cuda::device_allocate(host.bytes)),
        positions(ropecheck::kernels::cuda::device_allocate(host.positions.size() * sizeof(std::int64_t))),
        cos_cache(ropecheck::kernels::cuda::device_allocate(host.cos_cache.size() * sizeof(float))),
        sin_cache(ropecheck::kernels::cuda::device_allocate(host.sin_cache.size() * sizeof(float))) {
    using ropecheck::kernels::cuda::copy_to_device;
    ok = input != nullptr && output != nullptr && positions != nullptr && cos_cache != nullptr &&
         sin_cache != nullptr && copy_to_device(input, host.input.data(), host.bytes) &&
         copy_to_device(positions, host.positions.data(), host.positions.size() * sizeof(std::int64_t)) &&
         copy_to_device(cos_cache, host.cos_cache.data(), host.cos_cache.size() * sizeof(float)) &&
         copy_to_device(sin_cache, host.sin_cache.data(), host.sin_cache.size() * sizeof(float));
  }
  ~DeviceWorkload() {
    for (void* p : {input, output, positions, cos_cache, sin_cache}) ropecheck::kernels::cuda::device_free(p);
  }
  DeviceWorkload(const DeviceWorkload&) = delete;
  DeviceWorkload& operator=(const DeviceWorkload&) = delete;
  void* input;
  void* output;
  void* positions;
  void* cos_cache;
  void* sin_cache;
  bool ok = false;
};

DeviceWorkload* device_workload(const std::string& dtype) {
  if (ropecheck_kernel_available("cuda") != 1) return nullptr;
  static std::map<std::string, std::unique_ptr<DeviceWorkload>> loads;
  auto& slot = loads[dtype];
  if (!slot) slot = std::make_unique<DeviceWorkload>(workload(dtype));
  return slot->ok ? slot.get() : nullptr;
}

void BM_CudaCopy(benchmark::State& state, std::string dtype) {
  DeviceWorkload* d = device_workload(dtype);
  if (d == nullptr) {
    state.SkipWithError("no CUDA device: cuda benchmark not run");
    return;
  }
  const std::size_t bytes = workload(dtype).bytes;
  double total = 0;
  for (auto _ : state) {
    bool copied = false;
    const double s = timed([&] { copied = ropecheck::kernels::cuda::device_copy(d->output, d->input, bytes); });
    if (!copied) {
      state.SkipWithError("device copy failed");
      return;
    }
    state.SetIterationTime(s);
    total += s;
  }
  baselines()[{"cuda-copy", dtype, 0}] = total / static_cast<double>(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * bytes));
}

void BM_CudaKernel(benchmark::State& state, std::string mode, std::string dtype) {
  DeviceWorkload* d = device_workload(dtype);
  if (d == nullptr) {
    state.SkipWithError("no CUDA device: cuda benchmark not run");
    return;
  }
  Workload& w = workload(dtype);
  ropecheck_call call = w.call(mode == "cache", 0);
  call.positions = static_cast<const std::int64_t*>(d->positions);
  call.q = ropecheck_tensor{kHeads, d->input, kHeads * kHeadDim, kHeadDim, d->output, kHeads * kHeadDim, kHeadDim};
  if (mode == "cache") {
    call.cos_cache = d->cos_cache;
    call.sin_cache = d->sin_cache;
  }
  call.device_pointers = 1;
  double total = 0;
  for (auto _ : state) {
    std::int32_t status = 0;
    const double s = timed([&] { status = ropecheck_kernel_apply("cuda", &call); });
    if (status != ROPECHECK_OK) {
      state.SkipWithError(ropecheck_status_message(status));
      return;
    }
    state.SetIterationTime(s);
    total += s;
  }
  const double per_iteration = total / static_cast<double>(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * w.bytes));
  const auto copy_time = baselines().find({"cuda-copy", dtype, 0});
  if (copy_time != baselines().end()) state.counters["vs_copy"] = copy_time->second / per_iteration;
  state.SetLabel(ropecheck::kernels::cuda::device_name());
}

// The per-token cos/sin alone: ropecheck_kernel_fill_cache of kTokens consecutive positions (the
// best CPU kernel's on-the-fly table, rounded to f32); s_per_pair = seconds per (token, pair).
void BM_FillCache(benchmark::State& state) {
  Workload& w = workload("f32");
  for (auto _ : state) {
    const std::int32_t status = ropecheck_kernel_fill_cache(w.c_spec.get(), 0, kTokens, ROPECHECK_DTYPE_F32,
                                                            w.cos_cache.data(), w.sin_cache.data());
    if (status != ROPECHECK_OK) {
      state.SkipWithError(ropecheck_status_message(status));
      return;
    }
  }
  state.counters["s_per_pair"] = benchmark::Counter(static_cast<double>(state.iterations() * kTokens * kHeadDim / 2),
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// One decode step: a single token (position kTokens − 1), 32 q heads and 8 k heads (grouped-query
// attention as in Llama 3 8B) in one call. The time per call is the library's fixed cost (argument
// checks, plan lookup) plus ~40 head rotations.
void BM_Decode(benchmark::State& state, std::string implementation) {
  if (skipped_as_unavailable(state, implementation)) return;
  Workload& w = workload("f32");
  ropecheck_call call = w.call(false, 1);
  call.tokens = 1;
  call.positions = w.positions.data() + (kTokens - 1);
  call.k = ropecheck_tensor{8, w.input.data() + w.bytes / 2, kHeads * kHeadDim, kHeadDim,
                            w.output.data() + w.bytes / 2, kHeads * kHeadDim, kHeadDim};
  for (auto _ : state) {
    const std::int32_t status = ropecheck_kernel_apply(implementation.c_str(), &call);
    if (status != ROPECHECK_OK) {
      state.SkipWithError(ropecheck_status_message(status));
      return;
    }
  }
}

const int kRegistered = [] {
  benchmark::RegisterBenchmark("fill_cache/f32", BM_FillCache)->Unit(benchmark::kMillisecond)->MinTime(0.5);
  for (const char* implementation : {"scalar", "avx2", "avx512"}) {
    benchmark::RegisterBenchmark((std::string("decode/") + implementation + "/f32").c_str(), BM_Decode,
                                 std::string(implementation))
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(0.5);
  }
  for (const char* dtype : {"f32", "bf16", "f16", "f64"}) {
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark((std::string("copy/") + dtype + "/threads:" + std::to_string(threads)).c_str(), BM_Copy,
                                   std::string(dtype), threads)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5);
      for (const char* mode : {"on_the_fly", "cache", "in_place"}) {
        for (const char* implementation : {"scalar", "avx2", "avx512", "avx512bf16"}) {
          benchmark::RegisterBenchmark(
              (std::string("kernel/") + implementation + "/" + mode + "/" + dtype + "/threads:" + std::to_string(threads)).c_str(),
              BM_Kernel, std::string(implementation), std::string(mode), std::string(dtype), threads)
              ->UseManualTime()
              ->Unit(benchmark::kMillisecond)
              ->MinTime(0.5);
        }
      }
    }
    for (const char* implementation : {"avx2", "avx512", "avx512bf16"}) {
      benchmark::RegisterBenchmark((std::string("kernel/") + implementation + "/in_place_cold/" + dtype + "/threads:1").c_str(),
                                   BM_Kernel, std::string(implementation), std::string("in_place_cold"), std::string(dtype), 1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(16);  // few: the evictions, untimed, cost far more than the timed call
    }
  }
  for (const char* dtype : {"f32", "bf16", "f16"}) {
    benchmark::RegisterBenchmark((std::string("cuda_copy/") + dtype).c_str(), BM_CudaCopy, std::string(dtype))
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(0.5);
    for (const char* mode : {"on_the_fly", "cache"}) {
      benchmark::RegisterBenchmark((std::string("kernel/cuda/") + mode + "/" + dtype).c_str(), BM_CudaKernel,
                                   std::string(mode), std::string(dtype))
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.5);
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
