// Spec parsing (compact key=value and JSON), validation and canonical printing.
#include "spec/spec.h"
#include "spec/integer.h"
#include "spec/scaling_params.h"
#include "spec/suggest.h"

#include "spec/schedule.h"

#include "base/checked_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

namespace ropecheck {
namespace {

// A value quoted in a message: whole up to 64 characters, else its start and its length (an
// argument of 100,000 characters is not echoed back).
std::string shown(std::string_view got) {
  if (got.size() <= 64) return "'" + std::string(got) + "'";
  return "'" + std::string(got.substr(0, 48)) + "...' (" + std::to_string(got.size()) + " characters)";
}

[[noreturn]] void fail(std::string_view field, std::string_view expected, std::string_view got, std::string_view hint = {}) {
  throw SpecError("spec field '" + std::string(field) + "': expected " + std::string(expected) + ", got " + shown(got) +
                  std::string(hint));
}

// The longest decimal a spec field takes: far more digits than any parameter has (a base, a factor,
// a LongRoPE entry), and a bound on what the exact reference parses at its working precision.
constexpr std::size_t kMaxDecimalLength = 400;

// [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?, scanned in one pass (a regex recurses
// per character: 30,000 digits overflowed the stack).
bool is_decimal(const std::string& s) {
  if (s.size() > kMaxDecimalLength) return false;
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const std::size_t integer = digits();
  std::size_t fraction = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    fraction = digits();
  }
  if (integer == 0 && fraction == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

std::int64_t to_int(std::string_view field, const std::string& text) {
  const std::optional<std::int64_t> v = parse_integer(text);
  if (!v) fail(field, "an integer", text);
  return *v;
}

// A dimension, range-checked before it is narrowed to int (4294967304 must not become 8).
int to_dim(std::string_view field, const std::string& text) {
  const std::int64_t v = to_int(field, text);
  if (v < 0 || v > (std::int64_t{1} << 16)) fail(field, "an integer in [2, 65536]", text);
  return static_cast<int>(v);
}

std::string decimal_field(std::string_view field, const std::string& text) {
  if (text.size() > kMaxDecimalLength) fail(field, "a decimal number of at most " + std::to_string(kMaxDecimalLength) + " characters", text);
  if (!is_decimal(text)) fail(field, "a decimal number", text);
  return text[0] == '+' ? text.substr(1) : text;
}

double decimal_value(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

std::string join(const std::vector<std::string>& items, char sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

using Fields = std::map<std::string, std::string, std::less<>>;

// ASCII whitespace: what "layout=half, base=10000" puts around a key or a value. Trimmed at the
// edges of keys, values and list items only; inside a value it stays, and is refused there.
constexpr std::string_view kBlank = " \t\n\r\f\v";

std::string trimmed(std::string_view text) {
  const std::size_t first = text.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(kBlank) - first + 1));
}

// The items of a '/'-separated list value ("16 / 24 / 24" reads as 16/24/24).
std::vector<std::string> list_items(const std::string& value) {
  std::vector<std::string> items = split_list(value, '/');
  for (std::string& item : items) item = trimmed(item);
  return items;
}

// Keys spelled as the ecosystem spells them, read as the project's key (printed under it):
// HF transformers' config calls the base `rope_theta` (hfconfig/README.md). An alias and its key
// both given are one key given twice. HF's `original_max_position_embeddings` is no alias: for
// dynamic NTK HF reads Lmax from max_position_embeddings instead (hfconfig/hfconfig.cpp).
std::string canonical_key(std::string key) {
  if (key == "rope_theta") return "base";
  return key;
}

// Inserts one key=value of either form; a key given twice (an alias included) is an error.
void set_field(Fields& fields, const std::string& given, std::string value) {
  const std::string key = canonical_key(given);
  if (!fields.emplace(key, std::move(value)).second) {
    throw SpecError("spec field '" + key + "': expected once, got a duplicate" +
                    (key != given ? " ('" + given + "' is '" + key + "')" : std::string()));
  }
}

ScalingType parse_scaling_type(const std::string& t) {
  if (t == "none") return ScalingType::none;
  if (t == "linear") return ScalingType::linear;
  if (t == "ntk") return ScalingType::ntk;
  if (t == "dynamic") return ScalingType::dynamic;
  if (t == "yarn") return ScalingType::yarn;
  if (t == "yarn-ggml") return ScalingType::yarn_ggml;
  if (t == "llama3") return ScalingType::llama3;
  if (t == "longrope") return ScalingType::longrope;
  fail("scaling",
       "one of none|linear|ntk|dynamic|yarn|yarn-ggml|llama3|longrope",
       t, did_you_mean(t, {"none", "linear", "ntk", "dynamic", "yarn", "yarn-ggml", "llama3", "longrope"}));
}

// The keys that are not scaling parameters, in all_keys' order.
constexpr std::array<std::string_view, 10> kGeneralKeys = {"layout",      "head_dim",  "rotary_dim", "base", "dtype",
                                                           "input_dtype", "direction", "scaling",    "axes", "sections"};

const std::vector<std::string>& all_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out(kGeneralKeys.begin(), kGeneralKeys.end());
    for (const ScalingParam& p : kScalingParams) out.emplace_back(p.key);
    return out;
  }();
  return keys;
}

const ParamUse* use_of(ScalingType type, std::string_view key) {
  for (const ParamUse& use : scaling_params_of(type)) {
    if (use.param->key == key) return &use;
  }
  return nullptr;
}

std::string accepted_list(ScalingType type) {
  std::string out;
  for (const ParamUse& use : scaling_params_of(type)) {
    if (!out.empty()) out += ' ';
    out += use.param->key;
  }
  return out;
}

// Reads one scaling parameter's text into its member of `sc`.
void read_param(Scaling& sc, const ScalingParam& p, const std::string& text) {
  const std::string key(p.key);
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(sc.*member)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          sc.*member = to_int(key, text);
        } else if constexpr (std::is_same_v<T, bool>) {
          if (text == "true")
            sc.*member = true;
          else if (text == "false")
            sc.*member = false;
          else
            fail(key, "true|false", text);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          for (const auto& item : list_items(text)) (sc.*member).push_back(decimal_field(key, item));
        } else {
          sc.*member = decimal_field(key, text);
        }
      },
      p.member);
}

