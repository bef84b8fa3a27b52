// Files of any candidate format: the format told from the first bytes (sniffing), whole regular
// files read without waiting on FIFOs or devices, and parse_candidate's dispatch (readers.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>

#include "tensorio/reader_detail.h"

namespace ropecheck::tensorio {
using namespace detail;

TensorMap parse_candidate(std::string_view bytes, std::string_view file) {
  if (bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4) || bytes.substr(0, 4) == std::string_view("PK\x05\x06", 4)) {
    return parse_npz(bytes, file);
  }
  if (bytes.substr(0, 6) == "\x93NUMPY") {
    TensorMap out;
    out[""] = parse_npy_tensor(bytes, file);
    return out;
  }
  if (bytes.size() >= 9 && bytes[8] == '{' && read_le(bytes.data(), 8) <= bytes.size() - 8) return parse_safetensors(bytes, file);
  const auto first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && bytes[first] == '{') return parse_candidate_json(bytes, file);
  if (bytes.size() >= 9 && bytes[8] == '{') return parse_safetensors(bytes, file);  // reports the bad length
  fail(file, "format", "a .npz, .npy, safetensors or JSON candidate file");
}

std::string file_kind(unsigned mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Format sniff_format(std::string_view head) {
  head = head.substr(0, kSniffBytes);
  if (head.substr(0, 4) == std::string_view("PK\x03\x04", 4) || head.substr(0, 4) == std::string_view("PK\x05\x06", 4)) {
    return Format::npz;
  }
  if (head.substr(0, 6) == "\x93NUMPY") return Format::npy;
  if (head.size() >= 9 && head[8] == '{') return Format::safetensors;
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && head[first] == '{') return Format::json;
  return Format::unknown;
}

namespace {

// A regular file opened for reading (never waiting on a FIFO), its size checked against `max_bytes`
// after `check_head` (if any) has seen its first `head_bytes` bytes; then the whole file, or only
// that head with `head_only`.
std::string read_whole_file(const std::string& path, std::uint64_t max_bytes, std::size_t head_bytes,
                            const std::function<void(std::string_view)>& check_head, bool head_only = false) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked on the open file
  // (no race with a rename between a stat and the open).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw ReaderError(path + ": file: expected a readable file, got " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw ReaderError(path + ": file: expected a readable file, got " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw ReaderError(path + ": file: expected a regular file, got " + file_kind(st.st_mode));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::size_t done = 0;
  std::string bytes;
  if (check_head) {
    // The head first, the rest only once it is known to be worth reading.
    bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(size, head_bytes)));
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    bytes.resize(done);
    check_head(bytes);
    if (head_only) return bytes;
  }
  if (size > max_bytes) {
    throw ReaderError(path + ": file: expected at most " + std::to_string(max_bytes) + " bytes, got " + std::to_string(size));
  }
  if (check_head && done == size) return bytes;
  bytes.resize(size);
  while (done < size) {
    const ssize_t n = ::read(fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done != size) throw ReaderError(path + ": file: expected " + std::to_string(size) + " readable bytes, got " + std::to_string(done));
  return bytes;
}

void refuse_unknown(const std::string& path, std::string_view head, Format& format) {
  format = sniff_format(head);
  if (format == Format::unknown) {
    fail(path, "format", "a .npz, .npy, safetensors or JSON candidate file (by its first bytes), got " +
                             (head.empty() ? std::string("an empty file") : "bytes of none of them"));
  }
}

}  // namespace

std::string read_file_bytes(const std::string& path, std::uint64_t max_bytes) {
  return read_whole_file(path, max_bytes, 0, nullptr);
}

std::string read_candidate_bytes(const std::string& path, std::uint64_t max_bytes, Format* format) {
  Format seen = Format::unknown;
  std::string bytes = read_whole_file(path, max_bytes, kSniffBytes, [&](std::string_view head) { refuse_unknown(path, head, seen); });
  if (format != nullptr) *format = seen;
  return bytes;
}

Format sniff_file_format(const std::string& path) {
  Format seen = Format::unknown;
  read_whole_file(path, std::numeric_limits<std::uint64_t>::max(), kSniffBytes,
                  [&](std::string_view head) { refuse_unknown(path, head, seen); }, true);
  return seen;
}

}  // namespace ropecheck::tensorio
