#include "gate/positions.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/checked_json.h"
#include "base/errors.h"
#include "gate/echo.h"
#include "spec/spec.h"
#include "tensorio/integers.h"
#include "tensorio/readers.h"

namespace ropecheck::gate {
namespace {

std::int64_t integer(const std::string& text, const std::string& option) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw UsageError(option + ": expected an integer, got " + echo(text));
  return value;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// Integer values of a file's numbers, row-major in
// `shape`, as [tokens, components] (components_axis decides where the components are).
std::vector<std::int64_t> integers_of(std::vector<std::int64_t> values, const std::vector<std::int64_t>& shape, int components,
                                      const std::string& file) {
  if (components_axis(shape, components, file) == ComponentsAxis::first && !values.empty()) {
    // [components, ...]: component k of token t is values[k * tokens + t].
    const std::size_t tokens = values.size() / static_cast<std::size_t>(components);
    std::vector<std::int64_t> rows(values.size());
    for (std::size_t k = 0; k < static_cast<std::size_t>(components); ++k) {
      for (std::size_t t = 0; t < tokens; ++t) rows[t * static_cast<std::size_t>(components) + k] = values[k * tokens + t];
    }
    values = std::move(rows);
  }
  if (static_cast<std::int64_t>(values.size()) / components > kMaxPositions) {
    throw InputError(file + ": shape: expected at most " + std::to_string(kMaxPositions) + " tokens");
  }
  if (values.empty()) throw InputError(file + ": positions: expected at least one token, got none");
  for (std::int64_t v : values) {
    if (v > (std::int64_t{1} << 62) || v < -(std::int64_t{1} << 62)) {
      throw InputError(file + ": position: expected integers of magnitude <= 2^62, got " + std::to_string(v));
    }
  }
  return values;
}

// Whether a regular file starts with the .npy magic (anything else — a FIFO, a folder — is left to
// read_file_bytes, which refuses it without waiting on it).
bool starts_with_npy_magic(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  char head[6] = {};
  return in.read(head, sizeof head) && std::string_view(head, 6) == "\x93NUMPY";
}

// A .npy positions file's header (dtype, shape, count), refused before any value is read: a 1 GiB
// file of positions is refused from its header, not after reading and converting it.
tensorio::TensorFile open_positions_npy(const std::string& path, int components) {
  tensorio::TensorFile file = [&] {
    try {
      return tensorio::TensorFile::open(path);
    } catch (const tensorio::ReaderError& e) {
      // A dtype the reader takes for other tensors (floats) is not a position: say which ones are.
      const std::string what = e.what();
      const auto got = what.find(", got ");
      if (what.find(": descr: ") != std::string::npos && got != std::string::npos) {
        throw InputError(path + ": descr: expected integers ('<i4' or '<i8')" + what.substr(got));
      }
      throw;
    }
  }();
  if (file.dtype() != "I64" && file.dtype() != "I32") {
    throw InputError(path + ": descr: expected integers ('<i4' or '<i8'), got " + file.dtype());
  }
  components_axis(file.shape(), components, path);  // a shape that holds no tokens is refused from the header too
  if (file.elements() / static_cast<std::uint64_t>(components) > static_cast<std::uint64_t>(kMaxPositions)) {
    throw InputError(path + ": shape: expected at most " + std::to_string(kMaxPositions) + " tokens");
  }
  return file;
}

std::vector<std::int64_t> read_positions_file(const std::string& path, int components) {
  if (starts_with_npy_magic(path)) {
    const tensorio::TensorFile file = open_positions_npy(path, components);
    // Exact integers (never through double): a position above 2^53 is the one stored.
    return integers_of(tensorio::read_integers(file, file.entries().begin()->second), file.shape(), components, path);
  }
  const std::string bytes = tensorio::read_file_bytes(path, std::uint64_t{1} << 32);
  nlohmann::json j =
      parse_json_file_checked<nlohmann::json>(bytes, path, "expected a JSON array of integer positions, or a .npy file of integers");
  if (j.is_object() && j.contains("positions")) j = nlohmann::json(j["positions"]);
  if (!j.is_array()) throw InputError(path + ": positions: expected a JSON array of integers");
  std::vector<std::int64_t> values;
  std::vector<std::int64_t> shape{static_cast<std::int64_t>(j.size())};
  // A JSON integer exactly as written (never through double); one above 2^63 - 1 is refused, not
  // wrapped to a negative position.
  const auto integer = [&](const nlohmann::json& v) {
    if (!v.is_number_integer()) throw InputError(path + ": positions: expected integers");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      throw InputError(path + ": position: expected integers of magnitude <= 2^62, got " + v.dump());
    }
    return v.get<std::int64_t>();
  };
  for (const auto& item : j) {
    if (item.is_array()) {
      if (shape.size() == 1) shape.push_back(static_cast<std::int64_t>(item.size()));
      if (static_cast<std::int64_t>(item.size()) != shape[1]) throw InputError(path + ": positions: expected rows of equal length");
      for (const auto& v : item) values.push_back(integer(v));
    } else if (item.is_number_integer() && shape.size() == 1) {
      values.push_back(integer(item));
    } else {
      throw InputError(path + ": positions: expected integers, or rows of " + std::to_string(components) + " integers");
    }
  }
  return integers_of(std::move(values), shape, components, path);
}

}  // namespace

