#include "tensorio/readers.h"


#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "reference/rounding.h"
#include "spec/json_keys.h"

namespace ropecheck::tensorio {
namespace {

[[noreturn]] void fail(std::string_view file, std::string_view field, std::string_view expected) {
  throw ReaderError(std::string(file) + ": " + std::string(field) + ": expected " + std::string(expected));
}

std::uint64_t read_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Printable, bounded excerpt of untrusted text for messages (one line).
std::string excerpt(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) out += (c >= 32 && c < 127) ? c : '?';
  if (text.size() > 40) out += "...";
  return out;
}

// Element count of a shape, or fail when it overflows.
std::uint64_t element_count(const std::vector<std::int64_t>& shape, std::string_view file, std::string_view field) {
  std::uint64_t count = 1;
  for (std::int64_t n : shape) {
    if (n < 0) fail(file, field, "non-negative dimensions");
    if (n != 0 && count > (std::uint64_t{1} << 62) / static_cast<std::uint64_t>(n)) fail(file, field, "a size below 2^62 elements");
    count *= static_cast<std::uint64_t>(n);
  }
  return count;
}

// Element width in bytes of a storage dtype; 0 when unknown.
int width_of(std::string_view dtype) {
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  return 0;
}

// Decodes `count` little-endian elements into out[0 .. count) (count·width ≤ bytes.size() checked by
// the caller). The dtype is decided once, not per element (a sidecar test is millions of values).
void decode_to(const char* p, std::uint64_t count, std::string_view dtype, double* out) {
  const int width = width_of(dtype);
  // The width a constant of each loop: the element reads become plain loads the compiler vectorizes.
  auto each = [&](auto convert) {
    auto loop = [&]<int w>() {
      for (std::uint64_t i = 0; i < count; ++i) out[i] = convert(read_le(p + i * w, w));
    };
    switch (width) {
      case 2: loop.template operator()<2>(); break;
      case 4: loop.template operator()<4>(); break;
      case 8: loop.template operator()<8>(); break;
      default:
        for (std::uint64_t i = 0; i < count; ++i) out[i] = convert(read_le(p + i * width, width));
    }
  };
  if (dtype == "F64") {
    each([](std::uint64_t bits) { return reference::decode_bits(bits, Dtype::f64); });
  } else if (dtype == "F32") {
    each([](std::uint64_t bits) { return reference::decode_bits(bits, Dtype::f32); });
  } else if (dtype == "F16") {
    each([](std::uint64_t bits) { return reference::decode_bits(bits, Dtype::f16); });
  } else if (dtype == "BF16") {
    each([](std::uint64_t bits) { return reference::decode_bits(bits, Dtype::bf16); });
  } else if (dtype == "I64") {
    each([](std::uint64_t bits) { return static_cast<double>(static_cast<std::int64_t>(bits)); });
  } else {
    each([](std::uint64_t bits) { return static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(bits))); });
  }
}

std::vector<double> decode(const char* p, std::uint64_t count, std::string_view dtype) {
  std::vector<double> out(count);
  decode_to(p, count, dtype, out.data());
  return out;
}

// --- .npy ------------------------------------------------------------------------------------------
// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// (numpy/lib/format.py). A small hand-written scanner, no regex (no recursion on untrusted text).
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  bool has_order = false;
  std::vector<std::int64_t> shape;
  bool has_shape = false;
};

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

// --- zip (APPNOTE.TXT, PKWARE) -----------------------------------------------------------------------
struct ZipEntry {
  std::string name;
  int method = 0;
  std::uint32_t crc = 0;
  std::uint64_t compressed = 0;
  std::uint64_t uncompressed = 0;
  std::uint64_t local_offset = 0;
};

// Applies a Zip64 extended-information extra field (id 0x0001) to the fields stored as 0xFFFFFFFF,
// in the order the specification lists them.
void apply_zip64(std::string_view extra, ZipEntry& e, bool size_max, bool csize_max, bool offset_max,
                 std::string_view file) {
  std::size_t i = 0;
  while (i + 4 <= extra.size()) {
    const auto id = read_le(extra.data() + i, 2);
    const auto len = read_le(extra.data() + i + 2, 2);
    if (len > extra.size() - i - 4) fail(file, "zip extra field", "a length inside the extra data");
    if (id == 1) {
      std::size_t j = i + 4;
      const std::size_t end = j + len;
      auto next = [&](std::uint64_t& field) {
        if (j + 8 > end) fail(file, "zip64 extra field of '" + excerpt(e.name) + "'", "8 more bytes");
        field = read_le(extra.data() + j, 8);
        j += 8;
      };
      if (size_max) next(e.uncompressed);
      if (csize_max) next(e.compressed);
      if (offset_max) next(e.local_offset);
      return;
    }
    i += 4 + len;
  }
  if (size_max || csize_max || offset_max) fail(file, "zip entry '" + excerpt(e.name) + "'", "a zip64 extra field");
}

