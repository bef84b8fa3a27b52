// ggml's RoPE side by side with the project's kernel and memcpy: llama.cpp's
// ggml_rope_ext (the CPU library of peers/ggml, built from source by peers/ggml/build_ggml.sh, its
// best variant in the folder on this machine) on 4096 tokens × 32 heads × 128 dims, half layout
// (ggml mode 2, NEOX), base 500000, f32 and f16, 1 and 2 threads. GB/s counts input + output bytes,
// as in kernel_bench.
//
// Per dtype, one ggml context and graph are built once, on its first row: a = F32 or F16
// [128, 32, 4096] (ggml's ne order), positions = I32 0..4095, out = ggml_rope_ext(a, positions),
// computed out of place into its own tensor by ggml_graph_compute_with_ctx(ctx, graph, threads).
// Every iteration of a row times, back to back on the same two buffers (a's data → out's data), so
// that all three see the same state of a shared machine:
//   memcpy of the same bytes (split over the same threads),
//   the project's "auto" kernel, out of place (layout=half,head_dim=128,base=500000,dtype=f32|f16),
//   ggml's graph compute (the row's manual time, its GB/s),
// the last two in alternating order (no position in the sequence favours either). Counters:
//   vs_copy        = Σ copy / Σ ggml         (ggml against memcpy)
//   vs_kernel      = Σ kernel / Σ ggml       (ggml against the project's kernel; < 1: ggml slower)
//   vs_kernel_median = median over iterations of kernel time / ggml time
//   kernel_vs_copy = Σ copy / Σ kernel       (the project's kernel against memcpy, as kernel_bench)
//   copy_GB/s, kernel_GB/s                    (the baselines' own throughput in these iterations)
//   max_diff       = max |ggml − kernel| over all outputs, checked once (below)
// Where the libraries are: $ROPECHECK_GGML_DIR, else --ggml_dir=DIR (a folder of build_ggml.sh:
// build/peers/ggml/fma or build/peers/ggml/nofma); without either (or without a variant this CPU
// runs) every row is skipped with the reason. Results: bench/README.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <ropecheck/kernel.h>

#include "bench/bench_util.h"
#include "optimized/c_spec.h"
#include "peers/ggml/ggml_api.h"
#include "spec/spec.h"

