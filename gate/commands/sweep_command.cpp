// `ropecheck sweep`: how accurate is a kernel across positions? Samples positions (every small one,
// then 2^k − 1, 2^k, 2^k + 1 and random ones up to --max-position, every pair index), runs the
// kernel through the C ABI (include/ropecheck/kernel.h), compares each pair with the exact reference
// (reference::rotate_exact) by reference::pair_error, and prints the worst e, where it occurred and
// the accuracy horizon: the largest sampled position up to which e stays within the tolerance
// (DESIGN.md "Error metric").
#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include <ropecheck/kernel.h>

#include "gate/commands/command.h"
#include "optimized/c_spec.h"
#include "optimized/error_bounds.h"
#include "reference/error_metric.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"
#include "spec/spec.h"

namespace ropecheck::gate {
namespace {

struct SweepOptions {
  std::string implementation = "auto";
  std::string spec_text;
  std::int64_t max_position = 2147483647;
  std::int64_t samples = 256;
  int threads = 0;
  std::uint64_t seed = 1;
  std::optional<double> tolerance;  // empty: the kernels' bound (optimized/error_bounds.h)
};

// Sorted, distinct positions: 0..63, then 2^k − 1, 2^k, 2^k + 1, the maximum, then uniform random
// ones until `samples` (more when those fixed ones are more; every position when the range has at
// most `samples`).
std::vector<std::int64_t> sample_positions(const SweepOptions& o) {
  std::vector<std::int64_t> p;
  for (std::int64_t i = 0; i <= std::min<std::int64_t>(63, o.max_position); ++i) p.push_back(i);
  for (int k = 6; k < 63 && (std::int64_t{1} << k) - 1 <= o.max_position; ++k) {
    for (std::int64_t d : {-1, 0, 1}) {
      const std::int64_t v = (std::int64_t{1} << k) + d;
      if (v <= o.max_position) p.push_back(v);
    }
  }
  p.push_back(o.max_position);
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  const std::int64_t wanted = std::max<std::int64_t>(o.samples, 1);
  if (o.max_position < wanted) {  // the whole range (not max + 1 <= wanted: it overflows at INT64_MAX)
    p.clear();
    for (std::int64_t i = 0; i <= o.max_position; ++i) p.push_back(i);
    return p;
  }
  // Distinct random ones, drawn one at a time until there are `samples`: a fixed number of
  // redraw rounds fell short when the range was barely larger than `samples`.
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<std::int64_t> any(0, o.max_position);
  std::unordered_set<std::int64_t> seen(p.begin(), p.end());
  while (static_cast<std::int64_t>(p.size()) < wanted) {
    const std::int64_t v = any(rng);
    if (seen.insert(v).second) p.push_back(v);
  }
  std::sort(p.begin(), p.end());
  return p;
}

int run_sweep(const SweepOptions& o) {
  if (o.max_position < 0) throw UsageError("--max-position: expected an integer >= 0, got " + std::to_string(o.max_position));
  if (o.samples < 1) throw UsageError("--samples: expected an integer >= 1, got " + std::to_string(o.samples));
  if (o.threads < 0) throw UsageError("--threads: expected an integer >= 0, got " + std::to_string(o.threads));
  if (o.tolerance && !(*o.tolerance >= 0)) {  // a negative or NaN bound would silently mean the default
    char text[64];
    std::snprintf(text, sizeof text, "%g", *o.tolerance);
    throw UsageError(std::string("--tolerance: expected a number >= 0, got ") + text);
  }
  // The kernels' bound (error_bounds.h) is derived for positions below 2^40 only: beyond that the
  // default tolerance would be a number without a proof. An explicit --tolerance may go further.
  if (!o.tolerance && o.max_position >= kernels::kMaxBoundPosition) {
    throw UsageError("--max-position: expected at most 2^40 - 1 = " + std::to_string(kernels::kMaxBoundPosition - 1) +
                     " (the kernels' bound is derived below 2^40; give --tolerance to sweep further), got " +
                     std::to_string(o.max_position));
  }
  const Spec spec = parse_spec(o.spec_text);
  validate(spec);
  const int available = ropecheck_kernel_available(o.implementation.c_str());
  if (available == ROPECHECK_ERROR_UNKNOWN_IMPLEMENTATION) {
    throw UsageError("--impl: expected scalar, avx2, avx512, cuda or auto, got '" + o.implementation + "'");
  }
  if (available != 1) throw UsageError("--impl: '" + o.implementation + "' is not available on this machine");
  const std::string ran = ropecheck_kernel_resolve(o.implementation.c_str());

  const std::vector<std::int64_t> positions = sample_positions(o);
  const std::int64_t tokens = static_cast<std::int64_t>(positions.size());
  const int components = position_components(spec);
  const int pairs = spec.rotary_dim / 2;
  const std::int64_t d = spec.head_dim;
  // every component of a multi-axis position tuple takes the sampled position
  std::vector<std::int64_t> tuples;
  for (std::int64_t p : positions) tuples.insert(tuples.end(), static_cast<std::size_t>(components), p);
  // random inputs in [−2, 2), values of the dtype
  std::mt19937_64 rng(o.seed + 1);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::vector<double> input(static_cast<std::size_t>(tokens * d));
  for (double& v : input) v = reference::round_to_format(uniform(rng), spec.dtype);

  // the kernel, through the C ABI, on buffers of the dtype
  const kernels::CSpec c_spec(spec);
  const std::size_t element = ropecheck_dtype_size(static_cast<std::int32_t>(spec.dtype));
  std::vector<unsigned char> in_bytes(input.size() * element);
  std::vector<unsigned char> out_bytes(input.size() * element);
  for (std::size_t i = 0; i < input.size(); ++i) {
    const std::uint64_t bits = reference::encode_bits(input[i], spec.dtype);
    std::memcpy(&in_bytes[i * element], &bits, element);  // little-endian: the low bytes are the value
  }
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = tokens;
  call.positions = tuples.data();
  call.q = ropecheck_tensor{1, in_bytes.data(), d, d, out_bytes.data(), d, d};
  call.threads = o.threads;
  const std::int32_t status = ropecheck_kernel_apply(o.implementation.c_str(), &call);
  if (status != ROPECHECK_OK) {
    std::printf("implementation: %s\nspec: %s\nresult: the kernel returned %d (%s)\n", ran.c_str(), to_string(spec).c_str(),
                status, ropecheck_status_message(status));
    return 1;
  }

  // the exact reference, split over threads by token ranges
  std::vector<long double> exact(input.size());
  const unsigned workers = std::max(1u, o.threads > 0 ? static_cast<unsigned>(o.threads) : std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) {
    const std::int64_t begin = tokens * w / workers;
    const std::int64_t end = tokens * (w + 1) / workers;
    if (begin == end) continue;
    pool.emplace_back([&, begin, end] {
      const std::span<const std::int64_t> pos(tuples.data() + begin * components, static_cast<std::size_t>((end - begin) * components));
      const std::span<const double> in(input.data() + begin * d, static_cast<std::size_t>((end - begin) * d));
      const auto values = reference::rotate_exact(spec, reference::Shape{end - begin, 1, d}, pos, in, 160, reference::Form::elementwise);
      for (std::size_t i = 0; i < values.size(); ++i) exact[static_cast<std::size_t>(begin * d) + i] = values[i].convert_to<long double>();
    });
  }
  for (auto& t : pool) t.join();

  const long double attention = attention_factor<long double>(spec);
  const double tolerance = o.tolerance.value_or(kernels::on_the_fly_bound(spec.dtype, attention == 1.0L));
  double worst = 0;
  std::int64_t worst_position = 0;
  int worst_pair = 0;
  std::int64_t horizon = -1;  // largest sampled position with every sample up to it within tolerance
  bool within = true;
  for (std::int64_t t = 0; t < tokens; ++t) {
    double token_worst = 0;
    int token_worst_pair = 0;
    for (int j = 0; j < pairs; ++j) {
      const auto dims = reference::pair_dims(spec, j);
      const std::size_t first = static_cast<std::size_t>(t * d + dims.first);
      const std::size_t second = static_cast<std::size_t>(t * d + dims.second);
      std::uint64_t a_bits = 0;
      std::uint64_t b_bits = 0;
      std::memcpy(&a_bits, &out_bytes[first * element], element);
      std::memcpy(&b_bits, &out_bytes[second * element], element);
      const double e = reference::pair_error(reference::decode_bits(a_bits, spec.dtype), reference::decode_bits(b_bits, spec.dtype),
                                             exact[first], exact[second], input[first], input[second], spec.dtype,
                                             static_cast<double>(attention));
      if (e > token_worst) {
        token_worst = e;
        token_worst_pair = j;
      }
    }
    if (token_worst > worst) {
      worst = token_worst;
      worst_position = positions[static_cast<std::size_t>(t)];
      worst_pair = token_worst_pair;
    }
    if (within && token_worst <= tolerance) horizon = positions[static_cast<std::size_t>(t)];
    if (token_worst > tolerance) within = false;
  }

  std::printf("implementation: %s (requested %s)\n", ran.c_str(), o.implementation.c_str());
  std::printf("spec: %s\n", to_string(spec).c_str());
  std::printf("samples: %" PRId64 " positions in [0, %" PRId64 "], %d pairs each\n", tokens, o.max_position, pairs);
  std::printf("worst e: %.6g at position %" PRId64 ", pair %d\n", worst, worst_position, worst_pair);
  std::printf("tolerance: %.9g (%s)\n", tolerance,
              o.tolerance ? "--tolerance" : "ropecheck kernels' bound, optimized/error_bounds.h");
  if (horizon < 0) {
    std::printf("accuracy horizon: none (e exceeds the tolerance at position %" PRId64 ")\n", positions.front());
  } else {
    std::printf("accuracy horizon: %" PRId64 "%s\n", horizon, within ? " (every sampled position)" : "");
  }
  std::printf("result: %s\n", within ? "pass" : "fail");
  return within ? 0 : 1;
}

}  // namespace

void add_sweep_command(CLI::App& root, int& status) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* cmd = root.add_subcommand("sweep", "Measure a kernel's worst error e across sampled positions and its accuracy horizon");
  cmd->add_option("--impl", options->implementation, "Kernel: scalar, avx2, avx512, cuda or auto")->capture_default_str();
  cmd->add_option("--spec", options->spec_text, "Spec, e.g. layout=half,head_dim=128,base=500000,dtype=f32")->required();
  cmd->add_option("--max-position", options->max_position, "Largest position sampled")->capture_default_str();
  cmd->add_option("--samples", options->samples, "Distinct positions sampled (at least the fixed 0..63, 2^k - 1, 2^k, 2^k + 1)")->capture_default_str();
  cmd->add_option("--threads", options->threads, "Threads for the kernel and the reference (0 = all cores)")->capture_default_str();
  cmd->add_option("--seed", options->seed, "Seed of the random positions and inputs")->capture_default_str();
  cmd->add_option_function<double>(
      "--tolerance", [options](const double& value) { options->tolerance = value; },
      "Tolerance on e, >= 0 (default: the kernels' proven bound)");
  cmd->callback([options, &status] { status = run_sweep(*options); });
}

}  // namespace ropecheck::gate
