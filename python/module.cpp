// `_ropecheck`: the module, the translation of every C++ error into a Python exception, and Spec.
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include <pybind11/stl.h>

#include "base/errors.h"
#include "bindings.h"
#include "golden/golden.h"
#include "hfconfig/hfconfig.h"
#include "runner/implementation.h"
#include "spec/schedule.h"
#include "tensorio/readers.h"

namespace ropecheck::python {

std::int64_t tokens_of(const Spec& spec, std::int64_t heads, std::int64_t positions, std::int64_t values,
                       const std::string& what) {
  const std::int64_t components = position_components(spec);
  if (heads < 1) throw UsageError(what + ": expected heads >= 1, got " + std::to_string(heads));
  if (positions % components != 0) {
    throw UsageError("positions: expected " + std::to_string(components) + " component(s) per token (spec " +
                     to_string(spec) + "), got " + std::to_string(positions) + " values");
  }
  const std::int64_t tokens = positions / components;
  // Checked: a product that wraps around could equal the input's size (as `ropecheck apply`).
  std::int64_t elements = 0;
  const bool overflow = __builtin_mul_overflow(tokens, heads, &elements) ||
                        __builtin_mul_overflow(elements, std::int64_t{spec.head_dim}, &elements);
  if (overflow || elements != values) {
    throw UsageError(what + ": expected tokens*heads*head_dim values (tokens=" + std::to_string(tokens) +
                     ", heads=" + std::to_string(heads) + ", head_dim=" + std::to_string(spec.head_dim) + "), got " +
                     std::to_string(values));
  }
  return tokens;
}

namespace {

// A str as UTF-8. pybind11's own conversion of a str with a lone surrogate (which has no UTF-8 form,
// e.g. "\udc80") fails with a RuntimeError that names no argument; this is the ValueError of
// python/README.md "Errors", naming `what`.
std::string utf8_of(const py::handle& text, const std::string& what) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    throw UsageError(what + ": expected text encodable as UTF-8, got a str with a lone surrogate");
  }
  return std::string(data, static_cast<std::size_t>(size));
}

// Spec(text) | Spec(dict) | Spec(spec): the compact text (spec.h parse_spec), or the JSON form's
// object (parse_spec_json: golden files' "spec", nested "scaling" too).
Spec spec_of(const py::object& value) {
  if (py::isinstance<Spec>(value)) return value.cast<Spec>();
  if (py::isinstance<py::str>(value)) return parse_spec(utf8_of(value, "spec"));
  if (py::isinstance<py::dict>(value)) {
    const std::string text = py::module_::import("json").attr("dumps")(value).cast<std::string>();
    return parse_spec_json(text);
  }
  throw UsageError("spec: expected the compact text (layout=half,head_dim=128,...), a dict or a Spec, got " +
                   std::string(py::str(value.get_type().attr("__name__"))));
}

// A config as Spec.from_hf_config and hf_config_rotations take it: its text and the name its
// messages give it. A path is read as `--hf-config` reads it (gate/commands/spec_options.cpp, which
// is the executable's, not the gate library's), so the messages are the CLI's; a dict is the parsed
// config, named "config".
struct ConfigText {
  std::string text, name;
};

ConfigText config_text(const py::object& config) {
  if (py::isinstance<py::dict>(config)) {
    return {py::module_::import("json").attr("dumps")(config).cast<std::string>(), "config"};
  }
  if (py::isinstance<py::str>(config) || py::isinstance(config, py::module_::import("os").attr("PathLike"))) {
    // The file system's bytes of the path (os.fsencode: a name that is not UTF-8 arrives as a str
    // with surrogate escapes and is read as the same file).
    const std::string path = py::module_::import("os").attr("fsencode")(config).cast<std::string>();
    try {
      return {tensorio::read_file_bytes(path, std::uint64_t{1} << 24), path};  // as --hf-config reads it: kilobytes
    } catch (const tensorio::ReaderError& e) {
      throw InputError(std::string("--hf-config: ") + e.what());
    }
  }
  throw UsageError("--hf-config: expected the path of a config.json or its parsed dict, got " +
                   std::string(py::str(config.get_type().attr("__name__"))));
}

