// `ropecheck apply`: the reference applied to given inputs, printed exactly or written as .npy.
// With a fused spec (fused/README.md "The spec"): the fused reference of an inputs .npz, written as
// .npz (apply_fused below; the tensors of gate/commands/fused_files.h).
//
// The tensor goes through reference::apply_chunked, one ApplyPlan: a chunk of tokens at a time is
// read (a large .npy input a chunk at a time from the file), rounded to the input dtype, rotated in
// place and printed or encoded, so no tensor-sized buffer of doubles is held (`--out`) and every
// buffer is reused from chunk to chunk.

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/checked_json.h"
#include "fused/fused.h"
#include "gate/commands/command.h"
#include "gate/commands/fused_files.h"
#include "gate/commands/spec_options.h"
#include "gate/positions.h"
#include "gate/report.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "tensorio/readers.h"
#include "tensorio/writers.h"

namespace ropecheck::gate {
namespace {

// Nested arrays of numbers or float strings, flattened; the nesting is bounded by the parse
// (base/checked_json.h kMaxJsonDepth), so the recursion is too.
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
  nlohmann::json j =
      parse_json_file_checked<nlohmann::json>(bytes, path, "expected a JSON array of numbers or hex-float strings, or a .npy file");
  if (j.is_object() && j.contains("input")) j = nlohmann::json(j["input"]);
  std::vector<double> values;
  flatten_json(j, path, values);
  return values;
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

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// .npy inputs above this size are read a chunk at a time (tensorio::TensorFile: the values in the
// file's own dtype, never all of them as doubles); below it one read of the file is as fast, and
// malformed files get parse_npy_tensor's messages.
constexpr std::uint64_t kReadWholeBytes = std::uint64_t{1} << 24;

// The `--input` values: a large .npy file read where asked, or the values held (a list, JSON, a
// small .npy file).
class InputValues {
 public:
  explicit InputValues(const std::string& text) {
    std::error_code ec;
    if (ends_with(text, ".npy") && names_a_file(text) && std::filesystem::file_size(text, ec) > kReadWholeBytes && !ec) {
      try {
        tensorio::TensorFile file = tensorio::TensorFile::open(text);
        if (file.is_npy()) {
          file_.emplace(std::move(file));
          return;
        }
      } catch (const tensorio::ReaderError&) {
        // read whole below: its reader names what is wrong
      }
    }
    values_ = read_input(text);
  }
  std::uint64_t size() const { return file_ ? file_->elements() : values_.size(); }
  // Every value is a binary32 value (a float32 .npy read a chunk at a time): rounding to f32 keeps it.
  bool stored_as_f32() const { return file_ && file_->dtype() == "F32"; }
  // Values [first, first + out.size()) into `out` (through `bytes`, a buffer reused across calls).
  void read(std::uint64_t first, std::span<double> out, std::string& bytes) const {
    if (!file_) {
      std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(first), out.size(), out.begin());
      return;
    }
    file_->read_into(first, out, bytes);
  }

 private:
  std::optional<tensorio::TensorFile> file_;
  std::vector<double> values_;
};

// `apply --spec FUSED --input in.npz --out out.npz`: the fused reference (as `ropecheck fused apply`).
void apply_fused(const std::string& spec_text, const std::string& input, const std::string& out, const std::string& model, bool force) {
  fused::FusedSpec spec;
  try {
    spec = fused::parse_fused_spec(spec_text);
  } catch (const InputError& e) {
    throw UsageError(std::string("--spec: ") + e.what());
  }
  if (model != "exact")
    throw UsageError("--model: expected exact with a fused spec (the fused reference rounds the exact value), got " + model);
  if (input.empty() || !ends_with(input, ".npz")) {
    throw UsageError(
        "--input: expected the fused inputs .npz (q, k, positions, ...: `ropecheck fused inputs` writes one) with a fused spec, got '" +
        input + "'");
  }
  if (!ends_with(out, ".npz")) throw UsageError("--out: expected an .npz file for a fused spec's outputs, got '" + out + "'");
  struct stat st {};
  if (!force && ::lstat(out.c_str(), &st) == 0)
    throw UsageError(out + ": expected a new file, got an existing one (use --force to replace it)");
  const fused::FusedInputs in = read_fused_inputs(spec, FusedTensors::read_npz(input, tensorio::UnsignedCodes::refused));
  write_atomically(out, tensorio::encode_npz(fused_output_tensors(spec, in, fused::fused_reference(spec, in), "")), {input}, !force);
}

}  // namespace

