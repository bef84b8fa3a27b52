#include "judge/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "base/parallel.h"
#include "judge/inference.h"
#include "judge/pair_math.h"
#include "judge/pair_rule.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::judge {
namespace {

std::string number(double v, const char* format = "%.3g") {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

// The position component each pair reads (multi-axis specs) of token t.
std::int64_t pair_position(const Spec& spec, const Call& test, std::int64_t t, int pair) {
  const int components = position_components(spec);
  return test.positions[static_cast<std::size_t>(t * components + position_component(spec, pair))];
}

// ---- 1. the error decomposition ---------------------------------------------------------------

// One pair's angle at one token (its heads share it).
struct TokenAngle {
  long double m = 0;        // the pair's position component
  long double phi = 0;      // the spec's angle, sign·m·θ'_j
  long double wrapped = 0;  // phi into [−π, π]
  long double ulp = 0;      // ulp32(phi)
};

struct AngleSample {
  long double m;      // the pair's position component
  long double delta;  // φ_c − φ, wrapped
};

// The effective frequency error of one pair index, fitted through the origin over its positions:
// the samples in order of |m|, each angle error unwrapped to the prediction of those before it
// (an error of many turns at a large position is one branch of atan2), least squares weighted by m².
struct PairFit {
  long double frequency_error = 0;  // radians per position
  bool resolved = false;            // some sample's |m|·ulp32(θ'_j) is far above the output's rounding
};

// The fit, sample by sample: add(m, δ) in order of |m| (non-decreasing), then fit(). One pass and
// no stored samples where they arrive in that order (a sweep's positions, a check's tokens).
class PairFitter {
 public:
  PairFitter(long double theta, long double noise) : theta_(theta), theta_ulp_(ulp32(theta)), noise_(noise) {}
  void add(long double m, long double delta) {
    const long double predicted = sxx_ > 0 ? sxy_ / sxx_ * m : 0;
    const long double d = predicted + wrap_to_pi(delta - predicted);
    sxy_ += m * d;
    sxx_ += m * m;
    if (std::fabs(m) * theta_ulp_ > 16 * noise_) resolved_ = true;
    largest_ = std::fabs(m);  // the samples come in order of |m|: the last is the largest
    any_ = true;
  }
  bool any() const { return any_; }
  PairFit fit() const {
    PairFit fit;
    fit.resolved = resolved_;
    if (sxx_ == 0 || theta_ == 0) return fit;
    fit.frequency_error = sxy_ / sxx_;
    // Resolved too when the fitted error itself stands far above the rounding at the largest
    // position (a one-ulp error may be invisible where a 30-ulp one is plain).
    if (largest_ * std::fabs(fit.frequency_error) > 16 * noise_) fit.resolved = true;
    return fit;
  }

 private:
  long double theta_, theta_ulp_, noise_;
  long double sxy_ = 0, sxx_ = 0, largest_ = 0;
  bool resolved_ = false, any_ = false;
};

// The rotation error (|s − 1|/u at the candidate's own angle) above which a pair's arithmetic is not
// the data dtype's: a careful rotation is within e <= 4 (Coq gate_exact_default).
constexpr double kRotationFar = 8;
// A relative pair-norm error above which no arithmetic of a RoPE dtype explains it: 1/16, 16 times
// bfloat16's unit roundoff 2^-8 (the coarsest dtype, reference/README.md).
constexpr double kNormKept = 1.0 / 16;

// "token 100, head 2, dim 5 = 1e+06 (expected 0.372)": where a kept case's value is furthest
// from its expected one (both dims of the pair when the nearer is off by a hundredth as much or
// more; a test's id first when the group has several tests).
std::string case_value(const Case& c, bool with_test) {
  std::string where = with_test ? "test " + std::to_string(c.test_id) + ", " : "";
  where += "token " + std::to_string(c.token) + ", head " + std::to_string(c.head);
  if (c.dim < 0) return where;
  if (c.second_dim < 0)
    return where + ", dim " + std::to_string(c.dim) + " = " + number(c.got_a, "%.6g") + " (expected " + number(c.expected_a, "%.6g") + ")";
  const auto off = [](double got, double expected) {
    const double d = std::fabs(got - expected);
    return std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
  };
  const double da = off(c.got_a, c.expected_a), db = off(c.got_b, c.expected_b);
  const auto one = [&](int dim, double got, double expected) {
    return "dim " + std::to_string(dim) + " = " + number(got, "%.6g") + " (expected " + number(expected, "%.6g") + ")";
  };
  if (std::min(da, db) * 100 >= std::max(da, db)) {
    return where + ", " + one(c.dim, c.got_a, c.expected_a) + " and " + one(c.second_dim, c.got_b, c.expected_b);
  }
  return where + ", " + (da >= db ? one(c.dim, c.got_a, c.expected_a) : one(c.second_dim, c.got_b, c.expected_b));
}

// Subnormals flushed to zero (judge/README.md "Explanation"): every failure an edge case, every
// kept one a pair whose input is subnormal and whose outputs are both zero where the expected ones
// are not, and no ordinary pair out of the bound — what flush-to-zero (FTZ) or
// denormals-are-zero (DAZ) arithmetic does.
bool name_flushed_subnormals(const GroupResult& g, GroupDiagnosis& d) {
  if (g.edge_failed == 0 || g.ordinary_failed > 0 || g.special_failed > 0 || g.whole_tests_failed > 0 || g.passthrough_failed > 0) {
    return false;
  }
  const Case* example = nullptr;
  for (const Case& c : g.worst) {
    if (c.accuracy) continue;
    const bool flushed = c.domain == Domain::subnormal && c.got_a == 0 && c.got_b == 0 && (c.expected_a != 0 || c.expected_b != 0);
    if (!flushed) return false;
    if (!example) example = &c;
  }
  if (!example) return false;
  d.explanation_kind = "subnormal_flush";
  d.mistake = "subnormals flushed to zero";
  d.headline = "your outputs have subnormals flushed to zero";
  d.explanation = d.headline + ": " + std::to_string(g.edge_failed) +
                  " pairs out of the bound, each with a subnormal input and zero outputs (flush-to-zero or denormals-are-zero "
                  "arithmetic), e.g. " +
                  case_value(*example, g.tests > 1) + "; " +
                  (g.ordinary_checked > 0 ? "every ordinary pair is within the bound" : "no ordinary pair was judged");
  return true;
}

// A few values far off (judge/README.md "Explanation"): at most 1 % of the values judged fail, the
// spec explains the sample, and the failures are far outside what any float32 RoPE computes (a
// worst e 64 times the f32-angle bound at its angle, a NaN or Inf where the expected value is
// finite, a passed-through dim changed): named by where they are, not by a change of the spec or
// of the arithmetic's precision.
bool name_isolated_values(const Spec& spec, const GroupResult& g, GroupDiagnosis& d) {
  const std::int64_t failed = g.pairs_failed + g.passthrough_failed, checked = g.pairs_checked + g.passthrough_checked;
  if (g.whole_tests_failed > 0 || failed == 0 || failed * 100 > checked || (g.ordinary_failed == 0 && g.passthrough_failed == 0))
    return false;
  bool far = g.passthrough_failed > 0;
  for (const Case& c : g.worst) {
    far |= c.dim >= 0 && (!std::isfinite(c.got_a) || !std::isfinite(c.got_b)) && std::isfinite(c.expected_a) && std::isfinite(c.expected_b);
  }
  if (!far && g.worst_e_pair >= 0 && g.worst_e_pair < spec.rotary_dim / 2) {
    const double angle = static_cast<double>(g.worst_e_position) * frequency<double>(spec, g.worst_e_pair);
    far = g.worst_e > 64 * default_tolerance(Model::f32_angle, spec).at(angle);
  }
  if (!far) return false;
  std::string where;
  int listed = 0;
  for (const Case& c : g.worst) {
    if (c.dim < 0) continue;
    if (listed++ == 3) {
      where += ", ...";
      break;
    }
    where += (where.empty() ? "" : "; ") + case_value(c, g.tests > 1);
  }
  std::string counts = std::to_string(g.pairs_failed) + " of " + std::to_string(g.pairs_checked) + " pairs";
  if (g.passthrough_failed > 0) {
    counts += (g.pairs_failed > 0 ? " and " : ", ") + std::to_string(g.passthrough_failed) + " of " +
              std::to_string(g.passthrough_checked) + " passed-through values";
  }
  d.explanation_kind = "isolated_values";
  d.mistake = "isolated wrong values";
  d.mistake_within = static_cast<double>(checked - failed) / static_cast<double>(checked);  // every other value is within the bound
  d.headline = "your outputs have isolated wrong values";
  d.explanation = d.headline + ": " + counts + " out of the bound, at " + where + "; every other value is within it";
  return true;
}

// What the decomposition measured over the ordinary pairs with finite outputs (`measured`): those
// of rotation e above kRotationFar, those whose norm is off by more than kNormKept, and the largest
// |s − 1|.
struct PairCounts {
  std::int64_t measured = 0, rotation_far = 0, norm_off = 0;
  double scale_error = 0;
  std::int64_t angle_measured = 0;  // of `measured`, the pairs whose spec angle long double resolves
};

// The generic angle and rotation lines of a diagnosis that names nothing (judge/README.md
// "Explanation"), each only where what it says was measured.
void add_error_lines(GroupDiagnosis& d, const PairCounts& counts, std::int64_t angle_position, long double noise) {
  const auto [measured, rotation_far, norm_off, scale_error, angle_measured] = counts;
  // No ordinary pair with finite outputs: the angle and the rotation were not measured, and a line
  // of zeros would read as a finding.
  if (measured == 0) return;
  // Pair norms not kept at a share of the pairs: the outputs are not a rotation of the inputs, and
  // neither an angle nor an arithmetic's precision describes them.
  if (norm_off * 100 >= measured) {
    d.lines.push_back("rotation: the outputs are not a rotation of the inputs (pair norms off by more than " + number(kNormKept) + " at " +
                      std::to_string(norm_off) + " of " + std::to_string(measured) + " pairs, by up to " + number(scale_error) + ")");
    return;
  }
  // The angle line, where some pair's angle was measured (angle_resolved).
  if (angle_measured == 0) {
  } else if (d.angle_error_rad <= static_cast<double>(noise)) {
    d.lines.push_back("angle: within the output's own rounding (largest angle error " + number(d.angle_error_rad) + " rad)");
  } else {
    std::string line = "angle: error up to " + number(d.angle_error_rad) + " rad (" + number(d.angle_error_ulps) +
                       " binary32 ulps of the angle) at position " + std::to_string(angle_position);
    if (!d.frequency_growth.empty()) {
      line += "; frequency error up to " + number(d.frequency_error_ulps) + " ulp at pair " + std::to_string(d.frequency_error_pair) +
              (d.frequency_growth == "pair index"
                   ? ", growing with the pair index (as a running product theta *= r, or a rounded exponent, gives)"
                   : ", about the same over the pair indices");
    }
    d.lines.push_back(line);
  }
  // The arithmetic's precision is blamed only where a share of the pairs shows it (1 % or more): a
  // few values far off are not how a cos/sin or a product of the wrong precision fails.
  std::string rotation = "rotation at its own angle: e <= " + number(d.rotation_e);
  if (d.rotation_e > kRotationFar && rotation_far * 100 >= measured) {
    rotation += " (the cos/sin or the products are not computed in the data dtype's precision)";
  } else if (d.rotation_e > kRotationFar) {
    rotation +=
        " (above " + number(kRotationFar) + " at " + std::to_string(rotation_far) + " of " + std::to_string(measured) + " pairs only)";
  }
  d.lines.push_back(rotation);
}

// A row (token × head) of a diagnosed test.
struct RowRef {
  const DiagnosedTest* dt;
  std::int64_t t, h;
};

// The rows of `tests`, tests in order, then tokens, then heads.
std::vector<RowRef> rows_of(const std::vector<DiagnosedTest>& tests) {
  std::vector<RowRef> rows;
  for (const DiagnosedTest& dt : tests) {
    for (std::int64_t t = 0; t < dt.test->tokens; ++t) {
      for (std::int64_t h = 0; h < dt.test->heads; ++h) rows.push_back({&dt, t, h});
    }
  }
  return rows;
}

// Per position component, whether the rows take it in order of |m|.
std::vector<bool> components_in_order(const Spec& spec, const std::vector<RowRef>& rows) {
  const int components = position_components(spec);
  std::vector<bool> component_in_order(static_cast<std::size_t>(components), true);
  for (int c = 0; c < components; ++c) {
    long double previous = 0;
    for (const RowRef& ref : rows) {
      const long double m = std::fabs(static_cast<long double>(ref.dt->test->positions[static_cast<std::size_t>(ref.t * components + c)]));
      if (m < previous) {
        component_in_order[static_cast<std::size_t>(c)] = false;
        break;
      }
      previous = m;
    }
  }
  return component_in_order;
}

// Whether the spec's angle φ = m·θ'_j, computed in long double (θ'_j within a few units of 2^-64
// relative, one rounding of the product: |error| < |φ|·2^-60), is known well enough to compare
// with the output's angle, whose own rounding accounts for `noise`. Past it (f32 angles above
// 2^38 rad, f64 above 2^9) an angle error would be long double's, not the candidate's.
bool angle_resolved(long double phi, long double noise) { return std::fabs(phi) * 0x1p-60L <= noise; }

// The largest angle error's row and pair: the first in (row, pair) order on ties, as one pass.
struct Figures {
  double rotation_e = 0, angle_error_rad = 0, angle_error_ulps = 0;
  // Ordinary pairs with finite outputs; those of rotation e > kRotationFar; those whose norm is
  // off by more than kNormKept.
  std::int64_t measured = 0, rotation_far = 0, norm_off = 0;
  double scale_error = 0;  // largest |s − 1|
  std::int64_t angle_measured = 0;  // of `measured`, the pairs whose spec angle long double resolves
  std::int64_t angle_position = 0;
  std::size_t angle_row = 0;
  int angle_pair = 0;
};

// The decomposition of one block of pair indices over every row (diagnose's step 1), and each
// pair's fitted frequency error.
struct Decomposition {
  const Spec& spec;
  const std::vector<RowRef>& rows;
  const std::vector<long double>& theta;        // the spec's frequency per pair index
  const std::vector<bool>& component_in_order;  // components_in_order
  long double u, g, sign, noise;                // the dtype's unit roundoff, attention factor, direction, noise angle

  // Pairs [first, first + count): their figures; their fits into `fits`.
  Figures block(int first, int count, std::vector<std::optional<PairFit>>& fits) const {
    Figures f;
    std::vector<PairFitter> fitters;
    std::vector<std::vector<AngleSample>> kept(static_cast<std::size_t>(count));  // pairs whose rows are not in order of |m|
    std::vector<bool> streamed(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      fitters.emplace_back(theta[static_cast<std::size_t>(first + i)], noise);
      streamed[static_cast<std::size_t>(i)] = component_in_order[static_cast<std::size_t>(position_component(spec, first + i))];
    }
    // Per pair, what depends on the token alone (its heads share it): the position component, the
    // spec's angle wrapped, and one binary32 ulp of the angle. Computed once per token, not per row:
    // the wrap of a large angle is a remainder call, and a check's token has dozens of heads.
    std::vector<TokenAngle> token_angles(static_cast<std::size_t>(count));
    const Call* angles_test = nullptr;
    std::int64_t angles_token = -1;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const RowRef& ref = rows[r];
      const Call& test = *ref.dt->test;
      const std::span<const double> output = ref.dt->output;
      const std::size_t row = static_cast<std::size_t>((ref.t * test.heads + ref.h) * spec.head_dim);
      if (&test != angles_test || ref.t != angles_token) {
        angles_test = &test;
        angles_token = ref.t;
        for (int i = 0; i < count; ++i) {
          TokenAngle& angle = token_angles[static_cast<std::size_t>(i)];
          angle.m = static_cast<long double>(pair_position(spec, test, ref.t, first + i));
          angle.phi = sign * angle.m * theta[static_cast<std::size_t>(first + i)];
          angle.wrapped = wrap_to_pi(angle.phi);
          angle.ulp = ulp32(angle.phi);
        }
      }
      for (int i = 0; i < count; ++i) {
        const TokenAngle& angle = token_angles[static_cast<std::size_t>(i)];
        const reference::PairDims pd = reference::pair_dims(spec, first + i);
        const long double x = test.input[row + static_cast<std::size_t>(pd.first)];
        const long double y = test.input[row + static_cast<std::size_t>(pd.second)];
        const long double a = output[row + static_cast<std::size_t>(pd.first)];
        const long double b = output[row + static_cast<std::size_t>(pd.second)];
        if (domain_of(static_cast<double>(x), static_cast<double>(y), spec.dtype, static_cast<double>(g)) != Domain::ordinary ||
            !std::isfinite(a) || !std::isfinite(b)) {
          continue;
        }
        const long double rho = pair_norm(x, y);
        const long double m = angle.m;
        const long double phi = angle.phi;
        const long double own = atan2_by_table(x * b - y * a, x * a + y * b);
        const long double delta = wrap_to_pi(own - angle.wrapped);
        const long double scale = pair_norm(a, b) / (std::fabs(g) * rho);
        const double rotation_e = static_cast<double>(std::fabs(scale - 1) * std::fabs(g) / (u * std::max(1.0L, std::fabs(g))));
        f.rotation_e = std::max(f.rotation_e, rotation_e);
        ++f.measured;
        f.rotation_far += rotation_e > kRotationFar;
        f.norm_off += std::fabs(scale - 1) > kNormKept;
        f.scale_error = std::max(f.scale_error, static_cast<double>(std::fabs(scale - 1)));
        if (!angle_resolved(phi, noise)) continue;
        ++f.angle_measured;
        if (std::fabs(delta) > f.angle_error_rad) {
          f.angle_error_rad = static_cast<double>(std::fabs(delta));
          f.angle_position = static_cast<std::int64_t>(m);
          f.angle_row = r;
          f.angle_pair = first + i;
        }
        // In ulps of the angle where the error stands above the output's own rounding (an angle
        // of a few ulps of 2^-30 would otherwise read as millions of its ulps).
        if (phi != 0 && std::fabs(delta) > 4 * u) {
          f.angle_error_ulps = std::max(f.angle_error_ulps, static_cast<double>(std::fabs(delta) / angle.ulp));
        }
        if (m == 0) continue;
        if (streamed[static_cast<std::size_t>(i)]) {
          fitters[static_cast<std::size_t>(i)].add(m, delta);
        } else {
          kept[static_cast<std::size_t>(i)].push_back({m, delta});
        }
      }
    }
    for (int i = 0; i < count; ++i) {
      PairFitter& fitter = fitters[static_cast<std::size_t>(i)];
      if (!streamed[static_cast<std::size_t>(i)]) {
        std::vector<AngleSample>& samples = kept[static_cast<std::size_t>(i)];
        sort_by_position_magnitude(samples);
        for (const AngleSample& sample : samples) fitter.add(sample.m, sample.delta);
      }
      if (fitter.any()) fits[static_cast<std::size_t>(first + i)] = fitter.fit();
    }
    return f;
  }
};

}  // namespace

