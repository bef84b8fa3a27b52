// The one portable pseudo-random generator of the project (golden suites, sweeps): splitmix64
// (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014) with a
// multiply-shift map to ranges. std:: distributions are not used anywhere: their output is
// unspecified and differs between standard libraries, and generated data must be the same bytes on
// every platform for a seed.
#pragma once

#include <cstdint>

namespace ropecheck {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by the multiply-shift map (bias ≤ n/2^64: irrelevant here, and portable).
  std::uint64_t below(std::uint64_t n) { return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }
  std::int64_t range(std::int64_t low, std::int64_t high) {  // inclusive
    return low + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(high - low) + 1));
  }
  bool chance(int numerator, int denominator) {
    return below(static_cast<std::uint64_t>(denominator)) < static_cast<std::uint64_t>(numerator);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  // Skips n outputs: the state advances by the same constant per output, so a generator can start
  // at any index of a stream (generating one stream in parallel slices gives the same values).
  void discard(std::uint64_t n) { state_ += n * 0x9e3779b97f4a7c15ULL; }

 private:
  std::uint64_t state_;
};

}  // namespace ropecheck
