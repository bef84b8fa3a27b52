#include "judge/inference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <limits>

#include "judge/pair_math.h"
#include "judge/pair_rule.h"
#include "judge/parallel.h"
#include "judge/tolerance.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::judge {
namespace {

constexpr long double kPi = 3.141592653589793238462643383279502884L;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::string format(const char* fmt, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, fmt, v);
  return buffer;
}
std::string percent(double share) {
  // 99.6 % is not "100%": a share is floored to a whole percent, except exactly 1.
  return share >= 1 ? "100%" : format("%.0f", std::floor(100 * share)) + "%";
}
// A decimal that the spec parser reads back: integers as integers, others with 6 significant digits.
std::string decimal(long double v) {
  if (std::fabs(v) < 1e15L && v == std::round(v)) return format("%.0f", static_cast<double>(v));
  return format("%.6g", static_cast<double>(v));
}

// Round to binary32 with an 11-bit significand (TF32: 10 stored bits), to nearest.
long double round_tf32(long double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  const long double f = std::frexp(v, &e);  // |f| in [0.5, 1)
  return std::ldexp(std::nearbyint(std::ldexp(f, 11)), e - 11);
}

// ---- what a candidate may compute instead ------------------------------------------------------

struct Variant {
  std::string kind;    // the explanation's kind
  std::string change;  // what differs from the spec, in its words ("base=10000 (expected 1000000)")
  Spec spec;           // what it computes: layout, rotary_dim, base, scaling, axes, direction
  int frequency_dim = 0;          // > 0: θ_j laid over this many dims instead of rotary_dim
  bool head_dim_pairs = false;    // half layout: pairs (i, i + head_dim/2) of a partial rotary
  std::int64_t position_shift = 0;
  bool per_position_seq = false;  // dynamic / longrope: seq_len = position + 1, token by token
  bool first_axis_only = false;   // multi-axis: component 0 drives every pair
  std::optional<Dtype> positions_dtype, theta_dtype, angle_dtype, cos_sin_dtype;
  bool angle_tf32 = false;
  bool running_product = false;  // θ_j = θ_{j−1}·r in binary32, r = RN32(b^(−2/d)) (ggml's rope)
  std::optional<long double> attention;  // the attention factor in place of the spec's
};

// The sample the variants are scored on: rows (token × head) with their positions.
struct Row {
  const golden::RopeTest* test;
  std::span<const double> output;
  std::int64_t t, h;
};

struct Score {
  double within = 0, identical = 0;
  std::int64_t units = 0;
};

// A row (token × head) of a test, as the memory checks flag it.
using RowKey = std::tuple<const golden::RopeTest*, std::int64_t, std::int64_t>;

class Scorer {
 public:
  Scorer(const Spec& spec, std::vector<Row> rows) : spec_(spec), rows_(std::move(rows)) {
    rule_.dtype = spec.dtype;
    tolerance_ = default_tolerance(Model::f32_angle, spec);
  }

  // `excluded`: rows left out (the memory checks' findings), null for none. The rows in contiguous
  // ranges on `threads` threads (one score at a time: the spec as given, the memory checks' rest),
  // their counts summed: the same score on any number of threads.
  Score score(const Variant& v, const std::set<RowKey>* excluded = nullptr, int threads = 1) const {
    const std::vector<long double> fixed = v.per_position_seq ? std::vector<long double>{} : thetas(v, v.spec.scaling.seq_len);
    const std::vector<Counts> parts = map_token_ranges(static_cast<std::int64_t>(rows_.size()), threads,
                                                       [&](TokenRange range) { return count(v, fixed, excluded, range); });
    Counts all;
    for (const Counts& part : parts) {
      all.units += part.units, all.within += part.within, all.values += part.values, all.identical += part.identical;
    }
    Score sc;
    sc.units = all.units;
    sc.within = 1;  // nothing left to explain
    if (all.units > 0) sc.within = static_cast<double>(all.within) / static_cast<double>(all.units);
    if (all.values > 0) sc.identical = static_cast<double>(all.identical) / static_cast<double>(all.values);
    return sc;
  }

 private:
  struct Counts {
    std::int64_t units = 0, within = 0, values = 0, identical = 0;
  };

