#include "judge/inference.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

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

// Where output row (token t, head h) of a test took its input from: its own row, or another one
// by a head table or by a linear read index (a kernel that walks memory with the wrong strides or
// from the wrong offset reads index a·t + b·h + c, in head rows, of the data's own layout). Tokens
// are the user's token indices (a sample's token t is DiagnosedTest::user_token(t)).
struct RowSource {
  enum class Kind { own, head_table, token_major, head_major };
  Kind kind = Kind::own;
  std::vector<std::int64_t> head;           // head_table: head h holds head head[h]'s input
  std::int64_t a = 0, b = 1, c = 0, s = 1;  // the read index; s: head rows per token (token_major), tokens (head_major)
  bool source_position = false;             // rotated at the source token's position, not its own
  // The source row (st, sh) of output row (t, h) of a test of `heads` heads; false when it lies
  // outside the input given.
  bool find(std::int64_t t, std::int64_t h, std::int64_t heads, std::int64_t& st, std::int64_t& sh) const {
    st = t, sh = h;
    if (kind == Kind::own) return true;
    if (kind == Kind::head_table) {
      if (h < static_cast<std::int64_t>(head.size())) sh = head[static_cast<std::size_t>(h)];
      return sh >= 0 && sh < heads;
    }
    const std::int64_t index = a * t + b * h + c;
    if (index < 0) return false;
    if (kind == Kind::token_major) {
      st = index / s, sh = index % s;
    } else {
      sh = index / s, st = index % s;
    }
    return sh < heads;
  }
};

struct Variant {
  std::string kind;             // the explanation's kind
  std::string change;           // what differs from the spec, in its words ("base=10000 (expected 1000000)")
  Spec spec;                    // what it computes: layout, rotary_dim, base, scaling, axes, direction
  int frequency_dim = 0;        // > 0: θ_j laid over this many dims instead of rotary_dim
  bool head_dim_pairs = false;  // half layout: pairs (i, i + head_dim/2) of a partial rotary
  std::int64_t position_shift = 0;
  bool per_position_seq = false;  // dynamic / longrope: seq_len = position + 1, token by token
  bool first_axis_only = false;   // multi-axis: component 0 drives every pair
  std::optional<Dtype> positions_dtype, theta_dtype, angle_dtype, cos_sin_dtype;
  bool angle_tf32 = false;
  bool running_product = false;          // θ_j = θ_{j−1}·r in binary32, r = RN32(b^(−2/d)) (ggml's rope)
  std::optional<long double> attention;  // the attention factor in place of the spec's
  RowSource source;                      // where each output row took its input from
  std::vector<std::int64_t> head_shift;  // per head: a position shift added to position_shift
  bool memory = false;                   // a memory fault: "your outputs have ...", not "RoPE with ..."
  bool negated = false;                  // every output value's sign flipped (a rotation by pi more)
};

// The sample the variants are scored on: rows (token × head) with their positions.
struct Row {
  const golden::RopeTest* test;
  std::span<const double> output;
  std::int64_t t, h;
  const DiagnosedTest* sample = nullptr;  // where the test's tokens lie in the user's tensor
};

// The sample's index of user token u, or -1 when the sample does not hold it.
std::int64_t sample_token(const DiagnosedTest& dt, std::int64_t u) {
  if (!dt.token_index.empty()) {
    const auto it = std::lower_bound(dt.token_index.begin(), dt.token_index.end(), u);
    return it != dt.token_index.end() && *it == u ? it - dt.token_index.begin() : -1;
  }
  const std::int64_t d = u - dt.first_token;
  if (d < 0 || d % dt.token_stride != 0 || d / dt.token_stride >= dt.test->tokens) return -1;
  return d / dt.token_stride;
}

