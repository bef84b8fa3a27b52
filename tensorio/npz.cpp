// NumPy .npz: a zip archive (APPNOTE.TXT, PKWARE) of .npy members (readers.h parse_npz).
#include <zlib.h>

#include <algorithm>
#include <limits>

#include "tensorio/reader_detail.h"

namespace ropecheck::tensorio {
using namespace detail;

namespace {

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

}  // namespace

TensorMap parse_npz(std::string_view bytes, std::string_view file, UnsignedCodes codes) {
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
    out[name] = parse_npy_tensor(member, std::string(file) + ":" + excerpt(e.name), codes);
  }
  return out;
}

}  // namespace ropecheck::tensorio
