// `ropecheck certify`'s engine (runner/certify.h).
#include "runner/certify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>

#include "base/parallel.h"
#include "base/random.h"
#include "judge/pair_screen.h"
#include "reference/consecutive.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::runner {
namespace {

bool same_bits(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  std::uint64_t x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x == y;
}

// Whether (e, position, probe) comes before the record's worst: larger e first, then the lower
// position, then the probe's order (so a range's record does not depend on how it was split).
bool before(double e, std::int64_t position, Probe probe, const PairRecord& r) {
  if (r.worst_position < 0 || e > r.worst_e) return true;
  if (e < r.worst_e) return false;
  return position < r.worst_position || (position == r.worst_position && probe < r.worst_probe);
}
// Whether (position, probe) comes before a record's first (position, probe) `first` (-1: none).
bool first_before(std::int64_t position, Probe probe, std::int64_t first, Probe first_probe) {
  return first < 0 || position < first || (position == first && probe < first_probe);
}

// What a worker needs, built once per certify call and only read.
struct Context {
  const Implementation& implementation;
  const Spec& spec;
  const judge::PairRule& rule;
  judge::PairScreenRule screen;
  const CertifyOptions& options;
  reference::ConsecutiveReference consecutive;
  reference::ApplyPlan plan;       // the random heads' expected values (positions apart: the present path)
  std::vector<long double> theta;  // θ'_j, for a tolerance growing with the angle (else empty)
  std::vector<reference::PairDims> dims;  // of every pair
  double unit_probe_unit;  // judge::sure_ordinary_unit at ρ = 1, the unit probes' norm (0: never sure)
  Context(const Implementation& i, const Spec& s, const judge::PairRule& r, const CertifyOptions& o)
      : implementation(i),
        spec(s),
        rule(r),
        screen(r),
        options(o),
        consecutive(s),
        plan(reference::ApplyPlan::for_evaluation(s)),
        unit_probe_unit(judge::sure_ordinary_unit(1.0, screen)) {
    for (int j = 0; j < s.rotary_dim / 2; ++j) {
      if (r.tolerance.per_radian != 0) theta.push_back(frequency<long double>(s, j));
      dims.push_back(reference::pair_dims(s, j));
    }
  }
};

// A worker's buffers, reused call after call.
struct Buffers {
  std::vector<double> unit;  // the unit probes of a chunk (the same values chunk after chunk)
  std::vector<double> rounded;  // the unit probes' expected values
  std::vector<long double> exact;
  std::vector<double> input, random_rounded;  // the random heads and theirs (apart: neither is resized
  std::vector<long double> random_exact;      // chunk after chunk)
  std::vector<std::int64_t> positions;
};

// judge_pair's verdict on a pair into its record: the worst e and where, the failures.
void record_verdict(const Context& k, PairRecord& rec, std::int64_t position, Probe probe, const judge::Pair& pair) {
  const judge::PairVerdict v = judge::judge_pair(pair, k.rule);
  if (v.measured && v.ordinary() && before(v.e, position, probe, rec)) {
    rec.worst_e = v.e;
    rec.worst_position = position;
    rec.worst_probe = probe;
  }
  if (!v.pass()) {
    ++rec.failures;
    if (first_before(position, probe, rec.first_failure, rec.first_failure_probe)) {
      rec.first_failure = position;
      rec.first_failure_probe = probe;
      rec.first_failure_message = v.message;
    }
  }
}

// Whether a unit probe's pair (ρ = 1) is certain to change nothing but the counts: its outputs are
// the correctly rounded bits (no mismatch, no zero of another sign, ulp 0), finite, and screen_pair
// would find it a sure pass with e_high below the record's worst e — judge_one's own skip, decided
// from screen_pair's expressions (judge::sure_ordinary_unit, judge::screen_e_high) without the
// pair's other figures. Most pairs of a correctly rounding implementation take only this.
// (a, b) the outputs, the rest as judge::Pair's.
inline bool unit_probe_skips(const Context& k, const PairRecord& rec, double a, double b, long double exact_a, long double exact_b,
                             double rounded_a, double rounded_b, double angle) {
  if (k.unit_probe_unit == 0 || rec.worst_position < 0 || !same_bits(a, rounded_a) || !same_bits(b, rounded_b) ||
      !(std::fabs(a) <= std::numeric_limits<double>::max()) || !(std::fabs(b) <= std::numeric_limits<double>::max())) {
    return false;
  }
  const double difference = std::max(std::fabs(a - static_cast<double>(exact_a)), std::fabs(b - static_cast<double>(exact_b)));
  const double e_high = judge::screen_e_high(difference, k.unit_probe_unit);
  const double allowed = k.rule.tolerance.at(angle);
  const bool sure_pass = k.rule.tolerance.kind == judge::Tolerance::Kind::e ? e_high <= allowed : 0.0 <= allowed;
  return sure_pass && e_high < rec.worst_e;
}

void judge_one(const Context& k, CertifyResult& r, int j, std::int64_t position, Probe probe, const judge::Pair& pair) {
  PairRecord& rec = r.pairs[static_cast<std::size_t>(j)];
  ++rec.checked;
  r.outputs += 2;
  const int mismatches = !same_bits(pair.a, pair.rounded_a) + !same_bits(pair.b, pair.rounded_b);
  rec.mismatches += mismatches;
  if (mismatches > 0 && first_before(position, probe, rec.first_mismatch, rec.first_mismatch_probe)) {
    rec.first_mismatch = position;
    rec.first_mismatch_probe = probe;
  }
  // A pair certain to pass below the record's worst e changes nothing (judge/pair_rule.h
  // screen_pair: f64 data is never sure there, so it always takes judge_pair).
  if (k.options.screen && rec.worst_position >= 0) {
    const judge::PairScreen s = judge::screen_pair(pair.x, pair.y, pair.a, pair.b, static_cast<double>(pair.exact_a),
                                                   static_cast<double>(pair.exact_b), pair.rounded_a, pair.rounded_b, pair.angle, k.screen);
    if (s.sure_pass && s.e_high < rec.worst_e) return;
  }
  record_verdict(k, rec, position, probe, pair);
}

// Runs the implementation on `input` at b.positions ([tokens, heads, head_dim]): its outputs, or
// nullopt after counting a failed call.
std::optional<std::vector<double>> call(const Context& k, const Buffers& b, std::span<const double> input, std::int64_t tokens,
                                        std::int64_t heads, CertifyResult& r) {
  ApplyResult result = k.implementation.run(k.spec, {tokens, heads, k.spec.head_dim}, b.positions, input);
  if (result.status != ApplyResult::Status::ok) {
    if (r.failed_calls++ == 0) r.first_call_error = std::string(kind_name(result.status)) + ": " + result.message;
    return std::nullopt;
  }
  return std::move(result.output);
}

// Judges every pair of `tokens` tokens ([tokens, heads, head_dim] of input, out, rounded and exact,
// at `positions`, position_components(spec) each); `probe_of(h)` names head h's probe.
template <class ProbeOf>
void judge_tokens(const Context& k, std::span<const std::int64_t> positions, std::span<const double> input, std::span<const double> out,
                  std::span<const double> rounded, std::span<const long double> exact, std::int64_t tokens, std::int64_t heads,
                  ProbeOf probe_of, CertifyResult& r) {
  const Spec& spec = k.spec;
  const int components = position_components(spec);
  const int pairs = spec.rotary_dim / 2;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::int64_t position = positions[static_cast<std::size_t>(t * components)];
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t row = (t * heads + h) * spec.head_dim;
      for (int j = 0; j < pairs; ++j) {
        const reference::PairDims pd = k.dims[static_cast<std::size_t>(j)];
        const std::size_t i1 = static_cast<std::size_t>(row + pd.first), i2 = static_cast<std::size_t>(row + pd.second);
        const double angle = k.theta.empty() ? 0.0 : static_cast<double>(std::fabs(static_cast<long double>(position) * k.theta[j]));
        const Probe probe = probe_of(h);
        PairRecord& rec = r.pairs[static_cast<std::size_t>(j)];
        if (k.options.screen && probe != Probe::random &&
            unit_probe_skips(k, rec, out[i1], out[i2], exact[i1], exact[i2], rounded[i1], rounded[i2], angle)) {
          ++rec.checked;
          r.outputs += 2;
          continue;
        }
        judge_one(k, r, j, position, probe,
                  {.x = input[i1],
                   .y = input[i2],
                   .a = out[i1],
                   .b = out[i2],
                   .exact_a = exact[i1],
                   .exact_b = exact[i2],
                   .rounded_a = rounded[i1],
                   .rounded_b = rounded[i2],
                   .angle = angle});
      }
      for (std::int64_t i = spec.rotary_dim; i < spec.head_dim; ++i) {
        const std::size_t at = static_cast<std::size_t>(row + i);
        r.passthrough_failures += !judge::passthrough_matches(out[at], input[at], spec.dtype, k.rule.strict_zeros);
      }
    }
  }
}

