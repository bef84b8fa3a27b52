// hfconfig: every example config's spec, written by hand from the config's fields and the mapping
// of hfconfig/README.md (never printed by the code under test), and refusals naming file and field.
#include "hfconfig/hfconfig.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

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
    if (c == ',') out += '/';
    else if (c != ' ' && c != '\n') out += c;
  }
  return out;
}

struct Example {
  std::optional<std::int64_t> seq_len;
  std::string spec;  // canonical text, by hand
};

// One entry per file in hfconfig/examples/ (the test below fails when a file has none).
const std::map<std::string, Example>& examples() {
  static const std::map<std::string, Example> table = {
      // llama3: factor 8, low 1, high 4, L0 8192, theta 500000, 4096/32 = 128, bfloat16.
      {"llama-3.1-8b.json",
       {std::nullopt,
        "layout=half,head_dim=128,rotary_dim=128,base=500000,dtype=bf16,direction=forward,scaling=llama3,factor=8,"
        "original_max_position=8192,low_freq_factor=1,high_freq_factor=4"}},
      {"llama-2-7b.json",
       {std::nullopt, "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=f16,direction=forward,scaling=none"}},
      // 3584/28 = 128; yarn x4 over L0 32768, HF's beta defaults 32/1, truncation on.
      {"qwen2.5-7b-yarn4.json",
       {std::nullopt,
        "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,scaling=yarn,factor=4,"
        "original_max_position=32768,beta_fast=32,beta_slow=1,truncate=true"}},
      {"mistral-7b-v0.3.json",
       {std::nullopt, "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,scaling=none"}},
      // 3072/32 = 96: 48 factors; f = 131072/4096 = 32 (HF's derivation); 8192 > 4096 picks long.
      {"phi3-style-longrope-synthetic.json",
       {8192, "layout=half,head_dim=96,rotary_dim=96,base=10000,dtype=bf16,direction=forward,scaling=longrope,short_factor=" +
                  repeat("1", 48) + ",long_factor=" + repeat("1.5", 24) + "/" + repeat("4", 24) +
                  ",original_max_position=4096,seq_len=8192,factor=32"}},
      // type su = longrope; f = 131072/4096 = 32; 131072 tokens > 4096: the long factors.
      {"phi-3-vision-128k-instruct.json",
       {131072, "layout=half,head_dim=96,rotary_dim=96,base=10000,dtype=bf16,direction=forward,scaling=longrope,short_factor=" +
                    list_as_written("phi-3-vision-128k-instruct.json", "short_factor") + ",long_factor=" +
                    list_as_written("phi-3-vision-128k-instruct.json", "long_factor") +
                    ",original_max_position=4096,seq_len=131072,factor=32"}},
      {"qwen2-vl-7b.json",
       {std::nullopt,
        "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,scaling=none,axes=mrope,"
        "sections=16/24/24"}},
      {"qwen3-vl-style.json",
       {std::nullopt,
        "layout=half,head_dim=128,rotary_dim=128,base=5000000,dtype=bf16,direction=forward,scaling=none,axes=imrope,"
        "sections=24/20/20"}},
      // 4096/16 = 256 dims, 64 rotated in (2i, 2i+1) pairs; f16 activations times f32 sin/cos: f32 out.
      {"gpt-j-6b-float16.json",
       {std::nullopt,
        "layout=interleaved,head_dim=256,rotary_dim=64,base=10000,dtype=f32,input_dtype=f16,direction=forward,scaling=none"}},
      // 4096/32 = 128, int(128 * 0.25) = 32.
      {"pythia-6.9b.json",
       {std::nullopt, "layout=half,head_dim=128,rotary_dim=32,base=10000,dtype=f16,direction=forward,scaling=none"}},
      {"deepseek-style-yarn-mscale.json",
       {std::nullopt,
        "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=bf16,direction=forward,scaling=yarn,factor=40,"
        "original_max_position=4096,beta_fast=32,beta_slow=1,truncate=true,mscale=0.707,mscale_all_dim=0.707"}},
      // HF's Lmax is max_position_embeddings.
      {"dynamic-ntk-style.json",
       {8192,
        "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=f16,direction=forward,scaling=dynamic,factor=2,"
        "original_max_position=4096,seq_len=8192"}},
      {"vicuna-7b-v1.5-16k.json",
       {std::nullopt, "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=f16,direction=forward,scaling=linear,factor=4"}},
  };
  return table;
}

TEST(HfConfig, EveryExampleConfigHasItsHandWrittenSpec) {
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(ROPECHECK_HFCONFIG_EXAMPLES)) {
    files.insert(entry.path().filename().string());
  }
  for (const auto& name : files) EXPECT_TRUE(examples().count(name)) << name << ": no expected spec in this test";
  for (const auto& [name, example] : examples()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(files.count(name));
    const Spec spec = hfconfig::spec_from_hf_config(read(name), example.seq_len, name);
    EXPECT_EQ(to_string(spec), example.spec);
    EXPECT_EQ(spec, parse_spec(example.spec));
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
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"rope_scaling":{"rope_type":"fancy","factor":2}})",
                 "rope_scaling.rope_type", "'fancy'");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"rope_scaling":{"rope_type":"linear","factor":2,"short_mscale":1.2}})",
                 "rope_scaling.short_mscale", "1.2");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"rope_scaling":{"type":"dynamic","factor":2}})",
                 "rope_scaling.type", "--seq-len");
  expect_refusal("{" + shape + "}", "rope_theta", "nothing");
  expect_refusal("{" + shape + R"(,"rope_theta":"10000"})", "rope_theta", "\"10000\"");
  expect_refusal(R"({"hidden_size":4096,"num_attention_heads":32,"rope_theta":1e4,"torch_dtype":"int8"})", "torch_dtype", "int8");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"partial_rotary_factor":0.2})", "partial_rotary_factor", "rotary dim 25");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"model_type":"deepseek_v3"})", "model_type", "deepseek_v3");
  expect_refusal("{" + shape + R"(,"rope_parameters":{"full_attention":{"rope_theta":1e4}}})",
                 "rope_parameters.full_attention", "an object");
  expect_refusal("{" + shape + R"(,"rope_theta":10000,"rope_scaling":{"type":"mrope","mrope_section":[16,24,16]}})",
                 "sections", "56");
}

TEST(HfConfig, MalformedFilesAreOneLineNamingTheFile) {
  expect_refusal(R"({"hidden_size":4096,"num_attention_heads":32,"rope_theta":1e4,"torch_dtype":"float16","rope_theta":5})",
                 "rope_theta", "duplicate");
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
      "{" + shape + R"(,"rope_parameters":{"rope_theta":1000000.0,"rope_type":"yarn","type":"yarn","factor":2.5,"truncate":false,"attention_factor":1.25}})",
      std::nullopt, "new.json");
  EXPECT_EQ(to_string(spec),
            "layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=f16,direction=forward,scaling=yarn,factor=2.5,"
            "original_max_position=4096,beta_fast=32,beta_slow=1,truncate=false,attention_factor=1.25");
  expect_refusal("{" + shape + R"(,"rope_theta":1,"rope_scaling":{"rope_type":"yarn","type":"linear","factor":2}})",
                 "rope_scaling.type", "\"linear\"");
  expect_refusal("{" + shape + R"(,"rope_theta":1e4,"rope_scaling":{"rope_type":"linear","factor":2},"rope_parameters":{"rope_type":"default"}})",
                 "rope_scaling", "both");
}

}  // namespace
}  // namespace ropecheck
