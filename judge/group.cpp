#include "judge/group.h"

#include <algorithm>
#include <memory>
#include <cmath>
#include <limits>

#include "base/parallel.h"
#include "reference/multiprecision.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::judge {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The case of a pair the rule fails (never Failure::none: such a pair lists no case).
CaseKind case_kind(Failure failure) {
  switch (failure) {
    case Failure::special_value:
      return CaseKind::special_value;
    case Failure::signed_zero:
      return CaseKind::signed_zero;
    case Failure::none:
    case Failure::tolerance:
      break;
  }
  return CaseKind::tolerance;
}

}  // namespace

std::string_view name(CaseKind kind) {
  switch (kind) {
    case CaseKind::tolerance:
      return "tolerance";
    case CaseKind::special_value:
      return "special_value";
    case CaseKind::signed_zero:
      return "signed_zero";
    case CaseKind::passthrough:
      return "passthrough";
    case CaseKind::missing:
      return "missing";
    case CaseKind::shape:
      return "shape";
    case CaseKind::status:
      return "status";
    case CaseKind::crash:
      return "crash";
    case CaseKind::timeout:
      return "timeout";
    case CaseKind::abi:
      return "abi";
    case CaseKind::load:
      return "load";
    case CaseKind::guard:
      return "guard";
    case CaseKind::unavailable:
      return "unavailable";
  }
  return "?";
}

Verdict verdict_of(std::int64_t tests, std::int64_t failed, std::int64_t skipped) {
  if (failed > 0) return Verdict::fail;
  return tests == skipped ? Verdict::skip : Verdict::pass;
}

std::optional<std::int64_t> horizon_of(std::span<const std::int64_t> tested, std::optional<std::int64_t> first_failing) {
  std::optional<std::int64_t> horizon;
  for (std::int64_t p : tested) {
    if (first_failing && p >= *first_failing) continue;
    if (!horizon || p > *horizon) horizon = p;
  }
  return horizon;
}

std::string require_horizon_reason(Verdict verdict, std::int64_t max_position, bool horizon_complete,
                                   std::optional<std::int64_t> require_horizon) {
  if (!require_horizon || verdict == Verdict::skip || max_position < 0 || max_position >= *require_horizon || !horizon_complete) return "";
  return "tested positions reach only " + std::to_string(max_position) + " < --require-horizon " + std::to_string(*require_horizon) +
         ": nothing is known above";
}

double second_severity(double severity) { return std::min(severity, std::numeric_limits<double>::max()) * 0.5; }

std::string_view name(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::skip:
      return "skip";
  }
  return "?";
}

