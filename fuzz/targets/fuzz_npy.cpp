// libFuzzer target: the .npy reader (tensorio/readers.h parse_npy_tensor), used by
// `ropecheck apply --input X.npy` and for .npy candidates and npz members.
// Contract checked: any bytes either parse or throw ReaderError; a parsed numeric tensor's value
// count equals the product of its shape (sizes are checked against the bytes before allocating).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tensorio/readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ropecheck::tensorio::Tensor tensor;
  try {
    tensor = ropecheck::tensorio::parse_npy_tensor(bytes, "fuzz.npy");
  } catch (const ropecheck::tensorio::ReaderError&) {
    return 0;
  }
  if (tensor.dtype == "U") return 0;
  std::uint64_t count = 1;
  for (std::int64_t extent : tensor.shape) {
    if (extent < 0) std::abort();
    count *= static_cast<std::uint64_t>(extent);
  }
  if (count != tensor.values.size()) std::abort();
  return 0;
}
