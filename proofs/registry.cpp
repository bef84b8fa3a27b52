#include "proofs/registry.h"

#include "proofs/reference_implementation.h"

namespace ropecheck::proofs {
namespace {

using Output = ReferenceImplementation::Output;

const RegistryEntry kRegistry[] = {
    {"reference",
     "the exact reference at --precision bits: unrounded outputs (--model exact), or the float32 recipe "
     "rounded to the spec's dtype (--model f32-recipe)",
     [](const ImplementationOptions& o) -> std::unique_ptr<Implementation> {
       return std::make_unique<ReferenceImplementation>(
           o.precision_bits, o.model, o.model == reference::Model::exact ? Output::exact : Output::rounded);
     }},
    {"reference-rounded", "the exact reference correctly rounded to the spec's dtype (claims e <= 1 u*rho)",
     [](const ImplementationOptions& o) -> std::unique_ptr<Implementation> {
       return std::make_unique<ReferenceImplementation>(o.precision_bits, reference::Model::exact, Output::rounded);
     }},
};

}  // namespace

std::span<const RegistryEntry> registry() { return kRegistry; }

const RegistryEntry* find_implementation(std::string_view name) {
  for (const RegistryEntry& entry : kRegistry)
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace ropecheck::proofs
