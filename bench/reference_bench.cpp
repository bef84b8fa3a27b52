// Throughput of the exact reference: correctly rounded f32 elements per second for the issue's
// shape (4096 tokens × 32 heads × 128 dims, base 500000), on the fast and the MPFR path, with and
// without the output's allocation, and of evaluate (rounded and exact values). Reported as items/s
// (elements).
// And the consecutive reference (angle addition) against the present path on consecutive positions.
// And the exact reference split over threads, as gate's sweep splits it, against one thread.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "reference/consecutive.h"
#include "reference/rope.h"
#include "reference/rounding.h"

namespace {

using namespace ropecheck;

// Deterministic inputs in [-1, 1) (splitmix64), values of binary32 (so of every wider dtype too).
std::vector<double> inputs(std::size_t n) {
  std::vector<double> input(n);
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (double& v : input) {
    x += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    v = static_cast<float>(static_cast<double>(z >> 11) * 0x1p-52 - 1.0);
  }
  return input;
}

// state.range(1), what is timed (every row: one thread, plan and allocation as the row says):
//   0  reference::apply on the fast path: the std::vector it returns allocated each call (what a
//      caller of the vector API pays; the vector is built from the input, then rotated in place);
//   1  the same on the MPFR path (cos/sin in MPFR per token and pair);
//   2  reference::evaluate on the fast path (the rounded and the exact long double values);
//   3  a new ApplyPlan and a new uninitialised output buffer each call, apply_into it: what a
//      caller pays end to end when it allocates its own output (page faults of the fresh memory
//      included);
//   4  apply_into one buffer reused across calls, one ApplyPlan: the computation alone.
void BM_reference_f32(benchmark::State& state) {
  const std::int64_t tokens = state.range(0), heads = 32, head_dim = 128;
  const std::int64_t mode = state.range(1);
  const Spec spec = parse_spec("layout=half,head_dim=128,base=500000,dtype=f32");
  std::vector<std::int64_t> positions(tokens);
  for (std::int64_t t = 0; t < tokens; ++t) positions[t] = t * 7 + 3;
  const std::vector<double> input = inputs(static_cast<std::size_t>(tokens * heads * head_dim));
  const reference::Shape shape{tokens, heads, head_dim};
  reference::Options options;
  options.path = mode == 1 ? reference::Path::mpfr : reference::Path::fast;
  const reference::ApplyPlan reused_plan(spec, options);
  std::vector<double> reused(mode == 4 ? input.size() : 0);
  for (auto _ : state) {
    if (mode == 2) {
      auto out = reference::evaluate(spec, shape, positions, input, options);
      benchmark::DoNotOptimize(out.exact.data());
    } else if (mode == 3) {
      const reference::ApplyPlan plan(spec, options);
      std::unique_ptr<double[]> out(new double[input.size()]);  // uninitialised, as a caller's own buffer
      plan.apply_into(shape, positions, input, {out.get(), input.size()});
      benchmark::DoNotOptimize(out.get());
    } else if (mode == 4) {
      reused_plan.apply_into(shape, positions, input, reused);
      benchmark::DoNotOptimize(reused.data());
    } else {
      auto out = reference::apply(spec, shape, positions, input, options);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * tokens * heads * head_dim);
}
// 4096 tokens is the shape; 256 tokens for a quick look.
BENCHMARK(BM_reference_f32)
    ->ArgNames({"tokens", "mode"})
    ->Args({256, 0})
    ->Args({4096, 0})
    ->Args({4096, 3})
    ->Args({4096, 4})
    ->Args({4096, 2})
    ->Args({256, 1})
    ->Args({4096, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// Consecutive positions of one head (head_dim 128, 64 pairs, base 500000, half layout) ending at
// 2^31 − 1, correctly rounded: state.range(0) the dtype (0 f64, 1 f32, 2 f16, 3 bf16), range(1) the
// path (0 ConsecutiveReference, built each call: end to end; 1 the present ApplyPlan). Items: angles
// (positions × pairs); fallback_share: positions the consecutive path left to the present one.
void BM_reference_consecutive(benchmark::State& state) {
  const char* dtypes[] = {"f64", "f32", "f16", "bf16"};
  const bool consecutive = state.range(1) == 0;
  const std::int64_t tokens = consecutive ? std::int64_t{1} << 16 : std::int64_t{1} << 12;
  const std::int64_t first = (std::int64_t{1} << 31) - tokens;
  const Spec spec = parse_spec(std::string("layout=half,head_dim=128,base=500000,dtype=") + dtypes[state.range(0)]);
  std::vector<double> input = inputs(static_cast<std::size_t>(tokens * 128));
  for (double& v : input) v = reference::round_to_format(v, spec.dtype);
  std::vector<double> out(input.size());
  std::vector<std::int64_t> positions(static_cast<std::size_t>(tokens));
  for (std::int64_t t = 0; t < tokens; ++t) positions[t] = first + t;
  reference::ConsecutiveStats stats;
  for (auto _ : state) {
    if (consecutive) {
      const reference::ConsecutiveReference reference(spec);
      reference.apply_into(first, tokens, 1, input, out, &stats);
    } else {
      reference::ApplyPlan(spec).apply_into({tokens, 1, 128}, positions, input, out);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * tokens * 64);
  if (consecutive) {
    state.counters["fallback_share"] =
        static_cast<double>(stats.fallback_tokens) / static_cast<double>(std::max<std::int64_t>(stats.tokens, 1));
    state.counters["general_share"] =
        static_cast<double>(stats.general_pairs) / static_cast<double>(std::max<std::int64_t>(stats.tokens * 64, 1));
  }
}
BENCHMARK(BM_reference_consecutive)
    ->ArgNames({"dtype", "present"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);

// rotate_exact at 160 bits, f64, 4096 positions × 64 dims (one head), the tokens split into
// `threads` contiguous ranges, one std::thread each: the work and split of gate's sweep.
double exact_split_seconds(const Spec& spec, const std::vector<std::int64_t>& positions, const std::vector<double>& input,
                           std::int64_t threads) {
  const std::int64_t tokens = static_cast<std::int64_t>(positions.size()), d = spec.head_dim;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (std::int64_t w = 0; w < threads; ++w) {
    const std::int64_t begin = tokens * w / threads, end = tokens * (w + 1) / threads;
    pool.emplace_back([&, begin, end] {
      const std::span<const std::int64_t> pos(positions.data() + begin, static_cast<std::size_t>(end - begin));
      const std::span<const double> in(input.data() + begin * d, static_cast<std::size_t>((end - begin) * d));
      auto values = reference::rotate_exact(spec, {end - begin, 1, d}, pos, in, 160, reference::Form::elementwise);
      benchmark::DoNotOptimize(values.data());
    });
  }
  for (std::thread& t : pool) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Each iteration runs the work on one thread and then on state.range(0) threads, back to back, so
// that both see the same state of a shared host. The reported (manual) time is the threaded run's;
// vs_one_thread = Σ one-thread time / Σ threaded time, the speedup.
void BM_reference_exact_threads(benchmark::State& state) {
  const std::int64_t tokens = 4096, threads = state.range(0);
  const Spec spec = parse_spec("layout=half,head_dim=64,base=10000,dtype=f64");
  std::vector<std::int64_t> positions(tokens);
  for (std::int64_t t = 0; t < tokens; ++t) positions[t] = t * 524287 + 3;  // spread over [0, 2^31)
  const std::vector<double> input = inputs(static_cast<std::size_t>(tokens * spec.head_dim));
  double one = 0, many = 0;
  for (auto _ : state) {
    one += exact_split_seconds(spec, positions, input, 1);
    const double seconds = exact_split_seconds(spec, positions, input, threads);
    many += seconds;
    state.SetIterationTime(seconds);
  }
  state.counters["vs_one_thread"] = one / many;
  state.SetItemsProcessed(state.iterations() * tokens * spec.head_dim);
}
BENCHMARK(BM_reference_exact_threads)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
