// What the readers of tensorio/ share (tensorio/README.md): the one-line failure, little-endian
// integers, the element decoders, the checked JSON parse, and the two headers that both a
// whole-file reader (npy.cpp, safetensors.cpp) and TensorFile (tensor_file.cpp) parse. Internal to
// tensorio/; its public interface is readers.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensorio/readers.h"

namespace ropecheck::tensorio::detail {

// Throws ReaderError "FILE: FIELD: expected EXPECTED" (readers.h: every reader's one line).
[[noreturn]] void fail(std::string_view file, std::string_view field, std::string_view expected);

inline std::uint64_t read_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Printable, bounded excerpt of untrusted text for messages (one line).
std::string excerpt(std::string_view text);

// Element count of a shape, or fail when it overflows.
std::uint64_t element_count(const std::vector<std::int64_t>& shape, std::string_view file, std::string_view field);

// Element width in bytes of a storage dtype; 0 when unknown.
inline int width_of(std::string_view dtype) {
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "U16") return 2;
  if (dtype == "U8") return 1;
  return 0;
}

// Decodes `count` little-endian elements into out[0 .. count) (count·width ≤ bytes.size() checked by
// the caller). The dtype is decided once, not per element (a sidecar test is millions of values).
void decode_to(const char* p, std::uint64_t count, std::string_view dtype, double* out);

std::vector<double> decode(const char* p, std::uint64_t count, std::string_view dtype);

// User JSON through the one checked parse (base/checked_json.h): bounded nesting, linear time, each
// key once per object.
nlohmann::json parse_json(std::string_view text, std::string_view file, const std::string& field);

// --- .npy (npy.cpp) ----------------------------------------------------------------------------------
// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// (numpy/lib/format.py). A small hand-written scanner, no regex (no recursion on untrusted text).
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  bool has_order = false;
  std::vector<std::int64_t> shape;
  bool has_shape = false;
};

NpyHeader parse_npy_header(std::string_view h, std::string_view file);
// The storage dtype of a numeric .npy descr without its byte-order character.
std::string npy_numeric_dtype(std::string_view descr, std::string_view full, std::string_view file);

// --- safetensors (safetensors.cpp) -------------------------------------------------------------------
// One tensor entry of a safetensors header, checked against the data size (not yet decoded).
struct SafetensorsEntry {
  std::string name;
  Tensor tensor;  // dtype and shape (values empty); "U" metadata strings complete
  std::uint64_t begin = 0, end = 0;  // data_offsets (metadata: 0, 0)
};

// The header's entries, in header order, every field checked as the format requires
// (huggingface/safetensors README, "Format"): dtype, shape, offsets inside `data_size` bytes and
// matching the shape, no two tensors sharing bytes, no duplicate keys.
std::vector<SafetensorsEntry> safetensors_entries(std::string_view header_text, std::uint64_t data_size, std::string_view file);

}  // namespace ropecheck::tensorio::detail