Spec build(const Fields& f) {
  for (const auto& [key, value] : f) {
    bool known = false;
    for (const auto& k : all_keys()) known = known || k == key;
    if (!known) {
      const std::vector<std::string_view> words(all_keys().begin(), all_keys().end());
      fail(key, "a known key (layout, head_dim, rotary_dim, base, dtype, direction, scaling, axes, ...)",
           key, did_you_mean(key, words));
    }
  }
  auto get = [&](const std::string& key) -> const std::string* {
    auto it = f.find(key);
    return it == f.end() ? nullptr : &it->second;
  };
  Spec s;
  if (auto v = get("layout")) {
    // The ecosystem's names of the two layouts (docs/rope.md §1; spec/README.md cites
    // flash-attention's apply_rotary_emb(interleaved=...) and vLLM's is_neox_style): gptj pairs
    // (2j, 2j + 1), neox pairs (j, j + rotary_dim/2) as HF's rotate_half.
    if (*v == "interleaved" || *v == "gptj") s.layout = Layout::interleaved;
    else if (*v == "half" || *v == "neox") s.layout = Layout::half;
    else fail("layout", "interleaved|half (or gptj|neox)", *v);
  }
  const std::string* head_dim = get("head_dim");
  if (!head_dim) throw SpecError("spec field 'head_dim': expected an even integer >= 2, got nothing (missing)");
  s.head_dim = to_dim("head_dim", *head_dim);
  s.rotary_dim = s.head_dim;
  if (auto v = get("rotary_dim")) s.rotary_dim = to_dim("rotary_dim", *v);
  if (auto v = get("base")) s.base = decimal_field("base", *v);
  if (auto v = get("dtype")) s.dtype = parse_dtype(*v);
  if (auto v = get("input_dtype")) {
    const Dtype d = parse_dtype(*v);
    if (d != s.dtype) s.input_dtype = d;  // equal: the same spec as without the key
  }
  if (auto v = get("direction")) {
    if (*v == "forward") s.direction = Direction::forward;
    else if (*v == "inverse") s.direction = Direction::inverse;
    else fail("direction", "forward|inverse", *v);
  }
  if (auto v = get("axes")) {
    if (*v == "none") s.axes.kind = AxesKind::none;
    else if (*v == "2d") s.axes.kind = AxesKind::two_d;
    else if (*v == "mrope") s.axes.kind = AxesKind::mrope;
    else if (*v == "imrope") s.axes.kind = AxesKind::imrope;
    else fail("axes", "none|2d|mrope|imrope", *v);
  }
  const bool sectioned = s.axes.kind == AxesKind::mrope || s.axes.kind == AxesKind::imrope;
  if (auto v = get("sections")) {
    if (!sectioned) fail("sections", "no sections unless axes=mrope or axes=imrope", *v);
    for (const auto& item : list_items(*v)) {
      const std::int64_t n = to_int("sections", item);
      if (n < 0 || n > (1 << 16)) fail("sections", "pair counts in [0, 65536]", item);
      s.axes.sections.push_back(static_cast<int>(n));
    }
  } else if (sectioned) {
    throw SpecError("spec field 'sections': expected '/'-separated pair counts for axes=" +
                    std::string(s.axes.kind == AxesKind::mrope ? "mrope" : "imrope") + ", got nothing (missing)");
  }

  Scaling& sc = s.scaling;
  if (auto v = get("scaling")) sc.type = parse_scaling_type(*v);
  for (const auto& [key, value] : f) {
    if (std::find(kGeneralKeys.begin(), kGeneralKeys.end(), key) != kGeneralKeys.end()) continue;
    if (use_of(sc.type, key) == nullptr) {
      fail(key, "no such parameter for scaling=" + std::string(name(sc.type)) + " (accepted: " + accepted_list(sc.type) + ")", value);
    }
  }
  for (const ParamUse& use : scaling_params_of(sc.type)) {
    const std::string key(use.param->key);
    if (const std::string* v = get(key)) {
      read_param(sc, *use.param, *v);
    } else if (use.need == ParamNeed::required) {
      throw SpecError("spec field '" + key + "': expected a value for scaling=" + std::string(name(sc.type)) +
                      ", got nothing (missing)");
    } else if (!use.type_default.empty()) {
      read_param(sc, *use.param, std::string(use.type_default));
    }
  }
  validate(s);
  return s;
}

}  // namespace

