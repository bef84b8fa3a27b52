// Judging attention tests (golden kind "attention"): a candidate's scores and outputs against the
// golden ones, with the metrics of judge/group.h and the bounds derived in judge/tolerance.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "judge/group.h"
#include "judge/pair_rule.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::judge {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Largest component of token t's position tuple.
std::int64_t largest_component(const std::vector<std::int64_t>& positions, int components, std::int64_t token) {
  std::int64_t p = std::numeric_limits<std::int64_t>::min();
  for (int k = 0; k < components; ++k) {
    const std::size_t i = static_cast<std::size_t>(token * components + k);
    if (i < positions.size()) p = std::max(p, positions[i]);
  }
  return p == std::numeric_limits<std::int64_t>::min() ? 0 : p;
}

// ‖x‖ of each [tokens, heads, head_dim] row, in long double (relative error ≲ head_dim·2^-64: the
// error unit it enters is known far better than the bound needs).
std::vector<long double> row_norms(const std::vector<double>& x, std::int64_t rows, std::int64_t length) {
  std::vector<long double> norms(static_cast<std::size_t>(rows), 0.0L);
  for (std::int64_t r = 0; r < rows; ++r) {
    long double sum = 0;
    for (std::int64_t i = 0; i < length; ++i) {
      const long double v = x[static_cast<std::size_t>(r * length + i)];
      sum += v * v;
    }
    norms[static_cast<std::size_t>(r)] = std::sqrt(sum);
  }
  return norms;
}

// Six significant digits: e spans 10^-3 … 10^16 (a wrong candidate in f64).
std::string short_number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

// e / tolerance, the quantity that passes (≤ 1) or fails; a zero tolerance makes any error infinite.
double margin(double e, double tolerance) {
  if (tolerance > 0) return e / tolerance;
  return e > 0 ? kInf : 0;
}

// One judged value: golden `want`, candidate `got`, error unit `unit` (u·N or u·V), bound `tol`.
struct Verdict {
  bool pass = true;
  bool special = false;
  double e = 0;
  double abs = 0;
};

// One attention test's judgement (AttentionComparer::add): its scores, its outputs, then its query
// rows, recorded in `tally`.
class AttentionTestJudge {
 public:
  AttentionTestJudge(const golden::AttentionTest& test, const Spec& spec, const Tolerance& rope, const std::vector<long double>& theta,
                     detail::GroupTally& tally)
      : test(test),
        spec(spec),
        rope(rope),
        theta(theta),
        tally(tally),
        options(tally.settings()),
        a(*tally.result.attention),
        heads(test.heads),
        head_dim(test.head_dim),
        q_tokens(test.q_tokens),
        k_tokens(test.k_tokens),
        v_dim(test.v_dim),
        components(position_components(spec)) {
    const reference::Format format = reference::format_of(spec.dtype);
    u = std::ldexp(1.0L, -format.precision);
    // Two roundings to the dtype (the candidate's final one and the golden value's) may each fall in
    // the subnormal range, where they err by up to 2^(emin−p) absolute, which no multiple of the unit
    // bounds when the unit is itself tiny.
    underflow = 2 * std::ldexp(1.0L, format.emin - format.precision);
    g = attention_factor<long double>(spec);
    scale = g * g / std::sqrt(static_cast<long double>(head_dim));  // |c| = g²/√d
    q_norm = row_norms(test.q, q_tokens * heads, head_dim);
    k_norm = row_norms(test.k, k_tokens * heads, head_dim);
    q_eps = rope_errors(test.q_positions, q_tokens);
    k_eps = rope_errors(test.k_positions, k_tokens);
    row_worst.assign(static_cast<std::size_t>(q_tokens), 0.0);
    row_pass.assign(static_cast<std::size_t>(q_tokens), 1);
  }

