// libFuzzer target: the spec parser's JSON form (spec/spec.h parse_spec_json; golden files' "spec").
// Contract checked: any input either parses or throws SpecError; a parsed spec round-trips through
// to_json and to_string unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "spec/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ropecheck::Spec spec;
  try {
    spec = ropecheck::parse_spec_json(text);
  } catch (const ropecheck::SpecError&) {
    return 0;
  }
  if (ropecheck::parse_spec_json(ropecheck::to_json(spec)) != spec) std::abort();
  if (ropecheck::parse_spec(ropecheck::to_string(spec)) != spec) std::abort();
  return 0;
}
