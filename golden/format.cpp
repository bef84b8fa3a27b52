// Reader and writer of golden files (schema ropecheck-golden/1; golden/README.md, and the JSON
// Schema in golden/schema/ropecheck-golden-1.schema.json, which describes the same structure).
//
// Reader: nlohmann::json builds the document (its parser is iterative; nesting is bounded first so
// that no recursive step — destruction, dump — can run deep), then a typed walk checks every field
// and reports the first problem with its JSON path. Value arrays are sized from the declared shape
// only after an overflow-safe product check and a comparison with the array's actual length.
//
// Writer: text is emitted directly, key order fixed by the code below, arrays of scalars on one
// line, two-space indentation, '\n' line ends; strings are escaped by nlohmann (UTF-8 kept).
// Numbers are integers only (values are hex strings), so no locale or float printing is involved.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/checked_json.h"
#include "golden/fused_golden.h"
#include "golden/golden.h"
#include "golden/sha256.h"
#include "golden/sidecar.h"
#include "reference/rounding.h"
#include "tensorio/readers.h"
#include "tensorio/writers.h"

namespace ropecheck::golden {

std::string_view name(Kind kind) { return kind == Kind::rope ? "rope" : "attention"; }

// ---------------------------------------------------------------------------------------------
// Reader.

namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxDepth = 16;                            // the format nests 7 deep at most
constexpr std::int64_t kMaxElements = std::int64_t{1} << 28;  // per array: far above any suite
constexpr std::int64_t kMaxPosition = (std::int64_t{1} << 53) - 1;  // exact in every JSON reader
// A fused suite's tests and tokens a test: each test is computed whole by the exact reference
// (fused::random_inputs caps tokens at 2^20, `ropecheck fused inputs --tokens`).
constexpr std::int64_t kMaxFusedTests = std::int64_t{1} << 16;
constexpr std::int64_t kMaxFusedTokens = std::int64_t{1} << 20;

class Reader {
 public:
  explicit Reader(std::string_view file_name) : file_(file_name) {}

  [[noreturn]] void fail(const std::string& path, const std::string& expected, const std::string& got) const {
    throw GoldenError(file_ + ": " + path + ": expected " + expected + ", got " + got);
  }

  static std::string describe(const Json& j) {
    switch (j.type()) {
      case Json::value_t::null: return "null";
      case Json::value_t::boolean: return j.get<bool>() ? "true" : "false";
      case Json::value_t::number_integer:
      case Json::value_t::number_unsigned:
      case Json::value_t::number_float: return j.dump();
      case Json::value_t::string: {
        std::string s = j.get<std::string>();
        if (s.size() > 40) s = s.substr(0, 40) + "...";
        return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
      }
      case Json::value_t::array: return "an array of " + std::to_string(j.size()) + " items";
      case Json::value_t::object: return "an object";
      default: return "an unsupported value";
    }
  }

  const Json& member(const Json& object, const std::string& path, const char* key) const {
    auto it = object.find(key);
    if (it == object.end()) fail(join(path, key), "a value (required field)", "nothing");
    return *it;
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string index(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  void object(const Json& j, const std::string& path, std::initializer_list<const char*> allowed) const {
    if (!j.is_object()) fail(path.empty() ? "(top level)" : path, "an object", describe(j));
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool known = false;
      for (const char* k : allowed) known = known || it.key() == k;
      if (!known) {
        std::string list;
        for (const char* k : allowed) list += (list.empty() ? "" : ", ") + std::string(k);
        fail(join(path, it.key()), "one of the fields " + list, "an unknown field");
      }
    }
  }

  std::string string(const Json& j, const std::string& path) const {
    if (!j.is_string()) fail(path, "a string", describe(j));
    return j.get<std::string>();
  }

  std::int64_t integer(const Json& j, const std::string& path, std::int64_t low, std::int64_t high) const {
    const std::string range = "an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]";
    if (j.is_number_unsigned()) {
      const auto v = j.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(high)) fail(path, range, describe(j));
      if (static_cast<std::int64_t>(v) < low) fail(path, range, describe(j));
      return static_cast<std::int64_t>(v);
    }
    if (!j.is_number_integer()) fail(path, range, describe(j));
    const auto v = j.get<std::int64_t>();
    if (v < low || v > high) fail(path, range, describe(j));
    return v;
  }

  bool boolean(const Json& j, const std::string& path) const {
    if (!j.is_boolean()) fail(path, "true or false", describe(j));
    return j.get<bool>();
  }