GroupDiagnosis diagnose(const Spec& spec, const std::vector<DiagnosedTest>& tests, Model model, bool failing, int threads,
                        const GroupResult* group) {
  GroupDiagnosis d;
  const long double u = std::ldexp(1.0L, -significand_bits(spec.dtype));
  const long double g = attention_factor<long double>(spec);
  const long double sign = spec.direction == Direction::inverse ? -1 : 1;
  const int pairs = spec.rotary_dim / 2;
  std::vector<long double> theta(static_cast<std::size_t>(pairs));
  for (int j = 0; j < pairs; ++j) theta[static_cast<std::size_t>(j)] = frequency<long double>(spec, j);

  // 1. The decomposition, over the ordinary pairs with finite outputs, and per pair index the fitted
  // frequency error. The rows (token, head) go in order; the pair indices in blocks, one task per
  // block on every thread (base/parallel.h): a row's values of neighbouring pairs share cache
  // lines, read once per block, and each pair's fit sees its samples in row order. Where that is
  // the order of |m| for the pair's position component (a sweep's positions, a check's tokens in
  // order) its fit takes them as they come and keeps none; else they are kept and sorted first
  // (sort_by_position_magnitude, a stable sort). Blocks of pairs, not ranges of rows, so that no
  // range keeps every pair's samples for a second pass (bench/README.md
  // "A sweep's serial part: diagnosis").
  const std::vector<RowRef> rows = rows_of(tests);
  const std::vector<bool> component_in_order = components_in_order(spec, rows);
  const long double noise = 4 * u;  // the angle the output's own rounding can account for
  const int block = pair_block_size(pairs, threads);
  const int blocks = (pairs + block - 1) / block;
  std::vector<Figures> block_figures(static_cast<std::size_t>(blocks));
  std::vector<std::optional<PairFit>> fits(static_cast<std::size_t>(pairs));
  const Decomposition decomposition{spec, rows, theta, component_in_order, u, g, sign, noise};
  parallel_for(static_cast<std::size_t>(blocks), threads, [&](std::size_t b) {
    const int first = static_cast<int>(b) * block;
    const int count = std::min(pairs, first + block) - first;
    block_figures[b] = decomposition.block(first, count, fits);
  });
  std::int64_t angle_position = 0;
  std::size_t angle_row = 0;
  int angle_pair = 0;
  std::int64_t measured = 0, rotation_far = 0, norm_off = 0, angle_measured = 0;
  double scale_error = 0;
  for (const Figures& f : block_figures) {
    measured += f.measured;
    angle_measured += f.angle_measured;
    rotation_far += f.rotation_far;
    norm_off += f.norm_off;
    scale_error = std::max(scale_error, f.scale_error);
    d.rotation_e = std::max(d.rotation_e, f.rotation_e);
    if (f.angle_error_rad > d.angle_error_rad || (f.angle_error_rad == d.angle_error_rad && f.angle_error_rad > 0 &&
                                                  (f.angle_row < angle_row || (f.angle_row == angle_row && f.angle_pair < angle_pair)))) {
      d.angle_error_rad = f.angle_error_rad;
      angle_position = f.angle_position;
      angle_row = f.angle_row;
      angle_pair = f.angle_pair;
    }
    d.angle_error_ulps = std::max(d.angle_error_ulps, f.angle_error_ulps);
  }
  std::vector<std::pair<int, long double>> frequency_ulps;  // (pair, |error| in ulps of θ'_j)
  for (std::size_t j = 0; j < fits.size(); ++j) {
    if (!fits[j] || !fits[j]->resolved) continue;
    frequency_ulps.emplace_back(static_cast<int>(j), std::fabs(fits[j]->frequency_error) / ulp32(theta[j]));
  }
  for (const auto& [j, ulps] : frequency_ulps) {
    if (ulps > d.frequency_error_ulps) {
      d.frequency_error_ulps = static_cast<double>(ulps);
      d.frequency_error_pair = j;
    }
  }

  // 2. The spec inference (judge/inference.h): the change of the spec that reproduces the outputs.
  const double spec_within = infer_spec(spec, tests, failing, threads, d);
  d.f32_angle_share = spec_within;
  // What the group's counts and kept cases say where the sample names nothing: subnormals flushed
  // to zero, or a few values far off among pairs the spec explains.
  if (failing && group && d.explanation.empty() && !name_flushed_subnormals(*group, d) && spec_within >= 0.99) {
    name_isolated_values(spec, *group, d);
  }
  if (!d.explanation.empty()) {
    d.lines.push_back(d.explanation);
  } else if (failing && model == Model::exact && spec_within >= 0.99) {
    // Only on a failing group: a passing or marginal one (f64 data included) is told nothing.
    d.lines.push_back(
        "outputs are within the f32-angle model's bound: an angle computed in binary32 (--model f32-angle judges this class)");
  }
  // Growth with the pair index: the errors of the top quarter of the pair indices against the
  // bottom quarter (a running product's error grows linearly: about 7 times as large there).
  if (d.angle_error_rad > static_cast<double>(noise) && !frequency_ulps.empty()) {
    std::vector<long double> lower, upper;
    for (const auto& [j, ulps] : frequency_ulps) {
      if (4 * j < pairs) lower.push_back(ulps);
      if (4 * j >= 3 * pairs) upper.push_back(ulps);
    }
    auto median = [](std::vector<long double> v) {
      if (v.empty()) return 0.0L;
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      return v[v.size() / 2];
    };
    const long double lo = median(lower), hi = median(upper);
    d.frequency_growth = !lower.empty() && !upper.empty() && hi > 3 * lo + 2 ? "pair index" : "constant";
  }
  // A fitted explanation (a change of the spec, a memory fault) accounts for the outputs: the
  // generic angle and rotation lines, computed against the spec as given, would read as a second
  // cause beside it (judge/README.md "Explanation"); their figures stay in the fields.
  if (!d.explanation_kind.empty()) return d;
  add_error_lines(d, {measured, rotation_far, norm_off, scale_error, angle_measured}, angle_position, noise);
  return d;
}

