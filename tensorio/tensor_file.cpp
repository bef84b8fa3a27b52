// TensorFile: one tensor of a .npy or safetensors file read in pieces (readers.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "tensorio/reader_detail.h"

namespace ropecheck::tensorio {
using namespace detail;

namespace {

// Reads exactly `size` bytes at `offset`, or fails naming the file.
void read_at(int fd, std::uint64_t offset, char* out, std::uint64_t size, const std::string& file) {
  std::uint64_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(file, "file", std::to_string(size) + " readable bytes at offset " + std::to_string(offset));
    done += static_cast<std::uint64_t>(n);
  }
}

// Headers larger than this are not ours to read (numpy writes a few hundred bytes; a safetensors
// header of 100 000 tensors is about 10 MB).
constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{1} << 26;

}  // namespace

TensorFile::TensorFile(TensorFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), entries_(std::move(other.entries_)) {
  // std::map nodes keep their addresses when the map is moved.
  chosen_ = std::exchange(other.chosen_, nullptr);
  npy_ = other.npy_;
}

TensorFile::~TensorFile() {
  if (fd_ >= 0) ::close(fd_);
}

const TensorFile::Entry* TensorFile::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

TensorFile TensorFile::open(const std::string& path) {
  TensorFile f;
  f.path_ = path;
  f.fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (f.fd_ < 0) throw ReaderError(path + ": file: expected a readable file, got " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd_, &st) != 0) throw ReaderError(path + ": file: expected a readable file, got " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw ReaderError(path + ": file: expected a regular file, got " + file_kind(st.st_mode));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  char start[12] = {};
  if (size < 12) fail(path, "file", "a .npy or safetensors file of at least 12 bytes");
  read_at(f.fd_, 0, start, 12, path);
  if (std::string_view(start, 6) == "\x93NUMPY") {
    const int major = static_cast<unsigned char>(start[6]);
    std::uint64_t header_length = 0, header_start = 0;
    if (major == 1) {
      header_length = read_le(start + 8, 2);
      header_start = 10;
    } else if (major == 2 || major == 3) {
      header_length = read_le(start + 8, 4);
      header_start = 12;
    } else {
      fail(path, "version", "1, 2 or 3, got " + std::to_string(major));
    }
    if (header_length > kMaxHeaderBytes || header_length > size - header_start) fail(path, "header length", "a header inside the file");
    std::string header(header_length, '\0');
    read_at(f.fd_, header_start, header.data(), header_length, path);
    const NpyHeader h = parse_npy_header(header, path);
    if (h.fortran_order) fail(path, "fortran_order", "False (C order), got True");
    std::string descr = h.descr;
    if (!descr.empty() && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=')) descr = descr.substr(1);
    else if (!descr.empty() && descr[0] == '>') fail(path, "descr", "little-endian data ('<'), got '" + excerpt(h.descr) + "'");
    Entry e;
    e.dtype = npy_numeric_dtype(descr, h.descr, path);
    e.shape = h.shape;
    e.offset = header_start + header_length;
    e.count = element_count(h.shape, path, "shape");
    const auto width = static_cast<std::uint64_t>(width_of(e.dtype));
    if (e.count > (size - e.offset) / width) {
      fail(path, "data", std::to_string(e.count) + " values of " + std::to_string(width) + " bytes (shape), file holds " +
                             std::to_string(size - e.offset) + " bytes");
    }
    f.chosen_ = &f.entries_.emplace("", std::move(e)).first->second;
    f.npy_ = true;
    return f;
  }
  const std::uint64_t n = read_le(start, 8);
  if (start[8] != '{' || n > kMaxHeaderBytes || n > size - 8) {
    fail(path, "file", "a .npy file (\\x93NUMPY) or a safetensors file (8-byte header length, then a JSON header)");
  }
  std::string header(n, '\0');
  read_at(f.fd_, 8, header.data(), n, path);
  for (SafetensorsEntry& s : safetensors_entries(header, size - 8 - n, path)) {
    Entry e;
    e.dtype = s.tensor.dtype;
    e.shape = std::move(s.tensor.shape);
    e.text = std::move(s.tensor.text);
    if (e.dtype != "U") {
      e.offset = 8 + n + s.begin;
      e.count = (s.end - s.begin) / static_cast<std::uint64_t>(width_of(e.dtype));
    }
    f.entries_[s.name] = std::move(e);
  }
  return f;
}

TensorFile TensorFile::open(const std::string& path, const std::string& name) {
  TensorFile f = open(path);
  if (f.chosen_ != nullptr) return f;  // .npy
  std::string names;
  int numeric = 0;
  for (const auto& [key, e] : f.entries_) {
    if (e.dtype == "U") continue;
    ++numeric;
    if (names.size() < 200) names += (names.empty() ? "" : ", ") + excerpt(key);
    if (name.empty() || key == name) f.chosen_ = &e;
  }
  if (name.empty() && numeric != 1) fail(path, "tensors", "exactly one tensor (or a tensor name), got " + std::to_string(numeric) + ": " + names);
  if (f.chosen_ == nullptr) fail(path, "tensor " + excerpt(name), "a tensor of that name, got " + names);
  return f;
}

namespace {

// Values [first, first + count) of `entry` exist and are numbers: checked before any memory is
// sized by `count`.
void check_range(const std::string& path, const TensorFile::Entry& entry, std::uint64_t first, std::uint64_t count) {
  if (entry.dtype == "U") fail(path, "values", "a numeric tensor, got text");
  if (first > entry.count || count > entry.count - first) {
    fail(path, "values", "indices below " + std::to_string(entry.count) + ", got [" + std::to_string(first) + ", " +
                             std::to_string(first) + " + " + std::to_string(count) + ")");
  }
}

}  // namespace

std::vector<double> TensorFile::read(const Entry& entry, std::uint64_t first, std::uint64_t count) const {
  check_range(path_, entry, first, count);
  std::vector<double> out(count);
  std::string bytes;
  read_into(entry, first, out, bytes);
  return out;
}

void TensorFile::read_into(const Entry& entry, std::uint64_t first, std::span<double> out, std::string& bytes) const {
  const std::uint64_t count = out.size();
  check_range(path_, entry, first, count);
  const auto width = static_cast<std::uint64_t>(width_of(entry.dtype));
  // A block at a time through `bytes`: a buffer that stays in cache and is faulted in once, where
  // the whole range's bytes (16 MB for a check's chunk of 4M binary32 values) were fresh pages on
  // every call, zeroed and then overwritten by the read.
  const std::uint64_t block = std::max<std::uint64_t>(1, kReadBlockBytes / width);
  bytes.resize(std::min(count, block) * width);
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min(block, count - done);
    read_at(fd_, entry.offset + (first + done) * width, bytes.data(), n * width, path_);
    decode_to(bytes.data(), n, entry.dtype, out.data() + done);
    done += n;
  }
}

}  // namespace ropecheck::tensorio
