// Text the user gave, quoted for a one-line message (base/errors.h): at most kMaxEcho characters of
// it, then its length, so that a 100,000-character argument is not printed back whole.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ropecheck::gate {

inline constexpr std::size_t kMaxEcho = 80;

inline std::string echo(std::string_view text) {
  if (text.size() <= kMaxEcho) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kMaxEcho)) + "...' (" + std::to_string(text.size()) + " characters)";
}

}  // namespace ropecheck::gate
