#include "optimized/c_spec.h"

#include <cmath>
#include <cstdlib>

namespace ropecheck::kernels {
namespace {
// Nearest double of an exact decimal (NaN when absent, as kernel.h documents).
double decimal(const std::string& text) {
  if (text.empty()) return std::nan("");
  return std::strtod(text.c_str(), nullptr);
}
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
  for (const auto& v : sc.short_factor) short_factor_.push_back(decimal(v));
  for (const auto& v : sc.long_factor) long_factor_.push_back(decimal(v));
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
  c_.factor = decimal(sc.factor);
  c_.original_max_position = sc.original_max_position;
  c_.seq_len = sc.seq_len;
  c_.beta_fast = decimal(sc.beta_fast);
  c_.beta_slow = decimal(sc.beta_slow);
  c_.truncate = sc.truncate ? 1 : 0;
  c_.attention_factor = sc.attention_factor ? decimal(*sc.attention_factor) : std::nan("");
  c_.mscale = sc.mscale ? decimal(*sc.mscale) : std::nan("");
  c_.mscale_all_dim = sc.mscale_all_dim ? decimal(*sc.mscale_all_dim) : std::nan("");
  c_.freq_scale = decimal(sc.freq_scale);
  c_.ext_factor = decimal(sc.ext_factor);
  c_.attn_factor = decimal(sc.attn_factor);
  c_.low_freq_factor = decimal(sc.low_freq_factor);
  c_.high_freq_factor = decimal(sc.high_freq_factor);
  c_.longrope_factor_count = static_cast<std::int32_t>(short_factor_.size());
  c_.short_factor = short_factor_.empty() ? nullptr : short_factor_.data();
  c_.long_factor = long_factor_.empty() ? nullptr : long_factor_.data();
  c_.axes = static_cast<std::int32_t>(spec_.axes.kind);
  c_.position_components = position_components(spec_);
  c_.section_count = static_cast<std::int32_t>(sections_.size());
  c_.sections = sections_.empty() ? nullptr : sections_.data();
}

}  // namespace ropecheck::kernels