namespace {
// Tokens a sample of tests of token_size > 0 values per token keeps: diagnosis_sample_into's, of
// one test, and the spread sample's (it decimates past this many, so holds at most one more).
std::int64_t sample_token_budget(std::int64_t max_values, std::int64_t token_size) {
  return std::max<std::int64_t>(1, max_values / token_size);
}
std::int64_t spread_token_budget(std::int64_t max_values, std::int64_t token_size) {
  return std::max<std::int64_t>(2, max_values / 2 / token_size);
}

// A vector's storage for n values with its pages faulted in (base/parallel.h
// resize_for_overwrite), then emptied: clear keeps the capacity, so later inserts up to n values
// write into pages already there.
template <class T>
void fault_in(std::vector<T>& values, std::size_t n) {
  if (values.capacity() >= n) return;
  values.clear();
  resize_for_overwrite(values, n, 1);
  values.clear();
}
}  // namespace

void DiagnosisSampler::prepare(std::int64_t token_size, int components, std::int64_t tokens) {
  if (token_size <= 0 || components <= 0 || tokens <= 0 || sample_ || spread_.test.tokens > 0) return;
  // what diagnosis_sample_into and spread keep at most, and never more tokens than there are
  const auto sample_tokens = static_cast<std::size_t>(std::min(tokens, sample_token_budget(max_values_, token_size)));
  const auto spread_tokens = static_cast<std::size_t>(std::min(tokens, spread_token_budget(max_values_, token_size) + 1));
  const auto size = static_cast<std::size_t>(token_size);
  const auto per_token = static_cast<std::size_t>(components);
  // The sample's arrays at their size (diagnosis_sample_into resizes them to it, or below: then it
  // writes nothing but the copy); the spread's empty, for its inserts.
  DiagnosisSample& sample = sample_prepared_;
  sample.test.positions.resize(sample_tokens * per_token);
  sample.test.input.resize(sample_tokens * size);
  sample.output.resize(sample_tokens * size);
  fault_in(spread_.test.positions, spread_tokens * per_token);
  fault_in(spread_.test.input, spread_tokens * size);
  fault_in(spread_.output, spread_tokens * size);
  spread_.token_index.reserve(spread_tokens);
}

