// Shared by the candidate-reader targets: what every parsed tensor map must satisfy.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "tensorio/readers.h"

namespace ropecheck::fuzz {

// Numeric tensors hold exactly product(shape) values (text tensors none); extents are ≥ 0.
inline void check_tensor(const tensorio::Tensor& tensor) {
  std::uint64_t count = 1;
  for (std::int64_t extent : tensor.shape) {
    if (extent < 0) std::abort();
    count *= static_cast<std::uint64_t>(extent);
  }
  if (tensor.dtype == "U") return;
  if (count != tensor.values.size()) std::abort();
}

inline void check_tensors(const tensorio::TensorMap& tensors) {
  for (const auto& [name, tensor] : tensors) check_tensor(tensor);
}

}  // namespace ropecheck::fuzz
