#include "optimized/c_spec.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <type_traits>
#include <variant>

#include "spec/scaling_params.h"

namespace ropecheck::kernels {
namespace {
// Nearest double of an exact decimal (NaN when absent, as kernel.h documents).
double decimal(const std::string& text) {
  if (text.empty()) return std::nan("");
  return std::strtod(text.c_str(), nullptr);
}

// The field of kernel.h's ropecheck_spec each row of kScalingParams is decoded into, in its order:
// a decimal into a double (an unset optional one NaN), an integer into int64_t, a flag into
// int32_t 1/0, a LongRoPE list into an array of doubles.
struct CField {
  std::string_view key;
  std::variant<double ropecheck_spec::*, std::int64_t ropecheck_spec::*, std::int32_t ropecheck_spec::*, const double * ropecheck_spec::*>
      field;
};
constexpr std::array<CField, kScalingParams.size()> kCFields = {{
    {"factor", &ropecheck_spec::factor},
    {"original_max_position", &ropecheck_spec::original_max_position},
    {"seq_len", &ropecheck_spec::seq_len},
    {"beta_fast", &ropecheck_spec::beta_fast},
    {"beta_slow", &ropecheck_spec::beta_slow},
    {"truncate", &ropecheck_spec::truncate},
    {"attention_factor", &ropecheck_spec::attention_factor},
    {"mscale", &ropecheck_spec::mscale},
    {"mscale_all_dim", &ropecheck_spec::mscale_all_dim},
    {"freq_scale", &ropecheck_spec::freq_scale},
    {"ext_factor", &ropecheck_spec::ext_factor},
    {"attn_factor", &ropecheck_spec::attn_factor},
    {"low_freq_factor", &ropecheck_spec::low_freq_factor},
    {"high_freq_factor", &ropecheck_spec::high_freq_factor},
    {"short_factor", &ropecheck_spec::short_factor},
    {"long_factor", &ropecheck_spec::long_factor},
}};

// Every row has its C field, of the kind its member's type decodes into (member variant index:
// string, int64, bool, optional string, list; field variant index: double, int64, int32, array).
constexpr bool fields_match() {
  constexpr std::array<std::size_t, 5> kind = {0, 1, 2, 0, 3};
  for (std::size_t i = 0; i < kScalingParams.size(); ++i) {
    if (kCFields[i].key != kScalingParams[i].key || kCFields[i].field.index() != kind[kScalingParams[i].member.index()]) return false;
  }
  return true;
}
static_assert(fields_match(), "kCFields must follow spec/scaling_params.h's kScalingParams");

}  // namespace

CSpec::CSpec(const Spec& spec) : spec_(spec) { fill(); }

CSpec& CSpec::operator=(const CSpec& other) {
  if (this != &other) {
    spec_ = other.spec_;
    fill();
  }
  return *this;
}

void CSpec::fill() {
  const Scaling& sc = spec_.scaling;
  text_ = to_string(spec_);
  short_factor_.clear();
  long_factor_.clear();
  sections_.clear();
  for (int n : spec_.axes.sections) sections_.push_back(n);
  c_ = ropecheck_spec{};
  c_.spec = text_.c_str();
  c_.layout = static_cast<std::int32_t>(spec_.layout);
  c_.head_dim = spec_.head_dim;
  c_.rotary_dim = spec_.rotary_dim;
  c_.direction = static_cast<std::int32_t>(spec_.direction);
  c_.dtype = static_cast<std::int32_t>(spec_.dtype);
  c_.base = decimal(spec_.base);
  c_.scaling = static_cast<std::int32_t>(sc.type);
  for (std::size_t i = 0; i < kScalingParams.size(); ++i) {
    std::visit(
        [&](auto from, auto to) {
          const auto& value = sc.*from;
          using From = std::remove_cvref_t<decltype(value)>;
          using To = std::remove_cvref_t<decltype(c_.*to)>;
          if constexpr (std::is_same_v<From, std::string> && std::is_same_v<To, double>) {
            c_.*to = decimal(value);
          } else if constexpr (std::is_same_v<From, std::optional<std::string>> && std::is_same_v<To, double>) {
            c_.*to = value ? decimal(*value) : std::nan("");
          } else if constexpr (std::is_same_v<From, std::int64_t> && std::is_same_v<To, std::int64_t>) {
            c_.*to = value;
          } else if constexpr (std::is_same_v<From, bool> && std::is_same_v<To, std::int32_t>) {
            c_.*to = value ? 1 : 0;
          } else if constexpr (std::is_same_v<From, std::vector<std::string>> && std::is_same_v<To, const double*>) {
            std::vector<double>& store = to == &ropecheck_spec::short_factor ? short_factor_ : long_factor_;
            for (const auto& v : value) store.push_back(decimal(v));
            c_.*to = store.empty() ? nullptr : store.data();
          }
        },
        kScalingParams[i].member, kCFields[i].field);
  }
  c_.longrope_factor_count = static_cast<std::int32_t>(short_factor_.size());
  c_.axes = static_cast<std::int32_t>(spec_.axes.kind);
  c_.position_components = position_components(spec_);
  c_.section_count = static_cast<std::int32_t>(sections_.size());
  c_.sections = sections_.empty() ? nullptr : sections_.data();
}

}  // namespace ropecheck::kernels
