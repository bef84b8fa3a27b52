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

#include "base/parallel.h"
#include "judge/inference_detail.h"
#include "judge/pair_math.h"
#include "judge/pair_rule.h"
#include "judge/tolerance.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::judge {

using namespace inference_detail;

namespace {

// Round to binary32 with an 11-bit significand (TF32: 10 stored bits), to nearest.
long double round_tf32(long double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  const long double f = std::frexp(v, &e);  // |f| in [0.5, 1)
  return std::ldexp(std::nearbyint(std::ldexp(f, 11)), e - 11);
}

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
    const Call* last_test = nullptr;
    std::int64_t last_t = -1, last_shift = 0;
    for (std::int64_t i = range.begin; i < range.end; ++i) {
      const Row& r = rows_[static_cast<std::size_t>(i)];
      const Call& test = *r.test;
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
    const Call& test = *dt.test;
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
    const Call& test = *dt.test;
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

// How a failed call's explanation names its first failing position (raised_summary, explain), and
// explained_position reads it back.
constexpr std::string_view kAtPosition = " at position ", kFirstFailing = " (first failing position)";

std::string raised_summary(const std::string& message, std::int64_t first_position) {
  std::string line = first_line(message);
  if (line.starts_with(kThrewPrefix)) line.erase(0, kThrewPrefix.size());  // a C++ or Python function's exception
  const auto colon = line.find(':');
  std::string type = colon == std::string::npos ? "" : line.substr(0, colon);
  const bool word = !type.empty() && type.size() < 64 && std::all_of(type.begin(), type.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.';
  });
  std::string out = word ? "raised " + type : "failed (" + line.substr(0, 120) + ")";
  if (first_position >= 0) out += std::string(kAtPosition) + std::to_string(first_position) + std::string(kFirstFailing);
  return out;
}

// The explanation kind of a failed call's explanation (judge/README.md "Explanation").
constexpr std::string_view kRaisedKind = "raised";

void FailedCalls::explain(GroupResult& g) const {
  if (!any_ || g.verdict != Verdict::fail) return;
  if (!g.diagnosis) g.diagnosis.emplace();
  GroupDiagnosis& d = *g.diagnosis;
  d.explanation_kind = kRaisedKind;
  d.explanation = kind_ == CaseKind::status ? raised_summary(message_, position_)
                                            : std::string(name(kind_)) + " (" + first_line(message_).substr(0, 160) + ")" +
                                                  std::string(kAtPosition) + std::to_string(position_) + std::string(kFirstFailing);
  d.mistake = d.explanation;
  d.headline = kind_ == CaseKind::status ? raised_summary(message_, -1)
                                         : std::string(name(kind_)) + " (" + first_line(message_).substr(0, 160) + ")";
  d.lines.insert(d.lines.begin(), d.explanation);
}

std::optional<std::int64_t> FailedCalls::explained_position(const GroupDiagnosis& d) {
  if (d.explanation_kind != kRaisedKind) return std::nullopt;
  const std::string_view text = d.explanation;
  const std::size_t at = text.rfind(kAtPosition);
  if (at == std::string_view::npos || !text.ends_with(kFirstFailing)) return -1;
  const std::string_view digits = text.substr(at + kAtPosition.size(), text.size() - kFirstFailing.size() - at - kAtPosition.size());
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string_view::npos) return -1;
  return std::stoll(std::string(digits));
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
