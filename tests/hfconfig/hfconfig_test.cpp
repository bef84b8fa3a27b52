// hfconfig: every example config's spec, written by hand from the config's fields and the mapping
// of hfconfig/README.md (never printed by the code under test), and refusals naming file and field.
#include "hfconfig/hfconfig.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ropecheck {
namespace {

std::string read(const std::string& name) {
  std::ifstream in(std::string(ROPECHECK_HFCONFIG_EXAMPLES) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string repeat(const std::string& item, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += (i ? "/" : "") + item;
  return out;
}

// A number list as the example file writes it ("key": [a, b, ...]), joined with '/': read from
// the file's text by string search, independently of the JSON parse and mapping under test.
std::string list_as_written(const std::string& file, const std::string& key) {
  const std::string text = read(file);
  const std::size_t open = text.find("\"" + key + "\": [");
  const std::size_t close = text.find(']', open);
  EXPECT_NE(open, std::string::npos) << key;
  std::string out;
  for (char c : text.substr(open + key.size() + 5, close - open - key.size() - 5)) {
    if (c == ',')
      out += '/';
    else if (c != ' ' && c != '\n')
      out += c;
  }
  return out;
}

// "0-4,6,8-9" as the layer indices it names, written by hand in the expectations below.
std::vector<std::int64_t> layers(const std::string& ranges) {
  std::vector<std::int64_t> out;
  std::stringstream in(ranges);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::size_t dash = item.find('-');
    const std::int64_t first = std::stoll(item.substr(0, dash));
    const std::int64_t last = dash == std::string::npos ? first : std::stoll(item.substr(dash + 1));
    for (std::int64_t i = first; i <= last; ++i) out.push_back(i);
  }
  return out;
}

struct Expected {
  std::string kind;    // all|global|local|nope
  std::string spec;    // canonical text, by hand; "" for nope
  std::string layers;  // ranges, by hand; "" when the config does not give num_hidden_layers
};

struct Example {
  std::optional<std::int64_t> seq_len;
  std::vector<Expected> rotations;
  std::vector<std::string> notes = {};  // a part of each note, in order
};

Example one(std::optional<std::int64_t> seq_len, const std::string& spec, const std::string& layer_ranges = "") {
  return {seq_len, {{"all", spec, layer_ranges}}};
}

// One entry per file in hfconfig/examples/ (the test below fails when a file has none).
const std::map<std::string, Example>& examples() {
  static const std::map<std::string, Example> table = {
      // llama3: factor 8, low 1, high 4, L0 8192, theta 500000, 4096/32 = 128, bfloat16.
      {"llama-3.1-8b.json", one(std::nullopt,
                                "layout=half,head_dim=128,rotary_dim=128,base=500000,dtype=bf16,direction=forward,scaling=llama3,factor=8,"
                                "original_max_position=8192,low_freq_factor=1,high_freq_factor=4")},
      {"llama-2-7b.json", one(std::nullopt, "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=f16,direction=forward,scaling=none")},
      // 3584/28 = 128; yarn x4 over L0 32768, HF's beta defaults 32/1, truncation on.
      {"qwen2.5-7b-yarn4.json",
       one(std::nullopt,
           "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,scaling=yarn,factor=4,"
           "original_max_position=32768,beta_fast=32,beta_slow=1,truncate=true")},
      {"mistral-7b-v0.3.json",
       one(std::nullopt, "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,scaling=none")},
      // 3072/32 = 96: 48 factors; f = 131072/4096 = 32 (HF's derivation); 8192 > 4096 picks long.
      {"phi3-style-longrope-synthetic.json",
       one(8192, "layout=half,head_dim=96,rotary_dim=96,base=10000,dtype=bf16,direction=forward,scaling=longrope,short_factor=" +
                     repeat("1", 48) + ",long_factor=" + repeat("1.5", 24) + "/" + repeat("4", 24) +
                     ",original_max_position=4096,seq_len=8192,factor=32")},
      // type su = longrope; f = 131072/4096 = 32; 131072 tokens > 4096: the long factors.
      {"phi-3-vision-128k-instruct.json",
       one(131072, "layout=half,head_dim=96,rotary_dim=96,base=10000,dtype=bf16,direction=forward,scaling=longrope,short_factor=" +
                       list_as_written("phi-3-vision-128k-instruct.json", "short_factor") +
                       ",long_factor=" + list_as_written("phi-3-vision-128k-instruct.json", "long_factor") +
                       ",original_max_position=4096,seq_len=131072,factor=32")},
      {"qwen2-vl-7b.json", one(std::nullopt,
                               "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,scaling=none,axes=mrope,"
                               "sections=16/24/24")},
      {"qwen3-vl-style.json",
       one(std::nullopt,
           "layout=half,head_dim=128,rotary_dim=128,base=5000000,dtype=bf16,direction=forward,scaling=none,axes=imrope,"
           "sections=24/20/20")},
      // 4096/16 = 256 dims, 64 rotated in (2i, 2i+1) pairs; f16 activations times f32 sin/cos: f32 out.
      {"gpt-j-6b-float16.json",
       one(std::nullopt,
           "layout=interleaved,head_dim=256,rotary_dim=64,base=10000,dtype=f32,input_dtype=f16,direction=forward,scaling=none", "0-27")},
      // 4096/32 = 128, int(128 * 0.25) = 32.
      {"pythia-6.9b.json", one(std::nullopt, "layout=half,head_dim=128,rotary_dim=32,base=10000,dtype=f16,direction=forward,scaling=none")},
      {"deepseek-style-yarn-mscale.json",
       one(std::nullopt,
           "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=bf16,direction=forward,scaling=yarn,factor=40,"
           "original_max_position=4096,beta_fast=32,beta_slow=1,truncate=true,mscale=0.707,mscale_all_dim=0.707")},
      // HF's Lmax is max_position_embeddings.
      {"dynamic-ntk-style.json",
       one(8192,
           "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=f16,direction=forward,scaling=dynamic,factor=2,"
           "original_max_position=4096,seq_len=8192")},
      {"vicuna-7b-v1.5-16k.json",
       one(std::nullopt, "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=f16,direction=forward,scaling=linear,factor=4")},
      // Every fourth layer NoPE (empty no_rope_layers: the interval 4); interleaved pairs, llama3
      // with equal factors.
      {"llama-4-scout-17b-16e-instruct.json",
       {std::nullopt,
        {{"all",
          "layout=interleaved,head_dim=128,rotary_dim=128,base=500000,dtype=bf16,direction=forward,scaling=llama3,factor=16,"
          "original_max_position=8192,low_freq_factor=1,high_freq_factor=1",
          "0-2,4-6,8-10,12-14,16-18,20-22,24-26,28-30,32-34,36-38,40-42,44-46"},
         {"nope", "", "3,7,11,15,19,23,27,31,35,39,43,47"}},
        {"attn_temperature_tuning", "use_qk_norm"}}},
      // Sliding layers (three in four) rotate in even/odd pairs; the global ones have no RoPE.
      {"command-r7b-12-2024.json",
       {std::nullopt,
        {{"local", "layout=interleaved,head_dim=128,rotary_dim=128,base=50000,dtype=bf16,direction=forward,scaling=none",
          "0-2,4-6,8-10,12-14,16-18,20-22,24-26,28-30"},
         {"nope", "", "3,7,11,15,19,23,27,31"}}}},
      // int(128 * 0.5) = 64 dims in even/odd pairs.
      {"glm-4-9b-chat-hf.json",
       one(std::nullopt, "layout=interleaved,head_dim=128,rotary_dim=64,base=10000,dtype=bf16,direction=forward,scaling=none", "0-39")},
      {"ernie-4.5-0.3b-pt.json",
       one(std::nullopt, "layout=interleaved,head_dim=128,rotary_dim=128,base=500000,dtype=bf16,direction=forward,scaling=none", "0-17")},
      // The 64-dim decoupled head; YaRN as DeepSeek's code computes it.
      {"deepseek-v3.json",
       {std::nullopt,
        {{"all",
          "layout=interleaved,head_dim=64,rotary_dim=64,base=10000,dtype=bf16,direction=forward,scaling=yarn,factor=40,"
          "original_max_position=4096,beta_fast=32,beta_slow=1,truncate=true,mscale=1,mscale_all_dim=1",
          "0-60"}},
        {"MLA: the rotation covers the 64 decoupled RoPE dims", "pairs (2i, 2i+1) rotate", "softmax scale"}}},
      {"kimi-k2-instruct.json",
       {std::nullopt,
        {{"all",
          "layout=interleaved,head_dim=64,rotary_dim=64,base=50000,dtype=bf16,direction=forward,scaling=yarn,factor=32,"
          "original_max_position=4096,beta_fast=1,beta_slow=1,truncate=true,mscale=1,mscale_all_dim=1",
          "0-60"}},
        {"MLA: the rotation covers the 64 decoupled RoPE dims", "pairs (2i, 2i+1) rotate", "softmax scale"}}},
      // No torch_dtype: bf16 assumed, and said.
      {"gpt-oss-20b.json",
       {std::nullopt,
        {{"all",
          "layout=half,head_dim=64,rotary_dim=64,base=150000,dtype=bf16,direction=forward,scaling=yarn,factor=32,"
          "original_max_position=4096,beta_fast=32,beta_slow=1,truncate=false",
          "0-23"}},
        {"no torch_dtype: assumed bfloat16"}}},
      // head_dim 128 given (5120 / 32 would be 160).
      {"mistral-nemo-instruct-2407.json",
       one(std::nullopt, "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,scaling=none", "0-39")},
      // Gemma3TextConfig defaults: rope_local_base_freq 10000 for the sliding layers (default rope),
      // rope_theta 1e6 with the linear x8 for the full ones; every 6th layer full (5, 11, ..., 59).
      {"gemma-3-27b-it.json",
       {std::nullopt,
        {{"local", "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=bf16,direction=forward,scaling=none",
          "0-4,6-10,12-16,18-22,24-28,30-34,36-40,42-46,48-52,54-58,60-61"},
         {"global", "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,scaling=linear,factor=8",
          "5,11,17,23,29,35,41,47,53,59"}},
        {"rope_local_base_freq: 10000", "rope_theta: 1000000"}}},
      // 2048/16 = 128; no_rope_layers: 0 at every fourth layer.
      {"smollm3-3b.json",
       {std::nullopt,
        {{"all", "layout=half,head_dim=128,rotary_dim=128,base=5000000,dtype=bf16,direction=forward,scaling=none",
          "0-2,4-6,8-10,12-14,16-18,20-22,24-26,28-30,32-34"},
         {"nope", "", "3,7,11,15,19,23,27,31,35"}}}},
  };
  return table;
}

TEST(HfConfig, EveryExampleConfigHasItsHandWrittenRotations) {
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(ROPECHECK_HFCONFIG_EXAMPLES)) {
    files.insert(entry.path().filename().string());
  }
  for (const auto& name : files) EXPECT_TRUE(examples().count(name)) << name << ": no expected rotations in this test";
  for (const auto& [name, example] : examples()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(files.count(name));
    const hfconfig::ModelRotations model = hfconfig::rotations_from_hf_config(read(name), example.seq_len, name);
    EXPECT_NE(model.source.find("modeling_"), std::string::npos) << model.source;
    ASSERT_EQ(model.rotations.size(), example.rotations.size());
    for (std::size_t i = 0; i < example.rotations.size(); ++i) {
      const Expected& want = example.rotations[i];
      const hfconfig::LayerRotation& got = model.rotations[i];
      EXPECT_EQ(hfconfig::layer_kind_name(got.kind), want.kind);
      EXPECT_EQ(got.layers, layers(want.layers));
      if (want.spec.empty()) {
        EXPECT_FALSE(got.spec.has_value());
        continue;
      }
      ASSERT_TRUE(got.spec.has_value());
      EXPECT_EQ(to_string(*got.spec), want.spec);
      EXPECT_EQ(*got.spec, parse_spec(want.spec));
    }
    ASSERT_EQ(model.notes.size(), example.notes.size()) << (model.notes.empty() ? "" : model.notes[0]);
    for (std::size_t i = 0; i < example.notes.size(); ++i) {
      EXPECT_NE(model.notes[i].find(example.notes[i]), std::string::npos) << model.notes[i];
    }
    // The one rotation, where there is one, is what spec_from_hf_config gives without a selector.
    std::size_t rotating = 0;
    for (const Expected& e : example.rotations) rotating += e.spec.empty() ? 0 : 1;
    if (rotating == 1) {
      for (const Expected& e : example.rotations) {
        if (!e.spec.empty()) {
          EXPECT_EQ(to_string(hfconfig::spec_from_hf_config(read(name), example.seq_len, name)), e.spec);
        }
      }
    }
  }
}

TEST(HfConfig, LongRopeSequenceLengthPicksTheFactorsAndIsRequired) {
  const std::string text = read("phi3-style-longrope-synthetic.json");
  const Spec short_spec = hfconfig::spec_from_hf_config(text, 4096, "phi3.json");
  EXPECT_EQ(short_spec.scaling.seq_len, 4096);
  try {
    (void)hfconfig::spec_from_hf_config(text, std::nullopt, "phi3.json");
    FAIL() << "longrope without a sequence length was accepted";
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("phi3.json: field 'rope_scaling.type'"), std::string::npos) << m;
    EXPECT_NE(m.find("--seq-len"), std::string::npos) << m;
  }
}

