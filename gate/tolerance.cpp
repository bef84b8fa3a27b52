// The tolerance policy: the default bound for each claimed model, with its derivation, and the
// --tolerance override.
#include <cmath>
#include <string>

#include "gate/commands/command.h"
#include "gate/compare.h"

namespace ropecheck::gate {

std::string_view name(Model model) { return model == Model::exact ? "exact" : "f32-recipe"; }

// Default for the exact model: what a careful implementation working in the output dtype itself
// achieves, so that every correct kernel passes whatever its internal format, and a wrong one (a
// float32 angle at large positions, a swapped layout) does not.
//
// Per output component, with the standard model fl(a∘b) = (a∘b)(1+δ) + η, |δ| ≤ u, |η| ≤ 2^(emin−p)
// (Higham, Accuracy and Stability of Numerical Algorithms, §2.1 eq. 2.8; η only on underflow),
// cos and sin each within 1 u (faithful), and the rotation a = fl(fl(x·ĉ) − fl(y·ŝ)) evaluated
// without FMA (the worst common case):
//   |x·ĉ − y·ŝ − A| ≤ u·(|x| + |y|)                    (cos/sin errors)
//   + u·|x| + u·|y|                                    (rounding of the two products)
//   + u·|A|                                            (rounding of the difference: the final rounding)
//   ≤ u·(2·(|x| + |y|) + ρ) ≤ u·ρ·(2√2 + 1) ≈ 3.83·u·ρ  (|x| + |y| ≤ √2·ρ)
// plus O(u²) terms, so e ≤ 4 (with one FMA the bound is 1 + √5 ≈ 3.24). Each of the three roundings
// may underflow and add η: the comparison allows an absolute 3·2^(emin−p) besides e·u·ρ
// (kUnderflowRoundings in compare.cpp). An implementation that computes in a wider format and
// rounds once (the project's kernels: optimized/error_bounds.h) has e ≤ 1 + tiny; a correctly
// rounded one e ≤ 1. The bound is relative to g·ρ where the spec has an attention factor g (yarn,
// longrope): the comparison multiplies it by max(1, |g|).
//
// f32-recipe model: the golden value is the recipe's result correctly rounded (expected_f32_recipe),
// itself within u·|A_recipe| ≤ u·g·ρ of the recipe's exact result; a careful implementation of the
// recipe is within the exact-model bound of the latter, hence e ≤ 4 + 1 = 5 against the golden value.
Tolerance default_tolerance(Model model, Dtype dtype) {
  const double careful = 4;  // ≥ 1 + 2√2, see above
  Tolerance t;
  t.kind = Tolerance::Kind::e;
  const std::string p = std::to_string(significand_bits(dtype));
  if (model == Model::exact) {
    t.value = careful;
    t.source = "default for the exact model: 1 + 2*sqrt(2) rounded up (faithful cos/sin, rotation rounded in " +
               std::string(ropecheck::name(dtype)) + ", u = 2^-" + p + "; gate/tolerance.cpp)";
  } else {
    t.value = careful + 1;
    t.source = "default for the f32-recipe model: 4 for a careful implementation of the recipe + 1 for the rounding "
               "of the golden recipe value (gate/tolerance.cpp)";
  }
  return t;
}

Tolerance parse_tolerance(std::string_view text) {
  Tolerance t;
  const auto eq = text.find('=');
  const std::string key(text.substr(0, eq == std::string_view::npos ? 0 : eq));
  const std::string value(eq == std::string_view::npos ? "" : text.substr(eq + 1));
  if (key == "e") {
    t.kind = Tolerance::Kind::e;
  } else if (key == "ulp") {
    t.kind = Tolerance::Kind::ulp;
  } else {
    throw UsageError("--tolerance: expected e=NUMBER or ulp=NUMBER, got '" + std::string(text) + "'");
  }
  std::size_t used = 0;
  try {
    t.value = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !std::isfinite(t.value) || t.value < 0) {
    throw UsageError("--tolerance: expected a non-negative number after '" + key + "=', got '" + value + "'");
  }
  t.source = "--tolerance " + std::string(text);
  return t;
}

}  // namespace ropecheck::gate