std::span<const ParamUse> scaling_params_of(ScalingType type) {
  const auto param = [](std::string_view key) { return scaling_param(key); };
  using N = ParamNeed;
  static const std::vector<ParamUse> linear = {{param("factor"), N::required}};
  static const std::vector<ParamUse> dynamic = {
      {param("factor"), N::required}, {param("original_max_position"), N::required}, {param("seq_len"), N::required}};
  static const std::vector<ParamUse> yarn = {{param("factor"), N::required},     {param("original_max_position"), N::required},
                                             {param("beta_fast"), N::defaulted}, {param("beta_slow"), N::defaulted},
                                             {param("truncate"), N::defaulted},  {param("attention_factor"), N::optional},
                                             {param("mscale"), N::optional},     {param("mscale_all_dim"), N::optional}};
  static const std::vector<ParamUse> yarn_ggml = {{param("freq_scale"), N::required},  {param("original_max_position"), N::required},
                                                  {param("ext_factor"), N::defaulted}, {param("attn_factor"), N::defaulted},
                                                  {param("beta_fast"), N::defaulted},  {param("beta_slow"), N::defaulted}};
  // Meta's Llama 3.1 defaults.
  static const std::vector<ParamUse> llama3 = {{param("factor"), N::defaulted, "8"},
                                               {param("original_max_position"), N::defaulted, "8192"},
                                               {param("low_freq_factor"), N::defaulted},
                                               {param("high_freq_factor"), N::defaulted}};
  static const std::vector<ParamUse> longrope = {
      {param("short_factor"), N::required}, {param("long_factor"), N::required}, {param("original_max_position"), N::required},
      {param("seq_len"), N::required},      {param("factor"), N::optional},      {param("attention_factor"), N::optional}};
  switch (type) {
    case ScalingType::none:
      return {};
    case ScalingType::linear:
    case ScalingType::ntk:
      return linear;
    case ScalingType::dynamic:
      return dynamic;
    case ScalingType::yarn:
      return yarn;
    case ScalingType::yarn_ggml:
      return yarn_ggml;
    case ScalingType::llama3:
      return llama3;
    case ScalingType::longrope:
      return longrope;
  }
  return {};
}

