// The "cuda" implementation of include/ropecheck/kernel.h (sm_80 and sm_90, built with
// --fmad=false: optimized/CMakeLists.txt).
//
// Same numerics as the CPU kernels, from the same source: the per-lane math (exact 128-bit phase,
// reduction, cos/sin polynomials, quadrant and signs, attention factor, rotation) is
// optimized/angle-inl.h and the 16-bit conversions optimized/convert-inl.h, instantiated here with
// the one-lane ScalarOps and ScalarOps32 (ops_scalar-inl.h), whose operations are IEEE binary64 /
// binary32 with explicit fused multiply-adds on the device too (--fmad=false forbids any other
// contraction); 16-bit data on the fly with PlanView::rotate_binary32 rotates in binary32 with the
// cos/sin rounded to binary32, as the CPU kernels do (kernel-inl.h process_binary32). So the
// outputs are bit-identical to the CPU kernels' and the bounds of optimized/error_bounds.h apply
// unchanged. The plan (the 0.128 fixed-point phase steps of spec/schedule.h, computed on the host
// by plan.cpp) is copied to the device.
//
// Work split: one block per token (grid-stride over tokens). The block first computes cos/sin of
// the token's pairs (up to kChunkPairs at a time) into shared memory, one thread per pair, then
// every thread rotates pairs of every head of q and k with them (consecutive threads take
// consecutive pairs: coalesced for the half layout; each thread loads kItemsPerRound pairs before
// it stores any, to keep loads in flight; 16-bit data four pairs at a time in 8-byte words), then
// copies the pass-through dims. 16-bit conversions use the device's cvt instructions
// (convert-inl.h: same bits as the integer code, NaNs aside, which take that code; in the 8-byte
// words binary16 is read by an exact product and written two values per cvt.rn.f16x2.f32).
//
// Pointers: with device_pointers = 0 (kernel.h) every pointer is host memory: this file copies the
// spans of the tensors, positions and cache to the device, runs, and copies the outputs back
// (output spans with gaps — padding between strided rows — are first copied in, so padding bytes
// come back unchanged). With device_pointers = 1 they are used as they are, and the cache rows
// are checked on the device before anything is written.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <ropecheck/kernel.h>

#include "optimized/cuda/cuda_backend.h"
#include "optimized/host_device.h"
#include "optimized/kernel_types.h"

