// transformers config.json -> the rotations its model applies. How each model type rotates (the
// pairing, the rotary part, its config class's defaults, its layer pattern) is in kModelTypes, one
// row per model type citing the model's own code; the rope object's fields follow
// huggingface/transformers src/transformers/modeling_rope_utils.py (_compute_*_parameters,
// ROPE_INIT_FUNCTIONS). hfconfig/README.md has the same table and says which field maps to which
// spec key.
#include "hfconfig/hfconfig.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/checked_json.h"

namespace ropecheck::hfconfig {
namespace {

using Json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// The model-type table.

// Which dims of a head rotate, as the model's code slices them.
enum class RotaryPart {
  kHeadDim,        // int(head_dim · partial_rotary_factor); head_dim else hidden_size // num_attention_heads
  kRotaryPct,      // GPT-NeoX: int(head_dim · rotary_pct)
  kRotaryDim,      // GPT-J, CodeGen: the rotary_dim field, of head_dim = n_embd // n_head
  kQkRopeHeadDim,  // MLA: the decoupled qk_rope_head_dim dims, rotated whole
};

// Which layers rotate how, as the config class derives its layer pattern.
enum class LayerPattern {
  kUniform,           // one rotation for every layer (sliding and full layers alike)
  kLocalGlobal,       // sliding layers at rope_local_base_freq unscaled, full layers at rope_theta scaled
  kSlidingRopeOnly,   // sliding layers rotate, full-attention layers apply no RoPE
  kNoRopeList,        // no_rope_layers (1 rotates, 0 NoPE) when given, else every interval-th layer NoPE
  kNoRopeListOrEmpty  // the same, an empty no_rope_layers also falling back to the interval
};

// Fields read beyond the common ones.
enum class Extra {
  kNone,
  kGptj,     // base fixed at 10000 in the code; f16/bf16 activations times float32 sin/cos tables
  kNeox,     // the base may be called rotary_emb_base
  kLlama4,   // attn_temperature_tuning, use_qk_norm: said in the notes
  kMla,      // rope_interleave; the softmax scale's mscale² said in the notes
  kCohere2,  // the original release's keys, which transformers does not read, as its code hard-codes them
  kMrope,    // Qwen2-VL / Qwen2.5-VL: M-RoPE sections, never interleaved
  kImrope,   // Qwen3-VL: interleaved M-RoPE always, sections [24, 20, 20] by default
};

struct ModelType {
  std::string_view names;                    // the model_type values of the row, space-separated
  Layout layout = Layout::half;              // half: rotate_half pairs (i, i + d/2); interleaved: (2i, 2i+1)
  RotaryPart rotary = RotaryPart::kHeadDim;  // which dims rotate
  int head_dim = 0;                          // the config class's default head_dim; 0: hidden_size // heads
  const char* theta = "10000";               // the config class's default rope_theta (GPT-J: its code's base)
  const char* partial = nullptr;             // the config class's default partial_rotary_factor; nullptr: 1
  LayerPattern pattern = LayerPattern::kUniform;
  int interval = 0;                       // the default sliding_window_pattern / no_rope_layer_interval
  const char* published_dtype = nullptr;  // assumed (and said) without torch_dtype; nullptr: required
  const char* rope_default = nullptr;     // the rope object the config class fills in when the config has none
  Extra extra = Extra::kNone;
  std::string_view source;  // the code the row is read from (transformers: src/transformers/models/)
};

constexpr Layout kPairs = Layout::interleaved;

// One row per family of model types (the text model's model_type when a vision-language config
// nests it). hfconfig/README.md's table has the same rows with the same sources.
constexpr ModelType kModelTypes[] = {
    {.names = "llama", .source = "llama/modeling_llama.py rotate_half; LlamaConfig"},
    {.names = "mistral", .source = "mistral/modeling_mistral.py rotate_half; MistralConfig (Mistral-NeMo gives head_dim)"},
    {.names = "mixtral", .theta = "1000000", .source = "mixtral/modeling_mixtral.py rotate_half; MixtralConfig rope_theta=1e6"},
    {.names = "qwen2 qwen2_moe qwen3_moe", .source = "qwen2/modeling_qwen2.py, qwen2_moe, qwen3_moe rotate_half; their configs"},
    {.names = "qwen3", .head_dim = 128, .source = "qwen3/modeling_qwen3.py rotate_half (q/k norm before it); Qwen3Config head_dim=128"},
    {.names = "qwen2_vl qwen2_vl_text qwen2_5_vl qwen2_5_vl_text",
     .theta = "1000000",
     .extra = Extra::kMrope,
     .source = "qwen2_vl/modeling_qwen2_vl.py, qwen2_5_vl apply_multimodal_rotary_pos_emb (mrope_section); rope_theta=1e6"},
    {.names = "qwen3_vl qwen3_vl_text",
     .head_dim = 128,
     .theta = "5000000",
     .extra = Extra::kImrope,
     .source = "qwen3_vl/modeling_qwen3_vl.py apply_interleaved_mrope (always; mrope_section default [24, 20, 20]), "
               "rotate_half; Qwen3VLTextConfig rope_theta=5e6, head_dim=128"},
    {.names = "gemma gemma2",
     .head_dim = 256,
     .source = "gemma/modeling_gemma.py, gemma2 rotate_half (Gemma-2: one rotary embedding for sliding and full layers); head_dim=256"},
    {.names = "gemma3 gemma3_text",
     .head_dim = 256,
     .theta = "1000000",
     .pattern = LayerPattern::kLocalGlobal,
     .interval = 6,
     .source = "gemma3/modeling_gemma3.py rotate_half, rotary_emb_local (rope_local_base_freq, default rope) on sliding layers; "
               "Gemma3TextConfig rope_theta=1e6, rope_local_base_freq=10000, sliding_window_pattern=6, head_dim=256"},
    {.names = "phi3 phi3_v",
     .source = "phi3/modeling_phi3.py apply_rotary_pos_emb (q[..., :rotary_dim], rotate_half); Phi3Config; "
               "microsoft/Phi-3-vision-128k-instruct modeling_phi3_v.py"},
    {.names = "olmo2", .source = "olmo2/modeling_olmo2.py rotate_half (q/k norm before it); Olmo2Config"},
    {.names = "granite", .source = "granite/modeling_granite.py rotate_half; GraniteConfig"},
    {.names = "smollm3",
     .theta = "2000000",
     .pattern = LayerPattern::kNoRopeList,
     .interval = 4,
     .source = "smollm3/modeling_smollm3.py rotate_half, use_rope = no_rope_layers[layer_idx]; SmolLM3Config rope_theta=2e6, "
               "no_rope_layer_interval=4"},
    {.names = "gpt_oss",
     .head_dim = 64,
     .theta = "150000",
     .published_dtype = "bfloat16",
     .rope_default = R"({"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": false,
                         "original_max_position_embeddings": 4096})",
     .source = "gpt_oss/modeling_gpt_oss.py _apply_rotary_emb (torch.chunk halves), one rotary embedding for sliding and full "
               "layers; GptOssConfig rope_theta=150000, head_dim=64, its yarn rope_parameters; openai/gpt-oss-20b ships bf16"},
    {.names = "gpt_neox",
     .rotary = RotaryPart::kRotaryPct,
     .extra = Extra::kNeox,
     .source = "gpt_neox/modeling_gpt_neox.py rotate_half over rotary_ndims; GPTNeoXConfig rotary_pct=0.25, rotary_emb_base=10000"},
    {.names = "gptj codegen",
     .layout = kPairs,
     .rotary = RotaryPart::kRotaryDim,
     .extra = Extra::kGptj,
     .source = "gptj/modeling_gptj.py, codegen rotate_every_two, create_sinusoidal_positions (base 10000, float32); rotary_dim=64"},
    {.names = "cohere",
     .layout = kPairs,
     .source = "cohere/modeling_cohere.py rotate_half (x[..., ::2], x[..., 1::2]) with repeat_interleave; CohereConfig"},
    {.names = "cohere2",
     .layout = kPairs,
     .pattern = LayerPattern::kSlidingRopeOnly,
     .interval = 4,
     .extra = Extra::kCohere2,
     .source = "cohere2/modeling_cohere2.py: RoPE only where sliding_window is set (Cohere's pairs); Cohere2Config "
               "sliding_window_pattern=4"},
    {.names = "glm glm4",
     .layout = kPairs,
     .head_dim = 128,
     .partial = "0.5",
     .source = "glm/modeling_glm.py rotate_half (x[..., 0::2], x[..., 1::2]), apply_rotary_pos_emb repeat_interleave over "
               "q[..., :rotary_dim] (glm4: GlmAttention); GlmConfig/Glm4Config partial_rotary_factor=0.5, head_dim=128"},
    {.names = "ernie4_5",
     .layout = kPairs,
     .head_dim = 128,
     .theta = "500000",
     .source = "ernie4_5/modeling_ernie4_5.py apply_rotary_pos_emb (GLM's rotate_half, repeat_interleave, float32); "
               "Ernie4_5Config rope_theta=500000, head_dim=128"},
    {.names = "ernie4_5_moe",
     .layout = kPairs,
     .theta = "500000",
     .source = "ernie4_5_moe/modeling_ernie4_5_moe.py (ERNIE-4.5's rotary); Ernie4_5_MoeConfig rope_theta=500000"},
    {.names = "llama4 llama4_text",
     .layout = kPairs,
     .head_dim = 128,
     .theta = "500000",
     .pattern = LayerPattern::kNoRopeListOrEmpty,
     .interval = 4,
     .extra = Extra::kLlama4,
     .source = "llama4/modeling_llama4.py apply_rotary_emb (view_as_complex pairs), use_rope = no_rope_layers[layer_idx], "
               "rope_type llama3 whenever rope_scaling is set; Llama4TextConfig rope_theta=500000, no_rope_layer_interval=4"},
    {.names = "deepseek_v2 deepseek_v3 kimi_k2",
     .layout = kPairs,
     .rotary = RotaryPart::kQkRopeHeadDim,
     .extra = Extra::kMla,
     .source = "deepseek_v2/modeling_deepseek_v2.py apply_rotary_emb (view_as_complex), deepseek_v3 "
               "apply_rotary_pos_emb_interleave (rope_interleave) on q_pe/k_pe; deepseek-ai/DeepSeek-V3 and "
               "moonshotai/Kimi-K2-Instruct modeling_deepseek.py (YaRN with mscale); qk_rope_head_dim=64"},
};