  std::vector<std::string> flags(const Json& j, const std::string& path) const {
    if (!j.is_array()) fail(path, "an array of flag names", describe(j));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      std::string s = string(j[i], index(path, i));
      if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); })) {
        fail(index(path, i), "a flag name of letters and digits", describe(j[i]));
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  // Overflow-safe product of a shape's dimensions, each already in [1, 2^31].
  std::int64_t product(std::initializer_list<std::int64_t> dims, const std::string& path) const {
    std::int64_t total = 1;
    for (std::int64_t d : dims) {
      if (d != 0 && total > kMaxElements / d) {
        fail(path, "a shape of at most " + std::to_string(kMaxElements) + " elements", "more");
      }
      total *= d;
    }
    return total;
  }

  std::vector<double> values(const Json& j, const std::string& path, std::int64_t count, Dtype dtype) const {
    if (!j.is_array()) fail(path, "an array of " + std::to_string(count) + " hex-float strings", describe(j));
    if (static_cast<std::int64_t>(j.size()) != count) {
      fail(path, "an array of " + std::to_string(count) + " hex-float strings (from shape)",
           "an array of " + std::to_string(j.size()) + " items");
    }
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_string()) fail(index(path, i), "a hex-float string", describe(j[i]));
      const auto v = reference::parse_hex(j[i].get_ref<const std::string&>());
      if (!v) fail(index(path, i), "a hex-float string (e.g. \"0x1.8p-1\", \"-0x0p+0\", \"nan\", \"inf\")", describe(j[i]));
      if (!reference::representable(*v, dtype)) {
        fail(index(path, i), "a value of " + std::string(ropecheck::name(dtype)), describe(j[i]) + " (not representable)");
      }
      out.push_back(*v);
    }
    return out;
  }

  std::vector<std::string> decimals(const Json& j, const std::string& path, std::int64_t count) const {
    if (!j.is_array() || static_cast<std::int64_t>(j.size()) != count) {
      fail(path, "an array of " + std::to_string(count) + " decimal strings (from shape)", describe(j));
    }
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < j.size(); ++i) {
      std::string s = string(j[i], index(path, i));
      if (!is_exact_decimal(s)) {
        fail(index(path, i), "a decimal string with 40 significant digits (d.ddd…e±NN)", describe(j[i]));
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  // "-d.<39 digits>e±NN" (the writer's form; see generator.cpp format_exact).
  static bool is_exact_decimal(const std::string& s) {
    std::size_t i = 0;
    if (i < s.size() && s[i] == '-') ++i;
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    ++i;
    if (i >= s.size() || s[i] != '.') return false;
    ++i;
    int digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      ++digits;
    }
    if (digits != 39 || i >= s.size() || s[i] != 'e') return false;
    ++i;
    if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return false;
    ++i;
    int exponent_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      ++exponent_digits;
    }
    return i == s.size() && exponent_digits >= 2 && exponent_digits <= 9;
  }

  std::vector<std::int64_t> positions(const Json& j, const std::string& path, std::int64_t tokens, int components) const {
    const std::string what = components == 1
        ? "an array of " + std::to_string(tokens) + " positions (integers >= 0, one per token)"
        : "an array of " + std::to_string(tokens) + " position tuples of " + std::to_string(components) + " integers";
    if (!j.is_array()) fail(path, what, describe(j));
    if (static_cast<std::int64_t>(j.size()) != tokens) fail(path, what, "an array of " + std::to_string(j.size()) + " items");
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(tokens) * static_cast<std::size_t>(components));
    for (std::size_t t = 0; t < j.size(); ++t) {
      if (components == 1) {
        out.push_back(integer(j[t], index(path, t), 0, kMaxPosition));
        continue;
      }
      if (!j[t].is_array() || static_cast<int>(j[t].size()) != components) {
        fail(index(path, t), "a tuple of " + std::to_string(components) + " positions", describe(j[t]));
      }
      for (std::size_t c = 0; c < j[t].size(); ++c) out.push_back(integer(j[t][c], index(index(path, t), c), 0, kMaxPosition));
    }
    return out;
  }

  Spec spec(const Json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, "a spec object (canonical form of spec::to_json)", describe(j));
    // Only scalars and arrays of scalars, so that dumping it for the spec parser is shallow.
    for (auto it = j.begin(); it != j.end(); ++it) {
      const Json& v = it.value();
      if (v.is_object()) fail(join(path, it.key()), "a string, number, boolean or array", describe(v));
      if (v.is_array()) {
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (v[i].is_array() || v[i].is_object()) fail(index(join(path, it.key()), i), "a scalar", describe(v[i]));
        }
      }
    }
    try {
      return parse_spec_json(j.dump());
    } catch (const SpecError& e) {
      throw GoldenError(file_ + ": " + path + ": " + e.what());
    }
  }

  RopeTest rope_test(const Json& j, const std::string& path, const Spec& s) const {
    object(j, path, {"id", "comment", "flags", "positions", "shape", "input", "expected", "expected_f32_recipe", "exact"});
    RopeTest t;
    t.id = integer(member(j, path, "id"), join(path, "id"), 1, kMaxPosition);
    t.comment = string(member(j, path, "comment"), join(path, "comment"));
    t.flags = flags(member(j, path, "flags"), join(path, "flags"));
    const Json& shape = member(j, path, "shape");
    const std::string shape_path = join(path, "shape");
    if (!shape.is_array() || shape.size() != 3) fail(shape_path, "[tokens, heads, head_dim]", describe(shape));
    t.tokens = integer(shape[0], index(shape_path, 0), 1, std::int64_t{1} << 31);
    t.heads = integer(shape[1], index(shape_path, 1), 1, std::int64_t{1} << 31);
    t.head_dim = integer(shape[2], index(shape_path, 2), 1, std::int64_t{1} << 31);
    if (t.head_dim != s.head_dim) {
      fail(index(shape_path, 2), "the spec's head_dim " + std::to_string(s.head_dim), std::to_string(t.head_dim));
    }
    const std::int64_t count = product({t.tokens, t.heads, t.head_dim}, shape_path);
    product({t.tokens, position_components(s)}, shape_path);
    t.positions = positions(member(j, path, "positions"), join(path, "positions"), t.tokens, position_components(s));
    if (member(j, path, "input").is_object()) {
      // {"tensor": NAME}: the values are in the sidecar (read by load_arrays, one test at a time).
      if (!sidecar_) fail(join(path, "input"), "an array of values (this file has no \"sidecar\")", "an object");
      t.sidecar = RopeTest::SidecarArrays{tensor_ref(j["input"], join(path, "input")),
                                          tensor_ref(member(j, path, "expected"), join(path, "expected"))};
      if (j.contains("expected_f32_recipe") || j.contains("exact")) {
        fail(path, "no expected_f32_recipe or exact in a sidecar test", "one of them");
      }
      return t;
    }
    t.input = values(member(j, path, "input"), join(path, "input"), count, input_dtype_of(s));
    t.expected = values(member(j, path, "expected"), join(path, "expected"), count, s.dtype);
    if (j.contains("expected_f32_recipe")) {
      t.expected_f32_recipe = values(j["expected_f32_recipe"], join(path, "expected_f32_recipe"), count, s.dtype);
    }
    if (j.contains("exact")) t.exact = decimals(j["exact"], join(path, "exact"), count);
    return t;
  }

  AttentionTest attention_test(const Json& j, const std::string& path, const Spec& s) const {
    object(j, path, {"id", "comment", "flags", "causal", "q_positions", "k_positions", "shape", "q", "k", "v",
                     "expected_scores", "expected_outputs"});
    if (position_components(s) != 1) fail(path, "a single-axis spec for attention tests", "a multi-axis spec");
    if (input_dtype_of(s) != s.dtype) fail(path, "one dtype for attention tests", "a spec with input_dtype");
    AttentionTest t;
    t.id = integer(member(j, path, "id"), join(path, "id"), 1, kMaxPosition);
    t.comment = string(member(j, path, "comment"), join(path, "comment"));
    t.flags = flags(member(j, path, "flags"), join(path, "flags"));
    t.causal = boolean(member(j, path, "causal"), join(path, "causal"));
    const Json& shape = member(j, path, "shape");
    const std::string shape_path = join(path, "shape");
    object(shape, shape_path, {"q_tokens", "k_tokens", "heads", "head_dim", "v_dim"});
    constexpr std::int64_t limit = std::int64_t{1} << 31;
    t.q_tokens = integer(member(shape, shape_path, "q_tokens"), join(shape_path, "q_tokens"), 1, limit);
    t.k_tokens = integer(member(shape, shape_path, "k_tokens"), join(shape_path, "k_tokens"), 1, limit);
    t.heads = integer(member(shape, shape_path, "heads"), join(shape_path, "heads"), 1, limit);
    t.head_dim = integer(member(shape, shape_path, "head_dim"), join(shape_path, "head_dim"), 1, limit);
    t.v_dim = integer(member(shape, shape_path, "v_dim"), join(shape_path, "v_dim"), 1, limit);
    if (t.head_dim != s.head_dim) {
      fail(join(shape_path, "head_dim"), "the spec's head_dim " + std::to_string(s.head_dim), std::to_string(t.head_dim));
    }
    const std::int64_t q_count = product({t.q_tokens, t.heads, t.head_dim}, shape_path);
    const std::int64_t k_count = product({t.k_tokens, t.heads, t.head_dim}, shape_path);
    const std::int64_t v_count = product({t.k_tokens, t.heads, t.v_dim}, shape_path);
    const std::int64_t score_count = product({t.heads, t.q_tokens, t.k_tokens}, shape_path);
    const std::int64_t output_count = product({t.q_tokens, t.heads, t.v_dim}, shape_path);
    t.q_positions = positions(member(j, path, "q_positions"), join(path, "q_positions"), t.q_tokens, 1);
    t.k_positions = positions(member(j, path, "k_positions"), join(path, "k_positions"), t.k_tokens, 1);
    t.q = values(member(j, path, "q"), join(path, "q"), q_count, s.dtype);
    t.k = values(member(j, path, "k"), join(path, "k"), k_count, s.dtype);
    t.v = values(member(j, path, "v"), join(path, "v"), v_count, s.dtype);
    t.expected_scores = values(member(j, path, "expected_scores"), join(path, "expected_scores"), score_count, s.dtype);
    t.expected_outputs = values(member(j, path, "expected_outputs"), join(path, "expected_outputs"), output_count, s.dtype);
    return t;
  }

  GoldenFile file(const Json& j) const {
    // A fused suite has other fields: named by its schema, not by the first field this one lacks.
    if (j.is_object() && j.contains("schema") && j["schema"] == kFusedSchema) {
      fail("schema",
           "\"" + std::string(kSchema) + "\" (a fused suite, " + std::string(kFusedSchema) +
               ", is judged alone: ropecheck check --golden FILE)",
           describe(j["schema"]));
    }
    object(j, "", {"schema", "suite", "kind", "description", "generator", "number_of_tests", "notes", "groups", "sidecar"});
    GoldenFile f;
    if (j.contains("sidecar")) {
      sidecar(j["sidecar"], f.sidecar, f.sidecar_sha256);
      sidecar_ = true;
    }
    const std::string schema = string(member(j, "", "schema"), "schema");
    if (schema != kSchema) fail("schema", "\"" + std::string(kSchema) + "\"", describe(j["schema"]));
    f.suite = suite_name(j);
    const std::string kind = string(member(j, "", "kind"), "kind");
    if (kind == "rope") f.kind = Kind::rope;
    else if (kind == "attention") f.kind = Kind::attention;
    else fail("kind", "\"rope\" or \"attention\"", describe(j["kind"]));
    f.description = string(member(j, "", "description"), "description");
    f.generator = generator(member(j, "", "generator"));
    f.number_of_tests = integer(member(j, "", "number_of_tests"), "number_of_tests", 0, kMaxPosition);
    const Json& notes = member(j, "", "notes");
    if (!notes.is_object()) fail("notes", "an object mapping each flag to its explanation", describe(notes));
    for (auto it = notes.begin(); it != notes.end(); ++it) {
      f.notes.emplace_back(it.key(), string(it.value(), join("notes", it.key())));
    }
    const Json& groups = member(j, "", "groups");
    if (!groups.is_array()) fail("groups", "an array of groups", describe(groups));
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const std::string gpath = index("groups", gi);
      object(groups[gi], gpath, {"spec", "tests"});
      Group group;
      group.spec = spec(member(groups[gi], gpath, "spec"), join(gpath, "spec"));
      const Json& tests = member(groups[gi], gpath, "tests");
      if (!tests.is_array()) fail(join(gpath, "tests"), "an array of tests", describe(tests));
      for (std::size_t ti = 0; ti < tests.size(); ++ti) {
        const std::string tpath = index(join(gpath, "tests"), ti);
        if (f.kind == Kind::rope) group.rope_tests.push_back(rope_test(tests[ti], tpath, group.spec));
        else group.attention_tests.push_back(attention_test(tests[ti], tpath, group.spec));
      }
      f.groups.push_back(std::move(group));
    }
    return f;
  }

  // "sidecar": {"file", "format", "sha256" (optional here)}: a safetensors file in the JSON's folder.
  void sidecar(const Json& sc, std::string& file, std::string& sha256) const {
    object(sc, "sidecar", {"file", "format", "sha256"});
    file = string(member(sc, "sidecar", "file"), "sidecar.file");
    if (sc.contains("sha256")) {
      sha256 = string(sc["sha256"], "sidecar.sha256");
      const bool hex =
          sha256.size() == 71 && sha256.rfind("sha256:", 0) == 0 && sha256.find_first_not_of("0123456789abcdef", 7) == std::string::npos;
      if (!hex) fail("sidecar.sha256", "\"sha256:\" and 64 lower-case hex digits", describe(sc["sha256"]));
    }
    if (string(member(sc, "sidecar", "format"), "sidecar.format") != "safetensors") {
      fail("sidecar.format", "\"safetensors\"", describe(sc["format"]));
    }
    // A name in the JSON's own folder: a golden file never points elsewhere on the machine.
    if (file.empty() || file.find_first_of(std::string("/\0", 2)) != std::string::npos || file == "." || file == "..") {
      fail("sidecar.file", "a file name in the golden file's folder (no '/')", describe(sc["file"]));
    }
  }

  std::string suite_name(const Json& j) const {
    std::string suite = string(member(j, "", "suite"), "suite");
    if (suite.empty() || !std::all_of(suite.begin(), suite.end(), [](char c) {
          return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-';
        })) {
      fail("suite", "a suite name of lower-case letters, digits and '-'", describe(j["suite"]));
    }
    return suite;
  }

  Generator generator(const Json& g) const {
    object(g, "generator", {"name", "version", "precision_bits", "seed"});
    Generator out;
    out.name = string(member(g, "generator", "name"), "generator.name");
    out.version = string(member(g, "generator", "version"), "generator.version");
    out.precision_bits = static_cast<int>(integer(member(g, "generator", "precision_bits"), "generator.precision_bits", 64, 65536));
    out.seed = static_cast<std::uint64_t>(integer(member(g, "generator", "seed"), "generator.seed", 0, kMaxPosition));
    return out;
  }

  // A fused suite (golden/fused_golden.h): the spec as text, tests of ids 1, 2, … and their tokens,
  // the arrays in the sidecar, whose hash is required.
  FusedGoldenFile fused_file(const Json& j) const {
    object(j, "", {"schema", "suite", "description", "generator", "spec", "number_of_tests", "sidecar", "tests"});
    const std::string schema = string(member(j, "", "schema"), "schema");
    if (schema != kFusedSchema) fail("schema", "\"" + std::string(kFusedSchema) + "\"", describe(j["schema"]));
    FusedGoldenFile f;
    f.suite = suite_name(j);
    f.description = string(member(j, "", "description"), "description");
    f.generator = generator(member(j, "", "generator"));
    f.spec = string(member(j, "", "spec"), "spec");
    if (f.spec.empty()) fail("spec", "the fused spec's text", "\"\"");
    const std::int64_t count = integer(member(j, "", "number_of_tests"), "number_of_tests", 1, kMaxFusedTests);
    sidecar(member(j, "", "sidecar"), f.sidecar, f.sidecar_sha256);
    if (f.sidecar_sha256.empty()) fail("sidecar.sha256", "\"sha256:\" and 64 lower-case hex digits (required in a fused suite)", "nothing");
    const Json& tests = member(j, "", "tests");
    if (!tests.is_array()) fail("tests", "an array of tests", describe(tests));
    if (static_cast<std::int64_t>(tests.size()) != count) {
      fail("tests", std::to_string(count) + " tests (number_of_tests)", std::to_string(tests.size()));
    }
    for (std::size_t i = 0; i < tests.size(); ++i) {
      const std::string path = index("tests", i);
      object(tests[i], path, {"id", "comment", "tokens"});
      FusedGoldenTest t;
      t.id = integer(member(tests[i], path, "id"), join(path, "id"), static_cast<std::int64_t>(i) + 1, static_cast<std::int64_t>(i) + 1);
      t.comment = string(member(tests[i], path, "comment"), join(path, "comment"));
      t.tokens = integer(member(tests[i], path, "tokens"), join(path, "tokens"), 1, kMaxFusedTokens);
      f.tests.push_back(std::move(t));
    }
    return f;
  }

  // Rejects nesting deeper than kMaxDepth before parsing (brackets outside strings).
  void check_depth(std::string_view text) const {
    const std::size_t at = json_nesting_exceeds(text, kMaxDepth);
    if (at != std::string_view::npos) {
      throw GoldenError(file_ + ": byte " + std::to_string(at) + ": expected nesting at most " + std::to_string(kMaxDepth) +
                        " deep, got deeper");
    }
  }

 private:
  std::string file_;
  mutable bool sidecar_ = false;  // the file being read has a "sidecar"

  // {"tensor": NAME}: a tensor of the sidecar.
  std::string tensor_ref(const Json& j, const std::string& path) const {
    object(j, path, {"tensor"});
    std::string name = string(member(j, path, "tensor"), join(path, "tensor"));
    if (name.empty()) fail(join(path, "tensor"), "a tensor name", "\"\"");
    return name;
  }
};

}  // namespace