namespace {

using namespace ropecheck::bench;  // the workload's shape, copy(), timed()

// The two dtypes timed: ggml's F32 and F16 tensors, the project's f32 and f16.
enum class Dtype { f32, f16 };
const char* dtype_name(Dtype d) { return d == Dtype::f32 ? "f32" : "f16"; }
std::size_t element_size(Dtype d) { return d == Dtype::f32 ? 4 : 2; }
std::size_t bytes_of(Dtype d) { return static_cast<std::size_t>(kElements) * element_size(d); }
std::string spec_text(Dtype d) { return std::string("layout=half,head_dim=128,base=500000,dtype=") + dtype_name(d); }

// binary16 of a float that binary16 holds exactly (the inputs: k/32, |k| <= 31), and a binary16 as
// float (outputs: zero, subnormal, normal; inf/NaN as such).
std::uint16_t half_of_exact(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  if ((b & 0x7fffffffu) == 0) return sign;
  const int exponent = static_cast<int>((b >> 23) & 0xff) - 127 + 15;  // normal in binary16 here
  return static_cast<std::uint16_t>(sign | (exponent << 10) | ((b >> 13) & 0x3ffu));
}
float float_of_half(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  float v;
  if (exponent == 0) {
    v = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    v = mantissa != 0 ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
  }
  return (h & 0x8000) ? -v : v;
}

#define PEERS_BENCH_ISA(isa) #isa,
constexpr const char* kIsas[] = {GGML_CPU_VARIANTS(PEERS_BENCH_ISA)};
#undef PEERS_BENCH_ISA
constexpr int kVariants = static_cast<int>(sizeof(kIsas) / sizeof(kIsas[0]));

// Room in the context for the work buffers: ggml_graph_compute_with_ctx takes a new one from the
// context on every call (ggml_api.h). For a rope node it is threads × (ne0 floats + one cache line)
// plus an object header, under 2 KiB for 2 threads (work_bound below), so 64 MiB serves > 30000
// calls; the pages are never touched unless used. A row stops with an error before ggml would
// abort on a full context.
constexpr std::size_t kWorkRoom = std::size_t{64} << 20;

// The largest |ggml − kernel| the check accepts (f32 and f16: f16's own rounding, 2^−11 relative,
// adds < 0.002 at these magnitudes). ggml's float32 running-product angle
// (peers/ggml/README.md) is off by up to ~43 ulps of θ_j·p: at p ≤ 4095, θ_1 = 500000^(−1/64) ≈ 0.815,
// that is ≤ 3340 · 43 · 2^−24 ≈ 0.0086 rad, so an output of a pair with |x|, |y| ≤ 1 moves by at most
// 0.0086·√2 ≈ 0.012 (pair 0: θ_0 = 1 is exact, only the float angle's rounding). A wrong mode (pair
// (2j, 2j+1) instead of (j, j+64)) or base differs by O(1) almost everywhere.
constexpr double kMaxDiff = 0.02;

// Input element i: deterministic values in [−1, 1) (the same bytes every run).
float input_value(std::size_t i) { return static_cast<float>(static_cast<int>((i * 37 + 11) % 63) - 31) / 32.0f; }

// The best ggml variant of the folder (loaded once, shared by the dtypes), or why not.
struct GgmlLib {
  explicit GgmlLib(const std::string& dir) {
    // Every variant is loaded and scored, as llama.cpp's registry does; the handles stay open for
    // the life of the process, as in the plugin (ggml keeps no state we could close them against).
    // A folder of build_ggml.sh holds one variant: the absent ones are only a reason when none loads.
    std::vector<ggml_variant> variants(kVariants);
    std::string reasons;
    for (int i = 0; i < kVariants; ++i) {
      const char* what = nullptr;
      const char* detail = nullptr;
      if (!ggml_variant_load(&variants[static_cast<std::size_t>(i)], dir.c_str(), kIsas[i], &what, &detail) &&
          what != nullptr && reasons.empty()) {
        reasons = std::string(what) + (detail ? std::string(": ") + detail : std::string());
      }
    }
    const int best = ggml_best_variant(variants.data(), kVariants);
    if (best < 0) {
      error = "ggml not loaded (" + (reasons.empty() ? std::string("no variant runs on this CPU") : reasons) +
              "): ggml rows not run";
      return;
    }
    api = variants[static_cast<std::size_t>(best)].api;
    name = std::string("ggml-") + kIsas[best] + " " + api.version();
  }
  ggml_api api{};
  std::string name;   // "ggml-haswell 0.25.3"
  std::string error;  // empty when loaded
};

// The context and graph of the workload in one dtype, or why not.
class GgmlRope {
 public:
  GgmlRope(const GgmlLib& lib, Dtype dtype) : api_(lib.api), dtype_(dtype), bytes_(bytes_of(dtype)) {
    error_ = lib.error;
    if (error_.empty()) build();
  }
  ~GgmlRope() {
    if (ctx_ != nullptr) api_.free_context(ctx_);
  }
  GgmlRope(const GgmlRope&) = delete;
  GgmlRope& operator=(const GgmlRope&) = delete;

  const std::string& error() const { return error_; }  // empty when the rows can run
  double max_diff() const { return max_diff_; }
  std::size_t bytes() const { return bytes_; }  // of the input (= of the output)
  unsigned char* input() const { return static_cast<unsigned char*>(api_.get_data(a_)); }
  unsigned char* output() const { return static_cast<unsigned char*>(api_.get_data(out_)); }
  const std::int64_t* positions() const { return positions_.data(); }

  // False when the context has no room left for one more call's work buffer.
  bool room_for_a_call(int threads) const {
    return api_.get_mem_size(ctx_) - api_.used_mem(ctx_) >= work_bound(threads);
  }
  bool compute(int threads) { return api_.graph_compute_with_ctx(ctx_, graph_, threads) == GGML_STATUS_SUCCESS; }

