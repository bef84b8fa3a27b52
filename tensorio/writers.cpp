#include "tensorio/writers.h"

#include <bit>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

#include <zlib.h>

#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "reference/rounding.h"

namespace ropecheck::tensorio {

std::string storage_dtype(Dtype dtype) {
  switch (dtype) {
    case Dtype::f64: return "F64";
    case Dtype::f32: return "F32";
    case Dtype::f16: return "F16";
    case Dtype::bf16: return "BF16";
  }
  return "F64";
}
namespace {

void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

int width_of(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "F32" || dtype == "BF16_AS_F32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  throw std::invalid_argument("tensor dtype: expected F64, F32, F16, BF16 or I64, got " + dtype);
}

// Little-endian raw data of a numeric tensor in `storage` dtype, into out[0 .. width·values.size()).
void raw_data_to(std::span<const double> values, const std::string& storage, char* out) {
  const int width = width_of(storage);
  // The storage decided once (not a string compare per value: sidecars are gigabytes).
  const std::optional<Dtype> dtype = storage == "F64"                               ? std::optional(Dtype::f64)
                                     : storage == "F32" || storage == "BF16_AS_F32" ? std::optional(Dtype::f32)
                                     : storage == "F16"                             ? std::optional(Dtype::f16)
                                     : storage == "BF16"                            ? std::optional(Dtype::bf16)
                                                                                    : std::nullopt;  // I64
  if (dtype == Dtype::f32 && width == 4) {
    // The hot case (an f32 tensor of millions of values): a value of binary32 converts exactly, its
    // bits are encode_bits'; NaN takes encode_bits (the project's one quiet NaN, with the sign).
    for (double v : values) {
      const std::uint32_t bits = std::isnan(v) ? static_cast<std::uint32_t>(reference::encode_bits(v, Dtype::f32))
                                               : std::bit_cast<std::uint32_t>(static_cast<float>(v));
      for (int i = 0; i < 4; ++i) *out++ = static_cast<char>((bits >> (8 * i)) & 0xff);
    }
    return;
  }
  if (dtype == Dtype::bf16 || dtype == Dtype::f16) {
    // The other hot case (a big bf16 or f16 suite's sidecar): a value of the dtype is a binary32
    // value, converted exactly; bfloat16 is the upper half of its bits, binary16 its fields
    // rebiased (a normal binary16 has a binary32 exponent in [−14, 15] and 13 low zero bits).
    // NaN, a binary16 subnormal, or a value not of the dtype take encode_bits.
    for (double v : values) {
      const auto single = std::bit_cast<std::uint32_t>(static_cast<float>(v));
      const std::uint32_t biased = (single >> 23) & 0xFF;
      std::uint32_t bits;
      if (dtype == Dtype::bf16 && !std::isnan(v)) {
        bits = single >> 16;
      } else if (dtype == Dtype::f16 && biased >= 127 - 14 && biased <= 127 + 15 && (single & 0x1FFF) == 0 &&
                 static_cast<double>(std::bit_cast<float>(single)) == v) {
        bits = ((single >> 16) & 0x8000) | ((biased - 127 + 15) << 10) | ((single >> 13) & 0x3FF);
      } else {
        bits = static_cast<std::uint32_t>(reference::encode_bits(v, *dtype));
      }
      *out++ = static_cast<char>(bits & 0xff);
      *out++ = static_cast<char>((bits >> 8) & 0xff);
    }
    return;
  }
  for (double v : values) {
    const std::uint64_t bits = dtype ? reference::encode_bits(v, *dtype) : static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    for (int i = 0; i < width; ++i) *out++ = static_cast<char>((bits >> (8 * i)) & 0xff);
  }
}

std::string raw_data(const std::vector<double>& values, const std::string& storage) {
  std::string out(values.size() * static_cast<std::size_t>(width_of(storage)), '\0');
  raw_data_to(values, storage, out.data());
  return out;
}

// Python tuple syntax as numpy writes it: "()", "(3,)", "(2, 3)".
std::string shape_tuple(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// The .npy header of an array of `descr` ('<f4', '<U5', ...) and `shape`.
std::string header_of(const std::string& descr, const std::vector<std::int64_t>& shape) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_tuple(shape) + ", }";
  // numpy/lib/format.py: magic (6) + version (2) + length (2) + header ending in '\n', total a
  // multiple of 64.
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  put_le(out, header.size(), 2);
  return out + header;
}

std::string numeric_descr(const std::string& storage) {
  return storage == "F64" ? "<f8" : storage == "F16" ? "<f2" : storage == "I64" ? "<i8" : "<f4";
}

}  // namespace

std::string npy_header(const std::string& dtype, const std::vector<std::int64_t>& shape) {
  if (dtype != "F64" && dtype != "F32" && dtype != "F16" && dtype != "I64") {
    throw std::invalid_argument("npy_header: expected dtype F64, F32, F16 or I64, got " + dtype);
  }
  return header_of(numeric_descr(dtype), shape);
}

std::string encode_npy(const OutTensor& t) {
  if (t.dtype == "U") {
    const std::size_t chars = std::max<std::size_t>(t.text.size(), 1);
    std::string data;
    for (std::size_t i = 0; i < chars; ++i) put_le(data, i < t.text.size() ? static_cast<unsigned char>(t.text[i]) : 0, 4);
    return header_of("<U" + std::to_string(chars), {}) + data;
  }
  const std::string storage = t.dtype == "BF16" ? "BF16_AS_F32" : t.dtype;
  return header_of(numeric_descr(storage), t.shape) + raw_data(t.values, storage);
}

std::string encode_npz(const std::vector<OutTensor>& tensors) {
  std::string out;
  std::string directory;
  for (const OutTensor& t : tensors) {
    const std::string name = t.name + ".npy";
    const std::string member = encode_npy(t);
    const auto crc = static_cast<std::uint32_t>(crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(member.data()),
                                                      static_cast<uInt>(member.size())));
    if (member.size() >= 0xffffffffu || out.size() >= 0xffffffffu) throw std::length_error("npz member: expected < 4 GiB");
    const std::uint64_t offset = out.size();
    // Local file header (APPNOTE 4.3.7): version 20, no flags, stored, DOS time/date 0/(1980-01-01).
    put_le(out, 0x04034b50, 4);
    put_le(out, 20, 2);
    put_le(out, 0, 2);
    put_le(out, 0, 2);
    put_le(out, 0, 2);
    put_le(out, 0x21, 2);
    put_le(out, crc, 4);
    put_le(out, member.size(), 4);
    put_le(out, member.size(), 4);
    put_le(out, name.size(), 2);
    put_le(out, 0, 2);
    out += name;
    out += member;
    // Central directory entry (APPNOTE 4.3.12).
    put_le(directory, 0x02014b50, 4);
    put_le(directory, 20, 2);
    put_le(directory, 20, 2);
    put_le(directory, 0, 2);
    put_le(directory, 0, 2);
    put_le(directory, 0, 2);
    put_le(directory, 0x21, 2);
    put_le(directory, crc, 4);
    put_le(directory, member.size(), 4);
    put_le(directory, member.size(), 4);
    put_le(directory, name.size(), 2);
    put_le(directory, 0, 2);
    put_le(directory, 0, 2);
    put_le(directory, 0, 2);
    put_le(directory, 0, 2);
    put_le(directory, 0, 4);
    put_le(directory, offset, 4);
    directory += name;
  }
  const std::uint64_t dir_offset = out.size();
  out += directory;
  if (tensors.size() >= 0xffff || out.size() >= 0xffffffffu) throw std::length_error("npz: expected < 65535 members and < 4 GiB");
  put_le(out, 0x06054b50, 4);
  put_le(out, 0, 2);
  put_le(out, 0, 2);
  put_le(out, tensors.size(), 2);
  put_le(out, tensors.size(), 2);
  put_le(out, directory.size(), 4);
  put_le(out, dir_offset, 4);
  put_le(out, 0, 2);
  return out;
}

