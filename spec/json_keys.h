// JSON parsing that notices a key given twice in one object. nlohmann::json keeps the last value
// of a repeated key silently; every reader of user JSON here (spec objects, candidate outputs,
// safetensors headers) refuses it instead, with its own one-line error. Header-only and templated
// on the JSON type, so that this header does not pull nlohmann/json into its includers.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ropecheck {

// Parses `text` (throws what Json::parse throws on invalid JSON) and sets `duplicate` to the first
// key that appears twice in one object, or leaves it empty. The parser callback sees each object's
// keys in order; one set of keys per open object.
template <class Json>
Json parse_json_noting_duplicate_keys(std::string_view text, std::string& duplicate) {
  std::vector<std::set<std::string>> keys_per_object;
  duplicate.clear();
  const typename Json::parser_callback_t callback = [&](int, typename Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) keys_per_object.emplace_back();
    if (event == Json::parse_event_t::object_end && !keys_per_object.empty()) keys_per_object.pop_back();
    if (event == Json::parse_event_t::key && !keys_per_object.empty() &&
        !keys_per_object.back().insert(parsed.template get<std::string>()).second && duplicate.empty()) {
      duplicate = parsed.template get<std::string>();
    }
    return true;
  };
  return Json::parse(text, callback);
}

}  // namespace ropecheck