std::vector<ZipEntry> zip_directory(std::string_view z, std::string_view file) {
  // End of central directory: 22 bytes + a comment of at most 65535 bytes, at the end of the file.
  if (z.size() < 22) fail(file, "zip end record", "an end-of-central-directory record (file too short)");
  std::size_t eocd = std::string_view::npos;
  const std::size_t lowest = z.size() >= 22 + 65535 ? z.size() - 22 - 65535 : 0;
  for (std::size_t i = z.size() - 22 + 1; i-- > lowest;) {
    if (read_le(z.data() + i, 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string_view::npos) fail(file, "zip end record", "signature PK\\5\\6 near the end of the file");
  std::uint64_t count = read_le(z.data() + eocd + 10, 2);
  std::uint64_t dir_size = read_le(z.data() + eocd + 12, 4);
  std::uint64_t dir_offset = read_le(z.data() + eocd + 16, 4);
  // Zip64 end-of-central-directory locator (20 bytes) just before the end record.
  const bool locator = eocd >= 20 && read_le(z.data() + eocd - 20, 4) == 0x07064b50;
  // A count of 0xFFFF without a locator is literal: Python's zipfile writes exactly 65535 entries
  // so (it adds Zip64 records only past 65535); the directory must then hold no more than that.
  const bool literal_ffff = count == 0xffff && !locator && dir_size != 0xffffffff && dir_offset != 0xffffffff;
  if ((count == 0xffff || dir_size == 0xffffffff || dir_offset == 0xffffffff) && !literal_ffff) {
    if (!locator) fail(file, "zip64 locator", "signature PK\\6\\7");
    const std::uint64_t record = read_le(z.data() + eocd - 20 + 8, 8);
    if (record > z.size() || z.size() - record < 56 || read_le(z.data() + record, 4) != 0x06064b50) {
      fail(file, "zip64 end record", "signature PK\\6\\6 at the offset the locator gives");
    }
    count = read_le(z.data() + record + 32, 8);
    dir_size = read_le(z.data() + record + 40, 8);
    dir_offset = read_le(z.data() + record + 48, 8);
  }
  if (dir_offset > z.size() || dir_size > z.size() - dir_offset) fail(file, "zip central directory", "inside the file");
  // Each central entry is at least 46 bytes: bounds the count before reserving anything.
  if (count > dir_size / 46) fail(file, "zip central directory", std::to_string(count) + " entries of >= 46 bytes");
  std::vector<ZipEntry> entries;
  entries.reserve(count);
  std::size_t p = dir_offset;
  const std::size_t end = dir_offset + dir_size;
  for (std::uint64_t k = 0; k < count; ++k) {
    if (end - p < 46 || read_le(z.data() + p, 4) != 0x02014b50) fail(file, "zip central entry " + std::to_string(k), "signature PK\\1\\2");
    ZipEntry e;
    const auto flags = read_le(z.data() + p + 8, 2);
    e.method = static_cast<int>(read_le(z.data() + p + 10, 2));
    e.crc = static_cast<std::uint32_t>(read_le(z.data() + p + 16, 4));
    e.compressed = read_le(z.data() + p + 20, 4);
    e.uncompressed = read_le(z.data() + p + 24, 4);
    const auto name_len = read_le(z.data() + p + 28, 2);
    const auto extra_len = read_le(z.data() + p + 30, 2);
    const auto comment_len = read_le(z.data() + p + 32, 2);
    e.local_offset = read_le(z.data() + p + 42, 4);
    if (46 + name_len + extra_len + comment_len > end - p) fail(file, "zip central entry " + std::to_string(k), "its name and extra fields inside the directory");
    e.name = std::string(z.substr(p + 46, name_len));
    if (flags & 1) fail(file, "zip entry '" + excerpt(e.name) + "'", "an unencrypted member");
    apply_zip64(z.substr(p + 46 + name_len, extra_len), e, e.uncompressed == 0xffffffff, e.compressed == 0xffffffff,
                e.local_offset == 0xffffffff, file);
    entries.push_back(std::move(e));
    p += 46 + name_len + extra_len + comment_len;
  }
  if (literal_ffff && p != end) fail(file, "zip64 locator", "signature PK\\6\\7 (the directory holds more than 65535 entries)");
  return entries;
}

// Where a member's stored bytes lie, after its local header (checked against the file).
struct MemberSpan {
  std::uint64_t begin = 0;  // the local header
  std::uint64_t data = 0;   // the stored (compressed) bytes
  std::uint64_t end = 0;    // one past them
};

MemberSpan member_span(std::string_view z, const ZipEntry& e, std::string_view file) {
  const std::string field = "zip member '" + excerpt(e.name) + "'";
  if (e.local_offset > z.size() || z.size() - e.local_offset < 30 || read_le(z.data() + e.local_offset, 4) != 0x04034b50) {
    fail(file, field, "a local header (PK\\3\\4) at the offset the directory gives");
  }
  const auto name_len = read_le(z.data() + e.local_offset + 26, 2);
  const auto extra_len = read_le(z.data() + e.local_offset + 28, 2);
  const std::uint64_t data = e.local_offset + 30 + name_len + extra_len;
  if (data > z.size() || e.compressed > z.size() - data) fail(file, field, std::to_string(e.compressed) + " compressed bytes inside the file");
  return {e.local_offset, data, data + e.compressed};
}

// Refuses members whose bytes overlap (a zip bomb lists one large member many times: each entry
// would be inflated again from the same bytes) and uncompressed sizes beyond kMaxZipInflation
// times the file: what the members may claim is bounded before anything is inflated.
std::vector<MemberSpan> member_spans(std::string_view z, const std::vector<ZipEntry>& entries, std::string_view file) {
  std::vector<MemberSpan> spans;
  spans.reserve(entries.size());
  for (const ZipEntry& e : entries) spans.push_back(member_span(z, e, file));
  std::vector<std::size_t> order(entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return spans[a].begin < spans[b].begin; });
  for (std::size_t k = 1; k < order.size(); ++k) {
    if (spans[order[k]].begin < spans[order[k - 1]].end) {
      fail(file, "zip member '" + excerpt(entries[order[k]].name) + "'",
           "bytes of its own, got bytes shared with member '" + excerpt(entries[order[k - 1]].name) + "' (overlapping members)");
    }
  }
  const std::uint64_t budget = static_cast<std::uint64_t>(z.size()) * kMaxZipInflation + kZipInflationAllowance;
  std::uint64_t declared = 0;
  for (const ZipEntry& e : entries) {
    // A stored member yields its stored bytes (a different declared size is refused with it).
    const std::uint64_t yields = e.method == 0 ? e.compressed : e.uncompressed;
    if (yields > budget - declared) {
      fail(file, "zip member '" + excerpt(e.name) + "'",
           "uncompressed sizes of at most " + std::to_string(budget) + " bytes in all (" + std::to_string(kMaxZipInflation) +
               " times the file, plus " + std::to_string(kZipInflationAllowance) + "), got more (a zip bomb?)");
    }
    declared += yields;
  }
  return spans;
}

// The member's bytes: stored, or inflated in steps (memory follows what the stream really produces,
// never more than the size the directory declares).
std::string zip_member(std::string_view z, const ZipEntry& e, const MemberSpan& span, std::string_view file) {
  const std::string field = "zip member '" + excerpt(e.name) + "'";
  const std::string_view raw = z.substr(span.data, e.compressed);
  std::string out;
  if (e.method == 0) {
    if (e.uncompressed != e.compressed) fail(file, field, "equal sizes for a stored member");
    out.assign(raw);
  } else if (e.method == 8) {
    // Deflate expands at most 1032:1 (zlib's technical details), so a larger claim is a lie.
    if (e.uncompressed > e.compressed * 1032 + 1024) fail(file, field, "an uncompressed size deflate can produce");
    z_stream s{};
    if (inflateInit2(&s, -MAX_WBITS) != Z_OK) fail(file, field, "zlib to initialise");
    std::uint64_t fed = 0;
    constexpr std::uint64_t kStep = std::uint64_t{1} << 20;
    int rc = Z_OK;
    while (rc == Z_OK && out.size() <= e.uncompressed) {
      if (s.avail_in == 0 && fed < raw.size()) {
        const std::uint64_t n = std::min<std::uint64_t>(raw.size() - fed, std::numeric_limits<uInt>::max());
        s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data() + fed));
        s.avail_in = static_cast<uInt>(n);
        fed += n;
      }
      // One byte beyond the declared size is room enough to notice a stream that goes on.
      const std::uint64_t room = std::min<std::uint64_t>(kStep, e.uncompressed + 1 - out.size());
      const std::size_t before = out.size();
      out.resize(before + room);
      s.next_out = reinterpret_cast<Bytef*>(out.data() + before);
      s.avail_out = static_cast<uInt>(room);
      rc = inflate(&s, Z_NO_FLUSH);  // Z_BUF_ERROR once no progress is possible (a truncated stream)
      out.resize(before + (room - s.avail_out));
    }
    inflateEnd(&s);
    if (rc != Z_STREAM_END || out.size() != e.uncompressed) {
      fail(file, field, "a complete deflate stream of " + std::to_string(e.uncompressed) + " bytes");
    }
  } else {
    fail(file, field, "compression method 0 (stored) or 8 (deflate), got " + std::to_string(e.method));
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::size_t i = 0; i < out.size(); i += 1u << 30) {
    const std::size_t n = std::min<std::size_t>(out.size() - i, 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(out.data() + i), static_cast<uInt>(n));
  }
  if (static_cast<std::uint32_t>(crc) != e.crc) fail(file, field, "a CRC-32 matching the directory");
  return out;
}