  void judge_scores(const std::vector<double>& scores) {
    for (std::int64_t h = 0; h < heads; ++h) {
      for (std::int64_t i = 0; i < q_tokens; ++i) {
        for (std::int64_t j = 0; j < k_tokens; ++j) {
          const double tol = options.attention_scores
                                 ? *options.attention_scores
                                 : attention_score_bound(spec.dtype, static_cast<int>(head_dim), q_eps[static_cast<std::size_t>(i)],
                                                         k_eps[static_cast<std::size_t>(j)]);
          a.score_tolerance = std::max(a.score_tolerance, tol);
          const std::size_t at = static_cast<std::size_t>((h * q_tokens + i) * k_tokens + j);
          const double want = test.expected_scores[at], got = scores[at];
          // A masked score may be reported with the mask applied.
          if (!visible(i, j) && std::isinf(got) && got < 0) {
            ++a.scores_masked;
            continue;
          }
          ++a.scores_checked;
          const long double unit =
              u * scale * q_norm[static_cast<std::size_t>(i * heads + h)] * k_norm[static_cast<std::size_t>(j * heads + h)];
          const Verdict v = judge(want, got, unit, tol);
          if (!v.special) a.worst_score_e = std::max(a.worst_score_e, v.e);
          const double m = note_margin(i, v, tol);
          if (v.pass) continue;
          ++a.scores_failed;
          record_failure("score", "score (head " + std::to_string(h) + ", query " + std::to_string(i) + ", key " + std::to_string(j), i, h,
                         j, want, got, v, unit, tol, m, "");
        }
      }
    }
  }

  void judge_outputs(const std::vector<double>& outputs) {
    for (std::int64_t i = 0; i < q_tokens; ++i) {
      for (std::int64_t h = 0; h < heads; ++h) {
        long double largest_k = 0;
        double largest_k_eps = 0;
        bool any_visible = false;
        for (std::int64_t j = 0; j < k_tokens; ++j) {
          if (!visible(i, j)) continue;
          any_visible = true;
          largest_k = std::max(largest_k, k_norm[static_cast<std::size_t>(j * heads + h)]);
          largest_k_eps = std::max(largest_k_eps, k_eps[static_cast<std::size_t>(j)]);
        }
        const long double sigma = scale * q_norm[static_cast<std::size_t>(i * heads + h)] * largest_k;
        const double tol = options.attention_outputs
                               ? *options.attention_outputs
                               : attention_output_bound(spec.dtype, static_cast<int>(head_dim), q_eps[static_cast<std::size_t>(i)],
                                                        largest_k_eps, k_tokens, static_cast<double>(sigma));
        if (a.outputs_checked == 0 || tol < a.output_tolerance_min) a.output_tolerance_min = tol;
        a.output_tolerance_max = std::max(a.output_tolerance_max, tol);
        for (std::int64_t x = 0; x < v_dim; ++x) {
          const std::size_t at = static_cast<std::size_t>((i * heads + h) * v_dim + x);
          const double want = test.expected_outputs[at], got = outputs[at];
          long double largest_v = 0;
          for (std::int64_t j = 0; j < k_tokens; ++j) {
            if (visible(i, j))
              largest_v =
                  std::max(largest_v, std::fabs(static_cast<long double>(test.v[static_cast<std::size_t>((j * heads + h) * v_dim + x)])));
          }
          ++a.outputs_checked;
          // No visible key: the golden value is NaN (0/0), judged by class.
          const long double unit = any_visible ? u * largest_v : std::numeric_limits<long double>::quiet_NaN();
          const Verdict v = judge(want, got, unit, tol);
          const double m = note_margin(i, v, tol);
          if (!v.special) {
            a.worst_output_e = std::max(a.worst_output_e, v.e);
            if (m >= a.worst_output_margin) {
              a.worst_output_margin = m;
              a.worst_output_margin_e = v.e;
              a.worst_output_margin_tolerance = tol;
            }
          }
          if (v.pass) continue;
          ++a.outputs_failed;
          record_failure("output", "output (query " + std::to_string(i) + ", head " + std::to_string(h) + ", dim " + std::to_string(x), i,
                         h, x, want, got, v, unit, tol, m, " (this row's bound)");
        }
      }
    }
  }

