// The fused operation (fused/fused.h) for `import ropecheck`: the spec's fields, the drawn inputs and
// the judgement. The package's python/ropecheck/_fused.py calls the user's callable between them.
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "base/errors.h"
#include "bindings.h"
#include "callable.h"
#include "fused/fp8.h"
#include "fused/fused.h"
#include "judge/tolerance.h"

namespace ropecheck::python {
namespace {

py::array_t<double> array_of(const std::vector<double>& values, std::vector<py::ssize_t> shape) {
  py::array_t<double> out(shape);
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

py::array_t<std::int64_t> array_of(const std::vector<std::int64_t>& values, std::vector<py::ssize_t> shape) {
  py::array_t<std::int64_t> out(shape);
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

std::vector<double> values_of(const py::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return {};
  const Doubles a = py::cast<Doubles>(d[key]);
  return std::vector<double>(a.data(), a.data() + a.size());
}

std::vector<std::int64_t> integers_of(const py::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return {};
  const Integers a = py::cast<Integers>(d[key]);
  return std::vector<std::int64_t>(a.data(), a.data() + a.size());
}

// The fields the package needs to build the callable's arguments and read its results.
py::dict spec_info(const std::string& text) {
  const fused::FusedSpec s = fused::parse_fused_spec(text);
  py::dict d;
  d["canonical"] = fused::to_string(s);
  d["rope"] = to_string(s.rope);
  d["head_dim"] = s.rope.head_dim;
  d["q_heads"] = s.q_heads;
  d["k_heads"] = s.k_heads;
  d["position_components"] = position_components(s.rope);
  d["norm"] = std::string(fused::name(s.norm));
  d["fp8"] = std::string(fused::name(s.fp8));
  d["scale"] = std::string(fused::name(s.scale));
  d["destination"] = std::string(fused::name(s.destination));
  d["block_size"] = s.block_size;
  return d;
}

py::dict inputs_of(const std::string& text, std::int64_t tokens, std::uint64_t seed) {
  const fused::FusedSpec s = fused::parse_fused_spec(text);
  if (tokens < 1 || tokens > (std::int64_t{1} << 20)) {
    throw UsageError("--tokens: expected an integer in [1, 1048576], got " + std::to_string(tokens));
  }
  const fused::FusedInputs in = fused::random_inputs(s, tokens, seed);
  const py::ssize_t d = s.rope.head_dim, components = position_components(s.rope);
  py::dict out;
  out["q"] = array_of(in.q, {tokens, s.q_heads, d});
  out["k"] = array_of(in.k, {tokens, s.k_heads, d});
  out["positions"] = array_of(in.positions, {tokens, components});
  out["q_weight"] = array_of(in.q_weight, {static_cast<py::ssize_t>(in.q_weight.size())});
  out["k_weight"] = array_of(in.k_weight, {static_cast<py::ssize_t>(in.k_weight.size())});
  out["slot_mapping"] = array_of(in.slot_mapping, {static_cast<py::ssize_t>(in.slot_mapping.size())});
  out["num_blocks"] = in.num_blocks;
  return out;
}

fused::FusedInputs fused_inputs_of(const fused::FusedSpec& s, const py::dict& d) {
  fused::FusedInputs in;
  in.q = values_of(d, "q");
  in.k = values_of(d, "k");
  in.positions = integers_of(d, "positions");
  in.q_weight = values_of(d, "q_weight");
  in.k_weight = values_of(d, "k_weight");
  in.slot_mapping = integers_of(d, "slot_mapping");
  in.num_blocks = d.contains("num_blocks") ? py::cast<std::int64_t>(d["num_blocks"]) : 0;
  const std::int64_t per_token = std::int64_t{s.q_heads} * s.rope.head_dim;
  in.tokens = per_token > 0 ? static_cast<std::int64_t>(in.q.size()) / per_token : 0;
  return in;
}

py::dict judge(const std::string& text, const py::dict& inputs, const py::dict& outputs, const std::string& model) {
  const fused::FusedSpec s = fused::parse_fused_spec(text);
  const fused::FusedInputs in = fused_inputs_of(s, inputs);
  fused::FusedOutputs out;
  out.q_out = values_of(outputs, "q_out");
  out.k_out = values_of(outputs, "k_out");
  out.q_scale = values_of(outputs, "q_scale");
  out.k_scale = values_of(outputs, "k_scale");
  out.k_cache = values_of(outputs, "k_cache");
  const judge::Model m = model.empty() ? judge::kDefaultModel : judge::parse_model(model);
  const fused::FusedJudgement j = fused::judge_fused(s, in, out, m);
  py::dict r;
  r["verdict"] = std::string(judge::name(j.verdict));
  r["passed"] = j.verdict == judge::Verdict::pass;
  r["model"] = std::string(judge::name(j.model));
  py::list tensors;
  for (const auto& t : j.tensors) tensors.append(py::make_tuple(t.tensor, t.worst_e, t.judged, t.failed));
  r["tensors"] = tensors;
  if (j.first_failure) {
    const auto& f = *j.first_failure;
    py::dict ff;
    ff["tensor"] = f.tensor;
    ff["token"] = f.token;
    ff["head"] = f.head;
    ff["dim"] = f.dim;
    ff["got"] = f.got;
    ff["expected"] = f.expected;
    ff["bound"] = f.bound;
    ff["e"] = f.e;
    r["first_failure"] = ff;
  } else {
    r["first_failure"] = py::none();
  }
  r["bound"] = j.bound;
  r["derivation"] = j.derivation;
  r["explanation"] = j.explanation;
  r["report"] = fused::fused_report_text(j);
  return r;
}

// FP8 codes (uint8) to their values in the spec's format.
py::array_t<double> decode_codes(const std::string& text,
                                 const py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>& codes) {
  const fused::FusedSpec s = fused::parse_fused_spec(text);
  if (s.fp8 == fused::Fp8::none) throw UsageError("fp8: uint8 codes are read only with fp8=e4m3 or fp8=e5m2 in the spec");
  py::array_t<double> out(codes.size());
  double* o = out.mutable_data();
  for (py::ssize_t i = 0; i < codes.size(); ++i) o[i] = fused::decode_fp8(codes.data()[i], s.fp8);
  return out;
}

// One call of the package's wrapper `fn(spec, x, positions) -> flat outputs` (python/ropecheck/
// _fused.py) through CallableImplementation (callable.h): in this process, or in a child forked
// under a supervisor with `limits`, whose crash, hang or exception is this call's failure with the
// one-line messages of the RoPE route. The wrapper holds the fused inputs itself: x is `values`
// zeros, read by nothing, and sizes the flat output it must return. (status name, message, values).
py::tuple call(py::function fn, const std::string& name, const std::string& text, std::int64_t values, const CallableLimits& limits) {
  const fused::FusedSpec s = fused::parse_fused_spec(text);
  if (values < 1) throw UsageError("fused call: expected at least one output value, got " + std::to_string(values));
  const CallableImplementation implementation(name, std::move(fn), limits, runner::Claims{});
  const std::vector<double> x(static_cast<std::size_t>(values), 0.0);
  const std::vector<std::int64_t> positions(static_cast<std::size_t>(position_components(s.rope)), 0);
  runner::ApplyResult result;
  try {
    py::gil_scoped_release unlocked;
    result = implementation.run(s.rope, reference::Shape{1, 1, values}, positions, x);
  } catch (const PythonStop& stop) {
    stop.raise_again();
  }
  py::array_t<double> out(static_cast<py::ssize_t>(result.output.size()));
  std::copy(result.output.begin(), result.output.end(), out.mutable_data());
  return py::make_tuple(std::string(runner::kind_name(result.status)), result.message, out);
}

}  // namespace

void bind_fused(py::module_& m) {
  m.def(
      "fused_has_keys", [](const std::string& text) { return fused::has_fused_keys(text); }, py::arg("text"),
      "Whether the spec text holds a fused key (norm=, fp8=, destination=, ...: fused/fused.h).");
  m.def("fused_spec_info", &spec_info, py::arg("text"));
  m.def("fused_inputs", &inputs_of, py::arg("text"), py::arg("tokens"), py::arg("seed"));
  m.def("fused_judge", &judge, py::arg("text"), py::arg("inputs"), py::arg("outputs"), py::arg("model") = "");
  m.def("fused_decode_fp8", &decode_codes, py::arg("text"), py::arg("codes"));
  m.def("fused_call", &call, py::arg("fn"), py::arg("name"), py::arg("text"), py::arg("values"), py::arg("limits"));
}

}  // namespace ropecheck::python
