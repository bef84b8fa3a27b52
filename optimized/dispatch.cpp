// The C ABI of include/ropecheck/kernel.h for ropecheck's own kernels: argument checks, the
// per-spec plan (cached), the dispatch table chosen once by CPUID, and the split of tokens across
// threads. Exceptions stop here: every entry point returns a status.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <ropecheck/kernel.h>

#include "optimized/cuda/cuda_backend.h"
#include "optimized/isa.h"
#include "optimized/plan.h"
#include "optimized/workspace.h"
#include "spec/spec.h"

namespace ropecheck::kernels {
namespace {

// The CPU kernels first, in order of preference ("auto" runs the last available one), then CUDA.
constexpr const char* kNames[] = {"scalar", "avx2", "avx512", "avx512bf16", "cuda"};
constexpr int kCount = 5;
constexpr int kCpuCount = 4;
constexpr int kCudaIndex = 4;

// The dispatch table: which CPU kernels exist in this build and run on this machine, filled once.
struct DispatchTable {
  CpuKernel cpu[kCpuCount] = {};
  bool cpu_available[kCpuCount] = {false, false, false, false};
  int best_cpu = 0;  // index into cpu[] that "auto" runs
};

const DispatchTable& table() {
  static const DispatchTable t = [] {
    DispatchTable d;
    d.cpu[0] = scalar_isa::kernel();
    d.cpu_available[0] = true;
#if ROPECHECK_HAVE_AVX2
    d.cpu[1] = avx2_isa::kernel();
    d.cpu_available[1] = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
#if ROPECHECK_HAVE_AVX512
    d.cpu[2] = avx512_isa::kernel();
    // the AVX-512 kernel also uses AVX2/FMA/F16C instructions for the 16-bit conversions
    d.cpu_available[2] = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
                         __builtin_cpu_supports("fma");
#endif
#if ROPECHECK_HAVE_AVX512BF16
    d.cpu[3] = avx512bf16_isa::kernel();
    d.cpu_available[3] = d.cpu_available[2] && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                         __builtin_cpu_supports("avx512bf16");
#endif
    for (int i = kCpuCount - 1; i >= 0; --i) {
      if (d.cpu_available[i]) {
        d.best_cpu = i;
        break;
      }
    }
    return d;
  }();
  return t;
}

// Whether the CUDA kernel runs here, asked only when "cuda" itself is named: the question
// initializes the CUDA driver, which costs the CPU kernels' callers time, and after which a
// process cannot use CUDA in a child it forks (the gate runs kernels in a forked child:
// runner/isolation.h). cuda::available() asks the driver once and keeps the answer.
bool cuda_runs_here() {
  try {
    return cuda::available();
  } catch (...) {
    return false;
  }
}

// Index in kNames of a name, kCount for "auto"/NULL, -1 when unknown.
int lookup(const char* implementation) {
  if (implementation == nullptr || std::strcmp(implementation, "auto") == 0) return kCount;
  for (int i = 0; i < kCount; ++i) {
    if (std::strcmp(implementation, kNames[i]) == 0) return i;
  }
  return -1;
}

// The implementation index that runs for a name (auto resolved), or a negative status.
int resolve_index(const char* implementation) {
  const int i = lookup(implementation);
  if (i < 0) return ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION;
  const DispatchTable& t = table();
  if (i == kCount) return t.best_cpu;
  if (i == kCudaIndex) return cuda_runs_here() ? kCudaIndex : ROPECHECK_ERROR_UNAVAILABLE;
  return t.cpu_available[i] ? i : ROPECHECK_ERROR_UNAVAILABLE;
}

// Plans are cached by the caller's spec text, so that a call with a text seen before neither
// parses it (the spec grammar's regular expressions cost more than a one-token decode call) nor
// builds the plan (the schedule in 128-bit arithmetic; bench/README.md "Plan cache"). The cache is
// the only mutable state of the library; it is bounded and mutex-protected. Texts that fail to
// parse or validate are not cached. Returns nullptr for an invalid spec.
std::shared_ptr<const Plan> cached_plan(const char* text) {
  static std::mutex mutex;
  static std::vector<std::pair<std::string, std::shared_ptr<const Plan>>> cache;
  constexpr std::size_t kCapacity = 32;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& entry : cache) {
      if (entry.first == text) return entry.second;
    }
  }
  Spec spec;
  try {
    spec = parse_spec(text);
    validate(spec);
  } catch (const SpecError&) {
    return nullptr;
  }
  auto plan = std::make_shared<const Plan>(spec);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kCapacity) cache.erase(cache.begin());
  cache.emplace_back(text, plan);
  return plan;
}