namespace ropecheck::kernels::cuda {
namespace lane {

#include "optimized/convert-inl.h"
#include "optimized/ops_scalar-inl.h"
#include "optimized/angle-inl.h"

}  // namespace lane

namespace {

using lane::ScalarOps;
using lane::ScalarOps32;

// 64 threads: one per pair of a head_dim-128 table, so that no thread waits while the table is
// computed, and small blocks (6 KiB of shared memory, 64 registers a thread) let 16 tokens be in
// flight per SM, one's table computed while others move data; on an H200 16-bit data on the fly
// ran at 0.65 (256 threads), 0.76 (128) and 0.84 (64) of cudaMemcpy's speed (bench/README.md).
constexpr int kThreadsPerBlock = 64;
constexpr int kChunkPairs = 256;  // cos/sin entries per shared-memory chunk (4 KiB, and 2 KiB in binary32)
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;

// A call whose pointers are all device pointers.
struct DeviceCall {
  PlanView plan;  // step_hi, step_lo, component: device arrays
  std::int64_t tokens = 0;
  const std::int64_t* positions = nullptr;
  TensorView q;
  TensorView k;
  const void* cos_cache = nullptr;  // nullptr: on the fly
  const void* sin_cache = nullptr;
  DtypeCode cache_dtype = DtypeCode::f32;
  std::int64_t cache_row_stride = 0;
  // Whether q's / k's 16-bit data may move in 8-byte words (rotate_chunk_packed; set by launch).
  bool q_packed = false;
  bool k_packed = false;
};

template <class C>
__device__ void load_cache_entry(const DeviceCall& call, std::int64_t row, int j, double& c, double& s) {
  const std::int64_t offset = row * call.cache_row_stride + j;
  c = ScalarOps::load(static_cast<const C*>(call.cos_cache) + offset);
  const double sine = ScalarOps::load(static_cast<const C*>(call.sin_cache) + offset);
  s = call.plan.inverse ? -sine : sine;  // as the CPU kernels' load_cache
}

// cos/sin of pair j of the token whose position tuple is position_row.
__device__ void token_entry(const DeviceCall& call, const std::int64_t* position_row, int j, double& c, double& s) {
  const std::int64_t position = position_row[call.plan.component[j]];
  if (call.cos_cache == nullptr) {
    lane::pair_cos_sin(call.plan, position, j, c, s);
    return;
  }
  switch (call.cache_dtype) {
    case DtypeCode::f64: load_cache_entry<double>(call, position, j, c, s); break;
    case DtypeCode::f32: load_cache_entry<float>(call, position, j, c, s); break;
    case DtypeCode::f16: load_cache_entry<F16>(call, position, j, c, s); break;
    case DtypeCode::bf16: load_cache_entry<BF16>(call, position, j, c, s); break;
  }
}

// Work items w = h·width + i (head h, item i of `width` per head) taken by one thread: w, w + stride,
// w + 2·stride, ... with (h, i) advanced by additions (a 64-bit division per item costs more than
// the item's rotation).
struct ItemWalk {
  __device__ ItemWalk(int width, int start, int stride)
      : width(width), step_h(stride / width), step_i(stride % width), h(start / width), i(start % width) {}
  __device__ void next() {
    h += step_h;
    i += step_i;
    if (i >= width) {
      i -= width;
      ++h;
    }
  }
  int width;
  int step_h;
  int step_i;
  std::int64_t h;
  int i;
};

// Items per thread per round: a round issues the loads of all its items before the first store, so
// each thread keeps 2·kItemsPerRound loads in flight. The compiler cannot hoist loads above the
// previous item's stores itself: input and output may be the same memory (in place).
constexpr int kItemsPerRound = 4;

// Pairs [chunk_begin, chunk_begin + chunk) of every head of one token of one tensor. binary32: the
// rotation of 16-bit data on the fly in binary32 with cos/sin rounded to binary32 (cos32_s, sin32_s:
// rounded once per token, as the CPU kernels' process_binary32; only 16-bit element types reach it).
template <class T>
__device__ void rotate_chunk(const PlanView& plan, const TensorView& tensor, std::int64_t token, int chunk_begin,
                             int chunk, const double* cos_s, const double* sin_s, const float* cos32_s,
                             const float* sin32_s, bool binary32) {
  const T* in = static_cast<const T*>(tensor.input) + token * tensor.input_token_stride;
  T* out = static_cast<T*>(tensor.output) + token * tensor.output_token_stride;
  const bool half = plan.layout == LayoutCode::half;
  ItemWalk walk(chunk, static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x));
  while (walk.h < tensor.heads) {
    T x[kItemsPerRound];
    T y[kItemsPerRound];
    std::int64_t out_offset[kItemsPerRound];
    int first[kItemsPerRound];
    int second[kItemsPerRound];
    int item[kItemsPerRound];
    bool live[kItemsPerRound];
#pragma unroll
    for (int u = 0; u < kItemsPerRound; ++u) {
      live[u] = walk.h < tensor.heads;
      item[u] = walk.i;
      const int j = chunk_begin + walk.i;
      first[u] = half ? j : 2 * j;
      second[u] = half ? j + plan.pairs : 2 * j + 1;
      out_offset[u] = walk.h * tensor.output_head_stride;
      if (live[u]) {
        const T* in_head = in + walk.h * tensor.input_head_stride;
        x[u] = in_head[first[u]];
        y[u] = in_head[second[u]];
      }
      walk.next();
    }
#pragma unroll
    for (int u = 0; u < kItemsPerRound; ++u) {
      if (!live[u]) continue;
      T* out_head = out + out_offset[u];
      const int i = item[u];
      if constexpr (sizeof(T) == 2) {
        if (binary32) {
          float a;
          float b;
          lane::rotate<ScalarOps32>(ScalarOps32::load(&x[u]), ScalarOps32::load(&y[u]), cos32_s[i], sin32_s[i], a, b);
          ScalarOps32::store(out_head + first[u], a);
          ScalarOps32::store(out_head + second[u], b);
          continue;
        }
      }
      double a;
      double b;
      lane::rotate<ScalarOps>(ScalarOps::load(&x[u]), ScalarOps::load(&y[u]), cos_s[i], sin_s[i], a, b);
      ScalarOps::store(out_head + first[u], a);
      ScalarOps::store(out_head + second[u], b);
    }
  }
}

// 16-bit data rotated in binary32 (rotate_chunk's binary32 case) kPackedPairs pairs per work item,
// moved as two 8-byte words — in the half layout the item's 4 x's and its 4 y's, in the
// interleaved one its pairs 0–1 and 2–3 — so that a warp moves 256 bytes per load or store
// instruction where rotate_chunk moves 64 (one 2-byte element per lane): 16-bit data took as many
// memory instructions per element as f32 data and ran at half its bytes per second. The same lane
// arithmetic on the same values, so the same bits. Taken where launch's packable holds: every
// token's and head's row of the tensor starts 8-byte aligned and the pairs are a multiple of 4.
constexpr int kPackedPairs = 4;

// binary16 -> binary32 in rotate_chunk_packed: the magnitude's bits moved to binary32's place make
// the value times 2^-112 (a subnormal binary16 a subnormal binary32), and one exact product by
// 2^112 restores it: the value convert-inl.h's half_to_float gives, with a multiply where the
// device's cvt.f32.f16 is a conversion-unit instruction. Inf and NaN (exponent 31) take
// half_to_float.
__device__ inline float packed_half_to_float(F16 h) {
  if ((h.bits & 0x7C00u) == 0x7C00u) return lane::half_to_float(h.bits);
  const float magnitude = __uint_as_float(static_cast<std::uint32_t>(h.bits & 0x7FFFu) << 13) * 0x1p112f;
  return (h.bits & 0x8000u) != 0 ? -magnitude : magnitude;
}
// Two binary32 values -> binary16 in one word (low in bits 0–15): cvt.rn.f16x2.f32 rounds each
// as cvt.rn.f16.f32 does (to nearest even, subnormals and overflow included, no .ftz), one
// instruction for two; a NaN takes convert-inl.h's float_to_half (its bits).
__device__ inline std::uint32_t packed_halves(float low, float high) {
  if (isnan(low) || isnan(high)) {
    return static_cast<std::uint32_t>(lane::float_to_half(low)) | (static_cast<std::uint32_t>(lane::float_to_half(high)) << 16);
  }
  std::uint32_t word;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(word) : "f"(high), "f"(low));
  return word;
}

