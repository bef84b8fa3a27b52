// NumPy .npy (readers.h parse_npy_tensor; numpy/lib/format.py).
#include "tensorio/reader_detail.h"

namespace ropecheck::tensorio {
using namespace detail;

namespace detail {

NpyHeader parse_npy_header(std::string_view h, std::string_view file) {
  NpyHeader out;
  std::size_t i = 0;
  auto skip = [&] {
    while (i < h.size() && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == ',')) ++i;
  };
  auto quoted = [&](std::string_view field) {
    if (i >= h.size() || (h[i] != '\'' && h[i] != '"')) fail(file, field, "a quoted string in the header");
    const char q = h[i++];
    const std::size_t end = h.find(q, i);
    if (end == std::string_view::npos) fail(file, field, "a closing quote in the header");
    std::string s(h.substr(i, end - i));
    i = end + 1;
    return s;
  };
  skip();
  if (i >= h.size() || h[i] != '{') fail(file, "header", "a dict literal starting with '{'");
  ++i;
  for (;;) {
    skip();
    if (i >= h.size()) fail(file, "header", "a closing '}'");
    if (h[i] == '}') break;
    const std::string key = quoted("header key");
    skip();
    if (i >= h.size() || h[i] != ':') fail(file, "header", "':' after key '" + excerpt(key) + "'");
    ++i;
    skip();
    if (key == "descr") {
      out.descr = quoted("descr");
    } else if (key == "fortran_order") {
      if (h.substr(i, 4) == "True") {
        out.fortran_order = true;
        i += 4;
      } else if (h.substr(i, 5) == "False") {
        i += 5;
      } else {
        fail(file, "fortran_order", "True or False");
      }
      out.has_order = true;
    } else if (key == "shape") {
      if (i >= h.size() || h[i] != '(') fail(file, "shape", "a tuple of integers");
      ++i;
      for (;;) {
        while (i < h.size() && (h[i] == ' ' || h[i] == ',')) ++i;
        if (i >= h.size()) fail(file, "shape", "a closing ')'");
        if (h[i] == ')') {
          ++i;
          break;
        }
        std::int64_t n = 0;
        std::size_t digits = 0;
        while (i < h.size() && h[i] >= '0' && h[i] <= '9') {
          if (++digits > 18) fail(file, "shape", "dimensions below 10^18");
          n = n * 10 + (h[i++] - '0');
        }
        if (i < h.size() && h[i] == 'L') ++i;  // Python 2 long suffix
        if (digits == 0) fail(file, "shape", "non-negative integers, got '" + excerpt(h.substr(i)) + "'");
        if (out.shape.size() >= 32) fail(file, "shape", "at most 32 dimensions");
        out.shape.push_back(n);
      }
      out.has_shape = true;
    } else {
      fail(file, "header", "only the keys descr, fortran_order and shape, got '" + excerpt(key) + "'");
    }
  }
  if (out.descr.empty()) fail(file, "descr", "a 'descr' entry such as '<f4'");
  if (!out.has_order) fail(file, "fortran_order", "True or False");
  if (!out.has_shape) fail(file, "shape", "a tuple of integers");
  return out;
}

// The storage dtype of a numeric .npy descr without its byte-order character.
std::string npy_numeric_dtype(std::string_view descr, std::string_view full, std::string_view file) {
  if (descr == "f8") return "F64";
  if (descr == "f4") return "F32";
  if (descr == "f2") return "F16";
  if (descr == "i8") return "I64";
  if (descr == "i4") return "I32";
  fail(file, "descr", "a numeric dtype, '<f2', '<f4', '<f8', '<i4' or '<i8', got '" + excerpt(full) + "'");
}

}  // namespace detail

Tensor parse_npy_tensor(std::string_view bytes, std::string_view file, UnsignedCodes codes) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY") fail(file, "magic", "\\x93NUMPY at offset 0");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::uint64_t header_length = 0;
  std::size_t header_start = 0;
  if (major == 1) {
    header_length = read_le(bytes.data() + 8, 2);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(file, "header length", "4 bytes after the version");
    header_length = read_le(bytes.data() + 8, 4);
    header_start = 12;
  } else {
    fail(file, "version", "1, 2 or 3, got " + std::to_string(major));
  }
  if (header_length > bytes.size() - header_start) fail(file, "header length", "a header inside the file");
  const NpyHeader h = parse_npy_header(bytes.substr(header_start, header_length), file);
  if (h.fortran_order) fail(file, "fortran_order", "False (C order), got True");
  const std::string_view data = bytes.substr(header_start + header_length);
  const std::uint64_t count = element_count(h.shape, file, "shape");
  Tensor t;
  t.shape = h.shape;
  std::string descr = h.descr;
  char order = '<';
  if (!descr.empty() && (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=')) {
    order = descr[0];
    descr = descr.substr(1);
  }
  if (order == '>') fail(file, "descr", "little-endian data ('<'), got '" + excerpt(h.descr) + "'");
  if (descr.size() >= 2 && descr[0] == 'U') {
    // numpy unicode: UTF-32LE code units, NUL-padded. Only text up to 2^16 code points is accepted.
    std::uint64_t chars = 0;
    for (char c : descr.substr(1)) {
      if (c < '0' || c > '9' || chars > 65536) fail(file, "descr", "'<U' followed by a length up to 65536");
      chars = chars * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (count != 1) fail(file, "shape", "a single string for a '<U' array");
    if (chars > 65536 || chars * 4 > data.size()) fail(file, "data", std::to_string(chars * 4) + " bytes of text");
    t.dtype = "U";
    for (std::uint64_t i = 0; i < chars; ++i) {
      const auto cp = read_le(data.data() + 4 * i, 4);
      if (cp == 0) break;
      t.text += cp < 128 ? static_cast<char>(cp) : '?';  // names and specs are ASCII
    }
    return t;
  }
  if (codes == UnsignedCodes::accepted && (descr == "u1" || descr == "u2")) {
    t.dtype = descr == "u1" ? "U8" : "U16";
  } else {
    t.dtype = npy_numeric_dtype(descr, h.descr, file);
  }
  const int width = width_of(t.dtype);
  if (count > data.size() / width) {
    fail(file, "data",
         std::to_string(count) + " values of " + std::to_string(width) + " bytes (shape), file holds " + std::to_string(data.size()) +
             " bytes");
  }
  t.values = decode(data.data(), count, t.dtype);
  return t;
}

}  // namespace ropecheck::tensorio