void fill_positions(const Spec& spec, Buffers& b, std::int64_t first, std::int64_t count) {
  const int components = position_components(spec);
  b.positions.resize(static_cast<std::size_t>(count * components));
  for (std::int64_t t = 0; t < count; ++t) {
    std::fill_n(b.positions.begin() + t * components, components, first + t);
  }
}

// The unit probes of positions [first, first + count): head 0 all pairs (1, 0), head 1 all (0, 1),
// pass-through dims 1; expected values from the consecutive reference.
void unit_probes(const Context& k, Buffers& b, std::int64_t first, std::int64_t count, CertifyResult& r) {
  const Spec& spec = k.spec;
  const std::int64_t d = spec.head_dim, values = count * 2 * d;
  if (static_cast<std::int64_t>(b.unit.size()) != values) {
    b.unit.assign(static_cast<std::size_t>(values), 1.0);
    for (std::int64_t t = 0; t < count; ++t) {
      for (int j = 0; j < spec.rotary_dim / 2; ++j) {
        const reference::PairDims pd = reference::pair_dims(spec, j);
        b.unit[static_cast<std::size_t>(t * 2 * d + pd.second)] = 0;       // head 0: (1, 0)
        b.unit[static_cast<std::size_t>((t * 2 + 1) * d + pd.first)] = 0;  // head 1: (0, 1)
      }
    }
  }
  fill_positions(spec, b, first, count);
  const std::optional<std::vector<double>> out = call(k, b, b.unit, count, 2, r);
  // The reference and the judging by blocks of the reference's own (seeded at each block's first
  // position whatever the call: the same values as one call over the chunk), so that the expected
  // values are judged while in cache.
  const std::int64_t block_values = reference::kConsecutiveBlock * 2 * d;
  b.rounded.resize(static_cast<std::size_t>(std::min(values, block_values)));
  b.exact.resize(b.rounded.size());
  for (std::int64_t t = 0; t < count; t += reference::kConsecutiveBlock) {
    const std::int64_t n = std::min(reference::kConsecutiveBlock, count - t);
    const auto at = static_cast<std::size_t>(t * 2 * d), size = static_cast<std::size_t>(n * 2 * d);
    const std::span<double> rounded(b.rounded.data(), size);
    const std::span<long double> exact(b.exact.data(), size);
    reference::ConsecutiveStats stats;
    k.consecutive.evaluate_unit_probes(first + t, n, rounded, exact, &stats);
    r.reference_fallback += stats.fallback_tokens;
    if (!out) continue;
    const int components = position_components(spec);
    judge_tokens(
        k, std::span<const std::int64_t>(b.positions).subspan(static_cast<std::size_t>(t * components)),
        std::span<const double>(b.unit).subspan(at, size), std::span<const double>(*out).subspan(at, size), rounded, exact, n, 2,
        [](std::int64_t h) { return h == 0 ? Probe::unit_x : Probe::unit_y; }, r);
  }
  r.positions += count;
}

