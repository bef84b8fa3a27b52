// SHA-256 of a sidecar's bytes (golden/sha256.h), by each block path: bytes per second, and the
// SHA-NI blocks' speed against the portable rounds measured in the same iterations (`vs_portable`:
// Σ portable time ÷ Σ SHA-NI time). Every reader of a sidecar hashes it whole before it uses it
// (golden/README.md "Sidecar"): at real size that is gigabytes (bench/real_size.py --full).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "golden/sha256.h"

namespace {

using ropecheck::golden::Sha256;

// 64 MiB of deterministic bytes (splitmix64).
const std::string& message() {
  static const std::string bytes = [] {
    std::string b(std::size_t{64} << 20, '\0');
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (std::size_t i = 0; i < b.size(); i += 8) {
      x += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = x;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      z ^= z >> 31;
      for (int k = 0; k < 8; ++k) b[i + static_cast<std::size_t>(k)] = static_cast<char>(z >> (8 * k));
    }
    return b;
  }();
  return bytes;
}

double seconds_to_hash(Sha256::Path path) {
  const auto start = std::chrono::steady_clock::now();
  Sha256 sha(path);
  sha.update(message());
  benchmark::DoNotOptimize(sha.finish());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_Sha256(benchmark::State& state, Sha256::Path path) {
  if (!Sha256::available(path)) {
    state.SkipWithError("the SHA-NI path is not available on this machine (CPU or build)");
    return;
  }
  for (auto _ : state) state.SetIterationTime(seconds_to_hash(path));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(message().size()));
}

// Both paths back to back in every iteration, so both see the same state of the shared host.
void BM_Sha256_ShaNiVsPortable(benchmark::State& state) {
  if (!Sha256::available(Sha256::Path::sha_ni)) {
    state.SkipWithError("the SHA-NI path is not available on this machine (CPU or build)");
    return;
  }
  double portable = 0, sha_ni = 0;
  for (auto _ : state) {
    const double p = seconds_to_hash(Sha256::Path::portable), s = seconds_to_hash(Sha256::Path::sha_ni);
    portable += p, sha_ni += s;
    state.SetIterationTime(p + s);
  }
  state.counters["vs_portable"] = portable / sha_ni;
}

BENCHMARK_CAPTURE(BM_Sha256, portable, Sha256::Path::portable)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Sha256, sha_ni, Sha256::Path::sha_ni)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sha256_ShaNiVsPortable)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