void expect_refusal(const std::string& json, const std::string& field, const std::string& got) {
  try {
    (void)hfconfig::spec_from_hf_config(json, std::nullopt, "cfg.json");
    FAIL() << "accepted " << json;
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.rfind("cfg.json: ", 0), 0u) << m;
    EXPECT_NE(m.find("'" + field + "'"), std::string::npos) << m;
    EXPECT_NE(m.find(got), std::string::npos) << m;
  }
}

const char* kShape = R"("hidden_size":4096,"num_attention_heads":32,"max_position_embeddings":4096,"torch_dtype":"float16")";

TEST(HfConfig, RefusesWhatItDoesNotModelByName) {
  const std::string shape = kShape;
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"rope_scaling":{"rope_type":"fancy","factor":2}})", "rope_scaling.rope_type",
                 "'fancy'");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"rope_scaling":{"rope_type":"linear","factor":2,"short_mscale":1.2}})",
                 "rope_scaling.short_mscale", "1.2");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"rope_scaling":{"type":"dynamic","factor":2}})", "rope_scaling.type", "--seq-len");
  expect_refusal("{" + shape + "}", "rope_theta", "nothing");
  expect_refusal("{" + shape + R"(,"rope_theta":"10000"})", "rope_theta", "\"10000\"");
  expect_refusal(R"({"hidden_size":4096,"num_attention_heads":32,"rope_theta":1e4,"torch_dtype":"int8"})", "torch_dtype", "int8");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"partial_rotary_factor":0.2})", "partial_rotary_factor", "rotary dim 25");
  // A model type not in the table: refused by name, never read as some other model's rotation.
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"model_type":"qwen3_next"})", "model_type", "'qwen3_next'");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"model_type":"qwen3_next"})", "model_type", "hfconfig/README.md's table");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"model_type":["llama"]})", "model_type", "a string");
  expect_refusal("{" + shape + R"(,"rope_parameters":{"full_attention":{"rope_theta":1e4}}})", "rope_parameters.full_attention",
                 "an object");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"rope_scaling":{"type":"mrope","mrope_section":[16,24,16]}})", "sections", "56");
}

