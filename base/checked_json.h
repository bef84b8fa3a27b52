// The one parse of user JSON (spec objects, candidate outputs, safetensors headers, `apply
// --input` files, fuzz reports given to `report merge`): bounded nesting, a key given twice in one
// object noticed, and time linear in the text. nlohmann::json keeps the last value of a repeated
// key silently, recurses in dump() and its destructor-free copies, and its callback parser scans a
// parent container once per closed child (quadratic in the number of siblings: 40 000 tensors in a
// safetensors header took 8.6 s); the SAX handler here builds the document itself instead.
// Header-only and templated on the JSON type, so that this header does not pull nlohmann/json into
// its includers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/errors.h"

namespace ropecheck {

// Deeper nesting is refused before parsing: no reader needs more (a candidate tensor has at most 32
// dimensions inside its object), and recursive steps (dump, a nested walk) stay shallow.
inline constexpr int kMaxJsonDepth = 64;

// The byte offset of the first '[' or '{' outside strings nested deeper than `max_depth`, or npos.
inline std::size_t json_nesting_exceeds(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

struct JsonNotes {
  std::string duplicate;                             // the first key given twice in one object; empty: none
  std::size_t too_deep_at = std::string_view::npos;  // where nesting exceeds the limit (then nothing is parsed)
  int max_depth = kMaxJsonDepth;                     // the limit

  bool too_deep() const { return too_deep_at != std::string_view::npos; }
  // "byte N: expected JSON nested at most 64 deep, got deeper": the readers' messages say it alike.
  std::string too_deep_message() const {
    return "byte " + std::to_string(too_deep_at) + ": expected JSON nested at most " + std::to_string(max_depth) +
           " deep, got deeper";
  }
};

namespace detail {

// nlohmann's SAX interface, building the document like its own DOM parser (a stack of the open
// containers; a child is complete before its parent grows again, so the pointers stay valid).
template <class Json>
class CheckedDomBuilder {
 public:
  explicit CheckedDomBuilder(Json& root, JsonNotes& notes) : root_(root), notes_(notes) {}

  bool null() { return add(Json(nullptr)); }
  bool boolean(bool v) { return add(Json(v)); }
  bool number_integer(typename Json::number_integer_t v) { return add(Json(v)); }
  bool number_unsigned(typename Json::number_unsigned_t v) { return add(Json(v)); }
  bool number_float(typename Json::number_float_t v, const typename Json::string_t&) { return add(Json(v)); }
  bool string(typename Json::string_t& v) { return add(Json(std::move(v))); }
  bool binary(typename Json::binary_t& v) { return add(Json(std::move(v))); }
  bool start_object(std::size_t) {
    Json* object = place(Json(Json::value_t::object));
    open_.push_back(object);
    keys_.emplace_back();
    return true;
  }
  bool key(typename Json::string_t& k) {
    key_is_new_ = keys_.back().insert(k).second;
    if (!key_is_new_ && notes_.duplicate.empty()) notes_.duplicate = k;
    key_ = std::move(k);
    return true;
  }
  bool end_object() {
    open_.pop_back();
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    open_.push_back(place(Json(Json::value_t::array)));
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;
  }

 private:
  bool add(Json&& value) {
    place(std::move(value));
    return true;
  }
  // Puts `value` where the parse is (the root, the open array's end, or the open object under the
  // last key) and returns where it lies.
  Json* place(Json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    auto& object = parent.template get_ref<typename Json::object_t&>();
    if constexpr (requires { object.emplace_back(std::move(key_), std::move(value)); }) {
      // An ordered object (a vector of pairs) would search itself for the key on every insertion
      // (quadratic): a new key is appended; a repeated one keeps its first value, as ordered_map does.
      if (key_is_new_) {
        object.emplace_back(std::move(key_), std::move(value));
        return &object.back().second;
      }
      return &object.emplace(std::move(key_), std::move(value)).first->second;
    } else {
      return &object.emplace(std::move(key_), std::move(value)).first->second;
    }
  }

  Json& root_;
  JsonNotes& notes_;
  std::vector<Json*> open_;
  std::vector<std::unordered_set<std::string>> keys_;  // per open object
  typename Json::string_t key_;
  bool key_is_new_ = true;
};

}  // namespace detail

// Parses `text` (throws what Json::parse throws on invalid JSON) in time linear in its length. A
// nesting deeper than `max_depth` sets notes.too_deep_at and returns null without parsing; the first
// key that appears twice in one object is notes.duplicate (the document keeps one of its values).
template <class Json>
Json parse_json_checked(std::string_view text, JsonNotes& notes, int max_depth = kMaxJsonDepth) {
  notes = JsonNotes{};
  notes.max_depth = max_depth;
  Json root;
  notes.too_deep_at = json_nesting_exceeds(text, max_depth);
  if (notes.too_deep()) return root;
  detail::CheckedDomBuilder<Json> builder(root, notes);
  Json::sax_parse(text.begin(), text.end(), &builder);
  return root;
}

// A user's JSON file through parse_json_checked, refused in one line naming `file`: `not_json`
// when the text is not JSON, the nesting when too deep, a key given twice (the parse would keep
// one value of it: a `{"positions": [1], "positions": [2]}` read as [1, 2]).
template <class Json>
Json parse_json_file_checked(std::string_view text, const std::string& file, const std::string& not_json) {
  JsonNotes notes;
  Json j;
  try {
    j = parse_json_checked<Json>(text, notes);
  } catch (const typename Json::exception&) {
    throw InputError(file + ": " + not_json);
  }
  if (notes.too_deep()) throw InputError(file + ": " + notes.too_deep_message());
  if (!notes.duplicate.empty()) throw InputError(file + ": " + notes.duplicate + ": expected each key once, got it twice");
  return j;
}

}  // namespace ropecheck
