// A fused plugin (include/ropecheck/fused.h `ropecheck_fused_v1`) called on fused inputs: the inputs
// encoded into the ABI's element types, the outputs pre-filled with all-ones bytes (NaN in every
// float format and in both FP8 formats: an element the plugin never writes cannot pass) between
// guard bytes, the call, and the outputs decoded back into fused::FusedOutputs for fused::judge_fused.
//
// Isolated (the default of `ropecheck fused check --plugin`), each call runs in a fresh child under
// a supervisor (runner/child_process.h fork_supervised), as a RoPE plugin does (runner/README.md
// "Isolation"): a crash, a hang past the timeout, an allocation past the memory limit or a missing
// entry point is that call's failure, and whatever the plugin started ends with the child.
#pragma once

#include <string>

#include <ropecheck/fused.h>

#include "fused/fused.h"
#include "runner/implementation.h"
#include "runner/isolation.h"

namespace ropecheck::runner {

struct FusedCallResult {
  ApplyResult::Status status = ApplyResult::Status::ok;  // ok, or why there are no outputs to judge
  std::string message;
  fused::FusedOutputs outputs;  // the decoded outputs when status is ok
};

// Calls the plugin at `plugin_path` once on `inputs` (which must fit `spec`: fused::check_inputs),
// in a child process when `isolate`, else in this process.
FusedCallResult call_fused_plugin(const std::string& plugin_path, const fused::FusedSpec& spec, const fused::FusedInputs& inputs,
                                  bool isolate, const ChildLimits& limits);

// One call of `entry` in this process (the child's side of call_fused_plugin, and its in-process
// route).
FusedCallResult call_fused(ropecheck_fused_v1_fn entry, const fused::FusedSpec& spec, const fused::FusedInputs& inputs);

}  // namespace ropecheck::runner