TEST(HfConfig, MalformedFilesAreOneLineNamingTheFile) {
  expect_refusal(R"({"hidden_size":4096,"num_attention_heads":32,"rope_theta":1e4,"torch_dtype":"float16","rope_theta":5})", "rope_theta",
                 "duplicate");
  try {
    (void)hfconfig::spec_from_hf_config("{\"hidden_size\": 40", std::nullopt, "broken.json");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("broken.json: expected a JSON object", 0), 0u) << e.what();
  }
  try {
    (void)hfconfig::spec_from_hf_config("[1,2]", std::nullopt, "array.json");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("array.json: expected a JSON object", 0), 0u) << e.what();
  }
  expect_refusal(R"({"num_attention_heads":32,"rope_theta":1e4,"torch_dtype":"float16"})", "hidden_size", "nothing");
}

TEST(HfConfig, NewerRopeParametersAndTypeAliases) {
  // transformers 5: rope_theta inside rope_parameters; a config may carry both names of the type.
  const std::string shape = kShape;
  const Spec spec = hfconfig::spec_from_hf_config(
      "{" + shape +
          R"(,"rope_parameters":{"rope_theta":1000000.0,"rope_type":"yarn","type":"yarn","factor":2.5,"truncate":false,"attention_factor":1.25}})",
      std::nullopt, "new.json");
  EXPECT_EQ(to_string(spec),
            "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=f16,direction=forward,scaling=yarn,factor=2.5,"
            "original_max_position=4096,beta_fast=32,beta_slow=1,truncate=false,attention_factor=1.25");
  expect_refusal("{" + shape + R"(,"rope_theta":1,"rope_scaling":{"rope_type":"yarn","type":"linear","factor":2}})", "rope_scaling.type",
                 "\"linear\"");
  expect_refusal(
      "{" + shape + R"(,"rope_theta":1e4,"rope_scaling":{"rope_type":"linear","factor":2},"rope_parameters":{"rope_type":"default"}})",
      "rope_scaling", "both");
}