  // The counts of rows_[range]: pairs (and passed-through dims) in all, within the f32-angle bound,
  // and output values in all and bit-identical to the variant's correctly rounded ones.
  Counts count(const Variant& v, const std::vector<long double>& fixed, const std::set<RowKey>* excluded, TokenRange range) const {
    const Spec& s = v.spec;
    const int pairs = s.rotary_dim / 2;
    const int head_dim = spec_.head_dim;
    std::vector<char> covered(static_cast<std::size_t>(head_dim), 0);
    std::vector<reference::PairDims> dims(static_cast<std::size_t>(pairs));
    for (int j = 0; j < pairs; ++j) {
      dims[static_cast<std::size_t>(j)] = v.head_dim_pairs ? reference::PairDims{j, j + head_dim / 2} : reference::pair_dims(s, j);
      covered[static_cast<std::size_t>(dims[static_cast<std::size_t>(j)].first)] = 1;
      covered[static_cast<std::size_t>(dims[static_cast<std::size_t>(j)].second)] = 1;
    }
    const long double g = v.attention ? *v.attention : attention_factor<long double>(s);
    const long double sign = s.direction == Direction::inverse ? -1 : 1;
    const int components = position_components(spec_);
    std::map<std::int64_t, std::vector<long double>> tables;  // θ by seq_len (per_position_seq)
    std::int64_t units = 0, within = 0, values = 0, identical = 0;
    std::vector<double> c(static_cast<std::size_t>(pairs)), sn(static_cast<std::size_t>(pairs)), angle(static_cast<std::size_t>(pairs));
    const golden::RopeTest* last_test = nullptr;
    std::int64_t last_t = -1;
    for (std::int64_t i = range.begin; i < range.end; ++i) {
      const Row& r = rows_[static_cast<std::size_t>(i)];
      const golden::RopeTest& test = *r.test;
      if (excluded && excluded->count({r.test, r.t, r.h})) continue;
      if (&test != last_test || r.t != last_t) {  // the token's angles, shared by its heads
        last_test = &test;
        last_t = r.t;
        const std::int64_t* p = test.positions.data() + r.t * components;
        const std::vector<long double>* theta = &fixed;
        if (v.per_position_seq) {
          const std::int64_t seq = p[0] + v.position_shift + 1;
          auto it = tables.find(seq);
          if (it == tables.end()) it = tables.emplace(seq, thetas(v, seq)).first;
          theta = &it->second;
        }
        for (int j = 0; j < pairs; ++j) {
          const int component = v.first_axis_only ? 0 : position_component(s, j);
          long double m = static_cast<long double>(p[std::min(component, components - 1)] + v.position_shift);
          long double th = (*theta)[static_cast<std::size_t>(j)];
          if (v.positions_dtype) m = reference::round_to_format(m, *v.positions_dtype);
          long double a;
          if (v.angle_tf32) {
            a = static_cast<float>(round_tf32(m) * round_tf32(th));
          } else {
            a = m * th;
          }
          if (v.angle_dtype) a = reference::round_to_format(a, *v.angle_dtype);
          a *= sign;
          angle[static_cast<std::size_t>(j)] = static_cast<double>(std::fabs(a));
          const long double reduced = wrap_to_pi(a);
          long double cv, sv;
          if (spec_.dtype == Dtype::f64) {
            cv = std::cos(reduced), sv = std::sin(reduced);
          } else {
            cv = std::cos(static_cast<double>(reduced)), sv = std::sin(static_cast<double>(reduced));
          }
          if (v.cos_sin_dtype) {
            cv = reference::round_to_format(cv, *v.cos_sin_dtype);
            sv = reference::round_to_format(sv, *v.cos_sin_dtype);
          }
          c[static_cast<std::size_t>(j)] = static_cast<double>(cv);
          sn[static_cast<std::size_t>(j)] = static_cast<double>(sv);
        }
      }
      const std::size_t row = static_cast<std::size_t>((r.t * test.heads + r.h) * head_dim);
      const double* x = test.input.data() + row;
      const double* o = r.output.data() + row;
      for (int j = 0; j < pairs; ++j) {
        const reference::PairDims pd = dims[static_cast<std::size_t>(j)];
        const double xi = x[pd.first], yi = x[pd.second];
        if (domain_of(xi, yi, spec_.dtype, static_cast<double>(g)) != Domain::ordinary) continue;
        const long double cj = c[static_cast<std::size_t>(j)], sj = sn[static_cast<std::size_t>(j)];
        const long double ea = g * (xi * cj - yi * sj), eb = g * (xi * sj + yi * cj);
        const double a = o[pd.first], b = o[pd.second];
        ++units;
        if (std::isfinite(a) && std::isfinite(b) &&
            normwise_error(a, b, ea, eb, xi, yi, spec_.dtype, static_cast<double>(g)) <= tolerance_.at(angle[static_cast<std::size_t>(j)])) {
          ++within;
        }
        identical += (a == static_cast<double>(reference::round_to_format(ea, spec_.dtype))) +
                     (b == static_cast<double>(reference::round_to_format(eb, spec_.dtype)));
        values += 2;
      }
      for (int k = 0; k < head_dim; ++k) {  // dims the variant passes through: the input, bit for bit
        if (covered[static_cast<std::size_t>(k)] || !std::isfinite(x[k])) continue;
        ++units;
        within += o[k] == x[k];
      }
    }
    return Counts{units, within, values, identical};
  }

  std::vector<long double> thetas(const Variant& v, std::int64_t seq_len) const {
    Spec s = v.spec;
    s.scaling.seq_len = seq_len;
    const int pairs = s.rotary_dim / 2;
    Spec laid = s;
    if (v.frequency_dim > 0) laid.rotary_dim = v.frequency_dim;
    std::vector<long double> out(static_cast<std::size_t>(pairs));
    // The running product: the unscaled schedule's θ_j = r^j accumulated in binary32 (ggml
    // ggml_rope_cache_init: theta *= theta_scale), times what the scaling makes of θ_j.
    Spec unscaled = laid;
    unscaled.scaling = Scaling{};
    const float ratio = static_cast<float>(std::pow(std::strtold(laid.base.c_str(), nullptr), -2.0L / laid.rotary_dim));
    float running = 1;
    for (int j = 0; j < pairs; ++j) {
      long double th = frequency<long double>(laid, j);
      if (v.running_product) {
        th *= static_cast<long double>(running) / frequency<long double>(unscaled, j);
        running *= ratio;
      }
      if (v.theta_dtype) th = reference::round_to_format(th, *v.theta_dtype);
      out[static_cast<std::size_t>(j)] = th;
    }
    return out;
  }

  Spec spec_;
  std::vector<Row> rows_;
  PairRule rule_;
  Tolerance tolerance_;
};

// ---- the fits ------------------------------------------------------------------------------------

