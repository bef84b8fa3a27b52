#include "golden/custom_suite.h"

#include <algorithm>
#include <future>
#include <span>
#include <utility>

#include "base/parallel.h"
#include "base/random.h"
#include "golden/sha256.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "tensorio/writers.h"

namespace ropecheck::golden {
namespace {

// One test's arrays, kept across the tests of a suite: the buffers are reused (a fresh 30 MB
// vector per test and per array cost a page fault per 4 KiB, a third of generate's time).
struct TestArrays {
  std::vector<double> input, expected;
  std::string input_bytes, expected_bytes;  // the sidecar's encoding of each
};

// Test `id`'s inputs and correctly rounded outputs into `arrays`, split over threads by token
// ranges (base/parallel.h); with `encode`, their sidecar bytes too. The inputs are values
// [first, first + n) of the stream of (seed, id) alone, so any test (and any slice of one: the
// generator skips to its index) can be regenerated on its own; same values for any thread count.
void compute_test(const reference::ApplyPlan& plan, const RopeTest& t, std::uint64_t seed, int threads, bool encode, TestArrays& arrays) {
  const Spec& spec = plan.spec();
  const std::int64_t components = position_components(spec), token_size = t.heads * t.head_dim;
  const auto count = static_cast<std::size_t>(t.tokens * token_size);
  const std::string input_dtype = tensorio::storage_dtype(input_dtype_of(spec)), dtype = tensorio::storage_dtype(spec.dtype);
  const int input_width = tensorio::encoded_width(input_dtype), width = tensorio::encoded_width(dtype);
  arrays.input.resize(count);
  arrays.expected.resize(count);
  if (encode) {
    arrays.input_bytes.resize(count * static_cast<std::size_t>(input_width));
    arrays.expected_bytes.resize(count * static_cast<std::size_t>(width));
  }
  const std::vector<TokenRange> ranges = token_ranges(t.tokens, threads);
  parallel_for(ranges.size(), threads, [&](std::size_t w) {
    const auto [t0, t1] = ranges[w];
    const auto first = static_cast<std::size_t>(t0 * token_size), n = static_cast<std::size_t>((t1 - t0) * token_size);
    const std::span<double> input = std::span(arrays.input).subspan(first, n), expected = std::span(arrays.expected).subspan(first, n);
    SplitMix64 rng(seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(t.id)));
    rng.discard(first);
    for (double& x : input) x = reference::round_to_format(4 * rng.unit() - 2, input_dtype_of(spec));
    plan.apply_into(
        reference::Shape{t1 - t0, t.heads, t.head_dim},
        std::span(t.positions).subspan(static_cast<std::size_t>(t0 * components), static_cast<std::size_t>((t1 - t0) * components)), input,
        expected);
    if (encode) {
      tensorio::encode_values_to(input_dtype, input, arrays.input_bytes.data() + first * static_cast<std::size_t>(input_width));
      tensorio::encode_values_to(dtype, expected, arrays.expected_bytes.data() + first * static_cast<std::size_t>(width));
    }
  });
}

std::string tensor(const std::string& suite, std::int64_t id, const char* what) { return suite + "/" + std::to_string(id) + "/" + what; }

}  // namespace

