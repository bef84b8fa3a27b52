// The CUDA implementation when CUDA is not built (no nvcc, or -DROPECHECK_CUDA=OFF): unavailable.
#include <ropecheck/kernel.h>
#include "optimized/cuda/cuda_backend.h"

namespace ropecheck::kernels::cuda {

bool available() { return false; }
std::int32_t apply(const CallView&, std::int64_t, bool, std::int64_t) { return ROPECHECK_ERROR_UNAVAILABLE; }
const char* device_name() { return ""; }
void* device_allocate(std::size_t) { return nullptr; }
void device_free(void*) {}
bool copy_to_device(void*, const void*, std::size_t) { return false; }
bool copy_to_host(void*, const void*, std::size_t) { return false; }
bool device_copy(void*, const void*, std::size_t) { return false; }

}  // namespace ropecheck::kernels::cuda