struct Observation {
  long double m;    // the pair's position component
  long double phi;  // the candidate's own angle, wrapped
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

// Bases worth trying beside the fitted one: the common ones of released models.
constexpr long double kCommonBases[] = {10000, 500000, 1000000, 100000, 50000, 5000000, 10000000, 1000, 25000, 75000, 8000000, 150000};

// Round to `digits` significant decimal digits.
long double significant(long double v, int digits) {
  if (!(v > 0) || !std::isfinite(v)) return v;
  const long double scale = std::pow(10.0L, std::floor(std::log10(v)) - (digits - 1));
  return std::round(v / scale) * scale;
}

bool valid(const Spec& s) {
  try {
    validate(s);
    return true;
  } catch (const SpecError&) {
    return false;
  }
}

// The keys whose values differ between two specs, as "key=new (expected old)".
std::string spec_difference(const Spec& expected, const Spec& got) {
  std::map<std::string, std::string> a, b;
  std::vector<std::string> order;
  for (const auto* pair : {&expected, &got}) {
    for (const std::string& item : split_list(to_string(*pair), ',')) {
      const auto eq = item.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = item.substr(0, eq);
      (pair == &expected ? a : b)[key] = item.substr(eq + 1);
      if (std::find(order.begin(), order.end(), key) == order.end()) order.push_back(key);
    }
  }
  std::string out;
  for (const std::string& key : order) {
    const std::string& was = a.count(key) ? a[key] : std::string("(none)");
    const std::string& now = b.count(key) ? b[key] : std::string("(none)");
    if (was == now) continue;
    if (!out.empty()) out += ", ";
    out += key + "=" + now + " (expected " + was + ")";
  }
  return out;
}

class Candidates {
 public:
  explicit Candidates(const Spec& spec) : spec_(spec) {}

  // A change of spec fields, named by the fields that differ.
  // `text`: the change in words, in place of the differing fields (a scaling removed differs in
  // every one of its parameters).
  void spec_change(const std::string& kind, Spec s, const std::string& note = "", const std::string& text = "") {
    if (s == spec_ || !valid(s)) return;
    Variant v;
    v.kind = kind;
    v.spec = std::move(s);
    v.change = text.empty() ? spec_difference(spec_, v.spec) + note : text;
    push(std::move(v));
  }
  Variant base() const {
    Variant v;
    v.spec = spec_;
    return v;
  }
  void push(Variant v) {
    if (seen_.insert(v.change).second) list.push_back(std::move(v));
  }
  std::vector<Variant> list;

