// The catalogue of what a candidate may compute instead of the spec (judge/README.md "Explanation").
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

void sign_and_field_variants(Candidates& c, const Spec& spec, const Fits&) {
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
}

void position_variants(Candidates& c, const Spec&, const Fits& fits) {
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
}

void rotary_dim_variants(Candidates& c, const Spec& spec, const Fits&) {
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
}

void base_variants(Candidates& c, const Spec& spec, const Fits& fits) {
  const Dtype dtypes[] = {Dtype::bf16, Dtype::f16};
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
}

void factor_variants(Candidates& c, const Spec& spec, std::initializer_list<const char*> values) {
  for (const char* f : values) {
    Spec s = spec;
    s.scaling.factor = f;
    c.spec_change("scaling", s);
  }
}
void original_variants(Candidates& c, const Spec& spec) {
  for (std::int64_t l : {2048, 4096, 8192, 16384, 32768, 131072}) {
    Spec s = spec;
    s.scaling.original_max_position = l;
    c.spec_change("scaling", s);
  }
}

// The scaling left out, or a linear one where the fit says the angles are scaled.
void scaling_presence_variants(Candidates& c, const Spec& spec, const Fits& fits) {
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
}

void linear_variants(Candidates& c, const Spec& spec, const Fits& fits) {
  const Scaling& sc = spec.scaling;
  if (fits.factor && *fits.factor > 0) {
    for (int digits : {1, 2, 3}) {
      Spec s = spec;
      s.scaling.factor = decimal(significant(*fits.factor * std::strtold(sc.factor.c_str(), nullptr), digits));
      c.spec_change("scaling", s);
    }
  }
}

void ntk_variants(Candidates& c, const Spec& spec, const Fits& fits) {
  const long double base = std::strtold(spec.base.c_str(), nullptr);
  factor_variants(c, spec, {"2", "4", "8"});
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
}

void dynamic_variants(Candidates& c, const Spec& spec, const Fits& fits) {
  const Scaling& sc = spec.scaling;
  const long double base = std::strtold(spec.base.c_str(), nullptr);
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
}

void yarn_variants(Candidates& c, const Spec& spec, const Fits&) {
  const Scaling& sc = spec.scaling;
  Spec s = spec;
  s.scaling.truncate = !sc.truncate;
  c.spec_change("scaling", s, sc.truncate ? ": the correction range not truncated" : "");
  if (sc.attention_factor) {  // the derived factor (0.1 ln s + 1, or the mscale ratio) where the config gives one
    Spec t = spec;
    t.scaling.attention_factor.reset();
    Variant w = c.base();
    w.kind = "attention_factor";
    w.attention = attention_factor<long double>(t);
    w.change =
        "attention factor " + decimal(significant(*w.attention, 6)) + " (the derived one, expected the given " + *sc.attention_factor + ")";
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
  factor_variants(c, spec, {"2", "4", "8", "16", "32", "40"});
  original_variants(c, spec);
}

void llama3_variants(Candidates& c, const Spec& spec, const Fits&) {
  factor_variants(c, spec, {"2", "4", "8", "16", "32"});
  original_variants(c, spec);
  for (const char* low : {"1", "2"}) {
    for (const char* high : {"2", "4", "8"}) {
      Spec t = spec;
      t.scaling.low_freq_factor = low;
      t.scaling.high_freq_factor = high;
      c.spec_change("scaling", t);
    }
  }
}

void longrope_variants(Candidates& c, const Spec& spec, const Fits&) {
  const Scaling& sc = spec.scaling;
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
}

// The type's own parameters.
void scaling_parameter_variants(Candidates& c, const Spec& spec, const Fits& fits) {
  switch (spec.scaling.type) {
    case ScalingType::linear:
      return linear_variants(c, spec, fits);
    case ScalingType::ntk:
      return ntk_variants(c, spec, fits);
    case ScalingType::dynamic:
      return dynamic_variants(c, spec, fits);
    case ScalingType::yarn:
      return yarn_variants(c, spec, fits);
    case ScalingType::llama3:
      return llama3_variants(c, spec, fits);
    case ScalingType::longrope:
      return longrope_variants(c, spec, fits);
    default:
      return;
  }
}

void collapsed_base_variants(Candidates& c, const Spec& spec, const Fits& fits) {
  const Scaling& sc = spec.scaling;
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
}

void axes_variants(Candidates& c, const Spec& spec, const Fits&) {
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
}

void attention_variants(Candidates& c, const Spec& spec, const Fits& fits) {
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
}

void precision_variants(Candidates& c, const Spec& spec, const Fits&) {
  const Dtype dtypes[] = {Dtype::bf16, Dtype::f16};
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
}

// The catalogue: each family in the order its variants are tried (ties go to the earlier one).
using VariantFamily = void (*)(Candidates&, const Spec&, const Fits&);
constexpr VariantFamily kVariantFamilies[] = {
    sign_and_field_variants,    position_variants,       rotary_dim_variants, base_variants,      scaling_presence_variants,
    scaling_parameter_variants, collapsed_base_variants, axes_variants,       attention_variants, precision_variants,
};

std::vector<Variant> variants(const Spec& spec, const Fits& fits) {
  Candidates c(spec);
  for (VariantFamily family : kVariantFamilies) family(c, spec, fits);
  return c.list;
}

}  // namespace ropecheck::judge::inference_detail