std::optional<std::int64_t> seq_len_of(const py::object& seq_len) {
  if (seq_len.is_none()) return std::nullopt;
  std::int64_t value = 0;
  if (py::isinstance<py::int_>(seq_len) && !py::isinstance<py::bool_>(seq_len)) {
    try {
      value = seq_len.cast<std::int64_t>();
    } catch (const py::cast_error&) {  // beyond int64: refused below like any other bad value
    }
  }
  if (value < 1) throw UsageError("--seq-len: expected a positive integer, got " + std::string(py::repr(seq_len)));
  return value;
}

// layer=None | an int >= 0 (a decoder layer) | 'all' | 'global' | 'local', as `--layer` (NoPE layers
// rotate nothing: 'nope' is no rotation to judge).
hfconfig::LayerSelector selector_of(const py::object& layer) {
  hfconfig::LayerSelector selector;
  if (layer.is_none()) return selector;
  const std::string expected = "layer: expected an int >= 0 or 'all'|'global'|'local', got ";
  if (py::isinstance<py::int_>(layer) && !py::isinstance<py::bool_>(layer)) {
    std::int64_t index = -1;
    try {
      index = layer.cast<std::int64_t>();
    } catch (const py::cast_error&) {  // beyond int64: refused below
    }
    if (index < 0) throw UsageError(expected + std::string(py::repr(layer)));
    selector.layer = index;
    return selector;
  }
  if (py::isinstance<py::str>(layer)) {
    const std::optional<hfconfig::LayerKind> kind = hfconfig::parse_layer_kind(utf8_of(layer, "layer"));
    if (kind && kind != hfconfig::LayerKind::kNoRope) {
      selector.kind = kind;
      return selector;
    }
    if (kind == hfconfig::LayerKind::kNoRope) throw UsageError(expected + "'nope' (NoPE layers apply no rotation: no spec to judge)");
  }
  throw UsageError(expected + std::string(py::repr(layer)));
}

// What the mapping assumed (ModelRotations::notes), as UserWarning "FILE: note: TEXT" (the CLI
// prints the same lines on stderr).
void warn_notes(const std::string& file, const std::vector<std::string>& notes) {
  for (const std::string& note : notes) {
    if (PyErr_WarnEx(PyExc_UserWarning, (file + ": note: " + note).c_str(), 1) != 0) throw py::error_already_set();
  }
}

// Spec.from_hf_config(path_or_dict, seq_len=None, layer=None): the one rotation `layer` picks, the
// mapping of `ropecheck spec --hf-config FILE [--seq-len N] [--layer N|KIND]` (hfconfig/README.md).
Spec spec_from_hf_config(const py::object& config, const py::object& seq_len, const py::object& layer) {
  const std::optional<std::int64_t> length = seq_len_of(seq_len);
  const hfconfig::LayerSelector selector = selector_of(layer);
  const ConfigText c = config_text(config);
  Spec spec = hfconfig::spec_from_hf_config(c.text, length, c.name, selector);
  warn_notes(c.name, hfconfig::rotations_from_hf_config(c.text, length, c.name).notes);
  return spec;
}

// hf_config_rotations(path_or_dict, seq_len=None): every rotation of the model, with its layers.
hfconfig::ModelRotations hf_config_rotations(const py::object& config, const py::object& seq_len) {
  const std::optional<std::int64_t> length = seq_len_of(seq_len);
  const ConfigText c = config_text(config);
  return hfconfig::rotations_from_hf_config(c.text, length, c.name);
}