ComponentsAxis components_axis(const std::vector<std::int64_t>& shape, int components, const std::string& what) {
  const std::size_t rank = shape.size();
  if (components == 1) return ComponentsAxis::none;
  if (rank >= 2 && shape.back() == components) return ComponentsAxis::last;
  if (rank >= 2 && shape.front() == components) return ComponentsAxis::first;
  const std::string c = std::to_string(components);
  throw InputError(what + ": shape: expected " + c + " integer components per token, [tokens, " + c + "] or [" + c +
                   ", tokens] (Qwen2-VL's position_ids), got " + shape_text(shape));
}

std::string heads_before_tokens(const std::vector<std::int64_t>& shape, std::int64_t tokens, std::int64_t head_dim,
                                const std::string& what) {
  const std::size_t rank = shape.size();
  if (rank < 3 || shape[rank - 1] != head_dim || tokens < 1) return "";
  std::int64_t leading = 1, batch = 1;  // the dims before heads; those before dim -3
  for (std::size_t i = 0; i + 2 < rank; ++i) leading *= shape[i];
  for (std::size_t i = 0; i + 3 < rank; ++i) batch *= shape[i];
  // [..., tokens, heads, head_dim] reads right: its leading dims hold the tokens, or dim -3 holds
  // one sequence's tokens (Python broadcasts positions over the batch).
  if (leading == tokens || shape[rank - 3] == tokens) return "";
  const std::int64_t sequence = shape[rank - 2];
  if (sequence != tokens && sequence * batch != tokens) return "";
  // One token per sequence, or one head: [batch, heads, 1, head_dim] and [batch, 1, tokens, head_dim]
  // hold their values in [batch, tokens, heads, head_dim]'s order (a decoding step reads right).
  if (sequence == 1 || shape[rank - 3] == 1) return "";
  const std::string swap = rank == 3 ? "0, 1" : std::to_string(rank - 3) + ", " + std::to_string(rank - 2);
  return what + ": shape " + shape_text(shape) + " reads as [" + std::string(rank == 3 ? "" : "batch, ") +
         "heads, tokens, head_dim] (HF transformers' layout; " + std::to_string(sequence) +
         " tokens per sequence from the positions): expected [tokens, heads, head_dim] or [batch, tokens, heads, head_dim]; "
         "transpose it first (torch: x.transpose(" +
         swap + "), NumPy: np.swapaxes(x, " + swap + "))";
}