namespace {

// The one parse of either schema: nesting bounded first, then the typed walk `read`; every error
// is a GoldenError naming the file. `refuse_duplicates`: a key given twice in one object is refused
// (base/checked_json.h; the fused schema's reader) instead of keeping one of its values.
template <class Read>
auto parse_document(std::string_view text, std::string_view file_name, const char* what, bool refuse_duplicates, Read read) {
  Reader reader(file_name);
  reader.check_depth(text);
  Json j;
  JsonNotes notes;
  try {
    j = refuse_duplicates ? parse_json_checked<Json>(text, notes, kMaxDepth) : Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    throw GoldenError(std::string(file_name) + ": expected valid JSON, got a syntax error (" + e.what() + ")");
  }
  if (!notes.duplicate.empty())
    throw GoldenError(std::string(file_name) + ": " + notes.duplicate + ": expected each key once, got it twice");
  try {
    return read(reader, j);
  } catch (const GoldenError&) {
    throw;
  } catch (const std::exception& e) {  // e.g. a bad_alloc-free library exception: still one type
    throw GoldenError(std::string(file_name) + ": expected a readable " + what + ", got an error (" + e.what() + ")");
  }
}

}  // namespace

GoldenFile parse_golden(std::string_view text, std::string_view file_name) {
  return parse_document(text, file_name, "golden file", false, [](const Reader& r, const Json& j) { return r.file(j); });
}

