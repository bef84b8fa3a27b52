// Builds the C ABI's ropecheck_spec (include/ropecheck/kernel.h) from a Spec, owning the storage
// its pointers refer to. Used by the gate (plugins), the tests and the benchmarks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ropecheck/kernel.h>

#include "spec/spec.h"

namespace ropecheck::kernels {

class CSpec {
 public:
  explicit CSpec(const Spec& spec);
  CSpec(const CSpec& other) : CSpec(other.spec_) {}
  CSpec& operator=(const CSpec& other);
  const ropecheck_spec* get() const { return &c_; }
  const Spec& spec() const { return spec_; }

 private:
  void fill();
  Spec spec_;
  std::string text_;
  std::vector<double> short_factor_;
  std::vector<double> long_factor_;
  std::vector<std::int32_t> sections_;
  ropecheck_spec c_{};
};

}  // namespace ropecheck::kernels