template <class T, bool Half>
__device__ void rotate_chunk_packed(const PlanView& plan, const TensorView& tensor, std::int64_t token, int chunk_begin,
                                    int chunk, const float* cos32_s, const float* sin32_s) {
  static_assert(sizeof(T) == 2 && kPackedPairs == 4, "an item is two 8-byte words of 16-bit elements");
  const T* in = static_cast<const T*>(tensor.input) + token * tensor.input_token_stride;
  T* out = static_cast<T*>(tensor.output) + token * tensor.output_token_stride;
  ItemWalk walk(chunk / kPackedPairs, static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x));
  while (walk.h < tensor.heads) {
    uint2 low_word[kItemsPerRound];
    uint2 high_word[kItemsPerRound];
    std::int64_t out_offset[kItemsPerRound];
    int low[kItemsPerRound];
    int high[kItemsPerRound];
    int item[kItemsPerRound];
    bool live[kItemsPerRound];
#pragma unroll
    for (int u = 0; u < kItemsPerRound; ++u) {
      live[u] = walk.h < tensor.heads;
      item[u] = walk.i * kPackedPairs;  // the item's first pair in the chunk's table
      const int j = chunk_begin + item[u];
      low[u] = Half ? j : 2 * j;                               // x's, or pairs 0–1
      high[u] = Half ? j + plan.pairs : 2 * j + kPackedPairs;  // y's, or pairs 2–3
      out_offset[u] = walk.h * tensor.output_head_stride;
      if (live[u]) {
        const T* in_head = in + walk.h * tensor.input_head_stride;
        low_word[u] = *reinterpret_cast<const uint2*>(in_head + low[u]);
        high_word[u] = *reinterpret_cast<const uint2*>(in_head + high[u]);
      }
      walk.next();
    }
#pragma unroll
    for (int u = 0; u < kItemsPerRound; ++u) {
      if (!live[u]) continue;
      T low_in[4];
      T high_in[4];
      std::memcpy(low_in, &low_word[u], sizeof low_in);
      std::memcpy(high_in, &high_word[u], sizeof high_in);
      // the words' 8 results in binary32, in the words' element order
      float low_out[4];
      float high_out[4];
#pragma unroll
      for (int p = 0; p < kPackedPairs; ++p) {
        // pair p of the item: its x and y, and where a and b go
        const T& x = Half ? low_in[p] : (p < 2 ? low_in[2 * p] : high_in[2 * p - 4]);
        const T& y = Half ? high_in[p] : (p < 2 ? low_in[2 * p + 1] : high_in[2 * p - 3]);
        float& a = Half ? low_out[p] : (p < 2 ? low_out[2 * p] : high_out[2 * p - 4]);
        float& b = Half ? high_out[p] : (p < 2 ? low_out[2 * p + 1] : high_out[2 * p - 3]);
        if constexpr (std::is_same_v<T, F16>) {
          lane::rotate<ScalarOps32>(packed_half_to_float(x), packed_half_to_float(y), cos32_s[item[u] + p],
                                    sin32_s[item[u] + p], a, b);
        } else {
          lane::rotate<ScalarOps32>(ScalarOps32::load(&x), ScalarOps32::load(&y), cos32_s[item[u] + p],
                                    sin32_s[item[u] + p], a, b);
        }
      }
      uint2 low_bits;
      uint2 high_bits;
      if constexpr (std::is_same_v<T, F16>) {
        low_bits = make_uint2(packed_halves(low_out[0], low_out[1]), packed_halves(low_out[2], low_out[3]));
        high_bits = make_uint2(packed_halves(high_out[0], high_out[1]), packed_halves(high_out[2], high_out[3]));
      } else {
        T low_t[4];
        T high_t[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          ScalarOps32::store(&low_t[e], low_out[e]);
          ScalarOps32::store(&high_t[e], high_out[e]);
        }
        std::memcpy(&low_bits, low_t, sizeof low_bits);
        std::memcpy(&high_bits, high_t, sizeof high_bits);
      }
      T* out_head = out + out_offset[u];
      *reinterpret_cast<uint2*>(out_head + low[u]) = low_bits;
      *reinterpret_cast<uint2*>(out_head + high[u]) = high_bits;
    }
  }
}

