#include "gate/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/error_metric.h"
#include "reference/multiprecision.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::gate {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Roundings that may each underflow, each adding at most 2^(emin−p) absolute: a careful
// evaluation's two products and difference (gate/tolerance.cpp; Coq gate_exact_default), and
// under the f32-recipe model also the golden recipe value's own rounding (Coq gate_recipe_default:
// 5·u·ρ + 4·2^(emin−p)).
constexpr int underflow_roundings(Model model) { return model == Model::exact ? 3 : 4; }

// NaN, +Inf, −Inf or finite: the special-value classes that must agree.
int value_class(double v) {
  if (std::isnan(v)) return 0;
  if (std::isinf(v)) return v > 0 ? 1 : 2;
  return 3;
}

bool bit_identical(double a, double b, Dtype dtype) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (!reference::representable(a, dtype)) return false;
  return reference::encode_bits(a, dtype) == reference::encode_bits(b, dtype);
}

}  // namespace

namespace detail {

void GroupTally::record_case(Case c) {
  const bool seen = std::any_of(result.worst.begin(), result.worst.end(),
                                [&](const Case& w) { return w.test_id == c.test_id && w.suite == c.suite; });
  if (seen) c.severity = std::min(c.severity, std::numeric_limits<double>::max()) * 0.5;
  auto at = std::find_if(result.worst.begin(), result.worst.end(), [&](const Case& w) { return w.severity < c.severity; });
  if (at == result.worst.end() && static_cast<int>(result.worst.size()) >= worst_cases_) return;
  result.worst.insert(at, std::move(c));
  if (static_cast<int>(result.worst.size()) > worst_cases_) result.worst.pop_back();
}

void GroupTally::record_position(std::int64_t position, bool pass) {
  tested_positions_.push_back(position);
  result.max_position = std::max(result.max_position, position);
  if (!pass && (!first_failing_position_ || position < *first_failing_position_)) first_failing_position_ = position;
}

Case GroupTally::new_case(std::int64_t test_id, std::string kind, std::int64_t position) const {
  Case c;
  c.suite = result.suite;
  c.test_id = test_id;
  c.kind = std::move(kind);
  c.position = position;
  return c;
}

void GroupTally::record_whole_test_case(std::int64_t test_id, std::string kind, std::string message,
                                        std::int64_t position) {
  Case c = new_case(test_id, std::move(kind), position);
  c.message = std::move(message);
  c.severity = kInf;
  c.e = kInf;
  record_case(std::move(c));
}

void GroupTally::fail_test(std::int64_t test_id, std::int64_t lowest, std::string kind, std::string message) {
  ++result.tests;
  ++result.tests_failed;
  record_position(lowest, false);
  record_whole_test_case(test_id, kind, message, lowest);
  result.outcomes.push_back({test_id, "fail", std::move(kind) + ": " + std::move(message)});
}

void GroupTally::skip_test(std::int64_t test_id, std::string reason) {
  ++result.tests;
  ++result.tests_skipped;
  result.outcomes.push_back({test_id, "skip", std::move(reason)});
}

GroupResult GroupTally::finish() {
  if (result.tests_failed > 0) {
    result.verdict = "fail";
  } else if (result.tests == result.tests_skipped) {
    result.verdict = "skip";
  } else {
    result.verdict = "pass";
  }
  std::optional<std::int64_t> horizon;
  for (std::int64_t p : tested_positions_) {
    if (first_failing_position_ && p >= *first_failing_position_) continue;
    if (!horizon || p > *horizon) horizon = p;
  }
  result.horizon = horizon;
  std::sort(result.points.begin(), result.points.end(),
            [](const Point& l, const Point& r) { return l.position < r.position || (l.position == r.position && l.e < r.e); });
  return std::move(result);
}

}  // namespace detail

std::int64_t token_position(const golden::RopeTest& test, const Spec& spec, std::int64_t token) {
  const int components = position_components(spec);
  std::int64_t p = std::numeric_limits<std::int64_t>::min();
  for (int k = 0; k < components; ++k) {
    const std::size_t i = static_cast<std::size_t>(token * components + k);
    if (i < test.positions.size()) p = std::max(p, test.positions[i]);
  }
  return p == std::numeric_limits<std::int64_t>::min() ? 0 : p;
}

GroupComparer::GroupComparer(std::string suite, int index, const golden::Group& group, CompareOptions options)
    : group_(group), options_(std::move(options)), tally_(options_.worst_cases) {
  tally_.result.suite = std::move(suite);
  tally_.result.index = index;
  tally_.result.spec = to_string(group.spec);
  tally_.result.dtype = group.spec.dtype;
  std::optional<Tolerance> claimed;
  if (!options_.tolerance && options_.claimed_bound) claimed = options_.claimed_bound(group.spec);
  tally_.result.tolerance = options_.tolerance ? *options_.tolerance
                      : claimed          ? *claimed
                                         : default_tolerance(options_.model, group.spec);
  attention_ = attention_factor<double>(group.spec);
  tally_.result.attention_magnitude = std::max(1.0, std::fabs(attention_));
}

