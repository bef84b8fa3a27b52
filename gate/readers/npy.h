// Reader for NumPy .npy files (format version 1.0–3.0): little-endian f2/f4/f8 arrays in C order.
// Every size is checked against the file before anything is allocated; errors name the file and
// the field (InputError semantics: one line).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ropecheck::gate {

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NpyArray {
  std::string dtype;                 // "f2", "f4" or "f8"
  std::vector<std::int64_t> shape;
  std::vector<double> values;        // row-major, every value exact (f2/f4 widen exactly)
};

// Parses the bytes of a .npy file; `file_name` is only used in error messages.
NpyArray parse_npy(std::string_view bytes, std::string_view file_name);
// Reads and parses a file (throws NpyError when unreadable).
NpyArray read_npy(const std::string& path);

}  // namespace ropecheck::gate
