// The gate's JSON candidate form (readers.h parse_candidate_json; gate/README.md "File layout").
#include "reference/rounding.h"
#include "tensorio/reader_detail.h"

namespace ropecheck::tensorio {
using namespace detail;

namespace {

double json_value(const nlohmann::json& j, std::string_view file, const std::string& name) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    try {
      return reference::parse_float(j.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  fail(file, name, "numbers or float strings such as \"0x1.8p-1\", \"nan\", \"inf\", got " + excerpt(j.dump()));
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Fills t.values from `j` at nesting `depth` of t.shape; `at` is the index path (for messages).
void fill_values(const nlohmann::json& j, std::string_view file, const std::string& name, std::vector<std::size_t>& at,
                 Tensor& t) {
  auto where = [&] {
    std::string s;
    for (std::size_t i : at) s += "[" + std::to_string(i) + "]";
    return s.empty() ? std::string("the top") : s;
  };
  const std::size_t depth = at.size();
  if (depth == t.shape.size()) {
    if (j.is_array()) fail(file, name, "a rectangular array of shape " + shape_text(t.shape) + ", got an array at " + where());
    t.values.push_back(json_value(j, file, name));
    return;
  }
  if (!j.is_array() || static_cast<std::int64_t>(j.size()) != t.shape[depth]) {
    fail(file, name, "a rectangular array of shape " + shape_text(t.shape) + " (rows of " + std::to_string(t.shape[depth]) +
                         "), got " + (j.is_array() ? std::to_string(j.size()) + " elements" : std::string("a value")) + " at " +
                         where());
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    at.push_back(i);
    fill_values(j[i], file, name, at, t);
    at.pop_back();
  }
}

// Flattens nested arrays: the shape is read along the first elements, then every element must
// agree with it (ragged arrays are refused: [1, [0, 0.5]] has no shape).
void flatten(const nlohmann::json& j, std::string_view file, const std::string& name, Tensor& t) {
  for (const nlohmann::json* node = &j; node->is_array(); node = &node->front()) {
    if (t.shape.size() == 32) fail(file, name, "at most 32 nested arrays");
    t.shape.push_back(static_cast<std::int64_t>(node->size()));
    if (node->empty()) break;
  }
  std::vector<std::size_t> at;
  fill_values(j, file, name, at, t);
}

}  // namespace

TensorMap parse_candidate_json(std::string_view bytes, std::string_view file) {
  // A key given twice would let one output silently replace another: refuse it.
  const nlohmann::json j = parse_json(bytes, file, "JSON");
  if (!j.is_object()) fail(file, "top level", "an object {\"SUITE/ID/output\": [values...]}");
  TensorMap out;
  for (const auto& [name, value] : j.items()) {
    Tensor t;
    if (name.find('/') == std::string::npos) {
      t.dtype = "U";
      t.text = value.is_string() ? value.get<std::string>() : value.dump();
      out[name] = std::move(t);
      continue;
    }
    t.dtype = "F64";
    flatten(value, file, excerpt(name), t);
    out[name] = std::move(t);
  }
  return out;
}

}  // namespace ropecheck::tensorio