FusedGoldenFile parse_fused_golden(std::string_view text, std::string_view file_name) {
  return parse_document(text, file_name, "fused golden file", true, [](const Reader& r, const Json& j) { return r.fused_file(j); });
}

GoldenFile read_golden_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw GoldenError(path + ": expected a readable file, got " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  GoldenFile f = parse_golden(buffer.str(), path);
  f.path = path;
  if (!f.sidecar.empty()) f.sidecar_path = (std::filesystem::path(path).parent_path() / f.sidecar).string();
  return f;
}

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

}  // namespace

const tensorio::TensorFile::Entry& sidecar_entry(const tensorio::TensorFile& sidecar, const std::string& path, const RopeTest& test,
                                                 const std::string& name, Dtype dtype) {
  const tensorio::TensorFile::Entry* e = sidecar.find(name);
  const std::string where = path + ": tensor " + name + ": expected ";
  if (e == nullptr || e->dtype == "U") throw GoldenError(where + "it in the sidecar (test " + std::to_string(test.id) + "), got nothing");
  if (e->dtype != tensorio::storage_dtype(dtype)) {
    throw GoldenError(where + "dtype " + tensorio::storage_dtype(dtype) + " (the group's " + std::string(ropecheck::name(dtype)) + "), got " + e->dtype);
  }
  const std::uint64_t count = static_cast<std::uint64_t>(test.tokens) * static_cast<std::uint64_t>(test.heads) *
                              static_cast<std::uint64_t>(test.head_dim);  // each below 2^31: no wrap
  if (e->count != count) {
    throw GoldenError(where + std::to_string(count) + " values (the test's shape), got " + std::to_string(e->count));
  }
  const std::vector<std::int64_t> shape{test.tokens, test.heads, test.head_dim};
  if (e->shape != shape) throw GoldenError(where + "shape " + shape_text(shape) + " (the test's), got " + shape_text(e->shape));
  return *e;
}