namespace detail {

std::size_t GroupTally::case_limit() const { return static_cast<std::size_t>(std::max(settings_.worst_cases, 0)); }

void GroupTally::record_case(Case c) {
  if (!keeps(c.accuracy, c.test_id, c.severity)) return;
  std::vector<Listed>& bucket = (c.accuracy ? accuracy_cases_ : edge_cases_)[c.test_id];
  // Worst first; a tie goes after the cases recorded before it.
  const auto at = std::find_if(bucket.begin(), bucket.end(), [&](const Listed& l) { return l.c.severity < c.severity; });
  bucket.insert(at, Listed{std::move(c), recorded_++});
  if (bucket.size() > case_limit()) bucket.pop_back();
}

bool GroupTally::keeps(bool accuracy, std::int64_t test_id, double severity) const {
  const Buckets& lists = accuracy ? accuracy_cases_ : edge_cases_;
  const auto it = lists.find(test_id);
  if (it == lists.end()) return case_limit() > 0;
  return it->second.size() < case_limit() || it->second.back().c.severity < severity;
}

void GroupTally::merge(GroupTally&& part) {
  GroupResult& r = result;
  const GroupResult& p = part.result;
  // The counts a comparer accumulates per pair and token (tests are counted by the comparer).
  for (std::int64_t GroupResult::*count :
       {&GroupResult::tokens_beyond_max_position, &GroupResult::pairs_checked, &GroupResult::pairs_failed,
        &GroupResult::ordinary_checked, &GroupResult::ordinary_failed, &GroupResult::special_checked, &GroupResult::special_failed,
        &GroupResult::edge_failed, &GroupResult::signed_zero_failed, &GroupResult::passthrough_checked,
        &GroupResult::passthrough_failed, &GroupResult::beyond_required_failed}) {
    r.*count += p.*count;
  }
  // The first pair of the largest e, as judging the part's pairs here one by one would keep it.
  if (p.worst_e_position >= 0 && (p.worst_e > r.worst_e || r.worst_e_position < 0)) {
    r.worst_e = std::max(r.worst_e, p.worst_e);
    r.worst_e_position = p.worst_e_position;
    r.worst_e_pair = p.worst_e_pair;
  }
  r.worst_ulp = std::max(r.worst_ulp, p.worst_ulp);
  r.worst_abs = std::max(r.worst_abs, p.worst_abs);
  r.worst_margin = std::max(r.worst_margin, p.worst_margin);
  r.max_position = std::max(r.max_position, p.max_position);
  r.points.insert(r.points.end(), p.points.begin(), p.points.end());
  tested_positions_.insert(tested_positions_.end(), part.tested_positions_.begin(), part.tested_positions_.end());
  if (part.first_failing_position_ && (!first_failing_position_ || *part.first_failing_position_ < *first_failing_position_)) {
    first_failing_position_ = part.first_failing_position_;
  }
  // The part's kept cases in the order it recorded them: the same lists as recording every case here.
  std::vector<Listed> kept;
  for (Buckets* lists : {&part.accuracy_cases_, &part.edge_cases_}) {
    for (auto& [id, bucket] : *lists) std::move(bucket.begin(), bucket.end(), std::back_inserter(kept));
  }
  std::sort(kept.begin(), kept.end(), [](const Listed& a, const Listed& b) { return a.order < b.order; });
  for (Listed& l : kept) record_case(std::move(l.c));
}

void GroupTally::offset_tokens(std::int64_t first_token) {
  for (Buckets* lists : {&accuracy_cases_, &edge_cases_}) {
    for (auto& [id, bucket] : *lists) {
      for (Listed& l : bucket) l.c.token += first_token;
    }
  }
}

void GroupTally::record_position(std::int64_t position, bool accurate) {
  tested_positions_.push_back(position);
  result.max_position = std::max(result.max_position, position);
  if (!accurate && (!first_failing_position_ || position < *first_failing_position_)) first_failing_position_ = position;
}

Case GroupTally::new_case(std::int64_t test_id, CaseKind kind, std::int64_t position) const {
  Case c;
  c.suite = result.suite;
  c.test_id = test_id;
  c.kind = kind;
  c.position = position;
  return c;
}

void GroupTally::record_whole_test_case(std::int64_t test_id, CaseKind kind, std::string message, std::int64_t position) {
  Case c = new_case(test_id, kind, position);
  c.message = std::move(message);
  c.severity = kInf;
  record_case(std::move(c));
}

void GroupTally::fail_test(std::int64_t test_id, std::int64_t lowest, CaseKind kind, std::string message) {
  ++result.tests;
  ++result.tests_failed;
  ++result.whole_tests_failed;
  if (result.first_whole_test_failure.empty()) {
    result.first_whole_test_failure = "test " + std::to_string(test_id) + ": " + std::string(name(kind)) + ": " + message;
  }
  record_whole_test_case(test_id, kind, message, lowest);
  result.outcomes.push_back({test_id, Verdict::fail, std::string(name(kind)) + ": " + std::move(message)});
}

void GroupTally::skip_test(std::int64_t test_id, std::string reason) {
  ++result.tests;
  ++result.tests_skipped;
  result.outcomes.push_back({test_id, Verdict::skip, std::move(reason)});
}

GroupResult GroupTally::finish() {
  result.verdict = verdict_of(result.tests, result.tests_failed, result.tests_skipped);
  result.horizon = horizon_of(tested_positions_, first_failing_position_);
  result.horizon_complete = !first_failing_position_ && result.horizon.has_value();
  const std::string reason =
      require_horizon_reason(result.verdict, result.max_position, result.horizon_complete, settings_.require_horizon);
  if (!reason.empty()) result.verdict_reason = reason;
  // Each list: a test's worst case at its severity, its others at half; the `worst_cases` worst,
  // ties in recording order.
  result.worst.clear();
  for (Buckets* lists : {&accuracy_cases_, &edge_cases_}) {
    std::vector<Listed> ranked;
    for (auto& [id, bucket] : *lists) {
      for (std::size_t k = 0; k < bucket.size(); ++k) {
        if (k > 0) bucket[k].c.severity = second_severity(bucket[k].c.severity);
        ranked.push_back(std::move(bucket[k]));
      }
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const Listed& a, const Listed& b) {
      return a.c.severity > b.c.severity || (a.c.severity == b.c.severity && a.order < b.order);
    });
    if (ranked.size() > case_limit()) ranked.resize(case_limit());
    for (Listed& l : ranked) result.worst.push_back(std::move(l.c));
  }
  std::sort(result.points.begin(), result.points.end(),
            [](const Point& l, const Point& r) { return l.position < r.position || (l.position == r.position && l.e < r.e); });
  return std::move(result);
}

}  // namespace detail

