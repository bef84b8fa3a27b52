// The fits from the candidate's own angles: per-pair frequencies, the base, the factor, the offset, the gain.
#include "judge/inference_detail.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "base/parallel.h"
#include "judge/pair_math.h"
#include "judge/pair_rule.h"
#include "judge/tolerance.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::judge::inference_detail {

// ---- the fits ------------------------------------------------------------------------------------

struct Observation {
  long double m;      // the pair's position component
  long double phi;    // the candidate's own angle, wrapped
  long double delta;  // φ_c − m·θ'_j, wrapped
};

// θ̂: unwrapped along increasing |m| from the candidate's own smallest angle, least squares through
// the origin. Null when no position is non-zero, or the residual says the angles are not a line.
std::optional<long double> fit_frequency(std::vector<Observation> obs) {
  std::erase_if(obs, [](const Observation& o) { return o.m == 0; });
  if (obs.size() < 3) return std::nullopt;
  sort_by_position_magnitude(obs);
  long double sxy = 0, sxx = 0;
  std::vector<long double> unwrapped;
  for (const Observation& o : obs) {
    const long double predicted = sxx > 0 ? sxy / sxx * o.m : 0;
    const long double d = predicted + wrap_to_pi(o.phi - predicted);
    unwrapped.push_back(d);
    sxy += o.m * d;
    sxx += o.m * o.m;
  }
  const long double slope = sxy / sxx;
  long double rss = 0;
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const long double r = unwrapped[i] - slope * obs[i].m;
    rss += r * r;
  }
  if (std::sqrt(rss / static_cast<long double>(obs.size())) > 0.05L) return std::nullopt;
  return slope;
}

