#include "judge/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "judge/pair_rule.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::judge {
namespace {

constexpr long double kPi = 3.141592653589793238462643383279502884L;
constexpr long double kTwoPi = 2 * kPi;

// Into [−π, π].
long double wrap(long double a) { return std::remainder(a, kTwoPi); }

// One binary32 ulp of |v| (the subnormal spacing below the normal range).
long double ulp32(long double v) {
  v = std::fabs(v);
  if (v < 0x1p-126L) return 0x1p-149L;
  int e = 0;
  (void)std::frexp(v, &e);  // v = f·2^e, 0.5 ≤ f < 1
  return std::ldexp(1.0L, e - 24);
}

std::string number(double v, const char* format = "%.3g") {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

// The position component each pair reads (multi-axis specs) of token t.
std::int64_t pair_position(const Spec& spec, const golden::RopeTest& test, std::int64_t t, int pair) {
  const int components = position_components(spec);
  return test.positions[static_cast<std::size_t>(t * components + position_component(spec, pair))];
}

// ---- 1. the error decomposition ---------------------------------------------------------------

struct AngleSample {
  long double m;      // the pair's position component
  long double delta;  // φ_c − φ, wrapped
};

// The effective frequency error of one pair index, fitted through the origin over its positions:
// the samples in order of |m|, each angle error unwrapped to the prediction of those before it
// (an error of many turns at a large position is one branch of atan2), least squares weighted by m².
// Also the fit of a constant offset of the position, o·θ'_j, and which of the two explains the
// samples better.
struct PairFit {
  long double frequency_error = 0;  // radians per position
  long double offset = 0;           // in positions
  bool offset_fits_better = false;
  bool resolved = false;            // some sample's |m|·ulp32(θ'_j) is far above the output's rounding
};

PairFit fit_pair(std::vector<AngleSample> samples, long double theta, long double noise) {
  PairFit fit;
  std::sort(samples.begin(), samples.end(), [](const AngleSample& l, const AngleSample& r) { return std::fabs(l.m) < std::fabs(r.m); });
  long double sxy = 0, sxx = 0;
  std::vector<long double> unwrapped;
  for (const AngleSample& s : samples) {
    const long double predicted = sxx > 0 ? sxy / sxx * s.m : 0;
    const long double d = predicted + wrap(s.delta - predicted);
    unwrapped.push_back(d);
    sxy += s.m * d;
    sxx += s.m * s.m;
    if (std::fabs(s.m) * ulp32(theta) > 16 * noise) fit.resolved = true;
  }
  if (sxx == 0 || theta == 0) return fit;
  fit.frequency_error = sxy / sxx;
  long double offset_sum = 0;
  for (const AngleSample& s : samples) offset_sum += s.delta / theta;
  fit.offset = offset_sum / static_cast<long double>(samples.size());
  long double rss_frequency = 0, rss_offset = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const long double rf = unwrapped[i] - fit.frequency_error * samples[i].m;
    const long double ro = wrap(samples[i].delta - fit.offset * theta);
    rss_frequency += rf * rf;
    rss_offset += ro * ro;
  }
  fit.offset_fits_better = std::fabs(fit.offset) >= 0.5L && rss_offset * 16 < rss_frequency;
  return fit;
}

// ---- 2. the usual mistakes -----------------------------------------------------------------------

// A way of getting RoPE wrong, as a change to what is computed.
struct Mistake {
  std::string name;
  Spec spec;                             // the spec the mistaken implementation computes
  std::int64_t position_shift = 0;       // added to every position component
  std::optional<Dtype> theta_dtype;      // θ'_j rounded to it
  std::optional<Dtype> cos_sin_dtype;    // cos and sin rounded to it
  long double gain = 1;                  // on the attention factor (1/g: missing, g: doubled)
};

// Outputs of one test under a mistake: values in long double (the angle m·θ with θ of at most 24
// bits is exact in long double's 64-bit significand; cosl/sinl within about 2^-63), and rounded to
// the dtype.
struct MistakeOutputs {
  std::vector<long double> exact;
  std::vector<double> rounded;
};

MistakeOutputs evaluate(const Mistake& mk, const Spec& spec, const golden::RopeTest& test) {
  MistakeOutputs out;
  out.exact.assign(test.input.begin(), test.input.end());
  const int pairs = mk.spec.rotary_dim / 2;
  std::vector<long double> theta(static_cast<std::size_t>(pairs));
  for (int j = 0; j < pairs; ++j) {
    long double t = frequency<long double>(mk.spec, j);
    if (mk.theta_dtype) t = reference::round_to_format(t, *mk.theta_dtype);
    theta[static_cast<std::size_t>(j)] = t;
  }
  const long double g = attention_factor<long double>(mk.spec) * mk.gain;
  const long double sign = mk.spec.direction == Direction::inverse ? -1 : 1;
  for (std::int64_t t = 0; t < test.tokens; ++t) {
    for (int j = 0; j < pairs; ++j) {
      const long double m = static_cast<long double>(pair_position(mk.spec, test, t, j) + mk.position_shift);
      const long double angle = sign * m * theta[static_cast<std::size_t>(j)];
      long double c = std::cos(angle), s = std::sin(angle);
      if (mk.cos_sin_dtype) {
        c = reference::round_to_format(c, *mk.cos_sin_dtype);
        s = reference::round_to_format(s, *mk.cos_sin_dtype);
      }
      const reference::PairDims pd = reference::pair_dims(mk.spec, j);
      for (std::int64_t h = 0; h < test.heads; ++h) {
        const std::size_t row = static_cast<std::size_t>((t * test.heads + h) * spec.head_dim);
        const long double x = test.input[row + static_cast<std::size_t>(pd.first)];
        const long double y = test.input[row + static_cast<std::size_t>(pd.second)];
        out.exact[row + static_cast<std::size_t>(pd.first)] = g * (x * c - y * s);
        out.exact[row + static_cast<std::size_t>(pd.second)] = g * (x * s + y * c);
      }
    }
  }
  out.rounded.reserve(out.exact.size());
  for (long double v : out.exact) out.rounded.push_back(static_cast<double>(reference::round_to_format(v, spec.dtype)));
  return out;
}

struct MistakeScore {
  double within = 0;     // share of ordinary pairs within the f32-angle bound of the mistake's values
  double identical = 0;  // share of the rotated values equal to the mistake's rounded values
  std::int64_t pairs = 0;
};

MistakeScore score(const Mistake& mk, const Spec& spec, const std::vector<DiagnosedTest>& tests, const PairRule& rule) {
  MistakeScore sc;
  std::int64_t within = 0, identical = 0, values = 0;
  // The mistake's own pairs and angles: a layout mistake rotates other pairs of dims, whose norms
  // are the ones its errors are relative to.
  const Spec& own = mk.spec;
  const long double sign = own.direction == Direction::inverse ? -1 : 1;
  for (const DiagnosedTest& dt : tests) {
    const golden::RopeTest& test = *dt.test;
    const MistakeOutputs m = evaluate(mk, spec, test);
    for (std::int64_t t = 0; t < test.tokens; ++t) {
      for (std::int64_t h = 0; h < test.heads; ++h) {
        const std::size_t row = static_cast<std::size_t>((t * test.heads + h) * spec.head_dim);
        for (int j = 0; j < own.rotary_dim / 2; ++j) {
          const reference::PairDims pd = reference::pair_dims(own, j);
          const std::size_t i1 = row + static_cast<std::size_t>(pd.first), i2 = row + static_cast<std::size_t>(pd.second);
          Pair p;
          p.x = test.input[i1];
          p.y = test.input[i2];
          if (domain_of(p.x, p.y, spec.dtype, rule.attention_factor) != Domain::ordinary) continue;
          p.a = dt.output[i1];
          p.b = dt.output[i2];
          p.exact_a = m.exact[i1];
          p.exact_b = m.exact[i2];
          p.rounded_a = m.rounded[i1];
          p.rounded_b = m.rounded[i2];
          p.angle = static_cast<double>(std::fabs(sign * static_cast<long double>(pair_position(own, test, t, j) + mk.position_shift) *
                                                  frequency<long double>(own, j)));
          ++sc.pairs;
          within += judge_pair(p, rule).pass();
          identical += (p.a == p.rounded_a) + (p.b == p.rounded_b);
          values += 2;
        }
      }
    }
  }
  if (sc.pairs > 0) sc.within = static_cast<double>(within) / static_cast<double>(sc.pairs);
  if (values > 0) sc.identical = static_cast<double>(identical) / static_cast<double>(values);
  return sc;
}

// The spec with another base, or nothing when the spec does not take it.
std::optional<Spec> with_base(const Spec& spec, const std::string& base) {
  Spec s = spec;
  s.base = base;
  try {
    validate(s);
  } catch (const SpecError&) {
    return std::nullopt;
  }
  return s;
}

std::string decimal(long double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17Lg", v);
  return buffer;
}

// The candidate's base, from its own angles where they cannot have wrapped: at each pair's smallest
// position, for the pairs whose angle there is below 0.05 rad by the spec (then a base off by a
// factor up to 30 in θ still gives |φ_c| < π/2). log θ_c,j against 2j/d is a line of slope −ln b.
// Only for an unscaled schedule.
std::optional<long double> estimated_base(const Spec& spec, const std::map<int, std::vector<AngleSample>>& samples) {
  if (spec.scaling.type != ScalingType::none || spec.axes.kind != AxesKind::none) return std::nullopt;
  const long double d = spec.rotary_dim;
  long double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int n = 0;
  for (const auto& [j, list] : samples) {
    const AngleSample* smallest = nullptr;
    for (const AngleSample& s : list) {
      if (s.m != 0 && (!smallest || std::fabs(s.m) < std::fabs(smallest->m))) smallest = &s;
    }
    if (!smallest) continue;
    const long double theta = frequency<long double>(spec, j);
    if (std::fabs(smallest->m) * theta > 0.05L) continue;
    const long double sign = spec.direction == Direction::inverse ? -1 : 1;
    const long double own = (sign * smallest->m * theta + smallest->delta) / (sign * smallest->m);
    if (!(own > 0) || own * std::fabs(smallest->m) > kPi / 2) continue;  // not one branch of atan2
    const long double x = 2 * j / d, y = std::log(own);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
    ++n;
  }
  if (n < 3) return std::nullopt;
  const long double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const long double base = std::exp(-slope);
  // A base written as an integer (most are): the estimate is within a fraction of a unit of it.
  const long double nearest = std::round(base);
  return std::fabs(base - nearest) <= 1e-3L * base ? nearest : base;
}

std::vector<Mistake> usual_mistakes(const Spec& spec, Model model, const std::map<int, std::vector<AngleSample>>& samples) {
  std::vector<Mistake> out;
  auto add = [&](std::string name, Spec s) {
    Mistake m;
    m.name = std::move(name);
    m.spec = std::move(s);
    out.push_back(std::move(m));
    return &out.back();
  };
  if (spec.rotary_dim >= 4 && spec.axes.kind == AxesKind::none) {
    Spec s = spec;
    s.layout = spec.layout == Layout::half ? Layout::interleaved : Layout::half;
    add(std::string("layout=") + std::string(name(s.layout)) + " (the other pairing of dims)", s);
  }
  {
    Spec s = spec;
    s.direction = spec.direction == Direction::forward ? Direction::inverse : Direction::forward;
    add("the sine's sign flipped (direction=" + std::string(name(s.direction)) + ")", s);
  }
  add("positions off by +1", spec)->position_shift = 1;
  add("positions off by -1", spec)->position_shift = -1;
  const long double base = std::strtold(spec.base.c_str(), nullptr);
  for (Dtype dtype : {Dtype::bf16, Dtype::f16}) {
    const long double rounded = reference::round_to_format(base, dtype);
    if (std::isfinite(rounded) && rounded != base) {
      if (std::optional<Spec> s = with_base(spec, decimal(rounded))) {
        add("the base rounded to " + std::string(name(dtype)) + " (base=" + decimal(rounded) + ")", *s);
      }
    }
    add("inv_freq (theta) rounded to " + std::string(name(dtype)), spec)->theta_dtype = dtype;
  }
  if (std::optional<long double> estimate = estimated_base(spec, samples)) {
    if (std::fabs(*estimate - base) > 1e-3L * base) {
      if (std::optional<Spec> s = with_base(spec, decimal(*estimate))) {
        add("base=" + decimal(*estimate) + " (the candidate's frequencies fit this base, the spec says " + spec.base + ")", *s);
      }
    }
  }
  for (Dtype dtype : {Dtype::bf16, Dtype::f16}) {
    if (significand_bits(dtype) < significand_bits(spec.dtype)) {
      add("cos/sin rounded to " + std::string(name(dtype)), spec)->cos_sin_dtype = dtype;
    }
  }
  const long double g = attention_factor<long double>(spec);
  if (g != 1) {
    add("the attention factor (mscale) missing", spec)->gain = 1 / g;
    add("the attention factor (mscale) applied twice", spec)->gain = g;
  }
  if (spec.rotary_dim < spec.head_dim) {
    Spec s = spec;
    s.rotary_dim = spec.head_dim;
    try {
      validate(s);
      add("every dim rotated (rotary_dim=" + std::to_string(s.rotary_dim) + " instead of " + std::to_string(spec.rotary_dim) + ")", s);
    } catch (const SpecError&) {
      // e.g. M-RoPE sections or LongRoPE factors sized for rotary_dim
    }
  }
  (void)model;
  return out;
}

std::string percent(double share) { return number(100 * share, "%.0f") + "%"; }

}  // namespace

