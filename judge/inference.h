// Spec inference: what a failing candidate actually computes, in the spec's own vocabulary
// (judge/README.md "Explanation"). From the candidate's input/output pairs alone:
//
// 0. What the outputs are where no change of the spec gives it (a rotation keeps every pair's
//    norm): NaN or infinite at every value, all zero, one constant; NaN/Inf in some rows whose
//    inputs are finite, the spec explaining the others. The outputs negated is scored with the
//    changes below but named as what it is, not as a change of the spec.
// 1. Memory faults, row by row (token × head): rows never written (zeros where the input is
//    not), rows equal to their input (no rotation applied at a position whose angle is not zero),
//    rows holding another row's data (a row's pair norms — which a rotation keeps — match another
//    row's input and not its own: a kernel that ignores a stride).
// 2. The fits: per pair index j the candidate's own frequency θ̂_j (its angles unwrapped along the
//    positions, least squares through the origin), the base and overall factor of the line
//    ln θ̂_j = −ln f − (2j/d)·ln b, the position offset k (multi-resolution: the lowest frequency
//    first, each higher one refining k where its angle cannot have wrapped) and the magnitude ĝ.
// 3. Candidate changes of the spec, each one field or one intermediate precision: the base (fitted,
//    rounded, the common bases, the base rounded to bf16/f16), the layout, the direction, the
//    rotary dims (every dim rotated; frequencies over head_dim; pairs (i, i + head_dim/2)), each
//    scaling type's parameters (not applied, factor, original length, YaRN truncation and
//    attention factor, dynamic NTK's length, LongRoPE's factor set, per position), the multi-axis
//    mapping (mrope/imrope, the sections' order, the pairing, text positions only), a position
//    offset, the attention factor, and the precision models (positions, θ, the angle, cos/sin
//    rounded to bf16/f16; the angle product in TF32).
// 4. Each is scored on a sample of at most kInferenceTokens tokens × 2 heads, on every thread: the
//    share of ordinary pairs (and pass-through dims) within the f32-angle model's bound of its
//    values, and the share of values it gives bit for bit. The best is named when it explains at
//    least 90 % of the pairs and leaves at most a fifth of what the spec as given leaves
//    unexplained; ties go to more bit-identical values, then to the simpler change. When none
//    is, the closest is said only where it fits half of the pairs or more, and a tenth more than
//    the spec as given (a change that changes nothing is no hint).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "judge/group.h"
#include "spec/spec.h"

namespace ropecheck::judge {

// One judged test and the candidate's outputs for it. A sample of a bigger tensor says where its
// tokens were: token t of the test is token first_token + t·token_stride of the user's tensor.
struct DiagnosedTest {
  const Call* test = nullptr;
  std::span<const double> output;
  std::int64_t first_token = 0;
  std::int64_t token_stride = 1;
  // A sample gathered from several chunks: the user's index of each of its tokens (in place of
  // first_token and token_stride when not empty).
  std::span<const std::int64_t> token_index = {};
  std::int64_t user_token(std::int64_t t) const {
    return token_index.empty() ? first_token + t * token_stride : token_index[static_cast<std::size_t>(t)];
  }
};

// The tokens the changes are scored on (the memory checks read every token given).
inline constexpr std::int64_t kInferenceTokens = 512;

// Fills d.explanation, d.explanation_kind, d.mistake (the change named), d.mistake_within,
// d.mistake_identical and d.frequencies. `failing`: the group failed (a passing group gets its
// frequencies, never a named change). threads: 0 = every hardware thread. Returns the share of the
// sample's pairs within the f32-angle bound of the spec as given (-1 when not measured: a passing
// group, or no token).
double infer_spec(const Spec& spec, const std::vector<DiagnosedTest>& tests, bool failing, int threads, GroupDiagnosis& d);

// What the message of a call that threw starts with, before "TYPE: message" (runner/adapters.cpp
// and python/callable.cpp write it; raised_summary reads past it).
inline constexpr std::string_view kThrewPrefix = "threw: ";
// "raised IndexError at position 4096 (first failing position)": the summary of a call that threw,
// from its message ("IndexError: index 4096 is out of bounds ..."; a traceback after it is dropped).
std::string raised_summary(const std::string& message, std::int64_t first_position);
// The message's first line without a Python traceback ("\n\nAt:" and what follows).
std::string first_line(const std::string& message);

// Calls of the implementation that gave no output (an exception, a crash, an error status): the
// one at the lowest position is the group's explanation ("raised IndexError at position 4096"),
// ahead of any inferred change (the outputs that came back may all be right).
class FailedCalls {
 public:
  void offer(std::int64_t lowest_position, CaseKind kind, const std::string& message) {
    if (!any_ || lowest_position < position_) {
      any_ = true;
      position_ = lowest_position;
      kind_ = kind;
      message_ = message;
    }
  }
  // Into a failing group's diagnosis (created when the group has none).
  void explain(GroupResult& g) const;
  // The first failing position an explanation by explain() names (it ends "at position N (first
  // failing position)"), for a caller choosing among the explanations of groups judged apart (a
  // sweep's shards: gate/merge.cpp): none when `d`'s explanation is not explain()'s, -1 when it
  // names no position.
  static std::optional<std::int64_t> explained_position(const GroupDiagnosis& d);

 private:
  bool any_ = false;
  std::int64_t position_ = 0;
  CaseKind kind_ = CaseKind::status;
  std::string message_;
};

}  // namespace ropecheck::judge
