// Readers of candidate files: named tensors from NumPy .npz archives, safetensors files and the
// gate's JSON form, and one dispatcher that recognises the format from the bytes themselves.
//
// Naming convention (gate/README.md "File layout"): the tensor of test `ID` of golden suite `SUITE`
// is named `SUITE/ID/output` in a candidate file; `ropecheck golden export` writes
// `SUITE/ID/input` and `SUITE/ID/positions` in the same files.
//
// Every parse_* function takes the file's bytes and its name (used in messages only), checks every
// size against the bytes before allocating, never crashes on any input, and throws only ReaderError
// whose message is one line: "FILE: FIELD: expected WHAT[, got WHAT]". A libFuzzer target calls them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/errors.h"

namespace ropecheck::tensorio {

// The project's one input error (base/errors.h), named for where it comes from.
using ReaderError = InputError;

// One tensor, values widened exactly to double (f16, bf16, f32 and integers below 2^53 are exact).
struct Tensor {
  std::string dtype;  // as stored: "F64", "F32", "F16", "BF16", "I64", "I32", or "U" (a text array)
  std::vector<std::int64_t> shape;
  std::vector<double> values;
  std::string text;   // "U" arrays only (a 0-d numpy unicode array): its text
};

using TensorMap = std::map<std::string, Tensor>;

// NumPy .npz: a zip archive of .npy members (np.savez: stored; np.savez_compressed: deflate). Member
// "NAME.npy" becomes tensor NAME. Zip64 records (numpy always writes them) are understood; the CRC-32
// of every member is checked. Zip bombs are refused before anything is inflated: members whose bytes
// overlap, and uncompressed sizes adding up to more than kMaxZipInflation times the file plus
// kZipInflationAllowance (float tensors compress far less; a candidate of constant values may not
// fit); inflating then follows what the stream produces, never more than the declared size.
inline constexpr std::uint64_t kMaxZipInflation = 32;
inline constexpr std::uint64_t kZipInflationAllowance = std::uint64_t{1} << 20;
// Unsigned codes ('|u1', '<u2': dtypes "U8", "U16", widened as integers) are read only where the
// caller asks for them: `ropecheck fused`, whose FP8 outputs may be uint8 codes and bfloat16 ones
// uint16 bits (fused/README.md); every other reader refuses them as before.
enum class UnsignedCodes { refused, accepted };
TensorMap parse_npz(std::string_view bytes, std::string_view file_name, UnsignedCodes codes = UnsignedCodes::refused);
// One .npy member as a tensor (f2/f4/f8, i4/i8, 0-d or 1-d '<U' text; u1/u2 when accepted);
// throws ReaderError.
Tensor parse_npy_tensor(std::string_view bytes, std::string_view file_name, UnsignedCodes codes = UnsignedCodes::refused);

// safetensors: 8-byte little-endian header length N, N bytes of JSON
// {NAME: {"dtype": "F64"|"F32"|"F16"|"BF16"|"I64"|"I32", "shape": [...], "data_offsets": [begin, end]},
//  "__metadata__": {string: string}}, then the data buffer the offsets index into. Tensors whose
// bytes overlap are refused (the format forbids it; each would be decoded again from the same bytes).
// The header is parsed in linear time (base/checked_json.h). The metadata strings are returned as
// tensors of dtype "U".
TensorMap parse_safetensors(std::string_view bytes, std::string_view file_name);

// The gate's JSON candidate form: one object whose keys containing '/' name tensors and map to
// (nested) arrays of numbers or float strings ("0x1.8p-1", "nan", "inf", "-inf", decimals); keys
// without '/' are metadata (e.g. "implementation": "mykernel v2") kept as "U" tensors. Arrays must
// be rectangular (every row as long as the first, numbers only at the innermost level), at most 32
// nested; the text at most kMaxJsonDepth deep (base/checked_json.h), parsed in linear time.
TensorMap parse_candidate_json(std::string_view bytes, std::string_view file_name);

// Recognises the format from its first bytes (.npz zip, .npy magic, safetensors length+'{', JSON '{')
// and parses it. A lone .npy array is returned under the name "" (all outputs concatenated).
TensorMap parse_candidate(std::string_view bytes, std::string_view file_name);

// The candidate formats parse_candidate recognises, told from a file's first bytes (at most
// kSniffBytes of them): the zip magic (npz), the .npy magic, a safetensors header (byte 8 is '{'),
// JSON (the first byte that is not white space is '{'); unknown otherwise.
enum class Format { unknown, npz, npy, safetensors, json };
inline constexpr std::size_t kSniffBytes = 4096;
Format sniff_format(std::string_view head);

// read_file_bytes of a candidate: its first bytes are read and sniffed first, and a file of no
// candidate format (garbage, a text file, a 4 GiB file of zeros) is refused from them ("FILE:
// format: expected ...") without reading the rest. `format` (if given) receives what it is.
std::string read_candidate_bytes(const std::string& path, std::uint64_t max_bytes = std::uint64_t{1} << 34,
                                 Format* format = nullptr);
// The format of the file at `path` from its first bytes alone; throws ReaderError for a file that
// cannot be read or is of no candidate format.
Format sniff_file_format(const std::string& path);

// Reads a whole regular file, refusing files over `max_bytes`, and anything else — a FIFO, a device,
// a folder, a socket — without waiting on it ("FILE: file: expected a regular file, got a FIFO");
// throws ReaderError.
std::string read_file_bytes(const std::string& path, std::uint64_t max_bytes = std::uint64_t{1} << 34);
// "a FIFO", "a character device", "a folder", ... for a st_mode that is not a regular file.
std::string file_kind(unsigned mode);

class MappedTensor;

// The tensors of a .npy file or a safetensors file, read in pieces without holding the file (a
// candidate of 537 M values, a golden sidecar): the header is read and checked as parse_npy_tensor /
// parse_safetensors check it, then values are read where asked (pread). The file is held open.
class TensorFile {
 public:
  // Throws ReaderError for anything else (npz, JSON, FIFOs, folders), one line naming file and
  // field. A .npy file holds one tensor, named "".
  static TensorFile open(const std::string& path);
  // The same, with `name` chosen as the default tensor of read(first, count): a safetensors file's
  // tensor of that name (empty: its only tensor), ignored for .npy.
  static TensorFile open(const std::string& path, const std::string& name);
  TensorFile(TensorFile&& other) noexcept;
  TensorFile& operator=(TensorFile&&) = delete;
  TensorFile(const TensorFile&) = delete;
  ~TensorFile();

