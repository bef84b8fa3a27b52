// The implementation under fuzz: anything that applies a Spec to [tokens, 1, head_dim] inputs at
// given positions and returns outputs in the spec's dtype. Three kinds:
//   - a kernel of the project library, through the C ABI (include/ropecheck/kernel.h,
//     library ropecheck_kernels): --impl scalar | avx2 | avx512 | cuda | auto;
//   - the reference under a rounding model: --impl reference (exact, correctly rounded: e ≤ 1) and
//     --impl reference-f32-recipe (the common float32 recipe, angle p·θ rounded to f32; wrong under
//     the exact model at large positions: what the fuzzer must find);
//   - a plugin shared library exporting the C ABI: --plugin PATH.so, run in a child process by the
//     gate's runner (gate/isolation.h), so that a crash or a hang is that case's violation.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "spec/spec.h"

namespace ropecheck::fuzz {

struct ApplyResult {
  int status = 0;              // ROPECHECK_OK or a negative ROPECHECK_ERROR_* status
  std::string message;         // one line when status != ROPECHECK_OK (e.g. the plugin crashed)
  std::vector<double> output;  // values of spec.dtype as doubles, [tokens, 1, head_dim]
};

class Candidate {
 public:
  virtual ~Candidate() = default;
  // Shown in reports ("scalar", "reference-f32-recipe", the plugin's path).
  virtual std::string name() const = 0;
  // The command-line words that select it again (for replay commands): "--impl scalar".
  virtual std::string selector() const = 0;
  // The default tolerance in e units for `spec`, and where the number comes from.
  virtual double default_tolerance(const Spec& spec) const = 0;
  virtual std::string tolerance_source(const Spec& spec) const = 0;
  // Inputs: values of spec.dtype (NaN, ±Inf, ±0 and subnormals included), row-major
  // [tokens, 1, head_dim]; positions: position_components(spec) per token.
  virtual ApplyResult apply(const Spec& spec, std::int64_t tokens, std::span<const std::int64_t> positions,
                            std::span<const double> input) const = 0;
};

// --impl NAME: throws std::invalid_argument naming the known names when NAME is unknown or the
// kernel is unavailable on this machine.
std::unique_ptr<Candidate> make_implementation(const std::string& name);
// --plugin PATH: throws std::invalid_argument when it cannot be loaded, lacks an entry point or
// reports another ABI version.
std::unique_ptr<Candidate> make_plugin(const std::string& path, double timeout_seconds = 10);
// Names --impl accepts on this machine.
std::vector<std::string> implementation_names();

}  // namespace ropecheck::fuzz