// User JSON through the one checked parse (spec/json_keys.h): bounded nesting, linear time, each
// key once per object.
nlohmann::json parse_json(std::string_view text, std::string_view file, const std::string& field) {
  JsonNotes notes;
  nlohmann::json j;
  try {
    j = parse_json_checked<nlohmann::json>(text, notes);
  } catch (const nlohmann::json::exception& e) {
    fail(file, field, std::string("valid JSON (") + excerpt(e.what()) + ")");
  }
  if (notes.too_deep()) throw ReaderError(std::string(file) + ": " + field + " " + notes.too_deep_message());
  if (!notes.duplicate.empty()) fail(file, field + " key " + excerpt(notes.duplicate), "each key once, got it twice");
  return j;
}

double json_value(const nlohmann::json& j, std::string_view file, const std::string& name) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    try {
      return reference::parse_float(j.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  fail(file, name, "numbers or float strings such as \"0x1.8p-1\", \"nan\", \"inf\", got " + excerpt(j.dump()));
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Fills t.values from `j` at nesting `depth` of t.shape; `at` is the index path (for messages).
void fill_values(const nlohmann::json& j, std::string_view file, const std::string& name, std::vector<std::size_t>& at,
                 Tensor& t) {
  auto where = [&] {
    std::string s;
    for (std::size_t i : at) s += "[" + std::to_string(i) + "]";
    return s.empty() ? std::string("the top") : s;
  };
  const std::size_t depth = at.size();
  if (depth == t.shape.size()) {
    if (j.is_array()) fail(file, name, "a rectangular array of shape " + shape_text(t.shape) + ", got an array at " + where());
    t.values.push_back(json_value(j, file, name));
    return;
  }
  if (!j.is_array() || static_cast<std::int64_t>(j.size()) != t.shape[depth]) {
    fail(file, name, "a rectangular array of shape " + shape_text(t.shape) + " (rows of " + std::to_string(t.shape[depth]) +
                         "), got " + (j.is_array() ? std::to_string(j.size()) + " elements" : std::string("a value")) + " at " +
                         where());
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    at.push_back(i);
    fill_values(j[i], file, name, at, t);
    at.pop_back();
  }
}

// Flattens nested arrays: the shape is read along the first elements, then every element must
// agree with it (ragged arrays are refused: [1, [0, 0.5]] has no shape).
void flatten(const nlohmann::json& j, std::string_view file, const std::string& name, Tensor& t) {
  for (const nlohmann::json* node = &j; node->is_array(); node = &node->front()) {
    if (t.shape.size() == 32) fail(file, name, "at most 32 nested arrays");
    t.shape.push_back(static_cast<std::int64_t>(node->size()));
    if (node->empty()) break;
  }
  std::vector<std::size_t> at;
  fill_values(j, file, name, at, t);
}

}  // namespace

namespace {

// The storage dtype of a numeric .npy descr without its byte-order character.
std::string npy_numeric_dtype(std::string_view descr, std::string_view full, std::string_view file) {
  if (descr == "f8") return "F64";
  if (descr == "f4") return "F32";
  if (descr == "f2") return "F16";
  if (descr == "i8") return "I64";
  if (descr == "i4") return "I32";
  fail(file, "descr", "'<f2', '<f4', '<f8', '<i4', '<i8' or '<U', got '" + excerpt(full) + "'");
}

}  // namespace

Tensor parse_npy_tensor(std::string_view bytes, std::string_view file) {
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
  t.dtype = npy_numeric_dtype(descr, h.descr, file);
  const int width = width_of(t.dtype);
  if (count > data.size() / width) {
    fail(file, "data", std::to_string(count) + " values of " + std::to_string(width) + " bytes (shape), file holds " +
                           std::to_string(data.size()) + " bytes");
  }
  t.values = decode(data.data(), count, t.dtype);
  return t;
}

TensorMap parse_npz(std::string_view bytes, std::string_view file) {
  TensorMap out;
  const std::vector<ZipEntry> entries = zip_directory(bytes, file);
  const std::vector<MemberSpan> spans = member_spans(bytes, entries, file);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const ZipEntry& e = entries[i];
    if (e.name.size() < 4 || e.name.substr(e.name.size() - 4) != ".npy") {
      fail(file, "zip member '" + excerpt(e.name) + "'", "a name ending in .npy");
    }
    const std::string name = e.name.substr(0, e.name.size() - 4);
    if (out.count(name)) fail(file, "zip member '" + excerpt(e.name) + "'", "unique member names");
    const std::string member = zip_member(bytes, e, spans[i], file);
    out[name] = parse_npy_tensor(member, std::string(file) + ":" + excerpt(e.name));
  }
  return out;
}

