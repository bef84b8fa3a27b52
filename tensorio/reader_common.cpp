// The readers' shared pieces (tensorio/reader_detail.h).
#include "tensorio/reader_detail.h"

#include <bit>

#include "base/checked_json.h"
#include "reference/rounding.h"

namespace ropecheck::tensorio::detail {

void fail(std::string_view file, std::string_view field, std::string_view expected) {
  throw ReaderError(std::string(file) + ": " + std::string(field) + ": expected " + std::string(expected));
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
  } else if (dtype == "F32" || dtype == "BF16") {
    // binary32 and bfloat16 (a binary32's upper half) are exact through float: every value by the
    // hardware's conversion, a loop without a branch that the compiler vectorizes (decode_bits' NaN
    // test per value keeps it scalar: bench/README.md "NaN scan"), then the NaNs, if
    // any, again through decode_bits (the project's one quiet NaN, with the sign).
    const auto through_float = [&]<int w>() {
      const auto word = [&](std::uint64_t i) { return static_cast<std::uint32_t>(read_le(p + i * w, w) << (32 - 8 * w)); };
      std::uint32_t nan_seen = 0;
      for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint32_t x = word(i);
        out[i] = static_cast<double>(std::bit_cast<float>(x));
        nan_seen |= static_cast<std::uint32_t>((x & 0x7fffffffu) > 0x7f800000u);
      }
      if (nan_seen == 0) return;
      for (std::uint64_t i = 0; i < count; ++i) {
        if ((word(i) & 0x7fffffffu) > 0x7f800000u) out[i] = reference::decode_bits(read_le(p + i * w, w), w == 4 ? Dtype::f32 : Dtype::bf16);
      }
    };
    if (dtype == "F32") {
      through_float.template operator()<4>();
    } else {
      through_float.template operator()<2>();
    }
  } else if (dtype == "F16") {
    each([](std::uint64_t bits) { return reference::decode_bits(bits, Dtype::f16); });
  } else if (dtype == "I64") {
    each([](std::uint64_t bits) { return static_cast<double>(static_cast<std::int64_t>(bits)); });
  } else if (dtype == "U8" || dtype == "U16") {
    each([](std::uint64_t bits) { return static_cast<double>(bits); });
  } else {
    each([](std::uint64_t bits) { return static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(bits))); });
  }
}

std::vector<double> decode(const char* p, std::uint64_t count, std::string_view dtype) {
  std::vector<double> out(count);
  decode_to(p, count, dtype, out.data());
  return out;
}

// User JSON through the one checked parse (base/checked_json.h): bounded nesting, linear time, each
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

}  // namespace ropecheck::tensorio::detail
