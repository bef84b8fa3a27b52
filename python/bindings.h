// The extension module `_ropecheck` (python/README.md), one binding file per concern:
//   module.cpp  — the module, the error translation, Spec;
//   apply.cpp   — the correctly rounded reference (`apply`) and the project's kernels;
//   judging.cpp — gate, the sweep, and their results (gate/report.h's Report);
//   callable.cpp — a Python callable as the judged implementation, in process or forked per call;
//   check.cpp   — check of the user's own tensors (runner/tensor_judge.h);
//   fused.cpp   — the fused operation: its spec's fields, drawn inputs, the judgement (fused/fused.h).
// Every function here is a thin layer over the C++ libraries; the package around it
// (python/ropecheck/*.py) only turns NumPy arrays and torch tensors into contiguous buffers.
#pragma once

#include <cstdint>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "spec/spec.h"

namespace ropecheck::python {

namespace py = pybind11;

// Contiguous float64 / int64 views, converting whatever NumPy can convert (a copy only then).
using Doubles = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Integers = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// tokens = positions.size / position_components(spec), checked to hold tokens·heads·head_dim
// `values`; throws UsageError naming `what` and the sizes (the CLI's wording).
std::int64_t tokens_of(const Spec& spec, std::int64_t heads, std::int64_t positions, std::int64_t values,
                       const std::string& what);

void bind_apply(py::module_& m);
void bind_judging(py::module_& m);
void bind_check(py::module_& m);
void bind_fused(py::module_& m);

}  // namespace ropecheck::python