long double median(std::vector<long double> v) {
  if (v.empty()) return std::numeric_limits<long double>::quiet_NaN();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// ---- the fits from the candidate's own angles ----------------------------------------------------

// The per-pair θ̂ alone where `failing` is false (a passing or marginal group's diagnosis reports
// them and names no change of the spec); the gain, the schedule and the offset too where it is true.
Fits fit(const Spec& spec, const std::vector<Row>& rows, bool failing, int threads) {
  Fits f;
  const int pairs = spec.rotary_dim / 2;
  const int components = position_components(spec);
  const long double g = attention_factor<long double>(spec);
  std::vector<long double> theta(static_cast<std::size_t>(pairs));
  for (int j = 0; j < pairs; ++j) theta[static_cast<std::size_t>(j)] = frequency<long double>(spec, j);
  // Per pair, on every thread: its observations over the rows in row order, its gains, and θ̂.
  // The pairs go in blocks (base/parallel.h pair_block_size, a task per block): a row's values of
  // neighbouring pairs share cache lines, read once per block. (Cut by rows instead, each pair's
  // observations were joined from every range afterwards: a copy that cost more than the fits on a
  // second thread.)
  const int block_pairs = pair_block_size(pairs, threads);
  const long double sign = spec.direction == Direction::inverse ? -1 : 1;
  std::vector<std::vector<Observation>> obs(static_cast<std::size_t>(pairs));
  std::vector<std::vector<long double>> pair_gains(static_cast<std::size_t>(pairs));
  f.theta_hat.resize(static_cast<std::size_t>(pairs));
  const int blocks = (pairs + block_pairs - 1) / block_pairs;
  parallel_for(static_cast<std::size_t>(blocks), threads, [&](std::size_t block) {
    const int first = static_cast<int>(block) * block_pairs;
    const int last = std::min(pairs, first + block_pairs);
    for (int j = first; j < last; ++j) {
      obs[static_cast<std::size_t>(j)].reserve(rows.size());
      if (failing) pair_gains[static_cast<std::size_t>(j)].reserve(rows.size());
    }
    for (const Row& r : rows) {
      const Call& test = *r.test;
      const std::size_t row = static_cast<std::size_t>((r.t * test.heads + r.h) * spec.head_dim);
      for (int j = first; j < last; ++j) {
        const reference::PairDims pd = reference::pair_dims(spec, j);
        const long double x = test.input[row + static_cast<std::size_t>(pd.first)],
                          y = test.input[row + static_cast<std::size_t>(pd.second)];
        const long double a = r.output[row + static_cast<std::size_t>(pd.first)], b = r.output[row + static_cast<std::size_t>(pd.second)];
        if (domain_of(static_cast<double>(x), static_cast<double>(y), spec.dtype, static_cast<double>(g)) != Domain::ordinary ||
            !std::isfinite(a) || !std::isfinite(b) || (a == 0 && b == 0)) {
          continue;
        }
        const long double m =
            static_cast<long double>(test.positions[static_cast<std::size_t>(r.t * components + position_component(spec, j))]);
        const long double phi = atan2_by_table(x * b - y * a, x * a + y * b);
        obs[static_cast<std::size_t>(j)].push_back({m, phi, wrap_to_pi(phi - wrap_to_pi(sign * m * theta[static_cast<std::size_t>(j)]))});
        if (failing) pair_gains[static_cast<std::size_t>(j)].push_back(pair_norm(a, b) / (pair_norm(x, y) * std::fabs(g)));
      }
    }
    for (int j = first; j < last; ++j) f.theta_hat[static_cast<std::size_t>(j)] = fit_frequency(obs[static_cast<std::size_t>(j)]);
  });
  if (!failing) return f;
  // The gain, the median over every pair of every row (an order statistic: the same value in any
  // order of the pairs), on one thread while the schedule and the offset are fitted on another.
  const auto fit_gain = [&] {
    std::vector<long double> gains;
    for (std::vector<long double>& v : pair_gains) {
      gains.insert(gains.end(), v.begin(), v.end());
      std::vector<long double>().swap(v);
    }
    if (!gains.empty()) f.gain = median(std::move(gains));
  };
  const auto fit_schedule_and_offset = [&] {
    // ln θ̂_j = −ln f − (2j/d)·ln b over the resolved pairs (for 2-D RoPE the schedule's own index).
    const bool two_d = spec.axes.kind == AxesKind::two_d;
    const long double d = two_d ? spec.rotary_dim / 2 : spec.rotary_dim;
    long double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int n = 0;
    std::vector<long double> per_pair_base;
    for (int j = 0; j < pairs; ++j) {
      const std::optional<long double>& t = f.theta_hat[static_cast<std::size_t>(j)];
      if (!t || !(sign * *t > 0)) continue;
      const long double x = 2 * (two_d ? j / 2 : j) / d, y = std::log(sign * *t);
      sx += x, sy += y, sxx += x * x, sxy += x * y;
      ++n;
      if (x > 0) per_pair_base.push_back(std::exp(-y / x));
    }
    if (n >= 3 && n * sxx - sx * sx > 0) {
      const long double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
      const long double intercept = (sy - slope * sx) / n;
      f.base = std::exp(-slope);
      // The overall factor against the spec's own schedule: θ'_j/θ̂_j, median over the pairs.
      std::vector<long double> ratios;
      for (int j = 0; j < pairs; ++j) {
        const std::optional<long double>& t = f.theta_hat[static_cast<std::size_t>(j)];
        if (t && sign * *t > 0) ratios.push_back(theta[static_cast<std::size_t>(j)] / (sign * *t));
      }
      f.factor = median(ratios);
      (void)intercept;
    }
    if (per_pair_base.size() >= 3) f.base_median = median(per_pair_base);
    // The position offset k: pairs from the lowest frequency up; each refines k where its angle
    // cannot have wrapped (|uncertainty|·θ < π/2), by the median over the tokens.
    std::vector<int> order(static_cast<std::size_t>(pairs));
    for (int j = 0; j < pairs; ++j) order[static_cast<std::size_t>(j)] = j;
    std::sort(order.begin(), order.end(),
              [&](int l, int r) { return theta[static_cast<std::size_t>(l)] < theta[static_cast<std::size_t>(r)]; });
    const long double noise = std::ldexp(4.0L, -significand_bits(spec.dtype));
    long double k = 0, uncertainty = -1;
    bool any = false;
    for (int j : order) {
      const long double th = theta[static_cast<std::size_t>(j)];
      if (obs[static_cast<std::size_t>(j)].empty() || !(th > 0)) continue;
      if (uncertainty >= 0 && uncertainty * th >= kPi / 2) continue;
      std::vector<long double> residual;
      for (const Observation& o : obs[static_cast<std::size_t>(j)]) residual.push_back(wrap_to_pi(o.delta - sign * k * th));
      const long double step = median(residual) / (sign * th);
      if (!any && std::fabs(step) * th > kPi / 2) break;  // the lowest frequency already wraps: no estimate
      k += step;
      any = true;
      uncertainty = 4 * noise / th + 0.5L;
    }
    if (any) f.offset = std::round(k);
  };
  parallel_for(2, threads, [&](std::size_t task) {
    if (task == 0) {
      fit_gain();
    } else {
      fit_schedule_and_offset();
    }
  });
  return f;
}

}  // namespace ropecheck::judge::inference_detail