  // The test's missing tensors, its query rows' positions and its outcome.
  void finish(const std::vector<std::string>& missing) {
    for (const std::string& message : missing) {
      tally.record_whole_test_case(test.id, CaseKind::missing, message, q_tokens > 0 ? q_position(0) : 0);
    }

    bool test_pass = missing.empty();
    for (std::int64_t i = 0; i < q_tokens; ++i) {
      const bool pass = row_pass[static_cast<std::size_t>(i)] && missing.empty();
      const std::int64_t position = q_position(i);
      tally.record_position(position, pass);
      tally.result.points.push_back({position, row_worst[static_cast<std::size_t>(i)], pass});
      test_pass = test_pass && pass;
    }
    tally.result.worst_e = a.worst_score_e;
    if (test_pass) {
      tally.result.outcomes.push_back({test.id, judge::Verdict::pass, ""});
    } else {
      ++tally.result.tests_failed;
      std::string reason = missing.empty() ? "" : missing.front() + "; ";
      tally.result.outcomes.push_back(
          {test.id, judge::Verdict::fail, reason + "worst e/tolerance " + short_number(test_worst) + " over the scores and outputs given"});
    }
  }

 private:
  std::int64_t q_position(std::int64_t i) const { return largest_component(test.q_positions, components, i); }

  // ε_t of H1 (judge/tolerance.cpp) per query and key token, from its pairs' largest angle.
  std::vector<double> rope_errors(const std::vector<std::int64_t>& positions, std::int64_t tokens) const {
    std::vector<double> eps(static_cast<std::size_t>(tokens));
    for (std::int64_t t = 0; t < tokens; ++t) {
      long double largest = 0;
      for (std::size_t j = 0; j < theta.size(); ++j) {
        const std::size_t at = static_cast<std::size_t>(t * components + position_component(spec, static_cast<int>(j)));
        if (at < positions.size()) largest = std::max(largest, std::fabs(static_cast<long double>(positions[at]) * theta[j]));
      }
      eps[static_cast<std::size_t>(t)] = attention_rope_error(rope, spec.dtype, static_cast<double>(g), static_cast<double>(largest));
    }
    return eps;
  }

  bool visible(std::int64_t i, std::int64_t j) const {
    return !test.causal || test.k_positions[static_cast<std::size_t>(j)] <= test.q_positions[static_cast<std::size_t>(i)];
  }

  Case new_case(CaseKind kind, const char* quantity, std::int64_t i, std::int64_t h, std::int64_t dim) const {
    Case c = tally.new_case(test.id, kind, q_position(i));
    c.quantity = quantity;
    c.token = i;
    c.head = h;
    c.dim = static_cast<int>(dim);
    return c;
  }

  Verdict judge(double want, double got, long double unit, double tol) {
    Verdict v;
    if (!std::isfinite(want) || !std::isfinite(got) || !std::isfinite(unit)) {
      v.special = true;
      v.pass = value_class(got) == value_class(want);
      v.e = v.pass ? 0 : kInf;
      ++tally.result.special_checked;
      if (!v.pass) ++tally.result.special_failed;
      return v;
    }
    const long double diff = std::fabs(static_cast<long double>(got) - static_cast<long double>(want));
    v.abs = static_cast<double>(diff);
    v.e = unit > 0 ? static_cast<double>(diff / unit) : (diff == 0 ? 0.0 : kInf);
    v.pass = v.e <= tol || diff <= static_cast<long double>(tol) * unit + underflow;
    return v;
  }

  // e/tolerance of a judged value (at least 1 when it fails), folded into its query row's and the
  // test's worst.
  double note_margin(std::int64_t i, const Verdict& v, double tol) {
    const double m = v.pass ? margin(v.e, tol) : std::max(margin(v.e, tol), 1.0);
    row_worst[static_cast<std::size_t>(i)] = std::max(row_worst[static_cast<std::size_t>(i)], m);
    test_worst = std::max(test_worst, m);
    return m;
  }

