// check(): the user's own tensors judged by runner/tensor_judge.h (the route of `ropecheck check
// --spec ... --candidate ...`), one group, in the gate's report.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <pybind11/stl.h>

#include "base/errors.h"
#include "bindings.h"
#include "gate/judge_args.h"
#include "gate/positions.h"
#include "gate/report.h"
#include "runner/tensor_judge.h"

namespace ropecheck::python {
namespace {

// A C-contiguous float32, float16 or float64 array as it is (float32 and float16 are widened a
// chunk at a time by judge_tensor_values); any other array converted to float64 first. `kept`
// holds a converted copy.
runner::TensorValues values_of(const py::array& a, Doubles& kept) {
  if ((a.flags() & py::array::c_style) && a.dtype().is(py::dtype::of<float>())) {
    return std::span<const float>(static_cast<const float*>(a.data()), static_cast<std::size_t>(a.size()));
  }
  if ((a.flags() & py::array::c_style) && a.dtype().is(py::dtype("float16"))) {
    return runner::Binary16Span{
        std::span<const std::uint16_t>(static_cast<const std::uint16_t*>(a.data()), static_cast<std::size_t>(a.size()))};
  }
  kept = Doubles::ensure(a);
  if (!kept) throw UsageError("expected an array of numbers");
  return std::span<const double>(kept.data(), static_cast<std::size_t>(kept.size()));
}

gate::Report check(const Spec& spec, std::int64_t heads, const Integers& positions, const py::array& input_array,
                   const py::array& output_array, const gate::JudgeArguments& args, const std::string& label) {
  const judge::Settings settings = gate::settings_of(args);
  Doubles input_doubles, output_doubles;
  const runner::TensorValues input = values_of(input_array, input_doubles);
  const runner::TensorValues output = values_of(output_array, output_doubles);
  const auto size = [](const runner::TensorValues& v) { return std::visit([](auto s) { return s.size(); }, v); };
  tokens_of(spec, heads, positions.size(), static_cast<std::int64_t>(size(input)), "x");
  if (size(output) != size(input)) {
    throw UsageError("output: expected as many values as x (" + std::to_string(size(input)) + "), got " +
                     std::to_string(size(output)));
  }
  gate::Report report;
  report.command = "check";
  report.implementation = label;
  report.candidate = label;
  report.model = settings.claims.model;
  {
    py::gil_scoped_release unlocked;
    report.groups.push_back(runner::judge_tensor_values(
        spec, heads, std::span<const std::int64_t>(positions.data(), static_cast<std::size_t>(positions.size())), input, output, settings,
        label));
  }
  const judge::GroupResult& g = report.groups.front();
  if (const std::string note = gate::rounded_inputs_note(g); !note.empty()) report.notes.push_back(note);
  report.scope = gate::scope_of(settings, g.skipped_by_flags, g.skipped_by_position);
  report.worst_listed = settings.worst_cases;
  report.decide();
  return report;
}

}  // namespace

void bind_check(py::module_& m) {
  m.def("check", &check, py::arg("spec"), py::arg("heads"), py::arg("positions"), py::arg("input"), py::arg("output"),
        py::arg("args"), py::arg("label") = "tensors");
  // The CLI's rules for position arrays and tensor shapes (gate/positions.h), so that Python accepts
  // and refuses what `ropecheck check --spec` does, with its messages.
  m.def(
      "components_axis",
      [](const std::vector<std::int64_t>& shape, int components, const std::string& what) {
        switch (gate::components_axis(shape, components, what)) {
          case gate::ComponentsAxis::last: return "last";
          case gate::ComponentsAxis::first: return "first";
          case gate::ComponentsAxis::none: break;
        }
        return "none";
      },
      py::arg("shape"), py::arg("components"), py::arg("what") = "positions");
  m.def("heads_before_tokens", &gate::heads_before_tokens, py::arg("shape"), py::arg("tokens"), py::arg("head_dim"),
        py::arg("what") = "x");
}

}  // namespace ropecheck::python