std::string sidecar_path_of(const GoldenFile& file) { return file.sidecar_path.empty() ? file.sidecar : file.sidecar_path; }

tensorio::TensorFile open_sidecar(const GoldenFile& file) {
  const std::string path = sidecar_path_of(file);
  // A sidecar that cannot be read is named by the field that points to it (only the reading: the
  // hash mismatch below is an error of its own field).
  const auto unreadable = [&](const InputError& e) {
    return GoldenError("sidecar.file: expected the safetensors file it names (" + file.sidecar + "), got " + e.what());
  };
  std::optional<tensorio::TensorFile> sidecar;
  try {
    sidecar.emplace(tensorio::TensorFile::open(path));
  } catch (const InputError& e) {
    throw unreadable(e);
  }
  // The pair is checked by content: a sidecar regenerated, replaced or copied from another suite
  // may have every tensor of the right name and shape and still hold other values.
  if (!file.sidecar_sha256.empty()) {
    std::string actual;
    try {
      actual = sha256_of_file(path);
    } catch (const InputError& e) {
      throw unreadable(e);
    }
    if (actual != file.sidecar_sha256) {
      throw GoldenError("sidecar.sha256: expected " + path + " to hash to " + file.sidecar_sha256 + " (the sidecar this file was written with), got " +
                        actual);
    }
  }
  return std::move(*sidecar);
}