bool names_a_file(const std::string& text) {
  struct stat st {};
  if (::stat(text.c_str(), &st) == 0) return true;
  return errno == ELOOP || (errno == EACCES && text.find('/') != std::string::npos);
}

namespace {

// A range START:STOP[:STEP] (STOP exclusive, Python's range) of a one-component spec: its length
// checked before anything is allocated.
struct Range {
  std::int64_t start = 0, step = 1;
  std::uint64_t count = 0;
};

std::optional<Range> range_of(const std::string& text, int components, const std::string& option) {
  if (components != 1 || text.find(':') == std::string::npos || split_list(text, ',').size() != 1) return std::nullopt;
  const std::vector<std::string> parts = split_list(text, ':');
  if (parts.size() > 3) throw UsageError(option + ": expected START:STOP[:STEP], got " + echo(text));
  Range r;
  r.start = integer(parts[0], option);
  const std::int64_t stop = integer(parts[1], option);
  r.step = parts.size() == 3 ? integer(parts[2], option) : 1;
  if (r.step < 1) throw UsageError(option + ": STEP: expected an integer >= 1, got " + std::to_string(r.step));
  if (stop < r.start) throw UsageError(option + ": expected START <= STOP, got " + echo(text));
  // (stop − start) cannot overflow as unsigned, nor can the count (a rounded-up quotient, without
  // adding step − 1 to a span near 2^64).
  const std::uint64_t span = static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(r.start);
  r.count = span / static_cast<std::uint64_t>(r.step) + (span % static_cast<std::uint64_t>(r.step) != 0);
  if (r.count > static_cast<std::uint64_t>(kMaxPositions)) {
    throw UsageError(option + ": expected at most " + std::to_string(kMaxPositions) + " positions, got " + std::to_string(r.count));
  }
  if (r.count == 0) throw UsageError(option + ": expected at least one token, got the empty range " + echo(text));
  return r;
}

}  // namespace

std::optional<std::int64_t> positions_option_tokens(const std::string& text, int components, const std::string& option) {
  if (names_a_file(text)) {
    if (!starts_with_npy_magic(text)) return std::nullopt;
    return static_cast<std::int64_t>(open_positions_npy(text, components).elements() / static_cast<std::uint64_t>(components));
  }
  if (const std::optional<Range> r = range_of(text, components, option)) return static_cast<std::int64_t>(r->count);
  return std::nullopt;
}

std::vector<std::int64_t> parse_positions_option(const std::string& text, int components, const std::string& option) {
  if (names_a_file(text)) return read_positions_file(text, components);
  if (const std::optional<Range> r = range_of(text, components, option)) {
    std::vector<std::int64_t> out;
    out.reserve(r->count);
    for (std::uint64_t i = 0; i < r->count; ++i)
      out.push_back(r->start + static_cast<std::int64_t>(i * static_cast<std::uint64_t>(r->step)));
    return out;
  }
  const std::vector<std::string> tokens = split_list(text, ',');
  if (tokens.empty()) throw UsageError(option + ": expected a list (3,5,8), a range START:STOP[:STEP] or a file, got ''");
  if (static_cast<std::int64_t>(tokens.size()) > kMaxPositions) {
    throw UsageError(option + ": expected at most " + std::to_string(kMaxPositions) + " positions");
  }
  std::vector<std::int64_t> out;
  for (const std::string& token : tokens) {
    const auto parts = split_list(token, ':');
    if (static_cast<int>(parts.size()) != components) {
      throw UsageError(option + ": expected " + std::to_string(components) + " ':'-separated component(s) per token, got " + echo(token) +
                       (components > 1 && tokens.size() == 1 ? " (a range START:STOP is for one-component specs only)" : ""));
    }
    for (const std::string& part : parts) out.push_back(integer(part, option));
  }
  return out;
}

}  // namespace ropecheck::gate
