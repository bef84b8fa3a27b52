#include "gate/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>


namespace ropecheck::gate {

Progress::Progress(std::int64_t total)
    : total_(std::max<std::int64_t>(total, 1)), tty_(::isatty(2) == 1), start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() {
  if (drawn_) std::fprintf(stderr, "\r%70s\r", "");
}

void Progress::update(std::int64_t done, const std::string& label) {
  if (!tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const int width = 30;
  const int filled = static_cast<int>(width * std::min(done, total_) / total_);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(width, ' ');
  std::fprintf(stderr, "\r[%s] %lld/%lld %-24.24s", bar.c_str(), static_cast<long long>(done), static_cast<long long>(total_),
               label.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace ropecheck::gate
