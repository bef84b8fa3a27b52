// Exact RoPE (docs/rope.md §1–2): the rotation of a [tokens, heads, head_dim] tensor at given positions,
// computed in high precision and correctly rounded to the spec's dtype.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "reference/multiprecision.h"
#include "spec/spec.h"

namespace ropecheck::reference {

// Row-major [tokens, heads, head_dim] (contiguous; strided views are the kernels' concern).
struct Shape {
  std::int64_t tokens = 1;
  std::int64_t heads = 1;
  std::int64_t head_dim = 0;
  std::int64_t elements() const { return tokens * heads * head_dim; }
};

// Positions: position_components(spec) int64 per token, row-major [tokens, components].
// The reference accepts any int64 (negative too: R_{−m} = R_mᵀ); |position| ≤ 2^62.

// Rounding models (docs/design.md): `exact` — everything exact, one correct rounding at the end;
// `f32_recipe` — the common float32 recipe: θ_j rounded to f32, the position rounded to f32, their
// product rounded to f32, then exact cos/sin of that f32 angle, exact rotation, one final rounding.
enum class Model { exact, f32_recipe };

// How `apply` and `evaluate` get each (token, pair)'s cos and sin. Both give the same bits
// (correct rounding is unique); `mpfr` is kept as the independent oracle the tests compare with.
//   fast — double-double cos/sin with a proven bound (fast_trig.h), MPFR where it does not apply
//          (|position| > 2^53, |angle| > 2^40, ...) and on the cold path; exact values in long double
//          from the same double-double rotation.
//   mpfr — cos/sin with MPFR at precision_bits per (token, pair); exact values by rotate_exact.
enum class Path { fast, mpfr };

struct Options {
  int precision_bits = kDefaultPrecisionBits;  // working precision of the first attempt (the Ziv loop may go higher)
  Model model = Model::exact;
  Path path = Path::fast;
};

// The three independent forms (they share only spec/schedule.h):
//   matrix      — the block-diagonal R_m (head_dim × head_dim, identity on pass-through dims)
//                 applied as a matrix-vector product (RoFormer, eq. of R_m);
//   complex     — z_j·(e^{iθ_j})^m with z_j = x + i·y, the power taken by repeated squaring
//                 (RoFormer §3.2, Euler's formula);
//   elementwise — q ⊗ cos + rotate(q) ⊗ sin with the layout's cos/sin vectors (RoFormer's sparse form).
enum class Form { matrix, complex, elementwise };

// Unrounded values at `precision_bits` (error ≈ 2^-P·(1 + min(|angle|, 2^40)) relative to each
// pair's norm in the matrix and elementwise forms: a larger angle is computed at more bits,
// reference/README.md "Huge angles"; ≈ 2^-P·(1 + |angle| + |m|) in the complex form).
// Inputs must be finite.
std::vector<Real> rotate_exact(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                               std::span<const double> input, int precision_bits, Form form);

// Correctly rounded outputs in spec.dtype, returned as doubles (every dtype value is one).
// Inputs should be values of spec.dtype. Special values follow IEEE 754 arithmetic of the formula
// (x·c − y·s, x·s + y·c) with the exact cos/sin: NaN in a pair ⇒ NaN in both outputs; ±Inf
// propagate with the signs of the products (Inf·0 = NaN at position 0); zeros keep IEEE signs.
// Pass-through dims are copied bit for bit. Throws std::invalid_argument on size mismatches.
// The vector is a new allocation each call: a caller with a buffer of its own, or one that applies
// many tensors or chunks, takes ApplyPlan::apply_into (no output allocation, no MPFR per call).
std::vector<double> apply(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                          std::span<const double> input, Options options = {});
// The same into `out` (input.size() values: a slice of a buffer the caller reuses); `out` may be
// `input` itself (in place), else the two must not overlap. ApplyPlan(spec, options).apply_into.
void apply_into(const Spec& spec, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input,
                std::span<double> out, Options options = {});

// One token's cos·A and sin·A of every pair as double-doubles (arrays indexed by pair), each within
// `cs_error` of the exact value, and per pair the rounding test's bound per unit of |x| + |y|:
// error[j] = rotation_error(cs_error, c_hi[j], s_hi[j]).
struct TrigRow {
  const double* c_hi;
  const double* c_lo;
  const double* s_hi;
  const double* s_lo;
  const double* error;
  double cs_error;
};
// The bound per unit of |x| + |y| of one pair's rotated components in double-double: the cos/sin
// error (times 1 + 2^-40 for the products' roundings) plus the rotation's own, 2^-100·max(|c|, |s|)
// (rope.cpp rotate_component).
inline double rotation_error(double cs_error, double c_hi, double s_hi) {
  return cs_error * (1 + 0x1p-40) + std::max(std::fabs(c_hi), std::fabs(s_hi)) * 0x1p-100;
}

// apply's constants for one spec and options, computed once: θ'_j and the attention factor in MPFR
// at options.precision_bits, and for the fast path their triple- and double-double words (from
// 256-bit values). Building one costs an MPFR evaluation of the schedule per pair (bench/README.md
// "A sweep's serial part: plan"); apply_into then does none (outside the cold path) and allocates only small
// per-call tables (a few values per pair). A caller applying several tensors, or one tensor a
// chunk of tokens at a time (the CLI and the Python module: input converted into a small buffer,
// rotated in place, stored in the output's dtype), builds one. apply_into only reads the plan:
// threads may share one.
class ApplyPlan {
 public:
  // Throws std::invalid_argument (an invalid spec, precision_bits < 64), as apply.
  explicit ApplyPlan(const Spec& spec, Options options = {});
  ApplyPlan(ApplyPlan&&) noexcept;
  ApplyPlan& operator=(ApplyPlan&&) noexcept;
  ~ApplyPlan();