// rotate_chunk, or rotate_chunk_packed where it applies.
template <class T>
__device__ void rotate_chunk_any(const PlanView& plan, const TensorView& tensor, bool packed, std::int64_t token,
                                 int chunk_begin, int chunk, const double* cos_s, const double* sin_s, const float* cos32_s,
                                 const float* sin32_s, bool binary32) {
  if constexpr (sizeof(T) == 2) {
    if (binary32 && packed) {
      if (plan.layout == LayoutCode::half) {
        rotate_chunk_packed<T, true>(plan, tensor, token, chunk_begin, chunk, cos32_s, sin32_s);
      } else {
        rotate_chunk_packed<T, false>(plan, tensor, token, chunk_begin, chunk, cos32_s, sin32_s);
      }
      return;
    }
  }
  rotate_chunk<T>(plan, tensor, token, chunk_begin, chunk, cos_s, sin_s, cos32_s, sin32_s, binary32);
}

// Dims [rotary_dim, head_dim) of every head of one token, bit for bit (nothing to do in place).
template <class T>
__device__ void copy_pass_through(const PlanView& plan, const TensorView& tensor, std::int64_t token) {
  const int rest = plan.head_dim - plan.rotary_dim;
  if (rest == 0 || tensor.input == tensor.output) return;
  const T* in = static_cast<const T*>(tensor.input) + token * tensor.input_token_stride;
  T* out = static_cast<T*>(tensor.output) + token * tensor.output_token_stride;
  for (ItemWalk walk(rest, static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x)); walk.h < tensor.heads;
       walk.next()) {
    const int i = plan.rotary_dim + walk.i;
    out[walk.h * tensor.output_head_stride + i] = in[walk.h * tensor.input_head_stride + i];
  }
}