void bind_spec(py::module_& m) {
  py::class_<Spec>(m, "Spec", R"(One complete RoPE variant (spec/README.md).

    Spec("layout=half,head_dim=128,base=500000,dtype=bf16")
    Spec({"layout": "half", "head_dim": 128, "base": "500000", "dtype": "bf16"})
    Spec(layout="half", head_dim=128, base=500000, dtype="bf16")

str(spec) is the canonical compact form; an invalid spec raises ValueError naming the field.)")
      .def(py::init([](const py::object& value, const py::kwargs& fields) {
             if (!value.is_none() && fields.size() > 0) {
               throw UsageError("spec: expected a text, a dict or keyword fields, not both");
             }
             return spec_of(value.is_none() ? py::object(py::dict(fields)) : value);
           }),
           py::arg("spec") = py::none())
      .def_static("from_json", [](const py::object& text) {
                    if (!py::isinstance<py::str>(text)) {
                      throw UsageError("spec: expected JSON text, got " + std::string(py::str(text.get_type().attr("__name__"))));
                    }
                    return parse_spec_json(utf8_of(text, "spec"));
                  },
                  "The JSON form (an object with the compact form's keys).")
      .def_static("from_hf_config", &spec_from_hf_config, py::arg("config"), py::arg("seq_len") = py::none(), py::arg("layer") = py::none(),
                  R"(The spec of a Hugging Face transformers config.json, as `ropecheck spec --hf-config`.

config: the file's path or its parsed dict. seq_len: the sequence length served, required by the
rope types whose rotation depends on it (dynamic, longrope; hfconfig/README.md). layer: for a
model whose layers rotate differently (Gemma-3's local and global layers), the rotation of decoder
layer N (an int, 0-based) or of the 'all', 'global' or 'local' layers (the kinds
hf_config_rotations names), as `--layer`; without it such a model raises ValueError naming the
choices (NoPE layers aside: SmolLM3's rotating layers are its one rotation). hf_config_rotations lists them all. What the mapping assumed (a dtype the config
does not give, ...) is issued as UserWarning. A config that ropecheck does not model raises
ValueError naming the file and the field.)")
      .def("__str__", [](const Spec& s) { return to_string(s); })
      .def("__repr__", [](const Spec& s) { return "Spec('" + to_string(s) + "')"; })
      .def("to_json", [](const Spec& s) { return to_json(s); }, "The canonical JSON form (one line).")
      .def("__eq__", [](const Spec& a, const py::object& b) { return py::isinstance<Spec>(b) && a == b.cast<Spec>(); })
      .def("__hash__", [](const Spec& s) { return py::hash(py::str(to_string(s))); })
      .def_property_readonly("layout", [](const Spec& s) { return std::string(name(s.layout)); })
      .def_property_readonly("head_dim", [](const Spec& s) { return s.head_dim; })
      .def_property_readonly("rotary_dim", [](const Spec& s) { return s.rotary_dim; })
      .def_property_readonly("base", [](const Spec& s) { return s.base; })
      .def_property_readonly("dtype", [](const Spec& s) { return std::string(name(s.dtype)); })
      .def_property_readonly("input_dtype", [](const Spec& s) { return std::string(name(input_dtype_of(s))); },
                             "The inputs' dtype: the spec's input_dtype, else its dtype.")
      .def_property_readonly("direction", [](const Spec& s) { return std::string(name(s.direction)); })
      .def_property_readonly("scaling", [](const Spec& s) { return std::string(name(s.scaling.type)); })
      .def_property_readonly("position_components", [](const Spec& s) { return position_components(s); })
      .def(
          "frequencies",
          [](const Spec& s) {
            std::vector<double> theta;
            for (int j = 0; j < s.rotary_dim / 2; ++j) theta.push_back(static_cast<double>(ropecheck::frequency<long double>(s, j)));
            return theta;
          },
          "theta'_j of every rotary pair j (spec/schedule.h frequency, in long double, rounded to float64): what a "
          "library's inv_freq is compared with.")
      .def_property_readonly(
          "attention_factor", [](const Spec& s) { return static_cast<double>(ropecheck::attention_factor<long double>(s)); },
          "The factor that multiplies cos and sin (1 for schemes without one).")
      .def(py::pickle([](const Spec& s) { return to_string(s); }, [](const std::string& text) { return parse_spec(text); }));
}

void bind_hf_config_rotations(py::module_& m) {
  py::class_<hfconfig::LayerRotation>(m, "LayerRotation", R"(The decoder layers of one kind and their rotation.

kind: 'all' (the layers that rotate, when they all rotate alike), 'global', 'local' (Gemma-3's
full-attention and sliding-window layers) or 'nope' (layers with no rotation); layer= and `--layer`
take the first three. layers: the 0-based layer indices, ascending; spec: their Spec, None for
'nope' layers.)")
      .def_property_readonly("kind", [](const hfconfig::LayerRotation& r) { return std::string(hfconfig::layer_kind_name(r.kind)); })
      .def_readonly("layers", &hfconfig::LayerRotation::layers)
      .def_readonly("spec", &hfconfig::LayerRotation::spec)
      .def("__repr__", [](const hfconfig::LayerRotation& r) {
        return "LayerRotation(kind='" + std::string(hfconfig::layer_kind_name(r.kind)) +
               "', layers=" + std::string(py::repr(py::cast(r.layers))) +
               ", spec=" + (r.spec ? "Spec('" + to_string(*r.spec) + "')" : std::string("None")) + ")";
      });
  py::class_<hfconfig::ModelRotations>(m, "ModelRotations", R"(Every rotation a config's model applies.

Iterating it (or indexing, len()) gives its LayerRotations, in order of their first layer;
model_type and num_layers are the config's ('' and 0 when it does not say); source the model code
its rotation is read from (hfconfig/README.md's table); notes what the mapping assumed (a dtype the
config does not give, ...).)")
      .def_readonly("model_type", &hfconfig::ModelRotations::model_type)
      .def_readonly("source", &hfconfig::ModelRotations::source)
      .def_readonly("num_layers", &hfconfig::ModelRotations::num_layers)
      .def_readonly("rotations", &hfconfig::ModelRotations::rotations)
      .def_readonly("notes", &hfconfig::ModelRotations::notes)
      .def("__len__", [](const hfconfig::ModelRotations& m) { return m.rotations.size(); })
      .def("__getitem__", [](const hfconfig::ModelRotations& m, const py::object& i) { return py::object(py::cast(m.rotations)[i]); })
      .def("__iter__", [](const hfconfig::ModelRotations& m) { return py::iter(py::cast(m.rotations)); })
      .def("__repr__", [](const hfconfig::ModelRotations& m) {
        std::string kinds;
        for (const hfconfig::LayerRotation& r : m.rotations)
          kinds += (kinds.empty() ? "'" : ", '") + std::string(hfconfig::layer_kind_name(r.kind)) + "'";
        return "ModelRotations(model_type='" + m.model_type + "', num_layers=" + std::to_string(m.num_layers) + ", kinds=[" + kinds + "])";
      });
  m.def("hf_config_rotations", &hf_config_rotations, py::arg("config"), py::arg("seq_len") = py::none(),
        R"(Every rotation of a Hugging Face transformers config.json, as `ropecheck spec --hf-config` lists them.

config: the file's path or its parsed dict; seq_len as Spec.from_hf_config. Returns a
ModelRotations: for r in ropecheck.hf_config_rotations("config.json"): r.kind, r.layers, r.spec
(None for NoPE layers). A config that ropecheck does not model raises ValueError naming the file
and the field.)");
}

}  // namespace
}  // namespace ropecheck::python