// The row naming `name`, or nullptr.
const ModelType* find_model_type(std::string_view name) {
  for (const ModelType& m : kModelTypes) {
    for (std::size_t at = 0; at < m.names.size();) {
      std::size_t end = m.names.find(' ', at);
      if (end == std::string_view::npos) end = m.names.size();
      if (m.names.substr(at, end - at) == name) return &m;
      at = end + 1;
    }
  }
  return nullptr;
}

// A config without model_type: read as a Llama-style model (rotate_half over the whole head, one
// rotation for every layer), rope_theta required since no config class says its default.
constexpr ModelType kGenericLlama = {.names = "", .theta = nullptr, .source = "llama/modeling_llama.py rotate_half"};

// ---------------------------------------------------------------------------------------------
// Reading the config.

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
  bool given_null(const std::string& key) const {
    const Json* v = find(*cfg_, key);
    return v != nullptr && v->is_null();
  }
  bool boolean(const std::string& key, bool absent) const {
    const Json* v = field(key);
    if (v == nullptr) return absent;
    if (!v->is_boolean()) fail(path(key), "true|false", dump(*v));
    return v->get<bool>();
  }
  const Json& required(const std::string& key) const {
    const Json* v = field(key);
    if (v == nullptr) fail(path(key), "a value", "nothing");
    return *v;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  const Json& root_;
  const Json* cfg_;
  std::string prefix_;
};

// What was assumed, each said once.
void note(ModelRotations& out, const std::string& text) {
  if (std::find(out.notes.begin(), out.notes.end(), text) == out.notes.end()) out.notes.push_back(text);
}

Json parse_root(std::string_view json_text, const std::string& file) {
  Json root;
  JsonNotes notes;
  try {
    root = parse_json_checked<Json>(json_text, notes);
  } catch (const Json::exception& e) {
    throw SpecError(file + ": expected a JSON object (a transformers config.json), got invalid JSON (" + e.what() + ")");
  }
  if (notes.too_deep()) throw SpecError(file + ": " + notes.too_deep_message());
  if (!notes.duplicate.empty()) throw SpecError(file + ": field '" + notes.duplicate + "': expected once, got a duplicate");
  if (!root.is_object()) throw SpecError(file + ": expected a JSON object (a transformers config.json), got " + root.type_name());
  return root;
}