void DiagnosisSampler::expect_tokens(std::int64_t token_size, std::int64_t tokens) {
  if (token_size <= 0 || tokens <= 0 || tests_offered_ > 0) return;
  const std::int64_t budget = spread_token_budget(max_values_, token_size);
  std::int64_t stride = 1;
  while ((tokens - 1) / stride + 1 > budget) stride *= 2;  // ceil(tokens / stride) tokens kept
  spread_stride_ = stride;
}

void DiagnosisSampler::spread(const Call& test, std::span<const double> output, int components, std::int64_t first_token) {
  const std::int64_t token_size = test.heads * test.head_dim;
  if (token_size <= 0) return;
  Call& kept = spread_.test;
  if (kept.tokens == 0) {
    kept.id = test.id;
    kept.heads = test.heads;
    kept.head_dim = test.head_dim;
  }
  if (kept.heads != test.heads || kept.head_dim != test.head_dim) return;  // one shape per sample
  const std::int64_t budget = spread_token_budget(max_values_, token_size);
  // At most budget + 1 tokens are kept at any time: sized for them once (see diagnosis_sample_into).
  const auto most = static_cast<std::size_t>(budget + 1);
  kept.positions.reserve(most * static_cast<std::size_t>(components));
  kept.input.reserve(most * static_cast<std::size_t>(token_size));
  spread_.output.reserve(most * static_cast<std::size_t>(token_size));
  spread_.token_index.reserve(most);
  for (std::int64_t t = 0; t < test.tokens; t += spread_stride_) {
    const auto p = test.positions.begin() + t * components;
    kept.positions.insert(kept.positions.end(), p, p + components);
    const auto x = test.input.begin() + t * token_size;
    kept.input.insert(kept.input.end(), x, x + token_size);
    const auto o = output.begin() + t * token_size;
    spread_.output.insert(spread_.output.end(), o, o + token_size);
    spread_.token_index.push_back(first_token + t);
    ++kept.tokens;
    if (kept.tokens > budget) {  // decimate: keep tokens 0, 2, 4, ...
      std::int64_t n = 0;
      for (std::int64_t k = 0; k < kept.tokens; k += 2, ++n) {
        std::copy_n(kept.positions.begin() + k * components, components, kept.positions.begin() + n * components);
        std::copy_n(kept.input.begin() + k * token_size, token_size, kept.input.begin() + n * token_size);
        std::copy_n(spread_.output.begin() + k * token_size, token_size, spread_.output.begin() + n * token_size);
        spread_.token_index[static_cast<std::size_t>(n)] = spread_.token_index[static_cast<std::size_t>(k)];
      }
      kept.tokens = n;
      kept.positions.resize(static_cast<std::size_t>(n * components));
      kept.input.resize(static_cast<std::size_t>(n * token_size));
      spread_.output.resize(static_cast<std::size_t>(n * token_size));
      spread_.token_index.resize(static_cast<std::size_t>(n));
      spread_stride_ *= 2;
      // The rest of this test at the new stride, from the next token that stride keeps.
      t = (t / spread_stride_) * spread_stride_;
    }
  }
}

