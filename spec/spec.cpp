// Spec parsing (compact key=value and JSON), validation and canonical printing.
#include "spec/spec.h"
#include "spec/suggest.h"

#include "spec/schedule.h"

#include "base/checked_json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

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
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) fail(field, "an integer", text);
  return v;
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

// The scaling parameters each type accepts (all others are rejected as unknown for that type).
const std::vector<std::string>& allowed_params(ScalingType t) {
  static const std::map<ScalingType, std::vector<std::string>> table = {
      {ScalingType::none, {}},
      {ScalingType::linear, {"factor"}},
      {ScalingType::ntk, {"factor"}},
      {ScalingType::dynamic, {"factor", "original_max_position", "seq_len"}},
      {ScalingType::yarn,
       {"factor", "original_max_position", "beta_fast", "beta_slow", "truncate", "attention_factor",
        "mscale", "mscale_all_dim"}},
      {ScalingType::yarn_ggml,
       {"freq_scale", "original_max_position", "ext_factor", "attn_factor", "beta_fast", "beta_slow"}},
      {ScalingType::llama3, {"factor", "original_max_position", "low_freq_factor", "high_freq_factor"}},
      {ScalingType::longrope,
       {"short_factor", "long_factor", "original_max_position", "seq_len", "factor", "attention_factor"}},
  };
  return table.at(t);
}

