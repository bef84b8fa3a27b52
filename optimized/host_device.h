// ROPECHECK_HD marks the per-lane math that is compiled both for the CPU kernels and for the CUDA
// kernel (optimized/cuda/rope_kernel.cu): __host__ __device__ under nvcc, nothing otherwise. The
// files that use it (convert-inl.h, angle-inl.h) are "-inl" files included inside each kernel's
// namespace, so the CPU kernels and the CUDA kernel run literally the same source.
#pragma once

#if defined(__CUDACC__)
#define ROPECHECK_HD __host__ __device__
#else
#define ROPECHECK_HD
#endif
