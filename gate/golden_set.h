// The golden side of `check` and `run`: suite files loaded from --golden FILE|DIR, and the progress
// bar both commands draw on stderr.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "golden/golden.h"

namespace ropecheck::gate {

struct LoadedGolden {
  std::string path;
  golden::GoldenFile file;
};

// A file, or every *.json file of a folder (sorted by name). Throws InputError (one line, naming
// the file and the field) for unreadable or invalid files, UsageError when nothing is found.
std::vector<LoadedGolden> load_golden(const std::string& file_or_folder);

// Tensor names of the file layout (gate/README.md): SUITE/ID/input, SUITE/ID/positions, SUITE/ID/output.
std::string tensor_name(const std::string& suite, std::int64_t test_id, const char* what);

// "[#####     ] 12/40 suite" on stderr, only when stderr is a terminal and the work has already
// taken more than a second; erased at the end. Quiet otherwise.
class Progress {
 public:
  explicit Progress(std::int64_t total);
  ~Progress();
  void update(std::int64_t done, const std::string& label);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  std::int64_t total_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace ropecheck::gate
