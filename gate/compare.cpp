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

void keep_worst(std::vector<Case>& worst, Case c, int limit) {
  const bool seen = std::any_of(worst.begin(), worst.end(), [&](const Case& w) { return w.test_id == c.test_id && w.suite == c.suite; });
  if (seen) c.severity = std::min(c.severity, std::numeric_limits<double>::max()) * 0.5;
  auto at = std::find_if(worst.begin(), worst.end(), [&](const Case& w) { return w.severity < c.severity; });
  if (at == worst.end() && static_cast<int>(worst.size()) >= limit) return;
  worst.insert(at, std::move(c));
  if (static_cast<int>(worst.size()) > limit) worst.pop_back();
}

void finish_group(GroupResult& result, const std::vector<std::int64_t>& tested_positions,
                  const std::optional<std::int64_t>& first_failing_position) {
  if (result.tests_failed > 0) {
    result.verdict = "fail";
  } else if (result.tests == result.tests_skipped) {
    result.verdict = "skip";
  } else {
    result.verdict = "pass";
  }
  std::optional<std::int64_t> horizon;
  for (std::int64_t p : tested_positions) {
    if (first_failing_position && p >= *first_failing_position) continue;
    if (!horizon || p > *horizon) horizon = p;
  }
  result.horizon = horizon;
  std::sort(result.points.begin(), result.points.end(),
            [](const Point& l, const Point& r) { return l.position < r.position || (l.position == r.position && l.e < r.e); });
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
    : group_(group), options_(std::move(options)) {
  result_.suite = std::move(suite);
  result_.index = index;
  result_.spec = to_string(group.spec);
  result_.dtype = group.spec.dtype;
  std::optional<Tolerance> claimed;
  if (!options_.tolerance && options_.claimed_bound) claimed = options_.claimed_bound(group.spec);
  result_.tolerance = options_.tolerance ? *options_.tolerance
                      : claimed          ? *claimed
                                         : default_tolerance(options_.model, group.spec.dtype);
  attention_ = attention_factor<double>(group.spec);
  result_.attention_magnitude = std::max(1.0, std::fabs(attention_));
}

void GroupComparer::record_case(Case c) { detail::keep_worst(result_.worst, std::move(c), options_.worst_cases); }

void GroupComparer::record_position(std::int64_t position, bool pass) {
  tested_positions_.push_back(position);
  result_.max_position = std::max(result_.max_position, position);
  if (!pass && (!first_failing_position_ || position < *first_failing_position_)) first_failing_position_ = position;
}

void GroupComparer::add(const golden::RopeTest& test, std::span<const double> output) {
  const Spec& spec = group_.spec;
  ++result_.tests;
  const std::int64_t elements = test.tokens * test.heads * test.head_dim;
  if (static_cast<std::int64_t>(output.size()) != elements) {
    --result_.tests;
    fail(test, "shape",
         "expected " + std::to_string(elements) + " output values (tokens " + std::to_string(test.tokens) + " x heads " +
             std::to_string(test.heads) + " x head_dim " + std::to_string(test.head_dim) + "), got " +
             std::to_string(output.size()));
    return;
  }
  const reference::Shape shape{test.tokens, test.heads, test.head_dim};
  const Tolerance& tol = result_.tolerance;
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
        Case c;
        c.suite = result_.suite;
        c.test_id = test.id;
        c.kind = kind;
        c.position = position;
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
                                  ? e <= tol.value || diff_exact <= tol.value * result_.attention_magnitude * u * rho + underflow
                                  : ulp_error <= tol.value;
          pair_pass = pair_pass && within;
          ++result_.pairs_checked;
          // Where ρ is subnormal, e measures the underflow quantum rather than the implementation:
          // such pairs are judged (above) but count in worst e only when they fail.
          counted = rho_d >= smallest_normal || !pair_pass;
          if (counted) result_.worst_e = std::max(result_.worst_e, e);
          result_.worst_ulp = std::max(result_.worst_ulp, ulp_error);
          result_.worst_abs = std::max(result_.worst_abs, diff);
        }
        if (special) ++result_.special_checked;
        if (!special_ok) ++result_.special_failed;
        const double metric = tol.kind == Tolerance::Kind::e ? e : ulp_error;
        if (counted || !special_ok) token_worst = std::max(token_worst, special_ok ? metric : kInf);
        if (!pair_pass) {
          ++result_.pairs_failed;
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
          record_case(std::move(c));
          token_pass = false;
        }
      }
      for (std::int64_t i = spec.rotary_dim; i < test.head_dim; ++i) {
        ++result_.passthrough_checked;
        if (bit_identical(output[row + i], test.input[row + i], spec.dtype)) continue;
        ++result_.passthrough_failed;
        Case c = base_case("passthrough", static_cast<int>(i), -1);
        c.input_x = test.input[row + i];
        c.expected_a = test.input[row + i];
        c.got_a = output[row + i];
        c.severity = kInf;
        c.message = "pass-through dim " + std::to_string(i) + " changed: expected " + reference::to_hex(c.expected_a) +
                    ", got " + reference::to_hex(c.got_a);
        record_case(std::move(c));
        token_pass = false;
      }
    }
    record_position(position, token_pass);
    result_.points.push_back({position, token_worst, token_pass});
    test_pass = test_pass && token_pass;
    test_worst_e = std::max(test_worst_e, token_worst);
  }
  if (test_pass) {
    result_.outcomes.push_back({test.id, "pass", ""});
  } else {
    ++result_.tests_failed;
    result_.outcomes.push_back({test.id, "fail", "out of tolerance or wrong special/pass-through values (worst " +
                                                     std::string(tol.kind == Tolerance::Kind::e ? "e" : "ulp") + " " +
                                                     std::to_string(test_worst_e) + ")"});
  }
}

void GroupComparer::fail(const golden::RopeTest& test, std::string kind, std::string message) {
  ++result_.tests;
  ++result_.tests_failed;
  std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t t = 0; t < test.tokens; ++t) lowest = std::min(lowest, token_position(test, group_.spec, t));
  if (test.tokens == 0) lowest = 0;
  record_position(lowest, false);
  Case c;
  c.suite = result_.suite;
  c.test_id = test.id;
  c.kind = kind;
  c.message = message;
  c.position = lowest;
  c.severity = kInf;
  c.e = kInf;
  record_case(std::move(c));
  result_.outcomes.push_back({test.id, "fail", std::move(kind) + ": " + std::move(message)});
}

void GroupComparer::skip(const golden::RopeTest& test, std::string reason) {
  ++result_.tests;
  ++result_.tests_skipped;
  result_.outcomes.push_back({test.id, "skip", std::move(reason)});
}

GroupResult GroupComparer::finish() {
  detail::finish_group(result_, tested_positions_, first_failing_position_);
  return std::move(result_);
}

}  // namespace ropecheck::gate
