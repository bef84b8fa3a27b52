// `ropecheck certify`: every position of a range × every pair of a spec, for one implementation,
// judged by the one pair rule (judge/pair_rule.h) against the consecutive reference
// (reference/consecutive.h: apply's correctly rounded bits at ~70 M angles a second a core).
// At each position the implementation rotates two unit probes per pair — inputs (1, 0) and (0, 1),
// whose outputs are A·(cos, sin) and A·(−sin, cos) of the pair's angle — and, at positions
// first + k·stride, a head of random inputs. Per pair it records the worst e and where, the
// failures (the lowest failing position first) and the outputs whose bits differ from the correctly
// rounded ones. A range is split into chunks (one implementation call each), spread over threads;
// a shard of a job array takes a contiguous run of chunks (shard_range), and
// gate/certificate.h joins the shards' results into the certificate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/pair_rule.h"
#include "runner/implementation.h"
#include "spec/spec.h"

namespace ropecheck::runner {

enum class Probe { unit_x, unit_y, random };  // input (1, 0), (0, 1), random values of the dtype
std::string_view name(Probe probe);
std::optional<Probe> parse_probe(std::string_view text);

struct CertifyOptions {
  std::int64_t first = 0;  // positions [first, end)
  std::int64_t end = 0;
  std::int64_t stride = 64;   // random inputs at positions first + k·stride; 0: none
  std::uint64_t seed = 1;     // of the random inputs (each position's own stream: random_head)
  std::int64_t chunk = 4096;  // positions per implementation call
  int threads = 1;            // 0: every core
  // Pairs certain to change nothing but the counts skip judge_pair (judge/pair_rule.h screen_pair,
  // and the unit probes' fast path on correctly rounded outputs): the same result either way;
  // false judges every pair by judge_pair (tests/runner/certify_test.cpp compares the two).
  bool screen = true;
};

struct PositionRange {
  std::int64_t first = 0;
  std::int64_t end = 0;
  bool operator==(const PositionRange&) const = default;
};
// Shard `index` of `count`: chunks [C·index/count, C·(index + 1)/count) of the C chunks of
// [first, end), as positions (contiguous; the shards tile the range). Throws std::invalid_argument
// when there are more shards than chunks.
PositionRange shard_range(const CertifyOptions& options, int index, int count);

// One pair index's record over a range.
struct PairRecord {
  double worst_e = 0;                // over ordinary measured pairs (judge/pair_rule.h)
  std::int64_t worst_position = -1;  // -1: none measured
  Probe worst_probe = Probe::unit_x;
  std::int64_t checked = 0;  // pairs judged (probes × positions)
  std::int64_t failures = 0;
  std::int64_t first_failure = -1;  // the lowest failing position (-1: none)
  Probe first_failure_probe = Probe::unit_x;
  std::string first_failure_message;
  std::int64_t mismatches = 0;       // outputs whose bits differ from the correctly rounded ones (NaN = NaN)
  std::int64_t first_mismatch = -1;  // the lowest position with such an output (-1: none)
  Probe first_mismatch_probe = Probe::unit_x;
};

struct CertifyResult {
  PositionRange range;
  std::vector<PairRecord> pairs;
  std::int64_t positions = 0;         // positions certified
  std::int64_t random_positions = 0;  // of them, with a random head too
  std::int64_t outputs = 0;           // rotated outputs compared
  std::int64_t passthrough_failures = 0;
  std::int64_t failed_calls = 0;  // calls without outputs (crash, timeout, error, unsupported)
  std::string first_call_error;
  std::int64_t reference_fallback = 0;  // positions the consecutive reference took on the present path
  std::int64_t mismatches() const;
  std::int64_t failures() const;
  // Every call answered, every pair within the rule, pass-through dims bit for bit, and with
  // `require_bits` every output the correctly rounded one.
  bool pass(bool require_bits) const;
};

// The rule the pairs are judged by: the implementation's tolerance for `spec` (an explicit one, its
// proven bound, or its model's default), the model's underflow allowance, messages on.
judge::PairRule certify_rule(const Implementation& implementation, const Spec& spec, bool strict_zeros);

// The random head at `position` (head_dim values of the dtype, magnitudes 2^-6 … 2^2, both signs):
// its own SplitMix64 stream from (seed, position), so any position is drawn alike in every shard and
// by --verify.
std::vector<double> random_head(const Spec& spec, std::uint64_t seed, std::int64_t position);

// Certifies positions [range.first, range.end) (within options' range, chunks of options.chunk from
// options.first). Throws std::invalid_argument for a range outside what the reference takes.
CertifyResult certify(const Implementation& implementation, const Spec& spec, const judge::PairRule& rule, const CertifyOptions& options,
                      PositionRange range);
// The same for a list of positions (each alone: --verify's subset), as a result over them.
CertifyResult certify_positions(const Implementation& implementation, const Spec& spec, const judge::PairRule& rule,
                                const CertifyOptions& options, const std::vector<std::int64_t>& positions);

// `part` (another range) into `into`: per pair the larger worst e (the lower position, then probe,
// on a tie), the lowest first failure and first mismatch, the counts summed; the range joined (the caller checks that
// the parts are adjacent: gate/certificate.cpp).
void combine(CertifyResult& into, const CertifyResult& part);

}  // namespace ropecheck::runner
