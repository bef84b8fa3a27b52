// The tensor readers (tensorio/readers.h) against the writers (tensorio/writers.h)
// and against broken files: every size checked, one exception type, one-line messages.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <initializer_list>
#include <random>
#include <string_view>
#include <tuple>
#include <utility>

#include "reference/rounding.h"
#include "tensorio/reader_detail.h"
#include "tensorio/readers.h"
#include "tensorio/writers.h"

namespace ropecheck::tensorio {
namespace {

std::vector<OutTensor> sample_tensors() {
  return {
      {"suite/1/input", "F32", {1, 2, 2}, {0.5, -0.25, 3.0, 1e-40}, {}},  // 1e-40 rounds to a float32 subnormal below
      {"suite/1/positions", "I64", {1}, {2147483647.0}, {}},
      {"suite/2/output", "F64", {3}, {0.1, -0.0, std::ldexp(1.0, -1074)}, {}},
      {"suite/3/output", "F16", {2}, {65504.0, std::ldexp(1.0, -24)}, {}},
      {"suite/4/output", "BF16", {2}, {1.0078125, -3.0}, {}},
      {"suite/1/spec", "U", {}, {}, "layout=half,head_dim=4"},
  };
}

void make_representable(std::vector<OutTensor>& tensors) {
  // 1e-40 as float32 (subnormal): the value the file holds.
  tensors[0].values[3] = static_cast<double>(static_cast<float>(1e-40));
}

void expect_same(const std::vector<OutTensor>& written, const TensorMap& read) {
  for (const OutTensor& t : written) {
    ASSERT_TRUE(read.count(t.name)) << t.name;
    const Tensor& r = read.at(t.name);
    if (t.dtype == "U") {
      EXPECT_EQ(r.text, t.text);
      continue;
    }
    EXPECT_EQ(r.shape, t.shape) << t.name;
    ASSERT_EQ(r.values.size(), t.values.size()) << t.name;
    for (std::size_t i = 0; i < t.values.size(); ++i) {
      EXPECT_EQ(r.values[i], t.values[i]) << t.name << "[" << i << "]";
      EXPECT_EQ(std::signbit(r.values[i]), std::signbit(t.values[i])) << t.name << "[" << i << "]";
    }
  }
}

TEST(Readers, NpzRoundTrip) {
  auto tensors = sample_tensors();
  make_representable(tensors);
  const std::string bytes = encode_npz(tensors);
  expect_same(tensors, parse_npz(bytes, "x.npz"));
  expect_same(tensors, parse_candidate(bytes, "x.npz"));
  // bfloat16 has no NumPy dtype: stored as float32, exactly.
  EXPECT_EQ(parse_npz(bytes, "x.npz").at("suite/4/output").dtype, "F32");
}

TEST(Readers, SafetensorsRoundTrip) {
  auto tensors = sample_tensors();
  make_representable(tensors);
  const std::string bytes = encode_safetensors(tensors);
  const TensorMap read = parse_safetensors(bytes, "x.safetensors");
  expect_same(tensors, read);
  EXPECT_EQ(read.at("suite/4/output").dtype, "BF16");
  expect_same(tensors, parse_candidate(bytes, "x.safetensors"));
  // The header length is a multiple of 8 (the safetensors format's alignment).
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
}

TEST(Readers, JsonCandidate) {
  const TensorMap m = parse_candidate_json(R"({"implementation": "k", "s/1/output": [[1, "0x1.8p-1"], ["nan", "-inf"]]})", "c.json");
  const Tensor& t = m.at("s/1/output");
  EXPECT_EQ(t.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(t.values[1], 0.75);
  EXPECT_TRUE(std::isnan(t.values[2]));
  EXPECT_EQ(t.values[3], -INFINITY);
  EXPECT_EQ(m.at("implementation").text, "k");
}

// Each broken file is refused with a ReaderError whose one-line message names the file and the field.
void expect_refused(const std::string& bytes, const std::string& field) {
  try {
    parse_candidate(bytes, "broken.bin");
    ADD_FAILURE() << "accepted; expected an error about " << field;
  } catch (const ReaderError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("broken.bin", 0), 0u) << m;
    EXPECT_NE(m.find(field), std::string::npos) << m << " (expected " << field << ")";
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(Readers, BrokenFilesAreRefusedWithOneLine) {
  const std::string npz = encode_npz(sample_tensors());
  expect_refused(npz.substr(0, npz.size() - 10), "zip end record");
  std::string bad_crc = npz;
  bad_crc[npz.find("NUMPY") + 30] ^= 1;  // inside the first member's .npy header
  expect_refused(bad_crc, "CRC-32");
  // A deflate member claiming 4 GiB from a few bytes: refused before allocating.
  std::string bomb = npz;
  const auto dir = bomb.find(std::string("PK\x01\x02", 4));
  bomb[dir + 10] = 8;                                   // method: deflate
  std::memset(bomb.data() + dir + 24, 0xf0, 4);         // uncompressed size ~ 4 GiB
  expect_refused(bomb, "uncompressed size");

  const std::string st = encode_safetensors(sample_tensors());
  std::string long_header = st;
  long_header[7] = 0x7f;  // header length 2^63-ish
  expect_refused(long_header, "header length");
  expect_refused(std::string("\x10\0\0\0\0\0\0\0{\"a/b\": {}}     ", 24), "dtype");
  const std::string shape_overflow = R"({"a/b":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})";
  std::string so(8, '\0');
  so[0] = static_cast<char>(shape_overflow.size());
  expect_refused(so + shape_overflow, "shape");
  const std::string offsets = R"({"a/b":{"dtype":"F32","shape":[4],"data_offsets":[0,12]}})";
  std::string off(8, '\0');
  off[0] = static_cast<char>(offsets.size());
  expect_refused(off + offsets + std::string(12, '\0'), "data_offsets");

  OutTensor t{"x", "F32", {4}, {1, 2, 3, 4}, {}};
  std::string npy = encode_npy(t);
  expect_refused(npy.substr(0, npy.size() - 1), "data");
  std::string fortran = npy;
  fortran.replace(fortran.find("False"), 5, "True ");
  expect_refused(fortran, "fortran_order");
  std::string big_endian = npy;
  big_endian[big_endian.find("<f4")] = '>';
  expect_refused(big_endian, "descr");
  expect_refused(R"({"s/1/output": [[1, 2], [3]]})", "rectangular");
  // A number where a row is, and a row where a number is ([1, [0, 0.5, -0.25]] passed).
  expect_refused(R"({"s/1/output": [1, [0, 0.5, -0.25]]})", "rectangular");
  expect_refused(R"({"s/1/output": [[1, 2], [3, [4]]]})", "rectangular");
  expect_refused(R"({"s/1/output": [[1, 2], 3]})", "rectangular");
  expect_refused(R"({"s/1/output": [1, "zebra"]})", "float strings");
  expect_refused("garbage", "format");
}

TEST(Readers, MutatedFilesNeverEscapeAsAnythingButReaderError) {
  // A small in-test fuzz loop over the three binary formats (fuzz/ holds the libFuzzer targets).
  std::mt19937_64 rng(7);
  const std::string seeds[] = {encode_npz(sample_tensors()), encode_safetensors(sample_tensors()),
                               encode_npy({"x", "F64", {2, 2}, {1, 2, 3, 4}, {}})};
  int parsed = 0, refused = 0;
  for (const std::string& seed : seeds) {
    for (int round = 0; round < 400; ++round) {
      std::string bytes = seed;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < edits; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
      if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
      try {
        parse_candidate(bytes, "fuzz");
        ++parsed;
      } catch (const ReaderError&) {
        ++refused;
      }
    }
  }
  EXPECT_EQ(parsed + refused, 1200);
  EXPECT_GT(refused, 0);
}

// --- Zip archives the project's writer never produces (Zip64, deflate), built byte by byte here ---
// (APPNOTE.TXT 4.3.7 local header, 4.3.12 central header, 4.3.14-16 Zip64 end record and locator,
// 4.5.3 Zip64 extra field). The CRC-32 is computed bitwise here, independently of zlib. Python's
// zipfile and np.load read each variant built here back to the same values (checked once by hand).

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void poke(std::string& out, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint32_t crc32_bitwise(std::string_view s) {
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

// A raw deflate stream of stored blocks (RFC 1951 3.2.4: BTYPE 00): valid deflate that zlib
// inflates, written without a compressor.
std::string deflate_stored(std::string_view data) {
  std::string out;
  std::size_t i = 0;
  do {
    const std::size_t n = std::min<std::size_t>(data.size() - i, 65535);
    out.push_back(i + n == data.size() ? 1 : 0);  // BFINAL on the last block
    put(out, n, 2);
    put(out, ~n & 0xffff, 2);
    out.append(data.substr(i, n));
    i += n;
  } while (i < data.size());
  return out;
}

// A .npy v1.0 file written by hand: the header dict as numpy/lib/format.py writes it.
std::string npy(const std::string& descr, const std::string& shape, const std::string& data) {
  const std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  put(out, header.size(), 2);
  return out + header + data;
}

std::string f64_bytes(std::initializer_list<double> values) {
  std::string out;
  for (double v : values) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, 8);
    put(out, bits, 8);
  }
  return out;
}

std::string i32_bytes(std::initializer_list<std::int64_t> values) {
  std::string out;
  for (std::int64_t v : values) put(out, static_cast<std::uint32_t>(static_cast<std::int32_t>(v)), 4);
  return out;
}

struct Member {
  std::string name;
  std::string payload;        // the uncompressed member (a .npy file)
  bool deflate = false;       // method 8 (a stored-block deflate stream) instead of 0
  bool local_zip64 = false;   // zipfile's force_zip64 (np.savez): local extra id 1 with both sizes
  bool zip64_sizes = false;   // central sizes 0xFFFFFFFF, the real ones in a Zip64 extra field
  bool zip64_offset = false;  // central local-header offset 0xFFFFFFFF, likewise
  bool other_extra = false;   // an unrelated extra field (0x5455, timestamp) before the Zip64 one
  std::string raw;            // the bytes stored; empty: payload, or its deflate stream
  std::int64_t declared_size = -1;  // uncompressed size claimed by the headers; -1: the real one
};

Member member(std::string name, std::string payload) {
  Member m;
  m.name = std::move(name);
  m.payload = std::move(payload);
  return m;
}

struct Zip {
  std::string bytes;
  std::size_t central = 0;  // offset of the central directory
  std::size_t locator = 0;  // offset of the Zip64 locator (zip64_end only)
  std::size_t record = 0;   // offset of the Zip64 end record (zip64_end only)
  std::size_t eocd = 0;
};

// zip64_end: a Zip64 end record and locator hold the directory's count, size and offset, and the
// classic end record holds only sentinels (0xFFFF, 0xFFFFFFFF), as writers do past 65535 entries.
Zip build_zip(std::vector<Member> members, bool zip64_end = false, const std::string& comment = "") {
  Zip z;
  std::vector<std::size_t> offsets;
  for (Member& m : members) {
    if (m.raw.empty()) m.raw = m.deflate ? deflate_stored(m.payload) : m.payload;
    if (m.declared_size < 0) m.declared_size = static_cast<std::int64_t>(m.payload.size());
    offsets.push_back(z.bytes.size());
    std::string extra;
    if (m.local_zip64) {
      put(extra, 1, 2);
      put(extra, 16, 2);
      put(extra, static_cast<std::uint64_t>(m.declared_size), 8);
      put(extra, m.raw.size(), 8);
    }
    std::string& b = z.bytes;
    put(b, 0x04034b50, 4);
    put(b, 20, 2);                 // version needed (numpy's zipfile writes 20 here too)
    put(b, 0, 2);                  // flags
    put(b, m.deflate ? 8 : 0, 2);  // method
    put(b, 0, 2);                  // time
    put(b, 0x21, 2);               // date (1980-01-01)
    put(b, crc32_bitwise(m.payload), 4);
    put(b, m.raw.size(), 4);
    put(b, static_cast<std::uint64_t>(m.declared_size), 4);
    put(b, m.name.size(), 2);
    put(b, extra.size(), 2);
    b += m.name + extra + m.raw;
  }
  // Unrelated bytes between the members and the directory: offsets must come from the records.
  z.bytes += "gap";
  z.central = z.bytes.size();
  for (std::size_t k = 0; k < members.size(); ++k) {
    const Member& m = members[k];
    std::string extra;
    if (m.other_extra) {
      put(extra, 0x5455, 2);
      put(extra, 5, 2);
      put(extra, 1, 1);
      put(extra, 0, 4);
    }
    if (m.zip64_sizes || m.zip64_offset) {
      std::string fields;
      if (m.zip64_sizes) {
        put(fields, static_cast<std::uint64_t>(m.declared_size), 8);  // uncompressed first (4.5.3)
        put(fields, m.raw.size(), 8);
      }
      if (m.zip64_offset) put(fields, offsets[k], 8);
      put(extra, 1, 2);
      put(extra, fields.size(), 2);
      extra += fields;
    }
    std::string& b = z.bytes;
    put(b, 0x02014b50, 4);
    put(b, 0x031e, 2);  // made by
    put(b, 45, 2);
    put(b, 0, 2);
    put(b, m.deflate ? 8 : 0, 2);
    put(b, 0, 2);
    put(b, 0x21, 2);
    put(b, crc32_bitwise(m.payload), 4);
    put(b, m.zip64_sizes ? 0xffffffff : m.raw.size(), 4);
    put(b, m.zip64_sizes ? 0xffffffff : static_cast<std::uint64_t>(m.declared_size), 4);
    put(b, m.name.size(), 2);
    put(b, extra.size(), 2);
    put(b, 0, 2);  // comment
    put(b, 0, 2);  // disk
    put(b, 0, 2);  // internal attributes
    put(b, 0, 4);  // external attributes
    put(b, m.zip64_offset ? 0xffffffff : offsets[k], 4);
    b += m.name + extra;
  }
  const std::size_t dir_size = z.bytes.size() - z.central;
  std::string& b = z.bytes;
  if (zip64_end) {
    z.record = b.size();
    put(b, 0x06064b50, 4);
    put(b, 44, 8);  // size of the rest of the record
    put(b, 45, 2);
    put(b, 45, 2);
    put(b, 0, 4);
    put(b, 0, 4);
    put(b, members.size(), 8);
    put(b, members.size(), 8);
    put(b, dir_size, 8);
    put(b, z.central, 8);
    z.locator = b.size();
    put(b, 0x07064b50, 4);
    put(b, 0, 4);
    put(b, z.record, 8);
    put(b, 1, 4);
  }
  z.eocd = b.size();
  put(b, 0x06054b50, 4);
  put(b, 0, 2);
  put(b, 0, 2);
  put(b, zip64_end ? 0xffff : members.size(), 2);
  put(b, zip64_end ? 0xffff : members.size(), 2);
  put(b, zip64_end ? 0xffffffff : dir_size, 4);
  put(b, zip64_end ? 0xffffffff : z.central, 4);
  put(b, comment.size(), 2);
  b += comment;
  return z;
}

// Three members whose values the tests check: f64, i4 and a 0-d text array.
std::vector<Member> three_members() {
  std::string text;
  for (char c : std::string("layout=half")) put(text, static_cast<unsigned char>(c), 4);
  return {member("s/1/output.npy", npy("<f8", "(3,)", f64_bytes({0.5, -2.0, 0x1p-1074}))),
          member("s/1/positions.npy", npy("<i4", "(2, 1)", i32_bytes({7, -2147483648}))),
          member("s/1/spec.npy", npy("<U11", "()", text))};
}

void expect_three(const TensorMap& m) {
  ASSERT_EQ(m.size(), 3u);
  const Tensor& out = m.at("s/1/output");
  EXPECT_EQ(out.dtype, "F64");
  EXPECT_EQ(out.shape, (std::vector<std::int64_t>{3}));
  EXPECT_EQ(out.values, (std::vector<double>{0.5, -2.0, 0x1p-1074}));
  const Tensor& pos = m.at("s/1/positions");
  EXPECT_EQ(pos.dtype, "I32");
  EXPECT_EQ(pos.shape, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(pos.values, (std::vector<double>{7, -2147483648.0}));
  EXPECT_EQ(m.at("s/1/spec").text, "layout=half");
}

TEST(ReadersZip, HandBuiltArchiveIsReadBack) {
  // The control for the variants below: the plain layout, stored members.
  expect_three(parse_npz(build_zip(three_members()).bytes, "a.npz"));
}

TEST(ReadersZip, NumpysLocalZip64ExtraFieldIsSkipped) {
  // np.savez (zipfile, force_zip64=True) writes a 20-byte Zip64 extra field in every local header,
  // the true sizes beside it, none in the central directory: the data starts after that field.
  auto members = three_members();
  for (Member& m : members) m.local_zip64 = true;
  members[1].deflate = true;  // np.savez_compressed's layout
  expect_three(parse_npz(build_zip(members).bytes, "numpy.npz"));
}

TEST(ReadersZip, CentralZip64ExtraFieldReplacesTheSentinels) {
  // Each combination of fields stored as 0xFFFFFFFF, the Zip64 field after another extra field;
  // a wrong pick of the 8-byte fields (order: uncompressed, compressed, offset) misreads a member.
  for (int mask = 1; mask < 8; ++mask) {
    auto members = three_members();
    for (std::size_t k = 0; k < members.size(); ++k) {
      members[k].other_extra = true;
      members[k].deflate = (mask & 4) != 0 && k == 0;  // deflate: compressed != uncompressed size
      members[k].zip64_sizes = (mask & 1) != 0;
      members[k].zip64_offset = (mask & 2) != 0;
    }
    SCOPED_TRACE(mask);
    expect_three(parse_npz(build_zip(members).bytes, "z64.npz"));
  }
}

TEST(ReadersZip, Zip64EndRecordGivesTheDirectory) {
  // The classic end record holds only sentinels: count, size and offset come from the Zip64 record.
  auto members = three_members();
  members[2].zip64_offset = true;
  const Zip z = build_zip(members, /*zip64_end=*/true, "a comment");
  expect_three(parse_npz(z.bytes, "z64end.npz"));
  expect_three(parse_candidate(z.bytes, "z64end.npz"));
}

// n one-value members "tK.npy" holding K: names and values differ, so each is read once.
std::vector<Member> numbered_members(int n) {
  std::vector<Member> members;
  members.reserve(n);
  for (int k = 0; k < n; ++k) members.push_back(member("t" + std::to_string(k) + ".npy", npy("<i4", "()", i32_bytes({k}))));
  return members;
}

// The reader's message for broken bytes: "FILE: FIELD: expected WHAT", one line.
void expect_npz_error(const std::string& bytes, const std::string& field, const std::string& expected) {
  try {
    parse_npz(bytes, "broken.npz");
    ADD_FAILURE() << "accepted; expected an error about " << field;
  } catch (const ReaderError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("broken.npz: " + field + ": expected ", 0), 0u) << m;
    EXPECT_NE(m.find(expected), std::string::npos) << m << " (expected " << expected << ")";
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(ReadersZip, Count65535IsLiteralWithoutZip64Record) {
  // Python's zipfile writes 65535 entries as count 0xFFFF in the classic end record and no Zip64
  // record (it adds one only past 65535): that count is literal, not a sentinel (np.savez of 65535
  // arrays must load).
  constexpr int n = 65535;
  const TensorMap m = parse_npz(build_zip(numbered_members(n)).bytes, "many.npz");
  ASSERT_EQ(m.size(), static_cast<std::size_t>(n));
  for (int k : {0, 1, 4096, 65534}) {
    ASSERT_TRUE(m.count("t" + std::to_string(k))) << k;
    EXPECT_EQ(m.at("t" + std::to_string(k)).values, std::vector<double>{static_cast<double>(k)}) << k;
  }
  // One more entry behind a count of 0xFFFF and no Zip64 record: the locator is missing, not a
  // member to drop silently.
  Zip more = build_zip(numbered_members(n + 1));
  poke(more.bytes, more.eocd + 8, 0xffff, 2);
  poke(more.bytes, more.eocd + 10, 0xffff, 2);
  expect_npz_error(more.bytes, "zip64 locator", "more than 65535 entries");
}

TEST(ReadersZip, MalformedZip64EndRecordsAreRefused) {
  const Zip z = build_zip(three_members(), /*zip64_end=*/true);
  {  // Sentinel sizes in the end record, no locator before it.
    std::string b = z.bytes;
    poke(b, z.locator, 0, 4);
    expect_npz_error(b, "zip64 locator", "PK\\6\\7");
  }
  {  // The locator points past the end of the file.
    std::string b = z.bytes;
    poke(b, z.locator + 8, b.size() + 100, 8);
    expect_npz_error(b, "zip64 end record", "PK\\6\\6");
  }
  {  // ... at an offset 2^64 - 1 (no wrap-around).
    std::string b = z.bytes;
    poke(b, z.locator + 8, ~std::uint64_t{0}, 8);
    expect_npz_error(b, "zip64 end record", "PK\\6\\6");
  }
  {  // ... at bytes that are not a Zip64 end record.
    std::string b = z.bytes;
    poke(b, z.locator + 8, z.central, 8);
    expect_npz_error(b, "zip64 end record", "PK\\6\\6");
  }
  {  // ... at a record signature with fewer than its 56 bytes left in the file (in the comment).
    const Zip c = build_zip(three_members(), /*zip64_end=*/true, std::string(40, 'c'));
    std::string b = c.bytes;
    poke(b, c.locator + 8, b.size() - 30, 8);
    poke(b, b.size() - 30, 0x06064b50, 4);
    expect_npz_error(b, "zip64 end record", "PK\\6\\6");
  }
  {  // A count of 2^60 entries: refused from the directory size, before reserving anything.
    std::string b = z.bytes;
    poke(b, z.record + 32, std::uint64_t{1} << 60, 8);
    expect_npz_error(b, "zip central directory", "entries of >= 46 bytes");
  }
  {  // A directory offset or size beyond the file.
    std::string b = z.bytes;
    poke(b, z.record + 48, std::uint64_t{1} << 40, 8);
    expect_npz_error(b, "zip central directory", "inside the file");
    b = z.bytes;
    poke(b, z.record + 40, ~std::uint64_t{0}, 8);
    expect_npz_error(b, "zip central directory", "inside the file");
  }
}

TEST(ReadersZip, MalformedZip64ExtraFieldsAreRefused) {
  auto members = three_members();
  members[0].zip64_sizes = true;
  members[0].zip64_offset = true;
  members[0].other_extra = true;
  const Zip z = build_zip(members);
  const std::size_t extra = z.central + 46 + members[0].name.size();  // first entry's extra data
  const std::size_t zip64 = extra + 9;                                  // after the 9-byte 0x5455 field
  {  // Sentinels with no Zip64 field: the id changed to an unknown one.
    std::string b = z.bytes;
    poke(b, zip64, 0x9999, 2);
    expect_npz_error(b, "zip entry 's/1/output.npy'", "a zip64 extra field");
  }
  {  // A Zip64 field of 16 bytes where three sentinels need 24.
    std::string b = z.bytes;
    poke(b, zip64 + 2, 16, 2);
    poke(b, zip64 + 4 + 16, 0x9999, 2);  // the remaining 8 bytes become an unknown field's header
    poke(b, zip64 + 4 + 18, 4, 2);
    expect_npz_error(b, "zip64 extra field of 's/1/output.npy'", "8 more bytes");
  }
  {  // An extra field whose length runs past the extra data.
    std::string b = z.bytes;
    poke(b, extra + 2, 1000, 2);
    expect_npz_error(b, "zip extra field", "a length inside the extra data");
  }
  {  // Zip64 values pointing outside the file: local offset, then compressed size.
    std::string b = z.bytes;
    poke(b, zip64 + 4 + 16, std::uint64_t{1} << 62, 8);
    expect_npz_error(b, "zip member 's/1/output.npy'", "a local header");
    b = z.bytes;
    poke(b, zip64 + 4 + 8, std::uint64_t{1} << 62, 8);
    expect_npz_error(b, "zip member 's/1/output.npy'", "compressed bytes inside the file");
  }
  {  // A 4 GiB uncompressed size from the Zip64 field on a stored member: sizes must agree.
    std::string b = z.bytes;
    poke(b, zip64 + 4, std::uint64_t{1} << 32, 8);
    expect_npz_error(b, "zip member 's/1/output.npy'", "equal sizes for a stored member");
  }
}

TEST(ReadersZip, DeflateMemberMustInflateToTheDeclaredSize) {
  auto members = three_members();
  members[0].deflate = true;
  const std::size_t size = members[0].payload.size();
  expect_three(parse_npz(build_zip(members).bytes, "ok.npz"));  // the control
  const std::string whole = deflate_stored(members[0].payload);
  const std::string expected = "a complete deflate stream of ";
  {  // The stream cut short (its last 10 bytes missing): no end of stream.
    auto cut = members;
    cut[0].raw = whole.substr(0, whole.size() - 10);
    expect_npz_error(build_zip(cut).bytes, "zip member 's/1/output.npy'", expected + std::to_string(size) + " bytes");
  }
  {  // A final block that never comes: BFINAL cleared, the stream stops after it.
    auto open = members;
    open[0].raw = whole;
    open[0].raw[0] = 0;
    expect_npz_error(build_zip(open).bytes, "zip member 's/1/output.npy'", expected + std::to_string(size) + " bytes");
  }
  for (std::int64_t declared : {static_cast<std::int64_t>(size) + 1, static_cast<std::int64_t>(size) - 1}) {
    // The header claims one byte more or less than the stream inflates to.
    auto lie = members;
    lie[0].declared_size = declared;
    expect_npz_error(build_zip(lie).bytes, "zip member 's/1/output.npy'", expected + std::to_string(declared) + " bytes");
  }
}

// A safetensors file from a header written here, data appended.
std::string safetensors(const std::string& header, const std::string& data) {
  std::string out;
  put(out, header.size(), 8);
  return out + header + data;
}

TEST(ReadersSafetensors, I32TensorsAreSignedLittleEndian) {
  // Extremes and -1 (all bits set) tell a signed 32-bit read from an unsigned or 64-bit one.
  const std::string data = i32_bytes({-2147483648, -1, 0, 2147483647, 1, -2});
  const TensorMap m = parse_safetensors(
      safetensors(R"({"s/1/positions":{"dtype":"I32","shape":[3,2],"data_offsets":[0,24]}})", data), "p.safetensors");
  const Tensor& t = m.at("s/1/positions");
  EXPECT_EQ(t.dtype, "I32");
  EXPECT_EQ(t.shape, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(t.values, (std::vector<double>{-2147483648.0, -1, 0, 2147483647.0, 1, -2}));
  // 6 I32 values are 24 bytes; 6 values over 20 bytes are refused, naming the width.
  try {
    parse_safetensors(safetensors(R"({"x/y":{"dtype":"I32","shape":[6],"data_offsets":[0,20]}})", data), "p.safetensors");
    ADD_FAILURE() << "accepted 6 I32 values in 20 bytes";
  } catch (const ReaderError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("p.safetensors: x/y.data_offsets: expected ", 0), 0u) << m;
    EXPECT_NE(m.find("x 4 bytes"), std::string::npos) << m;
  }
}

// The format forbids a tensor name given twice (huggingface/safetensors README, "Format"); a JSON
// parser would keep one of the two silently, so an auditor and a loader could read different
// tensors from the same bytes. Refused, naming the key; the same name in two different objects
// (a tensor and __metadata__) is not a duplicate.
TEST(ReadersSafetensors, DuplicateTensorNamesAreRefused) {
  const std::string data = i32_bytes({1, 2});
  try {
    parse_safetensors(safetensors(R"({"s/1/output":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},)"
                                  R"("s/1/output":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})",
                                  data),
                      "dup.safetensors");
    ADD_FAILURE() << "accepted a tensor name given twice";
  } catch (const ReaderError& e) {
    EXPECT_STREQ(e.what(), "dup.safetensors: header key s/1/output: expected each key once, got it twice");
  }
  const TensorMap m = parse_safetensors(
      safetensors(R"({"__metadata__":{"dtype":"x"},"s/1/output":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})", data),
      "ok.safetensors");
  EXPECT_EQ(m.at("s/1/output").values, (std::vector<double>{1, 2}));
}

// decode_to converts binary32 and bfloat16 through float in one pass and mends NaNs in a second:
// every bit pattern class (zeros, subnormals, normals, infinities, quiet and signalling NaNs with
// payloads, both signs) decodes as decode_bits decodes it alone, bit for bit, wherever the NaNs are.
TEST(ReadersDecode, Binary32AndBfloat16DecodeAsDecodeBitsDoes) {
  const std::vector<std::uint32_t> classes = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00800000u, 0x3f800000u,
                                              0xc0490fdbu, 0x7f7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
                                              0x7f800001u, 0xff812345u, 0x7fbfffffu};
  for (const int width : {4, 2}) {
    const Dtype dtype = width == 4 ? Dtype::f32 : Dtype::bf16;
    for (const bool with_nans : {false, true}) {
      std::vector<std::uint32_t> words;
      std::mt19937 rng(11);
      for (int k = 0; k < 1000; ++k) {
        std::uint32_t w = classes[static_cast<std::size_t>(k) % classes.size()] ^ (rng() & 0x7u);
        if (!with_nans && (w & 0x7fffffffu) > 0x7f800000u) w = rng() & 0x3fffffffu;
        words.push_back(width == 4 ? w : w >> 16);
      }
      std::string bytes;
      for (const std::uint32_t w : words) {
        for (int b = 0; b < width; ++b) bytes.push_back(static_cast<char>((w >> (8 * b)) & 0xffu));
      }
      std::vector<double> out(words.size());
      detail::decode_to(bytes.data(), words.size(), width == 4 ? "F32" : "BF16", out.data());
      for (std::size_t i = 0; i < words.size(); ++i) {
        const double want = reference::decode_bits(words[i], dtype);
        ASSERT_EQ(std::bit_cast<std::uint64_t>(out[i]), std::bit_cast<std::uint64_t>(want)) << width << " " << std::hex << words[i];
      }
    }
  }
}

// encode_values_to writes every value of a 16-bit dtype (all 65536 patterns, NaNs included) as
// encode_bits encodes it alone, and values not of the dtype as before its fast paths (the upper
// half of binary32's bits, binary16's fields rebiased) were added.
TEST(Writers, SixteenBitValuesEncodeAsEncodeBitsDoes) {
  for (const auto& [name, dtype] : {std::pair<std::string, Dtype>{"BF16", Dtype::bf16}, {"F16", Dtype::f16}}) {
    std::vector<double> values;
    for (std::uint32_t w = 0; w < 0x10000u; ++w) values.push_back(reference::decode_bits(w, dtype));
    for (const double v : {0x1p-25, -0x1p-25, 1.0 + 0x1p-12, 65520.0, 1e300, -0x1p-140, 3.0000001, 2 - 0x1p-30, -0.5 - 0x1p-40}) {
      values.push_back(v);
    }
    std::string bytes(2 * values.size(), '\0');
    encode_values_to(name, values, bytes.data());
    for (std::size_t i = 0; i < values.size(); ++i) {
      // The low 16 bits: what the writer has always stored (a value beyond the dtype's range has
      // no 16-bit encoding; encode_bits then gives wider bits).
      const auto want = static_cast<std::uint32_t>(reference::encode_bits(values[i], dtype) & 0xFFFFu);
      const std::uint32_t got = static_cast<std::uint8_t>(bytes[2 * i]) | (static_cast<std::uint8_t>(bytes[2 * i + 1]) << 8);
      ASSERT_EQ(got, want) << name << " value " << i << " " << values[i];
    }
  }
}

// TensorFile::read_into reads a range a block at a time through the caller's buffer: ranges that
// start inside a block and cross several give read's values, the buffer stays one block, and a
// buffer used again for another range (shorter, of another file) gives that range's values.
TEST(ReadersTensorFile, ReadIntoCrossesBlocksThroughOneBlockOfBuffer) {
  std::string pattern = (std::filesystem::temp_directory_path() / "ropecheck-readers-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path dir = pattern;
  std::string bytes;
  for (const auto& [dtype, width] : {std::pair<std::string, int>{"F32", 4}, std::pair<std::string, int>{"F16", 2}}) {
    const std::uint64_t block = TensorFile::kReadBlockBytes / static_cast<std::uint64_t>(width);
    const std::uint64_t n = 3 * block + 12345;
    std::vector<double> values(n);
    std::mt19937_64 rng(7);
    for (double& v : values) {
      const double x = std::ldexp(static_cast<double>(rng() >> 40) - 8388608.0, -20);  // in [-8, 8)
      v = dtype == "F32" ? static_cast<double>(static_cast<float>(x)) : std::ldexp(std::round(std::ldexp(x, 7)), -7);
    }
    values[block - 1] = -0.0;
    values[block] = std::numeric_limits<double>::infinity();
    values[2 * block + 1] = dtype == "F32" ? static_cast<double>(std::numeric_limits<float>::denorm_min()) : std::ldexp(1.0, -24);
    values[n - 1] = std::numeric_limits<double>::quiet_NaN();
    const std::string path = (dir / (dtype + ".npy")).string();
    {
      std::ofstream out(path, std::ios::binary);
      const std::string encoded = encode_npy({"", dtype, {static_cast<std::int64_t>(n)}, values, {}});
      out.write(encoded.data(), static_cast<std::streamsize>(encoded.size()));
    }
    const TensorFile file = TensorFile::open(path);
    for (const auto& [first, count] : {std::pair<std::uint64_t, std::uint64_t>{7, n - 7}, {block - 3, 5}, {2 * block + 1, block + 12344}}) {
      std::vector<double> out(count, 42.0);
      file.read_into(first, out, bytes);
      EXPECT_LE(bytes.size(), TensorFile::kReadBlockBytes) << dtype;
      const std::vector<double> whole = file.read(first, count);
      EXPECT_EQ(std::memcmp(out.data(), whole.data(), count * sizeof(double)), 0) << dtype << " [" << first << ", +" << count << ")";
      for (std::uint64_t i = 0; i < count; ++i) {
        const double want = values[first + i];
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(out[i])) << dtype << " " << first + i;
        } else {
          ASSERT_EQ(out[i], want) << dtype << " " << first + i;
          ASSERT_EQ(std::signbit(out[i]), std::signbit(want)) << dtype << " " << first + i;
        }
      }
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

// TensorFile::map: a floating-point tensor's stored bytes where they are, for .npy and aligned
// safetensors tensors; nothing for integers or a tensor off its alignment (read_into reads those).
TEST(ReadersTensorFile, MapGivesTheStoredBitsOfFloatingPointTensors) {
  std::string pattern = (std::filesystem::temp_directory_path() / "ropecheck-readers-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path dir = pattern;
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream out(dir / name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return (dir / name).string();
  };
  const std::vector<double> values = {1.0, -0.0, 0.5, -3.0, 65504.0, std::ldexp(1.0, -24), 2.0, -0.25, 1.5};
  const std::vector<std::pair<std::string, Dtype>> floats = {{"F64", Dtype::f64}, {"F32", Dtype::f32}, {"F16", Dtype::f16}, {"BF16", Dtype::bf16}};
  for (const auto& [dtype, format] : floats) {
    SCOPED_TRACE(dtype);
    const std::vector<std::int64_t> shape{3, 3};
    // NumPy has no bfloat16: the .npy writer stores it as float32 (the same values).
    const bool npy_f32 = dtype == "BF16";
    for (const auto& [path, stored, stored_format] :
         {std::tuple{write(dtype + ".npy", encode_npy({"", dtype, shape, values, {}})), npy_f32 ? std::string("F32") : dtype,
                     npy_f32 ? Dtype::f32 : format},
          std::tuple{write(dtype + ".safetensors", encode_safetensors({{"t", dtype, shape, values, {}}})), dtype, format}}) {
      SCOPED_TRACE(path);
      const TensorFile file = TensorFile::open(path, "t");
      const std::optional<MappedTensor> mapped = file.map();
      ASSERT_TRUE(mapped.has_value());
      EXPECT_EQ(mapped->dtype(), stored);
      ASSERT_EQ(mapped->elements(), values.size());
      const auto width = static_cast<std::size_t>(detail::width_of(stored));
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(mapped->data()) % width, 0u);
      for (std::size_t i = 0; i < values.size(); ++i) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, static_cast<const char*>(mapped->data()) + i * width, width);  // little-endian host
        ASSERT_EQ(bits, reference::encode_bits(values[i], stored_format)) << i;
      }
    }
  }
  EXPECT_FALSE(TensorFile::open(write("I64.npy", encode_npy({"", "I64", {2}, {1.0, 2.0}, {}}))).map().has_value());
  // A 2-byte tensor first: the F32 one starts 2 bytes into the data.
  const TensorFile odd = TensorFile::open(write("odd.safetensors", encode_safetensors({{"a", "F16", {1}, {1.0}, {}}, {"b", "F32", {2}, {1.0, 2.0}, {}}})), "b");
  ASSERT_NE(odd.find("b")->offset % 4, 0u);
  EXPECT_FALSE(odd.map().has_value());
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

// The resident pages of the mapping that holds `address`, from /proc/self/smaps (kB); -1 if not found.
long mapping_rss_kb(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &begin, &end) == 2) {  // a mapping's first line
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

// release_before lets go of the pages wholly before a value, and of no later one: the mapping's
// resident set shrinks by them, and every value reads as stored, those let go included.
TEST(ReadersTensorFile, ReleaseBeforeLetsGoOfTheEarlierPagesOnly) {
  std::string pattern = (std::filesystem::temp_directory_path() / "ropecheck-readers-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path dir = pattern;
  constexpr std::size_t kValues = std::size_t{1} << 20;  // 4 MB of float32: 1024 pages
  std::vector<double> values(kValues);
  for (std::size_t i = 0; i < kValues; ++i) values[i] = static_cast<double>(i % 4096) - 2048.0;
  const std::string path = (dir / "t.npy").string();
  {
    const std::string bytes = encode_npy({"", "F32", {static_cast<std::int64_t>(kValues)}, values, {}});
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const TensorFile file = TensorFile::open(path);
  const std::optional<MappedTensor> mapped = file.map();
  ASSERT_TRUE(mapped.has_value());
  const auto* data = static_cast<const float*>(mapped->data());
  const auto read_all = [&] {
    for (std::size_t i = 0; i < kValues; ++i) {
      if (static_cast<double>(data[i]) != values[i]) return i;
    }
    return kValues;
  };
  ASSERT_EQ(read_all(), kValues);  // every page touched
  const long touched = mapping_rss_kb(data);
  ASSERT_GE(touched, 4000) << "the mapping's pages after reading them all";
  mapped->release_before(kValues / 2);  // the first 2 MB
  const long after = mapping_rss_kb(data + kValues - 1);
  EXPECT_LE(after, touched - 2000);
  EXPECT_GE(after, 2048);  // the second half stays
  EXPECT_EQ(read_all(), kValues);  // pages let go read the file again
  mapped->release_before(0);  // nothing before the first value: nothing let go, no error
  mapped->release_before(kValues * 2);  // past the end: the whole tensor
  EXPECT_EQ(read_all(), kValues);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

// A file truncated while it is mapped: a read past its new end ends the process with the readers'
// one line naming the file and exit code 2 (as a file found short by pread), not a SIGBUS crash;
// with no mapping left, SIGBUS is back to what it was.
TEST(ReadersTensorFileDeathTest, TruncatedWhileMappedIsOneLineAndExitCodeTwo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string pattern = (std::filesystem::temp_directory_path() / "ropecheck-readers-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path dir = pattern;
  const std::string path = (dir / "shrinks.npy").string();
  const std::vector<double> values(1 << 16, 0.5);  // 256 KiB of F32: pages past the header's
  const auto write = [&] {
    std::ofstream out(path, std::ios::binary);
    const std::string bytes = encode_npy({"", "F32", {1 << 16}, values, {}});
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  };
  write();
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGBUS, nullptr, &before), 0);
  EXPECT_EXIT(
      {
        const TensorFile file = TensorFile::open(path);
        const std::optional<MappedTensor> mapped = file.map();
        if (!mapped) std::_Exit(3);
        std::filesystem::resize_file(path, 128);  // the header only
        const volatile float* v = static_cast<const float*>(mapped->data());
        float sum = 0;
        for (std::size_t i = 0; i < values.size(); i += 1024) sum += v[i];
        std::fprintf(stderr, "read %g past the end\n", static_cast<double>(sum));
        std::_Exit(4);
      },
      ::testing::ExitedWithCode(2), "shrinks\\.npy: file: expected its bytes unchanged until the check ends");
  write();
  {
    const TensorFile file = TensorFile::open(path);
    std::optional<MappedTensor> first = file.map(), second = file.map();
    ASSERT_TRUE(first && second);
    struct sigaction held {};
    ASSERT_EQ(::sigaction(SIGBUS, nullptr, &held), 0);
    EXPECT_NE(held.sa_flags & SA_SIGINFO, 0);
    first.reset();
    ASSERT_EQ(::sigaction(SIGBUS, nullptr, &held), 0);
    EXPECT_NE(held.sa_flags & SA_SIGINFO, 0) << "one mapping is still held";
    EXPECT_EQ(static_cast<const float*>(second->data())[7], 0.5f);
  }
  struct sigaction after {};
  ASSERT_EQ(::sigaction(SIGBUS, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
  EXPECT_EQ(after.sa_flags & SA_SIGINFO, before.sa_flags & SA_SIGINFO);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

}  // namespace
}  // namespace ropecheck::tensorio
