// Why a candidate fails (judge/README.md "Diagnosis"): from the inputs and outputs of a failing (or
// marginal) group, written once here and shown by every report.
//
// 1. Error decomposition. Each rotated pair's output is a rotation of its input by the candidate's
//    own angle φ_c = atan2(x·b − y·a, x·a + y·b) and a scale s = |(a, b)|/(|g|·ρ). Against the exact
//    angle φ = m·θ'_j: the angle error φ_c − φ (radians, and binary32 ulps of φ), from which each pair
//    index's effective frequency error (φ_c − φ)/m in binary32 ulps of θ'_j is fitted over the
//    positions, and how it grows (with the pair index, as a running product θ *= r gives; or not);
//    an angle error that does not grow with the position is a position offset. The scale's error,
//    |s − 1|/u, is the error left at the candidate's own angle: its rotation arithmetic (cos/sin and
//    the products), which the angle cannot explain.
// 2. The spec inference (judge/inference.h): the smallest change of the spec — a field, a scaling
//    parameter, an intermediate precision, a memory fault — that reproduces the outputs, named with
//    the share of pairs it explains (within the f32-angle model's bound of it) and of values it
//    gives bit for bit; or that no single change does, and the closest.
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "judge/group.h"
#include "judge/inference.h"
#include "judge/tolerance.h"

namespace ropecheck::judge {

// Failing groups, and passing ones within a factor 2 of their bound somewhere (marginal), get one.
inline bool needs_diagnosis(const GroupResult& g) { return g.verdict == Verdict::fail || g.worst_margin > 0.5; }

// A big test kept for the diagnosis (a direct check's chunk, a sidecar suite's test): at most
// `max_values` values of whole tokens, taken at a stride over the test's tokens, so that the sample
// spans the test's positions (the angle error's growth with the position is what is fitted).
struct DiagnosisSample {
  Call test;
  std::vector<double> output;
  std::int64_t first_token = 0;           // the user's token index of the sample's token 0
  std::int64_t token_stride = 1;          // and the stride between its tokens
  std::vector<std::int64_t> token_index;  // a sample of several tests: each token's user index
  DiagnosedTest diagnosed() const { return {&test, output, first_token, token_stride, token_index}; }
};
DiagnosisSample diagnosis_sample(const Call& test, std::span<const double> output, int components, std::int64_t max_values,
                                 std::int64_t first_token = 0);
// The same into `sample`, whose arrays are used again (a sample replaced chunk after chunk was
// 16 MB of fresh pages each time, copied on the one thread between two chunks' judging), copied on
// `threads` threads (0: every hardware thread) when it is big.
void diagnosis_sample_into(DiagnosisSample& sample, const Call& test, std::span<const double> output, int components,
                           std::int64_t max_values, std::int64_t first_token = 0, int threads = 1);

// The values a sample of a big test keeps (2^20: the diagnosis fits its frequencies on them).
inline constexpr std::int64_t kDiagnosisSampleValues = std::int64_t{1} << 20;

// The sample a group of big tests (direct-check chunks, sidecar tests) is diagnosed from: the
// first test's, replaced by a later test's whenever that test raised the group's worst e — a
// mistake in some tests only is named from where it is (the right tests would dilute its share).
class DiagnosisSampler {
 public:
  explicit DiagnosisSampler(std::int64_t max_values = kDiagnosisSampleValues) : max_values_(max_values) {}
  // After the comparer judged `test`: `group_worst_e` is its worst e so far.
  // `first_token`: the user's index of the test's token 0 (a direct check's chunk). `threads`: the
  // sample's copy, for a caller whose other threads wait for it (diagnosis_sample_into).
  void offer(const Call& test, std::span<const double> output, int components, double group_worst_e, std::int64_t first_token = 0,
             int threads = 1) {
    // The first test's sample until a later test raises the worst e: then that test's, in the same
    // arrays (the first one's is not read again).
    if (!sample_) {
      diagnosis_sample_into(sample_.emplace(std::move(sample_prepared_)), test, output, components, max_values_, first_token, threads);
    } else if (group_worst_e > worst_e_) {
      diagnosis_sample_into(*sample_, test, output, components, max_values_, first_token, threads);
    }
    worst_e_ = std::max(worst_e_, group_worst_e);
    spread(test, output, components, first_token);
    ++tests_offered_;
  }
  // Writes once into the arrays that the samples of tests of `token_size` values per token hold,
  // `tokens` in all (at most 24 MB for 2^20 values), as offer would on its first call: a caller
  // with a thread idle before its first test can be judged (a direct check reading its first
  // chunk) calls it then, where offer's first copy into fresh pages was the one serial step between
  // two chunks' judging.
  void prepare(std::int64_t token_size, int components, std::int64_t tokens);
  // Before the first offer, from a caller that knows how many tokens of `token_size` values its
  // tests hold in all (a direct check's chunks): the spread sample's stride set to the one offer
  // would end at (the least power of two that keeps at most its budget of tokens), so that offer
  // copies only the tokens it keeps, not every token it meets, halving its list again and again
  // (bench/README.md "A check's memory: sample"). The same tokens are kept where every
  // test's tokens are a multiple of that stride (the chunks of a direct check); else as many, at
  // that stride from each test's first.
  // Cheap (no memory); ignored once a test was offered.
  void expect_tokens(std::int64_t token_size, std::int64_t tokens);
  // Null before any test was offered.
  const DiagnosisSample* sample() const { return sample_ ? &*sample_ : nullptr; }
  // What the diagnosis reads: the sample above and, once tests were offered, a sample spread over
  // all of them (a mistake that depends on the position is then seen at every position offered,
  // not only in the worst test's).
  std::vector<DiagnosedTest> diagnosed() const {
    std::vector<DiagnosedTest> out;
    if (const DiagnosisSample* s = sample()) out.push_back(s->diagnosed());
    if (tests_offered_ > 1 && spread_.test.tokens > 0) out.push_back(spread_.diagnosed());
    return out;
  }