// The plan of spec->spec, after checking the decoded fields of *c_spec against it.
int plan_of(const ropecheck_spec* c_spec, std::shared_ptr<const Plan>& plan) {
  if (c_spec == nullptr || c_spec->spec == nullptr) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  plan = cached_plan(c_spec->spec);
  if (plan == nullptr) return ROPECHECK_ERROR_INVALID_SPEC;
  const Spec& s = plan->spec();
  const bool consistent = c_spec->layout == static_cast<int>(s.layout) && c_spec->head_dim == s.head_dim &&
                          c_spec->rotary_dim == s.rotary_dim &&
                          c_spec->direction == static_cast<int>(s.direction) &&
                          c_spec->dtype == static_cast<int>(s.dtype) &&
                          c_spec->scaling == static_cast<int>(s.scaling.type) &&
                          c_spec->axes == static_cast<int>(s.axes.kind) &&
                          c_spec->position_components == position_components(s);
  return consistent ? ROPECHECK_OK : ROPECHECK_ERROR_INVALID_SPEC;
}

bool valid_dtype(std::int32_t d) { return d >= ROPECHECK_DTYPE_F64 && d <= ROPECHECK_DTYPE_BF16; }

// Output rows must not overlap (kernel.h "tensors"); in place needs equal strides.
int check_tensor(const ropecheck_tensor& t, std::int64_t tokens, int head_dim, bool required) {
  if (t.heads < 0) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  if (t.heads == 0) return required ? ROPECHECK_ERROR_INVALID_ARGUMENT : ROPECHECK_OK;
  if (tokens == 0) return ROPECHECK_OK;
  if (t.input == nullptr || t.output == nullptr) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  if (t.heads > 1 && t.output_head_stride < head_dim) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  if (tokens > 1 && t.output_token_stride < (t.heads - 1) * t.output_head_stride + head_dim) {
    return ROPECHECK_ERROR_INVALID_ARGUMENT;
  }
  if (t.input == t.output &&
      ((t.heads > 1 && t.input_head_stride != t.output_head_stride) ||
       (tokens > 1 && t.input_token_stride != t.output_token_stride))) {
    return ROPECHECK_ERROR_INVALID_ARGUMENT;
  }
  return ROPECHECK_OK;
}

TensorView view_of(const ropecheck_tensor& t) {
  TensorView v;
  v.heads = t.heads;
  v.input = t.input;
  v.input_token_stride = t.input_token_stride;
  v.input_head_stride = t.input_head_stride;
  v.output = t.output;
  v.output_token_stride = t.output_token_stride;
  v.output_head_stride = t.output_head_stride;
  return v;
}

// The output size from which the kernels store the rotated pairs non-temporally: an output this
// large has left the core's caches before the next operation reads it, so writing it without first
// reading its lines for ownership saves one of the three memory streams of an out-of-place call
// (glibc's memcpy switches to non-temporal stores at a similar size, 3/4 of a share of the
// last-level cache). Below it, plain stores leave the output in cache for its reader.
constexpr std::int64_t kStreamingThresholdBytes = std::int64_t{16} << 20;

// Whether a CPU call stores non-temporally (CallView::streaming_stores): f32 data, or 16-bit data
// rotated in binary32; every tensor out of place; every head's output row and, in the half layout,
// its second half (rotary_dim/2 elements in) 64-byte aligned, so that every vector store of every
// ISA is aligned to its width (at most 64 bytes); outputs of kStreamingThresholdBytes or more.
bool streaming_stores_pay(const CallView& view, std::int64_t tokens) {
  const PlanView& plan = view.plan;
  const bool binary32 = plan.rotate_binary32 && view.cos_cache == nullptr;
  const bool f64 = plan.dtype == DtypeCode::f64 && view.cos_cache == nullptr;  // kernel_f64-inl.h
  if (!(plan.dtype == DtypeCode::f32 || binary32 || f64)) return false;
  const std::int64_t element = ropecheck_dtype_size(static_cast<std::int32_t>(plan.dtype));
  if (plan.layout == LayoutCode::half && plan.pairs * element % 64 != 0) return false;
  std::int64_t bytes = 0;
  for (const TensorView* t : {&view.q, &view.k}) {
    if (t->heads == 0) continue;
    if (t->input == t->output || reinterpret_cast<std::uintptr_t>(t->output) % 64 != 0) return false;
    if (t->heads > 1 && t->output_head_stride * element % 64 != 0) return false;
    if (tokens > 1 && t->output_token_stride * element % 64 != 0) return false;
    bytes += tokens * t->heads * plan.head_dim * element;
  }
  return bytes >= kStreamingThresholdBytes;
}