template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock) rope_kernel(DeviceCall call) {
  __shared__ double cos_s[kChunkPairs];
  __shared__ double sin_s[kChunkPairs];
  __shared__ float cos32_s[kChunkPairs];
  __shared__ float sin32_s[kChunkPairs];
  const int pairs = call.plan.pairs;
  const bool binary32 = call.plan.rotate_binary32 && call.cos_cache == nullptr;
  for (std::int64_t t = blockIdx.x; t < call.tokens; t += gridDim.x) {
    const std::int64_t* position_row = call.positions + t * call.plan.components;
    for (int chunk_begin = 0; chunk_begin < pairs; chunk_begin += kChunkPairs) {
      const int chunk = min(kChunkPairs, pairs - chunk_begin);
      for (int i = threadIdx.x; i < chunk; i += blockDim.x) {
        token_entry(call, position_row, chunk_begin + i, cos_s[i], sin_s[i]);
        if (binary32) {
          cos32_s[i] = static_cast<float>(cos_s[i]);
          sin32_s[i] = static_cast<float>(sin_s[i]);
        }
      }
      __syncthreads();
      rotate_chunk_any<T>(call.plan, call.q, call.q_packed, t, chunk_begin, chunk, cos_s, sin_s, cos32_s, sin32_s,
                          binary32);
      if (call.k.heads > 0) {
        rotate_chunk_any<T>(call.plan, call.k, call.k_packed, t, chunk_begin, chunk, cos_s, sin_s, cos32_s, sin32_s,
                            binary32);
      }
      __syncthreads();  // the table is overwritten next
    }
    copy_pass_through<T>(call.plan, call.q, t);
    if (call.k.heads > 0) copy_pass_through<T>(call.plan, call.k, t);
  }
}

// Device pointers and a cache: every row looked up must exist (kernel.h); *bad = 1 otherwise.
__global__ void check_cache_rows(const std::int64_t* positions, std::int64_t count, std::int64_t cache_rows, int* bad) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (positions[i] < 0 || positions[i] >= cache_rows) *bad = 1;
  }
}

// ---- host side ------------------------------------------------------------------------------------

// Owned device memory, freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }
  bool allocate(std::size_t bytes) {
    reset();
    if (bytes == 0) bytes = 1;
    return cudaMalloc(&pointer_, bytes) == cudaSuccess;
  }
  void reset() {
    if (pointer_ != nullptr) cudaFree(pointer_);
    pointer_ = nullptr;
  }
  char* get() const { return static_cast<char*>(pointer_); }

 private:
  void* pointer_ = nullptr;
};

// Serializes calls: the plan buffer below is shared.
std::mutex& call_mutex() {
  static std::mutex m;
  return m;
}

// The last plan's arrays on the device, re-uploaded only when they change (a benchmark or a model
// calls with the same spec again and again; the comparison is a host memcmp of a few KiB).
struct DevicePlan {
  std::vector<std::uint64_t> step_hi;
  std::vector<std::uint64_t> step_lo;
  std::vector<std::int32_t> component;
  DeviceBuffer buffer;
  std::size_t capacity = 0;  // pairs the buffer holds
};

DevicePlan& device_plan() {
  static DevicePlan plan;
  return plan;
}