void add_apply_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand("apply", "Apply the exact reference to inputs and print the correctly rounded outputs");
  struct Args {
    SpecOptions spec;
    std::string positions, input, model = "exact", format = "hex", out;
    std::int64_t heads = 0;
    int precision = 256;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  add_spec_options(cmd, args->spec, SpecCount::one);
  cmd->add_option("--positions", args->positions,
                  "One position per token: comma-separated, multi-axis tuples as m1:m2 (e.g. 3:5,4:5); a range START:STOP[:STEP] "
                  "(1-D specs); or a .npy/.json file of integers [tokens], [tokens, components] or [components, tokens] (a fused "
                  "spec: none, the inputs .npz holds them)");
  cmd->add_option("--input", args->input,
                  "Comma-separated decimal or hex-float values, or a .json/.npy file; row-major [tokens, heads, head_dim]; "
                  "values are rounded to the spec's input dtype; a fused spec: the fused inputs .npz")
      ->required();
  cmd->add_option("--heads", args->heads, "Heads per token (default: inferred from the input size)");
  cmd->add_option("--model", args->model, "Rounding model: exact | f32-recipe")->check(CLI::IsMember({"exact", "f32-recipe"}));
  cmd->add_option("--precision", args->precision, "Working precision in bits of the first attempt (>= 64)")->check(CLI::Range(64, 16384));
  auto* format =
      cmd->add_option("--format", args->format, "Output: hex (one C99 hex float per line) | json")->check(CLI::IsMember({"hex", "json"}));
  cmd->add_option("--out", args->out,
                  "Write the outputs to this .npy file instead ([tokens, heads, head_dim] in the spec's dtype; bf16 as "
                  "float32; a fused spec: the outputs .npz); a new file unless --force")
      ->excludes(format);
  cmd->add_flag("--force", args->force, "With --out: replace an existing file");
  cmd->callback([args, &status] {
    if (args->spec.specs.size() == 1 && args->spec.hf_configs.empty() && fused::has_fused_keys(args->spec.specs.front())) {
      if (!args->positions.empty() || args->heads != 0) {
        throw UsageError("--positions, --heads: expected none with a fused spec (the inputs .npz holds positions and heads)");
      }
      if (args->out.empty()) throw UsageError("--out: expected an .npz file for a fused spec's outputs (q_out, k_out or k_cache, scales)");
      apply_fused(args->spec.specs.front(), args->input, args->out, args->model, args->force);
      status = 0;
      return;
    }
    if (args->positions.empty()) throw CLI::RequiredError("--positions");
    const Spec spec = resolve_spec(args->spec);
    const int components = position_components(spec);
    if (!args->out.empty()) {
      if (!ends_with(args->out, ".npy")) throw UsageError("--out: expected a .npy file name, got " + args->out);
      // As `golden export --out`: an existing file is replaced only when asked, refused before the work.
      struct stat st {};
      if (!args->force && ::lstat(args->out.c_str(), &st) == 0) {
        throw UsageError(args->out + ": expected a new file, got an existing one (use --force to replace it)");
      }
    }
    std::vector<std::string> inputs;  // never written over
    for (const std::string* text : {&args->positions, &args->input}) {
      if (names_a_file(*text)) inputs.push_back(*text);
    }
    if (!args->out.empty()) check_report_paths({args->out}, inputs);
    // The counts first, from what is known before any position is read (a range, a .npy header).
    const std::optional<std::int64_t> known_tokens = positions_option_tokens(args->positions, components);
    const InputValues input(args->input);
    // Printed outputs (hex lines, one JSON document) are for inputs of a readable size; a tensor of
    // any size is streamed into --out (reference::apply_chunked holds one chunk).
    if (args->out.empty() && input.size() > kMaxInputValues) {
      throw InputError(args->input + ": shape: expected at most 2^26 values (apply --input), got " + std::to_string(input.size()) +
                       " (write them with --out F.npy)");
    }
    const auto values = static_cast<std::int64_t>(input.size());
    const auto heads_of = [&](std::int64_t tokens) {
      const std::int64_t per_token = values / std::max<std::int64_t>(tokens, 1);
      const std::int64_t heads = args->heads != 0 ? args->heads : per_token / spec.head_dim;
      // Checked: a product that wraps around (3 tokens x 3074457345618258603 heads x 2) could equal
      // the input's size.
      std::int64_t elements = 0;
      const bool overflow =
          __builtin_mul_overflow(tokens, heads, &elements) || __builtin_mul_overflow(elements, std::int64_t{spec.head_dim}, &elements);
      if (heads <= 0 || overflow || values != elements) {
        throw UsageError("--input: expected tokens*heads*head_dim values (tokens=" + std::to_string(tokens) +
                         ", head_dim=" + std::to_string(spec.head_dim) +
                         (args->heads ? ", heads=" + std::to_string(args->heads) : std::string()) + "), got " + std::to_string(values));
      }
      return heads;
    };
    if (known_tokens) heads_of(*known_tokens);
    const std::vector<std::int64_t> positions = parse_positions_option(args->positions, components);
    const std::int64_t tokens = static_cast<std::int64_t>(positions.size()) / components;
    const std::int64_t heads = heads_of(tokens);
    reference::Options options;
    options.precision_bits = args->precision;
    options.model = args->model == "exact" ? reference::Model::exact : reference::Model::f32_recipe;
    const reference::ApplyPlan plan(spec, options);
    const reference::Shape shape{tokens, heads, spec.head_dim};
    const Dtype input_dtype = input_dtype_of(spec);
    std::string bytes;  // the file's bytes of one chunk, reused
    auto load = [&](std::int64_t first, std::span<double> chunk) {
      input.read(static_cast<std::uint64_t>(first), chunk, bytes);
      if (!(input.stored_as_f32() && input_dtype == Dtype::f32)) reference::round_finite_to_format(chunk, input_dtype);
    };
    if (!args->out.empty()) {
      // bf16 as float32, as every .npy writer of the project (tensorio/writers.h): NumPy has no bfloat16.
      const std::string storage = spec.dtype == Dtype::bf16 ? "F32" : tensorio::storage_dtype(spec.dtype);
      const auto width = static_cast<std::size_t>(tensorio::encoded_width(storage));
      std::string encoded;  // one chunk's bytes, reused
      write_atomically_streamed(
          args->out, inputs,
          [&](const ChunkWriter& write) {
            write(tensorio::npy_header(storage, {tokens, heads, spec.head_dim}));
            reference::apply_chunked(plan, shape, positions, load, [&](std::int64_t, std::span<const double> out) {
              encoded.resize(out.size() * width);
              tensorio::encode_values_to(storage, out, encoded.data());
              write(encoded);
            });
          },
          !args->force);
    } else if (args->format == "hex") {
      reference::apply_chunked(plan, shape, positions, load, [&](std::int64_t, std::span<const double> out) {
        for (double v : out) std::printf("%s\n", reference::to_hex(v).c_str());
      });
    } else {
      std::vector<std::string> hex;
      reference::apply_chunked(plan, shape, positions, load, [&](std::int64_t, std::span<const double> out) {
        for (double v : out) hex.push_back(reference::to_hex(v));
      });
      nlohmann::ordered_json j;
      j["spec"] = nlohmann::ordered_json::parse(to_json(spec));
      j["model"] = args->model;
      j["shape"] = {tokens, heads, spec.head_dim};
      j["positions"] = positions;
      j["output"] = hex;
      std::printf("%s\n", j.dump(2).c_str());
    }
    status = 0;
  });
}

}  // namespace ropecheck::gate
