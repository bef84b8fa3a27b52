// One call of a kernel through the C ABI (include/ropecheck/kernel.h), written once for the
// in-process adapter of the project's kernels and for the child process that serves a plugin
// (runner/isolation.cpp): the doubles are encoded into a buffer of the spec's dtype, the output
// buffer is pre-filled with NaN bit patterns (an element the kernel never writes cannot pass) and
// guarded, the kernel runs, and the output is decoded back.
//
// Two guards (OutputGuard):
//   bytes — 64 guard bytes on each side (as llama.cpp's test-backend-ops does), checked after the
//           call: a write that lands further away goes unnoticed. The project's own kernels, in
//           the gate's process, where a fault would take the gate down.
//   pages — the output ends where kGuardPages protected pages (PROT_NONE, mprotect) begin, and
//           kGuardPages more lie before it, behind at least 64 guard bytes: any write up to
//           kGuardPages pages (64 KiB with 4 KiB pages) past either end faults at once, and the
//           fault handler of the plugin's child process (runner/isolation.cpp) reports it as a guard
//           violation. Writes further away, into other memory, cannot be told from the plugin's own.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <ropecheck/kernel.h>

#include "reference/rope.h"
#include "spec/spec.h"

namespace ropecheck::runner {

using KernelApplyFn = std::int32_t (*)(const char* implementation, const ropecheck_call* call);

struct AbiCallResult {
  std::int32_t status = ROPECHECK_OK;
  bool guard_intact = true;    // no guard byte before or after the output changed
  std::vector<double> output;  // decoded values of spec.dtype, when status is ROPECHECK_OK
};

// Why `spec` is not passed through the C ABI at all; empty when it is. ABI version 1 has one
// element type for inputs and outputs (ropecheck_spec::dtype): a spec whose input dtype differs
// (GPT-J: f16 in, f32 out) would be misread by every plugin built against it, so the gate declines
// it as unsupported before any call (a skip in every report, never a guess).
std::string abi_declines(const Spec& spec);

// Guard bytes on each side of the output buffer.
inline constexpr std::size_t kGuardBytes = 64;
// Protected pages on each side of the output buffer under OutputGuard::pages.
inline constexpr std::size_t kGuardPages = 16;

enum class OutputGuard { bytes, pages };

// Throws std::invalid_argument when the spec cannot be expressed in the ABI, or when the shape does
// not match the input and positions (checked products: the kernel is given the shape).
AbiCallResult call_kernel(KernelApplyFn apply, const char* implementation, const Spec& spec, reference::Shape shape,
                          std::span<const std::int64_t> positions, std::span<const double> input, int threads = 1,
                          OutputGuard guard = OutputGuard::bytes);

// Whether `address` lies in the protected pages of the call in progress (OutputGuard::pages, one
// call at a time: the plugin's child process serves one). Async-signal-safe: the child's SIGSEGV
// handler asks it.
bool in_guard_pages(const void* address) noexcept;

}  // namespace ropecheck::runner
