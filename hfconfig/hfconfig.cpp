// transformers config.json -> Spec. Facts from huggingface/transformers
// src/transformers/modeling_rope_utils.py (_compute_*_parameters, ROPE_INIT_FUNCTIONS), the
// Qwen2-VL / Qwen3-VL rotary embeddings (mrope_section, apply_interleaved_mrope) and the GPT-J /
// CodeGen attention (rotate_every_two with float32 sin/cos); hfconfig/README.md says which field
// maps to which spec key.
#include "hfconfig/hfconfig.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/json_keys.h"

namespace ropecheck::hfconfig {
namespace {

using Json = nlohmann::json;

// The shortest decimal that reads back as `v`, the closest such when there are several — the
// digits Python's repr prints, so a config written by json.dump reads back as its own text
// (std::to_chars guarantees both properties; nlohmann's dump only the first). Fixed notation
// ("500000", "0.00001"; no ".0") within [1e-5, 1e21), scientific outside.
std::string shortest_decimal(double v) {
  char buffer[400];
  const double magnitude = std::fabs(v);
  const bool fixed = magnitude == 0 || (magnitude >= 1e-5 && magnitude < 1e21);
  const auto result = fixed ? std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed)
                            : std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::scientific);
  return std::string(buffer, result.ptr);
}

// One config being read: the file name for messages, the object the text model's fields live in
// (`text_config` of a vision-language config, else the root) and its path prefix.
class Reader {
 public:
  Reader(std::string_view file, const Json& root) : file_(file), root_(root), cfg_(&root) {
    if (const Json* text = find(root, "text_config"); text != nullptr && !text->is_null()) {
      if (!text->is_object()) fail("text_config", "an object", dump(*text));
      cfg_ = text;
      prefix_ = "text_config.";
    }
  }

  [[noreturn]] void fail(const std::string& field, const std::string& expected, const std::string& got) const {
    throw SpecError(std::string(file_) + ": field '" + field + "': expected " + expected + ", got " + got);
  }

  static std::string dump(const Json& v) {
    std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (text.size() > 60) text = text.substr(0, 60) + "...";
    return text;
  }

  static const Json* find(const Json& object, const std::string& key) {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  // A field of the text model's config (null counts as absent, as transformers reads it), falling
  // back to the root for fields a vision-language config keeps there (torch_dtype, model_type).
  const Json* field(const std::string& key, bool root_too = false) const {
    const Json* v = find(*cfg_, key);
    if ((v == nullptr || v->is_null()) && root_too && cfg_ != &root_) v = find(root_, key);
    return v == nullptr || v->is_null() ? nullptr : v;
  }
  std::string path(const std::string& key) const { return prefix_ + key; }

  // A JSON number as an exact decimal for the spec.
  std::string decimal(const std::string& name, const Json& v) const {
    if (!v.is_number()) fail(name, "a number", dump(v));
    if (v.is_number_integer()) return v.dump();
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(name, "a finite number", dump(v));
    return shortest_decimal(d);
  }
  std::int64_t integer(const std::string& name, const Json& v) const {
    // Above 2^63 - 1 (2^64 - 1 read as int64 is -1): refused, naming the value as written.
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail(name, "an integer up to 9223372036854775807", dump(v));
    }
    if (v.is_number_integer()) return v.get<std::int64_t>();
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<std::int64_t>(d);
    }
    fail(name, "an integer", dump(v));
  }
  // An integer in [lo, hi], checked before it is narrowed to int (2^32 + 64 must not become 64).
  int bounded(const std::string& name, const Json& v, std::int64_t lo, std::int64_t hi) const {
    const std::int64_t n = integer(name, v);
    if (n < lo || n > hi) fail(name, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", dump(v));
    return static_cast<int>(n);
  }
  const Json& required(const std::string& key) const {
    const Json* v = field(key);
    if (v == nullptr) fail(path(key), "a value", "nothing");
    return *v;
  }

  const Json& cfg() const { return *cfg_; }

 private:
  std::string_view file_;
  const Json& root_;
  const Json* cfg_;
  std::string prefix_;
};