namespace {

// The exception's one line as a str: a message that names a file whose name is not UTF-8 (a path
// given with surrogate escapes, read by its bytes) keeps those bytes as surrogate escapes, as
// os.fsdecode gives them (PyErr_SetString decodes strictly and raised with no message at all).
void set_error(PyObject* type, const char* what) {
  PyObject* message = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "surrogateescape");
  if (message == nullptr) {
    PyErr_Clear();
    PyErr_SetString(type, "(a message that could not be decoded)");
    return;
  }
  PyErr_SetObject(type, message);
  Py_DECREF(message);
}

}  // namespace

PYBIND11_MODULE(_ropecheck, m) {
  using namespace ropecheck;
  using namespace ropecheck::python;
  m.doc() = "ropecheck's C++ libraries, bound for `import ropecheck` (python/README.md)";
  m.attr("__version__") = ROPECHECK_VERSION;
  // Bad arguments and bad input are ValueError with the command line's one-line message (the CLI
  // exits 2 with it); anything else is RuntimeError. Nothing reaches Python as a crash.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UsageError& e) {
      set_error(PyExc_ValueError, e.what());
    } catch (const InputError& e) {  // every reader's (base/errors.h)
      set_error(PyExc_ValueError, e.what());
    } catch (const runner::ImplementationFailure& e) {
      set_error(PyExc_RuntimeError, e.what());
    }
  });
  bind_spec(m);
  bind_hf_config_rotations(m);
  bind_apply(m);
  bind_judging(m);
  bind_fused(m);
}