const ScalingParam* scaling_param(std::string_view key) {
  for (const ScalingParam& p : kScalingParams) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

std::string_view name(Layout v) { return v == Layout::interleaved ? "interleaved" : "half"; }
std::string_view name(Direction v) { return v == Direction::forward ? "forward" : "inverse"; }
std::string_view name(Dtype v) {
  switch (v) {
    case Dtype::f64: return "f64";
    case Dtype::f32: return "f32";
    case Dtype::f16: return "f16";
    case Dtype::bf16: return "bf16";
  }
  return "?";
}
std::string_view name(ScalingType v) {
  switch (v) {
    case ScalingType::none: return "none";
    case ScalingType::linear: return "linear";
    case ScalingType::ntk: return "ntk";
    case ScalingType::dynamic: return "dynamic";
    case ScalingType::yarn: return "yarn";
    case ScalingType::yarn_ggml: return "yarn-ggml";
    case ScalingType::llama3: return "llama3";
    case ScalingType::longrope: return "longrope";
  }
  return "?";
}

Dtype parse_dtype(std::string_view text) {
  if (text == "f64") return Dtype::f64;
  if (text == "f32") return Dtype::f32;
  if (text == "f16") return Dtype::f16;
  if (text == "bf16") return Dtype::bf16;
  fail("dtype", "f64|f32|f16|bf16", text);
}

int position_components(const Spec& spec) {
  switch (spec.axes.kind) {
    case AxesKind::none: return 1;
    case AxesKind::two_d: return 2;
    case AxesKind::mrope:
    case AxesKind::imrope: return static_cast<int>(spec.axes.sections.size());
  }
  return 1;
}

namespace {
// One parameter's value against its range (spec/README.md "Ranges"); an unset optional one is not checked.
void check_range(const Scaling& sc, const ParamUse& use) {
  const std::string_view key = use.param->key;
  const auto decimal_in_range = [&](const std::string& v) {
    switch (use.param->range) {
      case ParamRange::positive:
      case ParamRange::positive_list:
        if (!is_decimal(v) || !(decimal_value(v) > 0) || !std::isfinite(decimal_value(v))) fail(key, "a decimal number > 0", v);
        break;
      case ParamRange::non_negative:
        if (!is_decimal(v) || !(decimal_value(v) >= 0)) fail(key, "a decimal number >= 0", v);
        break;
      case ParamRange::any_decimal:
        if (!is_decimal(v)) fail(key, "a decimal number", v);
        break;
      case ParamRange::positive_integer:
      case ParamRange::boolean:
        break;
    }
  };
  std::visit(
      [&](auto member) {
        const auto& value = sc.*member;
        using T = std::remove_cvref_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          if (value < 1) fail(key, "an integer >= 1", std::to_string(value));
        } else if constexpr (std::is_same_v<T, bool>) {
          // true or false: nothing to bound
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          for (const std::string& v : value) decimal_in_range(v);
        } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
          if (value) decimal_in_range(*value);
        } else {
          if (use.need != ParamNeed::optional || !value.empty()) decimal_in_range(value);
        }
      },
      use.param->member);
}
}  // namespace

