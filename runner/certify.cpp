// `ropecheck certify`'s engine (runner/certify.h).
#include "runner/certify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <stdexcept>

#include "base/parallel.h"
#include "base/random.h"
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
bool fails_before(std::int64_t position, Probe probe, const PairRecord& r) {
  return r.first_failure < 0 || position < r.first_failure || (position == r.first_failure && probe < r.first_failure_probe);
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
  Context(const Implementation& i, const Spec& s, const judge::PairRule& r, const CertifyOptions& o)
      : implementation(i), spec(s), rule(r), screen(r), options(o), consecutive(s), plan(reference::ApplyPlan::for_evaluation(s)) {
    if (r.tolerance.per_radian != 0) {
      for (int j = 0; j < s.rotary_dim / 2; ++j) theta.push_back(frequency<long double>(s, j));
    }
  }
};

// A worker's buffers, reused call after call.
struct Buffers {
  std::vector<double> unit;  // the unit probes of a chunk (the same values chunk after chunk)
  std::vector<double> input, rounded;
  std::vector<long double> exact;
  std::vector<std::int64_t> positions;
};

void judge_one(const Context& k, CertifyResult& r, int j, std::int64_t position, Probe probe, const judge::Pair& pair) {
  PairRecord& rec = r.pairs[static_cast<std::size_t>(j)];
  ++rec.checked;
  r.outputs += 2;
  rec.mismatches += !same_bits(pair.a, pair.rounded_a);
  rec.mismatches += !same_bits(pair.b, pair.rounded_b);
  // A pair certain to pass below the record's worst e changes nothing (judge/pair_rule.h
  // screen_pair: f64 data is never sure there, so it always takes judge_pair).
  if (rec.worst_position >= 0) {
    const judge::PairScreen s = judge::screen_pair(pair.x, pair.y, pair.a, pair.b, static_cast<double>(pair.exact_a),
                                                   static_cast<double>(pair.exact_b), pair.rounded_a, pair.rounded_b, pair.angle, k.screen);
    if (s.sure_pass && s.e_high < rec.worst_e) return;
  }
  const judge::PairVerdict v = judge::judge_pair(pair, k.rule);
  if (v.measured && v.ordinary() && before(v.e, position, probe, rec)) {
    rec.worst_e = v.e;
    rec.worst_position = position;
    rec.worst_probe = probe;
  }
  if (!v.pass()) {
    ++rec.failures;
    if (fails_before(position, probe, rec)) {
      rec.first_failure = position;
      rec.first_failure_probe = probe;
      rec.first_failure_message = v.message;
    }
  }
}

// Runs the implementation on `input` at b.positions ([tokens, heads, head_dim]) and judges every
// pair against b.rounded / b.exact; `probe_of(h)` names head h's probe.
template <class ProbeOf>
void run_and_judge(const Context& k, const Buffers& b, std::span<const double> input, std::int64_t tokens, std::int64_t heads,
                   ProbeOf probe_of, CertifyResult& r) {
  const Spec& spec = k.spec;
  const int components = position_components(spec);
  const ApplyResult result = k.implementation.run(spec, {tokens, heads, spec.head_dim}, b.positions, input);
  if (result.status != ApplyResult::Status::ok) {
    if (r.failed_calls++ == 0) r.first_call_error = std::string(kind_name(result.status)) + ": " + result.message;
    return;
  }
  const std::vector<double>& out = result.output;
  const int pairs = spec.rotary_dim / 2;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::int64_t position = b.positions[static_cast<std::size_t>(t * components)];
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t row = (t * heads + h) * spec.head_dim;
      for (int j = 0; j < pairs; ++j) {
        const reference::PairDims pd = reference::pair_dims(spec, j);
        const std::size_t i1 = static_cast<std::size_t>(row + pd.first), i2 = static_cast<std::size_t>(row + pd.second);
        const double angle = k.theta.empty() ? 0.0 : static_cast<double>(std::fabs(static_cast<long double>(position) * k.theta[j]));
        judge_one(k, r, j, position, probe_of(h),
                  {.x = input[i1],
                   .y = input[i2],
                   .a = out[i1],
                   .b = out[i2],
                   .exact_a = b.exact[i1],
                   .exact_b = b.exact[i2],
                   .rounded_a = b.rounded[i1],
                   .rounded_b = b.rounded[i2],
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
  b.rounded.resize(static_cast<std::size_t>(values));
  b.exact.resize(static_cast<std::size_t>(values));
  fill_positions(spec, b, first, count);
  reference::ConsecutiveStats stats;
  k.consecutive.evaluate_into(first, count, 2, b.unit, b.rounded, b.exact, &stats);
  r.reference_fallback += stats.fallback_tokens;
  run_and_judge(
      k, b, b.unit, count, 2, [](std::int64_t h) { return h == 0 ? Probe::unit_x : Probe::unit_y; }, r);
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
  b.rounded.resize(b.input.size());
  b.exact.resize(b.input.size());
  k.plan.evaluate_into({tokens, 1, d}, b.positions, b.input, b.rounded, b.exact);
  run_and_judge(
      k, b, b.input, tokens, 1, [](std::int64_t) { return Probe::random; }, r);
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
    if (b.first_failure >= 0 && fails_before(b.first_failure, b.first_failure_probe, a)) {
      a.first_failure = b.first_failure;
      a.first_failure_probe = b.first_failure_probe;
      a.first_failure_message = b.first_failure_message;
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
