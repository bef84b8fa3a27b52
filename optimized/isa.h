// The per-ISA kernels (isa/kernel_<isa>.cpp, each kernel-inl.h compiled with its own flags) and
// the visible dispatch table that dispatch.cpp fills once from CPUID (google/highway's targets.h).
#pragma once

#include <cstdint>

#include "optimized/exact.h"
#include "optimized/kernel_types.h"

namespace ropecheck::kernels {

// One CPU implementation: its entry points (plain functions, no state).
struct CpuKernel {
  const char* name;
  void (*process_tokens)(const CallView& call, std::int64_t token_begin, std::int64_t token_end,
                         const Workspace& work);
  void (*cos_sin_rows)(const PlanView& plan, std::int64_t first_position, std::int64_t rows, const Workspace& work,
                       double* cos_rows, double* sin_rows);
  // Rounds n doubles to `dtype` exactly as the kernels' stores do.
  void (*round_doubles)(const double* values, std::int64_t n, DtypeCode dtype, void* out);
  // f64 data's double-double table of one token into work.cos_j, cos_lo, sin_j, sin_lo
  // (kernel_f64-inl.h f64_token_table), for tests.
  void (*f64_table)(const PlanView& plan, const std::int64_t* position_row, const Workspace& work);
};

namespace scalar_isa {
CpuKernel kernel();
}
#if ROPECHECK_HAVE_AVX2
namespace avx2_isa {
CpuKernel kernel();
}
#endif
#if ROPECHECK_HAVE_AVX512
namespace avx512_isa {
CpuKernel kernel();
}
#endif
#if ROPECHECK_HAVE_AVX512BF16
namespace avx512bf16_isa {
CpuKernel kernel();
}
#endif

}  // namespace ropecheck::kernels