std::int64_t token_position(std::span<const std::int64_t> positions, const Spec& spec, std::int64_t token) {
  const int components = position_components(spec);
  std::int64_t p = std::numeric_limits<std::int64_t>::min();
  for (int k = 0; k < components; ++k) {
    const std::size_t i = static_cast<std::size_t>(token * components + k);
    if (i < positions.size()) p = std::max(p, positions[i]);
  }
  return p == std::numeric_limits<std::int64_t>::min() ? 0 : p;
}

Expected expected_values(const Spec& spec, const Call& test, Model model, int precision_bits) {
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

namespace {

// The reference's options for a model: the exact values, or the f32 recipe's rounded ones.
reference::Options evaluation_options(Model model) {
  reference::Options o;
  o.model = judges_exact_values(model) ? reference::Model::exact : reference::Model::f32_recipe;
  return o;
}

}  // namespace

GroupComparer::GroupComparer(std::string suite, int index, const Spec& spec, Model model, Tolerance tolerance, Settings settings)
    : spec_(spec), model_(model), tally_(std::move(settings)) {
  rule_.dtype = spec.dtype;
  rule_.attention_factor = attention_factor<double>(spec);
  rule_.tolerance = std::move(tolerance);
  rule_.underflow_roundings = underflow_roundings(model);
  rule_.strict_zeros = tally_.settings().strict_zeros;
  rule_.messages = false;  // judge_tokens asks for a message of the cases it keeps only
  GroupResult& r = tally_.result;
  r.suite = std::move(suite);
  r.index = index;
  r.spec = to_string(spec);
  r.dtype = spec.dtype;
  r.tolerance = rule_.tolerance;
  r.attention_magnitude = std::max(1.0, std::fabs(rule_.attention_factor));
  for (int j = 0; j < spec.rotary_dim / 2; ++j) r.max_frequency = std::max(r.max_frequency, frequency<double>(spec, j));
  if (rule_.tolerance.per_radian != 0) {
    for (int j = 0; j < spec.rotary_dim / 2; ++j) theta_.push_back(frequency<long double>(spec, j));
  }
}

const reference::ApplyPlan* GroupComparer::evaluation_plan() const {
  std::call_once(evaluation_->built, [&] {
    try {
      evaluation_->plan.emplace(reference::ApplyPlan::for_evaluation(spec_, evaluation_options(model_)));
    } catch (const std::invalid_argument&) {
      // judge_evaluated reports it, as the free evaluate_into does
    }
  });
  return evaluation_->plan ? &*evaluation_->plan : nullptr;
}

namespace {

// The expected values of a test's elements [first, first + exact.size()).
struct ExpectedSlice {
  std::span<const long double> exact;
  std::span<const double> rounded;
  std::size_t first = 0;
};

// What judging some tokens of a test found beyond the tally's figures.
struct TokensJudged {
  bool test_pass = true, judged_any = false;
  double test_worst = 0;

  // Adds what judging other tokens of the same test found.
  void combine(const TokensJudged& other) {
    test_pass = test_pass && other.test_pass;
    judged_any = judged_any || other.judged_any;
    test_worst = std::max(test_worst, other.test_worst);
  }
};

// Keeps the case of a failing pair among the tally's worst (judge_tokens): where it is, its values
// and figures, and the rule's message. `counts`: whether it fails the verdict (not above
// --require-horizon).
void keep_pair_case(detail::GroupTally& tally, const PairRule& rule, const Call& test, const Pair& pair, const PairVerdict& v,
                    bool accuracy, bool counts, double severity, std::int64_t position, std::int64_t t, std::int64_t h,
                    reference::PairDims pd) {
  const Settings& options = tally.settings();
  Case c = tally.new_case(test.id, case_kind(v.failure), position);
  c.accuracy = accuracy;
  c.domain = v.domain;
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
  c.severity = severity;
  PairRule verbose = rule;
  verbose.messages = true;
  c.message =
      judge_pair(pair, verbose).message + (counts ? "" : " (above --require-horizon " + std::to_string(*options.require_horizon) + ")");
  if (!v.ordinary() && v.failure == Failure::tolerance) c.message += " (" + std::string(name(v.domain)) + " input pair)";
  tally.record_case(std::move(c));
}

// Judges row (t, h)'s pass-through dims (those past rotary_dim, at `row`) bit for bit (judge_tokens).
void judge_passthrough(const Spec& spec, const PairRule& rule, const Call& test, std::span<const double> output, std::int64_t row,
                       std::int64_t position, std::int64_t t, std::int64_t h, detail::GroupTally& tally, TokensJudged& out) {
  GroupResult& r = tally.result;
  for (std::int64_t i = spec.rotary_dim; i < test.head_dim; ++i) {
    ++r.passthrough_checked;
    const std::size_t at = static_cast<std::size_t>(row + i);
    if (passthrough_matches(output[at], test.input[at], spec.dtype, rule.strict_zeros)) continue;
    ++r.passthrough_failed;
    out.test_pass = false;
    if (!tally.keeps(false, test.id, kInf)) continue;
    Case c = tally.new_case(test.id, CaseKind::passthrough, position);
    c.token = t;
    c.head = h;
    c.dim = static_cast<int>(i);
    c.input_x = test.input[at];
    c.expected_a = test.input[at];
    c.got_a = output[at];
    c.severity = kInf;
    c.message = "pass-through dim " + std::to_string(i) + " changed: expected " + reference::to_hex(c.expected_a) + ", got " +
                reference::to_hex(c.got_a);
    tally.record_case(std::move(c));
  }
}

// Judges tokens [t0, t1) of `test` into `tally` (a tally of this test alone): every pair through
// the pair rule, pass-through dims bit for bit.
TokensJudged judge_tokens(const Spec& spec, const PairRule& rule, std::span<const long double> theta, const Call& test,
                          std::span<const double> output, ExpectedSlice expected, std::int64_t t0, std::int64_t t1,
                          detail::GroupTally& tally) {
  GroupResult& r = tally.result;
  const Settings& options = tally.settings();
  const bool e_kind = rule.tolerance.kind == Tolerance::Kind::e;
  const bool angle_dependent = !theta.empty();
  const int pairs = spec.rotary_dim / 2;
  const int components = position_components(spec);
  const PairScreenRule screen_rule(rule);
  // Per pair index, |m·θ'_j| at the token (its heads share it).
  std::vector<double> token_angles(angle_dependent ? static_cast<std::size_t>(pairs) : 0);
  TokensJudged out;
  for (std::int64_t t = t0; t < t1; ++t) {
    const std::int64_t position = token_position(test, spec, t);
    if (options.max_position && position > *options.max_position) {
      ++r.tokens_beyond_max_position;
      continue;
    }
    out.judged_any = true;
    // Ordinary failures above --require-horizon are reported, and do not fail the verdict.
    const bool required = !options.require_horizon || position <= *options.require_horizon;
    bool any_ordinary = false, accurate = true;
    double token_worst = 0;
    for (std::size_t j = 0; j < token_angles.size(); ++j) {
      const std::int64_t m = test.positions[static_cast<std::size_t>(t * components + position_component(spec, static_cast<int>(j)))];
      token_angles[j] = static_cast<double>(std::fabs(static_cast<long double>(m) * theta[j]));
    }
    for (std::int64_t h = 0; h < test.heads; ++h) {
      const std::int64_t row = (t * test.heads + h) * test.head_dim;
      for (int j = 0; j < pairs; ++j) {
        const reference::PairDims pd = reference::pair_dims(spec, j);
        const std::size_t i1 = static_cast<std::size_t>(row + pd.first), i2 = static_cast<std::size_t>(row + pd.second);
        // Every field given (declared, then assigned, the pair was zeroed first: a `rep stos` per pair).
        const Pair pair{.x = test.input[i1],
                        .y = test.input[i2],
                        .a = output[i1],
                        .b = output[i2],
                        .exact_a = expected.exact[i1 - expected.first],
                        .exact_b = expected.exact[i2 - expected.first],
                        .rounded_a = expected.rounded[i1 - expected.first],
                        .rounded_b = expected.rounded[i2 - expected.first],
                        .angle = angle_dependent ? token_angles[static_cast<std::size_t>(j)] : 0.0};
        // A pair certain to pass or to fail the tolerance (pair_rule.h screen_pair) that can raise
        // none of the figures below — the worst e (a later pair only replaces a larger one), the
        // token's worst metric, the worst ulp, abs and margin, nor (failing) enter the worst cases
        // kept — is counted without the long double rule: what this loop records is the same, at
        // a fraction of the cost for most pairs of a big test.
        if (r.worst_e_position >= 0) {
          const PairScreen screen = screen_pair(pair.x, pair.y, pair.a, pair.b, static_cast<double>(pair.exact_a),
                                                static_cast<double>(pair.exact_b), pair.rounded_a, pair.rounded_b, pair.angle, screen_rule);
          const double metric_high = e_kind ? screen.e_high : screen.ulp;
          const bool raises_nothing = screen.e_high <= r.worst_e && metric_high <= token_worst && screen.ulp <= r.worst_ulp &&
                                      screen.abs_high <= r.worst_abs &&
                                      (screen.allowed <= 0 || metric_high / screen.allowed <= r.worst_margin);
          if (raises_nothing && (screen.sure_pass || (screen.sure_fail && !tally.keeps(true, test.id, metric_high)))) {
            ++r.pairs_checked;
            ++r.ordinary_checked;
            any_ordinary = true;
            if (screen.sure_pass) continue;
            // As a tolerance failure below: an accuracy failure, not kept.
            ++r.pairs_failed;
            ++r.ordinary_failed;
            accurate = false;
            if (required) {
              out.test_pass = false;
            } else {
              ++r.beyond_required_failed;
            }
            continue;
          }
        }
        const PairVerdict v = judge_pair(pair, rule);
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
        out.test_pass = out.test_pass && !counts;
        const double severity = v.measured ? metric : kInf;
        if (!tally.keeps(accuracy, test.id, severity)) continue;
        keep_pair_case(tally, rule, test, pair, v, accuracy, counts, severity, position, t, h, pd);
      }
      judge_passthrough(spec, rule, test, output, row, position, t, h, tally, out);
    }
    if (any_ordinary) {
      tally.record_position(position, accurate);
      r.points.push_back({position, token_worst, accurate});
      out.test_worst = std::max(out.test_worst, token_worst);
    }
  }
  return out;
}

}  // namespace

detail::GroupTally GroupComparer::test_tally() const {
  detail::GroupTally part(tally_.settings());
  part.result.suite = tally_.result.suite;  // cases name it
  return part;
}

bool GroupComparer::output_fits(const Call& test, std::span<const double> output) {
  const std::int64_t elements = test.tokens * test.heads * test.head_dim;
  if (static_cast<std::int64_t>(output.size()) == elements) return true;
  fail(test, CaseKind::shape,
       "expected " + std::to_string(elements) + " output values (tokens " + std::to_string(test.tokens) + " x heads " +
           std::to_string(test.heads) + " x head_dim " + std::to_string(test.head_dim) + "), got " + std::to_string(output.size()));
  return false;
}

void GroupComparer::finish_test(std::int64_t test_id, detail::GroupTally&& part, bool test_pass, bool judged_any,
                                double test_worst) {
  tally_.merge(std::move(part));
  GroupResult& r = tally_.result;
  if (!judged_any) {
    tally_.skip_test(test_id, "every position above --max-position " + std::to_string(*tally_.settings().max_position));
    ++r.skipped_by_position;
    return;
  }
  ++r.tests;
  const bool e_kind = rule_.tolerance.kind == Tolerance::Kind::e;
  if (test_pass) {
    r.outcomes.push_back({test_id, Verdict::pass, ""});
  } else {
    ++r.tests_failed;
    r.outcomes.push_back({test_id, Verdict::fail,
                          "out of tolerance or wrong special/pass-through values (worst " + std::string(e_kind ? "e" : "ulp") + " " +
                              std::to_string(test_worst) + ")"});
  }
}

void GroupComparer::add(const Call& test, std::span<const double> output, const Expected& expected) {
  if (!output_fits(test, output)) return;
  detail::GroupTally part = test_tally();
  const TokensJudged j = judge_tokens(spec_, rule_, theta_, test, output, {expected.exact, expected.rounded, 0}, 0, test.tokens, part);
  finish_test(test.id, std::move(part), j.test_pass, j.judged_any, j.test_worst);
}

void GroupComparer::add_evaluated(const Call& test, std::span<const double> output, int threads) {
  add_judged(test, output, judge_evaluated(test, output, threads));
}

GroupComparer::JudgedTest GroupComparer::judge_evaluated(const Call& test, std::span<const double> output, int threads) const {
  JudgedTest out{test_tally()};
  const std::int64_t elements = test.tokens * test.heads * test.head_dim;
  if (static_cast<std::int64_t>(output.size()) != elements) return out;  // add_judged records the shape failure
  const Spec& spec = spec_;
  const int components = position_components(spec);
  const std::int64_t token_size = test.heads * test.head_dim;
  const std::int64_t chunk_tokens = std::max<std::int64_t>(1, kChunkValues / std::max<std::int64_t>(token_size, 1));
  const bool file_rounded = judges_exact_values(model_) && test.expected.size() == test.input.size();
  const reference::Options o = evaluation_options(model_);
  const reference::ApplyPlan* plan = evaluation_plan();
  // One tally per range of tokens, merged in token order: the same figures and cases as one pass.
  const std::vector<TokenRange> ranges = token_ranges(test.tokens, threads);
  std::vector<detail::GroupTally> parts(ranges.size(), test_tally());
  std::vector<TokensJudged> judged(ranges.size());
  // One workspace per thread, for every range it takes: allocated once, not zero-filled (every value
  // is written by the evaluation before it is read). A fresh zeroed workspace per range was a
  // page fault per 4 KiB on every range.
  struct Workspace {
    std::unique_ptr<double[]> rounded;
    std::unique_ptr<long double[]> exact;
    std::size_t capacity = 0;
  };
  std::vector<Workspace> workspaces(parallel_workers(ranges.size(), threads));
  parallel_for_workers(ranges.size(), threads, [&](std::size_t w, std::size_t worker) {
    // This range's tally and figures in objects of its own, stored once at the end: neighbouring
    // slots of parts and judged share cache lines, and counters written per pair there made the
    // threads' caches fight.
    detail::GroupTally part = test_tally();
    TokensJudged range_judged;
    Workspace& workspace = workspaces[worker];
    for (std::int64_t t0 = ranges[w].begin; t0 < ranges[w].end; t0 += chunk_tokens) {
      const std::int64_t t1 = std::min(ranges[w].end, t0 + chunk_tokens);
      const auto first = static_cast<std::size_t>(t0 * token_size), n = static_cast<std::size_t>((t1 - t0) * token_size);
      if (workspace.capacity < n) {
        const std::size_t capacity = std::min(static_cast<std::size_t>(chunk_tokens * token_size), static_cast<std::size_t>(test.tokens * token_size));
        workspace.rounded.reset(new double[capacity]);
        workspace.exact.reset(new long double[capacity]);
        workspace.capacity = capacity;
      }
      const std::span<double> rounded(workspace.rounded.get(), n);
      const std::span<long double> exact(workspace.exact.get(), n);
      const reference::Shape shape{t1 - t0, test.heads, test.head_dim};
      const auto positions = std::span(test.positions).subspan(static_cast<std::size_t>(t0 * components), static_cast<std::size_t>((t1 - t0) * components));
      const auto input = std::span(test.input).subspan(first, n);
      if (plan) {
        plan->evaluate_into(shape, positions, input, rounded, exact);
      } else {
        reference::evaluate_into(spec, shape, positions, input, rounded, exact, o);
      }
      const std::span<const double> rounded_values = file_rounded ? std::span<const double>(test.expected).subspan(first, n) : std::span<const double>(rounded);
      range_judged.combine(judge_tokens(spec, rule_, theta_, test, output, {exact, rounded_values, first}, t0, t1, part));
    }
    parts[w] = std::move(part);
    judged[w] = range_judged;
  });
  TokensJudged all;
  for (std::size_t w = 0; w < parts.size(); ++w) {
    out.part.merge(std::move(parts[w]));
    all.combine(judged[w]);
  }
  out.test_pass = all.test_pass;
  out.judged_any = all.judged_any;
  out.test_worst = all.test_worst;
  return out;
}

void GroupComparer::add_judged(const Call& test, std::span<const double> output, JudgedTest&& judged) {
  if (!output_fits(test, output)) return;
  finish_test(test.id, std::move(judged.part), judged.test_pass, judged.judged_any, judged.test_worst);
}

void GroupComparer::add_judged_parts(std::int64_t test_id, JudgedTest&& judged) {
  finish_test(test_id, std::move(judged.part), judged.test_pass, judged.judged_any, judged.test_worst);
}

void GroupComparer::JudgedTest::combine(JudgedTest&& later) {
  part.merge(std::move(later.part));
  test_pass = test_pass && later.test_pass;
  judged_any = judged_any || later.judged_any;
  test_worst = std::max(test_worst, later.test_worst);
}

void GroupComparer::fail(const Call& test, CaseKind kind, std::string message) {
  std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t t = 0; t < test.tokens; ++t) lowest = std::min(lowest, token_position(test, spec_, t));
  if (test.tokens == 0) lowest = 0;
  tally_.fail_test(test.id, lowest, kind, std::move(message));
}

void GroupComparer::skip(std::int64_t id, std::string reason) { tally_.skip_test(id, std::move(reason)); }

GroupResult GroupComparer::finish() { return tally_.finish(); }

}  // namespace ropecheck::judge
