// THE rule that judges one rotated pair, and THE error metric it measures with (docs/design.md "Error
// metric"). Every judging path — check, run, sweep, props' tolerances, fuzz, the GoogleTest matcher,
// the kernels' own tests — calls judge_pair; nothing else classifies or measures a pair.
//
// The metric is normwise, per rotated pair: rotation preserves each pair's norm, so a component can
// be tiny after rotation while its inputs are large (cancellation), and element ULPs then say
// nothing useful:
//
//     e = max(|a − A|, |b − B|) / (u · ρ · max(1, |g|)),   ρ = sqrt(x² + y²),  u = 2^-p
//
// (a, b) the candidate's output pair, (A, B) the exact result, (x, y) the input pair,
// p = 53, 24, 11, 8 for f64, f32, f16, bf16, and g the spec's attention factor (outputs are scaled
// by g, so their rounding errors are too). A correctly rounded result has e ≤ 1 (half an ulp of A
// is at most u·|A| ≤ u·ρ·|g|).
//
// The rule (judge/README.md "The pair rule", with the reason for each decision):
//  - Domain, from the inputs alone: `special_input` (x or y NaN/±Inf), `near_overflow`
//    (√2·ρ·max(1,|g|) above the dtype's largest value: even a careful evaluation may overflow),
//    `subnormal` (ρ below the smallest normal: e measures the underflow quantum, not the
//    implementation), `ordinary` (everything else). Only ordinary pairs enter the accuracy figures
//    (worst e, the horizon); failures of the other domains still fail the verdict, counted apart.
//  - special_input: each output component must be of the class (NaN, +Inf, −Inf, finite) of the
//    correctly rounded result under the IEEE policy of reference/README.md "Special values".
//  - finite inputs: NaN where a number is expected is a special-value failure; ±Inf is accepted
//    when a value within the tolerance of the exact one rounds to that infinity (overflow at the
//    threshold, judged by the tolerance as underflow is), and is a special-value failure otherwise;
//    finite outputs pass when e ≤ tolerance, or when max|a − A| ≤ tolerance·u·ρ·max(1,|g|) plus
//    `underflow_roundings` quanta 2^(emin−p) (gradual underflow: no multiple of u·ρ bounds it when ρ
//    is itself tiny). An `ulp` tolerance compares element ULPs with the correctly rounded values.
//  - Signed zeros: ±0 compare equal (the sign of a zero result depends on whether the candidate
//    fused a multiply-add, and nothing that consumes RoPE outputs can observe it); with
//    `strict_zeros` a zero must carry the correctly rounded result's IEEE sign.
#pragma once

#include <string>
#include <string_view>

#include "judge/tolerance.h"
#include "spec/spec.h"

namespace ropecheck::judge {

// e of one pair with finite inputs and finite outputs (see above): the exact values in long double
// (≤ 2^-64·|A| from the exact ones: below 2^-10 in e for every dtype). ρ = 0: 0 when the outputs
// equal the exact values, +Inf otherwise.
double normwise_error(double a, double b, long double exact_a, long double exact_b, double x, double y, Dtype dtype,
                      double attention_factor = 1.0);

enum class Domain { ordinary, special_input, near_overflow, subnormal };
std::string_view name(Domain domain);
Domain domain_of(double x, double y, Dtype dtype, double attention_factor);

enum class Failure { none, tolerance, special_value, signed_zero };
std::string_view name(Failure failure);

// What a pair is held to: one per group (spec, model, tolerance, options).
struct PairRule {
  Dtype dtype = Dtype::f32;
  double attention_factor = 1;  // g
  Tolerance tolerance;
  int underflow_roundings = 3;  // judge/tolerance.h underflow_roundings(model)
  bool strict_zeros = false;
  // Whether a failing pair's verdict carries its message. A group's comparer judges without, and
  // judges again with one only the cases it keeps: formatting every failing pair's values was most
  // of a failing check's time.
  bool messages = true;
};

struct Pair {
  double x = 0, y = 0;                   // the input pair (values of the dtype)
  double a = 0, b = 0;                   // the candidate's outputs
  long double exact_a = 0, exact_b = 0;  // the exact outputs (ignored when an input is not finite)
  double rounded_a = 0, rounded_b = 0;   // the correctly rounded outputs, IEEE policy (reference::apply)
  double angle = 0;                      // |m·θ'_j|, for a tolerance that grows with the angle
};

struct PairVerdict {
  Domain domain = Domain::ordinary;
  Failure failure = Failure::none;
  bool measured = false;  // e, ulp and abs were measured (finite inputs, no special-value failure)
  double e = 0;
  double ulp = 0;         // max element ULP error against the correctly rounded values
  double abs = 0;         // max |output − exact|
  double allowed = 0;     // the tolerance at this pair (e or ulp, as the rule's kind)
  std::string message;    // one line, for failures

