// The golden loop every judging command shares: `check` (a candidate file), `run` (a kernel or a
// plugin), the GoogleTest matcher and Python (a function) all call judge_golden with an
// implementation (runner/implementation.h), so that what is skipped, judged, counted and decided
// is written once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "golden/golden.h"
#include "judge/group.h"
#include "runner/implementation.h"

namespace ropecheck::runner {

struct LoadedGolden {
  std::string path;
  golden::GoldenFile file;
};

// A file, or every *.json file of a folder (sorted by name), read on `threads` threads (0: all
// cores). Throws InputError (one line, naming the file and the field; the first such file by name)
// for unreadable or invalid files or a test id given twice in one file, UsageError when nothing is
// found.
std::vector<LoadedGolden> load_golden(const std::string& file_or_folder, int threads = 0);

// Tensor names of the file layout (gate/README.md "File layout"): SUITE/ID/input, SUITE/ID/output, ...
std::string tensor_name(const std::string& suite, std::int64_t test_id, const char* what);

// What every judging command takes besides the implementation's model and tolerance (those are its
// Claims: runner/implementation.h).
struct JudgeOptions {
  judge::GroupOptions group;            // worst cases, signed zeros, max position, required horizon, attention bounds
  std::vector<std::string> skip_flags;  // golden tests carrying any of these flags are not judged
  int threads = 0;                      // for the exact values (0: all cores)
  bool allow_missing = false;           // a test without output is skipped instead of failed
  int precision_bits = 128;             // of the exact values: error ≤ 2^(14−P)·|φ|·ρ ≪ u·ρ
};

struct Judgement {
  std::vector<judge::GroupResult> groups;
  std::vector<std::string> notes;  // e.g. suites not judged, and why
  std::int64_t skipped_by_flags = 0, skipped_by_position = 0;
};

// Throws UsageError when a --skip-flags flag is used by none of `suites` (a misspelt flag would
// otherwise skip nothing silently).
void check_skip_flags(const std::vector<std::string>& flags, const std::vector<LoadedGolden>& suites);

using ProgressFn = std::function<void(std::int64_t done, std::int64_t total, const std::string& label)>;
Judgement judge_golden(const std::vector<LoadedGolden>& suites, const Implementation& implementation,
                       const JudgeOptions& options, const ProgressFn& progress = nullptr);

}  // namespace ropecheck::runner
