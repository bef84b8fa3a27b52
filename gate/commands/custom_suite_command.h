// `golden generate --spec ...`: a golden suite for the user's own config and positions
// (golden/custom_suite.h says how it is drawn and where its arrays go).
#pragma once

#include <cstdint>
#include <string>

#include "spec/spec.h"

namespace ropecheck::gate {

struct CustomSuiteArgs {
  Spec spec;  // from --spec or --hf-config (gate/commands/spec_options.h)
  std::string positions;
  std::string out;    // FILE.json; a big suite's arrays go to FILE.safetensors beside it
  std::string suite;  // the suite name (default "custom")
  std::int64_t tokens = 0, heads = 1;
  std::uint64_t seed = 1;
  int threads = 0;
  bool force = false;
};

// Throws UsageError / InputError (exit 2) naming the option or file.
void generate_custom_suite(const CustomSuiteArgs& args);

}  // namespace ropecheck::gate