  struct Entry {
    std::string dtype;  // "F64", "F32", "F16", "BF16", "I64", "I32"; "U" for safetensors metadata
    std::vector<std::int64_t> shape;
    std::uint64_t offset = 0, count = 0;  // data bytes from the start of the file, elements
    std::string text;                     // metadata
  };
  const std::map<std::string, Entry>& entries() const { return entries_; }
  const Entry* find(const std::string& name) const;

  // The default tensor's.
  const std::string& dtype() const { return chosen_->dtype; }
  const std::vector<std::int64_t>& shape() const { return chosen_->shape; }
  std::uint64_t elements() const { return chosen_->count; }
  // Values [first, first + count) of the default tensor, or of `entry`, widened exactly to double;
  // throws ReaderError past the end.
  std::vector<double> read(std::uint64_t first, std::uint64_t count) const { return read(*chosen_, first, count); }
  std::vector<double> read(const Entry& entry, std::uint64_t first, std::uint64_t count) const;
  // Values [first, first + out.size()) of the default tensor into `out`, read through `bytes` (a
  // buffer of at most kReadBlockBytes the caller reuses from call to call: a file read a chunk at a
  // time allocates once).
  void read_into(std::uint64_t first, std::span<double> out, std::string& bytes) const { read_into(*chosen_, first, out, bytes); }
  void read_into(const Entry& entry, std::uint64_t first, std::span<double> out, std::string& bytes) const;
  static constexpr std::uint64_t kReadBlockBytes = std::uint64_t{1} << 20;
  // The default tensor's stored bytes, mapped read-only (MappedTensor below), where a floating-point
  // tensor's bytes are its values in this machine's memory (little-endian host, data aligned to the
  // element's width): a check reads them where they are. Empty where not (integers, a safetensors
  // tensor at an odd offset, a system that refuses the mapping): read_into then.
  std::optional<MappedTensor> map() const;
  const std::string& path() const { return path_; }
  // A .npy file (its one tensor, named ""), not safetensors.
  bool is_npy() const { return npy_; }

 private:
  TensorFile() = default;
  std::string path_;
  int fd_ = -1;
  std::map<std::string, Entry> entries_;
  const Entry* chosen_ = nullptr;
  bool npy_ = false;
};

// A tensor's stored values mapped from its file (TensorFile::map): pread copies each byte from the
// page cache into the process, CPU taken from the judging's threads; a mapping reads the cached
// pages where they are (bench/README.md "A check's memory: mapping"). A file truncated while mapped would raise SIGBUS at the first read past its
// new end: while any mapping is held, a SIGBUS inside one ends the process with the reader's one
// line ("FILE: file: expected ...") and exit code 2, as a file found short by pread fails; a SIGBUS
// elsewhere goes to the handler that was there before.
class MappedTensor {
 public:
  MappedTensor(MappedTensor&& other) noexcept;
  MappedTensor& operator=(MappedTensor&& other) noexcept;
  MappedTensor(const MappedTensor&) = delete;
  ~MappedTensor();
  const std::string& dtype() const { return dtype_; }  // "F64", "F32", "F16" or "BF16"
  std::uint64_t elements() const { return count_; }
  // The values' bytes: elements() of the dtype's width, aligned to it.
  const void* data() const { return data_; }
  // Lets go of the pages that hold nothing at or after value `element` (a caller done with the
  // values before it): they leave the process's resident set (madvise MADV_DONTNEED; the file's
  // pages stay in the page cache, and reading them again would map them again). Safe beside reads
  // of later values on other threads.
  void release_before(std::uint64_t element) const;

 private:
  friend class TensorFile;
  MappedTensor() = default;
  void* base_ = nullptr;  // the mapping: whole pages from the page holding the first value
  std::size_t length_ = 0;
  const void* data_ = nullptr;
  std::uint64_t count_ = 0;
  std::string dtype_;
  int slot_ = -1;  // its entry in the SIGBUS handler's table (tensor_file.cpp)
};

}  // namespace ropecheck::tensorio
