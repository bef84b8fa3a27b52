// The fused spec: the rotation's spec text plus the fused keys (fused/fused.h), parsed, validated
// and printed canonically.
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "fused/fused.h"

namespace ropecheck::fused {
namespace {

constexpr std::array<std::string_view, 12> kFusedKeys = {"norm",        "norm_weight", "eps",         "fp8",        "saturate", "scale",
                                                         "scale_value", "rounding",    "destination", "block_size", "q_heads",  "k_heads"};

bool is_fused_key(std::string_view key) {
  for (auto k : kFusedKeys) {
    if (k == key) return true;
  }
  return false;
}

std::string trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return std::string(s.substr(first, last - first + 1));
}

[[noreturn]] void fail(std::string_view key, std::string_view expected, std::string_view got) {
  std::string shown(got.substr(0, 64));
  throw InputError("spec field '" + std::string(key) + "': expected " + std::string(expected) + ", got '" + shown + "'");
}

// One of `names` (the enum's values in order), else an InputError naming the key.
template <class Enum, std::size_t N>
Enum parse_choice(std::string_view key, const std::string& value, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == value) return static_cast<Enum>(i);
  }
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) expected += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(names[i]);
  fail(key, expected, value);
}

constexpr std::array<std::string_view, 3> kNormNames = {"none", "before", "after"};
constexpr std::array<std::string_view, 2> kWeightNames = {"plain", "one_plus"};
constexpr std::array<std::string_view, 3> kFp8Names = {"none", "e4m3", "e5m2"};
constexpr std::array<std::string_view, 3> kScaleNames = {"fixed", "per_token", "per_head"};
constexpr std::array<std::string_view, 2> kRoundingNames = {"once", "intermediate"};
constexpr std::array<std::string_view, 2> kDestinationNames = {"contiguous", "paged"};

// A plain decimal number ([+-]digits[.digits][e[+-]digits]), finite, >= 0 (> 0 when `strict`); the text is kept as written, so the
// reference reads it exactly.
void check_decimal(std::string_view key, const std::string& value, bool strict) {
  const bool shape_ok = !value.empty() && value.size() <= 64 && value.find_first_not_of("0123456789.eE+-") == std::string::npos &&
                        value.find_first_of("0123456789") != std::string::npos;
  errno = 0;
  char* end = nullptr;
  const double v = shape_ok ? std::strtod(value.c_str(), &end) : 0;
  const std::string expected = std::string("a finite decimal number ") + (strict ? "> 0" : ">= 0");
  if (!shape_ok || end != value.c_str() + value.size() || !std::isfinite(v) || (strict ? !(v > 0) : !(v >= 0))) {
    fail(key, expected, value);
  }
}

int parse_count(std::string_view key, const std::string& value, int high) {
  const bool digits = !value.empty() && value.size() <= 9 && value.find_first_not_of("0123456789") == std::string::npos;
  const long v = digits ? std::strtol(value.c_str(), nullptr, 10) : 0;
  if (!digits || v < 1 || v > high) fail(key, "an integer from 1 to " + std::to_string(high), value);
  return static_cast<int>(v);
}

void set_key(FusedSpec& s, const std::string& key, const std::string& value) {
  if (key == "norm")
    s.norm = parse_choice<NormPlace>(key, value, kNormNames);
  else if (key == "norm_weight")
    s.weight = parse_choice<NormWeight>(key, value, kWeightNames);
  else if (key == "eps")
    s.eps = value;
  else if (key == "fp8")
    s.fp8 = parse_choice<Fp8>(key, value, kFp8Names);
  else if (key == "saturate") {
    if (value != "true" && value != "false") fail(key, "true or false", value);
    s.saturate = value == "true";
  } else if (key == "scale")
    s.scale = parse_choice<ScaleMode>(key, value, kScaleNames);
  else if (key == "scale_value")
    s.scale_value = value;
  else if (key == "rounding")
    s.rounding = parse_choice<Rounding>(key, value, kRoundingNames);
  else if (key == "destination")
    s.destination = parse_choice<Destination>(key, value, kDestinationNames);
  else if (key == "block_size")
    s.block_size = parse_count(key, value, kMaxBlockSize);
  else if (key == "q_heads")
    s.q_heads = parse_count(key, value, kMaxHeads);
  else if (key == "k_heads")
    s.k_heads = parse_count(key, value, kMaxHeads);
}

}  // namespace

