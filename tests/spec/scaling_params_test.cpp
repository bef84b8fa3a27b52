// spec/scaling_params.h: spec/README.md's table of scaling parameters is the one these rows
// print, and every row parses, prints and defaults as its scaling types say.
#include "spec/scaling_params.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>

namespace ropecheck {
namespace {

constexpr ScalingType kTypes[] = {ScalingType::none, ScalingType::linear,    ScalingType::ntk,    ScalingType::dynamic,
                                  ScalingType::yarn, ScalingType::yarn_ggml, ScalingType::llama3, ScalingType::longrope};

// The value's type and range (spec/README.md "Ranges").
std::string type_text(const ScalingParam& p) {
  switch (p.range) {
    case ParamRange::positive: return "decimal > 0";
    case ParamRange::non_negative: return "decimal ≥ 0";
    case ParamRange::any_decimal: return "decimal";
    case ParamRange::positive_integer: return "integer ≥ 1";
    case ParamRange::boolean: return "`true`\\|`false`";
    case ParamRange::positive_list: return "`/`-separated decimals > 0";
  }
  return "";
}

// What a scaling type reads when the parameter is absent: its own default, else Scaling{}'s.
std::string default_text(const ParamUse& use) {
  if (!use.type_default.empty()) return std::string(use.type_default);
  const Scaling defaults;
  return std::visit(
      [&](auto member) -> std::string {
        const auto& value = defaults.*member;
        using T = std::remove_cvref_t<decltype(value)>;
        if constexpr (std::is_same_v<T, bool>)
          return value ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::int64_t>)
          return std::to_string(value);
        else if constexpr (std::is_same_v<T, std::string>)
          return value;
        else
          return "";
      },
      use.param->member);
}

// The markdown table spec/README.md holds between its "scaling-params" markers.
std::string markdown_table() {
  std::ostringstream out;
  out << "| key | type | taken by (absent: default; *optional*: unset) | meaning | HF rope key |\n";
  out << "|---|---|---|---|---|\n";
  for (const ScalingParam& p : kScalingParams) {
    std::string taken;
    for (ScalingType t : kTypes) {
      for (const ParamUse& use : scaling_params_of(t)) {
        if (use.param != &p) continue;
        if (!taken.empty()) taken += ", ";
        taken += "`" + std::string(name(t)) + "`";
        if (use.need == ParamNeed::defaulted) taken += " (" + default_text(use) + ")";
        if (use.need == ParamNeed::optional) taken += " *optional*";
      }
    }
    out << "| `" << p.key << "` | " << type_text(p) << " | " << taken << " | " << p.meaning << " | "
        << (p.hf_key.empty() ? std::string("—") : "`" + std::string(p.hf_key) + "`") << " |\n";
  }
  return out.str();
}

TEST(ScalingParams, ReadmeTableIsTheOneTheRowsPrint) {
  std::ifstream in(std::string(ROPECHECK_SOURCE_DIR) + "/spec/README.md");
  ASSERT_TRUE(in) << "spec/README.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const std::string begin = "<!-- scaling-params begin: printed by tests/spec/scaling_params_test.cpp -->\n";
  const std::string end = "<!-- scaling-params end -->";
  const std::size_t from = readme.find(begin);
  const std::size_t to = readme.find(end);
  ASSERT_NE(from, std::string::npos) << "spec/README.md: no '" << begin << "'";
  ASSERT_NE(to, std::string::npos) << "spec/README.md: no '" << end << "'";
  const std::string expected = markdown_table();
  EXPECT_TRUE(readme.substr(from + begin.size(), to - from - begin.size()) == expected)
      << "spec/README.md's table differs from spec/scaling_params.h's rows, which print:\n"
      << expected;
}

TEST(ScalingParams, KeysAreUniqueAndEveryRowIsTakenBySomeType) {
  std::set<std::string_view> keys;
  std::set<const ScalingParam*> taken;
  for (const ScalingParam& p : kScalingParams) EXPECT_TRUE(keys.insert(p.key).second) << p.key;
  for (ScalingType t : kTypes) {
    for (const ParamUse& use : scaling_params_of(t)) {
      EXPECT_EQ(scaling_param(use.param->key), use.param);
      taken.insert(use.param);
    }
  }
  EXPECT_EQ(taken.size(), kScalingParams.size());
  EXPECT_EQ(scaling_param("rope_theta"), nullptr);
}

// A spec of each type with only its required parameters prints every defaulted one with the
// default the table states, and no optional one; the same spec with a required one left out is
// refused naming it.
TEST(ScalingParams, AbsentParametersReadAsTheTableSays) {
  const std::map<ScalingType, std::string> required = {
      {ScalingType::linear, "factor=2"},
      {ScalingType::ntk, "factor=2"},
      {ScalingType::dynamic, "factor=2,original_max_position=4096,seq_len=9000"},
      {ScalingType::yarn, "factor=4,original_max_position=4096"},
      {ScalingType::yarn_ggml, "freq_scale=0.25,original_max_position=4096"},
      {ScalingType::llama3, ""},
      {ScalingType::longrope, "short_factor=1/1,long_factor=2/2,original_max_position=4096,seq_len=10"},
  };
  for (const auto& [type, params] : required) {
    const std::string head = "head_dim=4,scaling=" + std::string(name(type));
    const std::string printed = to_string(parse_spec(head + (params.empty() ? "" : "," + params)));
    for (const ParamUse& use : scaling_params_of(type)) {
      const std::string key(use.param->key);
      if (use.need == ParamNeed::defaulted) {
        EXPECT_NE(printed.find("," + key + "=" + default_text(use)), std::string::npos) << printed << " " << key;
      } else if (use.need == ParamNeed::optional) {
        EXPECT_EQ(printed.find("," + key + "="), std::string::npos) << printed << " " << key;
      } else {
        std::string without;
        for (const std::string& item : split_list(params, ',')) {
          if (item.rfind(key + "=", 0) != 0) without += "," + item;
        }
        try {
          parse_spec(head + without);
          ADD_FAILURE() << head + without << " was accepted";
        } catch (const SpecError& e) {
          EXPECT_EQ(std::string(e.what()).rfind("spec field '" + key + "': expected a value for scaling=", 0), 0u) << e.what();
        }
      }
    }
  }
}

}  // namespace
}  // namespace ropecheck
