// `ropecheck golden generate --spec SPEC --positions RANGE|FILE --tokens N --heads H [--seed S]
// --out FILE.json`: a deterministic golden suite for the user's own config and context length
//. The positions are split into tests of N tokens; each test's input is H heads of
// uniform values in [−2, 2) rounded to the spec's dtype, drawn from (seed, test id) alone, and its
// expected values are the reference's correctly rounded outputs, all computed in parallel over tokens.
//
// A suite of more than kInlineValues values keeps its arrays in a safetensors sidecar beside the
// JSON (FILE.safetensors; golden/README.md "Sidecar"), written test by test: memory of two tests
// (one computed while the other is written), not of the suite. Its tensors are named as `golden
// export` names them (SUITE/ID/input, SUITE/ID/positions) plus SUITE/ID/expected, so the sidecar is
// also the input file a candidate reads. Same arguments, same bytes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <future>
#include <span>

#include "gate/commands/golden_custom.h"

#include "base/parallel.h"
#include "base/random.h"
#include "gate/commands/command.h"
#include "gate/positions.h"
#include "gate/report.h"
#include "golden/golden.h"
#include "golden/sha256.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "tensorio/writers.h"

namespace ropecheck::gate {
namespace {

namespace fs = std::filesystem;

// Above this many input values in all, the arrays go to the sidecar (2^20 values are ~25 MB of
// hex-float JSON, the largest checked-in suite's order of size).
constexpr std::int64_t kInlineValues = std::int64_t{1} << 20;

// The most values one test holds. A test is computed whole, twice over (one computed while the
// other is written): 2 × (input and expected as doubles, plus their encoded bytes), up to 64 bytes
// per value, 1 GiB at this cap. `--tokens 4 --heads 262144` (2^26 values a test at head_dim 64)
// peaked at 2.6 GB and `--heads 4194304` ended in an internal error. golden/README.md's example,
// 2048 tokens x 32 heads x 128, is 2^23.
constexpr std::int64_t kMaxTestValues = std::int64_t{1} << 24;

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
void compute_test(const reference::ApplyPlan& plan, const golden::RopeTest& t, std::uint64_t seed, int threads, bool encode,
                  TestArrays& arrays) {
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
    plan.apply_into(reference::Shape{t1 - t0, t.heads, t.head_dim},
                    std::span(t.positions).subspan(static_cast<std::size_t>(t0 * components), static_cast<std::size_t>((t1 - t0) * components)),
                    input, expected);
    if (encode) {
      tensorio::encode_values_to(input_dtype, input, arrays.input_bytes.data() + first * static_cast<std::size_t>(input_width));
      tensorio::encode_values_to(dtype, expected, arrays.expected_bytes.data() + first * static_cast<std::size_t>(width));
    }
  });
}

std::string tensor(const std::string& suite, std::int64_t id, const char* what) {
  return suite + "/" + std::to_string(id) + "/" + what;
}

}  // namespace