const std::vector<std::string>& all_keys() {
  static const std::vector<std::string> keys = {
      "layout", "head_dim", "rotary_dim", "base", "dtype", "input_dtype", "direction", "scaling", "axes", "sections",
      "factor", "original_max_position", "seq_len", "beta_fast", "beta_slow", "truncate",
      "attention_factor", "mscale", "mscale_all_dim", "freq_scale", "ext_factor", "attn_factor",
      "low_freq_factor", "high_freq_factor", "short_factor", "long_factor"};
  return keys;
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
  const auto& allowed = allowed_params(sc.type);
  for (const auto& [key, value] : f) {
    static const std::vector<std::string> non_scaling = {"layout", "head_dim", "rotary_dim", "base", "dtype",
                                                         "input_dtype", "direction", "scaling", "axes", "sections"};
    bool general = false;
    for (const auto& k : non_scaling) general = general || k == key;
    if (general) continue;
    bool ok = false;
    for (const auto& k : allowed) ok = ok || k == key;
    if (!ok) {
      fail(key, "no such parameter for scaling=" + std::string(name(sc.type)) + " (accepted: " + join(allowed, ' ') + ")",
           value);
    }
  }
  auto required = [&](const std::string& key) -> const std::string& {
    const std::string* v = get(key);
    if (!v) {
      throw SpecError("spec field '" + key + "': expected a value for scaling=" + std::string(name(sc.type)) +
                      ", got nothing (missing)");
    }
    return *v;
  };
  auto decimal_or = [&](const std::string& key, const std::string& fallback) {
    const std::string* v = get(key);
    return v ? decimal_field(key, *v) : fallback;
  };
  auto optional_decimal = [&](const std::string& key) -> std::optional<std::string> {
    const std::string* v = get(key);
    if (!v) return std::nullopt;
    return decimal_field(key, *v);
  };
  switch (sc.type) {
    case ScalingType::none: break;
    case ScalingType::linear:
    case ScalingType::ntk:
      sc.factor = decimal_field("factor", required("factor"));
      break;
    case ScalingType::dynamic:
      sc.factor = decimal_field("factor", required("factor"));
      sc.original_max_position = to_int("original_max_position", required("original_max_position"));
      sc.seq_len = to_int("seq_len", required("seq_len"));
      break;
    case ScalingType::yarn:
      sc.factor = decimal_field("factor", required("factor"));
      sc.original_max_position = to_int("original_max_position", required("original_max_position"));
      sc.beta_fast = decimal_or("beta_fast", "32");
      sc.beta_slow = decimal_or("beta_slow", "1");
      if (auto v = get("truncate")) {
        if (*v == "true") sc.truncate = true;
        else if (*v == "false") sc.truncate = false;
        else fail("truncate", "true|false", *v);
      }
      sc.attention_factor = optional_decimal("attention_factor");
      sc.mscale = optional_decimal("mscale");
      sc.mscale_all_dim = optional_decimal("mscale_all_dim");
      break;
    case ScalingType::yarn_ggml:
      sc.freq_scale = decimal_field("freq_scale", required("freq_scale"));
      sc.original_max_position = to_int("original_max_position", required("original_max_position"));
      sc.ext_factor = decimal_or("ext_factor", "1");
      sc.attn_factor = decimal_or("attn_factor", "1");
      sc.beta_fast = decimal_or("beta_fast", "32");
      sc.beta_slow = decimal_or("beta_slow", "1");
      break;
    case ScalingType::llama3:  // Meta's Llama 3.1 defaults
      sc.factor = decimal_or("factor", "8");
      sc.original_max_position = get("original_max_position") ? to_int("original_max_position", *get("original_max_position")) : 8192;
      sc.low_freq_factor = decimal_or("low_freq_factor", "1");
      sc.high_freq_factor = decimal_or("high_freq_factor", "4");
      break;
    case ScalingType::longrope:
      for (const auto& item : list_items(required("short_factor"))) sc.short_factor.push_back(decimal_field("short_factor", item));
      for (const auto& item : list_items(required("long_factor"))) sc.long_factor.push_back(decimal_field("long_factor", item));
      sc.original_max_position = to_int("original_max_position", required("original_max_position"));
      sc.seq_len = to_int("seq_len", required("seq_len"));
      if (auto v = get("factor")) sc.factor = decimal_field("factor", *v);
      sc.attention_factor = optional_decimal("attention_factor");
      break;
  }
  validate(s);
  return s;
}

}  // namespace

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
  auto positive = [](std::string_view field, const std::string& v) {
    if (!is_decimal(v) || !(decimal_value(v) > 0) || !std::isfinite(decimal_value(v))) fail(field, "a decimal number > 0", v);
  };
  auto positive_int = [](std::string_view field, std::int64_t v) {
    if (v < 1) fail(field, "an integer >= 1", std::to_string(v));
  };
  switch (sc.type) {
    case ScalingType::none: break;
    case ScalingType::linear: positive("factor", sc.factor); break;
    case ScalingType::ntk:
    case ScalingType::dynamic:
      positive("factor", sc.factor);
      if (frequency_dim <= 2) {
        fail("rotary_dim", "a rotary dim > 2 for NTK scaling (exponent d/(d-2))", std::to_string(s.rotary_dim));
      }
      if (sc.type == ScalingType::dynamic) {
        positive_int("original_max_position", sc.original_max_position);
        positive_int("seq_len", sc.seq_len);
      }
      break;
    case ScalingType::yarn:
      positive("factor", sc.factor);
      positive_int("original_max_position", sc.original_max_position);
      positive("beta_fast", sc.beta_fast);
      positive("beta_slow", sc.beta_slow);
      if (sc.attention_factor) positive("attention_factor", *sc.attention_factor);
      if (sc.mscale && !is_decimal(*sc.mscale)) fail("mscale", "a decimal number", *sc.mscale);
      if (sc.mscale_all_dim && !is_decimal(*sc.mscale_all_dim)) fail("mscale_all_dim", "a decimal number", *sc.mscale_all_dim);
      break;
    case ScalingType::yarn_ggml:
      positive("freq_scale", sc.freq_scale);
      positive_int("original_max_position", sc.original_max_position);
      positive("beta_fast", sc.beta_fast);
      positive("beta_slow", sc.beta_slow);
      positive("attn_factor", sc.attn_factor);
      if (!is_decimal(sc.ext_factor) || !(decimal_value(sc.ext_factor) >= 0)) fail("ext_factor", "a decimal number >= 0", sc.ext_factor);
      break;
    case ScalingType::llama3:
      positive("factor", sc.factor);
      positive_int("original_max_position", sc.original_max_position);
      positive("low_freq_factor", sc.low_freq_factor);
      positive("high_freq_factor", sc.high_freq_factor);
      // Equal factors leave no band to smooth (wavelengths below L0/high keep θ, above L0/low take
      // θ/f): Llama-4 Scout publishes low = high = 1, and HF's _compute_llama3_parameters and
      // Meta's apply_scaling compute it so.
      if (!(decimal_value(sc.low_freq_factor) <= decimal_value(sc.high_freq_factor))) {
        fail("high_freq_factor", "a value >= low_freq_factor=" + sc.low_freq_factor, sc.high_freq_factor);
      }
      break;
    case ScalingType::longrope: {
      const std::size_t count = static_cast<std::size_t>(frequency_dim / 2);
      if (sc.short_factor.size() != count) {
        fail("short_factor", std::to_string(count) + " factors (rotary_dim/2)", std::to_string(sc.short_factor.size()) + " factors");
      }
      if (sc.long_factor.size() != count) {
        fail("long_factor", std::to_string(count) + " factors (rotary_dim/2)", std::to_string(sc.long_factor.size()) + " factors");
      }
      for (const auto& v : sc.short_factor) positive("short_factor", v);
      for (const auto& v : sc.long_factor) positive("long_factor", v);
      positive_int("original_max_position", sc.original_max_position);
      positive_int("seq_len", sc.seq_len);
      if (!sc.factor.empty()) positive("factor", sc.factor);
      if (sc.attention_factor) positive("attention_factor", *sc.attention_factor);
      break;
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
  switch (sc.type) {
    case ScalingType::none: break;
    case ScalingType::linear:
    case ScalingType::ntk: add("factor", sc.factor); break;
    case ScalingType::dynamic:
      add("factor", sc.factor);
      add("original_max_position", std::to_string(sc.original_max_position));
      add("seq_len", std::to_string(sc.seq_len));
      break;
    case ScalingType::yarn:
      add("factor", sc.factor);
      add("original_max_position", std::to_string(sc.original_max_position));
      add("beta_fast", sc.beta_fast);
      add("beta_slow", sc.beta_slow);
      add("truncate", sc.truncate ? "true" : "false");
      if (sc.attention_factor) add("attention_factor", *sc.attention_factor);
      if (sc.mscale) add("mscale", *sc.mscale);
      if (sc.mscale_all_dim) add("mscale_all_dim", *sc.mscale_all_dim);
      break;
    case ScalingType::yarn_ggml:
      add("freq_scale", sc.freq_scale);
      add("original_max_position", std::to_string(sc.original_max_position));
      add("ext_factor", sc.ext_factor);
      add("attn_factor", sc.attn_factor);
      add("beta_fast", sc.beta_fast);
      add("beta_slow", sc.beta_slow);
      break;
    case ScalingType::llama3:
      add("factor", sc.factor);
      add("original_max_position", std::to_string(sc.original_max_position));
      add("low_freq_factor", sc.low_freq_factor);
      add("high_freq_factor", sc.high_freq_factor);
      break;
    case ScalingType::longrope:
      add("short_factor", join(sc.short_factor, '/'));
      add("long_factor", join(sc.long_factor, '/'));
      add("original_max_position", std::to_string(sc.original_max_position));
      add("seq_len", std::to_string(sc.seq_len));
      if (!sc.factor.empty()) add("factor", sc.factor);
      if (sc.attention_factor) add("attention_factor", *sc.attention_factor);
      break;
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
    if (k == "head_dim" || k == "rotary_dim" || k == "original_max_position" || k == "seq_len") {
      j[k] = std::stoll(v);
    } else if (k == "truncate") {
      j[k] = v == "true";
    } else if (k == "sections") {
      j[k] = s.axes.sections;
    } else if (k == "short_factor") {
      j[k] = s.scaling.short_factor;
    } else if (k == "long_factor") {
      j[k] = s.scaling.long_factor;
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
