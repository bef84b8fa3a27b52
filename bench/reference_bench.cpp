// Throughput of the exact reference: correctly rounded f32 elements per second for the issue's
// shape (4096 tokens × 32 heads × 128 dims, base 500000). Reported as items/s (elements).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "reference/rope.h"

namespace {

void BM_reference_f32(benchmark::State& state) {
  using namespace ropecheck;
  const std::int64_t tokens = state.range(0), heads = 32, head_dim = 128;
  const Spec spec = parse_spec("layout=half,head_dim=128,base=500000,dtype=f32");
  std::vector<std::int64_t> positions(tokens);
  for (std::int64_t t = 0; t < tokens; ++t) positions[t] = t * 7 + 3;
  std::vector<double> input(static_cast<std::size_t>(tokens * heads * head_dim));
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;  // splitmix64: deterministic inputs in [-1, 1)
  for (double& v : input) {
    x += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    v = static_cast<float>(static_cast<double>(z >> 11) * 0x1p-52 - 1.0);
  }
  for (auto _ : state) {
    auto out = reference::apply(spec, {tokens, heads, head_dim}, positions, input);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * tokens * heads * head_dim);
}
// 4096 tokens is the shape; 256 tokens for a quick look.
BENCHMARK(BM_reference_f32)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