  // Checks once that ggml computes the rotation the project's kernel computes: max |ggml − kernel|
  // ≤ kMaxDiff over every output (else error()).
  void check(const ropecheck_call& call) {
    if (ropecheck_kernel_apply("auto", &call) != ROPECHECK_OK) {
      error_ = "the project's kernel failed on the workload";
      return;
    }
    const std::vector<float> kernel = output_values();
    if (!compute(1)) {
      error_ = "ggml_graph_compute_with_ctx failed";
      return;
    }
    const std::vector<float> ggml = output_values();
    for (std::size_t i = 0; i < kernel.size(); ++i) {
      max_diff_ = std::max(max_diff_, std::fabs(static_cast<double>(ggml[i]) - kernel[i]));
    }
    if (!(max_diff_ <= kMaxDiff)) {  // also catches a NaN
      error_ = "ggml's output differs from the project's kernel by " + std::to_string(max_diff_) + " (> " +
               std::to_string(kMaxDiff) + "): not the same rotation";
    }
  }

 private:
  std::vector<float> output_values() const {
    std::vector<float> v(static_cast<std::size_t>(kElements));
    if (dtype_ == Dtype::f32) {
      std::memcpy(v.data(), output(), bytes_);
    } else {
      const auto* h = reinterpret_cast<const std::uint16_t*>(output());
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = float_of_half(h[i]);
    }
    return v;
  }
  std::size_t work_bound(int threads) const {
    return static_cast<std::size_t>(threads) * (kHeadDim * sizeof(float) + 64) + api_.tensor_overhead() + 64;
  }
  void build() {
    ggml_init_params init{};
    init.mem_size = 2 * bytes_ + kTokens * sizeof(std::int32_t) + 8 * api_.tensor_overhead() + api_.graph_overhead() +
                    kWorkRoom;
    init.mem_buffer = nullptr;
    init.no_alloc = false;
    ctx_ = api_.init(init);
    if (ctx_ == nullptr) {
      error_ = "ggml_init failed";
      return;
    }
    a_ = api_.new_tensor_3d(ctx_, dtype_ == Dtype::f32 ? GGML_TYPE_F32 : GGML_TYPE_F16, kHeadDim, kHeads, kTokens);
    ggml_tensor* pos = api_.new_tensor_1d(ctx_, GGML_TYPE_I32, kTokens);
    for (std::size_t i = 0; i < static_cast<std::size_t>(kElements); ++i) {
      if (dtype_ == Dtype::f32) {
        static_cast<float*>(api_.get_data(a_))[i] = input_value(i);
      } else {
        static_cast<std::uint16_t*>(api_.get_data(a_))[i] = half_of_exact(input_value(i));
      }
    }
    auto* p = static_cast<std::int32_t*>(api_.get_data(pos));
    positions_.resize(kTokens);
    for (std::int64_t t = 0; t < kTokens; ++t) {
      p[t] = static_cast<std::int32_t>(t);
      positions_[static_cast<std::size_t>(t)] = t;
    }
    // n_dims 128, mode 2 (NEOX = half layout), n_ctx_orig 0, freq_base 500000, freq_scale 1,
    // ext_factor 0 (no YaRN), attn_factor 1, beta_fast 32, beta_slow 1 (llama.cpp's defaults).
    out_ = api_.rope_ext(ctx_, a_, pos, nullptr, static_cast<int>(kHeadDim), GGML_ROPE_TYPE_NEOX, 0, 500000.0f, 1.0f,
                         0.0f, 1.0f, 32.0f, 1.0f);
    graph_ = api_.new_graph(ctx_);
    api_.build_forward_expand(graph_, out_);
  }