// The random heads of `positions` (one token each), expected values from the present path.
void random_probes(const Context& k, Buffers& b, const std::vector<std::int64_t>& positions, CertifyResult& r) {
  if (positions.empty()) return;
  const Spec& spec = k.spec;
  const std::int64_t d = spec.head_dim, tokens = static_cast<std::int64_t>(positions.size());
  const int components = position_components(spec);
  b.input.clear();
  b.positions.clear();
  for (std::int64_t p : positions) {
    const std::vector<double> head = random_head(spec, k.options.seed, p);
    b.input.insert(b.input.end(), head.begin(), head.end());
    b.positions.insert(b.positions.end(), components, p);
  }
  b.random_rounded.resize(b.input.size());
  b.random_exact.resize(b.input.size());
  k.plan.evaluate_into({tokens, 1, d}, b.positions, b.input, b.random_rounded, b.random_exact);
  const std::optional<std::vector<double>> out = call(k, b, b.input, tokens, 1, r);
  if (out) {
    judge_tokens(
        k, b.positions, b.input, *out, b.random_rounded, b.random_exact, tokens, 1, [](std::int64_t) { return Probe::random; }, r);
  }
  r.random_positions += tokens;
}

CertifyResult empty_result(const Spec& spec, PositionRange range) {
  CertifyResult r;
  r.range = range;
  r.pairs.resize(static_cast<std::size_t>(spec.rotary_dim / 2));
  return r;
}

