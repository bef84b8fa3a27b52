// `apply` (the exact reference, correctly rounded: reference/rope.h, as `ropecheck apply`) and the
// project's kernels through their C ABI (include/ropecheck/kernel.h, as `--impl NAME`).
#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <ropecheck/kernel.h>

#include <pybind11/stl.h>

#include "base/errors.h"
#include "bindings.h"
#include "judge/tolerance.h"
#include "optimized/c_spec.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "runner/abi_call.h"

namespace ropecheck::python {
namespace {

// The reference's model for `apply`: judge/tolerance.h's names (the one grammar); f32-angle is a
// bound on a class of implementations, not one result to compute.
reference::Model reference_model(const std::string& text) {
  switch (judge::parse_model(text)) {
    case judge::Model::exact: return reference::Model::exact;
    case judge::Model::f32_recipe: return reference::Model::f32_recipe;
    case judge::Model::f32_angle: break;
  }
  throw UsageError("--model: f32-angle bounds a class of implementations and has no single result: apply takes exact or f32-recipe");
}

// `ropecheck apply`: inputs rounded to the spec's input dtype first (finite values; the CLI does the same),
// then the reference, correctly rounded. `input` is C-contiguous float32 or float64 (the package
// widens any other type to float64 with NumPy first). Flat out: float32 for f32 and bf16 outputs
// (every bfloat16 value is a float32), float64 for f64 and f16 (the package narrows f16 with NumPy's
// own conversion); the package gives it its shape and dtype.
// The tensor goes through reference::apply_chunked: a chunk of tokens widened into a buffer of at
// most reference::kApplyChunkValues doubles, rotated in place, and stored straight into the result
// (a NumPy array: not zero-filled): no tensor-sized double buffer, and NumPy's conversions give the
// bits they gave before (float32 ↔ float64 are the C conversions NumPy uses).
py::array apply(const Spec& spec, const py::array& input, std::int64_t heads, const Integers& positions,
                const std::string& model, int precision_bits) {
  if (precision_bits < 64 || precision_bits > 16384) {
    throw UsageError("--precision: expected an integer from 64 to 16384, got " + std::to_string(precision_bits));
  }
  reference::Options options;
  options.model = reference_model(model);
  options.precision_bits = precision_bits;
  const bool in_f32 = input.dtype().is(py::dtype::of<float>());
  if (!(in_f32 || input.dtype().is(py::dtype::of<double>())) || !(input.flags() & py::array::c_style)) {
    throw UsageError("x: expected a C-contiguous float32 or float64 array (the package converts others)");
  }
  const std::int64_t tokens = tokens_of(spec, heads, positions.size(), input.size(), "x");
  const bool out_f32 = spec.dtype == Dtype::f32 || spec.dtype == Dtype::bf16;
  const py::dtype out_type = out_f32 ? py::dtype::of<float>() : py::dtype::of<double>();
  py::array result(out_type, std::vector<py::ssize_t>{input.size()});
  const Dtype input_dtype = input_dtype_of(spec);
  const void* in = input.data();
  void* out = result.mutable_data();
  const std::span<const std::int64_t> where(positions.data(), static_cast<std::size_t>(positions.size()));
  {
    py::gil_scoped_release unlocked;
    const reference::ApplyPlan plan(spec, options);
    reference::apply_chunked(
        plan, reference::Shape{tokens, heads, spec.head_dim}, where,
        [&](std::int64_t first, std::span<double> values) {
          if (in_f32) {
            const float* x = static_cast<const float*>(in) + first;
            for (std::size_t i = 0; i < values.size(); ++i) values[i] = x[i];
          } else {
            const double* x = static_cast<const double*>(in) + first;
            std::copy(x, x + values.size(), values.begin());
          }
          if (!(in_f32 && input_dtype == Dtype::f32)) reference::round_finite_to_format(values, input_dtype);  // float32: already f32 values
        },
        [&](std::int64_t first, std::span<const double> values) {
          if (out_f32) {
            float* o = static_cast<float*>(out) + first;
            for (std::size_t i = 0; i < values.size(); ++i) o[i] = static_cast<float>(values[i]);  // exact: values of the dtype
          } else {
            std::copy(values.begin(), values.end(), static_cast<double*>(out) + first);
          }
        });
  }
  return result;
}

// The NumPy element type that holds a dtype's values as the C ABI stores them (f16 and bf16 as
// their 16-bit patterns: float16, and uint16 for bf16, which NumPy lacks).
py::dtype storage_of(Dtype dtype) {
  switch (dtype) {
    case Dtype::f64: return py::dtype::of<double>();
    case Dtype::f32: return py::dtype::of<float>();
    case Dtype::f16: return py::dtype("float16");
    case Dtype::bf16: return py::dtype::of<std::uint16_t>();
  }
  return py::dtype::of<double>();
}

// A project kernel on `input`, a C-contiguous array of the spec's storage type (the package
// converts). Returns a new array of that type.
py::array kernel_apply(const Spec& spec, const py::array& input, std::int64_t heads, const Integers& positions,
                       const std::string& impl, int threads) {
  const int available = ropecheck_kernel_available(impl.c_str());
  if (available == ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION) {
    throw UsageError("--impl: expected scalar, avx2, avx512, avx512bf16, cuda or auto, got '" + impl + "'");
  }
  if (available != 1) throw UsageError("--impl " + impl + ": " + ropecheck_status_message(ROPECHECK_ERROR_UNAVAILABLE));
  if (threads < 0) throw UsageError("threads: expected an integer >= 0 (0: all cores), got " + std::to_string(threads));
  if (const std::string declined = runner::abi_declines(spec); !declined.empty()) {
    throw UsageError("--impl " + impl + ": spec " + to_string(spec) + " " + declined);
  }
  const py::dtype storage = storage_of(spec.dtype);
  if (!input.dtype().is(storage) || !(input.flags() & py::array::c_style)) {
    throw UsageError("x: expected a C-contiguous " + py::str(static_cast<const py::handle&>(storage)).cast<std::string>() + " array for dtype " +
                     std::string(name(spec.dtype)));
  }
  const std::int64_t tokens = tokens_of(spec, heads, positions.size(), input.size(), "x");
  py::array output(storage, std::vector<py::ssize_t>{input.size()});
  const kernels::CSpec c_spec(spec);
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = tokens;
  call.positions = positions.data();
  call.q = ropecheck_tensor{heads, input.data(), heads * spec.head_dim, spec.head_dim, output.mutable_data(),
                            heads * spec.head_dim, spec.head_dim};
  call.threads = threads;
  std::int32_t status = ROPECHECK_OK;
  {
    py::gil_scoped_release unlocked;
    status = ropecheck_kernel_apply(impl.c_str(), &call);
  }
  if (status != ROPECHECK_OK) {
    throw UsageError("--impl " + impl + ": " + ropecheck_status_message(status) + " (spec " + to_string(spec) + ")");
  }
  return output;
}

// bfloat16 bit patterns of values rounded to bfloat16 (reference/rounding.h: to nearest, ties to
// even); NaN keeps its sign and is quiet. The top half of the binary32 value.
py::array_t<std::uint16_t> bf16_bits(const Doubles& values) {
  py::array_t<std::uint16_t> out(values.size());
  std::uint16_t* bits = out.mutable_data();
  for (py::ssize_t i = 0; i < values.size(); ++i) {
    const double v = values.data()[i];
    const float f = static_cast<float>(std::isnan(v) ? v : reference::round_to_format(v, Dtype::bf16));
    std::uint32_t word = 0;
    std::memcpy(&word, &f, sizeof word);
    bits[i] = static_cast<std::uint16_t>(word >> 16);
  }
  return out;
}

}  // namespace

void bind_apply(py::module_& m) {
  m.def("apply", &apply, py::arg("spec"), py::arg("input"), py::arg("heads"), py::arg("positions"),
        py::arg("model") = "exact", py::arg("precision_bits") = 256);
  m.def("kernel_apply", &kernel_apply, py::arg("spec"), py::arg("input"), py::arg("heads"), py::arg("positions"),
        py::arg("impl") = "auto", py::arg("threads") = 0);
  m.def("storage_dtype", [](const Spec& spec) { return storage_of(spec.dtype); });
  m.def("bf16_bits", &bf16_bits);
  m.def("kernel_resolve", [](const std::string& impl) -> py::object {
    const char* resolved = ropecheck_kernel_resolve(impl.c_str());
    return resolved ? py::object(py::str(resolved)) : py::object(py::none());
  });
  m.def("kernel_names", [] {
    std::vector<std::string> names;
    for (std::int32_t i = 0; i < ropecheck_kernel_count(); ++i) names.emplace_back(ropecheck_kernel_name(i));
    return names;
  });
}

}  // namespace ropecheck::python