  // A failing value: counted against its query row, kept among the worst cases with a message
  // naming where it is (`where`, e.g. "score (head 0, query 1, key 2") and what it missed by.
  void record_failure(const char* quantity, const std::string& where, std::int64_t i, std::int64_t h, std::int64_t dim, double want,
                      double got, const Verdict& v, long double unit, double tol, double severity, const char* suffix) {
    row_pass[static_cast<std::size_t>(i)] = 0;
    Case c = new_case(v.special ? CaseKind::special_value : CaseKind::tolerance, quantity, i, h, dim);
    c.accuracy = !v.special;
    c.expected_a = want;
    c.got_a = got;
    c.e = v.e;
    c.abs = v.abs;
    c.unit = static_cast<double>(unit);
    c.tolerance = tol;
    c.severity = severity;
    c.message = where + (v.special ? "): special values disagree: expected " + reference::to_hex(want) + ", got " + reference::to_hex(got)
                                   : "): e = " + short_number(v.e) + " > " + short_number(tol) + suffix);
    tally.record_case(std::move(c));
  }

  const golden::AttentionTest& test;
  const Spec& spec;
  const Tolerance& rope;
  const std::vector<long double>& theta;  // θ'_j per pair
  detail::GroupTally& tally;
  const Settings& options;
  AttentionStats& a;
  const std::int64_t heads, head_dim, q_tokens, k_tokens, v_dim;
  const int components;
  long double u = 0, underflow = 0, g = 1, scale = 1;
  std::vector<long double> q_norm, k_norm;
  std::vector<double> q_eps, k_eps;
  std::vector<double> row_worst;  // per query row: the worst e/tolerance
  std::vector<char> row_pass;
  double test_worst = 0;
};

}  // namespace

AttentionComparer::AttentionComparer(std::string suite, int index, const golden::Group& group, Model model, Tolerance rope,
                                     Settings settings)
    : group_(group), rope_(std::move(rope)), tally_(std::move(settings)) {
  const Settings& options = tally_.settings();
  tally_.result.kind = golden::Kind::attention;
  tally_.result.suite = std::move(suite);
  tally_.result.index = index;
  tally_.result.spec = to_string(group.spec);
  tally_.result.dtype = group.spec.dtype;
  for (int j = 0; j < group.spec.rotary_dim / 2; ++j) theta_.push_back(frequency<long double>(group.spec, j));
  AttentionStats a;
  a.score_source = options.attention_scores ? "--tolerance attention_scores=" + std::to_string(*options.attention_scores)
                                            : attention_score_source(group.spec.dtype, group.spec.head_dim, model);
  a.output_source = options.attention_outputs ? "--tolerance attention_outputs=" + std::to_string(*options.attention_outputs)
                                              : attention_output_source(group.spec.dtype, model);
  if (options.attention_scores) a.score_tolerance = *options.attention_scores;
  tally_.result.tolerance = Tolerance{Tolerance::Kind::e, a.score_tolerance, 0, a.score_source};
  tally_.result.attention = std::move(a);
}

void AttentionComparer::add(const golden::AttentionTest& test, const std::vector<double>* scores, const std::vector<double>* outputs,
                            const std::vector<std::string>& missing) {
  ++tally_.result.tests;
  AttentionTestJudge judge(test, group_.spec, rope_, theta_, tally_);
  if (scores) judge.judge_scores(*scores);
  if (outputs) judge.judge_outputs(*outputs);
  judge.finish(missing);
}

void AttentionComparer::fail(const golden::AttentionTest& test, CaseKind kind, std::string message) {
  const int components = position_components(group_.spec);
  std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t i = 0; i < test.q_tokens; ++i) lowest = std::min(lowest, largest_component(test.q_positions, components, i));
  if (test.q_tokens == 0) lowest = 0;
  tally_.fail_test(test.id, lowest, kind, std::move(message));
}

void AttentionComparer::skip(const golden::AttentionTest& test, std::string reason) { tally_.skip_test(test.id, std::move(reason)); }

GroupResult AttentionComparer::finish() { return tally_.finish(); }

}  // namespace ropecheck::judge