// Points view's arrays at the device copy of them; false on a CUDA error.
bool upload_plan(PlanView& view) {
  DevicePlan& d = device_plan();
  const std::size_t pairs = static_cast<std::size_t>(view.pairs);
  const bool same = d.step_hi.size() == pairs && d.capacity >= pairs &&
                    std::equal(d.step_hi.begin(), d.step_hi.end(), view.step_hi) &&
                    std::equal(d.step_lo.begin(), d.step_lo.end(), view.step_lo) &&
                    std::equal(d.component.begin(), d.component.end(), view.component);
  if (!same) {
    d.step_hi.clear();  // stale until the upload succeeds
    if (d.capacity < pairs) {
      if (!d.buffer.allocate(pairs * 20)) {
        d.capacity = 0;
        return false;
      }
      d.capacity = pairs;
    }
    char* base = d.buffer.get();
    if (cudaMemcpy(base, view.step_hi, pairs * 8, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(base + d.capacity * 8, view.step_lo, pairs * 8, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(base + d.capacity * 16, view.component, pairs * 4, cudaMemcpyHostToDevice) != cudaSuccess) {
      return false;
    }
    d.step_lo.assign(view.step_lo, view.step_lo + pairs);
    d.component.assign(view.component, view.component + pairs);
    d.step_hi.assign(view.step_hi, view.step_hi + pairs);
  }
  char* base = d.buffer.get();
  view.step_hi = reinterpret_cast<const std::uint64_t*>(base);
  view.step_lo = reinterpret_cast<const std::uint64_t*>(base + d.capacity * 8);
  view.component = reinterpret_cast<const std::int32_t*>(base + d.capacity * 16);
  return true;
}

// The element offsets a strided [tokens, heads, head_dim] view touches: [low, high).
struct Span {
  std::int64_t low = 0;
  std::int64_t high = 0;
};
Span span_of(std::int64_t tokens, std::int64_t heads, int head_dim, std::int64_t token_stride, std::int64_t head_stride) {
  const std::int64_t t = (tokens - 1) * token_stride;
  const std::int64_t h = (heads - 1) * head_stride;
  return Span{std::min<std::int64_t>(0, t) + std::min<std::int64_t>(0, h),
              std::max<std::int64_t>(0, t) + std::max<std::int64_t>(0, h) + head_dim};
}

// One tensor's host spans mirrored on the device.
struct MirroredTensor {
  DeviceBuffer input;
  DeviceBuffer output;
  TensorView device;
  std::size_t output_bytes = 0;
  const char* host_output_begin = nullptr;
  const char* device_output_begin = nullptr;
};

// Copies a host tensor's spans to the device and points m.device at them.
bool mirror(const TensorView& host, std::int64_t tokens, int head_dim, std::size_t element, MirroredTensor& m) {
  m.device = host;
  if (host.heads == 0) return true;
  const Span in = span_of(tokens, host.heads, head_dim, host.input_token_stride, host.input_head_stride);
  const Span out = span_of(tokens, host.heads, head_dim, host.output_token_stride, host.output_head_stride);
  const auto in_bytes = static_cast<std::size_t>(in.high - in.low) * element;
  const char* host_in = static_cast<const char*>(host.input) + in.low * static_cast<std::int64_t>(element);
  if (!m.input.allocate(in_bytes) || cudaMemcpy(m.input.get(), host_in, in_bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    return false;
  }
  m.device.input = m.input.get() - in.low * static_cast<std::int64_t>(element);
  m.output_bytes = static_cast<std::size_t>(out.high - out.low) * element;
  m.host_output_begin = static_cast<const char*>(host.output) + out.low * static_cast<std::int64_t>(element);
  if (host.output == host.input) {  // in place: one span (equal strides, checked by the dispatcher)
    m.device.output = const_cast<void*>(m.device.input);
    m.device_output_begin = m.input.get();
    return true;
  }
  if (!m.output.allocate(m.output_bytes)) return false;
  // a span with gaps (padding between rows) is copied in first, so the gaps come back unchanged
  const bool dense = out.high - out.low == tokens * host.heads * head_dim;
  if (!dense && cudaMemcpy(m.output.get(), m.host_output_begin, m.output_bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    return false;
  }
  m.device.output = m.output.get() - out.low * static_cast<std::int64_t>(element);
  m.device_output_begin = m.output.get();
  return true;
}

bool copy_back(const MirroredTensor& m) {
  if (m.device.heads == 0) return true;
  return cudaMemcpy(const_cast<char*>(m.host_output_begin), m.device_output_begin, m.output_bytes,
                    cudaMemcpyDeviceToHost) == cudaSuccess;
}

template <class T>
cudaError_t launch_typed(const DeviceCall& call) {
  const auto blocks = static_cast<unsigned>(std::min(call.tokens, kMaxBlocks));
  rope_kernel<T><<<blocks, kThreadsPerBlock>>>(call);
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess) return launched;
  return cudaDeviceSynchronize();
}

// rotate_chunk_packed's condition: 16-bit data whose every row (token and head) starts 8-byte
// aligned in input and output, pairs a multiple of kPackedPairs (then so is every chunk, and its
// words are aligned in both layouts).
bool packable(const PlanView& plan, const TensorView& tensor) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 8 == 0; };
  const auto whole_words = [](std::int64_t stride) { return stride % kPackedPairs == 0; };
  return (plan.dtype == DtypeCode::f16 || plan.dtype == DtypeCode::bf16) && plan.pairs % kPackedPairs == 0 &&
         aligned(tensor.input) && aligned(tensor.output) && whole_words(tensor.input_token_stride) &&
         whole_words(tensor.input_head_stride) && whole_words(tensor.output_token_stride) &&
         whole_words(tensor.output_head_stride);
}

cudaError_t launch(DeviceCall call) {
  call.q_packed = packable(call.plan, call.q);
  call.k_packed = packable(call.plan, call.k);
  switch (call.plan.dtype) {
    case DtypeCode::f64: return launch_typed<double>(call);
    case DtypeCode::f32: return launch_typed<float>(call);
    case DtypeCode::f16: return launch_typed<F16>(call);
    case DtypeCode::bf16: return launch_typed<BF16>(call);
  }
  return cudaErrorInvalidValue;
}

std::size_t dtype_bytes(DtypeCode dtype) { return ropecheck_dtype_size(static_cast<std::int32_t>(dtype)); }

std::int32_t apply_locked(const CallView& call, std::int64_t tokens, bool device_pointers, std::int64_t cache_rows) {
  DeviceCall d;
  d.plan = call.plan;
  d.tokens = tokens;
  d.cache_dtype = call.cache_dtype;
  d.cache_row_stride = call.cache_row_stride;
  if (!upload_plan(d.plan)) return ROPECHECK_ERROR_INTERNAL;
  const std::int64_t position_count = tokens * call.plan.components;
  const bool cache = call.cos_cache != nullptr;
  if (device_pointers) {
    d.positions = call.positions;
    d.q = call.q;
    d.k = call.k;
    d.cos_cache = call.cos_cache;
    d.sin_cache = call.sin_cache;
    if (cache) {
      DeviceBuffer flag;
      if (!flag.allocate(sizeof(int)) || cudaMemset(flag.get(), 0, sizeof(int)) != cudaSuccess) return ROPECHECK_ERROR_INTERNAL;
      const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((position_count + 255) / 256, 4096));
      check_cache_rows<<<blocks, 256>>>(call.positions, position_count, cache_rows, reinterpret_cast<int*>(flag.get()));
      int bad = 0;
      if (cudaGetLastError() != cudaSuccess ||
          cudaMemcpy(&bad, flag.get(), sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) {
        return ROPECHECK_ERROR_INTERNAL;
      }
      if (bad != 0) return ROPECHECK_ERROR_INVALID_ARGUMENT;
    }
    return launch(d) == cudaSuccess ? ROPECHECK_OK : ROPECHECK_ERROR_INTERNAL;
  }
  // host pointers: mirror everything on the device
  const std::size_t element = dtype_bytes(call.plan.dtype);
  DeviceBuffer positions;
  const auto position_bytes = static_cast<std::size_t>(position_count) * sizeof(std::int64_t);
  if (!positions.allocate(position_bytes) ||
      cudaMemcpy(positions.get(), call.positions, position_bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    return ROPECHECK_ERROR_INTERNAL;
  }
  d.positions = reinterpret_cast<const std::int64_t*>(positions.get());
  MirroredTensor q;
  MirroredTensor k;
  if (!mirror(call.q, tokens, call.plan.head_dim, element, q) || !mirror(call.k, tokens, call.plan.head_dim, element, k)) {
    return ROPECHECK_ERROR_INTERNAL;
  }
  d.q = q.device;
  d.k = k.device;
  DeviceBuffer cos_cache;
  DeviceBuffer sin_cache;
  if (cache) {
    // rows [0, cache_rows), each row_stride elements; the last row needs only `pairs`
    const std::size_t cache_element = dtype_bytes(call.cache_dtype);
    const auto cache_bytes =
        static_cast<std::size_t>(std::max<std::int64_t>(0, (cache_rows - 1) * call.cache_row_stride + call.plan.pairs)) *
        cache_element;
    if (!cos_cache.allocate(cache_bytes) || !sin_cache.allocate(cache_bytes) ||
        cudaMemcpy(cos_cache.get(), call.cos_cache, cache_bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(sin_cache.get(), call.sin_cache, cache_bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
      return ROPECHECK_ERROR_INTERNAL;
    }
    d.cos_cache = cos_cache.get();
    d.sin_cache = sin_cache.get();
  }
  if (launch(d) != cudaSuccess) return ROPECHECK_ERROR_INTERNAL;
  return copy_back(q) && copy_back(k) ? ROPECHECK_OK : ROPECHECK_ERROR_INTERNAL;
}

struct DeviceInfo {
  bool usable = false;
  std::string name;
};

const DeviceInfo& device_info() {
  static const DeviceInfo info = [] {
    DeviceInfo i;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
      cudaGetLastError();  // clear the sticky "no device" error
      return i;
    }
    // the kernel must have an image this device runs (SASS for sm_80/sm_90, or PTX to JIT)
    cudaFuncAttributes attributes{};
    if (cudaFuncGetAttributes(&attributes, rope_kernel<float>) != cudaSuccess) {
      cudaGetLastError();
      return i;
    }
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, 0) == cudaSuccess) i.name = properties.name;
    i.usable = true;
    return i;
  }();
  return info;
}

}  // namespace