  ggml_api api_{};
  Dtype dtype_;
  std::size_t bytes_;
  ggml_context* ctx_ = nullptr;
  ggml_tensor* a_ = nullptr;
  ggml_tensor* out_ = nullptr;
  ggml_cgraph* graph_ = nullptr;
  std::vector<std::int64_t> positions_;
  std::string error_;
  double max_diff_ = 0;
};

// The project's side: the spec, and a call of the "auto" kernel from a's data to out's data.
struct Kernel {
  explicit Kernel(Dtype dtype) : spec(ropecheck::parse_spec(spec_text(dtype))), c_spec(spec) {}
  ropecheck_call call(GgmlRope& g, int threads) const {
    return workload_call(c_spec.get(), g.positions(), g.input(), g.output(), threads);
  }
  ropecheck::Spec spec;
  ropecheck::kernels::CSpec c_spec;
};

// Loads ggml and builds each dtype's workload on first use (the rows of a dtype share it), checked
// against the kernel.
class Shared {
 public:
  explicit Shared(std::string dir) : dir_(std::move(dir)), kernels_{Kernel(Dtype::f32), Kernel(Dtype::f16)} {}
  GgmlRope& ggml(Dtype dtype) {
    if (!lib_) lib_ = std::make_unique<GgmlLib>(dir_);
    auto& g = ggml_[static_cast<int>(dtype)];
    if (!g) {
      g = std::make_unique<GgmlRope>(*lib_, dtype);
      if (g->error().empty()) g->check(kernel(dtype).call(*g, 1));
    }
    return *g;
  }
  const Kernel& kernel(Dtype dtype) const { return kernels_[static_cast<int>(dtype)]; }
  const std::string& name() const { return lib_->name; }

 private:
  std::string dir_;
  Kernel kernels_[2];
  std::unique_ptr<GgmlLib> lib_;
  std::unique_ptr<GgmlRope> ggml_[2];
};

void BM_SideBySide(benchmark::State& state, Shared& shared, Dtype dtype, int threads) {
  GgmlRope& g = shared.ggml(dtype);
  if (!g.error().empty()) {
    state.SkipWithError(g.error().c_str());
    return;
  }
  const ropecheck_call call = shared.kernel(dtype).call(g, threads);
  double copy_total = 0;
  double kernel_total = 0;
  double ggml_total = 0;
  std::vector<double> ratios;  // kernel time / ggml time of each iteration
  bool kernel_first = true;
  for (auto _ : state) {
    if (!g.room_for_a_call(threads)) {
      state.SkipWithError("ggml context full (kWorkRoom): fewer iterations, or a larger room");
      return;
    }
    std::int32_t status = ROPECHECK_OK;
    bool computed = true;
    const double c = timed([&] { copy(g.output(), g.input(), g.bytes(), threads); });
    double k = 0;
    double s = 0;
    const auto run_kernel = [&] { k = timed([&] { status = ropecheck_kernel_apply("auto", &call); }); };
    const auto run_ggml = [&] { s = timed([&] { computed = g.compute(threads); }); };
    if (kernel_first) {
      run_kernel();
      run_ggml();
    } else {
      run_ggml();
      run_kernel();
    }
    kernel_first = !kernel_first;
    if (status != ROPECHECK_OK || !computed) {
      state.SkipWithError(status != ROPECHECK_OK ? ropecheck_status_message(status) : "ggml_graph_compute_with_ctx failed");
      return;
    }
    state.SetIterationTime(s);
    copy_total += c;
    kernel_total += k;
    ggml_total += s;
    ratios.push_back(k / s);
  }
  const double bytes = 2.0 * static_cast<double>(g.bytes()) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["vs_copy"] = copy_total / ggml_total;
  state.counters["vs_kernel"] = kernel_total / ggml_total;
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
  state.counters["vs_kernel_median"] = ratios[ratios.size() / 2];
  state.counters["kernel_vs_copy"] = copy_total / kernel_total;
  state.counters["copy_GB/s"] = bytes / copy_total / 1e9;
  state.counters["kernel_GB/s"] = bytes / kernel_total / 1e9;
  state.counters["max_diff"] = g.max_diff();
  state.SetLabel(shared.name() + " vs " + ropecheck_kernel_resolve("auto"));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--ggml_dir=", 0) == 0) {
      dir = arg.substr(std::strlen("--ggml_dir="));
    } else {
      std::fprintf(stderr, "peers_bench: unknown argument '%s' (expected --ggml_dir=DIR or --benchmark_* flags)\n",
                   argv[i]);
      return 2;
    }
  }
  if (const char* env = std::getenv("ROPECHECK_GGML_DIR")) dir = env;  // the environment overrides
  Shared shared(dir);
  for (Dtype dtype : {Dtype::f32, Dtype::f16}) {
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark(
          ("ggml_rope_ext/best/" + std::string(dtype_name(dtype)) + "/threads:" + std::to_string(threads)).c_str(),
          [&shared, dtype, threads](benchmark::State& state) { BM_SideBySide(state, shared, dtype, threads); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
