// safetensors (readers.h parse_safetensors; huggingface/safetensors README, "Format").
#include <algorithm>
#include <utility>

#include "tensorio/reader_detail.h"

namespace ropecheck::tensorio {
using namespace detail;

namespace detail {

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

}  // namespace detail

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

}  // namespace ropecheck::tensorio
