// The scalar kernel: kernel-inl.h compiled with this file's flags (optimized/CMakeLists.txt) in its
// own namespace. Nothing else lives here.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>


#include "optimized/host_device.h"
#include "optimized/isa.h"

namespace ropecheck::kernels::scalar_isa {

#include "optimized/convert-inl.h"
#include "optimized/ops_scalar-inl.h"
using Ops = ScalarOps;
using Ops32 = ScalarOps32;
#include "optimized/angle-inl.h"
#include "optimized/kernel-inl.h"

CpuKernel kernel() { return CpuKernel{"scalar", &process_tokens, &cos_sin_rows, &round_doubles, &f64_token_table}; }

}  // namespace ropecheck::kernels::scalar_isa