// The row of the config's model_type (the text model's when nested); refused by name when the
// table has none.
const ModelType& model_type_of(const Reader& r, ModelRotations& out) {
  const Json* v = r.field("model_type", true);
  if (v == nullptr) {
    note(out, "no model_type: read as a Llama-style model (rotate_half pairs (i, i + d/2), one rotation for every layer)");
    return kGenericLlama;
  }
  if (!v->is_string()) r.fail("model_type", "a string", Reader::dump(*v));
  out.model_type = v->get<std::string>();
  if (const ModelType* m = find_model_type(out.model_type)) return *m;
  r.fail("model_type", "a model type in hfconfig/README.md's table (its rotation is read from the model's code, never guessed)",
         "'" + out.model_type + "'");
}

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

// torch_dtype (transformers 5 writes "dtype"); the row's published dtype, said in the notes, when
// the config gives neither.
Dtype model_dtype(const Reader& r, const ModelType& m, ModelRotations& out) {
  if (const Json* v = r.field("torch_dtype", true)) return dtype_of(r, "torch_dtype", *v);
  if (const Json* v = r.field("dtype", true)) return dtype_of(r, "dtype", *v);
  if (m.published_dtype == nullptr) r.fail("torch_dtype", "bfloat16|float16|float32|float64", "nothing");
  note(out,
       std::string("no torch_dtype: assumed ") + m.published_dtype + ", the dtype " + out.model_type + " checkpoints are published in");
  return dtype_of(r, "torch_dtype", Json(m.published_dtype));
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

// One rope object (rope_parameters, rope_scaling, or one layer type's entry of rope_parameters)
// and its name for messages; an empty object where the config has none.
class Rope {
 public:
  Rope(const Json* object, std::string name) : object_(object != nullptr ? object : &empty()), name_(std::move(name)) {}

  const Json* param(const std::string& key) const {
    const Json* v = Reader::find(*object_, key);
    return v == nullptr || v->is_null() ? nullptr : v;
  }
  std::string pname(const std::string& key) const { return name_ + "." + key; }
  const Json& object() const { return *object_; }

  // Every key one ropecheck models (a key it does not know is refused by name, never ignored).
  void check_keys(const Reader& r) const {
    for (auto it = object_->begin(); it != object_->end(); ++it) {
      if (it.value().is_object()) {
        // transformers 5 allows one rope object per attention layer type (full_attention, ...).
        r.fail(pname(it.key()), "one rope object for the whole model (per-layer-type rope parameters: give the spec of one layer type)",
               "an object");
      }
      if (!known_rope_keys().count(it.key())) {
        r.fail(pname(it.key()), "a rope parameter ropecheck models (this one is refused, not ignored)", Reader::dump(it.value()));
      }
    }
  }

 private:
  static const Json& empty() {
    static const Json e = Json::object();
    return e;
  }
  const Json* object_;
  std::string name_;
};

// The config's rope objects: rope_parameters (newer transformers) or rope_scaling (older), not
// both. transformers 5 keys Gemma-3's by layer type ("sliding_attention", "full_attention").
struct RopeObjects {
  std::shared_ptr<const Json> fallback;  // the config class's rope object, when the config has none
  Rope whole{nullptr, ""};
  std::optional<Rope> sliding;  // per-layer-type form only
  std::optional<Rope> full;
};

RopeObjects rope_objects(const Reader& r, const ModelType& m, ModelRotations& notes) {
  const Json* rope = r.field("rope_parameters");
  std::string name = r.path("rope_parameters");
  if (const Json* old = r.field("rope_scaling")) {
    if (rope != nullptr) r.fail(r.path("rope_scaling"), "one of rope_parameters or rope_scaling", "both");
    rope = old;
    name = r.path("rope_scaling");
  }
  if (rope != nullptr && !rope->is_object()) r.fail(name, "an object", Reader::dump(*rope));
  RopeObjects out;
  if (rope == nullptr && m.rope_default != nullptr) {
    out.fallback = std::make_shared<const Json>(Json::parse(m.rope_default));
    rope = out.fallback.get();
    note(notes, "no rope_scaling: " + out.fallback->dump() + ", the " + notes.model_type + " config class's default");
  }
  out.whole = Rope(rope, name);
  const bool per_type = rope != nullptr && std::any_of(rope->begin(), rope->end(), [](const Json& v) { return v.is_object(); });
  if (per_type && m.pattern == LayerPattern::kLocalGlobal) {
    out.whole = Rope(nullptr, name);  // a layer type without its object: the default rope
    for (auto it = rope->begin(); it != rope->end(); ++it) {
      if (it.key() != "sliding_attention" && it.key() != "full_attention") {
        r.fail(name + "." + it.key(), "sliding_attention|full_attention (one rope object per layer type)", Reader::dump(it.value()));
      }
      if (!it.value().is_object()) r.fail(name + "." + it.key(), "an object", Reader::dump(it.value()));
      Rope one(&it.value(), name + "." + it.key());
      one.check_keys(r);
      (it.key() == "full_attention" ? out.full : out.sliding) = one;
    }
    return out;
  }
  out.whole.check_keys(r);
  return out;
}

// What the rotation of one group of layers is read from.
struct Context {
  std::optional<std::int64_t> seq_len;
  std::optional<std::int64_t> max_position;  // max_position_embeddings (n_positions)
  Dtype dtype = Dtype::f32;
  int head_dim = 0;
  ModelRotations* out = nullptr;  // where the defaults taken are said
};

// The head the rotary part is taken from: head_dim, else the config class's default, else
// hidden_size // num_attention_heads (n_embd // n_head); MLA's decoupled qk_rope_head_dim (default 64).
int read_head_dim(const Reader& r, const ModelType& m, ModelRotations& out) {
  const std::string key = m.rotary == RotaryPart::kQkRopeHeadDim ? "qk_rope_head_dim" : "head_dim";
  if (const Json* v = r.field(key)) return r.bounded(r.path(key), *v, 2, 1 << 16);
  if (m.rotary == RotaryPart::kQkRopeHeadDim || m.head_dim > 0) {
    const int fallback = m.rotary == RotaryPart::kQkRopeHeadDim ? 64 : m.head_dim;
    note(out, "no " + key + ": " + std::to_string(fallback) + ", the " + out.model_type + " config class's default");
    return fallback;
  }
  const char* hidden_key = r.field("hidden_size") != nullptr || r.field("n_embd") == nullptr ? "hidden_size" : "n_embd";
  const char* heads_key = r.field("num_attention_heads") != nullptr || r.field("n_head") == nullptr ? "num_attention_heads" : "n_head";
  const std::int64_t hidden = r.integer(r.path(hidden_key), r.required(hidden_key));
  const std::int64_t heads = r.integer(r.path(heads_key), r.required(heads_key));
  if (heads < 1) r.fail(r.path(heads_key), "an integer >= 1", std::to_string(heads));
  if (hidden < 1 || hidden / heads > (1 << 16)) r.fail(r.path(hidden_key), "an integer in [1, 65536 * heads]", std::to_string(hidden));
  const int head_dim = static_cast<int>(hidden / heads);
  if (head_dim < 2) r.fail(r.path(hidden_key), "a hidden size giving a head_dim >= 2", std::to_string(hidden));
  return head_dim;
}

// rotary_dim, as the row's code slices the head of ctx.head_dim dims.
void read_dims(const Reader& r, const ModelType& m, const Rope& rope, const Context& ctx, Spec& s) {
  s.head_dim = ctx.head_dim;
  s.rotary_dim = s.head_dim;
  if (m.rotary == RotaryPart::kQkRopeHeadDim) return;  // the decoupled head rotates whole
  if (m.rotary == RotaryPart::kRotaryDim) {
    // GPTJConfig / CodeGenConfig rotary_dim=64 (sliced k[..., :rotary_dim]: at most the head); an
    // explicit null rotates the whole head.
    if (const Json* given = r.field("rotary_dim")) {
      s.rotary_dim = r.bounded(r.path("rotary_dim"), *given, 2, 1 << 16);
    } else if (!r.given_null("rotary_dim")) {
      s.rotary_dim = std::min(64, s.head_dim);
    }
    return;
  }
  // int(head_dim · factor): the rope object's partial_rotary_factor, the config's (GPT-NeoX:
  // rotary_pct), else the config class's default.
  const Json* factor = rope.param("partial_rotary_factor");
  std::string name = rope.pname("partial_rotary_factor");
  if (factor == nullptr) {
    const std::string key =
        m.rotary == RotaryPart::kRotaryPct && r.field("partial_rotary_factor") == nullptr ? "rotary_pct" : "partial_rotary_factor";
    factor = r.field(key);
    name = r.path(key);
  }
  static const Json quarter = 0.25;
  Json fallback;
  if (factor == nullptr && m.rotary == RotaryPart::kRotaryPct) factor = &quarter;
  if (factor == nullptr && m.partial != nullptr) {
    fallback = std::stod(m.partial);
    factor = &fallback;
    note(*ctx.out, "no partial_rotary_factor: " + std::string(m.partial) + ", the " + ctx.out->model_type + " config class's default");
  }
  if (factor == nullptr) return;
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

// The base of the full-attention (or only) rotation: rope_theta in the rope object, then the
// config's (GPT-NeoX: rotary_emb_base), then the config class's default, said in the notes.
std::string read_base(const Reader& r, const ModelType& m, const Rope& rope, ModelRotations& out) {
  if (m.extra == Extra::kGptj) return m.theta;  // create_sinusoidal_positions: base 10000, no field
  if (const Json* v = rope.param("rope_theta")) return r.decimal(rope.pname("rope_theta"), *v);
  if (const Json* v = r.field("rope_theta")) return r.decimal(r.path("rope_theta"), *v);
  if (m.extra == Extra::kNeox) {
    if (const Json* v = r.field("rotary_emb_base")) return r.decimal(r.path("rotary_emb_base"), *v);
  }
  if (m.theta == nullptr) {
    r.fail(r.path("rope_theta"), "the RoPE base (without model_type, no config class says its default)", "nothing");
  }
  note(out, "no rope_theta: " + std::string(m.theta) + ", the " + out.model_type + " config class's default");
  return m.theta;
}

// Gemma-3's sliding layers: rope_local_base_freq (the sliding_attention rope object's rope_theta
// in transformers 5), else Gemma3TextConfig's default 10000.
std::string read_local_base(const Reader& r, const RopeObjects& ropes, ModelRotations& out) {
  if (ropes.sliding) {
    if (const Json* v = ropes.sliding->param("rope_theta")) return r.decimal(ropes.sliding->pname("rope_theta"), *v);
  }
  if (const Json* v = r.field("rope_local_base_freq")) return r.decimal(r.path("rope_local_base_freq"), *v);
  note(out, "no rope_local_base_freq: 10000, the " + out.model_type + " config class's default");
  return "10000";
}

// The rope type, or its older name type. "mrope" (Qwen2-VL's first configs) is the default
// schedule with sections; "su" is Phi-3's first name for longrope.
std::string rope_type(const Reader& r, const Rope& rope, std::string* type_name) {
  const Json* type_value = rope.param("rope_type");
  const Json* legacy_type = rope.param("type");
  if (type_value != nullptr && legacy_type != nullptr && *type_value != *legacy_type) {
    r.fail(rope.pname("type"), "the same value as rope_type (" + Reader::dump(*type_value) + ")", Reader::dump(*legacy_type));
  }
  *type_name = rope.pname(type_value != nullptr ? "rope_type" : "type");
  if (type_value == nullptr) type_value = legacy_type;
  if (type_value == nullptr) return "default";
  if (!type_value->is_string()) r.fail(*type_name, "a string", Reader::dump(*type_value));
  const std::string type = type_value->get<std::string>();
  if (type == "mrope") return "default";
  if (type == "su") return "longrope";
  return type;
}

// The scaling parameters of one rope type, each as the type's _compute_*_parameters reads it.
class ScalingReader {
 public:
  ScalingReader(const Reader& r, const Rope& rope, const Context& ctx) : r_(r), rope_(rope), ctx_(ctx) {
    type_ = rope_type(r, rope, &type_name_);
  }

  void read(Scaling& sc) const {
    if (type_ == "default") {
      only({});
    } else if (type_ == "linear") {
      only({"factor"});
      sc.type = ScalingType::linear;
      sc.factor = factor(true);
    } else if (type_ == "ntk") {  // b' = b·f^(d/(d−2)) (_compute_ntk_parameters)
      only({"factor"});
      sc.type = ScalingType::ntk;
      sc.factor = factor(true);
    } else if (type_ == "dynamic") {
      // _compute_dynamic_ntk_parameters: b' = b·(f·L/Lmax − (f − 1))^(d/(d−2)) with
      // Lmax = max_position_embeddings (an original_max_position_embeddings in the object is not read).
      only({"factor", "original_max_position_embeddings"});
      sc.type = ScalingType::dynamic;
      sc.factor = factor(true);
      sc.original_max_position = max_position();
      sc.seq_len = seq_len();
    } else if (type_ == "yarn") {
      yarn(sc);
    } else if (type_ == "llama3") {
      llama3(sc);
    } else if (type_ == "longrope") {
      longrope(sc);
    } else {
      r_.fail(type_name_, "a rope type ropecheck models (default, linear, dynamic, yarn, llama3, longrope; mrope sections)",
              "'" + type_ + "'");
    }
  }

 private:
  // _compute_yarn_parameters: L0 = original_max_position_embeddings or max_position_embeddings;
  // beta_fast/beta_slow default 32/1; attention factor explicit, else the mscale ratio, else
  // 0.1·ln f + 1 (spec/schedule.h attention_factor computes the last two).
  void yarn(Scaling& sc) const {
    only({"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor",
          "truncate"});
    sc.type = ScalingType::yarn;
    sc.factor = factor(true);
    const auto l0 = integer("original_max_position_embeddings");
    sc.original_max_position = l0 ? *l0 : max_position();
    if (auto v = decimal("beta_fast")) sc.beta_fast = *v;
    if (auto v = decimal("beta_slow")) sc.beta_slow = *v;
    sc.mscale = decimal("mscale");
    sc.mscale_all_dim = decimal("mscale_all_dim");
    sc.attention_factor = decimal("attention_factor");
    if (const Json* v = rope_.param("truncate")) {
      if (!v->is_boolean()) r_.fail(rope_.pname("truncate"), "true|false", Reader::dump(*v));
      sc.truncate = v->get<bool>();
    }
  }

  // _compute_llama3_parameters: all four keys required.
  void llama3(Scaling& sc) const {
    only({"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"});
    sc.type = ScalingType::llama3;
    sc.factor = factor(true);
    sc.original_max_position = r_.integer(rope_.pname("original_max_position_embeddings"), required("original_max_position_embeddings"));
    sc.low_freq_factor = r_.decimal(rope_.pname("low_freq_factor"), required("low_freq_factor"));
    sc.high_freq_factor = r_.decimal(rope_.pname("high_freq_factor"), required("high_freq_factor"));
  }

  // _compute_longrope_parameters: L0 = original_max_position_embeddings (Phi-3 keeps it beside
  // max_position_embeddings), and then f = max_position_embeddings / L0 whatever the object's
  // factor says; the attention factor, unless given, is √(1 + ln f / ln L0) for f > 1, else 1.
  // Short factors up to L0 tokens, long ones beyond: the sequence length decides.
  void longrope(Scaling& sc) const {
    only({"factor", "original_max_position_embeddings", "short_factor", "long_factor", "attention_factor"});
    sc.type = ScalingType::longrope;
    sc.short_factor = factors("short_factor");
    sc.long_factor = factors("long_factor");
    std::optional<std::int64_t> l0;
    std::string l0_name;
    if (const Json* v = r_.field("original_max_position_embeddings")) {
      l0 = r_.integer(r_.path("original_max_position_embeddings"), *v);
      l0_name = r_.path("original_max_position_embeddings");
    } else if (auto v = integer("original_max_position_embeddings")) {
      l0 = *v;
      l0_name = rope_.pname("original_max_position_embeddings");
    }
    if (l0) {
      if (*l0 < 1) r_.fail(l0_name, "an integer >= 1", std::to_string(*l0));
      sc.original_max_position = *l0;
      // Python's float division, written as Python prints it.
      sc.factor = shortest_decimal(static_cast<double>(max_position()) / static_cast<double>(*l0));
    } else {
      sc.original_max_position = max_position();
      sc.factor = factor(false);
    }
    sc.attention_factor = decimal("attention_factor");
    sc.seq_len = seq_len();
  }

  std::vector<std::string> factors(const std::string& key) const {
    const Json* v = rope_.param(key);
    if (v == nullptr || !v->is_array()) r_.fail(rope_.pname(key), "an array of rotary_dim/2 numbers", v ? Reader::dump(*v) : "nothing");
    std::vector<std::string> out;
    for (const Json& x : *v) out.push_back(r_.decimal(rope_.pname(key), x));
    return out;
  }
  std::string factor(bool required) const {
    const Json* v = rope_.param("factor");
    if (v == nullptr) {
      if (required) r_.fail(rope_.pname("factor"), "a number for rope_type=" + type_, "nothing");
      return {};
    }
    return r_.decimal(rope_.pname("factor"), *v);
  }
  const Json& required(const std::string& key) const {
    const Json* v = rope_.param(key);
    if (v == nullptr) r_.fail(rope_.pname(key), "a number for rope_type=" + type_, "nothing");
    return *v;
  }
  std::optional<std::int64_t> integer(const std::string& key) const {
    const Json* v = rope_.param(key);
    if (v == nullptr) return std::nullopt;
    return r_.integer(rope_.pname(key), *v);
  }
  std::optional<std::string> decimal(const std::string& key) const {
    const Json* v = rope_.param(key);
    if (v == nullptr) return std::nullopt;
    return r_.decimal(rope_.pname(key), *v);
  }
  std::int64_t seq_len() const {
    if (!ctx_.seq_len) {
      throw SpecError(r_.file() + ": field '" + type_name_ + "': expected --seq-len N with rope_type=" + type_ +
                      " (its rotation depends on the sequence length served), got none");
    }
    return *ctx_.seq_len;
  }
  std::int64_t max_position() const {
    if (!ctx_.max_position) r_.fail(r_.path("max_position_embeddings"), "an integer (the rope type reads it)", "nothing");
    return *ctx_.max_position;
  }
  // A parameter this rope type does not read would be silently dropped: refuse it by name.
  void only(std::initializer_list<const char*> allowed) const {
    const Json& p = rope_.object();
    for (auto it = p.begin(); it != p.end(); ++it) {
      const std::string& key = it.key();
      if (key == "rope_type" || key == "type" || key == "rope_theta" || key == "partial_rotary_factor" || key == "mrope_section" ||
          key == "mrope_interleaved" || it.value().is_null()) {
        continue;
      }
      bool ok = false;
      for (const char* a : allowed) ok = ok || key == a;
      if (!ok) r_.fail(rope_.pname(key), "no such parameter for rope_type=" + type_, Reader::dump(it.value()));
    }
  }

  const Reader& r_;
  const Rope& rope_;
  const Context& ctx_;
  std::string type_;
  std::string type_name_;
};

// M-RoPE sections (Qwen2-VL, Qwen2.5-VL), interleaved when mrope_interleaved (Qwen3-VL).
void read_axes(const Reader& r, const Rope& rope, Spec& s) {
  if (const Json* sections = rope.param("mrope_section")) {
    if (!sections->is_array() || sections->empty()) r.fail(rope.pname("mrope_section"), "an array of pair counts", Reader::dump(*sections));
    for (const Json& n : *sections) s.axes.sections.push_back(r.bounded(rope.pname("mrope_section"), n, 0, 1 << 16));
    s.axes.kind = AxesKind::mrope;
    if (const Json* flag = rope.param("mrope_interleaved")) {
      if (!flag->is_boolean()) r.fail(rope.pname("mrope_interleaved"), "true|false", Reader::dump(*flag));
      if (flag->get<bool>()) s.axes.kind = AxesKind::imrope;
    }
  } else if (rope.param("mrope_interleaved") != nullptr) {
    r.fail(rope.pname("mrope_sections"), "the sections that mrope_interleaved interleaves", "nothing");
  }
}

// The multimodal sections as the Qwen-VL code uses them: Qwen2-VL / Qwen2.5-VL split the
// frequencies into consecutive sections (apply_multimodal_rotary_pos_emb) whatever
// mrope_interleaved says; Qwen3-VL always interleaves them (apply_interleaved_mrope), with
// mrope_section [24, 20, 20] when the config gives none.
void qwen_vl_axes(const Reader& r, const ModelType& m, const Rope& rope, const Context& ctx, Spec& s) {
  const Json* flag = rope.param("mrope_interleaved");
  if (m.extra == Extra::kMrope && flag != nullptr && *flag == true) {
    r.fail(rope.pname("mrope_interleaved"), "false (Qwen2-VL's code splits the sections, never interleaves)", "true");
  }
  if (m.extra != Extra::kImrope) return;
  if (flag != nullptr && *flag == false) {
    r.fail(rope.pname("mrope_interleaved"), "true (Qwen3-VL's code always interleaves the sections)", "false");
  }
  if (s.axes.kind == AxesKind::none) {
    s.axes.sections = {24, 20, 20};
    note(*ctx.out, "no mrope_section: [24, 20, 20], the default of " + ctx.out->model_type + "'s rotary embedding");
  }
  s.axes.kind = AxesKind::imrope;
}

// The pairing: the row's, except DeepSeek-V3's rope_interleave=false (plain rotate_half).
Layout layout_of(const Reader& r, const ModelType& m) {
  if (m.extra == Extra::kMla && !r.boolean("rope_interleave", true)) return Layout::half;
  return m.layout;
}

// The Spec of one rotation: the rope object `rope` at base `base`.
Spec rotation(const Reader& r, const ModelType& m, const Rope& rope, const std::string& base, const Context& ctx) {
  Spec s;
  s.layout = layout_of(r, m);
  read_dims(r, m, rope, ctx, s);
  s.base = base;
  s.dtype = ctx.dtype;
  // GPT-J and CodeGen multiply f16/bf16 activations by float32 sin/cos tables
  // (create_sinusoidal_positions): PyTorch promotes, so the rotated q/k come out in float32.
  if (m.extra == Extra::kGptj && ctx.dtype != Dtype::f64) {
    s.dtype = Dtype::f32;
    if (ctx.dtype != Dtype::f32) s.input_dtype = ctx.dtype;
  }
  ScalingReader(r, rope, ctx).read(s.scaling);
  // DeepSeek's YaRN scales cos/sin by yarn_get_mscale(f, mscale) / yarn_get_mscale(f,
  // mscale_all_dim) with defaults 1 and 0 (modeling_deepseek.py); HF's rule differs when one is
  // missing, so a config must give both (or the attention factor).
  const Scaling& sc = s.scaling;
  if (m.extra == Extra::kMla && sc.type == ScalingType::yarn && !sc.attention_factor && !(sc.mscale && sc.mscale_all_dim)) {
    r.fail(rope.pname(sc.mscale ? "mscale_all_dim" : "mscale"),
           "mscale and mscale_all_dim both (DeepSeek's code and transformers' differ when one is missing)", "nothing");
  }
  read_axes(r, rope, s);
  qwen_vl_axes(r, m, rope, ctx, s);
  try {
    validate(s);
  } catch (const SpecError& e) {
    throw SpecError(r.file() + ": " + e.what());
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Layer patterns.

std::int64_t layer_count(const Reader& r, bool required) {
  const char* key = r.field("num_hidden_layers") != nullptr || r.field("n_layer") == nullptr ? "num_hidden_layers" : "n_layer";
  const Json* v = r.field(key);
  if (v == nullptr) {
    if (required) r.fail(r.path(key), "the number of decoder layers (its layers rotate differently)", "nothing");
    return 0;
  }
  const std::int64_t n = r.integer(r.path(key), *v);
  if (n < 1 || n > (1 << 20)) r.fail(r.path(key), "an integer in [1, 1048576]", std::to_string(n));
  return n;
}

// True for each sliding-window layer: layer_types when given, else every sliding_window_pattern-th
// layer full (`bool((i + 1) % pattern)`, the config classes' rule).
std::vector<bool> sliding_layers(const Reader& r, const ModelType& m, std::int64_t n, std::string* field) {
  std::vector<bool> sliding(static_cast<std::size_t>(n));
  if (const Json* types = r.field("layer_types")) {
    *field = r.path("layer_types");
    if (!types->is_array() || static_cast<std::int64_t>(types->size()) < n) {
      r.fail(*field, "an array of " + std::to_string(n) + " layer types (num_hidden_layers)", Reader::dump(*types));
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const Json& t = (*types)[static_cast<std::size_t>(i)];
      if (t != "sliding_attention" && t != "full_attention") {
        r.fail(*field, "sliding_attention|full_attention for every layer", Reader::dump(t) + " at layer " + std::to_string(i));
      }
      sliding[static_cast<std::size_t>(i)] = t == "sliding_attention";
    }
    return sliding;
  }
  *field = r.path("sliding_window_pattern");
  std::int64_t pattern = m.interval;
  if (const Json* v = r.field("sliding_window_pattern")) pattern = r.bounded(*field, *v, 1, 1 << 20);
  for (std::int64_t i = 0; i < n; ++i) sliding[static_cast<std::size_t>(i)] = (i + 1) % pattern != 0;
  return sliding;
}

// True for each layer that rotates: no_rope_layers (1 rotates, 0 does not) when given, else every
// no_rope_layer_interval-th layer NoPE (`int((i + 1) % interval != 0)`).
std::vector<bool> rope_layers(const Reader& r, const ModelType& m, std::int64_t n, std::string* field) {
  std::vector<bool> rotates(static_cast<std::size_t>(n));
  const Json* list = r.field("no_rope_layers");
  // Llama4TextConfig falls back to the interval on an empty list (`if no_rope_layers`); SmolLM3Config only on None.
  if (list != nullptr && !(m.pattern == LayerPattern::kNoRopeListOrEmpty && list->is_array() && list->empty())) {
    *field = r.path("no_rope_layers");
    if (!list->is_array() || static_cast<std::int64_t>(list->size()) < n) {
      r.fail(*field, "an array of " + std::to_string(n) + " values 0|1 (num_hidden_layers)", Reader::dump(*list));
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const Json& v = (*list)[static_cast<std::size_t>(i)];
      if (!(v == 0 || v == 1) || v.is_boolean()) r.fail(*field, "0|1 for every layer", Reader::dump(v) + " at layer " + std::to_string(i));
      rotates[static_cast<std::size_t>(i)] = v == 1;
    }
    return rotates;
  }
  *field = r.path("no_rope_layer_interval");
  std::int64_t interval = m.interval;
  if (const Json* v = r.field("no_rope_layer_interval")) interval = r.bounded(*field, *v, 1, 1 << 20);
  for (std::int64_t i = 0; i < n; ++i) rotates[static_cast<std::size_t>(i)] = (i + 1) % interval != 0;
  return rotates;
}

// The kind of every layer, and the config field the pattern was read from.
std::vector<LayerKind> layer_kinds(const Reader& r, const ModelType& m, std::int64_t n, std::string* field) {
  std::vector<LayerKind> kinds(static_cast<std::size_t>(n), LayerKind::kAll);
  switch (m.pattern) {
    case LayerPattern::kUniform:
      break;
    case LayerPattern::kLocalGlobal:
    case LayerPattern::kSlidingRopeOnly: {
      const LayerKind full = m.pattern == LayerPattern::kLocalGlobal ? LayerKind::kGlobal : LayerKind::kNoRope;
      const std::vector<bool> sliding = sliding_layers(r, m, n, field);
      for (std::size_t i = 0; i < kinds.size(); ++i) kinds[i] = sliding[i] ? LayerKind::kLocal : full;
      break;
    }
    case LayerPattern::kNoRopeList:
    case LayerPattern::kNoRopeListOrEmpty: {
      const std::vector<bool> rotates = rope_layers(r, m, n, field);
      for (std::size_t i = 0; i < kinds.size(); ++i) kinds[i] = rotates[i] ? LayerKind::kAll : LayerKind::kNoRope;
      break;
    }
  }
  return kinds;
}

// ---------------------------------------------------------------------------------------------
// Fields beside the rotation, said in the notes.

bool truthy(const Json* v) {
  if (v == nullptr) return false;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_number()) return v->get<double>() != 0;
  return true;
}

// Cohere2Config's first release wrote keys transformers does not read; each must say what
// modeling_cohere2.py hard-codes (else the checkpoint was made for other code).
void cohere2_legacy(const Reader& r) {
  struct Fixed {
    const char* key;
    Json value;
    const char* meaning;
  };
  const Fixed fixed[] = {{"order_of_interleaved_layers", "local_attn_first", "sliding layers first in each group"},
                         {"position_embedding_type", "rope_gptj", "interleaved (GPT-J) pairs"},
                         {"rotary_pct", 1.0, "the whole head rotated"}};
  for (const Fixed& f : fixed) {
    const Json* v = r.field(f.key);
    if (v != nullptr && *v != f.value)
      r.fail(r.path(f.key), f.value.dump() + " (" + f.meaning + ", as transformers computes)", Reader::dump(*v));
  }
}

void llama4_notes(const Reader& r, ModelRotations& out) {
  // modeling_llama4.py Llama4TextAttention: temperature tuning scales the queries of NoPE layers
  // only (`if self.attn_temperature_tuning and not self.use_rope`); qk_norm (an L2 norm) runs on
  // the rotated q and k of RoPE layers.
  if (truthy(r.field("attn_temperature_tuning"))) {
    note(out,
         "attn_temperature_tuning: NoPE layers scale queries by log1p(floor((pos + 1) / floor_scale)) * attn_scale + 1; "
         "not a rotation, and not on the layers that rotate");
  }
  if (truthy(r.field("use_qk_norm"))) {
    note(out, "use_qk_norm: RoPE layers L2-normalise q and k after the rotation; compare the rotation's output before it");
  }
}

void mla_notes(const Spec& spec, ModelRotations& out) {
  note(out, "MLA: the rotation covers the " + std::to_string(spec.head_dim) +
                " decoupled RoPE dims (qk_rope_head_dim) of each query head and the shared k_pe, not the qk_nope_head_dim dims");
  if (spec.layout == Layout::interleaved) {
    note(out,
         "pairs (2i, 2i+1) rotate; DeepSeek's modeling_deepseek.py and transformers' deepseek_v3 de-interleave them first "
         "(rotate_half on the permuted dims): the same q.k, outputs in the permuted order");
  }
  // modeling_deepseek.py DeepseekV3Attention: softmax_scale *= yarn_get_mscale(factor, mscale_all_dim)²
  if (spec.scaling.type == ScalingType::yarn && spec.scaling.mscale_all_dim) {
    note(out, "softmax scale: the attention multiplies it by (0.1 * mscale_all_dim * ln(factor) + 1)^2; outside the rotation");
  }
}

// ---------------------------------------------------------------------------------------------
// Grouping layers into rotations.

ModelRotations read_rotations(std::string_view json_text, std::optional<std::int64_t> seq_len, std::string_view file_name) {
  const std::string file(file_name);
  const Json root = parse_root(json_text, file);
  const Reader r(file, root);
  ModelRotations out;
  const ModelType& m = model_type_of(r, out);
  out.source = m.source;
  const RopeObjects ropes = rope_objects(r, m, out);
  if (m.extra == Extra::kCohere2) cohere2_legacy(r);
  if (m.extra == Extra::kLlama4) {
    // Llama4TextRotaryEmbedding: rope_type = "llama3" if config.rope_scaling is not None else "default".
    std::string type_name;
    const std::string type = rope_type(r, ropes.whole, &type_name);
    if (type != "default" && type != "llama3") {
      r.fail(type_name, "llama3 (Llama-4's code computes any rope_scaling as llama3)", "'" + type + "'");
    }
  }

  Context ctx;
  ctx.seq_len = seq_len;
  ctx.out = &out;
  ctx.dtype = model_dtype(r, m, out);
  ctx.head_dim = read_head_dim(r, m, out);
  const char* max_key =
      r.field("max_position_embeddings") != nullptr || r.field("n_positions") == nullptr ? "max_position_embeddings" : "n_positions";
  if (const Json* v = r.field(max_key)) ctx.max_position = r.integer(r.path(max_key), *v);

  out.num_layers = layer_count(r, m.pattern != LayerPattern::kUniform);
  std::string pattern_field;
  const std::vector<LayerKind> kinds = layer_kinds(r, m, out.num_layers, &pattern_field);

  // One spec per kind that rotates, read once.
  std::map<LayerKind, Spec> specs;
  auto spec_of = [&](LayerKind kind) -> const Spec& {
    auto it = specs.find(kind);
    if (it != specs.end()) return it->second;
    Spec s;
    if (kind == LayerKind::kLocal && m.pattern == LayerPattern::kLocalGlobal) {
      // Gemma-3's sliding layers: their own base, the default rope type (transformers 5: the
      // sliding_attention object).
      const Rope local = ropes.sliding ? *ropes.sliding : Rope(nullptr, r.path("rope_local_base_freq"));
      s = rotation(r, m, local, read_local_base(r, ropes, out), ctx);
    } else {
      const Rope& rope = ropes.full ? *ropes.full : ropes.whole;
      s = rotation(r, m, rope, read_base(r, m, rope, out), ctx);
    }
    return specs.emplace(kind, s).first->second;
  };

  if (kinds.empty()) {  // a uniform model without num_hidden_layers: one rotation, layers unknown
    out.rotations.push_back({LayerKind::kAll, spec_of(LayerKind::kAll), {}});
  }
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    auto it = std::find_if(out.rotations.begin(), out.rotations.end(), [&](const LayerRotation& g) { return g.kind == kinds[i]; });
    if (it == out.rotations.end()) {
      LayerRotation g;
      g.kind = kinds[i];
      if (kinds[i] != LayerKind::kNoRope) g.spec = spec_of(kinds[i]);
      out.rotations.push_back(g);
      it = out.rotations.end() - 1;
    }
    it->layers.push_back(static_cast<std::int64_t>(i));
  }

  // Local and global layers that rotate alike are one rotation.
  auto local = std::find_if(out.rotations.begin(), out.rotations.end(), [](const LayerRotation& g) { return g.kind == LayerKind::kLocal; });
  auto global =
      std::find_if(out.rotations.begin(), out.rotations.end(), [](const LayerRotation& g) { return g.kind == LayerKind::kGlobal; });
  if (local != out.rotations.end() && global != out.rotations.end() && local->spec == global->spec) {
    local->kind = LayerKind::kAll;
    local->layers.insert(local->layers.end(), global->layers.begin(), global->layers.end());
    std::sort(local->layers.begin(), local->layers.end());
    out.rotations.erase(global);
  }

  if (m.extra == Extra::kLlama4) llama4_notes(r, out);
  if (m.extra == Extra::kMla) {
    for (const LayerRotation& g : out.rotations)
      if (g.spec) mla_notes(*g.spec, out);
  }
  out.layer_pattern = pattern_field;
  return out;
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

std::string layer_ranges(const std::vector<std::int64_t>& layers) {
  std::string out;
  for (std::size_t i = 0; i < layers.size();) {
    std::size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(layers[i]);
    if (j > i) out += '-' + std::to_string(layers[j]);
    i = j + 1;
  }
  return out;
}

ModelRotations rotations_from_hf_config(std::string_view json_text, std::optional<std::int64_t> seq_len, std::string_view file_name) {
  return read_rotations(json_text, seq_len, file_name);
}

namespace {

// "local 0-4,6-10; global 5,11": the model's rotations for a message.
std::string rotations_text(const ModelRotations& model) {
  std::string out;
  for (const LayerRotation& g : model.rotations) {
    if (!out.empty()) out += "; ";
    out += std::string(layer_kind_name(g.kind)) + " " + (g.layers.empty() ? "every layer" : layer_ranges(g.layers));
  }
  return out;
}

// "local|global": the kinds of the model that rotate.
std::string rotating_kinds(const ModelRotations& model) {
  std::string out;
  for (const LayerRotation& g : model.rotations) {
    if (!g.spec) continue;
    if (!out.empty()) out += '|';
    out += layer_kind_name(g.kind);
  }
  return out;
}

}  // namespace

Spec select_rotation(const ModelRotations& model, const LayerSelector& selector, std::string_view file_name) {
  const std::string file(file_name);
  const std::string field = model.layer_pattern.empty() ? "model_type" : model.layer_pattern;
  auto fail = [&](const std::string& expected, const std::string& got) -> Spec {
    throw SpecError(file + ": field '" + field + "': expected " + expected + " (" + rotations_text(model) + "), got " + got);
  };
  const LayerRotation* chosen = nullptr;
  if (selector.layer) {
    const std::int64_t n = *selector.layer;
    if (n < 0 || (model.num_layers > 0 && n >= model.num_layers)) {
      const std::string range = model.num_layers > 0 ? "0-" + std::to_string(model.num_layers - 1) : "0 or more";
      throw SpecError(file + ": field 'num_hidden_layers': expected --layer N in " + range + ", got --layer " + std::to_string(n));
    }
    for (const LayerRotation& g : model.rotations) {
      if (g.layers.empty() || std::binary_search(g.layers.begin(), g.layers.end(), n)) chosen = &g;
    }
    if (chosen == nullptr) return fail("--layer N of a decoder layer", "--layer " + std::to_string(n));
    if (!chosen->spec) return fail("--layer N of a layer that rotates", "--layer " + std::to_string(n) + ", a layer without RoPE");
  } else if (selector.kind) {
    const std::string asked(layer_kind_name(*selector.kind));
    for (const LayerRotation& g : model.rotations)
      if (g.kind == *selector.kind) chosen = &g;
    if (chosen == nullptr) return fail("--layer " + rotating_kinds(model) + " or --layer N", "--layer " + asked);
    if (!chosen->spec) return fail("--layer " + rotating_kinds(model) + " or --layer N of a layer that rotates", "--layer " + asked);
  } else {
    for (const LayerRotation& g : model.rotations) {
      if (!g.spec) continue;
      if (chosen != nullptr) {
        return fail("--layer N or --layer " + rotating_kinds(model) + ": layers rotate differently", "no --layer");
      }
      chosen = &g;
    }
    if (chosen == nullptr) return fail("a layer that rotates", "every layer without RoPE");
  }
  return *chosen->spec;
}

Spec spec_from_hf_config(std::string_view json_text, std::optional<std::int64_t> seq_len, std::string_view file_name,
                         const LayerSelector& selector) {
  const ModelRotations model = read_rotations(json_text, seq_len, file_name);
  return select_rotation(model, selector, file_name);
}

}  // namespace ropecheck::hfconfig
