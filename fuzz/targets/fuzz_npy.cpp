// libFuzzer target: the .npy reader of `ropecheck apply --input X.npy` (gate/readers/npy.h).
// Contract checked: any bytes either parse or throw NpyError; a parsed array's value count equals
// the product of its shape (sizes are checked against the bytes before allocating).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "gate/readers/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ropecheck::gate::NpyArray array;
  try {
    array = ropecheck::gate::parse_npy(bytes, "fuzz.npy");
  } catch (const ropecheck::gate::NpyError&) {
    return 0;
  }
  std::uint64_t count = 1;
  for (std::int64_t extent : array.shape) {
    if (extent < 0) std::abort();
    count *= static_cast<std::uint64_t>(extent);
  }
  if (count != array.values.size()) std::abort();
  return 0;
}
