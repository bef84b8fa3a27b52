// The kernels' slow exact path (Ziv's strategy, CORE-MATH's shape): an output whose fast value is
// within its proven error bound of a rounding boundary of the data type (kernel-inl.h `settle_pairs`)
// is recomputed here, correctly rounded, from the spec itself: θ'_j and A from spec/schedule.h in
// MPFR at P bits, the angle p·θ'_j, cos and sin, and the rotation, each one correctly rounded MPFR
// operation, then the rounding test again with this path's bound (exact.cpp), at P = 266, 1066, 4120
// bits; past that the value is an exact tie (e.g. A·x at position 0) and its rounding is exact.
// IEEE special values (a non-finite component, a (0, 0) pair) and the exact zeros at angle 0 follow
// the reference's rule (reference/README.md "How apply is correctly rounded"): the formula in
// binary64 with the correctly rounded binary64 cos·A and sin·A.
// Compiled once for the baseline ISA (not in the per-ISA translation units); plain types only.
#pragma once

#include <cstdint>

#include "optimized/kernel_types.h"

namespace ropecheck::kernels {

// The correctly rounded outputs (a, b) of pair j of a token at position_row (plan.components
// values) for inputs (x, y), as the binary64 values of the plan's dtype (exact in it).
void exact_pair(const PlanView& plan, const std::int64_t* position_row, int j, double x, double y, double& a, double& b);

// Outputs recomputed since the process started: by the binary64 second path of 16-bit data
// (kernel-inl.h settle_pairs) and by exact_pair. For kernel_bench's slow-path share.
std::uint64_t second_path_outputs();
std::uint64_t exact_path_outputs();
void count_second_path(std::uint64_t outputs);  // on this thread; shared by flush_path_counts
void flush_path_counts();                        // at the end of a kernel's part of a call

}  // namespace ropecheck::kernels