std::string_view name(NormPlace v) { return kNormNames[static_cast<std::size_t>(v)]; }
std::string_view name(NormWeight v) { return kWeightNames[static_cast<std::size_t>(v)]; }
std::string_view name(Fp8 v) { return kFp8Names[static_cast<std::size_t>(v)]; }
std::string_view name(ScaleMode v) { return kScaleNames[static_cast<std::size_t>(v)]; }
std::string_view name(Rounding v) { return kRoundingNames[static_cast<std::size_t>(v)]; }
std::string_view name(Destination v) { return kDestinationNames[static_cast<std::size_t>(v)]; }

bool has_fused_keys(std::string_view spec_text) {
  for (const auto& item : split_list(std::string(spec_text), ',')) {
    const auto eq = item.find('=');
    if (eq != std::string::npos && is_fused_key(trimmed(std::string_view(item).substr(0, eq)))) return true;
  }
  return false;
}

void validate(const FusedSpec& s) {
  validate(s.rope);
  check_decimal("eps", s.eps, false);
  check_decimal("scale_value", s.scale_value, true);
  if (s.block_size < 1 || s.block_size > kMaxBlockSize) {
    fail("block_size", "an integer from 1 to " + std::to_string(kMaxBlockSize), std::to_string(s.block_size));
  }
  if (s.q_heads < 1 || s.q_heads > kMaxHeads)
    fail("q_heads", "an integer from 1 to " + std::to_string(kMaxHeads), std::to_string(s.q_heads));
  if (s.k_heads < 1 || s.k_heads > kMaxHeads)
    fail("k_heads", "an integer from 1 to " + std::to_string(kMaxHeads), std::to_string(s.k_heads));
  if (s.fp8 == Fp8::none && s.scale != ScaleMode::fixed) {
    fail("scale", "fixed without fp8 (a returned scale belongs to an FP8 quantization)", std::string(name(s.scale)));
  }
}

FusedSpec parse_fused_spec(std::string_view text) {
  FusedSpec s;
  std::string rope_text;
  std::vector<std::string> seen;
  for (const auto& item : split_list(std::string(text), ',')) {
    const auto eq = item.find('=');
    const std::string key = eq == std::string::npos ? std::string() : trimmed(std::string_view(item).substr(0, eq));
    if (!is_fused_key(key)) {
      rope_text += (rope_text.empty() ? "" : ",") + item;
      continue;
    }
    for (const auto& k : seen) {
      if (k == key) throw InputError("spec field '" + key + "': expected once, got a duplicate");
    }
    seen.push_back(key);
    set_key(s, key, trimmed(std::string_view(item).substr(eq + 1)));
  }
  s.rope = parse_spec(rope_text);
  validate(s);
  return s;
}

std::string to_string(const FusedSpec& s) {
  return to_string(s.rope) + ",norm=" + std::string(name(s.norm)) + ",norm_weight=" + std::string(name(s.weight)) + ",eps=" + s.eps +
         ",fp8=" + std::string(name(s.fp8)) + ",saturate=" + (s.saturate ? "true" : "false") + ",scale=" + std::string(name(s.scale)) +
         ",scale_value=" + s.scale_value + ",rounding=" + std::string(name(s.rounding)) +
         ",destination=" + std::string(name(s.destination)) + ",block_size=" + std::to_string(s.block_size) +
         ",q_heads=" + std::to_string(s.q_heads) + ",k_heads=" + std::to_string(s.k_heads);
}

}  // namespace ropecheck::fused