namespace {

// One tensor entry of a safetensors header, checked against the data size (not yet decoded).
struct SafetensorsEntry {
  std::string name;
  Tensor tensor;  // dtype and shape (values empty); "U" metadata strings complete
  std::uint64_t begin = 0, end = 0;  // data_offsets (metadata: 0, 0)
};

// The header's entries, in header order, every field checked as the format requires
// (huggingface/safetensors README, "Format"): dtype, shape, offsets inside `data_size` bytes and
// matching the shape, no two tensors sharing bytes, no duplicate keys.
std::vector<SafetensorsEntry> safetensors_entries(std::string_view header_text, std::uint64_t data_size, std::string_view file) {
  // The format forbids duplicate keys: one tensor name given twice would silently replace the other.
  const nlohmann::json header = parse_json(header_text, file, "header");
  if (!header.is_object()) fail(file, "header", "a JSON object");
  std::vector<SafetensorsEntry> out;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // data_offsets, to refuse overlaps
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail(file, "__metadata__", "an object of strings");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) fail(file, "__metadata__." + excerpt(key), "a string");
        SafetensorsEntry e;
        e.name = key;
        e.tensor.dtype = "U";
        e.tensor.text = value.get<std::string>();
        out.push_back(std::move(e));
      }
      continue;
    }
    const std::string field = excerpt(name);
    if (!entry.is_object()) fail(file, field, "an object with dtype, shape and data_offsets");
    SafetensorsEntry e;
    e.name = name;
    Tensor& t = e.tensor;
    if (!entry.contains("dtype") || !entry["dtype"].is_string()) fail(file, field + ".dtype", "a string");
    t.dtype = entry["dtype"].get<std::string>();
    const int width = width_of(t.dtype);
    if (width == 0) fail(file, field + ".dtype", "F64, F32, F16, BF16, I64 or I32, got " + excerpt(t.dtype));
    if (!entry.contains("shape") || !entry["shape"].is_array() || entry["shape"].size() > 32) {
      fail(file, field + ".shape", "an array of at most 32 integers");
    }
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_unsigned()) fail(file, field + ".shape", "non-negative integers");
      const auto v = d.get<std::uint64_t>();
      if (v > (std::uint64_t{1} << 62)) fail(file, field + ".shape", "dimensions below 2^62");
      t.shape.push_back(static_cast<std::int64_t>(v));
    }
    const std::uint64_t count = element_count(t.shape, file, field + ".shape");
    const auto& offsets = entry.contains("data_offsets") ? entry["data_offsets"] : nlohmann::json();
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      fail(file, field + ".data_offsets", "[begin, end], two non-negative integers");
    }
    e.begin = offsets[0].get<std::uint64_t>();
    e.end = offsets[1].get<std::uint64_t>();
    if (e.begin > e.end || e.end > data_size) {
      fail(file, field + ".data_offsets", "begin <= end <= " + std::to_string(data_size) + " (the data size)");
    }
    if (count > (e.end - e.begin) / width || count * width != e.end - e.begin) {
      fail(file, field + ".data_offsets", std::to_string(e.end - e.begin) + " bytes = shape product x " +
                                              std::to_string(width) + " bytes");
    }
    if (e.begin < e.end) ranges.emplace_back(e.begin, e.end);
    out.push_back(std::move(e));
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) {
      fail(file, "data_offsets [" + std::to_string(ranges[i].first) + ", " + std::to_string(ranges[i].second) + "]",
           "bytes no other tensor uses, got bytes shared with [" + std::to_string(ranges[i - 1].first) + ", " +
               std::to_string(ranges[i - 1].second) + "] (overlapping tensors)");
    }
  }
  return out;
}

}  // namespace

