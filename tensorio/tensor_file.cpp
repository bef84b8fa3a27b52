// TensorFile: one tensor of a .npy or safetensors file read in pieces (readers.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>

#include "tensorio/integers.h"
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
    if (!descr.empty() && (descr[0] == '<' || descr[0] == '|' || descr[0] == '='))
      descr = descr.substr(1);
    else if (!descr.empty() && descr[0] == '>')
      fail(path, "descr", "little-endian data ('<'), got '" + excerpt(h.descr) + "'");
    Entry e;
    e.dtype = npy_numeric_dtype(descr, h.descr, path);
    e.shape = h.shape;
    e.offset = header_start + header_length;
    e.count = element_count(h.shape, path, "shape");
    const auto width = static_cast<std::uint64_t>(width_of(e.dtype));
    if (e.count > (size - e.offset) / width) {
      fail(path, "data",
           std::to_string(e.count) + " values of " + std::to_string(width) + " bytes (shape), file holds " +
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
  if (name.empty() && numeric != 1)
    fail(path, "tensors", "exactly one tensor (or a tensor name), got " + std::to_string(numeric) + ": " + names);
  if (f.chosen_ == nullptr) fail(path, "tensor " + excerpt(name), "a tensor of that name, got " + names);
  return f;
}

namespace {

// Values [first, first + count) of `entry` exist and are numbers: checked before any memory is
// sized by `count`.
void check_range(const std::string& path, const TensorFile::Entry& entry, std::uint64_t first, std::uint64_t count) {
  if (entry.dtype == "U") fail(path, "values", "a numeric tensor, got text");
  if (first > entry.count || count > entry.count - first) {
    fail(path, "values",
         "indices below " + std::to_string(entry.count) + ", got [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
             std::to_string(count) + ")");
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

std::vector<std::int64_t> read_integers(const TensorFile& file, const TensorFile::Entry& entry) {
  const std::string& path = file.path();
  check_range(path, entry, 0, entry.count);
  if (entry.dtype != "I64" && entry.dtype != "I32") fail(path, "descr", "integers ('<i4' or '<i8'), got " + entry.dtype);
  const auto width = static_cast<std::uint64_t>(width_of(entry.dtype));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "file", "a readable file (" + std::string(std::strerror(errno)) + ")");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::vector<std::int64_t> out(entry.count);
  const std::uint64_t block = TensorFile::kReadBlockBytes / width;
  std::string bytes(std::min(entry.count, block) * width, '\0');
  for (std::uint64_t done = 0; done < entry.count;) {
    const std::uint64_t n = std::min(block, entry.count - done);
    read_at(fd, entry.offset + done * width, bytes.data(), n * width, path);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t bits = read_le(bytes.data() + i * width, static_cast<int>(width));
      out[done + i] = width == 8 ? static_cast<std::int64_t>(bits) : static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
    }
    done += n;
  }
  return out;
}

namespace {

// What the SIGBUS handler knows of the mappings held (MappedTensor): a signal's disposition is the
// process's, and a handler reads only what is reachable without a lock, so this table is the one
// state of the module that is not an object's. Slots are claimed and freed under the mutex; the
// handler reads the atomics alone (a slot's path is written before its range is published).
struct MappedRange {
  std::atomic<std::uintptr_t> begin{0}, end{0};
  char line[600] = {};  // the whole message, written once when the slot is claimed
};
constexpr int kMappedRanges = 16;  // a check maps two files; past this, pread
MappedRange mapped_ranges[kMappedRanges];
std::mutex mapped_mutex;
int mappings_held = 0;
struct sigaction sigbus_before {};

void on_sigbus(int number, siginfo_t* info, void*) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (const MappedRange& r : mapped_ranges) {
    const std::uintptr_t begin = r.begin.load(std::memory_order_acquire);
    if (begin != 0 && address >= begin && address < r.end.load(std::memory_order_relaxed)) {
      // The reader's one line and exit code 2 (gate/main.cpp prints InputError so); write(2) and
      // _exit are async-signal-safe.
      const ssize_t ignored = ::write(STDERR_FILENO, r.line, std::strlen(r.line));
      (void)ignored;
      ::_exit(2);
    }
  }
  // Not a mapped tensor's: the disposition there was before, which a faulting read meets again when
  // it is retried; a SIGBUS sent by a process (si_code <= 0) is sent again to meet it.
  ::sigaction(number, &sigbus_before, nullptr);
  if (info->si_code <= 0) ::raise(number);
}

// Claims a slot for [begin, begin + length) of `path`, installing the handler with the first;
// -1 when every slot is taken (the caller reads with pread instead).
int claim_range(const void* begin, std::size_t length, const std::string& path) {
  const std::lock_guard<std::mutex> lock(mapped_mutex);
  for (int i = 0; i < kMappedRanges; ++i) {
    MappedRange& r = mapped_ranges[i];
    if (r.begin.load(std::memory_order_relaxed) != 0) continue;
    std::string line = "ropecheck: ";  // as gate/main.cpp prints an InputError: one line
    for (const char c : path) line += c == '\n' ? std::string("\\n") : c == '\r' ? std::string("\\r") : std::string(1, c);
    line += ": file: expected its bytes unchanged until the check ends, got a shorter file while it was read\n";
    std::snprintf(r.line, sizeof r.line, "%s", line.c_str());
    if (line.size() >= sizeof r.line) r.line[sizeof r.line - 2] = '\n';
    r.end.store(reinterpret_cast<std::uintptr_t>(begin) + length, std::memory_order_relaxed);
    r.begin.store(reinterpret_cast<std::uintptr_t>(begin), std::memory_order_release);
    if (mappings_held++ == 0) {
      struct sigaction action {};
      action.sa_sigaction = on_sigbus;
      action.sa_flags = SA_SIGINFO;
      sigemptyset(&action.sa_mask);
      ::sigaction(SIGBUS, &action, &sigbus_before);
    }
    return i;
  }
  return -1;
}

void free_range(int slot) {
  const std::lock_guard<std::mutex> lock(mapped_mutex);
  mapped_ranges[slot].begin.store(0, std::memory_order_release);
  if (--mappings_held == 0) ::sigaction(SIGBUS, &sigbus_before, nullptr);
}

}  // namespace

std::optional<MappedTensor> TensorFile::map() const {
  if constexpr (std::endian::native != std::endian::little) return std::nullopt;  // the files are little-endian
  if (chosen_ == nullptr) return std::nullopt;                                    // a safetensors file opened without choosing a tensor
  const Entry& entry = *chosen_;
  const std::string& dtype = entry.dtype;
  if (dtype != "F64" && dtype != "F32" && dtype != "F16" && dtype != "BF16") return std::nullopt;
  const auto width = static_cast<std::uint64_t>(width_of(dtype));
  if (entry.count == 0 || entry.offset % width != 0) return std::nullopt;  // .npy data is 16-aligned; safetensors need not be
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return std::nullopt;
  const auto page = static_cast<std::uint64_t>(page_size);
  const std::uint64_t start = entry.offset / page * page;
  // offset + count·width ≤ the file's size: checked when the file was opened.
  const std::uint64_t length = entry.offset + entry.count * width - start;
  void* base = ::mmap(nullptr, static_cast<std::size_t>(length), PROT_READ, MAP_SHARED, fd_, static_cast<off_t>(start));
  if (base == MAP_FAILED) return std::nullopt;
  MappedTensor m;
  m.base_ = base;
  m.length_ = static_cast<std::size_t>(length);
  m.data_ = static_cast<const char*>(base) + (entry.offset - start);
  m.count_ = entry.count;
  m.dtype_ = dtype;
  m.slot_ = claim_range(base, m.length_, path_);
  if (m.slot_ < 0) return std::nullopt;  // m unmaps it
  return m;
}

MappedTensor::MappedTensor(MappedTensor&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      length_(std::exchange(other.length_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      count_(std::exchange(other.count_, 0)),
      dtype_(std::move(other.dtype_)),
      slot_(std::exchange(other.slot_, -1)) {}

MappedTensor& MappedTensor::operator=(MappedTensor&& other) noexcept {
  if (this != &other) {
    MappedTensor held(std::move(*this));  // unmapped at the end of this scope
    base_ = std::exchange(other.base_, nullptr);
    length_ = std::exchange(other.length_, 0);
    data_ = std::exchange(other.data_, nullptr);
    count_ = std::exchange(other.count_, 0);
    dtype_ = std::move(other.dtype_);
    slot_ = std::exchange(other.slot_, -1);
  }
  return *this;
}

void MappedTensor::release_before(std::uint64_t element) const {
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (base_ == nullptr || page_size <= 0) return;
  const auto page = static_cast<std::uint64_t>(page_size);
  const std::uint64_t data_offset = static_cast<std::uint64_t>(static_cast<const char*>(data_) - static_cast<const char*>(base_));
  const std::uint64_t end = data_offset + std::min(element, count_) * static_cast<std::uint64_t>(width_of(dtype_));
  const std::uint64_t whole_pages = end / page * page;  // the page holding value `element` is kept
  if (whole_pages > 0) (void)::madvise(base_, static_cast<std::size_t>(whole_pages), MADV_DONTNEED);
}

MappedTensor::~MappedTensor() {
  if (base_ == nullptr) return;
  if (slot_ >= 0) free_range(slot_);
  ::munmap(base_, length_);
}

}  // namespace ropecheck::tensorio
