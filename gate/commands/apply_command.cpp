// `ropecheck apply`: the reference applied to given inputs, printed exactly.

#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gate/commands/command.h"
#include "gate/positions.h"
#include "gate/commands/spec_options.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/json_keys.h"
#include "tensorio/readers.h"

namespace ropecheck::gate {
namespace {

// Nested arrays of numbers or float strings, flattened; the nesting is bounded by the parse
// (spec/json_keys.h kMaxJsonDepth), so the recursion is too.
void flatten_json(const nlohmann::json& j, const std::string& file, std::vector<double>& out) {
  if (j.is_array()) {
    for (const auto& item : j) flatten_json(item, file, out);
  } else if (j.is_number()) {
    out.push_back(j.get<double>());
  } else if (j.is_string()) {
    try {
      out.push_back(reference::parse_float(j.get<std::string>()));
    } catch (const std::invalid_argument& e) {
      throw InputError(file + ": input value: " + e.what());
    }
  } else {
    std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > 40) text = text.substr(0, 40) + "...";
    throw InputError(file + ": input value: expected a number or a hex-float string, got " + text);
  }
}

// The most values `apply --input` takes (gate/README.md "What bad input gets"): the input and the
// output are held as doubles, 1 GiB at the cap; each is one correctly rounded rotation. A .npy file
// is refused above it from its header, before its values are read; any input file above
// kMaxInputFileBytes by its size (a 4 GiB .npy was read whole and ended in an internal error).
constexpr std::uint64_t kMaxInputValues = std::uint64_t{1} << 26;
constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{1} << 30;

std::vector<double> read_input_file(const std::string& path) {
  try {
    if (path.size() >= 4 && path.substr(path.size() - 4) == ".npy") {
      std::optional<tensorio::TensorFile> file;
      try {
        if (tensorio::sniff_file_format(path) == tensorio::Format::npy) file.emplace(tensorio::TensorFile::open(path));
      } catch (const tensorio::ReaderError&) {
        // not a .npy file its header reader takes: the whole-file reader below names what is wrong
      }
      if (file) {
        if (file->elements() > kMaxInputValues) {
          throw InputError(path + ": shape: expected at most 2^26 values (apply --input), got " + std::to_string(file->elements()));
        }
        return file->read(0, file->elements());
      }
      return tensorio::parse_npy_tensor(tensorio::read_file_bytes(path, kMaxInputFileBytes), path).values;
    }
    const std::string bytes = tensorio::read_file_bytes(path, kMaxInputFileBytes);
    JsonNotes notes;
    nlohmann::json j;
    try {
      j = parse_json_checked<nlohmann::json>(bytes, notes);
    } catch (const nlohmann::json::exception&) {
      throw InputError(path + ": expected a JSON array of numbers or hex-float strings, or a .npy file");
    }
    if (notes.too_deep()) throw InputError(path + ": " + notes.too_deep_message());
    // A repeated key would merge its arrays (spec/json_keys.h keeps one value): refused, as every
    // reader of user JSON does.
    if (!notes.duplicate.empty()) throw InputError(path + ": " + notes.duplicate + ": expected each key once, got it twice");
    if (j.is_object() && j.contains("input")) j = nlohmann::json(j["input"]);
    std::vector<double> values;
    flatten_json(j, path, values);
    return values;
  } catch (const tensorio::ReaderError& e) {
    throw InputError(e.what());
  }
}

// `--input` names a file (gate/positions.h names_a_file), or is the values themselves.
std::vector<double> read_input(const std::string& text) {
  if (names_a_file(text)) return read_input_file(text);
  std::vector<double> values;
  for (const std::string& item : split_list(text, ',')) {
    try {
      values.push_back(reference::parse_float(item));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--input: ") + e.what() + " (or an existing .json/.npy file)");
    }
  }
  return values;
}

}  // namespace

void add_apply_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand("apply", "Apply the exact reference to inputs and print the correctly rounded outputs");
  struct Args {
    SpecOptions spec;
    std::string positions, input, model = "exact", format = "hex";
    std::int64_t heads = 0;
    int precision = 256;
  };
  auto args = std::make_shared<Args>();
  add_spec_options(cmd, args->spec, SpecCount::one);
  cmd->add_option("--positions", args->positions,
                  "One position per token: comma-separated, multi-axis tuples as m1:m2 (e.g. 3:5,4:5); a range START:STOP[:STEP] "
                  "(1-D specs); or a .npy/.json file of integers [tokens] or [tokens, components]")
      ->required();
  cmd->add_option("--input", args->input,
                  "Comma-separated decimal or hex-float values, or a .json/.npy file; row-major [tokens, heads, head_dim]; "
                  "values are rounded to the spec's input dtype")
      ->required();
  cmd->add_option("--heads", args->heads, "Heads per token (default: inferred from the input size)");
  cmd->add_option("--model", args->model, "Rounding model: exact | f32-recipe")->check(CLI::IsMember({"exact", "f32-recipe"}));
  cmd->add_option("--precision", args->precision, "Working precision in bits of the first attempt (>= 64)")
      ->check(CLI::Range(64, 16384));
  cmd->add_option("--format", args->format, "Output: hex (one C99 hex float per line) | json")
      ->check(CLI::IsMember({"hex", "json"}));
  cmd->callback([args, &status] {
    const Spec spec = resolve_spec(args->spec);
    const int components = position_components(spec);
    const std::vector<std::int64_t> positions = parse_positions_option(args->positions, components);
    std::vector<double> input = read_input(args->input);
    const std::int64_t tokens = static_cast<std::int64_t>(positions.size()) / components;
    const std::int64_t per_token = static_cast<std::int64_t>(input.size()) / std::max<std::int64_t>(tokens, 1);
    std::int64_t heads = args->heads;
    if (heads == 0) heads = per_token / spec.head_dim;
    // Checked: a product that wraps around (3 tokens x 3074457345618258603 heads x 2) could equal
    // the input's size.
    std::int64_t elements = 0;
    const bool overflow = __builtin_mul_overflow(tokens, heads, &elements) ||
                          __builtin_mul_overflow(elements, std::int64_t{spec.head_dim}, &elements);
    if (heads <= 0 || overflow || static_cast<std::int64_t>(input.size()) != elements) {
      throw UsageError("--input: expected tokens*heads*head_dim values (tokens=" + std::to_string(tokens) +
                       ", head_dim=" + std::to_string(spec.head_dim) +
                       (args->heads ? ", heads=" + std::to_string(args->heads) : std::string()) + "), got " +
                       std::to_string(input.size()));
    }
    for (double& v : input) {
      if (std::isfinite(v)) v = reference::round_to_format(v, input_dtype_of(spec));
    }
    reference::Options options;
    options.precision_bits = args->precision;
    options.model = args->model == "exact" ? reference::Model::exact : reference::Model::f32_recipe;
    const std::vector<double> out =
        reference::apply(spec, reference::Shape{tokens, heads, spec.head_dim}, positions, input, options);
    if (args->format == "hex") {
      for (double v : out) std::printf("%s\n", reference::to_hex(v).c_str());
    } else {
      nlohmann::ordered_json j;
      j["spec"] = nlohmann::ordered_json::parse(to_json(spec));
      j["model"] = args->model;
      j["shape"] = {tokens, heads, spec.head_dim};
      j["positions"] = positions;
      std::vector<std::string> hex;
      for (double v : out) hex.push_back(reference::to_hex(v));
      j["output"] = hex;
      std::printf("%s\n", j.dump(2).c_str());
    }
    status = 0;
  });
}

}  // namespace ropecheck::gate