void SidecarLoader::load(const Spec& spec, RopeTest& test) {
  if (!test.sidecar) return;
  const std::string path = sidecar_path_of(file_);
  if (!sidecar_) {
    try {
      sidecar_.emplace(open_sidecar(file_));
    } catch (const GoldenError& e) {
      throw GoldenError((file_.path.empty() ? "suite " + file_.suite : file_.path) + ": " + e.what());
    }
  }
  // sidecar_entry holds the tensor to the dtype's own storage, so every value decoded is one of
  // the dtype (no rounding test per value).
  // Into the test's own arrays, a block at a time through one buffer: a caller that hands back a
  // judged test's arrays (their capacity) for the next one reads into memory already faulted in,
  // where fresh arrays of a big suite's test were hundreds of megabytes of new pages per test.
  auto read = [&](const std::string& name, Dtype dtype, std::vector<double>& out) {
    const tensorio::TensorFile::Entry& e = sidecar_entry(*sidecar_, path, test, name, dtype);
    out.resize(static_cast<std::size_t>(e.count));
    sidecar_->read_into(e, 0, out, bytes_);
  };
  read(test.sidecar->input, input_dtype_of(spec), test.input);
  read(test.sidecar->expected, spec.dtype, test.expected);
}

void load_arrays(const GoldenFile& file, const Spec& spec, RopeTest& test) { SidecarLoader(file).load(spec, test); }

