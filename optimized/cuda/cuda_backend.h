// The CUDA implementation's host-side entry points (cuda/rope_kernel.cu when CUDA is built,
// cuda/cuda_stub.cpp otherwise). Status values are kernel.h's ROPECHECK_* codes.
#pragma once

#include <cstdint>

#include "optimized/kernel_types.h"

namespace ropecheck::kernels::cuda {

// True when the CUDA kernel was compiled and at least one device is present.
bool available();
// Applies a validated call for tokens [0, tokens). device_pointers: kernel.h's field.
// Supports f32, f16 and bf16 data (f64: ROPECHECK_ERROR_UNSUPPORTED).
std::int32_t apply(const CallView& call, std::int64_t tokens, bool device_pointers, std::int64_t cache_rows);
// The device's name (for reports), or "" when unavailable.
const char* device_name();

}  // namespace ropecheck::kernels::cuda