void validate(const Spec& s) {
  constexpr int max_dim = 1 << 16;
  if (s.head_dim < 2 || s.head_dim > max_dim) fail("head_dim", "an integer in [2, 65536]", std::to_string(s.head_dim));
  if (s.rotary_dim < 2 || s.rotary_dim > s.head_dim || s.rotary_dim % 2 != 0) {
    fail("rotary_dim", "an even integer in [2, head_dim=" + std::to_string(s.head_dim) + "]", std::to_string(s.rotary_dim));
  }
  if (!is_decimal(s.base) || !(decimal_value(s.base) > 1) || !std::isfinite(decimal_value(s.base))) {
    fail("base", "a finite decimal number > 1", s.base);
  }
  const bool two_d = s.axes.kind == AxesKind::two_d;
  if (two_d && s.rotary_dim % 4 != 0) {
    fail("rotary_dim", "a multiple of 4 for axes=2d (groups of 4 dims)", std::to_string(s.rotary_dim));
  }
  const int frequency_dim = two_d ? s.rotary_dim / 2 : s.rotary_dim;
  if (s.axes.kind == AxesKind::mrope || s.axes.kind == AxesKind::imrope) {
    // A zero section is allowed (ggml's four-section form 16/24/24/0): it owns no pair but its
    // position component is still passed. The sum is rotary_dim/2, so ggml's sector = j mod sum is j.
    const std::size_t count = s.axes.sections.size();
    if (s.axes.kind == AxesKind::imrope && count != 3 && count != 4) {
      fail("sections", "3 (t/h/w) or 4 (t/h/w/e) pair counts for axes=imrope", std::to_string(count) + " counts");
    }
    if (count < 1 || count > 16) fail("sections", "1 to 16 pair counts", std::to_string(count) + " counts");
    std::int64_t sum = 0;
    for (int n : s.axes.sections) {
      if (n < 0) fail("sections", "pair counts >= 0", std::to_string(n));
      sum += n;
    }
    if (sum != s.rotary_dim / 2) {
      fail("sections", "pair counts summing to rotary_dim/2=" + std::to_string(s.rotary_dim / 2), std::to_string(sum));
    }
  }
  if (s.input_dtype && *s.input_dtype != s.dtype) {
    // Inputs must be values of the output dtype too: the reference reads them exactly, pass-through
    // dims copy them, and e's u is the output's. f16 and bf16 widen to f32 and f64, f32 to f64.
    const Dtype in = *s.input_dtype;
    const bool widening = (s.dtype == Dtype::f64 && in != Dtype::f64) ||
                          (s.dtype == Dtype::f32 && (in == Dtype::f16 || in == Dtype::bf16));
    if (!widening) {
      fail("input_dtype", "a dtype whose values are all values of dtype=" + std::string(name(s.dtype)) +
                              " (f16 or bf16 into f32 or f64, f32 into f64)",
           std::string(name(in)));
    }
  }
  const Scaling& sc = s.scaling;
  if (sc.type == ScalingType::longrope) {
    const std::size_t count = static_cast<std::size_t>(frequency_dim / 2);
    if (sc.short_factor.size() != count) {
      fail("short_factor", std::to_string(count) + " factors (rotary_dim/2)", std::to_string(sc.short_factor.size()) + " factors");
    }
    if (sc.long_factor.size() != count) {
      fail("long_factor", std::to_string(count) + " factors (rotary_dim/2)", std::to_string(sc.long_factor.size()) + " factors");
    }
  }
  for (const ParamUse& use : scaling_params_of(sc.type)) {
    check_range(sc, use);
    const bool ntk = sc.type == ScalingType::ntk || sc.type == ScalingType::dynamic;
    if (ntk && use.param->key == "factor" && frequency_dim <= 2) {
      fail("rotary_dim", "a rotary dim > 2 for NTK scaling (exponent d/(d-2))", std::to_string(s.rotary_dim));
    }
  }
  if (sc.type == ScalingType::llama3) {
    // Equal factors leave no band to smooth (wavelengths below L0/high keep θ, above L0/low take
    // θ/f): Llama-4 Scout publishes low = high = 1, and HF's _compute_llama3_parameters and
    // Meta's apply_scaling compute it so.
    if (!(decimal_value(sc.low_freq_factor) <= decimal_value(sc.high_freq_factor))) {
      fail("high_freq_factor", "a value >= low_freq_factor=" + sc.low_freq_factor, sc.high_freq_factor);
    }
  }
  // The attention factor multiplies every output: beyond the dtype's largest value no input of
  // magnitude 1 has a finite output, and the reference's results could not be judged.
  const long double g = attention_factor<long double>(s);
  const int emax = s.dtype == Dtype::f64 ? 1023 : s.dtype == Dtype::f16 ? 15 : 127;
  const long double largest = std::ldexp(2.0L - std::ldexp(1.0L, 1 - significand_bits(s.dtype)), emax);
  if (!std::isfinite(g) || std::fabs(g) > largest) {
    char text[64];
    std::snprintf(text, sizeof text, "%Lg", g);
    fail("attention_factor", "a factor at most the dtype's largest value (" + std::string(name(s.dtype)) + ")", text);
  }
}

