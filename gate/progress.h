// The progress bar the judging commands draw on stderr.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>


namespace ropecheck::gate {

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