std::string safetensors_header(const std::vector<TensorLayout>& tensors, const std::vector<std::pair<std::string, std::string>>& metadata) {
  // Written as text, one entry after another: an ordered_json object searches its keys on every
  // insert, which made a suite of 131k small tests quadratic. Keys are JSON-escaped by the library.
  std::string text = "{";
  std::unordered_set<std::string> names;
  std::uint64_t offset = 0;
  for (const TensorLayout& t : tensors) {
    if (!names.insert(t.name).second) throw std::logic_error("safetensors_header: tensor " + t.name + " named twice");
    std::uint64_t count = 1;
    for (std::int64_t n : t.shape) count *= static_cast<std::uint64_t>(n);
    const std::uint64_t bytes = count * static_cast<std::uint64_t>(width_of(t.dtype));
    if (text.size() > 1) text += ',';
    text += nlohmann::json(t.name).dump() + ":{\"dtype\":" + nlohmann::json(t.dtype).dump() + ",\"shape\":" +
            nlohmann::json(t.shape).dump() + ",\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  if (!metadata.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metadata) m[key] = value;
    if (text.size() > 1) text += ',';
    text += "\"__metadata__\":" + m.dump();
  }
  text += '}';
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  put_le(out, text.size(), 8);
  return out + text;
}

std::string encode_values(const std::string& dtype, const std::vector<double>& values) {
  return raw_data(values, dtype);
}

int encoded_width(const std::string& dtype) { return width_of(dtype); }

void encode_values_to(const std::string& dtype, std::span<const double> values, char* out) { raw_data_to(values, dtype, out); }

std::string encode_safetensors(const std::vector<OutTensor>& tensors) {
  std::vector<TensorLayout> layout;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::string data;
  for (const OutTensor& t : tensors) {
    if (t.dtype == "U") {
      metadata.emplace_back(t.name, t.text);
      continue;
    }
    layout.push_back({t.name, t.dtype, t.shape});
    data += raw_data(t.values, t.dtype);
  }
  return safetensors_header(layout, metadata) + data;
}

}  // namespace ropecheck::tensorio
