#include "judge/group.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "judge/parallel.h"
#include "reference/multiprecision.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::judge {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Inserts `c` into `list` (worst severity first), keeping at most `limit`; a test already listed
// counts at half its severity, so that every failing test appears once before a test appears twice.
void insert_case(std::vector<Case>& list, Case c, int limit) {
  const bool seen = std::any_of(list.begin(), list.end(), [&](const Case& w) { return w.test_id == c.test_id && w.suite == c.suite; });
  if (seen) c.severity = std::min(c.severity, std::numeric_limits<double>::max()) * 0.5;
  auto at = std::find_if(list.begin(), list.end(), [&](const Case& w) { return w.severity < c.severity; });
  if (at == list.end() && static_cast<int>(list.size()) >= limit) return;
  list.insert(at, std::move(c));
  if (static_cast<int>(list.size()) > limit) list.pop_back();
}

}  // namespace

namespace detail {

void GroupTally::record_case(Case c) {
  insert_case(c.accuracy ? accuracy_cases_ : edge_cases_, std::move(c), options_.worst_cases);
}

void GroupTally::record_position(std::int64_t position, bool accurate) {
  tested_positions_.push_back(position);
  result.max_position = std::max(result.max_position, position);
  if (!accurate && (!first_failing_position_ || position < *first_failing_position_)) first_failing_position_ = position;
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
  record_case(std::move(c));
}

void GroupTally::fail_test(std::int64_t test_id, std::int64_t lowest, std::string kind, std::string message) {
  ++result.tests;
  ++result.tests_failed;
  ++result.whole_tests_failed;
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
  result.horizon_complete = !first_failing_position_ && horizon.has_value();
  if (options_.require_horizon && result.verdict != "skip" && result.max_position >= 0 &&
      result.max_position < *options_.require_horizon && result.horizon_complete) {
    result.verdict_reason = "tested positions reach only " + std::to_string(result.max_position) + " < --require-horizon " +
                            std::to_string(*options_.require_horizon) + ": nothing is known above";
  }
  result.worst = std::move(accuracy_cases_);
  result.worst.insert(result.worst.end(), std::make_move_iterator(edge_cases_.begin()), std::make_move_iterator(edge_cases_.end()));
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

Expected expected_values(const Spec& spec, const golden::RopeTest& test, Model model, int precision_bits) {
  Expected out;
  const reference::Shape shape{test.tokens, test.heads, test.head_dim};
  if (judges_exact_values(model)) {
    out.rounded = test.expected;
    std::vector<double> finite_input = test.input;
    for (double& v : finite_input) {
      if (!std::isfinite(v)) v = 0;  // those pairs are judged by class only
    }
    const std::vector<reference::Real> exact =
        reference::rotate_exact(spec, shape, test.positions, finite_input, precision_bits, reference::Form::elementwise);
    out.exact.reserve(exact.size());
    for (const reference::Real& v : exact) out.exact.push_back(static_cast<long double>(v));
    return out;
  }
  if (test.expected_f32_recipe) {
    out.rounded = *test.expected_f32_recipe;
  } else {
    reference::Options o;
    o.model = reference::Model::f32_recipe;
    out.rounded = reference::apply(spec, shape, test.positions, test.input, o);
  }
  out.exact.reserve(out.rounded.size());
  for (double v : out.rounded) out.exact.push_back(std::isfinite(v) ? v : 0.0L);
  return out;
}

Expected expected_values(const Spec& spec, reference::Shape shape, std::span<const std::int64_t> positions,
                         std::span<const double> input, Model model, int threads) {
  const int components = position_components(spec);
  const std::int64_t token_size = shape.heads * shape.head_dim;
  reference::Options o;
  o.model = judges_exact_values(model) ? reference::Model::exact : reference::Model::f32_recipe;
  const std::vector<TokenRange> ranges = token_ranges(shape.tokens, threads);
  std::vector<reference::Evaluation> parts(ranges.size());
  parallel_for(ranges.size(), threads, [&](std::size_t w) {
    const auto [t0, t1] = ranges[w];
    parts[w] = reference::evaluate(spec, reference::Shape{t1 - t0, shape.heads, shape.head_dim},
                                   positions.subspan(static_cast<std::size_t>(t0 * components), static_cast<std::size_t>((t1 - t0) * components)),
                                   input.subspan(static_cast<std::size_t>(t0 * token_size), static_cast<std::size_t>((t1 - t0) * token_size)), o);
  });
  if (parts.size() == 1) return Expected{std::move(parts[0].exact), std::move(parts[0].rounded)};
  Expected out;
  out.exact.reserve(input.size());
  out.rounded.reserve(input.size());
  for (reference::Evaluation& part : parts) {
    out.exact.insert(out.exact.end(), part.exact.begin(), part.exact.end());
    out.rounded.insert(out.rounded.end(), part.rounded.begin(), part.rounded.end());
  }
  return out;
}

GroupComparer::GroupComparer(std::string suite, int index, const golden::Group& group, Model model, Tolerance tolerance,
                             GroupOptions options)
    : group_(group), tally_(std::move(options)) {
  rule_.dtype = group.spec.dtype;
  rule_.attention_factor = attention_factor<double>(group.spec);
  rule_.tolerance = std::move(tolerance);
  rule_.underflow_roundings = underflow_roundings(model);
  rule_.strict_zeros = tally_.options().strict_zeros;
  GroupResult& r = tally_.result;
  r.suite = std::move(suite);
  r.index = index;
  r.spec = to_string(group.spec);
  r.dtype = group.spec.dtype;
  r.tolerance = rule_.tolerance;
  r.attention_magnitude = std::max(1.0, std::fabs(rule_.attention_factor));
  for (int j = 0; j < group.spec.rotary_dim / 2; ++j) r.max_frequency = std::max(r.max_frequency, frequency<double>(group.spec, j));
}

void GroupComparer::add(const golden::RopeTest& test, std::span<const double> output, const Expected& expected) {
  const Spec& spec = group_.spec;
  GroupResult& r = tally_.result;
  const GroupOptions& options = tally_.options();
  const std::int64_t elements = test.tokens * test.heads * test.head_dim;
  if (static_cast<std::int64_t>(output.size()) != elements) {
    fail(test, "shape",
         "expected " + std::to_string(elements) + " output values (tokens " + std::to_string(test.tokens) + " x heads " +
             std::to_string(test.heads) + " x head_dim " + std::to_string(test.head_dim) + "), got " +
             std::to_string(output.size()));
    return;
  }
  const bool e_kind = rule_.tolerance.kind == Tolerance::Kind::e;
  const bool angle_dependent = rule_.tolerance.per_radian != 0;
  std::vector<long double> theta;  // θ'_j, for a tolerance that grows with the angle
  if (angle_dependent) {
    for (int j = 0; j < spec.rotary_dim / 2; ++j) theta.push_back(frequency<long double>(spec, j));
  }
  const int pairs = spec.rotary_dim / 2;
  const int components = position_components(spec);
  bool test_pass = true, judged_any = false;
  double test_worst = 0;
  for (std::int64_t t = 0; t < test.tokens; ++t) {
    const std::int64_t position = token_position(test, spec, t);
    if (options.max_position && position > *options.max_position) {
      ++r.tokens_beyond_max_position;
      continue;
    }
    judged_any = true;
    // Ordinary failures above --require-horizon are reported, and do not fail the verdict.
    const bool required = !options.require_horizon || position <= *options.require_horizon;
    bool any_ordinary = false, accurate = true;
    double token_worst = 0;
    for (std::int64_t h = 0; h < test.heads; ++h) {
      const std::int64_t row = (t * test.heads + h) * test.head_dim;
      for (int j = 0; j < pairs; ++j) {
        const reference::PairDims pd = reference::pair_dims(spec, j);
        const std::size_t i1 = static_cast<std::size_t>(row + pd.first), i2 = static_cast<std::size_t>(row + pd.second);
        Pair pair;
        pair.x = test.input[i1];
        pair.y = test.input[i2];
        pair.a = output[i1];
        pair.b = output[i2];
        pair.exact_a = expected.exact[i1];
        pair.exact_b = expected.exact[i2];
        pair.rounded_a = expected.rounded[i1];
        pair.rounded_b = expected.rounded[i2];
        if (angle_dependent) {
          const std::int64_t m = test.positions[static_cast<std::size_t>(t * components + position_component(spec, j))];
          pair.angle = static_cast<double>(std::fabs(static_cast<long double>(m) * theta[static_cast<std::size_t>(j)]));
        }
        const PairVerdict v = judge_pair(pair, rule_);
        ++r.pairs_checked;
        if (v.domain == Domain::special_input) ++r.special_checked;
        const double metric = e_kind ? v.e : v.ulp;
        if (v.ordinary()) {
          ++r.ordinary_checked;
          any_ordinary = true;
          if (v.measured) {
            token_worst = std::max(token_worst, metric);
            if (v.e > r.worst_e || r.worst_e_position < 0) {
              r.worst_e = std::max(r.worst_e, v.e);
              r.worst_e_position = position;
              r.worst_e_pair = j;
            }
            r.worst_ulp = std::max(r.worst_ulp, v.ulp);
            if (v.allowed > 0) r.worst_margin = std::max(r.worst_margin, metric / v.allowed);
            r.worst_abs = std::max(r.worst_abs, v.abs);
          }
        }
        if (v.pass()) continue;
        ++r.pairs_failed;
        const bool accuracy = v.ordinary() && v.failure != Failure::signed_zero;
        bool counts = true;
        if (accuracy) {
          ++r.ordinary_failed;
          accurate = false;
          if (!required) {
            ++r.beyond_required_failed;
            counts = false;
          }
        } else if (v.failure == Failure::special_value) {
          ++r.special_failed;
        } else if (v.failure == Failure::signed_zero) {
          ++r.signed_zero_failed;
        } else {
          ++r.edge_failed;
        }
        test_pass = test_pass && !counts;
        Case c = tally_.new_case(test.id, std::string(name(v.failure)), position);
        c.accuracy = accuracy;
        c.domain = std::string(name(v.domain));
        c.token = t;
        c.head = h;
        c.dim = pd.first;
        c.second_dim = pd.second;
        c.input_x = pair.x;
        c.input_y = pair.y;
        c.expected_a = pair.rounded_a;
        c.expected_b = pair.rounded_b;
        c.got_a = pair.a;
        c.got_b = pair.b;
        c.e = v.e;
        c.ulp = v.ulp;
        c.abs = v.abs;
        c.tolerance = v.allowed;
        c.severity = v.measured ? metric : kInf;
        c.message = v.message + (counts ? "" : " (above --require-horizon " + std::to_string(*options.require_horizon) + ")");
        if (!v.ordinary() && v.failure == Failure::tolerance) c.message += " (" + std::string(name(v.domain)) + " input pair)";
        tally_.record_case(std::move(c));
      }
      for (std::int64_t i = spec.rotary_dim; i < test.head_dim; ++i) {
        ++r.passthrough_checked;
        const std::size_t at = static_cast<std::size_t>(row + i);
        if (passthrough_matches(output[at], test.input[at], spec.dtype, rule_.strict_zeros)) continue;
        ++r.passthrough_failed;
        test_pass = false;
        Case c = tally_.new_case(test.id, "passthrough", position);
        c.token = t;
        c.head = h;
        c.dim = static_cast<int>(i);
        c.input_x = test.input[at];
        c.expected_a = test.input[at];
        c.got_a = output[at];
        c.severity = kInf;
        c.message = "pass-through dim " + std::to_string(i) + " changed: expected " + reference::to_hex(c.expected_a) +
                    ", got " + reference::to_hex(c.got_a);
        tally_.record_case(std::move(c));
      }
    }
    if (any_ordinary) {
      tally_.record_position(position, accurate);
      r.points.push_back({position, token_worst, accurate});
      test_worst = std::max(test_worst, token_worst);
    }
  }
  if (!judged_any) {
    skip(test, "every position above --max-position " + std::to_string(*options.max_position));
    ++r.skipped_by_position;
    return;
  }
  ++r.tests;
  if (test_pass) {
    r.outcomes.push_back({test.id, "pass", ""});
  } else {
    ++r.tests_failed;
    r.outcomes.push_back({test.id, "fail", "out of tolerance or wrong special/pass-through values (worst " +
                                               std::string(e_kind ? "e" : "ulp") + " " + std::to_string(test_worst) + ")"});
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

}  // namespace ropecheck::judge
