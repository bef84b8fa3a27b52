#include "gate/readers/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <sstream>

#include "reference/rounding.h"

namespace ropecheck::gate {
namespace {

[[noreturn]] void fail(std::string_view file, std::string_view field, std::string_view expected) {
  throw NpyError(std::string(file) + ": " + std::string(field) + ": expected " + std::string(expected));
}

std::uint64_t read_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

NpyArray parse_npy(std::string_view bytes, std::string_view file) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0) fail(file, "magic", "\\x93NUMPY at offset 0");
  const int major = data[6];
  std::size_t header_length = 0;
  std::size_t header_start = 0;
  if (major == 1) {
    header_length = read_le(data + 8, 2);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(file, "header length", "4 bytes after the version");
    header_length = read_le(data + 8, 4);
    header_start = 12;
  } else {
    fail(file, "version", "1, 2 or 3, got " + std::to_string(major));
  }
  if (header_length > bytes.size() - header_start) fail(file, "header length", "a header inside the file");
  const std::string header(bytes.substr(header_start, header_length));
  static const std::regex descr_re(R"('descr'\s*:\s*'([<>|=]?)([a-zA-Z]\d*)')");
  static const std::regex order_re(R"('fortran_order'\s*:\s*(True|False))");
  static const std::regex shape_re(R"('shape'\s*:\s*\(([^)]*)\))");
  std::smatch m;
  if (!std::regex_search(header, m, descr_re)) fail(file, "descr", "a 'descr' entry such as '<f4'");
  const std::string byte_order = m[1];
  NpyArray array;
  array.dtype = m[2];
  if (array.dtype != "f2" && array.dtype != "f4" && array.dtype != "f8") {
    fail(file, "descr", "'<f2', '<f4' or '<f8', got '" + byte_order + array.dtype + "'");
  }
  if (byte_order == ">") fail(file, "descr", "little-endian data ('<'), got big-endian '>'");
  if (!std::regex_search(header, m, order_re)) fail(file, "fortran_order", "True or False");
  if (m[1] == "True") fail(file, "fortran_order", "False (C order), got True");
  if (!std::regex_search(header, m, shape_re)) fail(file, "shape", "a tuple of integers");
  const std::string shape_text = m[1];
  std::int64_t count = 1;
  std::stringstream items(shape_text);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const auto last = item.find_last_not_of(" \t");
    const std::string digits = item.substr(first, last - first + 1);
    if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) {
      fail(file, "shape", "non-negative integers, got '" + digits + "'");
    }
    const std::int64_t n = std::stoll(digits);
    if (n != 0 && count > std::numeric_limits<std::int64_t>::max() / n) fail(file, "shape", "a size that fits in memory");
    count *= n;
    array.shape.push_back(n);
  }
  const std::size_t width = static_cast<std::size_t>(array.dtype[1] - '0');
  const std::size_t available = bytes.size() - header_start - header_length;
  if (static_cast<std::uint64_t>(count) > available / width) {
    fail(file, "data", std::to_string(count) + " values of " + std::to_string(width) + " bytes (shape), file holds " +
                           std::to_string(available) + " bytes");
  }
  array.values.resize(static_cast<std::size_t>(count));
  const unsigned char* p = data + header_start + header_length;
  const Dtype dtype = width == 2 ? Dtype::f16 : width == 4 ? Dtype::f32 : Dtype::f64;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint64_t bits = read_le(p + i * width, static_cast<int>(width));
    if (dtype == Dtype::f32) {
      float f;
      const auto b32 = static_cast<std::uint32_t>(bits);
      std::memcpy(&f, &b32, 4);
      array.values[i] = f;
    } else {
      array.values[i] = reference::decode_bits(bits, dtype);
    }
  }
  return array;
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError(path + ": cannot open file for reading");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_npy(bytes, path);
}

}  // namespace ropecheck::gate
