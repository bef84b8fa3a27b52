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
// 2. Differential diagnosis. The outputs are compared with the usual mistakes — the other layout,
//    the inverse direction (the sine's sign flipped), positions off by ±1, the base or θ rounded to
//    bf16/f16, θ/position/angle in binary32 (the f32 recipe), cos/sin rounded to bf16/f16, a missing
//    or doubled attention factor, every dim rotated — and the one that reproduces them is named,
//    with the share of pairs it explains (within the f32-angle model's bound of it) and of values it
//    gives bit for bit.
#pragma once

#include <span>
#include <vector>

#include "golden/golden.h"
#include "judge/group.h"
#include "judge/tolerance.h"

namespace ropecheck::judge {

// One judged test and the candidate's outputs for it.
struct DiagnosedTest {
  const golden::RopeTest* test = nullptr;
  std::span<const double> output;
};

// Failing groups, and passing ones within a factor 2 of their bound somewhere (marginal), get one.
inline bool needs_diagnosis(const GroupResult& g) { return g.verdict == "fail" || g.worst_margin > 0.5; }

// A big test kept for the diagnosis (a direct check's chunk, a sidecar suite's test): at most
// `max_values` values of whole tokens, taken at a stride over the test's tokens, so that the sample
// spans the test's positions (the angle error's growth with the position is what is fitted).
struct DiagnosisSample {
  golden::RopeTest test;
  std::vector<double> output;
};
DiagnosisSample diagnosis_sample(const golden::RopeTest& test, std::span<const double> output, int components,
                                 std::int64_t max_values);

// The diagnosis of one group's tests (judge/group.h GroupDiagnosis). `model` is the model the group
// was judged under (it decides whether the angle of a binary32 implementation is a finding).
GroupDiagnosis diagnose(const Spec& spec, const std::vector<DiagnosedTest>& tests, Model model);

}  // namespace ropecheck::judge