DiagnosisSample diagnosis_sample(const Call& test, std::span<const double> output, int components, std::int64_t max_values,
                                 std::int64_t first_token) {
  DiagnosisSample k;
  diagnosis_sample_into(k, test, output, components, max_values, first_token);
  return k;
}

void diagnosis_sample_into(DiagnosisSample& k, const Call& test, std::span<const double> output, int components, std::int64_t max_values,
                           std::int64_t first_token, int threads) {
  const std::int64_t token_size = test.heads * test.head_dim;
  // A test without tokens (or values) gives an empty sample: the stride below would divide by 0.
  const std::int64_t kept = token_size > 0 ? std::min(test.tokens, sample_token_budget(max_values, token_size)) : 0;
  const std::int64_t stride = kept > 0 ? (test.tokens + kept - 1) / kept : 1;
  k.first_token = first_token;
  k.token_stride = stride;
  k.token_index.clear();
  k.test.id = test.id;
  k.test.heads = test.heads;
  k.test.head_dim = test.head_dim;
  // Sized, then written token by token: a sample replaced in place (a direct check's next chunk)
  // keeps its size, so the resize writes nothing and the copy is all there is, on every thread (on
  // one, its 16 MB were the serial step between two chunks' judging). Grown by insert, the first
  // sample reallocated and copied itself into fresh pages over and over.
  const auto kept_tokens = static_cast<std::size_t>(kept > 0 ? (test.tokens + stride - 1) / stride : 0);
  const auto per_token = static_cast<std::size_t>(components), size = static_cast<std::size_t>(token_size);
  k.test.tokens = static_cast<std::int64_t>(kept_tokens);
  k.test.positions.resize(kept_tokens * per_token);
  k.test.input.resize(kept_tokens * size);
  k.output.resize(kept_tokens * size);
  const int copy_threads = kept_tokens * size < kParallelCopyValues ? 1 : threads;
  const std::vector<TokenRange> ranges = token_ranges(static_cast<std::int64_t>(kept_tokens), copy_threads);
  parallel_for(ranges.size(), copy_threads, [&](std::size_t w) {
    for (auto i = static_cast<std::size_t>(ranges[w].begin); i < static_cast<std::size_t>(ranges[w].end); ++i) {
      const std::size_t t = i * static_cast<std::size_t>(stride);
      std::copy_n(test.positions.begin() + static_cast<std::ptrdiff_t>(t * per_token), per_token,
                  k.test.positions.begin() + static_cast<std::ptrdiff_t>(i * per_token));
      std::copy_n(test.input.begin() + static_cast<std::ptrdiff_t>(t * size), size,
                  k.test.input.begin() + static_cast<std::ptrdiff_t>(i * size));
      std::copy_n(output.begin() + static_cast<std::ptrdiff_t>(t * size), size, k.output.begin() + static_cast<std::ptrdiff_t>(i * size));
    }
  });
}