void generate_custom_suite(const CustomSuiteArgs& a) {
  const Spec& spec = a.spec;
  if (a.tokens < 1 || a.tokens > (std::int64_t{1} << 31)) throw UsageError("--tokens: expected an integer in [1, 2^31], got " + std::to_string(a.tokens));
  if (a.heads < 1 || a.heads > (std::int64_t{1} << 31)) throw UsageError("--heads: expected an integer in [1, 2^31], got " + std::to_string(a.heads));
  if (a.threads < 0) throw UsageError("--threads: expected an integer >= 0, got " + std::to_string(a.threads));
  const fs::path json_path(a.out);
  if (json_path.extension() != ".json") throw UsageError("--out: expected a FILE.json name with --spec, got '" + a.out + "'");
  // The suite is named after its file (golden lint holds every file to that).
  const std::string suite = a.suite.empty() ? json_path.stem().string() : a.suite;
  if (suite.empty() || !std::all_of(suite.begin(), suite.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; })) {
    throw UsageError("--out: expected a file name of lower-case letters, digits and '-' (the suite's name), got '" + suite + "' (or give --name)");
  }
  const int components = position_components(spec);
  const std::vector<std::int64_t> positions = parse_positions_option(a.positions, components);
  const auto all_tokens = static_cast<std::int64_t>(positions.size()) / components;
  if (all_tokens == 0) throw UsageError("--positions: expected at least one token");
  // A golden file holds positions in [0, 2^53 − 1] (golden/format.cpp): refused here, not written
  // into a file that no reader takes.
  for (const std::int64_t p : positions) {
    if (p < 0 || p > (std::int64_t{1} << 53) - 1) {
      throw UsageError("--positions: expected positions >= 0 and below 2^53 in a golden suite, got " + std::to_string(p));
    }
  }
  // Sizes checked before anything is generated: all_tokens ≤ 2^28, heads ≤ 2^31, head_dim < 2^16.
  std::int64_t values = 0;
  if (__builtin_mul_overflow(all_tokens, a.heads, &values) || __builtin_mul_overflow(values, std::int64_t{spec.head_dim}, &values) ||
      values > (std::int64_t{1} << 40)) {
    throw UsageError("--heads: expected tokens x heads x head_dim at most 2^40 values");
  }
  // One test: its tokens (--tokens, or all of them when fewer) x heads x head_dim, each factor
  // below 2^31 and head_dim ≤ 2^16, so the product is checked too.
  std::int64_t test_values = 0;
  if (__builtin_mul_overflow(std::min(a.tokens, all_tokens), a.heads, &test_values) ||
      __builtin_mul_overflow(test_values, std::int64_t{spec.head_dim}, &test_values) || test_values > kMaxTestValues) {
    throw UsageError("--tokens, --heads: expected tokens x heads x head_dim at most 2^24 values per test, got " +
                     std::to_string(std::min(a.tokens, all_tokens)) + " x " + std::to_string(a.heads) + " x " +
                     std::to_string(spec.head_dim) + " (fewer --tokens per test)");
  }
  const bool sidecar = values > kInlineValues;
  const fs::path sidecar_path = fs::path(json_path).replace_extension(".safetensors");
  for (const fs::path& target : sidecar ? std::vector<fs::path>{json_path, sidecar_path} : std::vector<fs::path>{json_path}) {
    std::error_code ec;
    if (!a.force && (fs::exists(target, ec) || fs::is_symlink(target, ec))) {
      throw UsageError(target.string() + ": expected a new file, got an existing one (use --force to replace it)");
    }
  }
  check_report_paths({json_path.string(), sidecar ? sidecar_path.string() : std::string()}, {a.positions});

  golden::GoldenFile file;
  file.suite = suite;
  file.description = "Custom suite for " + to_string(spec) + ": " + std::to_string(all_tokens) + " tokens (positions " + a.positions +
                     ") in tests of " + std::to_string(a.tokens) + " tokens x " + std::to_string(a.heads) +
                     " heads; inputs uniform in [-2, 2) from seed " + std::to_string(a.seed) + " (ropecheck golden generate --spec)";
  file.generator.seed = a.seed;
  file.generator.precision_bits = reference::kDefaultPrecisionBits;
  golden::Group group;
  group.spec = spec;
  for (std::int64_t first = 0, id = 1; first < all_tokens; first += a.tokens, ++id) {
    golden::RopeTest t;
    t.id = id;
    t.tokens = std::min(a.tokens, all_tokens - first);
    t.heads = a.heads;
    t.head_dim = spec.head_dim;
    t.positions.assign(positions.begin() + first * components, positions.begin() + (first + t.tokens) * components);
    t.comment = "tokens " + std::to_string(first) + " to " + std::to_string(first + t.tokens - 1) + " of --positions " + a.positions;
    if (sidecar) t.sidecar = golden::RopeTest::SidecarArrays{tensor(suite, id, "input"), tensor(suite, id, "expected")};
    group.rope_tests.push_back(std::move(t));
  }
  file.number_of_tests = static_cast<std::int64_t>(group.rope_tests.size());
  if (sidecar) file.sidecar = sidecar_path.filename().string();

  // The reference's constants (an MPFR schedule) once for every test and thread.
  const reference::ApplyPlan plan(spec);
  TestArrays arrays;
  if (!sidecar) {
    for (golden::RopeTest& t : group.rope_tests) {
      compute_test(plan, t, a.seed, a.threads, false, arrays);
      t.input = arrays.input;
      t.expected = arrays.expected;
    }
  } else {
    const std::string dtype = tensorio::storage_dtype(spec.dtype), input_dtype = tensorio::storage_dtype(input_dtype_of(spec));
    std::vector<tensorio::TensorLayout> layout;
    for (const golden::RopeTest& t : group.rope_tests) {
      layout.push_back({tensor(suite, t.id, "input"), input_dtype, {t.tokens, t.heads, t.head_dim}});
      layout.push_back({tensor(suite, t.id, "positions"), "I64", components == 1 ? std::vector<std::int64_t>{t.tokens}
                                                                                 : std::vector<std::int64_t>{t.tokens, components}});
      layout.push_back({tensor(suite, t.id, "expected"), dtype, {t.tokens, t.heads, t.head_dim}});
    }
    // The sidecar's SHA-256, of the bytes as they are written, goes into the JSON: readers check
    // the pair by it (golden/README.md "Sidecar").
    golden::Sha256 sha;
    write_atomically_streamed(sidecar_path.string(), {a.positions}, [&](const ChunkWriter& unhashed) {
      const ChunkWriter write = [&](std::string_view chunk) {
        sha.update(chunk);
        unhashed(chunk);
      };
      write(tensorio::safetensors_header(layout, {{"spec", to_string(spec)}, {"suite", suite}}));
      // Test k's bytes go out on their own thread while test k + 1 is computed into the other
      // buffers (copying gigabytes into the page cache was a fifth of the time, on one core).
      TestArrays other;
      std::future<void> writing;
      for (std::size_t k = 0; k < group.rope_tests.size(); ++k) {
        const golden::RopeTest& t = group.rope_tests[k];
        TestArrays& current = k % 2 == 0 ? arrays : other;
        compute_test(plan, t, a.seed, a.threads, true, current);
        if (writing.valid()) writing.get();  // test k − 1 written: its buffers are free again
        std::string positions_bytes = tensorio::encode_values("I64", std::vector<double>(t.positions.begin(), t.positions.end()));
        writing = std::async(std::launch::async, [&write, &current, bytes = std::move(positions_bytes)] {
          write(current.input_bytes);
          write(bytes);
          write(current.expected_bytes);
        });
      }
      if (writing.valid()) writing.get();
    }, !a.force);  // without --force: created, never replacing a file that appeared meanwhile
    file.sidecar_sha256 = sha.finish();
  }
  file.groups.push_back(std::move(group));
  const std::string text = golden::write_golden(file);
  try {
    write_atomically(json_path.string(), text, {a.positions}, !a.force);
  } catch (...) {
    // The pair is created together or not at all: the sidecar this run created goes with the JSON
    // it could not create (another run's JSON appeared meanwhile).
    if (sidecar && !a.force) std::filesystem::remove(sidecar_path);
    throw;
  }
  std::printf("wrote %s (%lld tests, %lld values%s)\n", json_path.string().c_str(), static_cast<long long>(file.number_of_tests),
              static_cast<long long>(values), sidecar ? (", arrays in " + sidecar_path.string()).c_str() : "");
}

}  // namespace ropecheck::gate
