// libFuzzer target: the spec parser's text form (spec/spec.h parse_spec, "key=value,...").
// Contract checked: any input either parses or throws SpecError (anything else escapes and is a
// crash); a spec that parses survives the canonical round trips text → Spec → to_string → Spec and
// Spec → to_json → parse_spec_json unchanged (the forms golden files and the plugin ABI carry).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "spec/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ropecheck::Spec spec;
  try {
    spec = ropecheck::parse_spec(text);
  } catch (const ropecheck::SpecError&) {
    return 0;
  }
  // A parsed spec is valid, and its canonical forms denote the same spec.
  if (ropecheck::parse_spec(ropecheck::to_string(spec)) != spec) std::abort();
  if (ropecheck::parse_spec_json(ropecheck::to_json(spec)) != spec) std::abort();
  return 0;
}
