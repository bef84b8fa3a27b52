// libFuzzer target: the golden JSON reader (golden/golden.h parse_golden).
// Contract checked: any text either parses or throws GoldenError (never another exception, never a
// crash, never an allocation beyond what the text itself justifies: libFuzzer's -malloc_limit_mb
// catches that); a file that parses is written back canonically and that text parses again to the
// same canonical text (write_golden(parse_golden(t)) is a fixed point).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "golden/golden.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ropecheck::golden::GoldenFile file;
  try {
    file = ropecheck::golden::parse_golden(text, "fuzz.json");
  } catch (const ropecheck::golden::GoldenError&) {
    return 0;
  }
  (void)ropecheck::golden::lint(file, "fuzz.json");
  const std::string canonical = ropecheck::golden::write_golden(file);
  const std::string again = ropecheck::golden::write_golden(ropecheck::golden::parse_golden(canonical, "canonical.json"));
  if (again != canonical) std::abort();
  return 0;
}
