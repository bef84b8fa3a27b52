// The avx2 kernel: kernel-inl.h compiled with this file's flags (optimized/CMakeLists.txt) in its
// own namespace. Nothing else lives here.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <immintrin.h>

#include "optimized/host_device.h"
#include "optimized/isa.h"

namespace ropecheck::kernels::avx2_isa {

#include "optimized/convert-inl.h"
#include "optimized/ops_scalar-inl.h"
#include "optimized/ops_avx2-inl.h"
using Ops = Avx2Ops;
using Ops32 = Avx2Ops32;
#include "optimized/angle-inl.h"
#include "optimized/kernel-inl.h"

CpuKernel kernel() { return CpuKernel{"avx2", &process_tokens, &cos_sin_rows, &round_doubles, &f64_token_table}; }

}  // namespace ropecheck::kernels::avx2_isa