GroupDiagnosis diagnose(const Spec& spec, const std::vector<DiagnosedTest>& tests, Model model) {
  GroupDiagnosis d;
  const long double u = std::ldexp(1.0L, -significand_bits(spec.dtype));
  const long double g = attention_factor<long double>(spec);
  const long double sign = spec.direction == Direction::inverse ? -1 : 1;
  const int pairs = spec.rotary_dim / 2;
  std::vector<long double> theta(static_cast<std::size_t>(pairs));
  for (int j = 0; j < pairs; ++j) theta[static_cast<std::size_t>(j)] = frequency<long double>(spec, j);

  // 1. The decomposition, over the ordinary pairs with finite outputs.
  std::map<int, std::vector<AngleSample>> samples;
  std::int64_t angle_position = 0;
  for (const DiagnosedTest& dt : tests) {
    const golden::RopeTest& test = *dt.test;
    for (std::int64_t t = 0; t < test.tokens; ++t) {
      for (std::int64_t h = 0; h < test.heads; ++h) {
        const std::size_t row = static_cast<std::size_t>((t * test.heads + h) * spec.head_dim);
        for (int j = 0; j < pairs; ++j) {
          const reference::PairDims pd = reference::pair_dims(spec, j);
          const long double x = test.input[row + static_cast<std::size_t>(pd.first)];
          const long double y = test.input[row + static_cast<std::size_t>(pd.second)];
          const long double a = dt.output[row + static_cast<std::size_t>(pd.first)];
          const long double b = dt.output[row + static_cast<std::size_t>(pd.second)];
          if (domain_of(static_cast<double>(x), static_cast<double>(y), spec.dtype, static_cast<double>(g)) != Domain::ordinary ||
              !std::isfinite(a) || !std::isfinite(b)) {
            continue;
          }
          const long double rho = std::sqrt(x * x + y * y);
          const long double m = static_cast<long double>(pair_position(spec, test, t, j));
          const long double phi = sign * m * theta[static_cast<std::size_t>(j)];
          const long double own = std::atan2(x * b - y * a, x * a + y * b);
          const long double delta = wrap(own - wrap(phi));
          const long double scale = std::hypot(a, b) / (std::fabs(g) * rho);
          d.rotation_e = std::max(d.rotation_e, static_cast<double>(std::fabs(scale - 1) * std::fabs(g) / (u * std::max(1.0L, std::fabs(g)))));
          if (std::fabs(delta) > d.angle_error_rad) {
            d.angle_error_rad = static_cast<double>(std::fabs(delta));
            angle_position = static_cast<std::int64_t>(m);
          }
          // In ulps of the angle where the error stands above the output's own rounding (an angle
          // of a few ulps of 2^-30 would otherwise read as millions of its ulps).
          if (phi != 0 && std::fabs(delta) > 4 * u) {
            d.angle_error_ulps = std::max(d.angle_error_ulps, static_cast<double>(std::fabs(delta) / ulp32(phi)));
          }
          if (m != 0) samples[j].push_back({m, delta});
        }
      }
    }
  }

  // Per pair index: the fitted frequency error, or a position offset.
  const long double noise = 4 * u;  // the angle the output's own rounding can account for
  std::vector<std::pair<int, long double>> frequency_ulps;  // (pair, |error| in ulps of θ'_j)
  long double offset_sum = 0;
  int offset_pairs = 0, fitted_pairs = 0;
  for (const auto& [j, list] : samples) {
    const long double th = theta[static_cast<std::size_t>(j)];
    const PairFit fit = fit_pair(list, th, noise);
    if (!fit.resolved) continue;
    ++fitted_pairs;
    if (fit.offset_fits_better) {
      offset_sum += fit.offset * sign;
      ++offset_pairs;
    }
    frequency_ulps.emplace_back(j, std::fabs(fit.frequency_error) / ulp32(th));
  }
  for (const auto& [j, ulps] : frequency_ulps) {
    if (ulps > d.frequency_error_ulps) {
      d.frequency_error_ulps = static_cast<double>(ulps);
      d.frequency_error_pair = j;
    }
  }

  // 2. The differential diagnosis: the share of ordinary pairs each mistake explains, within the
  // f32-angle model's bound of its values, against the share the spec as given explains.
  PairRule rule;
  rule.dtype = spec.dtype;
  rule.attention_factor = static_cast<double>(g);
  rule.tolerance = default_tolerance(Model::f32_angle, spec);
  rule.underflow_roundings = underflow_roundings(Model::f32_angle);
  Mistake as_given;
  as_given.spec = spec;
  const MistakeScore given = score(as_given, spec, tests, rule);
  const Mistake* best = nullptr;
  MistakeScore best_score;
  std::vector<Mistake> mistakes = usual_mistakes(spec, model, samples);
  for (const Mistake& mk : mistakes) {
    const MistakeScore sc = score(mk, spec, tests, rule);
    if (sc.within >= 0.9 && sc.within >= given.within + 0.2 &&
        (!best || sc.within > best_score.within || (sc.within == best_score.within && sc.identical > best_score.identical))) {
      best = &mk;
      best_score = sc;
    }
  }
  if (best) {
    d.mistake = best->name;
    d.mistake_within = best_score.within;
    d.mistake_identical = best_score.identical;
    d.lines.push_back("outputs match " + best->name + ": within the f32-angle bound of it in " + percent(best_score.within) +
                      " of pairs, bit-identical in " + percent(best_score.identical) + " of values");
  } else if (model == Model::exact && given.pairs > 0 && given.within >= 0.99) {
    d.lines.push_back("outputs are within the f32-angle model's bound in " + percent(given.within) +
                      " of pairs: an angle computed in binary32 (--model f32-angle judges this class)");
  }

  // The angle line.
  if (offset_pairs > 0 && offset_pairs * 2 >= fitted_pairs) {
    d.position_offset = static_cast<double>(offset_sum / offset_pairs);
    d.lines.push_back("angle: off by a constant " + number(d.position_offset, "%+.3g") +
                      " x theta_j at every position (not growing with it): the positions are off by " +
                      number(d.position_offset, "%+.3g"));
  } else if (d.angle_error_rad <= static_cast<double>(noise)) {
    d.lines.push_back("angle: within the output's own rounding (largest angle error " + number(d.angle_error_rad) + " rad)");
  } else {
    std::string line = "angle: error up to " + number(d.angle_error_rad) + " rad (" + number(d.angle_error_ulps) +
                       " binary32 ulps of the angle) at position " + std::to_string(angle_position);
    if (!frequency_ulps.empty()) {
      // Growth with the pair index: the errors of the top quarter of the pair indices against the
      // bottom quarter (a running product's error grows linearly: about 7 times as large there).
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
      line += "; frequency error up to " + number(d.frequency_error_ulps) + " ulp at pair " + std::to_string(d.frequency_error_pair) +
              (d.frequency_growth == "pair index" ? ", growing with the pair index (a running product theta *= r)"
                                                  : ", about the same over the pair indices");
    }
    d.lines.push_back(line);
  }
  d.lines.push_back("rotation at its own angle: e <= " + number(d.rotation_e) +
                    (d.rotation_e > 8 ? " (the cos/sin or the products are not computed in the data dtype's precision)" : ""));
  return d;
}

DiagnosisSample diagnosis_sample(const golden::RopeTest& test, std::span<const double> output, int components,
                                 std::int64_t max_values) {
  DiagnosisSample k;
  const std::int64_t token_size = test.heads * test.head_dim;
  const std::int64_t kept = std::min(test.tokens, std::max<std::int64_t>(1, max_values / token_size));
  const std::int64_t stride = (test.tokens + kept - 1) / kept;
  k.test.id = test.id;
  k.test.heads = test.heads;
  k.test.head_dim = test.head_dim;
  for (std::int64_t t = 0; t < test.tokens; t += stride) {
    ++k.test.tokens;
    const auto p = test.positions.begin() + t * components;
    k.test.positions.insert(k.test.positions.end(), p, p + components);
    const auto x = test.input.begin() + t * token_size;
    k.test.input.insert(k.test.input.end(), x, x + token_size);
    const auto o = output.begin() + t * token_size;
    k.output.insert(k.output.end(), o, o + token_size);
  }
  return k;
}

}  // namespace ropecheck::judge
