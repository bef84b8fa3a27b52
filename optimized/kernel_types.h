// Plain data shared by the dispatcher (dispatch.cpp) and the per-ISA kernels (isa/*.cpp).
//
// The per-ISA translation units are compiled with different -m flags, so they must not
// instantiate any template (std::vector, ...) that another translation unit also instantiates:
// the linker keeps one copy of each inline function, and an AVX-512 copy picked for the scalar
// kernel would crash a machine without AVX-512 (the ODR hazard google/highway avoids with one
// namespace per target). Everything they receive is therefore plain pointers and integers.
#pragma once

#include <cstdint>

namespace ropecheck::kernels {

enum class LayoutCode : std::int32_t { interleaved = 0, half = 1 };
enum class DtypeCode : std::int32_t { f64 = 0, f32 = 1, f16 = 2, bf16 = 3 };

// Storage of the 16-bit formats: the IEEE binary16 / bfloat16 bit pattern.
struct F16 {
  std::uint16_t bits;
};
struct BF16 {
  std::uint16_t bits;
};

// The slow exact path's data (optimized/exact.cpp; opaque here).
struct ExactPath;

// The per-spec constants (built once by plan.cpp from spec/schedule.h).
struct PlanView {
  std::int32_t head_dim = 0;
  std::int32_t rotary_dim = 0;
  std::int32_t pairs = 0;  // rotary_dim / 2
  LayoutCode layout = LayoutCode::interleaved;
  DtypeCode dtype = DtypeCode::f32;
  bool inverse = false;
  std::int32_t components = 1;  // position values per token
  // Phase step of pair j as a 0.128 fixed-point fraction of a turn: frac(θ'_j / 2π)·2^128 =
  // step_hi[j]·2^64 + step_lo[j] (rounded to nearest). See optimized/README.md "Angles".
  const std::uint64_t* step_hi = nullptr;
  const std::uint64_t* step_lo = nullptr;
  const std::int32_t* component = nullptr;  // position component driving pair j
  double attention = 1.0;           // A rounded to double
  bool attention_is_one = true;     // A == 1 exactly: cos/sin are not multiplied
  // 2π·2^-65 as a double-double (turn units of the 65-bit reduced fraction -> radians).
  double radians_per_unit_hi = 0.0;
  double radians_per_unit_lo = 0.0;
  // Which angle path (angle-inl.h, error_bounds.h): precise (double-double reduced angle, for f64
  // data) or fast (one double, for f32/f16/bf16 data).
  bool precise_angles = false;
  // 16-bit data on the fly (f16; bf16 with |A| ≤ 1): cos/sin rounded to binary32 once per token and
  // the rotation in binary32 (kernel-inl.h process_binary32, error_bounds.h "16-bit data");
  // otherwise, and in cache mode, the rotation is in binary64.
  bool rotate_binary32 = false;
  // The rounding test (kernel-inl.h `undecided64`, `decide32`): an output v is kept when RN(v − E)
  // and RN(v + E) are the same value of the dtype, E ≥ v's proven error plus the rounding of v ± E
  // (error_bounds.h "ROUNDING TEST"; 16-bit data in binary32: decided by cells). Binary64 rotations: E = decide_k64·(|x| + |y|) +
  // decide_floor64. The binary32 rotation of 16-bit data, per output: E_a = |x|·wc + |y|·ws +
  // decide_floor32 (E_b: wc and ws swapped), with the token's weights wc = RN32(decide_k32·|c| +
  // decide_table32) (likewise ws; Workspace::weight_cos32). Otherwise exact_pair (optimized/exact.h).
  double decide_k64 = 0.0;
  double decide_k64_table = 0.0;  // the binary64 rotation of 16-bit data with a table by angle addition
  double decide_floor64 = 0.0;
  double decide_k32 = 0.0;
  double decide_table32 = 0.0;
  float decide_floor32 = 0.0f;
  // Whether the outputs are correctly rounded (rounding test and slow path): on the fly, f32, f16
  // and bf16 data; f64 data keeps the faithful binary64 rotation (error_bounds.h, step 4).
  bool correctly_rounded = false;
  const ExactPath* exact = nullptr;
  // f64 data on the fly (kernel_f64-inl.h): the grid table (f64_table.h), A = attention +
  // attention_lo (double-double), the rounding test's K·S (its E = decide_k_f64·(|x| + |y|) +
  // decide_floor64), and the |x| + |y| below which no product or sum of the pair overflows.
  const double* f64_grid = nullptr;
  double attention_lo = 0.0;
  double decide_k_f64 = 0.0;
  double f64_sum_limit = 0.0;
};

// One [tokens, heads, head_dim] tensor (element strides; head dim contiguous).
struct TensorView {
  std::int64_t heads = 0;
  const void* input = nullptr;
  std::int64_t input_token_stride = 0;
  std::int64_t input_head_stride = 0;
  void* output = nullptr;
  std::int64_t output_token_stride = 0;
  std::int64_t output_head_stride = 0;
};

struct CallView {
  PlanView plan;
  const std::int64_t* positions = nullptr;  // tokens × plan.components
  TensorView q;
  TensorView k;  // heads == 0: absent
  // Cache mode when cos_cache != nullptr (kernel.h documents the layout).
  const void* cos_cache = nullptr;
  const void* sin_cache = nullptr;
  DtypeCode cache_dtype = DtypeCode::f32;
  std::int64_t cache_row_stride = 0;
  // Non-temporal stores for the rotated pairs of f32 data and of 16-bit data rotated in binary32
  // (dispatch.cpp streaming_stores_pay: out of place, outputs larger than most of the last-level
  // cache, rows aligned to 64 bytes). The outputs' bits are the same either way.
  bool streaming_stores = false;
};

// Which position the fast path's phases in a Workspace belong to (kernel-inl.h token_cos_sin).
struct PhaseMemo {
  std::int64_t position = 0;
  bool valid = false;
};

// Which token the binary64 table in Workspace::cos_j / sin_j belongs to, for the binary32 path's
// table by angle addition (kernel-inl.h next_table_by_rotation).
struct RotationMemo {
  std::int64_t position = 0;
  int age = 0;               // tokens since the table was computed directly (angle_table)
  bool valid = false;
  bool steps_ready = false;  // Workspace::step_cos / step_sin hold the rotation by one position
};

// Per-thread scratch of a CPU kernel: arrays of `pairs` entries (dispatch.cpp owns the storage).
struct Workspace {
  double* r_hi = nullptr;  // precise path: reduced angle, high and low parts
  double* r_lo = nullptr;
  std::uint64_t* words = nullptr;  // fast path: phase high words; precise path: quadrants
  std::uint64_t* phase_low = nullptr;  // fast path: phase low words
  PhaseMemo* memo = nullptr;  // position of the phases in words/phase_low, if valid
  double* cos_j = nullptr;  // the token's cos/sin table
  double* sin_j = nullptr;
  float* cos32 = nullptr;  // the same table rounded to binary32 (PlanView::rotate_binary32)
  float* sin32 = nullptr;
  // the rounding test's weights of the binary32 table, in its order (PlanView::decide_k32)
  float* weight_cos32 = nullptr;
  float* weight_sin32 = nullptr;
  double* step_cos = nullptr;  // cos θ_j and sin θ_j (sin negated when inverse): one position's rotation
  double* step_sin = nullptr;
  RotationMemo* rotation = nullptr;
  double* cos_lo = nullptr;  // f64 data (kernel_f64-inl.h): low parts of the double-double table
  double* sin_lo = nullptr;
};

}  // namespace ropecheck::kernels
