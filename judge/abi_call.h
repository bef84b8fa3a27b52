// One call of a kernel through the C ABI (include/ropecheck/kernel.h), written once for the
// in-process adapter of the project's kernels and for the child process that serves a plugin
// (judge/isolation.cpp): the doubles are encoded into a buffer of the spec's dtype, the output
// buffer is pre-filled with NaN bit patterns (an element the kernel never writes cannot pass) and
// surrounded by guard bytes (as llama.cpp's test-backend-ops does), the kernel runs, and the
// output is decoded back. The guard bytes are checked after the call.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <ropecheck/kernel.h>

#include "reference/rope.h"
#include "spec/spec.h"

namespace ropecheck::judge {

using KernelApplyFn = std::int32_t (*)(const char* implementation, const ropecheck_call* call);

struct AbiCallResult {
  std::int32_t status = ROPECHECK_OK;
  bool guard_intact = true;    // no byte before or after the output changed
  std::vector<double> output;  // decoded values of spec.dtype, when status is ROPECHECK_OK
};

// Guard bytes on each side of the output buffer.
inline constexpr std::size_t kGuardBytes = 64;

// Throws std::invalid_argument when the spec cannot be expressed in the ABI.
AbiCallResult call_kernel(KernelApplyFn apply, const char* implementation, const Spec& spec, reference::Shape shape,
                          std::span<const std::int64_t> positions, std::span<const double> input, int threads = 1);

}  // namespace ropecheck::judge