 private:
  Spec spec_;
  std::set<std::string> seen_;
};

struct Fits {
  std::vector<std::optional<long double>> theta_hat;  // per pair index
  std::optional<long double> base, factor, base_median;
  std::optional<long double> offset;
  long double gain = 1;  // median output/input norm ratio over the spec's attention factor
};

// The sets of mrope sections worth trying: every order of the spec's sections.
std::vector<std::vector<int>> section_orders(std::vector<int> s) {
  std::vector<std::vector<int>> out;
  std::vector<int> sorted = s;
  std::sort(sorted.begin(), sorted.end());
  do {
    if (sorted != s) out.push_back(sorted);
  } while (std::next_permutation(sorted.begin(), sorted.end()) && out.size() < 24);
  return out;
}

std::vector<Variant> variants(const Spec& spec, const Fits& fits) {
  Candidates c(spec);
  const Dtype dtypes[] = {Dtype::bf16, Dtype::f16};
  const bool multi = spec.axes.kind != AxesKind::none;
  // Memory-free changes of one field, simplest first (ties go to the earlier one).
  {
    Spec s = spec;
    s.direction = spec.direction == Direction::forward ? Direction::inverse : Direction::forward;
    c.spec_change("direction", s, ": the sine's sign flipped");
  }
  if (spec.rotary_dim >= 4 && spec.axes.kind != AxesKind::two_d) {
    Spec s = spec;
    s.layout = spec.layout == Layout::half ? Layout::interleaved : Layout::half;
    c.spec_change(multi ? "axes" : "layout", s, multi ? ": the other pairing inside multi-axis RoPE" : "");
  }
  // Positions.
  for (std::int64_t k : {std::int64_t{1}, std::int64_t{-1}}) {
    Variant v = c.base();
    v.kind = "position_offset";
    v.position_shift = k;
    v.change = std::string("positions offset by ") + (k > 0 ? "+" : "") + std::to_string(k);
    c.push(v);
  }
  if (fits.offset && *fits.offset != 0 && std::fabs(*fits.offset) < 1e12L) {
    Variant v = c.base();
    v.kind = "position_offset";
    v.position_shift = static_cast<std::int64_t>(*fits.offset);
    v.change = std::string("positions offset by ") + (v.position_shift > 0 ? "+" : "") + std::to_string(v.position_shift);
    c.push(v);
  }
  // Rotary dims.
  if (spec.rotary_dim < spec.head_dim) {
    Spec s = spec;
    s.rotary_dim = spec.head_dim;
    c.spec_change("rotary_dim", s, ": every dim rotated");
    Variant v = c.base();
    v.kind = "frequency_dim";
    v.frequency_dim = spec.head_dim;
    v.change = "frequencies over head_dim=" + std::to_string(spec.head_dim) + " (expected over rotary_dim=" + std::to_string(spec.rotary_dim) + ")";
    c.push(v);
    if (spec.layout == Layout::half) {
      Variant w = c.base();
      w.kind = "partial_pairs";
      w.head_dim_pairs = true;
      w.change = "pairs (i, i + head_dim/2) = (i, i + " + std::to_string(spec.head_dim / 2) + ") (expected (i, i + rotary_dim/2) = (i, i + " +
                 std::to_string(spec.rotary_dim / 2) + "))";
      c.push(w);
      w.frequency_dim = spec.head_dim;
      w.change = "pairs (i, i + head_dim/2) and frequencies over head_dim=" + std::to_string(spec.head_dim) + " (expected rotary_dim=" +
                 std::to_string(spec.rotary_dim) + ")";
      c.push(w);
    }
  }
  // ggml's frequencies (before the base that such a product resembles).
  if (spec.axes.kind != AxesKind::two_d) {
    Variant r = c.base();
    r.kind = "theta_running_product";
    r.running_product = true;
    r.change = "frequencies by a running product theta_j = theta_(j-1) x r in binary32, r = base^(-2/d) rounded (ggml's rope)";
    c.push(r);
  }
  // The base.
  const long double base = std::strtold(spec.base.c_str(), nullptr);
  std::vector<long double> bases;
  for (const std::optional<long double>& b : {fits.base, fits.base_median}) {
    if (!b || !(*b > 1) || !std::isfinite(*b)) continue;
    for (int digits : {1, 2, 3}) bases.push_back(significant(*b, digits));
    bases.push_back(std::round(*b));
    bases.push_back(significant(*b, 6));
  }
  for (long double b : kCommonBases) bases.push_back(b);
  for (long double b : bases) {
    if (std::fabs(b - base) <= 1e-9L * base) continue;
    Spec s = spec;
    s.base = decimal(b);
    c.spec_change("base", s);
  }
  for (Dtype d : dtypes) {
    const long double rounded = reference::round_to_format(base, d);
    if (rounded == base || !std::isfinite(rounded)) continue;
    Spec s = spec;
    s.base = decimal(rounded);
    if (!valid(s)) continue;
    Variant v = c.base();
    v.kind = "base_dtype";
    v.spec = s;
    v.change = "base rounded to " + std::string(name(d)) + " (base=" + decimal(rounded) + ", expected " + spec.base + ")";
    c.push(v);
  }
  // Scaling.
  const Scaling& sc = spec.scaling;
  if (sc.type != ScalingType::none) {
    Spec s = spec;
    s.scaling = Scaling{};
    const std::string type(name(sc.type));
    c.spec_change("scaling", s, "", "scaling=none (expected " + type + "): the " + type + " scaling not applied");
  } else if (fits.factor && *fits.factor > 1.01L) {
    for (int digits : {1, 2, 3}) {
      Spec s = spec;
      s.scaling.type = ScalingType::linear;
      s.scaling.factor = decimal(significant(*fits.factor, digits));
      c.spec_change("scaling", s);
    }
  }
  auto factor_variants = [&](std::initializer_list<const char*> values) {
    for (const char* f : values) {
      Spec s = spec;
      s.scaling.factor = f;
      c.spec_change("scaling", s);
    }
  };
  auto original_variants = [&]() {
    for (std::int64_t l : {2048, 4096, 8192, 16384, 32768, 131072}) {
      Spec s = spec;
      s.scaling.original_max_position = l;
      c.spec_change("scaling", s);
    }
  };
  switch (sc.type) {
    case ScalingType::linear:
      if (fits.factor && *fits.factor > 0) {
        for (int digits : {1, 2, 3}) {
          Spec s = spec;
          s.scaling.factor = decimal(significant(*fits.factor * std::strtold(sc.factor.c_str(), nullptr), digits));
          c.spec_change("scaling", s);
        }
      }
      break;
    case ScalingType::ntk: {
      factor_variants({"2", "4", "8"});
      // The factor whose NTK base b·f^(d/(d−2)) is the fitted one.
      const long double d = spec.rotary_dim;
      for (const std::optional<long double>& b : {fits.base, fits.base_median}) {
        if (!b || !(*b > base)) continue;
        const long double f = std::pow(*b / base, (d - 2) / d);
        for (long double v : {significant(f, 1), significant(f, 2), significant(f, 3), std::round(2 * f) / 2}) {
          Spec t = spec;
          t.scaling.factor = decimal(v);
          c.spec_change("scaling", t);
        }
      }
      break;
    }
    case ScalingType::dynamic: {
      for (std::int64_t len : {sc.original_max_position, 2 * sc.original_max_position, 4 * sc.original_max_position}) {
        Spec s = spec;
        s.scaling.seq_len = len;
        c.spec_change("scaling", s, len == sc.original_max_position ? ": dynamic NTK at its static (unscaled) base" : "");
      }
      // The length whose dynamic base b·(f·L/Lmax − (f − 1))^(d/(d−2)) is the fitted one.
      const long double d = spec.rotary_dim, f = std::strtold(sc.factor.c_str(), nullptr);
      for (const std::optional<long double>& b : {fits.base, fits.base_median}) {
        if (!b || !(*b > base) || !(f > 0)) continue;
        const long double len = static_cast<long double>(sc.original_max_position) * (std::pow(*b / base, (d - 2) / d) + f - 1) / f;
        if (!(len > 0) || len > 1e15L) continue;
        // Lengths are round numbers: to 2, 3 and 6 digits, and to a multiple of 1024.
        for (long double v : {significant(std::round(len), 2), significant(std::round(len), 3), significant(std::round(len), 6),
                              std::max(1.0L, std::round(len / 1024)) * 1024}) {
          Spec t = spec;
          t.scaling.seq_len = static_cast<std::int64_t>(v);
          c.spec_change("scaling", t);
        }
      }
      Variant v = c.base();
      v.kind = "scaling";
      v.per_position_seq = true;
      v.change = "dynamic NTK's length taken per position (seq_len = position + 1, expected " + std::to_string(sc.seq_len) + ")";
      c.push(v);
      Spec s = spec;
      s.scaling.type = ScalingType::ntk;
      s.scaling.original_max_position = 0;
      s.scaling.seq_len = 0;
      c.spec_change("scaling", s, ": static NTK instead of dynamic");
      break;
    }
    case ScalingType::yarn: {
      Spec s = spec;
      s.scaling.truncate = !sc.truncate;
      c.spec_change("scaling", s, sc.truncate ? ": the correction range not truncated" : "");
      if (sc.attention_factor) {  // the derived factor (0.1 ln s + 1, or the mscale ratio) where the config gives one
        Spec t = spec;
        t.scaling.attention_factor.reset();
        Variant w = c.base();
        w.kind = "attention_factor";
        w.attention = attention_factor<long double>(t);
        w.change = "attention factor " + decimal(significant(*w.attention, 6)) + " (the derived one, expected the given " + *sc.attention_factor + ")";
        c.push(w);
      }
      for (const char* bf : {"32", "16", "64"}) {
        for (const char* bs : {"1", "2"}) {
          Spec t = spec;
          t.scaling.beta_fast = bf;
          t.scaling.beta_slow = bs;
          c.spec_change("scaling", t);
        }
      }
      factor_variants({"2", "4", "8", "16", "32", "40"});
      original_variants();
      break;
    }
    case ScalingType::llama3:
      factor_variants({"2", "4", "8", "16", "32"});
      original_variants();
      for (const char* low : {"1", "2"}) {
        for (const char* high : {"2", "4", "8"}) {
          Spec t = spec;
          t.scaling.low_freq_factor = low;
          t.scaling.high_freq_factor = high;
          c.spec_change("scaling", t);
        }
      }
      break;
    case ScalingType::longrope: {
      Spec s = spec;
      s.scaling.seq_len = sc.seq_len > sc.original_max_position ? sc.original_max_position : sc.original_max_position + 1;
      const std::string given = std::to_string(sc.seq_len) + (sc.seq_len > sc.original_max_position ? " > " : " <= ") +
                                "original_max_position " + std::to_string(sc.original_max_position);
      c.spec_change("scaling", s, "",
                    sc.seq_len > sc.original_max_position ? "LongRoPE's short_factor (expected long_factor: seq_len " + given + ")"
                                                          : "LongRoPE's long_factor (expected short_factor: seq_len " + given + ")");
      Variant v = c.base();
      v.kind = "scaling";
      v.per_position_seq = true;
      v.change = "LongRoPE's factor set switched per position (long_factor above position " + std::to_string(sc.original_max_position - 1) +
                 ", expected one set for the sequence)";
      c.push(v);
      break;
    }
    default: break;
  }
  // A scaled schedule replaced by one base (llama3 "collapsed into an averaged base"): after the
  // type's own parameters, which say the same thing more precisely where they reproduce it.
  if (sc.type != ScalingType::none) {
    Spec s = spec;
    s.scaling = Scaling{};
    const std::string type(name(sc.type));
    for (const std::optional<long double>& fitted : {fits.base, fits.base_median}) {
      if (!fitted || !(*fitted > 1) || !std::isfinite(*fitted)) continue;
      for (int digits : {2, 3, 6, 7}) {
        Spec t = s;
        t.base = decimal(significant(*fitted, digits));
        c.spec_change("scaling", t, "",
                      "one base=" + t.base + " in place of the " + type + " schedule (expected base=" + spec.base + " with " + type + " scaling)");
      }
    }
  }
  // Multi-axis.
  if (spec.axes.kind == AxesKind::mrope || spec.axes.kind == AxesKind::imrope) {
    Spec s = spec;
    s.axes.kind = spec.axes.kind == AxesKind::mrope ? AxesKind::imrope : AxesKind::mrope;
    c.spec_change("axes", s, spec.axes.kind == AxesKind::mrope ? ": interleaved sections" : ": chunked sections");
    for (const std::vector<int>& order : section_orders(spec.axes.sections)) {
      Spec t = spec;
      t.axes.sections = order;
      c.spec_change("axes", t);
    }
    Variant v = c.base();
    v.kind = "axes";
    v.first_axis_only = true;
    v.change = "every pair driven by the first position component (text positions only)";
    c.push(v);
  }
  // The attention factor.
  const long double g = attention_factor<long double>(spec);
  if (g != 1) {
    for (long double other : {1.0L, g * g}) {
      Variant v = c.base();
      v.kind = "attention_factor";
      v.attention = other;
      v.change = "attention factor " + decimal(significant(other, 6)) + (other == 1 ? " (missing)" : " (applied twice)") + " (expected " + decimal(significant(g, 6)) + ")";
      c.push(v);
    }
  }
  if (std::fabs(fits.gain - 1) > 0.004L && fits.gain > 0 && std::isfinite(fits.gain)) {
    Variant v = c.base();
    v.kind = "attention_factor";
    v.attention = significant(g * fits.gain, 4);
    v.change = "attention factor " + decimal(*v.attention) + " (expected " + decimal(significant(g, 6)) + ")";
    c.push(v);
  }
  // Intermediate precision.
  for (Dtype d : dtypes) {
    const std::string n(name(d));
    Variant v = c.base();
    v.kind = "positions_dtype";
    v.positions_dtype = d;
    v.change = "positions rounded to " + n;
    c.push(v);
    v = c.base();
    v.kind = "theta_dtype";
    v.theta_dtype = d;
    v.change = "inv_freq (theta) rounded to " + n;
    c.push(v);
    v = c.base();
    v.kind = "angle_dtype";
    v.angle_dtype = d;
    v.change = "angle rounded to " + n + " (position x theta)";
    c.push(v);
    if (significand_bits(d) < significand_bits(spec.dtype)) {
      v = c.base();
      v.kind = "cos_sin_dtype";
      v.cos_sin_dtype = d;
      v.change = "cos/sin rounded to " + n;
      c.push(v);
    }
  }
  Variant v = c.base();
  v.kind = "angle_tf32";
  v.angle_tf32 = true;
  v.change = "angle product in TF32 (position and theta rounded to 11 bits)";
  c.push(v);
  return c.list;
}

// ---- memory faults -------------------------------------------------------------------------------

struct MemoryFinding {
  std::string kind, what;
  std::vector<std::int64_t> tokens;  // user token indices, sorted, unique
  std::set<RowKey> rows_flagged;
  std::int64_t rows = 0, faulty_rows = 0;
  std::int64_t matched = 0;  // memory_stride: rows whose norms are another row's input's
  std::int64_t stride = 1;   // the largest token stride of the tests read
};

// "4096..8190, 9000": runs of tokens no further apart than the sample's stride.
std::string token_ranges_text(const std::vector<std::int64_t>& tokens, std::int64_t stride) {
  std::string out;
  int ranges = 0;
  for (std::size_t i = 0; i < tokens.size();) {
    std::size_t k = i;
    while (k + 1 < tokens.size() && tokens[k + 1] - tokens[k] <= stride) ++k;
    if (ranges == 4) {
      out += ", ...";
      break;
    }
    if (!out.empty()) out += ", ";
    out += std::to_string(tokens[i]) + (k > i ? ".." + std::to_string(tokens[k]) : "");
    ++ranges;
    i = k + 1;
  }
  return out;
}

// Rows (token × head) of the tests whose outputs are zeros, their inputs, or not a rotation of
// their input (pair norms not kept, unevenly: a uniform ratio is a magnitude, not memory): one
// finding per kind.
std::map<std::string, MemoryFinding> memory_faults(const Spec& spec, const std::vector<DiagnosedTest>& tests, int threads) {
  const int pairs = spec.rotary_dim / 2;
  const int components = position_components(spec);
  struct RowRef {
    std::size_t test;
    std::int64_t t, h;
  };
  std::vector<reference::PairDims> dims(static_cast<std::size_t>(pairs));
  for (int j = 0; j < pairs; ++j) dims[static_cast<std::size_t>(j)] = reference::pair_dims(spec, j);
  auto norms = [&](const double* v, std::vector<double>& out) {
    out.resize(static_cast<std::size_t>(pairs));
    for (int j = 0; j < pairs; ++j) {
      out[static_cast<std::size_t>(j)] = static_cast<double>(pair_norm(v[dims[static_cast<std::size_t>(j)].first], v[dims[static_cast<std::size_t>(j)].second]));
    }
  };
  // Input pair norms of every row, for the "another row's data" lookup (sorted by the first norm).
  std::vector<std::pair<double, RowRef>> by_norm;
  std::int64_t rows = 0;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const golden::RopeTest& test = *tests[i].test;
    for (std::int64_t t = 0; t < test.tokens; ++t) {
      for (std::int64_t h = 0; h < test.heads; ++h) {
        const double* x = test.input.data() + (t * test.heads + h) * spec.head_dim;
        by_norm.push_back({static_cast<double>(pair_norm(x[dims[0].first], x[dims[0].second])), {i, t, h}});
        ++rows;
      }
    }
  }
  std::sort(by_norm.begin(), by_norm.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  const double slack = std::ldexp(1.0, 4 - significand_bits(spec.dtype)) + 1e-6;  // a few roundings of the dtype
  // Below this pair norm a rotated component may be subnormal (2^(emin + p): the normal range
  // reaches down to a relative 2^-p of the norm).
  const double no_underflow = std::ldexp(1.0, reference::format_of(spec.dtype).emin + significand_bits(spec.dtype));
  auto close = [&](const std::vector<double>& l, const std::vector<double>& r) {
    for (std::size_t j = 0; j < l.size(); ++j) {
      if (std::fabs(l[j] - r[j]) > slack * std::max(std::fabs(l[j]), std::fabs(r[j])) + 1e-30) return false;
    }
    return true;
  };
  // The tokens of every test in contiguous ranges on every thread, each range with its own
  // findings, joined after: counts summed, rows and tokens as sets (the same findings on any number
  // of threads).
  struct TokenRef {
    std::size_t test;
    std::int64_t t;
  };
  std::vector<TokenRef> token_refs;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    for (std::int64_t t = 0; t < tests[i].test->tokens; ++t) token_refs.push_back({i, t});
  }
  std::vector<std::map<std::string, MemoryFinding>> parts =
      map_token_ranges(static_cast<std::int64_t>(token_refs.size()), threads, [&](TokenRange range) {
    std::map<std::string, MemoryFinding> found;
    std::vector<double> in_norms, out_norms, other_norms;
    for (std::int64_t r = range.begin; r < range.end; ++r) {
      const std::size_t i = token_refs[static_cast<std::size_t>(r)].test;
      const std::int64_t t = token_refs[static_cast<std::size_t>(r)].t;
      const golden::RopeTest& test = *tests[i].test;
      const std::span<const double> output = tests[i].output;
      // Whether the token's angles are all zero (position 0: a rotation by nothing is the input).
      bool moving = false;
      for (int j = 0; j < pairs && !moving; ++j) {
        moving = test.positions[static_cast<std::size_t>(t * components + position_component(spec, j))] != 0;
      }
      for (std::int64_t h = 0; h < test.heads; ++h) {
        const std::size_t row = static_cast<std::size_t>((t * test.heads + h) * spec.head_dim);
        const double* x = test.input.data() + row;
        const double* o = output.data() + row;
        bool zero_out = true, zero_in = true, same = true, finite = true;
        for (int k = 0; k < spec.head_dim; ++k) {
          zero_out &= o[k] == 0;
          zero_in &= x[k] == 0;
          same &= o[k] == x[k];
          finite &= std::isfinite(x[k]) && std::isfinite(o[k]);
        }
        if (!finite || zero_in) continue;
        std::string kind;
        bool matched = false;
        if (zero_out) {
          kind = "memory_zeros";
        } else if (same && moving) {
          kind = "memory_identity";
        } else if (!same) {
          norms(x, in_norms);
          norms(o, out_norms);
          double lo = kInfinity, hi = 0;
          for (int j = 0; j < pairs; ++j) {
            // Pairs whose rotated components cannot underflow only: a subnormal value flushed to
            // zero is an edge case, not memory.
            const reference::PairDims pd = dims[static_cast<std::size_t>(j)];
            if (!(in_norms[static_cast<std::size_t>(j)] > no_underflow) ||
                domain_of(x[pd.first], x[pd.second], spec.dtype, static_cast<double>(attention_factor<long double>(spec))) != Domain::ordinary) {
              continue;
            }
            const double ratio = out_norms[static_cast<std::size_t>(j)] / in_norms[static_cast<std::size_t>(j)];
            lo = std::min(lo, ratio), hi = std::max(hi, ratio);
          }
          if (hi > lo * (1 + 64 * slack) + 1e-30) {  // norms not kept, and not by one factor
            kind = "memory_stride";
            const double n0 = out_norms[0];
            auto it = std::lower_bound(by_norm.begin(), by_norm.end(), n0 * (1 - slack) - 1e-30,
                                       [](const auto& e, double v) { return e.first < v; });
            for (; it != by_norm.end() && it->first <= n0 * (1 + slack) + 1e-30; ++it) {
              const golden::RopeTest& other = *tests[it->second.test].test;
              norms(other.input.data() + (it->second.t * other.heads + it->second.h) * spec.head_dim, other_norms);
              if (close(other_norms, out_norms)) {
                matched = true;
                break;
              }
            }
          }
        }
        if (kind.empty()) continue;
        MemoryFinding& f = found[kind];
        f.kind = kind;
        ++f.faulty_rows;
        f.matched += matched;
        f.rows_flagged.insert({&test, t, h});
        f.tokens.push_back(tests[i].user_token(t));
      }
    }
    return found;
  });
  std::map<std::string, MemoryFinding> found;
  for (std::map<std::string, MemoryFinding>& part : parts) {
    for (auto& [kind, p] : part) {
      MemoryFinding& f = found[kind];
      f.kind = kind;
      f.faulty_rows += p.faulty_rows;
      f.matched += p.matched;
      f.rows_flagged.merge(p.rows_flagged);
      f.tokens.insert(f.tokens.end(), p.tokens.begin(), p.tokens.end());
    }
  }
  for (auto& [kind, f] : found) {
    f.rows = rows;
    std::sort(f.tokens.begin(), f.tokens.end());
    f.tokens.erase(std::unique(f.tokens.begin(), f.tokens.end()), f.tokens.end());
    for (const DiagnosedTest& dt : tests) {
      f.stride = std::max(f.stride, dt.token_stride);
      for (std::size_t k = 1; k < dt.token_index.size(); ++k) f.stride = std::max(f.stride, dt.token_index[k] - dt.token_index[k - 1]);
    }
    f.what = kind == "memory_zeros"      ? "rows never written (zeros)"
             : kind == "memory_identity" ? "no rotation applied (outputs equal the inputs)"
                                         : "another token's data (pair norms that are not the row's input's: a stride ignored)";
  }
  return found;
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
  // The pairs go in blocks (judge/parallel.h pair_block_size, a task per block): a row's values of
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
      const golden::RopeTest& test = *r.test;
      const std::size_t row = static_cast<std::size_t>((r.t * test.heads + r.h) * spec.head_dim);
      for (int j = first; j < last; ++j) {
        const reference::PairDims pd = reference::pair_dims(spec, j);
        const long double x = test.input[row + static_cast<std::size_t>(pd.first)], y = test.input[row + static_cast<std::size_t>(pd.second)];
        const long double a = r.output[row + static_cast<std::size_t>(pd.first)], b = r.output[row + static_cast<std::size_t>(pd.second)];
        if (domain_of(static_cast<double>(x), static_cast<double>(y), spec.dtype, static_cast<double>(g)) != Domain::ordinary ||
            !std::isfinite(a) || !std::isfinite(b) || (a == 0 && b == 0)) {
          continue;
        }
        const long double m = static_cast<long double>(test.positions[static_cast<std::size_t>(r.t * components + position_component(spec, j))]);
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
    std::sort(order.begin(), order.end(), [&](int l, int r) { return theta[static_cast<std::size_t>(l)] < theta[static_cast<std::size_t>(r)]; });
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

}  // namespace

std::string first_line(const std::string& message) {
  std::string line = message.substr(0, message.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string raised_summary(const std::string& message, std::int64_t first_position) {
  std::string line = first_line(message);
  if (line.rfind("threw: ", 0) == 0) line.erase(0, 7);  // a C++ or Python function's exception (runner/adapters.cpp)
  const auto colon = line.find(':');
  std::string type = colon == std::string::npos ? "" : line.substr(0, colon);
  const bool word = !type.empty() && type.size() < 64 &&
                    std::all_of(type.begin(), type.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.'; });
  std::string out = word ? "raised " + type : "failed (" + line.substr(0, 120) + ")";
  if (first_position >= 0) out += " at position " + std::to_string(first_position) + " (first failing position)";
  return out;
}

void FailedCalls::explain(GroupResult& g) const {
  if (!any_ || g.verdict != "fail") return;
  if (!g.diagnosis) g.diagnosis.emplace();
  GroupDiagnosis& d = *g.diagnosis;
  d.explanation_kind = "raised";
  d.explanation = kind_ == "status" ? raised_summary(message_, position_)
                                          : kind_ + " (" + first_line(message_).substr(0, 160) + ") at position " + std::to_string(position_) +
                                                " (first failing position)";
  d.mistake = d.explanation;
  d.headline = kind_ == "status" ? raised_summary(message_, -1) : kind_ + " (" + first_line(message_).substr(0, 160) + ")";
  d.lines.insert(d.lines.begin(), d.explanation);
}

double infer_spec(const Spec& spec, const std::vector<DiagnosedTest>& tests, bool failing, int threads, GroupDiagnosis& d) {
  // The sample: at most kInferenceTokens tokens spread over every test, at most 2 heads each.
  std::int64_t total = 0;
  for (const DiagnosedTest& dt : tests) total += dt.test->tokens;
  if (total == 0) return -1;
  const std::int64_t stride = std::max<std::int64_t>(1, (total + kInferenceTokens - 1) / kInferenceTokens);
  std::vector<Row> rows;
  std::int64_t index = 0;
  for (const DiagnosedTest& dt : tests) {
    for (std::int64_t t = 0; t < dt.test->tokens; ++t, ++index) {
      if (index % stride != 0 && t != dt.test->tokens - 1) continue;
      for (std::int64_t h = 0; h < std::min<std::int64_t>(2, dt.test->heads); ++h) rows.push_back({dt.test, dt.output, t, h});
    }
  }
  const Fits fits = fit(spec, rows, failing, threads);
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    const std::optional<long double>& t = fits.theta_hat[static_cast<std::size_t>(j)];
    const long double sign = spec.direction == Direction::inverse ? -1 : 1;
    d.frequencies.push_back({j, static_cast<double>(frequency<long double>(spec, j)),
                             t ? static_cast<double>(sign * *t) : std::numeric_limits<double>::quiet_NaN()});
  }
  if (!failing) return -1;

  const Scorer scorer(spec, rows);
  Variant as_given;
  as_given.spec = spec;
  const Score given = scorer.score(as_given, nullptr, threads);

  // Memory faults: named when, with their rows left out, the spec explains what is left (at least
  // 90 %, and at most a fifth of what it leaves unexplained with them).
  const std::map<std::string, MemoryFinding> memory = memory_faults(spec, tests, threads);
  const auto explains_rest = [&](const MemoryFinding& m) {
    const Score rest = scorer.score(as_given, &m.rows_flagged, threads);
    // Foreign data must leave rows the spec explains (zeros or the inputs everywhere are said
    // whatever is left).
    if (m.kind == "memory_stride" && rest.units == 0) return false;
    return rest.within >= 0.9 && (1 - rest.within) * 5 <= (1 - given.within) && rest.within > given.within;
  };
  const auto name_memory = [&](const MemoryFinding& m) {
    d.explanation_kind = m.kind;
    d.mistake = m.what;
    std::string matched;
    if (m.kind == "memory_stride" && m.matched > 0) {
      matched = ", " + std::to_string(m.matched) + " of them another row's input norms";
    }
    d.headline = "your outputs have " + m.what;
    d.explanation = "your outputs have " + m.what + " at tokens " + token_ranges_text(m.tokens, m.stride) + " (" +
                    std::to_string(m.faulty_rows) + " of " + std::to_string(m.rows) + " rows" + matched +
                    (m.stride > 1 ? "; sampled at a stride of " + std::to_string(m.stride) + " tokens" : std::string()) +
                    "); the spec explains the other rows";
  };
  for (const char* kind : {"memory_zeros", "memory_identity"}) {
    const auto it = memory.find(kind);
    if (it != memory.end() && explains_rest(it->second)) {
      name_memory(it->second);
      return given.within;
    }
  }

  // The spec as given explains (almost) every pair within the f32-angle bound: a failure under the
  // exact model by a binary32 angle (diagnose says so), or a few pairs past the bound: no change named.
  if (given.within >= 0.99) return given.within;

  const std::vector<Variant> list = variants(spec, fits);
  std::vector<Score> scores(list.size());
  // Handed out from the end of the list: its last variants (binary32 positions, angles and cos/sin,
  // TF32 angles: rounding per pair) cost up to twice the others, and taken last they were a tail
  // of one thread while the others had finished. Each score goes to its own slot either way.
  parallel_for(list.size(), threads, [&](std::size_t k) {
    const std::size_t i = list.size() - 1 - k;
    scores[i] = scorer.score(list[i]);
  });
  std::size_t best = list.size();
  for (std::size_t i = 0; i < list.size(); ++i) {
    // Ties (equal shares within the bound, bit-identical shares within half a percent: one
    // schedule written two ways, as base b over head_dim and b^(rotary/head) over rotary_dim) go
    // to the earlier, more specific change.
    if (best == list.size() || scores[i].within > scores[best].within ||
        (scores[i].within == scores[best].within && scores[i].identical > scores[best].identical + 0.005)) {
      best = i;
    }
  }
  if (best == list.size()) return given.within;
  const Score& b = scores[best];
  const bool named = b.units > 0 && b.within >= 0.9 && b.within > given.within && (1 - b.within) * 5 <= (1 - given.within);
  if (named) {
    d.explanation_kind = list[best].kind;
    d.mistake = list[best].change;
    d.mistake_within = b.within;
    d.mistake_identical = b.identical;
    if (list[best].kind == "position_offset") d.position_offset = static_cast<double>(list[best].position_shift);
    d.headline = "your outputs are RoPE with " + list[best].change;
    d.explanation = "your outputs are RoPE with " + list[best].change + ": bit-identical in " + percent(b.identical) +
                    " of values, within the f32-angle bound in " + percent(b.within) + " of pairs";
  } else if (const auto it = memory.find("memory_stride"); it != memory.end() && explains_rest(it->second)) {
    name_memory(it->second);
  } else {
    d.headline = "no single change of the spec reproduces them";
    d.explanation = "no single change of the spec reproduces them (the spec as given explains " + percent(given.within) +
                    " of pairs); closest: " + list[best].change + " (" + percent(b.within) + ")";
  }
  return given.within;
}

}  // namespace ropecheck::judge
