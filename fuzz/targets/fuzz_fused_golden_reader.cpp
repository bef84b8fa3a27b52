// libFuzzer target: the fused golden JSON reader (golden/fused_golden.h parse_fused_golden).
// Contract checked: any text either parses or throws GoldenError (never another exception, never a
// crash); a file that parses is written back canonically and that text parses again to the same
// canonical text (write_fused_golden(parse_fused_golden(t)) is a fixed point); is_fused_golden never
// throws.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "golden/fused_golden.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ropecheck::golden::is_fused_golden(text);
  ropecheck::golden::FusedGoldenFile file;
  try {
    file = ropecheck::golden::parse_fused_golden(text, "fuzz.json");
  } catch (const ropecheck::golden::GoldenError&) {
    return 0;
  }
  const std::string canonical = ropecheck::golden::write_fused_golden(file);
  const std::string again = ropecheck::golden::write_fused_golden(ropecheck::golden::parse_fused_golden(canonical, "canonical.json"));
  if (again != canonical) std::abort();
  return 0;
}