  const Spec& spec() const;
  const Options& options() const;
  // apply's outputs for `input` into `out` (input.size() values), every value written once:
  // rotated dims correctly rounded, pass-through dims copied. `out` may be `input` itself (in
  // place), else the two must not overlap. Shape and sizes are checked as by apply (throws
  // std::invalid_argument).
  void apply_into(Shape shape, std::span<const std::int64_t> positions, std::span<const double> input,
                  std::span<double> out) const;
  // apply's outputs as a new vector (sizes checked first, then one pass from the input).
  std::vector<double> apply(Shape shape, std::span<const std::int64_t> positions, std::span<const double> input) const;
  // evaluate's values (below) for `input` into `rounded` and `exact` (input.size() values each),
  // with this plan's constants: a judge that evaluates call after call builds one plan (and its
  // MPFR schedule) once, not once per call and thread. A plan of Path::fast below kFastPlanBits
  // bits evaluates as the free evaluate_into does (pairs outside the fast domain at 256 bits):
  // build it with for_evaluation to pay for that once too. Threads may share one plan.
  void evaluate_into(Shape shape, std::span<const std::int64_t> positions, std::span<const double> input,
                     std::span<double> rounded, std::span<long double> exact) const;
  // The plan whose evaluate_into needs no other constants: options as given, at least 256 bits for
  // the exact model's fast path (its cold path's pairs; correct rounding is unique, so apply_into's
  // outputs are those of ApplyPlan(spec, options)).
  static ApplyPlan for_evaluation(const Spec& spec, Options options = {});

  // One token's rows at `position` (position_components(spec) values) rotated as apply_into rotates
  // them, with cos·A and sin·A of every pair given by the caller (reference/consecutive.h computes
  // them by angle addition): `heads` rows of head_dim values from `input` into `out` (in place
  // allowed), and with `exact` non-null evaluate's exact values. Each output decided by the
  // rounding test with trig's bound, the others (and special values) by apply's general rules and
  // its MPFR cold path, so the outputs are apply_into's bits whenever trig's bound holds. For
  // Path::fast plans of the exact model at a nonzero angle (the caller's to ensure). Returns the
  // number of pairs that left the hot loop (special values, undecided roundings).
  std::int64_t rotate_token(std::span<const std::int64_t> position, const TrigRow& trig, std::int64_t heads,
                            const double* input, double* out, long double* exact = nullptr) const;

  struct Constants;  // opaque (rope.cpp): the spec, the options, the MPFR and the fast path's constants

 private:
  std::unique_ptr<const Constants> constants_;
};

// apply of a tensor without a tensor-sized buffer of doubles (the CLI from a .npy file, the Python
// module from a float32 array): tokens in chunks of at most kApplyChunkValues values (a token that
// holds more: its heads in chunks of at most kApplyChunkValues values, one head when a head holds
// more), each `load`ed into a buffer reused chunk after chunk (values [first, first +
// size) of the row-major [tokens, heads, head_dim] tensor, as doubles: the caller rounds them to the
// input dtype), rotated in place by `plan`, and passed to `store` (the outputs of the same values).
// Throws std::invalid_argument for sizes as apply; what load and store throw propagates.
inline constexpr std::int64_t kApplyChunkValues = std::int64_t{1} << 15;  // 256 KiB of doubles: stays in L2
void apply_chunked(const ApplyPlan& plan, Shape shape, std::span<const std::int64_t> positions,
                   const std::function<void(std::int64_t first, std::span<double> values)>& load,
                   const std::function<void(std::int64_t first, std::span<const double> values)>& store);

// What a judge needs of one call, computed once: the correctly rounded outputs (as `apply`) and
// the exact values in long double (error ≪ u·ρ of every dtype: docs/design.md "Error metric"), so
// that e can be measured against the exact rotation. Pairs with a non-finite input have exact
// value 0 (they are judged by class only); pass-through dims hold the input.
// Under Model::f32_recipe both are the recipe's correctly rounded result.
// Path::fast: |exact − true| ≤ 2^-61·|A|·ρ per component (A the attention factor, ρ = √(x² + y²)
// of the input pair; reference/README.md "How `apply` is correctly rounded").
struct Evaluation {
  std::vector<double> rounded;
  std::vector<long double> exact;
};
Evaluation evaluate(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                    std::span<const double> input, Options options = {});
// The same into `rounded` and `exact` (input.size() values each: a judge's workspace, reused chunk
// after chunk).
void evaluate_into(const Spec& spec, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input,
                   std::span<double> rounded, std::span<long double> exact, Options options = {});

// θ'_j for every pair (rotary_dim/2 values), at `precision_bits`.
std::vector<Real> frequencies(const Spec& spec, int precision_bits);

// The rotation angle of pair j for one token's position tuple (sign included for `inverse`).
Real angle(const Spec& spec, std::span<const std::int64_t> position, int pair_index, int precision_bits);

// Which two dims of a head form pair j: (2j, 2j+1) interleaved, (j, j + rotary_dim/2) half.
struct PairDims {
  int first;
  int second;
};
PairDims pair_dims(const Spec& spec, int pair_index);

}  // namespace ropecheck::reference