// The random positions of [first, end): options.first + k·stride.
std::vector<std::int64_t> strided(const CertifyOptions& o, std::int64_t first, std::int64_t end) {
  std::vector<std::int64_t> out;
  if (o.stride <= 0) return out;
  const std::int64_t offset = (first - o.first) % o.stride;
  for (std::int64_t p = offset == 0 ? first : first + (o.stride - offset); p < end; p += o.stride) out.push_back(p);
  return out;
}

}  // namespace

std::string_view name(Probe probe) {
  switch (probe) {
    case Probe::unit_x:
      return "unit (1, 0)";
    case Probe::unit_y:
      return "unit (0, 1)";
    case Probe::random:
      return "random";
  }
  return "random";
}

std::optional<Probe> parse_probe(std::string_view text) {
  for (Probe p : {Probe::unit_x, Probe::unit_y, Probe::random}) {
    if (name(p) == text) return p;
  }
  return std::nullopt;
}

PositionRange shard_range(const CertifyOptions& o, int index, int count) {
  const std::int64_t chunks = (o.end - o.first + o.chunk - 1) / o.chunk;
  if (count > chunks) {
    throw std::invalid_argument("expected at most " + std::to_string(chunks) + " shards (chunks of " + std::to_string(o.chunk) +
                                " positions), got " + std::to_string(count));
  }
  const auto at = [&](int i) {
    const std::int64_t c = static_cast<std::int64_t>(static_cast<__int128>(chunks) * i / count);
    return std::min(o.end, o.first + c * o.chunk);
  };
  return {at(index), at(index + 1)};
}

std::int64_t CertifyResult::mismatches() const {
  std::int64_t n = 0;
  for (const PairRecord& p : pairs) n += p.mismatches;
  return n;
}
std::int64_t CertifyResult::failures() const {
  std::int64_t n = 0;
  for (const PairRecord& p : pairs) n += p.failures;
  return n;
}
bool CertifyResult::pass(bool require_bits) const {
  return failed_calls == 0 && passthrough_failures == 0 && failures() == 0 && (!require_bits || mismatches() == 0);
}

judge::PairRule certify_rule(const Implementation& implementation, const Spec& spec, bool strict_zeros) {
  judge::PairRule rule;
  rule.dtype = spec.dtype;
  rule.attention_factor = attention_factor<double>(spec);
  rule.tolerance = implementation.tolerance(spec);
  rule.underflow_roundings = judge::underflow_roundings(implementation.claims().model);
  rule.strict_zeros = strict_zeros;
  rule.messages = true;
  return rule;
}