// ---------------------------------------------------------------------------------------------
// Writer.

namespace {

std::string quote(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

void hex_array(std::string& out, const std::vector<double>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += '"';
    out += reference::to_hex(values[i]);
    out += '"';
  }
  out += ']';
}

void int_array(std::string& out, const std::vector<std::int64_t>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(values[i]);
  }
  out += ']';
}

void string_array(std::string& out, const std::vector<std::string>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += quote(values[i]);
  }
  out += ']';
}

// A flat JSON value (scalar, or array of scalars) printed on one line with ", " and ": ".
void inline_json(std::string& out, const nlohmann::ordered_json& j) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) out += ", ";
      first = false;
      out += quote(it.key());
      out += ": ";
      inline_json(out, it.value());
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (i) out += ", ";
      inline_json(out, j[i]);
    }
    out += ']';
  } else {
    out += j.dump();
  }
}

void positions_json(std::string& out, const std::vector<std::int64_t>& positions, int components) {
  if (components == 1) {
    int_array(out, positions);
    return;
  }
  out += '[';
  for (std::size_t t = 0; t * components < positions.size(); ++t) {
    if (t) out += ", ";
    std::vector<std::int64_t> tuple(positions.begin() + static_cast<std::ptrdiff_t>(t * components),
                                    positions.begin() + static_cast<std::ptrdiff_t>((t + 1) * components));
    int_array(out, tuple);
  }
  out += ']';
}

}  // namespace