GoldenFile custom_suite(const CustomSuiteRequest& r) {
  const Spec& spec = r.spec;
  const int components = position_components(spec);
  const auto all_tokens = static_cast<std::int64_t>(r.positions.size()) / components;
  const bool sidecar = !r.sidecar.empty();
  GoldenFile file;
  file.suite = r.suite;
  file.description = "Custom suite for " + to_string(spec) + ": " + std::to_string(all_tokens) + " tokens (positions " + r.positions_text +
                     ") in tests of " + std::to_string(r.tokens) + " tokens x " + std::to_string(r.heads) +
                     " heads; inputs uniform in [-2, 2) from seed " + std::to_string(r.seed) + " (ropecheck golden generate --spec)";
  file.generator.seed = r.seed;
  file.generator.precision_bits = reference::kDefaultPrecisionBits;
  Group group;
  group.spec = spec;
  for (std::int64_t first = 0, id = 1; first < all_tokens; first += r.tokens, ++id) {
    RopeTest t;
    t.id = id;
    t.tokens = std::min(r.tokens, all_tokens - first);
    t.heads = r.heads;
    t.head_dim = spec.head_dim;
    t.positions.assign(r.positions.begin() + first * components, r.positions.begin() + (first + t.tokens) * components);
    t.comment = "tokens " + std::to_string(first) + " to " + std::to_string(first + t.tokens - 1) + " of --positions " + r.positions_text;
    if (sidecar) t.sidecar = RopeTest::SidecarArrays{tensor(r.suite, id, "input"), tensor(r.suite, id, "expected")};
    group.rope_tests.push_back(std::move(t));
  }
  file.number_of_tests = static_cast<std::int64_t>(group.rope_tests.size());
  if (sidecar) {
    file.sidecar = r.sidecar;
  } else {
    // The reference's constants (an MPFR schedule) once for every test and thread.
    const reference::ApplyPlan plan(spec);
    TestArrays arrays;
    for (RopeTest& t : group.rope_tests) {
      compute_test(plan, t, r.seed, r.threads, false, arrays);
      t.input = arrays.input;
      t.expected = arrays.expected;
    }
  }
  file.groups.push_back(std::move(group));
  return file;
}

std::string write_custom_sidecar(const GoldenFile& file, const CustomSuiteRequest& r,
                                 const std::function<void(std::string_view)>& unhashed) {
  const Spec& spec = r.spec;
  const int components = position_components(spec);
  const std::vector<RopeTest>& tests = file.groups.front().rope_tests;
  const std::string dtype = tensorio::storage_dtype(spec.dtype), input_dtype = tensorio::storage_dtype(input_dtype_of(spec));
  std::vector<tensorio::TensorLayout> layout;
  for (const RopeTest& t : tests) {
    layout.push_back({tensor(r.suite, t.id, "input"), input_dtype, {t.tokens, t.heads, t.head_dim}});
    layout.push_back({tensor(r.suite, t.id, "positions"), "I64",
                      components == 1 ? std::vector<std::int64_t>{t.tokens} : std::vector<std::int64_t>{t.tokens, components}});
    layout.push_back({tensor(r.suite, t.id, "expected"), dtype, {t.tokens, t.heads, t.head_dim}});
  }
  // The SHA-256 of the bytes as they are written: readers check the pair by it.
  Sha256 sha;
  const std::function<void(std::string_view)> write = [&](std::string_view chunk) {
    sha.update(chunk);
    unhashed(chunk);
  };
  write(tensorio::safetensors_header(layout, {{"spec", to_string(spec)}, {"suite", r.suite}}));
  // The reference's constants (an MPFR schedule) once for every test and thread.
  const reference::ApplyPlan plan(spec);
  // Test k's bytes go out on their own thread while test k + 1 is computed into the other buffers
  // (copying gigabytes into the page cache was a fifth of the time, on one core).
  TestArrays arrays, other;
  std::future<void> writing;
  for (std::size_t k = 0; k < tests.size(); ++k) {
    const RopeTest& t = tests[k];
    TestArrays& current = k % 2 == 0 ? arrays : other;
    compute_test(plan, t, r.seed, r.threads, true, current);
    if (writing.valid()) writing.get();  // test k − 1 written: its buffers are free again
    std::string positions_bytes = tensorio::encode_values("I64", std::vector<double>(t.positions.begin(), t.positions.end()));
    writing = std::async(std::launch::async, [&write, &current, bytes = std::move(positions_bytes)] {
      write(current.input_bytes);
      write(bytes);
      write(current.expected_bytes);
    });
  }
  if (writing.valid()) writing.get();
  return sha.finish();
}

}  // namespace ropecheck::golden