 private:
  // Every offered test contributes tokens at a stride to spread_, at most max_values_/2 values in
  // all: past that, every other kept token is dropped and the stride doubles.
  void spread(const Call& test, std::span<const double> output, int components, std::int64_t first_token);

  std::int64_t max_values_;
  std::optional<DiagnosisSample> sample_;
  DiagnosisSample sample_prepared_;  // prepare's arrays, until the first offer moves them into sample_
  DiagnosisSample spread_;
  std::int64_t spread_stride_ = 1;
  std::int64_t tests_offered_ = 0;
  double worst_e_ = -1;
};

// A diagnosed test's tokens at or below --max-position, with the candidate's outputs there: what
// the judge judged (judge/group.cpp skips the others), so that the diagnosis never fits a token the
// user left out (a cos/sin table that ends at the context length, say). `token_index` keeps the
// user's token indices for what the diagnosis names.
struct TrimmedTest {
  Call test;
  std::vector<double> output;
  std::vector<std::int64_t> token_index;
};
// `tests` with every token above `max_position` left out (tests left empty dropped); the copies
// of the trimmed ones go to `store`, which the result points into.
std::vector<DiagnosedTest> within_max_position(const std::vector<DiagnosedTest>& tests, const Spec& spec,
                                               std::optional<std::int64_t> max_position, std::vector<TrimmedTest>& store);

// The diagnosis of one group's tests (judge/group.h GroupDiagnosis). `model` is the model the group
// was judged under (it decides whether the angle of a binary32 implementation is a finding);
// `failing`: the group failed (a marginal pass gets the decomposition, never a named change).
// `group`: the group's result as judged (counts and kept cases, over every value, where the tests
// may be a sample): subnormals flushed to zero and isolated wrong values are named from it (none
// given: neither is).
GroupDiagnosis diagnose(const Spec& spec, const std::vector<DiagnosedTest>& tests, Model model, bool failing, int threads = 0,
                        const GroupResult* group = nullptr);

}  // namespace ropecheck::judge
