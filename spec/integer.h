// The project's one reader of an integer written as text: spec fields, position lists and ranges,
// fuzz replay cases and integer-valued command options all read through it. It returns nothing for
// text that is not one whole integer or lies outside int64 (never a saturated value); each caller
// words its own message, naming its field or option.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ropecheck {

enum class IntegerSyntax {
  // [-]digits, the whole text and nothing else (std::from_chars): spec fields, --seq-len, --layer.
  exact,
  // What std::stoll reads in base 10: leading C-locale blanks and one '+' or '-' allowed, then
  // digits to the end of the text: --positions and fuzz --replay cases.
  c_library,
};

inline std::optional<std::int64_t> parse_integer(std::string_view text, IntegerSyntax syntax = IntegerSyntax::exact) {
  if (syntax == IntegerSyntax::c_library) {
    const std::size_t first = text.find_first_not_of(" \t\n\v\f\r");
    text = first == std::string_view::npos ? std::string_view() : text.substr(first);
    if (!text.empty() && text[0] == '+') {
      text.remove_prefix(1);
      if (!text.empty() && text[0] == '-') return std::nullopt;  // one sign only
    }
  }
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace ropecheck