Dtype dtype_of(const Reader& r, const std::string& name, const Json& v) {
  if (v.is_string()) {
    const std::string t = v.get<std::string>();
    if (t == "bfloat16") return Dtype::bf16;
    if (t == "float16") return Dtype::f16;
    if (t == "float32") return Dtype::f32;
    if (t == "float64") return Dtype::f64;
  }
  r.fail(name, "bfloat16|float16|float32|float64", Reader::dump(v));
}

// The keys each rope type reads (transformers' _compute_*_parameters); any other key in the rope
// object would be a parameter ropecheck does not model and is refused by name.
const std::set<std::string>& known_rope_keys() {
  static const std::set<std::string> keys = {"rope_type",        "type",
                                             "rope_theta",       "partial_rotary_factor",
                                             "factor",           "original_max_position_embeddings",
                                             "beta_fast",        "beta_slow",
                                             "mscale",           "mscale_all_dim",
                                             "attention_factor", "truncate",
                                             "low_freq_factor",  "high_freq_factor",
                                             "short_factor",     "long_factor",
                                             "mrope_section",    "mrope_interleaved"};
  return keys;
}

Spec single_spec(std::string_view json_text, std::optional<std::int64_t> seq_len, std::string_view file_name) {
  const std::string file(file_name);
  Json root;
  JsonNotes notes;
  try {
    root = parse_json_checked<Json>(json_text, notes);
  } catch (const Json::exception& e) {
    throw SpecError(file + ": expected a JSON object (a transformers config.json), got invalid JSON (" + e.what() + ")");
  }
  if (notes.too_deep()) throw SpecError(file + ": " + notes.too_deep_message());
  if (!notes.duplicate.empty()) {
    throw SpecError(file + ": field '" + notes.duplicate + "': expected once, got a duplicate");
  }
  if (!root.is_object()) throw SpecError(file + ": expected a JSON object (a transformers config.json), got " + root.type_name());
  const Reader r(file, root);

  std::string model_type;
  if (const Json* v = r.field("model_type", true)) {
    if (!v->is_string()) r.fail("model_type", "a string", Reader::dump(*v));
    model_type = v->get<std::string>();
  }
  // DeepSeek-V2/V3 rotate only qk_rope_head_dim dims of each head, de-interleaved first
  // (rope_interleave): not one of the spec's layouts.
  if (model_type == "deepseek_v2" || model_type == "deepseek_v3") {
    r.fail("model_type", "a model type whose rotation is a spec (DeepSeek's rope over qk_rope_head_dim with its permutation is not)",
           "'" + model_type + "'");
  }
  // GPT-J and CodeGen rotate (2i, 2i+1) pairs (rotate_every_two), Cohere likewise (its rotate_half
  // splits x[..., ::2] / x[..., 1::2]); every other transformers model rotates (i, i + d/2)
  // (rotate_half). The config does not say it: the model type does.
  const bool every_two = model_type == "gptj" || model_type == "codegen";
  const bool interleaved = every_two || model_type == "cohere" || model_type == "cohere2";
  const bool neox = model_type == "gpt_neox";

  // The rope object: rope_parameters (newer transformers) or rope_scaling (older), not both.
  const Json* rope = r.field("rope_parameters");
  std::string rope_name = r.path("rope_parameters");
  if (const Json* old = r.field("rope_scaling")) {
    if (rope != nullptr) r.fail(r.path("rope_scaling"), "one of rope_parameters or rope_scaling", "both");
    rope = old;
    rope_name = r.path("rope_scaling");
  }
  static const Json empty = Json::object();
  if (rope != nullptr && !rope->is_object()) r.fail(rope_name, "an object", Reader::dump(*rope));
  const Json& p = rope != nullptr ? *rope : empty;
  auto param = [&](const std::string& key) -> const Json* {
    const Json* v = Reader::find(p, key);
    return v == nullptr || v->is_null() ? nullptr : v;
  };
  auto pname = [&](const std::string& key) { return rope_name + "." + key; };
  for (auto it = p.begin(); it != p.end(); ++it) {
    if (it.value().is_object()) {
      // transformers 5 allows one rope object per attention layer type (full_attention, ...).
      r.fail(pname(it.key()), "one rope object for the whole model (per-layer-type rope parameters: give the spec of one layer type)",
             "an object");
    }
    if (!known_rope_keys().count(it.key())) {
      r.fail(pname(it.key()), "a rope parameter ropecheck models (this one is refused, not ignored)", Reader::dump(it.value()));
    }
  }

  Spec s;
  s.layout = interleaved ? Layout::interleaved : Layout::half;

  // head_dim: the config's, else hidden_size // num_attention_heads (n_embd // n_head for GPT-J).
  if (const Json* v = r.field("head_dim")) {
    s.head_dim = r.bounded(r.path("head_dim"), *v, 2, 1 << 16);
  } else {
    const char* hidden_key = r.field("hidden_size") != nullptr || r.field("n_embd") == nullptr ? "hidden_size" : "n_embd";
    const char* heads_key = r.field("num_attention_heads") != nullptr || r.field("n_head") == nullptr ? "num_attention_heads" : "n_head";
    const std::int64_t hidden = r.integer(r.path(hidden_key), r.required(hidden_key));
    const std::int64_t heads = r.integer(r.path(heads_key), r.required(heads_key));
    if (heads < 1) r.fail(r.path(heads_key), "an integer >= 1", std::to_string(heads));
    if (hidden < 1 || hidden / heads > (1 << 16)) r.fail(r.path(hidden_key), "an integer in [1, 65536 * heads]", std::to_string(hidden));
    s.head_dim = static_cast<int>(hidden / heads);
  }
  if (s.head_dim < 2 || s.head_dim > (1 << 16)) r.fail(r.path("head_dim"), "an integer in [2, 65536]", std::to_string(s.head_dim));

  // rotary_dim: GPT-J/CodeGen give it; otherwise int(head_dim * partial_rotary_factor) (GPT-NeoX
  // calls the factor rotary_pct).
  s.rotary_dim = s.head_dim;
  if (const Json* v = r.field("rotary_dim")) {
    s.rotary_dim = r.bounded(r.path("rotary_dim"), *v, 2, 1 << 16);
  } else {
    const Json* factor = param("partial_rotary_factor");
    std::string name = pname("partial_rotary_factor");
    if (factor == nullptr) {
      const std::string key = neox && r.field("partial_rotary_factor") == nullptr ? "rotary_pct" : "partial_rotary_factor";
      factor = r.field(key);
      name = r.path(key);
    }
    if (factor != nullptr) {
      if (!factor->is_number() || !(factor->get<double>() > 0) || !(factor->get<double>() <= 1)) {
        r.fail(name, "a number in (0, 1]", Reader::dump(*factor));
      }
      // Python's int() of the float product: truncation.
      s.rotary_dim = static_cast<int>(static_cast<double>(s.head_dim) * factor->get<double>());
      if (s.rotary_dim < 2 || s.rotary_dim % 2 != 0) {
        r.fail(name, "a factor giving an even rotary dim >= 2 (head_dim=" + std::to_string(s.head_dim) + ")",
               Reader::dump(*factor) + " (rotary dim " + std::to_string(s.rotary_dim) + ")");
      }
    }
  }

  // base: rope_theta (in the rope object in newer configs); GPT-NeoX calls it rotary_emb_base;
  // GPT-J and CodeGen have no field: their modelling code fixes 10000.
  if (const Json* v = param("rope_theta")) {
    s.base = r.decimal(pname("rope_theta"), *v);
  } else if (const Json* v = r.field("rope_theta")) {
    s.base = r.decimal(r.path("rope_theta"), *v);
  } else if (const Json* v = neox ? r.field("rotary_emb_base") : nullptr) {
    s.base = r.decimal(r.path("rotary_emb_base"), *v);
  } else if (every_two) {
    s.base = "10000";
  } else {
    // The default differs between model types (10000 for Llama, 1000000 for Qwen2, ...): no guess.
    r.fail(r.path("rope_theta"), "the RoPE base (model types default it differently)", "nothing");
  }

  // dtype: torch_dtype (transformers 5 writes "dtype"). GPT-J and CodeGen multiply f16/bf16
  // activations by float32 sin/cos tables (create_sinusoidal_positions): PyTorch promotes, so the
  // rotated q/k come out in float32 — input dtype torch_dtype, output dtype f32.
  const Json* dtype = r.field("torch_dtype", true);
  std::string dtype_name = "torch_dtype";
  if (dtype == nullptr) {
    dtype = r.field("dtype", true);
    dtype_name = "dtype";
  }
  if (dtype == nullptr) r.fail("torch_dtype", "bfloat16|float16|float32|float64", "nothing");
  const Dtype model_dtype = dtype_of(r, dtype_name, *dtype);
  s.dtype = model_dtype;
  if (every_two && model_dtype != Dtype::f64) {
    s.dtype = Dtype::f32;
    if (model_dtype != Dtype::f32) s.input_dtype = model_dtype;
  }

  std::optional<std::int64_t> max_position;
  const char* max_key =
      r.field("max_position_embeddings") != nullptr || r.field("n_positions") == nullptr ? "max_position_embeddings" : "n_positions";
  if (const Json* v = r.field(max_key)) max_position = r.integer(r.path(max_key), *v);
  auto need_max_position = [&]() {
    if (!max_position) r.fail(r.path("max_position_embeddings"), "an integer (the rope type reads it)", "nothing");
    return *max_position;
  };

  // rope_type, or its older name type. "mrope" (Qwen2-VL's first configs) is the default schedule
  // with sections; "su" is Phi-3's first name for longrope.
  std::string type = "default";
  const Json* type_value = param("rope_type");
  const Json* legacy_type = param("type");
  if (type_value != nullptr && legacy_type != nullptr && *type_value != *legacy_type) {
    r.fail(pname("type"), "the same value as rope_type (" + Reader::dump(*type_value) + ")", Reader::dump(*legacy_type));
  }
  if (type_value == nullptr) type_value = legacy_type;
  const std::string type_name = pname(param("rope_type") != nullptr ? "rope_type" : "type");
  if (type_value != nullptr) {
    if (!type_value->is_string()) r.fail(type_name, "a string", Reader::dump(*type_value));
    type = type_value->get<std::string>();
  }
  if (type == "mrope") type = "default";
  if (type == "su") type = "longrope";

  Scaling& sc = s.scaling;
  auto factor_param = [&](bool required) -> std::string {
    const Json* v = param("factor");
    if (v == nullptr) {
      if (required) r.fail(pname("factor"), "a number for rope_type=" + type, "nothing");
      return {};
    }
    return r.decimal(pname("factor"), *v);
  };
  auto integer_param = [&](const std::string& key) -> std::optional<std::int64_t> {
    const Json* v = param(key);
    if (v == nullptr) return std::nullopt;
    return r.integer(pname(key), *v);
  };
  auto decimal_param = [&](const std::string& key) -> std::optional<std::string> {
    const Json* v = param(key);
    if (v == nullptr) return std::nullopt;
    return r.decimal(pname(key), *v);
  };
  auto need_seq_len = [&]() -> std::int64_t {
    if (!seq_len) {
      throw SpecError(file + ": field '" + type_name + "': expected --seq-len N with rope_type=" + type +
                      " (its rotation depends on the sequence length served), got none");
    }
    return *seq_len;
  };
  // A parameter this rope type does not read would be silently dropped: refuse it by name.
  auto only = [&](std::initializer_list<const char*> allowed) {
    for (auto it = p.begin(); it != p.end(); ++it) {
      const std::string& key = it.key();
      if (key == "rope_type" || key == "type" || key == "rope_theta" || key == "partial_rotary_factor" || key == "mrope_section" ||
          key == "mrope_interleaved" || it.value().is_null()) {
        continue;
      }
      bool ok = false;
      for (const char* a : allowed) ok = ok || key == a;
      if (!ok) r.fail(pname(key), "no such parameter for rope_type=" + type, Reader::dump(it.value()));
    }
  };

  if (type == "default") {
    only({});
  } else if (type == "linear") {
    only({"factor"});
    sc.type = ScalingType::linear;
    sc.factor = factor_param(true);
  } else if (type == "ntk") {  // b' = b·f^(d/(d−2)) (_compute_ntk_parameters)
    only({"factor"});
    sc.type = ScalingType::ntk;
    sc.factor = factor_param(true);
  } else if (type == "dynamic") {
    // _compute_dynamic_ntk_parameters: b' = b·(f·L/Lmax − (f − 1))^(d/(d−2)) with
    // Lmax = max_position_embeddings (an original_max_position_embeddings in rope_scaling is not read).
    only({"factor", "original_max_position_embeddings"});
    sc.type = ScalingType::dynamic;
    sc.factor = factor_param(true);
    sc.original_max_position = need_max_position();
    sc.seq_len = need_seq_len();
  } else if (type == "yarn") {
    // _compute_yarn_parameters: L0 = original_max_position_embeddings or max_position_embeddings;
    // beta_fast/beta_slow default 32/1; attention factor explicit, else the mscale ratio, else
    // 0.1·ln f + 1 (spec/schedule.h attention_factor computes the last two).
    only({"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor",
          "truncate"});
    sc.type = ScalingType::yarn;
    sc.factor = factor_param(true);
    const auto l0 = integer_param("original_max_position_embeddings");
    sc.original_max_position = l0 ? *l0 : need_max_position();
    if (auto v = decimal_param("beta_fast")) sc.beta_fast = *v;
    if (auto v = decimal_param("beta_slow")) sc.beta_slow = *v;
    sc.mscale = decimal_param("mscale");
    sc.mscale_all_dim = decimal_param("mscale_all_dim");
    sc.attention_factor = decimal_param("attention_factor");
    if (const Json* v = param("truncate")) {
      if (!v->is_boolean()) r.fail(pname("truncate"), "true|false", Reader::dump(*v));
      sc.truncate = v->get<bool>();
    }
  } else if (type == "llama3") {  // _compute_llama3_parameters: all four keys required
    only({"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"});
    sc.type = ScalingType::llama3;
    sc.factor = factor_param(true);
    auto required_param = [&](const std::string& key) -> const Json& {
      const Json* v = param(key);
      if (v == nullptr) r.fail(pname(key), "a number for rope_type=llama3", "nothing");
      return *v;
    };
    sc.original_max_position = r.integer(pname("original_max_position_embeddings"), required_param("original_max_position_embeddings"));
    sc.low_freq_factor = r.decimal(pname("low_freq_factor"), required_param("low_freq_factor"));
    sc.high_freq_factor = r.decimal(pname("high_freq_factor"), required_param("high_freq_factor"));
  } else if (type == "longrope") {
    // _compute_longrope_parameters: L0 = original_max_position_embeddings (Phi-3 keeps it beside
    // max_position_embeddings), and then f = max_position_embeddings / L0 whatever rope_scaling's
    // factor says; the attention factor, unless given, is √(1 + ln f / ln L0) for f > 1, else 1.
    // Short factors up to L0 tokens, long ones beyond: the sequence length decides.
    only({"factor", "original_max_position_embeddings", "short_factor", "long_factor", "attention_factor"});
    sc.type = ScalingType::longrope;
    auto factors = [&](const std::string& key) {
      const Json* v = param(key);
      if (v == nullptr || !v->is_array()) r.fail(pname(key), "an array of rotary_dim/2 numbers", v ? Reader::dump(*v) : "nothing");
      std::vector<std::string> out;
      for (const Json& x : *v) out.push_back(r.decimal(pname(key), x));
      return out;
    };
    sc.short_factor = factors("short_factor");
    sc.long_factor = factors("long_factor");
    std::optional<std::int64_t> l0;
    std::string l0_name;
    if (const Json* v = r.field("original_max_position_embeddings")) {
      l0 = r.integer(r.path("original_max_position_embeddings"), *v);
      l0_name = r.path("original_max_position_embeddings");
    } else if (auto v = integer_param("original_max_position_embeddings")) {
      l0 = *v;
      l0_name = pname("original_max_position_embeddings");
    }
    if (l0) {
      if (*l0 < 1) r.fail(l0_name, "an integer >= 1", std::to_string(*l0));
      sc.original_max_position = *l0;
      // Python's float division, written as Python prints it.
      sc.factor = shortest_decimal(static_cast<double>(need_max_position()) / static_cast<double>(*l0));
    } else {
      sc.original_max_position = need_max_position();
      sc.factor = factor_param(false);
    }
    sc.attention_factor = decimal_param("attention_factor");
    sc.seq_len = need_seq_len();
  } else {
    r.fail(type_name, "a rope type ropecheck models (default, linear, dynamic, yarn, llama3, longrope; mrope sections)", "'" + type + "'");
  }

  // M-RoPE sections (Qwen2-VL, Qwen2.5-VL), interleaved when mrope_interleaved (Qwen3-VL).
  if (const Json* sections = param("mrope_section")) {
    if (!sections->is_array() || sections->empty()) r.fail(pname("mrope_section"), "an array of pair counts", Reader::dump(*sections));
    for (const Json& n : *sections) s.axes.sections.push_back(r.bounded(pname("mrope_section"), n, 0, 1 << 16));
    s.axes.kind = AxesKind::mrope;
    if (const Json* flag = param("mrope_interleaved")) {
      if (!flag->is_boolean()) r.fail(pname("mrope_interleaved"), "true|false", Reader::dump(*flag));
      if (flag->get<bool>()) s.axes.kind = AxesKind::imrope;
    }
  } else if (param("mrope_interleaved") != nullptr) {
    r.fail(pname("mrope_section"), "the sections that mrope_interleaved interleaves", "nothing");
  }

  try {
    validate(s);
  } catch (const SpecError& e) {
    throw SpecError(file + ": " + e.what());
  }
  return s;
}

}  // namespace

std::string_view layer_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::kAll:
      return "all";
    case LayerKind::kGlobal:
      return "global";
    case LayerKind::kLocal:
      return "local";
    case LayerKind::kNoRope:
      return "nope";
  }
  return "all";
}

std::optional<LayerKind> parse_layer_kind(std::string_view name) {
  for (LayerKind k : {LayerKind::kAll, LayerKind::kGlobal, LayerKind::kLocal, LayerKind::kNoRope})
    if (layer_kind_name(k) == name) return k;
  return std::nullopt;
}

ModelRotations rotations_from_hf_config(std::string_view json_text, std::optional<std::int64_t> seq_len, std::string_view file_name) {
  ModelRotations out;
  LayerRotation all;
  all.spec = single_spec(json_text, seq_len, file_name);
  out.rotations.push_back(std::move(all));
  return out;
}

Spec spec_from_hf_config(std::string_view json_text, std::optional<std::int64_t> seq_len, std::string_view file_name,
                         const LayerSelector& selector) {
  (void)selector;
  return single_spec(json_text, seq_len, file_name);
}

}  // namespace ropecheck::hfconfig
