// certify() of a Python callable: every position of a range × every pair of a spec, unit probes at
// every position and random inputs at a stride, judged by the one pair rule against the consecutive
// reference — the run of `ropecheck certify` (gate/certificate.h run_certify), with the callable as
// the implementation (callable.h, in process or forked per call). It returns the shard's report or
// the certificate as `certify --json` writes it, byte for byte, so that `report merge` joins the
// shards of a callable and `certify --verify` reads its certificate.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <pybind11/stl.h>

#include "base/errors.h"
#include "bindings.h"
#include "callable.h"
#include "gate/certificate.h"
#include "gate/shard.h"

namespace ropecheck::python {
namespace {

struct CertifyText {
  std::string report;   // the file's text (gate/certificate.h certify_file_text)
  std::string summary;  // what `ropecheck certify` prints (certify_text)
  bool passed = false;
};

CertifyText certify_function(py::function fn, const std::string& name, const Spec& spec, const runner::CertifyOptions& options,
                             const std::string& model, const std::string& tolerance, bool strict_zeros, bool require_bits, int shard_index,
                             int shard_count, const std::string& library, const CallableLimits& limits) {
  gate::check_certify_options(options);  // every option checked before the work
  const runner::Claims claims = gate::certify_claims(model, tolerance);
  if (shard_count < 1 || shard_index < 0 || shard_index >= shard_count) {
    throw UsageError("--shard: expected K/N with 0 <= K < N, got " + std::to_string(shard_index) + "/" + std::to_string(shard_count));
  }
  const CallableImplementation implementation(name, std::move(fn), limits, claims);
  gate::CertifyRun run;
  try {
    py::gil_scoped_release unlocked;
    run = gate::run_certify(implementation, spec, options, strict_zeros, require_bits, {shard_index, shard_count}, library);
  } catch (const PythonStop& stop) {
    stop.raise_again();
  }
  return {gate::certify_file_text(run.report), gate::certify_text(run.report), run.result.pass(require_bits)};
}

}  // namespace

void bind_certify(py::module_& m) {
  py::class_<runner::CertifyOptions>(m, "CertifyOptions", "The range and probes of a certify run (runner/certify.h).")
      .def(py::init<>())
      .def_readwrite("first", &runner::CertifyOptions::first)
      .def_readwrite("end", &runner::CertifyOptions::end)
      .def_readwrite("stride", &runner::CertifyOptions::stride)
      .def_readwrite("seed", &runner::CertifyOptions::seed)
      .def_readwrite("chunk", &runner::CertifyOptions::chunk)
      .def_readwrite("threads", &runner::CertifyOptions::threads);
  py::class_<CertifyText>(m, "CertifyText")
      .def_readonly("report", &CertifyText::report)
      .def_readonly("summary", &CertifyText::summary)
      .def_readonly("passed", &CertifyText::passed);
  m.def("certify", &certify_function, py::arg("fn"), py::arg("name"), py::arg("spec"), py::arg("options"), py::arg("model"),
        py::arg("tolerance"), py::arg("strict_zeros"), py::arg("require_bits"), py::arg("shard_index"), py::arg("shard_count"),
        py::arg("library"), py::arg("limits"));
  m.def(
      "resolve_shard",
      [](const std::optional<std::string>& text, std::optional<std::int64_t> count) {
        const gate::Shard s = gate::resolve_shard(text, count, gate::shard_environment());
        return std::make_pair(s.index, s.count);
      },
      py::arg("text"), py::arg("count"), "--shard and --shard-count of the CLI (gate/shard.h): (index, count).");
}

}  // namespace ropecheck::python