TensorMap parse_safetensors(std::string_view bytes, std::string_view file) {
  if (bytes.size() < 8) fail(file, "header length", "8 bytes");
  const std::uint64_t n = read_le(bytes.data(), 8);
  if (n > bytes.size() - 8) fail(file, "header length", "at most " + std::to_string(bytes.size() - 8) + " bytes, got " + std::to_string(n));
  const std::string_view data = bytes.substr(8 + n);
  TensorMap out;
  for (SafetensorsEntry& e : safetensors_entries(bytes.substr(8, n), data.size(), file)) {
    if (e.tensor.dtype != "U") {
      const std::uint64_t count = (e.end - e.begin) / static_cast<std::uint64_t>(width_of(e.tensor.dtype));
      e.tensor.values = decode(data.data() + e.begin, count, e.tensor.dtype);
    }
    out[e.name] = std::move(e.tensor);
  }
  return out;
}

TensorMap parse_candidate_json(std::string_view bytes, std::string_view file) {
  // A key given twice would let one output silently replace another: refuse it.
  const nlohmann::json j = parse_json(bytes, file, "JSON");
  if (!j.is_object()) fail(file, "top level", "an object {\"SUITE/ID/output\": [values...]}");
  TensorMap out;
  for (const auto& [name, value] : j.items()) {
    Tensor t;
    if (name.find('/') == std::string::npos) {
      t.dtype = "U";
      t.text = value.is_string() ? value.get<std::string>() : value.dump();
      out[name] = std::move(t);
      continue;
    }
    t.dtype = "F64";
    flatten(value, file, excerpt(name), t);
    out[name] = std::move(t);
  }
  return out;
}

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