void GroupComparer::add(const golden::RopeTest& test, std::span<const double> output) {
  const Spec& spec = group_.spec;
  ++tally_.result.tests;
  const std::int64_t elements = test.tokens * test.heads * test.head_dim;
  if (static_cast<std::int64_t>(output.size()) != elements) {
    --tally_.result.tests;
    fail(test, "shape",
         "expected " + std::to_string(elements) + " output values (tokens " + std::to_string(test.tokens) + " x heads " +
             std::to_string(test.heads) + " x head_dim " + std::to_string(test.head_dim) + "), got " +
             std::to_string(output.size()));
    return;
  }
  const reference::Shape shape{test.tokens, test.heads, test.head_dim};
  const Tolerance& tol = tally_.result.tolerance;
  const reference::Format format = reference::format_of(spec.dtype);
  const double u = std::ldexp(1.0, -format.precision);
  // Gradual underflow: each rounding into the subnormal range errs by up to 2^(emin−p) absolute,
  // which no multiple of u·ρ bounds when ρ is itself tiny (proofs/implementation.h, ErrorClaim).
  // (In Real: for f64, 2^(emin−p) = 2^-1075 is below the smallest double.)
  const reference::Real underflow = underflow_roundings(options_.model) * reference::Real(std::ldexp(1.0, format.emin - format.precision + 1)) / 2;
  const double smallest_normal = std::ldexp(1.0, format.emin);

  // The value each element is judged against: exact values (Real) for e, correctly rounded ones for
  // ULP and special values.
  std::vector<double> rounded;
  std::vector<reference::Real> exact;
  reference::PrecisionScope scope(options_.precision_bits);
  if (options_.model == Model::exact) {
    rounded = test.expected;
    std::vector<double> finite_input = test.input;
    for (double& v : finite_input) {
      if (!std::isfinite(v)) v = 0;  // those pairs are judged by class only
    }
    exact = reference::rotate_exact(spec, shape, test.positions, finite_input, options_.precision_bits,
                                    reference::Form::elementwise);
  } else {
    if (test.expected_f32_recipe) {
      rounded = *test.expected_f32_recipe;
    } else {
      reference::Options o;
      o.model = reference::Model::f32_recipe;
      rounded = reference::apply(spec, shape, test.positions, test.input, o);
    }
    exact.reserve(rounded.size());
    for (double v : rounded) exact.emplace_back(std::isfinite(v) ? v : 0.0);
  }

  bool test_pass = true;
  double test_worst_e = 0;
  const int pairs = spec.rotary_dim / 2;
  for (std::int64_t t = 0; t < test.tokens; ++t) {
    const std::int64_t position = token_position(test, spec, t);
    bool token_pass = true;
    double token_worst = 0;
    for (std::int64_t h = 0; h < test.heads; ++h) {
      const std::int64_t row = (t * test.heads + h) * test.head_dim;
      auto base_case = [&](const char* kind, int d1, int d2) {
        Case c = tally_.new_case(test.id, kind, position);
        c.token = t;
        c.head = h;
        c.dim = d1;
        c.second_dim = d2;
        return c;
      };
      for (int j = 0; j < pairs; ++j) {
        const reference::PairDims pd = reference::pair_dims(spec, j);
        const std::int64_t i1 = row + pd.first, i2 = row + pd.second;
        const double x = test.input[i1], y = test.input[i2];
        const double a = output[i1], b = output[i2];
        const double ea = rounded[i1], eb = rounded[i2];
        const double got[2] = {a, b};
        const double want[2] = {ea, eb};
        const bool input_special = !std::isfinite(x) || !std::isfinite(y);
        bool special = input_special;
        bool special_ok = true;
        double diff = 0, ulp_error = 0;
        reference::Real diff_exact(0);
        bool measured = false;
        for (int k = 0; k < 2; ++k) {
          const std::int64_t i = k == 0 ? i1 : i2;
          if (input_special || !std::isfinite(want[k]) || !std::isfinite(got[k])) {
            special = true;
            if (value_class(got[k]) != value_class(want[k])) special_ok = false;
            continue;
          }
          const reference::Real d = abs(reference::Real(got[k]) - exact[static_cast<std::size_t>(i)]);
          if (d > diff_exact) diff_exact = d;
          diff = static_cast<double>(diff_exact);
          ulp_error = std::max(ulp_error, std::fabs(got[k] - want[k]) / reference::ulp(want[k], spec.dtype));
          measured = true;
        }
        double e = 0;
        bool pair_pass = special_ok;
        bool counted = false;  // does this pair's metric enter the worst-e statistics and the plot
        if (measured) {
          const reference::Real rho = sqrt(reference::Real(x) * reference::Real(x) + reference::Real(y) * reference::Real(y));
          const double rho_d = static_cast<double>(rho);
          // THE metric (reference/error_metric.h), against the exact pair (long double: ≤ 2^-64·|A|).
          e = reference::pair_error(a, b, static_cast<long double>(exact[static_cast<std::size_t>(i1)]),
                                    static_cast<long double>(exact[static_cast<std::size_t>(i2)]), x, y, spec.dtype,
                                    attention_);
          // e ≤ tol, or within the same bound plus the gradual-underflow allowance (compared in Real).
          const bool within = tol.kind == Tolerance::Kind::e
                                  ? e <= tol.value || diff_exact <= tol.value * tally_.result.attention_magnitude * u * rho + underflow
                                  : ulp_error <= tol.value;
          pair_pass = pair_pass && within;
          ++tally_.result.pairs_checked;
          // Where ρ is subnormal, e measures the underflow quantum rather than the implementation:
          // such pairs are judged (above) but count in worst e only when they fail.
          counted = rho_d >= smallest_normal || !pair_pass;
          if (counted) tally_.result.worst_e = std::max(tally_.result.worst_e, e);
          tally_.result.worst_ulp = std::max(tally_.result.worst_ulp, ulp_error);
          tally_.result.worst_abs = std::max(tally_.result.worst_abs, diff);
        }
        if (special) ++tally_.result.special_checked;
        if (!special_ok) ++tally_.result.special_failed;
        const double metric = tol.kind == Tolerance::Kind::e ? e : ulp_error;
        if (counted || !special_ok) token_worst = std::max(token_worst, special_ok ? metric : kInf);
        if (!pair_pass) {
          ++tally_.result.pairs_failed;
          Case c = base_case(special_ok ? "tolerance" : "special", pd.first, pd.second);
          c.input_x = x;
          c.input_y = y;
          c.expected_a = ea;
          c.expected_b = eb;
          c.got_a = a;
          c.got_b = b;
          c.e = e;
          c.ulp = ulp_error;
          c.abs = diff;
          c.severity = special_ok ? metric : kInf;
          c.message = special_ok ? (tol.kind == Tolerance::Kind::e ? "e = " : "ulp = ") + std::to_string(metric) + " > " +
                                       std::to_string(tol.value)
                                 : "special values disagree: expected (" + reference::to_hex(ea) + ", " +
                                       reference::to_hex(eb) + "), got (" + reference::to_hex(a) + ", " +
                                       reference::to_hex(b) + ")";
          tally_.record_case(std::move(c));
          token_pass = false;
        }
      }
      for (std::int64_t i = spec.rotary_dim; i < test.head_dim; ++i) {
        ++tally_.result.passthrough_checked;
        if (bit_identical(output[row + i], test.input[row + i], spec.dtype)) continue;
        ++tally_.result.passthrough_failed;
        Case c = base_case("passthrough", static_cast<int>(i), -1);
        c.input_x = test.input[row + i];
        c.expected_a = test.input[row + i];
        c.got_a = output[row + i];
        c.severity = kInf;
        c.message = "pass-through dim " + std::to_string(i) + " changed: expected " + reference::to_hex(c.expected_a) +
                    ", got " + reference::to_hex(c.got_a);
        tally_.record_case(std::move(c));
        token_pass = false;
      }
    }
    tally_.record_position(position, token_pass);
    tally_.result.points.push_back({position, token_worst, token_pass});
    test_pass = test_pass && token_pass;
    test_worst_e = std::max(test_worst_e, token_worst);
  }
  if (test_pass) {
    tally_.result.outcomes.push_back({test.id, "pass", ""});
  } else {
    ++tally_.result.tests_failed;
    tally_.result.outcomes.push_back({test.id, "fail", "out of tolerance or wrong special/pass-through values (worst " +
                                                     std::string(tol.kind == Tolerance::Kind::e ? "e" : "ulp") + " " +
                                                     std::to_string(test_worst_e) + ")"});
  }
}

void GroupComparer::fail(const golden::RopeTest& test, std::string kind, std::string message) {
  std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t t = 0; t < test.tokens; ++t) lowest = std::min(lowest, token_position(test, group_.spec, t));
  if (test.tokens == 0) lowest = 0;
  tally_.fail_test(test.id, lowest, std::move(kind), std::move(message));
}

void GroupComparer::skip(const golden::RopeTest& test, std::string reason) { tally_.skip_test(test.id, std::move(reason)); }

GroupResult GroupComparer::finish() { return tally_.finish(); }

}  // namespace ropecheck::gate