std::string write_golden(const GoldenFile& f) {
  std::string out;
  out.reserve(1 << 20);
  out += "{\n";
  out += "  \"schema\": " + quote(kSchema) + ",\n";
  out += "  \"suite\": " + quote(f.suite) + ",\n";
  out += "  \"kind\": " + quote(name(f.kind)) + ",\n";
  out += "  \"description\": " + quote(f.description) + ",\n";
  out += "  \"generator\": {\"name\": " + quote(f.generator.name) + ", \"version\": " + quote(f.generator.version) +
         ", \"precision_bits\": " + std::to_string(f.generator.precision_bits) +
         ", \"seed\": " + std::to_string(f.generator.seed) + "},\n";
  out += "  \"number_of_tests\": " + std::to_string(f.number_of_tests) + ",\n";
  if (!f.sidecar.empty()) {
    out += "  \"sidecar\": {\"file\": " + quote(f.sidecar) + ", \"format\": \"safetensors\"" +
           (f.sidecar_sha256.empty() ? std::string() : ", \"sha256\": " + quote(f.sidecar_sha256)) + "},\n";
  }
  out += "  \"notes\": {";
  for (std::size_t i = 0; i < f.notes.size(); ++i) {
    out += i ? ",\n" : "\n";
    out += "    " + quote(f.notes[i].first) + ": " + quote(f.notes[i].second);
  }
  out += f.notes.empty() ? "},\n" : "\n  },\n";
  out += "  \"groups\": [";
  for (std::size_t gi = 0; gi < f.groups.size(); ++gi) {
    const Group& g = f.groups[gi];
    out += gi ? ",\n" : "\n";
    out += "    {\n      \"spec\": ";
    inline_json(out, nlohmann::ordered_json::parse(to_json(g.spec)));
    out += ",\n      \"tests\": [";
    const std::size_t count = f.kind == Kind::rope ? g.rope_tests.size() : g.attention_tests.size();
    for (std::size_t ti = 0; ti < count; ++ti) {
      out += ti ? ",\n" : "\n";
      out += "        {\n";
      const std::string field = "          ";
      if (f.kind == Kind::rope) {
        const RopeTest& t = g.rope_tests[ti];
        out += field + "\"id\": " + std::to_string(t.id) + ",\n";
        out += field + "\"comment\": " + quote(t.comment) + ",\n";
        out += field + "\"flags\": ";
        string_array(out, t.flags);
        out += ",\n" + field + "\"positions\": ";
        positions_json(out, t.positions, position_components(g.spec));
        out += ",\n" + field + "\"shape\": ";
        int_array(out, {t.tokens, t.heads, t.head_dim});
        if (t.sidecar) {
          out += ",\n" + field + "\"input\": {\"tensor\": " + quote(t.sidecar->input) + "}";
          out += ",\n" + field + "\"expected\": {\"tensor\": " + quote(t.sidecar->expected) + "}";
        } else {
          out += ",\n" + field + "\"input\": ";
          hex_array(out, t.input);
          out += ",\n" + field + "\"expected\": ";
          hex_array(out, t.expected);
        }
        if (t.expected_f32_recipe) {
          out += ",\n" + field + "\"expected_f32_recipe\": ";
          hex_array(out, *t.expected_f32_recipe);
        }
        if (t.exact) {
          out += ",\n" + field + "\"exact\": ";
          string_array(out, *t.exact);
        }
      } else {
        const AttentionTest& t = g.attention_tests[ti];
        out += field + "\"id\": " + std::to_string(t.id) + ",\n";
        out += field + "\"comment\": " + quote(t.comment) + ",\n";
        out += field + "\"flags\": ";
        string_array(out, t.flags);
        out += ",\n" + field + "\"causal\": " + (t.causal ? "true" : "false");
        out += ",\n" + field + "\"q_positions\": ";
        int_array(out, t.q_positions);
        out += ",\n" + field + "\"k_positions\": ";
        int_array(out, t.k_positions);
        out += ",\n" + field + "\"shape\": {\"q_tokens\": " + std::to_string(t.q_tokens) +
               ", \"k_tokens\": " + std::to_string(t.k_tokens) + ", \"heads\": " + std::to_string(t.heads) +
               ", \"head_dim\": " + std::to_string(t.head_dim) + ", \"v_dim\": " + std::to_string(t.v_dim) + "}";
        out += ",\n" + field + "\"q\": ";
        hex_array(out, t.q);
        out += ",\n" + field + "\"k\": ";
        hex_array(out, t.k);
        out += ",\n" + field + "\"v\": ";
        hex_array(out, t.v);
        out += ",\n" + field + "\"expected_scores\": ";
        hex_array(out, t.expected_scores);
        out += ",\n" + field + "\"expected_outputs\": ";
        hex_array(out, t.expected_outputs);
      }
      out += "\n        }";
    }
    out += count ? "\n      ]\n    }" : "]\n    }";
  }
  out += f.groups.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace ropecheck::golden