std::vector<double> random_head(const Spec& spec, std::uint64_t seed, std::int64_t position) {
  SplitMix64 rng(seed * 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(position) * 0xbf58476d1ce4e5b9ULL);
  std::vector<double> head(static_cast<std::size_t>(spec.head_dim));
  for (double& v : head) {
    const double m = std::ldexp(1 + rng.unit(), static_cast<int>(rng.range(-6, 1)));
    v = reference::round_to_format(rng.chance(1, 2) ? -m : m, spec.dtype);
  }
  return head;
}

CertifyResult certify(const Implementation& implementation, const Spec& spec, const judge::PairRule& rule, const CertifyOptions& options,
                      PositionRange range) {
  if (options.chunk <= 0) throw std::invalid_argument("chunk: expected > 0");
  const Context k(implementation, spec, rule, options);
  const std::int64_t chunks = (range.end - range.first + options.chunk - 1) / options.chunk;
  const std::size_t workers = parallel_workers(static_cast<std::size_t>(std::max<std::int64_t>(chunks, 0)), options.threads);
  std::vector<CertifyResult> parts(workers, empty_result(spec, range));
  std::vector<Buffers> buffers(workers);
  parallel_for_workers(static_cast<std::size_t>(std::max<std::int64_t>(chunks, 0)), options.threads, [&](std::size_t c, std::size_t w) {
    const std::int64_t first = range.first + static_cast<std::int64_t>(c) * options.chunk;
    const std::int64_t end = std::min(range.end, first + options.chunk);
    unit_probes(k, buffers[w], first, end - first, parts[w]);
    random_probes(k, buffers[w], strided(options, first, end), parts[w]);
  });
  CertifyResult out = empty_result(spec, range);
  for (const CertifyResult& part : parts) combine(out, part);
  out.range = range;
  return out;
}

CertifyResult certify_positions(const Implementation& implementation, const Spec& spec, const judge::PairRule& rule,
                                const CertifyOptions& options, const std::vector<std::int64_t>& positions) {
  const Context k(implementation, spec, rule, options);
  CertifyResult out = empty_result(spec, {options.first, options.end});
  Buffers b;
  for (std::int64_t p : positions) {
    unit_probes(k, b, p, 1, out);
    random_probes(k, b, strided(options, p, p + 1), out);
  }
  return out;
}

void combine(CertifyResult& into, const CertifyResult& part) {
  if (into.pairs.size() != part.pairs.size()) throw std::invalid_argument("combine: results of different specs");
  for (std::size_t j = 0; j < into.pairs.size(); ++j) {
    PairRecord& a = into.pairs[j];
    const PairRecord& b = part.pairs[j];
    if (b.worst_position >= 0 && before(b.worst_e, b.worst_position, b.worst_probe, a)) {
      a.worst_e = b.worst_e;
      a.worst_position = b.worst_position;
      a.worst_probe = b.worst_probe;
    }
    if (b.first_failure >= 0 && first_before(b.first_failure, b.first_failure_probe, a.first_failure, a.first_failure_probe)) {
      a.first_failure = b.first_failure;
      a.first_failure_probe = b.first_failure_probe;
      a.first_failure_message = b.first_failure_message;
    }
    if (b.first_mismatch >= 0 && first_before(b.first_mismatch, b.first_mismatch_probe, a.first_mismatch, a.first_mismatch_probe)) {
      a.first_mismatch = b.first_mismatch;
      a.first_mismatch_probe = b.first_mismatch_probe;
    }
    a.checked += b.checked;
    a.failures += b.failures;
    a.mismatches += b.mismatches;
  }
  into.range = {std::min(into.range.first, part.range.first), std::max(into.range.end, part.range.end)};
  into.positions += part.positions;
  into.random_positions += part.random_positions;
  into.outputs += part.outputs;
  into.passthrough_failures += part.passthrough_failures;
  if (into.failed_calls == 0 && part.failed_calls > 0) into.first_call_error = part.first_call_error;
  into.failed_calls += part.failed_calls;
  into.reference_fallback += part.reference_fallback;
}

}  // namespace ropecheck::runner
