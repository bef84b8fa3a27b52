// The candidate readers (gate/readers/tensors.h) against the writers (gate/writers/tensor_writer.h)
// and against broken files: every size checked, one exception type, one-line messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "gate/readers/tensors.h"
#include "gate/writers/tensor_writer.h"

namespace ropecheck::gate {
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

}  // namespace
}  // namespace ropecheck::gate