// Splits tokens over threads; small calls stay on the calling thread.
void run_threaded(const CpuKernel& kernel, const CallView& view, std::int64_t tokens, int threads) {
  const std::int64_t pairs = view.plan.pairs;
  const std::int64_t heads = view.q.heads + view.k.heads;
  const std::int64_t work_per_token = std::max<std::int64_t>(1, heads * view.plan.head_dim + 8 * pairs);
  constexpr std::int64_t kMinWorkPerThread = 1 << 15;  // elements: below this a thread costs more than it saves
  std::int64_t workers = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min(workers, std::max<std::int64_t>(1, tokens * work_per_token / kMinWorkPerThread));
  workers = std::min(workers, std::max<std::int64_t>(1, tokens));
  if (workers == 1) {
    const WorkspaceStorage work(view.plan.pairs);
    kernel.process_tokens(view, 0, tokens, work.view());
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers));
  for (std::int64_t w = 0; w < workers; ++w) {
    const std::int64_t begin = tokens * w / workers;
    const std::int64_t end = tokens * (w + 1) / workers;
    pool.emplace_back([&kernel, &view, begin, end] {
      const WorkspaceStorage work(view.plan.pairs);
      kernel.process_tokens(view, begin, end, work.view());
    });
  }
  for (auto& thread : pool) thread.join();
}

int apply(const char* implementation, const ropecheck_call* call) {
  if (call == nullptr) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  const int index = resolve_index(implementation);
  if (index < 0) return index;
  std::shared_ptr<const Plan> plan;
  if (const int status = plan_of(call->spec, plan); status != ROPECHECK_OK) return status;
  const Spec& spec = plan->spec();
  // One element type per call (kernel.h): a spec with another input dtype is not computed here.
  if (spec.input_dtype && *spec.input_dtype != spec.dtype) return ROPECHECK_ERROR_UNSUPPORTED;
  if (call->tokens < 0 || call->threads < 0) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  if (call->tokens > 0 && call->positions == nullptr) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  if (int s = check_tensor(call->q, call->tokens, spec.head_dim, true); s != ROPECHECK_OK) return s;
  if (int s = check_tensor(call->k, call->tokens, spec.head_dim, false); s != ROPECHECK_OK) return s;
  const bool cache = call->cos_cache != nullptr;
  if (cache != (call->sin_cache != nullptr)) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  const int pairs = spec.rotary_dim / 2;
  const int components = position_components(spec);
  if (cache) {
    if (!valid_dtype(call->cache_dtype) || call->cache_rows < 0 || call->cache_row_stride < pairs) {
      return ROPECHECK_ERROR_INVALID_ARGUMENT;
    }
  }
  if (call->device_pointers != 0 && index != kCudaIndex) return ROPECHECK_ERROR_UNSUPPORTED;
  if (cache && call->device_pointers == 0) {  // every row looked up must exist
    const std::int64_t n = call->tokens * components;
    for (std::int64_t i = 0; i < n; ++i) {
      if (call->positions[i] < 0 || call->positions[i] >= call->cache_rows) return ROPECHECK_ERROR_INVALID_ARGUMENT;
    }
  }
  if (call->tokens == 0) return ROPECHECK_OK;

  if (!plan->frequencies_in_proven_range()) return ROPECHECK_ERROR_UNSUPPORTED;
  CallView view;
  view.plan = plan->view();
  view.positions = call->positions;
  view.q = view_of(call->q);
  view.k = view_of(call->k);
  if (cache) {
    view.cos_cache = call->cos_cache;
    view.sin_cache = call->sin_cache;
    view.cache_dtype = static_cast<DtypeCode>(call->cache_dtype);
    view.cache_row_stride = call->cache_row_stride;
  }
  if (index == kCudaIndex) return cuda::apply(view, call->tokens, call->device_pointers != 0, call->cache_rows);
  view.streaming_stores = streaming_stores_pay(view, call->tokens);
  run_threaded(table().cpu[index], view, call->tokens, call->threads);
  return ROPECHECK_OK;
}

