// Judging from Python: gate() over the golden suites (runner/golden_run.h, as `ropecheck run`), a
// sweep of a callable over positions (runner/sweep.h, as `ropecheck sweep`), and the results — the
// gate's Report (gate/report.h) with its groups and cases, and the same JSON, JUnit and HTML
// reports as the command line. check() of the user's own tensors is check.cpp
// (runner/tensor_judge.h).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "base/errors.h"
#include "bindings.h"
#include "callable.h"
#include "gate/check.h"
#include "gate/judge_args.h"
#include "gate/report.h"
#include "judge/inference.h"
#include "judge/verdict.h"
#include "runner/adapters.h"
#include "runner/golden_run.h"
#include "runner/sweep.h"

namespace ropecheck::python {
namespace {

using gate::JudgeArguments;
using gate::Report;
using judge::Case;
using judge::GroupResult;

template <class T>
py::array_t<T> array_of(const std::vector<T>& values) {
  py::array_t<T> out(static_cast<py::ssize_t>(values.size()));
  if (!values.empty()) std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(T));
  return out;
}

// The per-position worst e of groups: positions sorted, each with the worst e of its (test, token)
// points over every group (the plot of every report, as arrays).
std::pair<py::array_t<std::int64_t>, py::array_t<double>> position_e(const std::vector<GroupResult>& groups) {
  std::map<std::int64_t, double> worst;
  for (const GroupResult& g : groups) {
    for (const judge::Point& p : g.points) {
      auto [it, fresh] = worst.emplace(p.position, p.e);
      if (!fresh) it->second = std::max(it->second, p.e);
    }
  }
  std::vector<std::int64_t> positions;
  std::vector<double> e;
  for (const auto& [position, value] : worst) {
    positions.push_back(position);
    e.push_back(value);
  }
  return {array_of(positions), array_of(e)};
}

// The accuracy horizon over groups (each group's: judge/group.h): with an accuracy failure in some
// group, the smallest horizon of those groups (None when one fails at its smallest position);
// with none, every judged position is accurate: the largest of them, complete.
struct Horizon {
  std::optional<std::int64_t> position;
  bool complete = false;
};
Horizon horizon_of(const std::vector<GroupResult>& groups) {
  Horizon failing, all{std::nullopt, true};
  bool any_failing = false;
  for (const GroupResult& g : groups) {
    if (g.max_position < 0) continue;  // no ordinary pair judged
    all.position = std::max(all.position.value_or(-1), g.max_position);
    if (g.horizon_complete) continue;
    if (!g.horizon) return Horizon{};
    failing.position = any_failing ? std::min(*failing.position, *g.horizon) : *g.horizon;
    any_failing = true;
  }
  if (!all.position) return Horizon{};
  return any_failing ? failing : all;
}

// The report's explanation and its kind: the first failing group's that names something, else the
// first failing group's sentence ("no single change ..."); empty on a pass.
std::pair<std::string, std::string> explained(const Report& r) {
  std::pair<std::string, std::string> first;
  for (const GroupResult& g : r.groups) {
    if (g.verdict != judge::Verdict::fail || !g.diagnosis || g.diagnosis->explanation.empty()) continue;
    const std::string prefix = r.groups.size() > 1 ? g.suite + "[" + std::to_string(g.index) + "]: " : std::string();
    if (!g.diagnosis->explanation_kind.empty()) return {prefix + g.diagnosis->explanation, g.diagnosis->explanation_kind};
    if (first.first.empty()) first = {prefix + g.diagnosis->explanation, ""};
  }
  return first;
}

// Runs `judge` with the GIL released; a PythonStop from the user's function is raised again.
template <class Judge>
void judge_without_gil(Judge&& judge) {
  try {
    py::gil_scoped_release unlocked;
    judge();
  } catch (const PythonStop& stop) {
    stop.raise_again();
  }
}

// The RoPE suites at `path` (a callable computes RoPE, not attention), with only the groups `keep`
// accepts (all when it is None); suites left without a group are dropped.
std::vector<runner::LoadedGolden> load_suites(const std::string& path, const py::object& keep) {
  std::vector<runner::LoadedGolden> suites = runner::load_golden(path);
  std::vector<runner::LoadedGolden> kept;
  for (runner::LoadedGolden& suite : suites) {
    if (suite.file.kind != golden::Kind::rope) continue;
    std::vector<golden::Group> groups;
    for (golden::Group& g : suite.file.groups) {
      if (keep.is_none() || static_cast<bool>(py::bool_(keep(g.spec)))) groups.push_back(std::move(g));
    }
    if (groups.empty()) continue;
    std::int64_t tests = 0;
    for (const golden::Group& g : groups) tests += static_cast<std::int64_t>(g.rope_tests.size());
    suite.file.groups = std::move(groups);
    suite.file.number_of_tests = tests;
    kept.push_back(std::move(suite));
  }
  return kept;
}

// gate(): `fn` over the golden suites, as `ropecheck run` runs a kernel; `limits`: in process, or a
// forked child per call (callable.h).
Report gate_function(py::function fn, const std::string& name, const std::string& suites_path, const py::object& keep,
                     const JudgeArguments& args, const CallableLimits& limits) {
  const judge::Settings settings = gate::settings_of(args);  // every option checked before the work
  const CallableImplementation implementation(name, std::move(fn), limits, settings.claims);
  const std::vector<runner::LoadedGolden> suites = load_suites(suites_path, keep);
  Report report;
  if (suites.empty()) {
    report.command = "run";
    report.implementation = name;
    report.model = implementation.claims().model;
    report.notes.push_back("no golden group of " + suites_path + " matches");
  } else {
    judge_without_gil([&] { report = gate::judge_into_report(suites, implementation, settings, "run"); });
  }
  // The note `ropecheck run` gives a plugin that tripped the circuit breaker (gate/check.cpp).
  if (const std::optional<std::string> reason = implementation.stopped_reason()) report.notes.push_back("stopped: " + *reason);
  report.candidate = name;
  report.decide();
  return report;
}

// `ropecheck sweep` of `fn` for one spec: sampled positions up to max_position.
Report sweep_function(py::function fn, const std::string& name, const Spec& spec, std::int64_t max_position, std::int64_t samples,
                      std::uint64_t seed, const JudgeArguments& args, const CallableLimits& limits) {
  const judge::Settings settings = gate::settings_of(args);
  const CallableImplementation implementation(name, std::move(fn), limits, settings.claims);
  runner::SweepOptions sweep;
  sweep.max_position = max_position;
  sweep.samples = samples;
  sweep.seed = seed;
  sweep.threads = settings.threads;
  Report report;
  report.command = "sweep";
  report.implementation = name;
  report.candidate = name;
  report.model = implementation.claims().model;
  judge_without_gil([&] { report.groups.push_back(runner::sweep(implementation, spec, sweep, settings)); });
  if (const std::optional<std::string> reason = implementation.stopped_reason()) report.notes.push_back("stopped: " + *reason);
  report.scope = gate::scope_of(settings, 0, 0);
  report.worst_listed = settings.worst_cases;
  report.sweep = gate::SweepScope{seed, samples, max_position, 0, 1, settings.worst_cases};
  report.decide();
  return report;
}

// Results of several routes (golden groups and a sweep) as one.
Report merge_reports(std::vector<Report> reports) {
  if (reports.empty()) throw UsageError("merge: expected at least one result");
  Report out = reports.front();
  for (std::size_t i = 1; i < reports.size(); ++i) {
    for (GroupResult& g : reports[i].groups) out.groups.push_back(std::move(g));
    for (std::string& n : reports[i].notes) out.notes.push_back(std::move(n));
    for (std::string& f : reports[i].golden_files) out.golden_files.push_back(std::move(f));
  }
  out.sweep.reset();  // a merged result is no longer one sweep's shard
  out.decide();
  return out;
}

std::string number_text(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

std::string tolerance_text(const judge::Tolerance& t) {
  std::string text = (t.kind == judge::Tolerance::Kind::e ? "e <= " : "ulp <= ") + number_text(t.value);
  if (t.per_radian > 0) text += " + " + number_text(t.per_radian) + "*|angle|";
  return text;
}

void bind_results(py::module_& m) {
  py::class_<judge::ExplanationLine>(m, "ExplanationLine",
                                     "One distinct explanation of a run's failing groups (judge/verdict.h distinct_explanations).")
      .def_readonly("text", &judge::ExplanationLine::text)
      .def_readonly("groups", &judge::ExplanationLine::groups, "Indices into Result.groups.")
      .def("__repr__", [](const judge::ExplanationLine& l) { return "<ropecheck.ExplanationLine " + l.text + ">"; });

  py::class_<Case>(m, "Case", "One bad pair or test, as every report lists them (judge/group.h Case).")
      .def_readonly("suite", &Case::suite)
      .def_readonly("test_id", &Case::test_id)
      .def_property_readonly("kind", [](const Case& c) { return std::string(judge::name(c.kind)); })
      .def_readonly("accuracy", &Case::accuracy)
      .def_property_readonly("domain", [](const Case& c) { return c.domain ? std::string(judge::name(*c.domain)) : std::string(); })
      .def_readonly("message", &Case::message)
      .def_readonly("position", &Case::position)
      .def_readonly("token", &Case::token)
      .def_readonly("head", &Case::head)
      .def_readonly("dim", &Case::dim)
      .def_readonly("second_dim", &Case::second_dim)
      .def_property_readonly("input", [](const Case& c) { return py::make_tuple(c.input_x, c.input_y); })
      .def_property_readonly("expected", [](const Case& c) { return py::make_tuple(c.expected_a, c.expected_b); })
      .def_property_readonly("got", [](const Case& c) { return py::make_tuple(c.got_a, c.got_b); })
      .def_readonly("e", &Case::e)
      .def_readonly("ulp", &Case::ulp)
      .def_readonly("tolerance", &Case::tolerance);

  py::class_<GroupResult>(m, "Group", "The verdict of one golden group, one sweep or one check (judge/group.h).")
      .def_readonly("suite", &GroupResult::suite)
      .def_readonly("index", &GroupResult::index)
      .def_property_readonly("spec", [](const GroupResult& g) { return parse_spec(g.spec); })
      .def_property_readonly("verdict", [](const GroupResult& g) { return std::string(judge::name(g.verdict)); })
      .def_readonly("verdict_reason", &GroupResult::verdict_reason)
      .def_property_readonly("passed", [](const GroupResult& g) { return g.verdict == judge::Verdict::pass; })
      .def_property_readonly("tolerance", [](const GroupResult& g) { return tolerance_text(g.tolerance); })
      .def_property_readonly("tolerance_source", [](const GroupResult& g) { return g.tolerance.source; })
      .def_readonly("tests", &GroupResult::tests)
      .def_readonly("tests_failed", &GroupResult::tests_failed)
      .def_readonly("tests_skipped", &GroupResult::tests_skipped)
      .def_readonly("skipped_by_position", &GroupResult::skipped_by_position,
                    "Tests left out: every position above max_position (never called).")
      .def_readonly("tokens_beyond_max_position", &GroupResult::tokens_beyond_max_position,
                    "Tokens above max_position in the other tests: not judged (a callable is not handed them).")
      .def_readonly("pairs_checked", &GroupResult::pairs_checked)
      .def_readonly("pairs_failed", &GroupResult::pairs_failed)
      .def_readonly("worst_e", &GroupResult::worst_e)
      .def_readonly("worst_ulp", &GroupResult::worst_ulp)
      .def_readonly("worst_e_position", &GroupResult::worst_e_position)
      .def_readonly("worst_e_pair", &GroupResult::worst_e_pair)
      .def_readonly("worst_margin", &GroupResult::worst_margin,
                    "Largest e over its bound at the pair's angle, over the ordinary pairs (> 1: out of tolerance)")
      .def_property_readonly("margin_text", [](const GroupResult& g) { return gate::margin_text(g.worst_margin); })
      .def_readonly("max_position", &GroupResult::max_position)
      .def_readonly("horizon", &GroupResult::horizon)
      .def_readonly("horizon_complete", &GroupResult::horizon_complete)
      .def_property_readonly("horizon_text", &gate::format_horizon)
      .def_property_readonly("edge_failures", &GroupResult::edge_failures)
      .def_property_readonly("edge_summary", &gate::edge_summary)
      .def_readonly("inputs_rounded", &GroupResult::inputs_rounded,
                    "check(): input values that were not values of the spec's input dtype, rounded to it before judging")
      .def_property_readonly("inputs_rounded_note", &gate::rounded_inputs_note,
                             "The report's note about inputs_rounded ('' when none were rounded).")
      .def_readonly("worst_cases", &GroupResult::worst)
      .def_property_readonly("diagnosis",
                             [](const GroupResult& g) { return g.diagnosis ? g.diagnosis->lines : std::vector<std::string>{}; })
      .def_property_readonly("mistake", [](const GroupResult& g) { return g.diagnosis ? g.diagnosis->mistake : std::string(); })
      .def_property_readonly("explanation", [](const GroupResult& g) { return g.diagnosis ? g.diagnosis->explanation : std::string(); })
      .def_property_readonly("explanation_kind",
                             [](const GroupResult& g) { return g.diagnosis ? g.diagnosis->explanation_kind : std::string(); })
      .def_property_readonly("positions", [](const GroupResult& g) { return position_e({g}).first; })
      .def_property_readonly("position_e", [](const GroupResult& g) { return position_e({g}).second; })
      .def("__repr__", [](const GroupResult& g) {
        return "<ropecheck.Group " + g.suite + "[" + std::to_string(g.index) + "] " + std::string(judge::name(g.verdict)) + ", worst e " +
               number_text(g.worst_e) + ", horizon " + gate::format_horizon(g) + ">";
      });

  py::class_<Report>(m, "Result", R"(What check(), gate() and assert_rope_close() return: the gate's report.

passed, worst_e, horizon, positions / position_e (worst e per position, arrays), worst_cases,
diagnosis (lines), groups (one per golden group or sweep), table() (the CLI's verdict table),
to_json(), to_junit(), to_html(path=None): the same reports as `ropecheck check`.)")
      .def_readonly("command", &Report::command)
      .def_readonly("implementation", &Report::implementation)
      .def_property_readonly("model", [](const Report& r) { return std::string(judge::name(r.model)); })
      .def_property_readonly("verdict", [](const Report& r) { return std::string(judge::name(r.verdict)); })
      .def_property_readonly("passed", [](const Report& r) { return r.verdict == judge::Verdict::pass; })
      .def_readonly("groups", &Report::groups)
      .def_readonly("notes", &Report::notes)
      .def_property_readonly(
          "max_position", [](const Report& r) { return r.scope.max_position; },
          "The max_position judged with (None: no bound); what it left out: Group.skipped_by_position and "
          "Group.tokens_beyond_max_position.")
      .def_property_readonly("worst_e",
                             [](const Report& r) {
                               double worst = 0;
                               for (const GroupResult& g : r.groups) worst = std::max(worst, g.worst_e);
                               return worst;
                             })
      .def_property_readonly("horizon", [](const Report& r) { return horizon_of(r.groups).position; })
      .def_property_readonly("horizon_complete", [](const Report& r) { return horizon_of(r.groups).complete; })
      .def_property_readonly("positions", [](const Report& r) { return position_e(r.groups).first; })
      .def_property_readonly("position_e", [](const Report& r) { return position_e(r.groups).second; })
      .def_property_readonly("worst_cases",
                             [](const Report& r) {
                               std::vector<Case> cases;
                               for (const GroupResult& g : r.groups) cases.insert(cases.end(), g.worst.begin(), g.worst.end());
                               return cases;
                             })
      .def_property_readonly("diagnosis",
                             [](const Report& r) {
                               std::vector<std::string> lines;
                               for (const GroupResult& g : r.groups) {
                                 if (!g.diagnosis) continue;
                                 const std::string prefix =
                                     r.groups.size() > 1 ? g.suite + "[" + std::to_string(g.index) + "]: " : std::string();
                                 for (const std::string& line : g.diagnosis->lines) lines.push_back(prefix + line);
                               }
                               return lines;
                             })
      .def_property_readonly(
          "explanation", [](const Report& r) { return explained(r).first; },
          "What the failing outputs are (judge/inference.h): the change of the spec that reproduces them, "
          "a memory fault, a call that raised, or that no single change does; \"\" on a pass.")
      .def_property_readonly("explanation_kind", [](const Report& r) { return explained(r).second; })
      .def_property_readonly(
          "explanation_lines", [](const Report& r) { return judge::distinct_explanations(r.groups); },
          "One ExplanationLine per distinct explanation of the failing groups (\"4 groups: your outputs are RoPE with "
          "base=10000 (expected 500000)\"): the lines summary() prints; [] on a pass.")
      .def("table", &gate::format_table, "The verdict table `ropecheck check --verbose` prints.")
      .def("summary_text", &gate::format_summary, "The summary `ropecheck check` prints.")
      .def("to_json", &gate::to_json)
      .def("to_junit", &gate::to_junit)
      .def(
          "to_html",
          [](const Report& r, const std::optional<std::string>& path) -> py::object {
            const std::string html = gate::to_html(r);
            if (!path) return py::str(html);
            gate::write_atomically(*path, html, r.golden_files);
            return py::none();
          },
          py::arg("path") = py::none(), "The HTML report: returned, or written to `path` (atomically).")
      .def("__repr__", [](const Report& r) {
        return "<ropecheck.Result " + std::string(judge::name(r.verdict)) + ", " + std::to_string(r.groups.size()) + " group(s), model " +
               std::string(judge::name(r.model)) + ">";
      });
}

// A field of JudgeArguments::settings as an attribute of JudgeArguments, under the CLI option's
// name (python/ropecheck/__init__.py _arguments sets them).
template <class T>
auto setting_get(T judge::Settings::*field) {
  return [field](const JudgeArguments& args) { return args.settings.*field; };
}
template <class T>
auto setting_set(T judge::Settings::*field) {
  return [field](JudgeArguments& args, T value) { args.settings.*field = std::move(value); };
}

}  // namespace

void bind_judging(py::module_& m) {
  bind_results(m);
  py::class_<JudgeArguments>(m, "JudgeArguments", "The options every judging command takes (gate/judge_args.h).")
      .def(py::init<>())
      .def_readwrite("model", &JudgeArguments::model)
      .def_readwrite("tolerance", &JudgeArguments::tolerance)
      .def_readwrite("skip_flags", &JudgeArguments::skip_flags)
      .def_property("max_position", setting_get(&judge::Settings::max_position), setting_set(&judge::Settings::max_position))
      .def_property("require_horizon", setting_get(&judge::Settings::require_horizon), setting_set(&judge::Settings::require_horizon))
      .def_property("threads", setting_get(&judge::Settings::threads), setting_set(&judge::Settings::threads))
      .def_property("strict_zeros", setting_get(&judge::Settings::strict_zeros), setting_set(&judge::Settings::strict_zeros))
      .def_property("worst", setting_get(&judge::Settings::worst_cases), setting_set(&judge::Settings::worst_cases))
      .def_property("allow_missing", setting_get(&judge::Settings::allow_missing), setting_set(&judge::Settings::allow_missing));
  py::class_<CallableLimits>(m, "CallableLimits",
                             "How a callable is run: in process, or a forked child per call (isolate) with timeout_seconds.")
      .def(py::init<>())
      .def_readwrite("isolate", &CallableLimits::isolate)
      .def_readwrite("timeout_seconds", &CallableLimits::timeout_seconds);
  m.def("gate", &gate_function, py::arg("fn"), py::arg("name"), py::arg("suites"), py::arg("keep"), py::arg("args"), py::arg("limits"));
  m.def("sweep", &sweep_function, py::arg("fn"), py::arg("name"), py::arg("spec"), py::arg("max_position"), py::arg("samples"),
        py::arg("seed"), py::arg("args"), py::arg("limits"));
  m.def("merge", &merge_reports);
  bind_check(m);
}

}  // namespace ropecheck::python
