// libFuzzer target: the candidate reader for NumPy .npz archives (zip, stored or deflate, Zip64; CRC-32 checked),
// tensorio/readers.h parse_npz. Contract checked: any bytes either parse or throw ReaderError (never
// another exception or a crash; sizes are checked before allocating, which -malloc_limit_mb
// enforces); every numeric tensor holds exactly product(shape) values.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/targets/tensor_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    ropecheck::fuzz::check_tensors(ropecheck::tensorio::parse_npz(bytes, "fuzz.bin"));
  } catch (const ropecheck::tensorio::ReaderError&) {
  }
  return 0;
}