// --- TensorFile: one tensor read in pieces ----------------------------------------------------------

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

std::vector<double> TensorFile::read(const Entry& entry, std::uint64_t first, std::uint64_t count) const {
  if (entry.dtype == "U") fail(path_, "values", "a numeric tensor, got text");
  if (first > entry.count || count > entry.count - first) {
    fail(path_, "values", "indices below " + std::to_string(entry.count) + ", got [" + std::to_string(first) + ", " +
                              std::to_string(first) + " + " + std::to_string(count) + ")");
  }
  const auto width = static_cast<std::uint64_t>(width_of(entry.dtype));
  std::string bytes(count * width, '\0');
  read_at(fd_, entry.offset + first * width, bytes.data(), bytes.size(), path_);
  return decode(bytes.data(), count, entry.dtype);
}

void TensorFile::read_into(std::uint64_t first, std::span<double> out, std::string& bytes) const {
  const Entry& entry = *chosen_;
  const std::uint64_t count = out.size();
  if (entry.dtype == "U") fail(path_, "values", "a numeric tensor, got text");
  if (first > entry.count || count > entry.count - first) {
    fail(path_, "values", "indices below " + std::to_string(entry.count) + ", got [" + std::to_string(first) + ", " +
                              std::to_string(first) + " + " + std::to_string(count) + ")");
  }
  const auto width = static_cast<std::uint64_t>(width_of(entry.dtype));
  bytes.resize(count * width);
  read_at(fd_, entry.offset + first * width, bytes.data(), bytes.size(), path_);
  decode_to(bytes.data(), count, entry.dtype, out.data());
}

}  // namespace ropecheck::tensorio