// The message of the SpecError `call` throws ("" when it throws none).
template <class F>
std::string refusal(F call) {
  try {
    call();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(HfConfig, SelectorPicksOneRotationOfGemma3) {
  const std::string text = read("gemma-3-27b-it.json");
  const std::string local = "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=bf16,direction=forward,scaling=none";
  const std::string global = "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,scaling=linear,factor=8";
  auto pick = [&](hfconfig::LayerSelector selector) {
    return to_string(hfconfig::spec_from_hf_config(text, std::nullopt, "g.json", selector));
  };
  EXPECT_EQ(pick({0, std::nullopt}), local);
  EXPECT_EQ(pick({5, std::nullopt}), global);
  EXPECT_EQ(pick({6, std::nullopt}), local);
  EXPECT_EQ(pick({61, std::nullopt}), local);
  EXPECT_EQ(pick({std::nullopt, hfconfig::LayerKind::kLocal}), local);
  EXPECT_EQ(pick({std::nullopt, hfconfig::LayerKind::kGlobal}), global);

  const std::string none = refusal([&] { (void)pick({}); });
  EXPECT_EQ(none.rfind("g.json: field 'text_config.sliding_window_pattern': expected --layer N or --layer local|global", 0), 0u) << none;
  EXPECT_NE(none.find("layers rotate differently"), std::string::npos) << none;
  EXPECT_NE(none.find("global 5,11,17"), std::string::npos) << none;
  const std::string past = refusal([&] { (void)pick({62, std::nullopt}); });
  EXPECT_EQ(past, "g.json: field 'num_hidden_layers': expected --layer N in 0-61, got --layer 62");
  EXPECT_NE(refusal([&] { (void)pick({-1, std::nullopt}); }).find("got --layer -1"), std::string::npos);
  const std::string kind = refusal([&] { (void)pick({std::nullopt, hfconfig::LayerKind::kNoRope}); });
  EXPECT_NE(kind.find("expected --layer local|global"), std::string::npos) << kind;
  EXPECT_NE(kind.find("got --layer nope"), std::string::npos) << kind;
  EXPECT_NE(refusal([&] { (void)pick({std::nullopt, hfconfig::LayerKind::kAll}); }).find("got --layer all"), std::string::npos);
}

TEST(HfConfig, SelectorRefusesNoRopeLayersOfSmolLM3) {
  const std::string text = read("smollm3-3b.json");
  auto pick = [&](hfconfig::LayerSelector selector) { return hfconfig::spec_from_hf_config(text, std::nullopt, "s.json", selector); };
  // One rotation beside the NoPE layers: no selector needed.
  EXPECT_EQ(pick({}), pick({2, std::nullopt}));
  EXPECT_EQ(pick({}), pick({std::nullopt, hfconfig::LayerKind::kAll}));
  const std::string nope = refusal([&] { (void)pick({3, std::nullopt}); });
  EXPECT_EQ(nope.rfind("s.json: field 'no_rope_layers': expected --layer N of a layer that rotates", 0), 0u) << nope;
  EXPECT_NE(nope.find("got --layer 3, a layer without RoPE"), std::string::npos) << nope;
  EXPECT_NE(refusal([&] { (void)pick({std::nullopt, hfconfig::LayerKind::kNoRope}); }).find("got --layer nope"), std::string::npos);
  EXPECT_NE(refusal([&] { (void)pick({std::nullopt, hfconfig::LayerKind::kLocal}); }).find("got --layer local"), std::string::npos);
}

TEST(HfConfig, SelectorOnModelsWithOneRotation) {
  // Command-R7B: the sliding layers' rotation is the only one, so no selector is needed.
  const std::string cohere = read("command-r7b-12-2024.json");
  const Spec local = hfconfig::spec_from_hf_config(cohere, std::nullopt, "c.json");
  EXPECT_EQ(local, hfconfig::spec_from_hf_config(cohere, std::nullopt, "c.json", {std::nullopt, hfconfig::LayerKind::kLocal}));
  EXPECT_EQ(local, hfconfig::spec_from_hf_config(cohere, std::nullopt, "c.json", {30, std::nullopt}));
  const std::string global = refusal([&] { (void)hfconfig::spec_from_hf_config(cohere, std::nullopt, "c.json", {31, std::nullopt}); });
  EXPECT_EQ(global.rfind("c.json: field 'sliding_window_pattern': expected --layer N of a layer that rotates", 0), 0u) << global;
  // A uniform model: any layer in range, kind all; not a kind it does not have.
  const std::string glm = read("glm-4-9b-chat-hf.json");
  const Spec all = hfconfig::spec_from_hf_config(glm, std::nullopt, "glm.json");
  EXPECT_EQ(all, hfconfig::spec_from_hf_config(glm, std::nullopt, "glm.json", {39, std::nullopt}));
  EXPECT_EQ(all, hfconfig::spec_from_hf_config(glm, std::nullopt, "glm.json", {std::nullopt, hfconfig::LayerKind::kAll}));
  EXPECT_EQ(refusal([&] {
              (void)hfconfig::spec_from_hf_config(glm, std::nullopt, "glm.json", {40, std::nullopt});
            }),
            "glm.json: field 'num_hidden_layers': expected --layer N in 0-39, got --layer 40");
  const std::string kind = refusal([&] {
    (void)hfconfig::spec_from_hf_config(glm, std::nullopt, "glm.json", {std::nullopt, hfconfig::LayerKind::kGlobal});
  });
  EXPECT_EQ(kind, "glm.json: field 'model_type': expected --layer all or --layer N (all 0-39), got --layer global");
  // Without num_hidden_layers the layers are unknown: every index reads the one rotation.
  const std::string shape = kShape;
  const std::string bare = "{" + shape + R"(,"model_type":"llama","rope_theta":10000})";
  const hfconfig::ModelRotations model = hfconfig::rotations_from_hf_config(bare, std::nullopt, "b.json");
  ASSERT_EQ(model.rotations.size(), 1u);
  EXPECT_TRUE(model.rotations[0].layers.empty());
  EXPECT_EQ(model.num_layers, 0);
  EXPECT_EQ(hfconfig::spec_from_hf_config(bare, std::nullopt, "b.json", {1000, std::nullopt}).head_dim, 128);
}

TEST(HfConfig, NoRopeEverywhereHasNoRotationToJudge) {
  const std::string shape = kShape;
  const std::string text = "{" + shape + R"(,"model_type":"smollm3","rope_theta":1e4,"num_hidden_layers":2,"no_rope_layers":[0,0]})";
  const hfconfig::ModelRotations model = hfconfig::rotations_from_hf_config(text, std::nullopt, "n.json");
  ASSERT_EQ(model.rotations.size(), 1u);
  EXPECT_EQ(model.rotations[0].kind, hfconfig::LayerKind::kNoRope);
  const std::string m = refusal([&] { (void)hfconfig::spec_from_hf_config(text, std::nullopt, "n.json"); });
  EXPECT_EQ(m, "n.json: field 'no_rope_layers': expected a layer that rotates (nope 0-1), got every layer without RoPE");
}

TEST(HfConfig, LayerPatternsAsTheConfigClassesDeriveThem) {
  const std::string shape = kShape;
  auto kinds = [&](const std::string& fields) {
    const hfconfig::ModelRotations model = hfconfig::rotations_from_hf_config("{" + shape + "," + fields + "}", std::nullopt, "p.json");
    std::string out;
    for (const auto& g : model.rotations)
      out += std::string(hfconfig::layer_kind_name(g.kind)) + ":" + hfconfig::layer_ranges(g.layers) + " ";
    return out;
  };
  // Gemma-3: layer_types wins over sliding_window_pattern; the pattern's default is 6.
  EXPECT_EQ(kinds(R"("model_type":"gemma3_text","num_hidden_layers":7,"rope_scaling":{"rope_type":"linear","factor":8})"),
            "local:0-4,6 global:5 ");
  EXPECT_EQ(
      kinds(
          R"("model_type":"gemma3_text","num_hidden_layers":4,"sliding_window_pattern":2,"rope_scaling":{"rope_type":"linear","factor":8})"),
      "local:0,2 global:1,3 ");
  EXPECT_EQ(
      kinds(R"("model_type":"gemma3_text","num_hidden_layers":3,"sliding_window_pattern":2,)"
            R"("layer_types":["full_attention","sliding_attention","sliding_attention"],"rope_scaling":{"rope_type":"linear","factor":8})"),
      "global:0 local:1-2 ");
  // Local and global layers that rotate alike are one rotation.
  EXPECT_EQ(kinds(R"("model_type":"gemma3_text","num_hidden_layers":7,"rope_theta":10000)"), "all:0-6 ");
  // SmolLM3: the interval when no_rope_layers is absent; Llama-4: also when it is empty.
  EXPECT_EQ(kinds(R"("model_type":"smollm3","num_hidden_layers":6,"no_rope_layer_interval":3)"), "all:0-1,3-4 nope:2,5 ");
  EXPECT_EQ(kinds(R"("model_type":"llama4_text","num_hidden_layers":5,"no_rope_layers":[])"), "all:0-2,4 nope:3 ");
  EXPECT_EQ(kinds(R"("model_type":"llama4_text","num_hidden_layers":3,"no_rope_layers":[0,1,1])"), "nope:0 all:1-2 ");
  // Cohere2: the default pattern 4.
  EXPECT_EQ(kinds(R"("model_type":"cohere2","num_hidden_layers":5,"rope_theta":50000)"), "local:0-2,4 nope:3 ");
  // gpt-oss alternates sliding and full layers with one rotation.
  EXPECT_EQ(kinds(R"("model_type":"gpt_oss","num_hidden_layers":4,"layer_types":["sliding_attention","full_attention"])"), "all:0-3 ");
}

TEST(HfConfig, Gemma3PerLayerTypeRopeParameters) {
  // transformers 5 keys Gemma-3's rope parameters by layer type.
  const std::string shape = kShape;
  const std::string text = "{" + shape +
                           R"(,"model_type":"gemma3_text","head_dim":128,"num_hidden_layers":6,"rope_parameters":{)"
                           R"("sliding_attention":{"rope_type":"default","rope_theta":10000},)"
                           R"("full_attention":{"rope_type":"linear","factor":8,"rope_theta":1000000}}})";
  const hfconfig::ModelRotations model = hfconfig::rotations_from_hf_config(text, std::nullopt, "g.json");
  ASSERT_EQ(model.rotations.size(), 2u);
  EXPECT_EQ(to_string(*model.rotations[0].spec),
            "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=f16,direction=forward,scaling=none");
  EXPECT_EQ(to_string(*model.rotations[1].spec),
            "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=f16,direction=forward,scaling=linear,factor=8");
  EXPECT_TRUE(model.notes.empty()) << model.notes[0];
  // A layer type without its object: transformers' default rope at the config class's base.
  const hfconfig::ModelRotations sliding_only = hfconfig::rotations_from_hf_config(
      "{" + shape +
          R"(,"model_type":"gemma3_text","head_dim":128,"num_hidden_layers":6,"rope_parameters":{"sliding_attention":{"rope_theta":500}}})",
      std::nullopt, "g.json");
  ASSERT_EQ(sliding_only.rotations.size(), 2u);
  EXPECT_EQ(sliding_only.rotations[0].spec->base, "500");
  EXPECT_EQ(to_string(*sliding_only.rotations[1].spec),
            "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=f16,direction=forward,scaling=none");
  expect_refusal(
      "{" + shape + R"(,"model_type":"gemma3_text","num_hidden_layers":6,"rope_parameters":{"chunked_attention":{"rope_theta":1}}})",
      "rope_parameters.chunked_attention", "sliding_attention|full_attention");
  expect_refusal(
      "{" + shape + R"(,"model_type":"gemma3_text","num_hidden_layers":6,"rope_parameters":{"full_attention":{"rope_theta":1,"foo":2}}})",
      "rope_parameters.full_attention.foo", "2");
}

TEST(HfConfig, DefaultsOfTheConfigClassAreSaid) {
  const std::string base = R"("hidden_size":4096,"num_attention_heads":32,"torch_dtype":"bfloat16")";
  // Gemma-3 without head_dim: Gemma3TextConfig's 256, not 4096 / 32.
  const hfconfig::ModelRotations gemma =
      hfconfig::rotations_from_hf_config("{" + base + R"(,"model_type":"gemma3_text","num_hidden_layers":6})", std::nullopt, "g.json");
  EXPECT_EQ(gemma.source.rfind("gemma3/modeling_gemma3.py", 0), 0u) << gemma.source;
  EXPECT_EQ(gemma.rotations[0].spec->head_dim, 256);
  ASSERT_EQ(gemma.notes.size(), 3u);
  EXPECT_EQ(gemma.notes[0], "no head_dim: 256, the gemma3_text config class's default");
  // gpt-oss without rope_scaling: GptOssConfig's yarn object.
  const hfconfig::ModelRotations oss =
      hfconfig::rotations_from_hf_config("{" + base + R"(,"model_type":"gpt_oss"})", std::nullopt, "o.json");
  EXPECT_EQ(to_string(*oss.rotations[0].spec),
            "layout=half,head_dim=64,rotary_dim=64,base=150000,dtype=bf16,direction=forward,scaling=yarn,factor=32,"
            "original_max_position=4096,beta_fast=32,beta_slow=1,truncate=false");
  ASSERT_EQ(oss.notes.size(), 3u);
  EXPECT_NE(oss.notes[0].find("no rope_scaling: "), std::string::npos) << oss.notes[0];
  // GLM without partial_rotary_factor: 0.5.
  const hfconfig::ModelRotations glm =
      hfconfig::rotations_from_hf_config("{" + base + R"(,"model_type":"glm","rope_theta":1e4})", std::nullopt, "glm.json");
  EXPECT_EQ(glm.rotations[0].spec->rotary_dim, 64);
  ASSERT_EQ(glm.notes.size(), 2u);
  EXPECT_EQ(glm.notes[1], "no partial_rotary_factor: 0.5, the glm config class's default");
  // DeepSeek-V3 with rope_interleave false: plain rotate_half.
  const Spec halves = hfconfig::spec_from_hf_config(
      "{" + base + R"(,"model_type":"deepseek_v3","rope_interleave":false,"qk_rope_head_dim":32})", std::nullopt, "d.json");
  EXPECT_EQ(to_string(halves), "layout=half,head_dim=32,rotary_dim=32,base=10000,dtype=bf16,direction=forward,scaling=none");
  // No model_type: the Llama-style rule, said; rope_theta required.
  const hfconfig::ModelRotations generic = hfconfig::rotations_from_hf_config("{" + base + R"(,"rope_theta":1e4})", std::nullopt, "x.json");
  EXPECT_EQ(generic.model_type, "");
  ASSERT_EQ(generic.notes.size(), 1u);
  EXPECT_NE(generic.notes[0].find("no model_type: read as a Llama-style model"), std::string::npos);
  expect_refusal("{" + base + "}", "rope_theta", "nothing");
}

TEST(HfConfig, RefusesModelFieldsItCannotReadByName) {
  const std::string shape = kShape;
  // Llama-4's code computes any rope_scaling as llama3.
  expect_refusal("{" + shape + R"(,"model_type":"llama4_text","num_hidden_layers":4,"rope_scaling":{"rope_type":"linear","factor":2}})",
                 "rope_scaling.rope_type", "'linear'");
  // MLA's YaRN needs both mscales: DeepSeek's code and transformers' differ when one is missing.
  expect_refusal(
      "{" + shape +
          R"(,"model_type":"deepseek_v3","rope_scaling":{"type":"yarn","factor":40,"original_max_position_embeddings":4096,"mscale":1}})",
      "rope_scaling.mscale_all_dim", "nothing");
  expect_refusal(
      "{" + shape + R"(,"model_type":"kimi_k2","rope_scaling":{"type":"yarn","factor":32,"original_max_position_embeddings":4096}})",
      "rope_scaling.mscale", "nothing");
  // Cohere2's first-release keys must say what transformers hard-codes.
  expect_refusal("{" + shape + R"(,"model_type":"cohere2","num_hidden_layers":4,"position_embedding_type":"rope"})",
                 "position_embedding_type", "\"rope\"");
  expect_refusal("{" + shape + R"(,"model_type":"cohere2","num_hidden_layers":4,"order_of_interleaved_layers":"global_attn_first"})",
                 "order_of_interleaved_layers", "global_attn_first");
  expect_refusal("{" + shape + R"(,"model_type":"cohere2","num_hidden_layers":4,"rotary_pct":0.5})", "rotary_pct", "0.5");
  // Layer patterns: required length, values, the layer count.
  expect_refusal("{" + shape + R"(,"model_type":"smollm3","num_hidden_layers":4,"no_rope_layers":[1,1,0]})", "no_rope_layers",
                 "an array of 4 values 0|1");
  expect_refusal("{" + shape + R"(,"model_type":"smollm3","num_hidden_layers":2,"no_rope_layers":[]})", "no_rope_layers", "[]");
  expect_refusal("{" + shape + R"(,"model_type":"smollm3","num_hidden_layers":2,"no_rope_layers":[1,2]})", "no_rope_layers",
                 "2 at layer 1");
  expect_refusal("{" + shape + R"(,"model_type":"smollm3","num_hidden_layers":2,"no_rope_layers":[true,1]})", "no_rope_layers",
                 "true at layer 0");
  expect_refusal("{" + shape + R"(,"model_type":"smollm3"})", "num_hidden_layers", "nothing");
  expect_refusal("{" + shape + R"(,"model_type":"smollm3","num_hidden_layers":4,"no_rope_layer_interval":0})", "no_rope_layer_interval",
                 "0");
  expect_refusal(
      "{" + shape + R"(,"model_type":"gemma3_text","num_hidden_layers":2,"layer_types":["sliding_attention","chunked_attention"]})",
      "layer_types", "\"chunked_attention\" at layer 1");
  expect_refusal("{" + shape + R"(,"model_type":"gemma3_text","num_hidden_layers":3,"layer_types":["sliding_attention"]})", "layer_types",
                 "an array of 3 layer types");
  expect_refusal("{" + shape + R"(,"model_type":"gemma3_text","num_hidden_layers":6,"sliding_window_pattern":0})", "sliding_window_pattern",
                 "0");
  expect_refusal("{" + shape + R"(,"model_type":"gemma3_text","num_hidden_layers":0})", "num_hidden_layers", "0");
  // A nested text_config's fields are named with their path.
  expect_refusal(
      R"({"model_type":"gemma3","text_config":{"model_type":"gemma3_text","num_hidden_layers":2,"sliding_window_pattern":"6"},"torch_dtype":"bfloat16"})",
      "text_config.sliding_window_pattern", "\"6\"");
}

TEST(HfConfig, QwenVlSectionsAsTheirCodeUsesThem) {
  const std::string base = R"("hidden_size":4096,"num_attention_heads":32,"torch_dtype":"bfloat16","rope_theta":1e6)";
  // Qwen3-VL interleaves always, [24, 20, 20] when the config gives no sections.
  const hfconfig::ModelRotations qwen3 =
      hfconfig::rotations_from_hf_config("{" + base + R"(,"model_type":"qwen3_vl_text","head_dim":128})", std::nullopt, "q.json");
  EXPECT_EQ(to_string(*qwen3.rotations[0].spec),
            "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,scaling=none,axes=imrope,sections=24/20/20");
  ASSERT_EQ(qwen3.notes.size(), 1u);
  EXPECT_EQ(qwen3.notes[0], "no mrope_section: [24, 20, 20], the default of qwen3_vl_text's rotary embedding");
  const Spec listed = hfconfig::spec_from_hf_config(
      "{" + base + R"(,"model_type":"qwen3_vl_text","head_dim":128,"rope_scaling":{"rope_type":"default","mrope_section":[16,24,24]}})",
      std::nullopt, "q.json");
  EXPECT_EQ(listed.axes.kind, AxesKind::imrope);
  expect_refusal("{" + base + R"(,"model_type":"qwen3_vl_text","rope_scaling":{"mrope_section":[24,20,20],"mrope_interleaved":false}})",
                 "rope_scaling.mrope_interleaved", "false");
  // Qwen2-VL splits the sections, whatever mrope_interleaved says.
  expect_refusal(
      "{" + base + R"(,"model_type":"qwen2_vl","rope_scaling":{"type":"mrope","mrope_section":[16,24,24],"mrope_interleaved":true}})",
      "rope_scaling.mrope_interleaved", "true");
}

TEST(HfConfig, Llama3ScalingAcceptsEqualFactors) {
  // Meta's apply_scaling and HF's _compute_llama3_parameters: no band between the factors.
  const Spec spec = parse_spec(
      "layout=interleaved,head_dim=128,base=500000,dtype=bf16,scaling=llama3,factor=16,"
      "original_max_position=8192,low_freq_factor=1,high_freq_factor=1");
  EXPECT_EQ(spec.scaling.low_freq_factor, spec.scaling.high_freq_factor);
  EXPECT_NE(refusal([] {
              (void)parse_spec(
                  "head_dim=64,scaling=llama3,factor=8,original_max_position=8192,low_freq_factor=2,"
                  "high_freq_factor=1");
            }).find("high_freq_factor"),
            std::string::npos);
}

TEST(HfConfig, LayerRangesPrintRuns) {
  EXPECT_EQ(hfconfig::layer_ranges({}), "");
  EXPECT_EQ(hfconfig::layer_ranges({3}), "3");
  EXPECT_EQ(hfconfig::layer_ranges({0, 1, 2, 4, 6, 7}), "0-2,4,6-7");
}

}  // namespace
}  // namespace ropecheck