int fill_cache(const ropecheck_spec* c_spec, std::int64_t first_position, std::int64_t rows, std::int32_t dtype,
               void* cos_cache, void* sin_cache) {
  std::shared_ptr<const Plan> plan;
  if (const int status = plan_of(c_spec, plan); status != ROPECHECK_OK) return status;
  if (rows < 0 || !valid_dtype(dtype)) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  if (rows > 0 && (cos_cache == nullptr || sin_cache == nullptr)) return ROPECHECK_ERROR_INVALID_ARGUMENT;
  if (position_components(plan->spec()) > 16) return ROPECHECK_ERROR_UNSUPPORTED;
  if (!plan->frequencies_in_proven_range()) return ROPECHECK_ERROR_UNSUPPORTED;
  PlanView view = plan->view();
  // an f64 cache gets the precise angles even for a spec whose data is f32/f16/bf16
  view.precise_angles = view.precise_angles || dtype == ROPECHECK_DTYPE_F64;
  const CpuKernel& kernel = table().cpu[table().best_cpu];
  const std::int64_t pairs = view.pairs;
  const std::size_t element = ropecheck_dtype_size(dtype);
  constexpr std::int64_t kChunk = 256;  // rows per batch
  const WorkspaceStorage work(view.pairs);
  std::vector<double> cos_rows(static_cast<std::size_t>(kChunk * pairs));
  std::vector<double> sin_rows(static_cast<std::size_t>(kChunk * pairs));
  for (std::int64_t row = 0; row < rows; row += kChunk) {
    const std::int64_t n = std::min(kChunk, rows - row);
    kernel.cos_sin_rows(view, first_position + row, n, work.view(), cos_rows.data(), sin_rows.data());
    const std::size_t offset = static_cast<std::size_t>(row * pairs) * element;
    kernel.round_doubles(cos_rows.data(), n * pairs, static_cast<DtypeCode>(dtype), static_cast<char*>(cos_cache) + offset);
    kernel.round_doubles(sin_rows.data(), n * pairs, static_cast<DtypeCode>(dtype), static_cast<char*>(sin_cache) + offset);
  }
  return ROPECHECK_OK;
}

}  // namespace
}  // namespace ropecheck::kernels

extern "C" {

uint32_t ropecheck_kernel_abi_version(void) { return ROPECHECK_KERNEL_ABI_VERSION; }

int32_t ropecheck_kernel_count(void) { return ropecheck::kernels::kCount; }

const char* ropecheck_kernel_name(int32_t index) {
  if (index < 0 || index >= ropecheck::kernels::kCount) return nullptr;
  return ropecheck::kernels::kNames[index];
}

int32_t ropecheck_kernel_available(const char* implementation) {
  const int index = ropecheck::kernels::resolve_index(implementation);
  if (index == ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION) return index;
  return index >= 0 ? 1 : 0;
}

const char* ropecheck_kernel_resolve(const char* implementation) {
  const int index = ropecheck::kernels::resolve_index(implementation);
  return index >= 0 ? ropecheck::kernels::kNames[index] : nullptr;
}

int32_t ropecheck_kernel_apply(const char* implementation, const ropecheck_call* call) {
  try {
    return ropecheck::kernels::apply(implementation, call);
  } catch (const std::bad_alloc&) {
    return ROPECHECK_ERROR_INTERNAL;
  } catch (const std::exception&) {
    return ROPECHECK_ERROR_INTERNAL;
  }
}

int32_t ropecheck_kernel_fill_cache(const ropecheck_spec* spec, int64_t first_position, int64_t rows,
                                    int32_t cache_dtype, void* cos_cache, void* sin_cache) {
  try {
    return ropecheck::kernels::fill_cache(spec, first_position, rows, cache_dtype, cos_cache, sin_cache);
  } catch (const std::exception&) {
    return ROPECHECK_ERROR_INTERNAL;
  }
}

}  // extern "C"