bool available() { return device_info().usable; }

const char* device_name() { return device_info().name.c_str(); }

std::int32_t apply(const CallView& call, std::int64_t tokens, bool device_pointers, std::int64_t cache_rows) {
  if (!available()) return ROPECHECK_ERROR_UNAVAILABLE;
  if (tokens == 0) return ROPECHECK_OK;
  std::lock_guard<std::mutex> lock(call_mutex());
  return apply_locked(call, tokens, device_pointers, cache_rows);
}

void* device_allocate(std::size_t bytes) {
  if (!available()) return nullptr;
  void* p = nullptr;
  return cudaMalloc(&p, bytes == 0 ? 1 : bytes) == cudaSuccess ? p : nullptr;
}

void device_free(void* pointer) {
  if (pointer != nullptr) cudaFree(pointer);
}

bool copy_to_device(void* device_destination, const void* host_source, std::size_t bytes) {
  return available() && cudaMemcpy(device_destination, host_source, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
}

bool copy_to_host(void* host_destination, const void* device_source, std::size_t bytes) {
  return available() && cudaMemcpy(host_destination, device_source, bytes, cudaMemcpyDeviceToHost) == cudaSuccess;
}

bool device_copy(void* device_destination, const void* device_source, std::size_t bytes) {
  return available() && cudaMemcpy(device_destination, device_source, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess &&
         cudaDeviceSynchronize() == cudaSuccess;
}

}  // namespace ropecheck::kernels::cuda
