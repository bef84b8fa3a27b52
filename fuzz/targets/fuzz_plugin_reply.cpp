// libFuzzer target: the gate's handling of a plugin's results (runner/isolation.h read_reply), the
// bytes a child process sends back after running a candidate. The bytes are fed through a pipe, as
// the child's would be. Contract checked: never a crash, never more outputs than the call's element
// count (checked before allocating), and an "ok" result always carries exactly that count.
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "runner/isolation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kExpected = 64;
  if (size > 60000) return 0;  // stays within one pipe buffer, so the write never blocks
  int fds[2];
  if (::pipe(fds) != 0) return 0;
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fds[1], data + written, size - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  ::close(fds[1]);
  ropecheck::runner::ApplyResult result;
  const auto read = ropecheck::runner::read_reply(fds[0], std::chrono::steady_clock::now() + std::chrono::seconds(1), kExpected, result);
  ::close(fds[0]);
  if (result.output.size() > kExpected) std::abort();
  if (read == ropecheck::runner::ReplyRead::ok && result.status == ropecheck::runner::ApplyResult::Status::ok &&
      result.output.size() != kExpected) {
    std::abort();
  }
  return 0;
}
