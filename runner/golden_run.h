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
#include "judge/settings.h"
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

struct Judgement {
  std::vector<judge::GroupResult> groups;
  std::vector<std::string> notes;  // e.g. suites not judged, and why
  std::int64_t skipped_by_flags = 0, skipped_by_position = 0;
};

// Throws UsageError when a --skip-flags flag is used by none of `suites` (a misspelt flag would
// otherwise skip nothing silently).
void check_skip_flags(const std::vector<std::string>& flags, const std::vector<LoadedGolden>& suites);

using ProgressFn = std::function<void(std::int64_t done, std::int64_t total, const std::string& label)>;
// The model and tolerance are the implementation's claims; of `settings` the loop reads the skip
// flags, allow_missing, threads and precision_bits, and its comparers the rest (judge/settings.h).
Judgement judge_golden(const std::vector<LoadedGolden>& suites, const Implementation& implementation, const judge::Settings& settings,
                       const ProgressFn& progress = nullptr);

}  // namespace ropecheck::runner