  bool pass() const { return failure == Failure::none; }
  // Whether the pair enters the accuracy figures (worst e, horizon, plot).
  bool ordinary() const { return domain == Domain::ordinary; }
};

PairVerdict judge_pair(const Pair& pair, const PairRule& rule);

// A certified look at a pair in double precision, for callers that judge millions of pairs and
// record only maxima (the comparer): where judge_pair's verdict is certain to be "ordinary,
// measured, pass" (or "ordinary, measured, fails the tolerance"), it says so and bounds what
// judge_pair would measure, so that the caller may skip judge_pair when those bounds cannot change
// what it records. It decides nothing itself: every pair it is not sure of (f64 data, non-finite
// values, a domain boundary, e near the tolerance or its underflow allowance, strict zeros that
// differ on a passing pair) is neither sure_pass nor sure_fail, for judge_pair.
//
// Bound (f32, f16 and bf16 data, u ≥ 2^-24): with A_d the exact value rounded to double
// (|A_d − A| ≤ 2^-53·|A|, |A| ≤ |g|·ρ), ρ and the unit u·ρ·max(1,|g|) in double (relative error
// ≤ 2^-50) and the differences and the quotient rounded once each, the double e_d satisfies
// |e_d − e| ≤ 2^-48·e + 2^-53/u·1.01 ≤ 2^-48·e + 2^-28.9, and judge_pair's long double e is
// within 2^-60·e of the exact quotient; so e ≤ (e_d + 2^-20)·(1 + 2^-30) = e_high and
// e ≥ (e_d − 2^-20)·(1 − 2^-30) = e_low. Likewise abs ≤ (d + 2^-50·(ρ·max(1,|g|) + d))·(1 + 2^-50)
// = abs_high for the double difference d. The ulp is judge_pair's own expression (double
// arithmetic), the same value. A tolerance failure is sure when e_low exceeds the tolerance plus
// the underflow allowance in e units (its quanta ÷ the double unit, times 1 + 2^-30).
// Machine-checked (proofs/formal/README.md "The screen"): gappa/screen.g bounds every rounding of
// both chains (with binary64 inputs too: e_d = k·e + w, |k − 1| ≤ 1.36·2^-50, |w| ≤ 1.87e-9), and
// coq/GateTolerance.v screen_enclosure and screen_abs_enclosure give e_low ≤ judge_pair's e ≤
// e_high, a sure failure failing judge_pair's test in long double, and abs ≤ abs_high.
struct PairScreen {
  bool sure_pass = false;  // judge_pair would find: ordinary domain, measured, pass
  bool sure_fail = false;  // judge_pair would find: ordinary domain, measured, Failure::tolerance
  double e_low = 0;    // judge_pair's e ≥ e_low
  double e_high = 0;   // judge_pair's e ≤ e_high
  double abs_high = 0; // judge_pair's abs ≤ abs_high
  double ulp = 0;      // judge_pair's ulp, exactly
  double allowed = 0;  // judge_pair's allowed, exactly
};
// What screen_pair compares with, worked out once per rule (the comparer's, per range of tokens):
// the dtype's limits as doubles, max(1, |g|), the underflow allowance's quanta. Per pair they
// were long double loads and conversions, most of the screen's time. The values are those the
// screen computed per pair, so its bounds and decisions are the same.
struct PairScreenRule {
  explicit PairScreenRule(const PairRule& rule);
  PairRule rule;
  double u = 0, smallest_normal = 0, largest = 0;  // the dtype's, as doubles
  double scale = 1;                                // max(1, |g|)
  double underflow = 0;                            // underflow_roundings · 2^(emin−p)
};
// `exact_a`, `exact_b`: the exact outputs rounded to double; the rest as in Pair.
PairScreen screen_pair(double x, double y, double a, double b, double exact_a, double exact_b, double rounded_a,
                       double rounded_b, double angle, const PairScreenRule& screen);
PairScreen screen_pair(double x, double y, double a, double b, double exact_a, double exact_b, double rounded_a,
                       double rounded_b, double angle, const PairRule& rule);

// NaN, +Inf, −Inf or finite (0, 1, 2, 3): the classes special values must agree on (here and in
// the attention comparer).
int value_class(double v);

// A pass-through dim (≥ rotary_dim): the input, bit for bit in the dtype; ±0 equal unless
// `strict_zeros` (as rotated results); NaN matches NaN.
bool passthrough_matches(double got, double input, Dtype dtype, bool strict_zeros);

}  // namespace ropecheck::judge
