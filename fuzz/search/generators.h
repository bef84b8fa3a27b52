// Edge-case generators and mutations of `ropecheck fuzz` (docs/rope.md §5: where RoPE implementations
// break). Everything is a pure function of an explicit Rng, so a trial is reproducible from
// (seed, trial) alone, on every platform (no std:: distributions, whose output is unspecified).
#pragma once

#include <cstdint>

#include "base/random.h"
#include "fuzz/search/search.h"
#include "spec/spec.h"

namespace ropecheck::fuzz {

// splitmix64 (base/random.h), with the search's own maps to ranges (modulo: their outputs are what
// the recorded seeds replay).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : bits_(seed) {}
  std::uint64_t next() { return bits_.next(); }
  // Uniform in [0, n) (n > 0); the modulo bias (< n/2^64) is irrelevant here.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  std::int64_t between(std::int64_t low, std::int64_t high) {  // inclusive
    return low + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(high - low) + 1));
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  bool chance(int percent) { return below(100) < static_cast<std::uint64_t>(percent); }

 private:
  SplitMix64 bits_;
};

// The trial's generator: independent streams for different (seed, trial).
Rng trial_rng(std::uint64_t seed, std::int64_t trial);

// Largest position the generators produce: 2^31 − 1 (docs/design.md: positions up to 2^31 at least).
inline constexpr std::int64_t kMaxPosition = (std::int64_t{1} << 31) - 1;

// A fresh edge case for `spec`: positions near 0, 2^k, 2^31 − 1 and near multiples of π/2 for the
// target pair; pairs at 0, the last, and the band edges of the scaling; inputs ±0, subnormal,
// near 1, near the overflow threshold, NaN, ±Inf, random bit patterns, and pairs whose components
// differ by many orders of magnitude.
FuzzCase edge_case(const Spec& spec, Rng& rng);

// One random change of `c`: a position component, one input's bits, the pair index or the
// background.
FuzzCase mutate(const Spec& spec, const FuzzCase& c, Rng& rng);

// The head vector of a case: background values (or zeros) with the target pair set to (x, y).
std::vector<double> head_input(const Spec& spec, const FuzzCase& c);

}  // namespace ropecheck::fuzz