std::vector<DiagnosedTest> within_max_position(const std::vector<DiagnosedTest>& tests, const Spec& spec,
                                               std::optional<std::int64_t> max_position, std::vector<TrimmedTest>& store) {
  if (!max_position) return tests;
  store.clear();
  store.reserve(tests.size());  // no reallocation: the result points into it
  std::vector<DiagnosedTest> out;
  const auto components = static_cast<std::ptrdiff_t>(position_components(spec));
  for (const DiagnosedTest& dt : tests) {
    const Call& test = *dt.test;
    std::vector<std::int64_t> kept;
    for (std::int64_t t = 0; t < test.tokens; ++t) {
      if (token_position(test, spec, t) <= *max_position) kept.push_back(t);
    }
    if (static_cast<std::int64_t>(kept.size()) == test.tokens) {
      out.push_back(dt);
      continue;
    }
    if (kept.empty()) continue;
    TrimmedTest& trimmed = store.emplace_back();
    trimmed.test.id = test.id;
    trimmed.test.heads = test.heads;
    trimmed.test.head_dim = test.head_dim;
    trimmed.test.tokens = static_cast<std::int64_t>(kept.size());
    const auto row = static_cast<std::ptrdiff_t>(test.heads * test.head_dim);
    for (const std::int64_t t : kept) {
      const auto i = static_cast<std::ptrdiff_t>(t);
      trimmed.test.positions.insert(trimmed.test.positions.end(), test.positions.begin() + i * components,
                                    test.positions.begin() + (i + 1) * components);
      trimmed.test.input.insert(trimmed.test.input.end(), test.input.begin() + i * row, test.input.begin() + (i + 1) * row);
      trimmed.output.insert(trimmed.output.end(), dt.output.begin() + i * row, dt.output.begin() + (i + 1) * row);
      trimmed.token_index.push_back(dt.user_token(t));
    }
    out.push_back({.test = &trimmed.test, .output = trimmed.output, .token_index = trimmed.token_index});
  }
  return out;
}

}  // namespace ropecheck::judge
