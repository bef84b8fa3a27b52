// The implementations `ropecheck props --impl NAME` can judge: a small table, one line per entry.
// Kernels (optimized/, include/ropecheck/kernel.h) and plugins are added here with one line each
// once their adapters exist (see proofs/README.md, "Adding an implementation").
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "proofs/implementation.h"
#include "reference/rope.h"

namespace ropecheck::proofs {

// What the command line can say about an implementation; each entry uses what applies to it.
struct ImplementationOptions {
  int precision_bits = 256;                         // the reference's working precision
  reference::Model model = reference::Model::exact;  // the reference's rounding model
};

struct RegistryEntry {
  std::string_view name;
  std::string_view description;
  std::function<std::unique_ptr<Implementation>(const ImplementationOptions&)> make;
};

std::span<const RegistryEntry> registry();
// nullptr when no entry has this name.
const RegistryEntry* find_implementation(std::string_view name);

}  // namespace ropecheck::proofs
