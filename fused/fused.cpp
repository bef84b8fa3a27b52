// The fused reference, inputs and judge (fused/fused.h); stubs until their commits land.
#include <stdexcept>

#include "fused/fused.h"

namespace ropecheck::fused {

void check_inputs(const FusedSpec&, const FusedInputs&) { throw std::logic_error("fused: check_inputs not written yet"); }
void check_output_sizes(const FusedSpec&, const FusedInputs&, const FusedOutputs&) {
  throw std::logic_error("fused: check_output_sizes not written yet");
}
FusedInputs random_inputs(const FusedSpec&, std::int64_t, std::uint64_t) { throw std::logic_error("fused: random_inputs not written yet"); }
FusedOutputs fused_reference(const FusedSpec&, const FusedInputs&) { throw std::logic_error("fused: fused_reference not written yet"); }
FusedJudgement judge_fused(const FusedSpec&, const FusedInputs&, const FusedOutputs&, judge::Model) {
  throw std::logic_error("fused: judge_fused not written yet");
}
std::string fused_report_text(const FusedJudgement&) { throw std::logic_error("fused: fused_report_text not written yet"); }

}  // namespace ropecheck::fused
