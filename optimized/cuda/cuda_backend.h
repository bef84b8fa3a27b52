// The CUDA implementation's host-side entry points (cuda/rope_kernel.cu when CUDA is built,
// cuda/cuda_stub.cpp otherwise). Status values are kernel.h's ROPECHECK_* codes. Plain C++ (no
// CUDA header), so the dispatcher and the benchmark use it in builds with and without CUDA.
#pragma once

#include <cstddef>
#include <cstdint>

#include "optimized/kernel_types.h"

namespace ropecheck::kernels::cuda {

// True when the CUDA kernel was compiled, at least one device is present, and the kernel has an
// image (SASS or PTX) the device runs.
bool available();
// Applies a validated call for tokens [0, tokens). device_pointers: kernel.h's field (0: every
// pointer is host memory, copied to and from the device by this call; 1: tensors, positions and
// cache are device pointers). f64, f32, f16 and bf16 data; synchronous (returns when the outputs
// are written). Calls are serialized (one device buffer set per process).
std::int32_t apply(const CallView& call, std::int64_t tokens, bool device_pointers, std::int64_t cache_rows);
// The device's name (for reports), or "" when unavailable.
const char* device_name();

// Device memory helpers for the benchmark and tests (nullptr / false without CUDA or a device).
void* device_allocate(std::size_t bytes);
void device_free(void* pointer);
bool copy_to_device(void* device_destination, const void* host_source, std::size_t bytes);
bool copy_to_host(void* host_destination, const void* device_source, std::size_t bytes);
// Device-to-device copy of `bytes`, synchronous: the benchmark's baseline.
bool device_copy(void* device_destination, const void* device_source, std::size_t bytes);

}  // namespace ropecheck::kernels::cuda