Spec parse_spec(std::string_view text) {
  Fields fields;
  std::string all(text);
  if (all.empty()) throw SpecError("spec: expected key=value pairs separated by ',', got an empty string");
  // Blanks around keys, values, '=' and ',' are tolerated ("layout=half, base=10000"); the
  // canonical form (to_string) has none.
  for (const auto& item : split_list(all, ',')) {
    auto eq = item.find('=');
    std::string key = eq == std::string::npos ? std::string() : trimmed(std::string_view(item).substr(0, eq));
    if (key.empty()) throw SpecError("spec: expected key=value, got " + shown(item));
    set_field(fields, key, trimmed(std::string_view(item).substr(eq + 1)));
  }
  return build(fields);
}

Spec parse_spec_json(std::string_view json_text) {
  nlohmann::json j;
  // A key given twice in one object would silently replace the first (the compact form refuses it).
  JsonNotes notes;
  try {
    j = parse_json_checked<nlohmann::json>(json_text, notes);
  } catch (const nlohmann::json::exception& e) {
    throw SpecError(std::string("spec: expected a JSON object, got invalid JSON (") + e.what() + ")");
  }
  if (notes.too_deep()) throw SpecError("spec: " + notes.too_deep_message());
  if (!notes.duplicate.empty()) throw SpecError("spec field '" + notes.duplicate + "': expected once, got a duplicate");
  if (!j.is_object()) throw SpecError("spec: expected a JSON object, got " + std::string(j.type_name()));
  Fields fields;
  // A scalar, or an array of scalars joined by '/'; errors name the key the value belongs to.
  auto text_of = [](const std::string& key, const nlohmann::json& v) {
    auto scalar = [&](const nlohmann::json& x) -> std::string {
      if (x.is_string()) return x.get<std::string>();
      if (x.is_boolean()) return x.get<bool>() ? "true" : "false";
      if (x.is_number()) return x.dump();
      fail(key, "a string, number or boolean", x.dump());
    };
    if (!v.is_array()) return scalar(v);
    std::vector<std::string> items;
    for (const auto& x : v) items.push_back(scalar(x));
    return join(items, '/');
  };
  // Flat and nested forms share one set of keys: a parameter given in both is a duplicate.
  auto set = [&](const std::string& key, std::string value) { set_field(fields, key, std::move(value)); };
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& v = it.value();
    if (v.is_object()) {
      // Nested "scaling": {"type": "...", params...} is accepted too.
      if (it.key() != "scaling") fail(it.key(), "a scalar or array", "an object");
      for (auto p = v.begin(); p != v.end(); ++p) {
        const std::string key = p.key() == "type" ? "scaling" : p.key();
        set(key, text_of(key, p.value()));
      }
    } else {
      set(it.key(), text_of(it.key(), v));
    }
  }
  return build(fields);
}

