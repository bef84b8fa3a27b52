// The storage behind a CPU kernel's per-thread scratch (kernel_types.h Workspace): owned by the
// dispatcher (one per thread of a call) and by tests that call a CpuKernel directly. Not included
// by the per-ISA translation units (std::vector: see kernel_types.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "optimized/kernel_types.h"

namespace ropecheck::kernels {

// Arrays of `pairs` entries for every Workspace field, and the memos (initially invalid).
class WorkspaceStorage {
 public:
  explicit WorkspaceStorage(int pairs)
      : doubles_(8 * static_cast<std::size_t>(pairs) + 8),
        floats_(4 * static_cast<std::size_t>(pairs) + 16),
        words_(2 * static_cast<std::size_t>(pairs) + 8) {
    const std::size_t n = static_cast<std::size_t>(pairs);
    view_.r_hi = doubles_.data();
    view_.r_lo = doubles_.data() + n;
    view_.cos_j = doubles_.data() + 2 * n;
    view_.sin_j = doubles_.data() + 3 * n;
    view_.step_cos = doubles_.data() + 4 * n;
    view_.step_sin = doubles_.data() + 5 * n;
    view_.cos_lo = doubles_.data() + 6 * n;
    view_.sin_lo = doubles_.data() + 7 * n;
    view_.cos32 = floats_.data();
    view_.sin32 = floats_.data() + n;
    view_.weight_cos32 = floats_.data() + 2 * n;
    view_.weight_sin32 = floats_.data() + 3 * n;
    view_.words = words_.data();
    view_.phase_low = words_.data() + n;
    view_.memo = &memo_;
    view_.rotation = &rotation_;
  }
  WorkspaceStorage(const WorkspaceStorage&) = delete;
  WorkspaceStorage& operator=(const WorkspaceStorage&) = delete;
  const Workspace& view() const { return view_; }

 private:
  std::vector<double> doubles_;
  std::vector<float> floats_;
  std::vector<std::uint64_t> words_;
  PhaseMemo memo_;
  RotationMemo rotation_;
  Workspace view_;
};

}  // namespace ropecheck::kernels
