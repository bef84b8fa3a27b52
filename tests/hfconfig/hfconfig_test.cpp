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
    for (std::size_t i = 0; i < example.notes.size(); ++i)
      EXPECT_NE(model.notes[i].find(example.notes[i]), std::string::npos) << model.notes[i];
    // The one rotation, where there is one, is what spec_from_hf_config gives without a selector.
    std::size_t rotating = 0;
    for (const Expected& e : example.rotations) rotating += e.spec.empty() ? 0 : 1;
    if (rotating == 1) {
      for (const Expected& e : example.rotations)
        if (!e.spec.empty()) EXPECT_EQ(to_string(hfconfig::spec_from_hf_config(read(name), example.seq_len, name)), e.spec);
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

TEST(HfConfig, LayerRangesPrintRuns) {
  EXPECT_EQ(hfconfig::layer_ranges({}), "");
  EXPECT_EQ(hfconfig::layer_ranges({3}), "3");
  EXPECT_EQ(hfconfig::layer_ranges({0, 1, 2, 4, 6, 7}), "0-2,4,6-7");
}

}  // namespace
}  // namespace ropecheck