namespace {
// Canonical ordered list of (key, value) for printing.
std::vector<std::pair<std::string, std::string>> canonical_fields(const Spec& s) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"layout", std::string(name(s.layout))}, {"head_dim", std::to_string(s.head_dim)},
      {"rotary_dim", std::to_string(s.rotary_dim)}, {"base", s.base}, {"dtype", std::string(name(s.dtype))}};
  // Printed only when it differs: every spec without it keeps its canonical text.
  if (s.input_dtype && *s.input_dtype != s.dtype) out.emplace_back("input_dtype", std::string(name(*s.input_dtype)));
  out.emplace_back("direction", std::string(name(s.direction)));
  out.emplace_back("scaling", std::string(name(s.scaling.type)));
  const Scaling& sc = s.scaling;
  auto add = [&](const std::string& k, const std::string& v) { out.emplace_back(k, v); };
  for (const ParamUse& use : scaling_params_of(sc.type)) {
    const std::string key(use.param->key);
    std::visit(
        [&](auto member) {
          const auto& value = sc.*member;
          using T = std::remove_cvref_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::int64_t>) {
            add(key, std::to_string(value));
          } else if constexpr (std::is_same_v<T, bool>) {
            add(key, value ? "true" : "false");
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            add(key, join(value, '/'));
          } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
            if (value) add(key, *value);
          } else if (use.need != ParamNeed::optional || !value.empty()) {
            add(key, value);
          }
        },
        use.param->member);
  }
  if (s.axes.kind == AxesKind::two_d) add("axes", "2d");
  if (s.axes.kind == AxesKind::mrope || s.axes.kind == AxesKind::imrope) {
    add("axes", s.axes.kind == AxesKind::mrope ? "mrope" : "imrope");
    std::vector<std::string> items;
    for (int n : s.axes.sections) items.push_back(std::to_string(n));
    add("sections", join(items, '/'));
  }
  return out;
}
}  // namespace

std::string to_string(const Spec& s) {
  std::string out;
  for (const auto& [k, v] : canonical_fields(s)) {
    if (!out.empty()) out += ',';
    out += k + "=" + v;
  }
  return out;
}

std::string to_json(const Spec& s) {
  nlohmann::ordered_json j;
  for (const auto& [k, v] : canonical_fields(s)) {
    const ScalingParam* p = scaling_param(k);
    const ParamRange range = p != nullptr ? p->range : ParamRange::any_decimal;
    if (k == "head_dim" || k == "rotary_dim" || range == ParamRange::positive_integer) {
      j[k] = std::stoll(v);
    } else if (range == ParamRange::boolean) {
      j[k] = v == "true";
    } else if (k == "sections") {
      j[k] = s.axes.sections;
    } else if (range == ParamRange::positive_list) {
      j[k] = s.scaling.*std::get<std::vector<std::string> Scaling::*>(p->member);
    } else {
      j[k] = v;
    }
  }
  return j.dump();
}

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) out.push_back(item);
  if (!text.empty() && text.back() == sep) out.emplace_back();
  return out;
}

}  // namespace ropecheck
