// The avx512bf16 kernel: kernel-inl.h with ops_avx512-inl.h, as the avx512 kernel, compiled with
// this file's flags (optimized/CMakeLists.txt: AVX-512 BF16 too, for the bfloat16 stores) in its own
// namespace. Nothing else lives here.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <immintrin.h>

#include "optimized/host_device.h"
#include "optimized/isa.h"

namespace ropecheck::kernels::avx512bf16_isa {

#include "optimized/convert-inl.h"
#include "optimized/ops_scalar-inl.h"
#include "optimized/ops_avx512-inl.h"
using Ops = Avx512Ops;
using Ops32 = Avx512Ops32;
#include "optimized/angle-inl.h"
#include "optimized/kernel-inl.h"

CpuKernel kernel() { return CpuKernel{"avx512bf16", &process_tokens, &cos_sin_rows, &round_doubles, &f64_token_table}; }

}  // namespace ropecheck::kernels::avx512bf16_isa
