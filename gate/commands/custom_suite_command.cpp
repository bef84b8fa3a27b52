// `ropecheck golden generate --spec SPEC --positions RANGE|FILE --tokens N --heads H [--seed S]
// --out FILE.json`: the options and files of a golden suite for the user's own config and context
// length; the suite itself, its inputs and where its arrays go, is golden/custom_suite.h's.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "gate/commands/custom_suite_command.h"

#include "base/errors.h"
#include "gate/commands/command.h"
#include "gate/positions.h"
#include "gate/report.h"
#include "golden/custom_suite.h"
#include "golden/golden.h"

namespace ropecheck::gate {
namespace fs = std::filesystem;

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
      __builtin_mul_overflow(test_values, std::int64_t{spec.head_dim}, &test_values) || test_values > golden::kCustomMaxTestValues) {
    throw UsageError("--tokens, --heads: expected tokens x heads x head_dim at most 2^24 values per test, got " +
                     std::to_string(std::min(a.tokens, all_tokens)) + " x " + std::to_string(a.heads) + " x " +
                     std::to_string(spec.head_dim) + " (fewer --tokens per test)");
  }
  const bool sidecar = values > golden::kCustomInlineValues;
  const fs::path sidecar_path = fs::path(json_path).replace_extension(".safetensors");
  for (const fs::path& target : sidecar ? std::vector<fs::path>{json_path, sidecar_path} : std::vector<fs::path>{json_path}) {
    std::error_code ec;
    if (!a.force && (fs::exists(target, ec) || fs::is_symlink(target, ec))) {
      throw UsageError(target.string() + ": expected a new file, got an existing one (use --force to replace it)");
    }
  }
  check_report_paths({json_path.string(), sidecar ? sidecar_path.string() : std::string()}, {a.positions});

  golden::CustomSuiteRequest request;
  request.spec = spec;
  request.positions = positions;
  request.positions_text = a.positions;
  request.suite = suite;
  request.tokens = a.tokens;
  request.heads = a.heads;
  request.seed = a.seed;
  request.threads = a.threads;
  if (sidecar) request.sidecar = sidecar_path.filename().string();
  golden::GoldenFile file = golden::custom_suite(request);
  if (sidecar) {
    std::string sha256;
    write_atomically_streamed(
        sidecar_path.string(), {a.positions},
        [&](const ChunkWriter& write) { sha256 = golden::write_custom_sidecar(file, request, write); },
        !a.force);  // without --force: created, never replacing a file that appeared meanwhile
    file.sidecar_sha256 = sha256;
  }
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