struct Score {
  double within = 0, identical = 0;
  std::int64_t units = 0;
  // Rows scored; rows not scored: their source lies outside the input given, or is a token the
  // sample does not hold.
  std::int64_t rows = 0, outside = 0, unsampled = 0;
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
      all.rows += part.rows, all.outside += part.outside, all.unsampled += part.unsampled;
    }
    Score sc;
    sc.units = all.units;
    sc.rows = all.rows, sc.outside = all.outside, sc.unsampled = all.unsampled;
    sc.within = 1;  // nothing left to explain
    if (all.units > 0) sc.within = static_cast<double>(all.within) / static_cast<double>(all.units);
    if (all.values > 0) sc.identical = static_cast<double>(all.identical) / static_cast<double>(all.values);
    return sc;
  }

 private:
  struct Counts {
    std::int64_t units = 0, within = 0, values = 0, identical = 0, rows = 0, outside = 0, unsampled = 0;
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
    std::int64_t units = 0, within = 0, values = 0, identical = 0, rows = 0, outside = 0, unsampled = 0;
    std::vector<double> c(static_cast<std::size_t>(pairs)), sn(static_cast<std::size_t>(pairs)), angle(static_cast<std::size_t>(pairs));
    const golden::RopeTest* last_test = nullptr;
    std::int64_t last_t = -1, last_shift = 0;
    for (std::int64_t i = range.begin; i < range.end; ++i) {
      const Row& r = rows_[static_cast<std::size_t>(i)];
      const golden::RopeTest& test = *r.test;
      if (excluded && excluded->count({r.test, r.t, r.h})) continue;
      std::int64_t st = r.t, sh = r.h;
      if (v.source.kind != RowSource::Kind::own) {
        std::int64_t source_token = 0;
        if (!v.source.find(r.sample->user_token(r.t), r.h, test.heads, source_token, sh)) {
          ++outside;
          continue;
        }
        if ((st = sample_token(*r.sample, source_token)) < 0) {
          ++unsampled;
          continue;
        }
      }
      ++rows;
      const std::int64_t pt = v.source.source_position ? st : r.t;  // the token whose position rotates the row
      const std::int64_t shift =
          v.position_shift + (v.head_shift.empty() ? 0 : v.head_shift[static_cast<std::size_t>(r.h) % v.head_shift.size()]);
      if (&test != last_test || pt != last_t || shift != last_shift) {  // the token's angles, shared by its heads
        last_test = &test;
        last_t = pt;
        last_shift = shift;
        const std::int64_t* p = test.positions.data() + pt * components;
        const std::vector<long double>* theta = &fixed;
        if (v.per_position_seq) {
          const std::int64_t seq = p[0] + shift + 1;
          auto it = tables.find(seq);
          if (it == tables.end()) it = tables.emplace(seq, thetas(v, seq)).first;
          theta = &it->second;
        }
        for (int j = 0; j < pairs; ++j) {
          const int component = v.first_axis_only ? 0 : position_component(s, j);
          long double m = static_cast<long double>(p[std::min(component, components - 1)] + shift);
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
      const double* x = test.input.data() + static_cast<std::size_t>((st * test.heads + sh) * head_dim);
      const double* o = r.output.data() + static_cast<std::size_t>((r.t * test.heads + r.h) * head_dim);
      for (int j = 0; j < pairs; ++j) {
        const reference::PairDims pd = dims[static_cast<std::size_t>(j)];
        const double xi = x[pd.first], yi = x[pd.second];
        if (domain_of(xi, yi, spec_.dtype, static_cast<double>(g)) != Domain::ordinary) continue;
        const long double cj = c[static_cast<std::size_t>(j)], sj = sn[static_cast<std::size_t>(j)];
        const long double gv = v.negated ? -g : g;
        const long double ea = gv * (xi * cj - yi * sj), eb = gv * (xi * sj + yi * cj);
        const double a = o[pd.first], b = o[pd.second];
        ++units;
        if (std::isfinite(a) && std::isfinite(b) &&
            normwise_error(a, b, ea, eb, xi, yi, spec_.dtype, static_cast<double>(g)) <=
                tolerance_.at(angle[static_cast<std::size_t>(j)])) {
          ++within;
        }
        identical += (a == static_cast<double>(reference::round_to_format(ea, spec_.dtype))) +
                     (b == static_cast<double>(reference::round_to_format(eb, spec_.dtype)));
        values += 2;
      }
      for (int k = 0; k < head_dim; ++k) {  // dims the variant passes through: the input, bit for bit
        if (covered[static_cast<std::size_t>(k)] || !std::isfinite(x[k])) continue;
        ++units;
        within += o[k] == (v.negated ? -x[k] : x[k]);
      }
    }
    return Counts{units, within, values, identical, rows, outside, unsampled};
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
  {
    // Not a change of the spec (no field rotates by pi more at every position, position 0
    // included): the outputs' sign, said as what it is.
    Variant v = c.base();
    v.kind = "negated";
    v.negated = true;
    v.memory = true;
    v.change = "the negation of the spec's outputs (every value's sign flipped)";
    c.push(v);
  }
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
    v.change = "frequencies over head_dim=" + std::to_string(spec.head_dim) +
               " (expected over rotary_dim=" + std::to_string(spec.rotary_dim) + ")";
    c.push(v);
    if (spec.layout == Layout::half) {
      Variant w = c.base();
      w.kind = "partial_pairs";
      w.head_dim_pairs = true;
      w.change = "pairs (i, i + head_dim/2) = (i, i + " + std::to_string(spec.head_dim / 2) +
                 ") (expected (i, i + rotary_dim/2) = (i, i + " + std::to_string(spec.rotary_dim / 2) + "))";
      c.push(w);
      w.frequency_dim = spec.head_dim;
      w.change = "pairs (i, i + head_dim/2) and frequencies over head_dim=" + std::to_string(spec.head_dim) +
                 " (expected rotary_dim=" + std::to_string(spec.rotary_dim) + ")";
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
        w.change = "attention factor " + decimal(significant(*w.attention, 6)) + " (the derived one, expected the given " +
                   *sc.attention_factor + ")";
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
    default:
      break;
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
        c.spec_change(
            "scaling", t, "",
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
      v.change = "attention factor " + decimal(significant(other, 6)) + (other == 1 ? " (missing)" : " (applied twice)") + " (expected " +
                 decimal(significant(g, 6)) + ")";
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
  // memory_stride: the rows matched to another row of their own test, (t, h) <- (st, sh), tokens
  // as the user's indices.
  struct Match {
    std::size_t test;
    std::int64_t t, h, st, sh;
  };
  std::vector<Match> sources;
  std::vector<Match> unmatched;  // rows whose norms match no input row (st = sh = -1)
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
      out[static_cast<std::size_t>(j)] =
          static_cast<double>(pair_norm(v[dims[static_cast<std::size_t>(j)].first], v[dims[static_cast<std::size_t>(j)].second]));
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
            std::optional<MemoryFinding::Match> source;
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
                    domain_of(x[pd.first], x[pd.second], spec.dtype, static_cast<double>(attention_factor<long double>(spec))) !=
                        Domain::ordinary) {
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
                    if (it->second.test == i)
                      source = MemoryFinding::Match{i, tests[i].user_token(t), h, tests[i].user_token(it->second.t), it->second.h};
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
            if (source) f.sources.push_back(*source);
            if (kind == "memory_stride" && !matched) f.unmatched.push_back({i, tests[i].user_token(t), h, -1, -1});
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
      f.sources.insert(f.sources.end(), p.sources.begin(), p.sources.end());
      f.unmatched.insert(f.unmatched.end(), p.unmatched.begin(), p.unmatched.end());
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
             : f.matched > 0             ? "another token's data (pair norms that are not the row's input's: a stride ignored)"
                             // no row's norms are another row's input's: nothing says where they came from
                             : "rows that are not a rotation of their input (pair norms not kept, unevenly; none is another row's input)";
  }
  return found;
}

// ---- where rows took their input from -----------------------------------------------------------

// The most common value and its count.
std::pair<std::int64_t, std::size_t> mode(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  std::pair<std::int64_t, std::size_t> best{0, 0};
  for (std::size_t i = 0; i < v.size();) {
    std::size_t k = i;
    while (k < v.size() && v[k] == v[i]) ++k;
    if (k - i > best.second) best = {v[i], k - i};
    i = k;
  }
  return best;
}

std::string signed_text(std::int64_t v) { return (v >= 0 ? "+" : "") + std::to_string(v); }

// "2t + h - 3": a read index in head rows.
std::string index_text(std::int64_t a, std::int64_t b, std::int64_t c) {
  std::string out = (a == 1 ? "" : std::to_string(a)) + "t";
  if (b != 0) out += (b > 0 ? " + " : " - ") + (std::abs(b) == 1 ? std::string() : std::to_string(std::abs(b))) + "h";
  if (c != 0) out += (c > 0 ? " + " : " - ") + std::to_string(std::abs(c));
  return out;
}

// The read index a·t + b·h + c (in head rows of the data laid out by `loc`) that the matched rows
// follow, by vote: a from rows of one head at two tokens, b from two heads of one token, c from
// every row; and how many matches follow it. Null unless at least 95 % of them do.
template <class Location>
std::optional<std::array<std::int64_t, 4>> read_index(const std::vector<MemoryFinding::Match>& matches, Location loc) {
  std::vector<std::int64_t> as, bs;
  std::map<std::int64_t, const MemoryFinding::Match*> last_of_head;
  std::map<std::int64_t, const MemoryFinding::Match*> last_of_token;
  for (const MemoryFinding::Match& m : matches) {
    if (auto it = last_of_head.find(m.h); it != last_of_head.end() && it->second->t != m.t) {
      const std::int64_t dl = loc(m) - loc(*it->second), dt = m.t - it->second->t;
      if (dl % dt == 0) as.push_back(dl / dt);
    }
    if (auto it = last_of_token.find(m.t); it != last_of_token.end() && it->second->h != m.h) {
      const std::int64_t dl = loc(m) - loc(*it->second), dh = m.h - it->second->h;
      if (dl % dh == 0) bs.push_back(dl / dh);
    }
    last_of_head[m.h] = &m;
    last_of_token[m.t] = &m;
  }
  if (as.empty()) return std::nullopt;
  const std::int64_t a = mode(as).first, b = bs.empty() ? 1 : mode(bs).first;
  std::vector<std::int64_t> cs;
  for (const MemoryFinding::Match& m : matches) cs.push_back(loc(m) - a * m.t - b * m.h);
  const auto [c, count] = mode(cs);
  if (count * 100 < matches.size() * 95) return std::nullopt;
  return std::array<std::int64_t, 4>{a, b, c, static_cast<std::int64_t>(count)};
}

// The layouts that the rows holding another row's input follow (judge/README.md "Explanation"):
// heads permuted (same token, a head table), rows read from a constant offset, a token stride or a
// head stride ignored. Each twice: rotated at the row's own position and at its source's.
std::vector<Variant> source_variants(const Spec& spec, const std::map<std::string, MemoryFinding>& memory,
                                     const std::vector<DiagnosedTest>& tests) {
  std::vector<Variant> out;
  const auto found = memory.find("memory_stride");
  if (found == memory.end()) return out;
  const MemoryFinding& m = found->second;
  // The rows that hold no input row: foreign norms matching none, zeros, the input itself.
  std::vector<MemoryFinding::Match> unmatched = m.unmatched;
  for (const char* kind : {"memory_zeros", "memory_identity"}) {
    const auto it = memory.find(kind);
    if (it == memory.end()) continue;
    for (const auto& [test, t, h] : it->second.rows_flagged) {
      for (std::size_t i = 0; i < tests.size(); ++i) {
        if (tests[i].test == test) unmatched.push_back({i, tests[i].user_token(t), h, -1, -1});
      }
    }
  }
  if (m.sources.size() < 3) return out;
  const golden::RopeTest& first = *tests[m.sources.front().test].test;
  const std::int64_t heads = first.heads;
  for (const MemoryFinding::Match& x : m.sources) {
    if (tests[x.test].test->heads != heads) return out;
  }
  auto both_positions = [&](Variant v, const std::string& own, const std::string& theirs) {
    v.memory = true;
    v.spec = spec;
    const std::string change = v.change;
    v.change = change + own;
    out.push_back(v);
    v.source.source_position = true;
    v.change = change + theirs;
    out.push_back(std::move(v));
  };
  // Heads permuted: every match in its own token, one source head per head.
  if (std::all_of(m.sources.begin(), m.sources.end(), [](const MemoryFinding::Match& x) { return x.st == x.t; })) {
    Variant v;
    v.source.kind = RowSource::Kind::head_table;
    std::size_t agree = 0;
    std::string list;
    bool permutation = true;
    std::set<std::int64_t> used;
    for (std::int64_t h = 0; h < heads; ++h) {
      std::vector<std::int64_t> from;
      for (const MemoryFinding::Match& x : m.sources) {
        if (x.h == h) from.push_back(x.sh);
      }
      const auto [src, count] = from.empty() ? std::pair<std::int64_t, std::size_t>{h, 0} : mode(from);
      agree += count;
      v.source.head.push_back(src);
      permutation &= used.insert(src).second;
      if (src != h) {
        if (std::count_if(list.begin(), list.end(), [](char ch) { return ch == ','; }) >= 7) {
          if (list.find("...") == std::string::npos) list += ", ...";
        } else {
          list += (list.empty() ? "" : ", ") + std::string("head ") + std::to_string(h) + " holds head " + std::to_string(src) + "'s input";
        }
      }
    }
    if (agree * 100 >= m.sources.size() * 95 && !list.empty()) {
      v.kind = "head_permuted";
      v.change = (permutation ? "heads permuted (" : "heads holding another head's input (") + list + ")";
      both_positions(v, ", each rotated at its own position", ", each rotated at its source's position");
      return out;
    }
  }
  // A linear read index over token-major data of s head rows per token (s = heads, 2·heads, ...,
  // 16·heads: the data may be a slice of a wider buffer), then over head-major data ([heads,
  // tokens]). The one most matches follow goes first; among equals (with few heads several s
  // describe the matches alike), the one that places the fewest rows holding no input row (foreign
  // norms matching none, zeros, the input) on a row of the input the sample holds (such a row
  // would have matched), then the smallest s.
  std::optional<std::array<std::int64_t, 6>> chosen;
  const auto contradictions = [&](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t s) {
    RowSource r;
    r.kind = RowSource::Kind::token_major;
    r.a = a, r.b = b, r.c = c, r.s = s;
    std::int64_t n = 0;
    for (const MemoryFinding::Match& x : unmatched) {
      std::int64_t st = 0, sh = 0;
      n += r.find(x.t, x.h, heads, st, sh) && sample_token(tests[x.test], st) >= 0;
    }
    return n;
  };
  const auto better = [&](const std::array<std::int64_t, 6>& l, const std::array<std::int64_t, 6>& r) {
    if (l[3] != r[3]) return l[3] > r[3];
    return l[5] < r[5];
  };
  for (std::int64_t k = 1; k <= 16; ++k) {
    const std::int64_t s = k * heads;
    const auto fitted = read_index(m.sources, [&](const MemoryFinding::Match& x) { return x.st * s + x.sh; });
    if (!fitted || ((*fitted)[0] == s && (*fitted)[1] == 1 && (*fitted)[2] == 0)) continue;
    const auto [a, b, c, count] = *fitted;
    const std::array<std::int64_t, 6> found{a, b, c, count, s, contradictions(a, b, c, s)};
    if (!chosen || better(found, *chosen)) chosen = found;
  }
  if (chosen) {
    const auto [a, b, c, count, s, wrong] = *chosen;
    (void)count, (void)wrong;
    Variant v;
    v.source.kind = RowSource::Kind::token_major;
    v.source.a = a, v.source.b = b, v.source.c = c, v.source.s = s;
    if (a == s && b == 1 && s == heads) {
      v.kind = "memory_offset";
      v.change = "rows read from the wrong offset: row r (token x head) holds row r" + signed_text(c) + "'s input" +
                 (c % heads == 0 ? " (token t holds token t" + signed_text(c / heads) + "'s)" : std::string());
    } else if (b == 1) {
      v.kind = "memory_stride";
      v.change = "another token's data: the token stride ignored (token t, head h reads head row " + index_text(a, b, c) +
                 " as if tokens were " + std::to_string(a) + " head rows apart; the data's tokens are " + std::to_string(s) +
                 " head rows apart: a non-contiguous slice walked as contiguous)";
    } else {
      v.kind = "memory_head_stride";
      v.change = "another head's data: the head stride ignored (token t, head h reads head row " + index_text(a, b, c) + " of data with " +
                 std::to_string(s) + " head rows per token)";
    }
    both_positions(v, ", rotated at its own position", ", rotated at the position of the row it read");
    return out;
  }
  // Head-major data ([heads, tokens]) walked as [tokens, heads]: token t, head h reads row t·heads + h
  // of it, i.e. head (t·heads + h) / T, token (t·heads + h) mod T of T tokens, T by vote.
  std::vector<std::int64_t> ts;
  for (const MemoryFinding::Match& x : m.sources) {
    if (x.sh > 0 && (x.t * heads + x.h - x.st) % x.sh == 0) ts.push_back((x.t * heads + x.h - x.st) / x.sh);
  }
  if (ts.empty()) return out;
  const std::int64_t t_all = mode(ts).first;
  if (t_all <= 0) return out;
  const std::size_t agree = static_cast<std::size_t>(std::count_if(
      m.sources.begin(), m.sources.end(), [&](const MemoryFinding::Match& x) { return x.sh * t_all + x.st == x.t * heads + x.h; }));
  if (agree * 100 < m.sources.size() * 95) return out;
  Variant v;
  v.source.kind = RowSource::Kind::head_major;
  v.source.a = heads, v.source.b = 1, v.source.c = 0, v.source.s = t_all;
  v.kind = "memory_head_stride";
  v.change = "another head's data: the head stride ignored (a [heads, tokens] layout of " + std::to_string(t_all) +
             " tokens walked as [tokens, heads]: token t, head h reads head h' = (" + std::to_string(heads) + "t + h) / " +
             std::to_string(t_all) + " at token (" + std::to_string(heads) + "t + h) mod " + std::to_string(t_all) + ")";
  both_positions(v, ", rotated at its own position", ", rotated at the position of the row it read");
  return out;
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

// The explanation of a variant that reproduces the outputs, with its fit.
void name_variant(const Variant& v, const Score& sc, GroupDiagnosis& d) {
  d.explanation_kind = v.kind;
  d.mistake = v.change;
  d.mistake_within = sc.within;
  d.mistake_identical = sc.identical;
  const std::string lead = v.negated ? "your outputs are " : v.memory ? "your outputs have " : "your outputs are RoPE with ";
  d.headline = lead + v.change;
  // The fit is the named change's (its values against the outputs), worded so that it never reads
  // as the verdict of the spec as given.
  d.explanation = lead + v.change + " (fit of that change: " + percent(sc.identical) + " of values bit for bit, " + percent(sc.within) +
                  " of pairs within its f32-angle bound)";
  if (sc.outside > 0 || sc.unsampled > 0) {
    const std::int64_t all = sc.rows + sc.outside + sc.unsampled;
    std::string left;
    if (sc.outside > 0) left = std::to_string(sc.outside) + " of " + std::to_string(all) + " sampled rows read outside the input given";
    if (sc.unsampled > 0) {
      left += (left.empty() ? std::to_string(sc.unsampled) + " of " + std::to_string(all) + " sampled rows"
                            : ", " + std::to_string(sc.unsampled)) +
              " read a row the sample does not hold";
    }
    d.explanation += " (" + left + ": not scored)";
  }
}

// Rows of zeros, or equal to their input, that are every row of some heads (for the input: every
// moving row, at a position whose angle is not zero) and of no other: named by head ("heads 4..7
// of 8 left unrotated"). False when the rows are not whole heads, or are every head (then no head
// is singled out).
bool name_heads(const Spec& spec, const std::vector<DiagnosedTest>& tests, const MemoryFinding& m, const Scorer& scorer, int threads,
                GroupDiagnosis& d) {
  const bool zeros = m.kind == "memory_zeros";
  const int components = position_components(spec);
  std::int64_t heads = 0;
  std::map<std::int64_t, std::int64_t> moving, flagged;
  for (const DiagnosedTest& dt : tests) {
    const golden::RopeTest& test = *dt.test;
    heads = std::max(heads, test.heads);
    for (std::int64_t t = 0; t < test.tokens; ++t) {
      bool any = false;
      for (int c = 0; c < components && !any; ++c) any = test.positions[static_cast<std::size_t>(t * components + c)] != 0;
      if (!any && !zeros) continue;
      for (std::int64_t h = 0; h < test.heads; ++h) ++moving[h];
    }
  }
  for (const RowKey& key : m.rows_flagged) ++flagged[std::get<2>(key)];
  if (flagged.empty() || static_cast<std::int64_t>(flagged.size()) >= heads) return false;
  std::vector<std::int64_t> list;
  for (const auto& [h, n] : flagged) {
    if (n * 100 < moving[h] * 99) return false;  // rows whose input is zero or not finite are not flagged
    list.push_back(h);
  }
  Variant as_given;
  as_given.spec = spec;
  const Score rest = scorer.score(as_given, &m.rows_flagged, threads);
  const std::string which = (list.size() == 1 ? "head " : "heads ") + token_ranges_text(list, 1) + " of " + std::to_string(heads);
  d.explanation_kind = zeros ? "head_zeros" : "head_unrotated";
  d.mistake = which + (zeros ? " never written (zeros)" : " left unrotated (outputs equal the inputs at every position)");
  d.mistake_within = rest.within;
  d.mistake_identical = rest.identical;
  d.headline = "your outputs have " + d.mistake;
  d.explanation = d.headline + "; the spec explains the other heads (fit: " + percent(rest.identical) + " of values bit for bit, " +
                  percent(rest.within) + " of pairs within its f32-angle bound)";
  return true;
}

// Positions that differ by head: each head's own position offset, fitted from its rows alone.
// Empty when a head's offset does not resolve or every head has the same one (a single offset,
// already tried).
std::vector<Variant> head_position_variants(const Spec& spec, const std::vector<Row>& rows, int threads) {
  std::int64_t heads = 0;
  for (const Row& r : rows) heads = std::max(heads, r.h + 1);
  if (heads < 2) return {};
  std::vector<std::int64_t> shift(static_cast<std::size_t>(heads));
  for (std::int64_t h = 0; h < heads; ++h) {
    std::vector<Row> own;
    for (const Row& r : rows) {
      if (r.h == h) own.push_back(r);
    }
    if (own.size() < 8) return {};
    const Fits f = fit(spec, own, true, threads);
    if (!f.offset || std::fabs(*f.offset) > 1e12L) return {};
    shift[static_cast<std::size_t>(h)] = static_cast<std::int64_t>(*f.offset);
  }
  if (std::all_of(shift.begin(), shift.end(), [&](std::int64_t k) { return k == shift[0]; })) return {};
  Variant v;
  v.spec = spec;
  v.kind = "head_positions";
  v.head_shift = shift;
  std::string list;
  int listed = 0;
  for (std::int64_t h = 0; h < heads; ++h) {
    const std::int64_t k = shift[static_cast<std::size_t>(h)];
    if (k == 0) continue;
    if (listed++ == 8) {
      list += ", ...";
      break;
    }
    list +=
        (list.empty() ? "head " + std::to_string(h) + " at positions offset by " : ", head " + std::to_string(h) + " by ") + signed_text(k);
  }
  v.change =
      "positions that differ by head: " + list + (std::count(shift.begin(), shift.end(), 0) > 0 ? " (the other heads as given)" : "");
  return {v};
}

// Two changes at once, tried only when no single change reproduces the outputs: a first change
// that moves what the fits measure (the layout or the direction: the pairs' angles; the three
// bases nearest the fitted one, or the best scored without a fit: the offset), the fits redone
// under it, then a second change of another field from those fits (the base, the scaling, the
// position offset); and llama3's low and high frequency factors swapped.
std::vector<Variant> two_change_variants(const Spec& spec, const Fits& fits, const std::vector<Variant>& singles,
                                         const std::vector<Score>& scores, const std::vector<Row>& rows, int threads) {
  std::vector<Variant> out;
  std::vector<std::size_t> firsts, bases;
  for (std::size_t i = 0; i < singles.size(); ++i) {
    if (singles[i].kind == "layout" || singles[i].kind == "direction" ||
        (singles[i].kind == "axes" && singles[i].spec.layout != spec.layout)) {
      firsts.push_back(i);
    }
    if (singles[i].kind == "base") bases.push_back(i);
  }
  const std::optional<long double> fitted = fits.base ? fits.base : fits.base_median;
  const auto distance = [&](std::size_t i) {
    return std::fabs(std::log(std::strtold(singles[i].spec.base.c_str(), nullptr)) - std::log(*fitted));
  };
  std::stable_sort(bases.begin(), bases.end(), [&](std::size_t l, std::size_t r) {
    return fitted && *fitted > 0 ? distance(l) < distance(r) : scores[l].within > scores[r].within;
  });
  if (bases.size() > 3) bases.resize(3);
  firsts.insert(firsts.end(), bases.begin(), bases.end());
  for (std::size_t i : firsts) {
    const Variant& first = singles[i];
    const Fits f = fit(first.spec, rows, true, threads);
    for (Variant second : variants(first.spec, f)) {
      // After the pairing or direction: the base, the offset or the scaling; after a base: the offset.
      const bool pairing_first = first.kind != "base";
      if (second.kind != "position_offset" && !(pairing_first && (second.kind == "base" || second.kind == "scaling"))) continue;
      second.kind = "two_changes";
      second.change = "two changes: " + first.change + " and " + second.change;
      out.push_back(std::move(second));
    }
  }
  if (spec.scaling.type == ScalingType::llama3) {
    Variant v;
    v.spec = spec;  // the swapped factors fail validate (low < high); the schedule's formula takes them as given
    std::swap(v.spec.scaling.low_freq_factor, v.spec.scaling.high_freq_factor);
    v.kind = "two_changes";
    v.change = "low_freq_factor=" + v.spec.scaling.low_freq_factor + " and high_freq_factor=" + v.spec.scaling.high_freq_factor +
               " (expected " + spec.scaling.low_freq_factor + " and " + spec.scaling.high_freq_factor +
               "): llama3's two frequency factors swapped";
    out.push_back(std::move(v));
  }
  return out;
}

// Whether the share `rest` of pairs the spec explains with some rows left out names those rows:
// at least 90 %, more than with them, and at most a fifth of what it leaves unexplained with them.
bool explains_rest_of(const Score& rest, const Score& given) {
  return rest.units > 0 && rest.within >= 0.9 && (1 - rest.within) * 5 <= (1 - given.within) && rest.within > given.within;
}

// What the outputs are whatever the inputs, said as it is (judge/README.md "Explanation" 2): NaN or
// infinite at every value, all zero, one constant; or NaN/Inf in some rows whose inputs are finite
// while the spec explains the others. No change of the spec gives any of these (a rotation keeps
// the norm of every pair), so none is searched for. False when none of them holds.
bool describe_outputs(const Spec& spec, const std::vector<DiagnosedTest>& tests, const Scorer& scorer, const Score& given, int threads,
                      GroupDiagnosis& d) {
  std::int64_t values = 0, nan = 0, inf = 0, zero = 0, stride = 1;
  bool constant = true, sampled = false, normal_input = false;
  double first = 0;
  // Zero or constant outputs are a finding only where some input is a normal number (inputs all
  // subnormal or zero may round, or flush, to zeros: judge/diagnosis.cpp names a flush).
  const double smallest_normal = std::ldexp(1.0, reference::format_of(spec.dtype).emin);
  std::set<RowKey> flagged;  // rows with a NaN or Inf output where the input row is finite
  std::vector<std::int64_t> tokens;
  std::int64_t rows = 0;
  for (const DiagnosedTest& dt : tests) {
    const golden::RopeTest& test = *dt.test;
    sampled |= dt.token_stride > 1 || !dt.token_index.empty();
    stride = std::max(stride, dt.token_stride);
    for (std::size_t k = 1; k < dt.token_index.size(); ++k) stride = std::max(stride, dt.token_index[k] - dt.token_index[k - 1]);
    for (std::int64_t t = 0; t < test.tokens; ++t) {
      for (std::int64_t h = 0; h < test.heads; ++h) {
        const std::size_t row = static_cast<std::size_t>((t * test.heads + h) * spec.head_dim);
        bool finite_in = true, finite_out = true;
        for (int k = 0; k < spec.head_dim; ++k) {
          const double o = dt.output[row + static_cast<std::size_t>(k)];
          if (values++ == 0) first = o;
          nan += std::isnan(o);
          inf += std::isinf(o);
          zero += o == 0;
          constant &= o == first;
          const double x = test.input[row + static_cast<std::size_t>(k)];
          finite_in &= std::isfinite(x);
          normal_input |= std::isfinite(x) && std::fabs(x) >= smallest_normal;
          finite_out &= std::isfinite(o);
        }
        ++rows;
        if (finite_in && !finite_out) {
          flagged.insert({&test, t, h});
          tokens.push_back(dt.user_token(t));
        }
      }
    }
  }
  if (values == 0) return false;
  const std::string all = " (all " + std::to_string(values) + " values " + (sampled ? "of the sample" : "examined") + ")";
  const auto name = [&](const std::string& kind, const std::string& what, const std::string& figures) {
    d.explanation_kind = kind;
    d.mistake = what;
    d.mistake_within = 0;
    d.mistake_identical = 0;
    d.headline = "your outputs are " + what;
    d.explanation = d.headline + figures;
    return true;
  };
  if (nan == values) return name("outputs_nan", "NaN at every value", all);
  if (nan + inf == values) return name("outputs_nonfinite", nan == 0 ? "infinite at every value" : "NaN or infinite at every value", all);
  if (zero == values && normal_input) return name("outputs_zero", "all zero", all);
  if (constant && std::isfinite(first) && normal_input) {
    char text[64];
    std::snprintf(text, sizeof text, "%.9g", first);
    return name("outputs_constant", std::string("constant: every value is ") + text, all);
  }
  if (flagged.empty()) return false;
  Variant as_given;
  as_given.spec = spec;
  const Score rest = scorer.score(as_given, &flagged, threads);
  if (!explains_rest_of(rest, given)) return false;
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  const std::string what = inf == 0 ? "NaN" : nan == 0 ? "infinite" : "NaN or infinite";
  name("outputs_nonfinite", what + " in rows whose inputs are finite", "");
  d.mistake_within = rest.within;
  d.mistake_identical = rest.identical;
  d.explanation = "your outputs are " + what + (tokens.size() == 1 ? " at token " : " at tokens ") + token_ranges_text(tokens, stride) +
                  " (" + std::to_string(flagged.size()) + " of " + std::to_string(rows) + " rows, their inputs finite" +
                  (stride > 1 ? "; sampled at a stride of " + std::to_string(stride) + " tokens" : std::string()) +
                  "); the spec explains the other rows (fit: " + percent(rest.identical) + " of values bit for bit, " +
                  percent(rest.within) + " of pairs within its f32-angle bound)";
  return true;
}

}  // namespace

std::string first_line(const std::string& message) {
  std::string line = message.substr(0, message.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string raised_summary(const std::string& message, std::int64_t first_position) {
  std::string line = first_line(message);
  if (line.starts_with(kThrewPrefix)) line.erase(0, kThrewPrefix.size());  // a C++ or Python function's exception
  const auto colon = line.find(':');
  std::string type = colon == std::string::npos ? "" : line.substr(0, colon);
  const bool word = !type.empty() && type.size() < 64 && std::all_of(type.begin(), type.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.';
  });
  std::string out = word ? "raised " + type : "failed (" + line.substr(0, 120) + ")";
  if (first_position >= 0) out += " at position " + std::to_string(first_position) + " (first failing position)";
  return out;
}

void FailedCalls::explain(GroupResult& g) const {
  if (!any_ || g.verdict != Verdict::fail) return;
  if (!g.diagnosis) g.diagnosis.emplace();
  GroupDiagnosis& d = *g.diagnosis;
  d.explanation_kind = "raised";
  d.explanation = kind_ == CaseKind::status ? raised_summary(message_, position_)
                                            : std::string(name(kind_)) + " (" + first_line(message_).substr(0, 160) + ") at position " +
                                                  std::to_string(position_) + " (first failing position)";
  d.mistake = d.explanation;
  d.headline = kind_ == CaseKind::status ? raised_summary(message_, -1)
                                         : std::string(name(kind_)) + " (" + first_line(message_).substr(0, 160) + ")";
  d.lines.insert(d.lines.begin(), d.explanation);
}

double infer_spec(const Spec& spec, const std::vector<DiagnosedTest>& tests, bool failing, int threads, GroupDiagnosis& d) {
  // The sample: at most kInferenceTokens tokens spread over every test, 2 heads each, the heads
  // taken in turn from one sampled token to the next (every head is seen: a fault of some heads).
  std::int64_t total = 0;
  for (const DiagnosedTest& dt : tests) total += dt.test->tokens;
  if (total == 0) return -1;
  const std::int64_t stride = std::max<std::int64_t>(1, (total + kInferenceTokens - 1) / kInferenceTokens);
  std::vector<Row> rows;
  std::int64_t index = 0, sampled = 0;
  for (const DiagnosedTest& dt : tests) {
    for (std::int64_t t = 0; t < dt.test->tokens; ++t, ++index) {
      if (index % stride != 0 && t != dt.test->tokens - 1) continue;
      const std::int64_t heads = dt.test->heads;
      for (std::int64_t k = 0; k < std::min<std::int64_t>(2, heads); ++k)
        rows.push_back({dt.test, dt.output, t, (2 * sampled + k) % heads, &dt});
      ++sampled;
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

  // What the outputs are whatever the inputs (NaN, infinite, zero, constant everywhere; NaN or Inf
  // in rows the spec otherwise explains): said as it is, before any change is searched for.
  if (describe_outputs(spec, tests, scorer, given, threads, d)) return given.within;

  // Memory faults: named when, with their rows left out, the spec explains what is left (at least
  // 90 %, and at most a fifth of what it leaves unexplained with them).
  const std::map<std::string, MemoryFinding> memory = memory_faults(spec, tests, threads);
  std::map<std::string, Score> rests;  // each finding's rest, scored once
  const auto rest_of = [&](const MemoryFinding& m) {
    auto it = rests.find(m.kind);
    if (it == rests.end()) it = rests.emplace(m.kind, scorer.score(as_given, &m.rows_flagged, threads)).first;
    return it->second;
  };
  const auto explains_rest = [&](const MemoryFinding& m) {
    const Score rest = rest_of(m);
    // Foreign data must leave rows the spec explains (zeros or the inputs everywhere are said
    // whatever is left).
    if (m.kind == "memory_stride" && rest.units == 0) return false;
    return rest.units == 0 ? given.within < 1 : explains_rest_of(rest, given);
  };
  const auto name_memory = [&](const MemoryFinding& m) {
    d.explanation_kind = m.kind;
    d.mistake = m.what;
    std::string matched;
    if (m.kind == "memory_stride" && m.matched > 0) {
      matched = ", " + std::to_string(m.matched) + " of them another row's input norms";
    }
    // What the spec explains of the rows left: said with its fit, and only where there are some.
    const Score rest = rest_of(m);
    d.mistake_within = rest.within;
    d.mistake_identical = rest.identical;
    d.headline = "your outputs have " + m.what;
    d.explanation = "your outputs have " + m.what + " at tokens " + token_ranges_text(m.tokens, m.stride) + " (" +
                    std::to_string(m.faulty_rows) + " of " + std::to_string(m.rows) + " rows" + matched +
                    (m.stride > 1 ? "; sampled at a stride of " + std::to_string(m.stride) + " tokens" : std::string()) + ")" +
                    (rest.units > 0 ? "; the spec explains the other rows (fit: " + percent(rest.identical) + " of values bit for bit, " +
                                          percent(rest.within) + " of pairs within its f32-angle bound)"
                                    : "; no row is left for the spec to explain");
  };
  for (const char* kind : {"memory_zeros", "memory_identity"}) {
    const auto it = memory.find(kind);
    if (it != memory.end() && explains_rest(it->second)) {
      if (!name_heads(spec, tests, it->second, scorer, threads, d)) name_memory(it->second);
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
  const auto reproduces = [&](const Score& sc) {
    // Rows read from outside the input (or from tokens the sample lacks) are not scored; where any
    // is left out, at least a tenth of the sample, and 16 rows, must be scored.
    const std::int64_t left_out = sc.outside + sc.unsampled;
    return sc.units > 0 && sc.within >= 0.9 && sc.within > given.within && (1 - sc.within) * 5 <= (1 - given.within) &&
           (left_out == 0 || (sc.rows * 10 >= sc.rows + left_out && sc.rows >= 16));
  };
  if (reproduces(b)) {
    name_variant(list[best], b, d);
    if (list[best].kind == "position_offset") d.position_offset = static_cast<double>(list[best].position_shift);
    return given.within;
  }
  // No single change: where rows took their input from, positions that differ by head, then two
  // changes at once (judge/README.md "Explanation" 6), each only after the one before fails.
  std::vector<Variant> more = source_variants(spec, memory, tests);
  for (int stage = 0; stage < 3; ++stage) {
    if (stage == 1) more = head_position_variants(spec, rows, threads);
    if (stage == 2) more = two_change_variants(spec, fits, list, scores, rows, threads);
    if (more.empty()) continue;
    std::vector<Score> found(more.size());
    parallel_for(more.size(), threads, [&](std::size_t i) { found[i] = scorer.score(more[i]); });
    std::size_t top = 0;
    for (std::size_t i = 1; i < more.size(); ++i) {
      if (found[i].within > found[top].within ||
          (found[i].within == found[top].within && found[i].identical > found[top].identical + 0.005))
        top = i;
    }
    if (reproduces(found[top])) {
      name_variant(more[top], found[top], d);
      return given.within;
    }
  }
  if (const auto it = memory.find("memory_stride"); it != memory.end() && explains_rest(it->second)) {
    name_memory(it->second);
  } else {
    // The closest change is said only where it changes the outputs and fits a good part of them:
    // at least half of the pairs, and a tenth more than the spec as given (a change that changes
    // nothing, or fits nothing, is no hint).
    d.headline = "no single change of the spec reproduces them";
    d.explanation = "no single change of the spec reproduces them (the spec as given explains " + percent(given.within) + " of pairs)";
    if (b.within >= 0.5 && b.within >= given.within + 0.1)
      d.explanation += "; closest: " + list[best].change + " (" + percent(b.within) + ")";
  }
  return given.within;
}

}  // namespace ropecheck::judge
