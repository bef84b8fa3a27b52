#include "gate/check.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <future>
#include <string_view>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "base/errors.h"
#include "base/parallel.h"
#include "gate/positions.h"
#include "gate/progress.h"
#include "proofs/catalog.h"
#include "proofs/runner.h"
#include "runner/adapters.h"
#include "runner/registry.h"
#include "runner/tensor_judge.h"
#include "tensorio/readers.h"

namespace ropecheck::gate {
namespace {

int finish(Report& report, const ReportPaths& paths, const std::vector<std::string>& inputs) {
  report.decide();
  emit_reports(report, paths.json, paths.junit, paths.html, inputs, paths.text);
  return report.verdict == judge::Verdict::pass ? 0 : 1;
}

// Candidate files above this size are read a test at a time (tensorio::TensorFile), so that the
// memory of a check follows one test, not the file (a 537 M-value candidate is 2.1 GB of f32; held
// whole, its values take 8 bytes each). Below it, one read of the file is the faster way.
constexpr std::uint64_t kReadWholeBytes = std::uint64_t{1} << 24;

std::uint64_t file_size(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::uint64_t>(size);
}

// One tensor of the direct check, mapped or streamed from a .npy or safetensors file (its only
// tensor, or the one named `preferred`), or held whole when the file is another format (npz, JSON:
// likewise). The format is told from the first bytes (tensorio/readers.h sniff_format): a file of
// none is refused from them, and a .npy or safetensors file is never read whole (its reader's error
// is the error).
class TensorSource {
 public:
  TensorSource(const std::string& path, const std::string& preferred) : path_(path) {
    const tensorio::Format format = tensorio::sniff_file_format(path);
    if (format == tensorio::Format::npy || format == tensorio::Format::safetensors) {
      std::optional<std::string> first_error;
      for (const std::string& name : {std::string(), preferred}) {
        try {
          file_.emplace(tensorio::TensorFile::open(path, name));
          mapped_ = file_->map();
          return;
        } catch (const tensorio::ReaderError& e) {
          if (!first_error) first_error = e.what();  // not that tensor: the named one may be there
        }
      }
      throw InputError(*first_error);
    }
    tensorio::TensorMap map = tensorio::parse_candidate(tensorio::read_candidate_bytes(path), path);
    // In the JSON form a key without '/' is metadata (tensorio/readers.h); "input" / "output"
    // holding an array is the tensor here, read by the same reader under a tensor's name.
    if (auto it = map.find(preferred); it != map.end() && it->second.dtype == "U" && it->second.text.rfind('[', 0) == 0) {
      tensorio::TensorMap one = tensorio::parse_candidate_json("{\"direct/" + preferred + "\": " + it->second.text + "}", path);
      it->second = std::move(one.begin()->second);
    }
    std::vector<std::string> names;
    for (auto& [name, t] : map) {
      if (t.dtype != "U") names.push_back(name);
    }
    std::string chosen;
    if (map.count(preferred) && map[preferred].dtype != "U")
      chosen = preferred;
    else if (names.size() == 1)
      chosen = names[0];
    else
      throw InputError(path + ": tensors: expected one tensor (or one named " + preferred + "), got " + std::to_string(names.size()));
    values_ = std::move(map[chosen].values);
    shape_ = std::move(map[chosen].shape);
  }
  std::uint64_t elements() const { return file_ ? file_->elements() : values_.size(); }
  // The values where they are, when they can be read so: a mapped file's floating-point tensor
  // (tensorio/readers.h TensorFile::map) or the values read whole. Empty for a file read in chunks.
  std::optional<runner::TensorValues> in_place() const {
    if (!file_) return std::span<const double>(values_);
    if (!mapped_) return std::nullopt;
    const auto n = static_cast<std::size_t>(mapped_->elements());
    const std::string& dtype = mapped_->dtype();
    if (dtype == "F64") return std::span(static_cast<const double*>(mapped_->data()), n);
    if (dtype == "F32") return std::span(static_cast<const float*>(mapped_->data()), n);
    const std::span bits(static_cast<const std::uint16_t*>(mapped_->data()), n);
    if (dtype == "F16") return runner::Binary16Span{bits};
    return runner::Bfloat16Span{bits};
  }
  // The mapping, handed over (none when the values are not mapped): for a caller done reading them.
  std::optional<tensorio::MappedTensor> take_mapping() { return std::exchange(mapped_, std::nullopt); }
  // The mapping while held, else null.
  const tensorio::MappedTensor* mapping() const { return mapped_ ? &*mapped_ : nullptr; }
  const std::vector<std::int64_t>& shape() const { return file_ ? file_->shape() : shape_; }
  // Values [first, first + out.size()) into `out`, through `bytes` (buffers the caller reuses).
  void read_into(std::uint64_t first, std::span<double> out, std::string& bytes) const {
    if (!file_) {
      std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(first), out.size(), out.begin());
      return;
    }
    file_->read_into(first, out, bytes);
  }

 private:
  std::string path_;
  std::optional<tensorio::TensorFile> file_;
  std::optional<tensorio::MappedTensor> mapped_;
  std::vector<double> values_;
  std::vector<std::int64_t> shape_;
};

// The direct check of a tensor that cannot be read in place (integers, a safetensors tensor at an
// odd offset), read a chunk at a time.
GroupResult judge_read_in_chunks(const Spec& spec, std::uint64_t heads, std::uint64_t tokens, int components,
                                 const std::vector<std::int64_t>& positions, const TensorSource& input, const TensorSource& output,
                                 const judge::Settings& settings, const std::string& label, Progress& progress) {
  const std::uint64_t token_size = heads * static_cast<std::uint64_t>(spec.head_dim);
  runner::TensorJudge judge(spec, static_cast<std::int64_t>(heads), settings, label);
  const std::uint64_t chunk = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(runner::TensorJudge::kChunkElements) / token_size);
  // The next chunk is read (and decoded to doubles) while this one is judged: reading is one
  // thread's work, judging every thread's, and one after the other the reading was a check's serial
  // part. One chunk ahead: memory is two chunks' arrays, each used again two chunks later (the judge
  // gives the input's back), so a check of any length faults in four arrays, not two per chunk (a
  // fresh array's page faults cost more than reading it: bench/README.md
  // "A check's memory: population").
  struct Chunk {
    std::vector<double> input, output;
  };
  std::string input_bytes, output_bytes;  // the one read in flight's block buffers
  const auto read_chunk = [&](std::uint64_t t, Chunk c) {
    const std::uint64_t n = std::min(chunk, tokens - t);
    // The two files at once, each on a thread of its own (the first chunk is read before anything
    // can be judged), which also populates its new arrays (the first two chunks').
    std::future<void> other = std::async(std::launch::async, [&] {
      resize_for_overwrite(c.output, n * token_size, 1);
      output.read_into(t * token_size, c.output, output_bytes);
    });
    resize_for_overwrite(c.input, n * token_size, 1);
    input.read_into(t * token_size, c.input, input_bytes);
    other.get();
    return c;
  };
  std::future<Chunk> next = std::async(std::launch::async, read_chunk, std::uint64_t{0}, Chunk{});
  // While the first chunk is read: writing the diagnosis's arrays was the first serial step after it.
  judge.expect(static_cast<std::int64_t>(tokens));
  judge.prepare(static_cast<std::int64_t>(tokens));
  Chunk spare;
  // The arrays no later read takes are freed while the last chunk is judged and diagnosed
  // (runner/tensor_judge.h release_on_own_thread).
  std::vector<std::future<void>> released;
  for (std::uint64_t t = 0; t < tokens; t += chunk) {
    const std::uint64_t n = std::min(chunk, tokens - t);
    Chunk current = next.get();
    if (t + chunk < tokens) {
      next = std::async(std::launch::async, read_chunk, t + chunk, std::move(spare));
    } else {
      released.push_back(runner::release_on_own_thread(std::move(spare)));
    }
    current.input =
        judge.add(std::span(positions).subspan(t * static_cast<std::uint64_t>(components), n * static_cast<std::uint64_t>(components)),
                  std::move(current.input), current.output);
    spare = std::move(current);
    progress.update(static_cast<std::int64_t>(t + n), "tokens");
  }
  released.push_back(runner::release_on_own_thread(std::move(spare)));
  return judge.finish();
}

int run_direct_check(const CheckArguments& args) {
  if (!args.golden.empty()) throw UsageError("check: expected --golden or --spec, not both");
  if (args.positions.empty()) throw UsageError("check --spec: expected --positions (a list, a range START:STOP, or a file)");
  if (args.input.empty()) throw UsageError("check --spec: expected --input FILE (the tensor the candidate rotated)");
  if (args.heads < 0) throw UsageError("--heads: expected an integer >= 1 (or 0: from the sizes), got " + std::to_string(args.heads));
  check_report_paths({args.reports.json, args.reports.junit, args.reports.html}, {args.candidate, args.input, args.positions});
  const judge::Settings settings = settings_of(args.judge);
  if (!settings.skip_flags.empty()) throw UsageError("--skip-flags: golden flags do not apply to check --spec");
  const Spec& spec = *args.spec;
  const int components = position_components(spec);
  // The counts first, from what is known before any position is read (a range, a .npy header).
  const std::optional<std::int64_t> known_tokens = positions_option_tokens(args.positions, components);
  TensorSource input(args.input, "input");
  TensorSource output(args.candidate, "output");
  const auto head_dim = static_cast<std::uint64_t>(spec.head_dim);
  std::uint64_t heads = 0, token_size = 0, elements = 0;
  const auto check_sizes = [&](std::uint64_t tokens) {
    if (tokens == 0) throw UsageError("--positions: expected at least one token");
    // Any shape with the right count is read row-major as [tokens, heads, head_dim]; HF's
    // [batch, heads, tokens, head_dim] has it too, in another order: refused, naming the transpose.
    for (const auto& [path, source] : {std::pair{&args.input, &input}, std::pair{&args.candidate, &output}}) {
      const std::string message = heads_before_tokens(source->shape(), static_cast<std::int64_t>(tokens), spec.head_dim, *path);
      if (!message.empty()) throw InputError(message);
    }
    heads = static_cast<std::uint64_t>(std::max<std::int64_t>(args.heads, 0));
    if (heads == 0) heads = input.elements() / tokens / head_dim;
    if (heads == 0 || __builtin_mul_overflow(heads, head_dim, &token_size) || __builtin_mul_overflow(token_size, tokens, &elements) ||
        elements != input.elements()) {
      throw InputError(args.input + ": shape: expected tokens x heads x head_dim values (tokens " + std::to_string(tokens) +
                       " from --positions, head_dim " + std::to_string(head_dim) +
                       (args.heads ? ", heads " + std::to_string(args.heads) : std::string()) + "), got " +
                       std::to_string(input.elements()));
    }
    if (output.elements() != elements) {
      throw InputError(args.candidate + ": shape: expected " + std::to_string(elements) + " values (as many as " + args.input + "), got " +
                       std::to_string(output.elements()));
    }
  };
  if (known_tokens) check_sizes(static_cast<std::uint64_t>(*known_tokens));
  const std::vector<std::int64_t> positions = parse_positions_option(args.positions, components);
  const auto tokens = static_cast<std::uint64_t>(positions.size() / static_cast<std::size_t>(components));
  check_sizes(tokens);
  Report report;
  report.command = "check";
  report.model = settings.claims.model;
  report.implementation = "candidate file " + args.candidate;
  report.candidate = args.candidate;
  report.scope = scope_of(settings, 0, 0);
  report.worst_listed = settings.worst_cases;
  report.notes.push_back("direct check: " + std::to_string(tokens) + " tokens x " + std::to_string(heads) + " heads of " + to_string(spec) +
                         " from " + args.input + ", positions " + args.positions);
  Progress progress(static_cast<std::int64_t>(tokens));
  const std::optional<runner::TensorValues> input_values = input.in_place(), output_values = output.in_place();
  if (input_values && output_values) {
    // Both where they are (mapped, or read whole): Python's check, to the line — no reading, each
    // chunk widened on every thread (runner/tensor_judge.h judge_tensor_values). The values of the tokens
    // judged are not read again: after each chunk their mapped pages are let go (MappedTensor::
    // release_before) on a thread of their own while the next chunk is judged, so that the files'
    // pages do not add to the peak resident set; once every token is judged the mappings are undone
    // there too, while the diagnosis runs, not after the reports (bench/README.md
    // "A check's memory: chunks").
    std::future<void> unmapped, released_pages;
    report.groups.push_back(runner::judge_tensor_values(
        spec, static_cast<std::int64_t>(heads), positions, *input_values, *output_values, settings, args.candidate, [&](std::int64_t done) {
          progress.update(done, "tokens");
          if (released_pages.valid()) released_pages.get();
          if (done == static_cast<std::int64_t>(tokens)) {
            unmapped = runner::release_on_own_thread(std::make_pair(input.take_mapping(), output.take_mapping()));
            return;
          }
          const std::uint64_t judged = static_cast<std::uint64_t>(done) * token_size;
          released_pages = std::async(std::launch::async | std::launch::deferred, [in = input.mapping(), out = output.mapping(), judged] {
            for (const tensorio::MappedTensor* mapping : {in, out}) {
              if (mapping) mapping->release_before(judged);
            }
          });
        }));
  } else {
    report.groups.push_back(
        judge_read_in_chunks(spec, heads, tokens, components, positions, input, output, settings, args.candidate, progress));
  }
  if (const std::string note = rounded_inputs_note(report.groups.back()); !note.empty()) report.notes.push_back(note);
  return finish(report, args.reports, {args.input, args.candidate, args.positions});
}

// Whether a file's first bytes are a .npy magic or a safetensors header (8-byte length, then '{'):
// the formats read a test at a time. An .npz or JSON candidate of any size is read whole.
bool streamable(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[9] = {};
  if (!in.read(head, sizeof head)) return false;
  return std::string_view(head, 6) == "\x93NUMPY" || head[8] == '{';
}

// `text` as one shell word: as is when it has only characters no shell treats specially, else in
// single quotes (POSIX sh: nothing inside is special; a ' is written '\'').
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./=,:+-@%").find(c) != std::string_view::npos;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The `run` command that replays one identity of `run --props`: the same implementation, claim,
// child limits, cases and seed (RapidCheck's same cases and shrinks), that identity alone. Options
// left at their defaults are left out.
std::string replay_command(const RunArguments& args, const std::string& identity) {
  const RunArguments defaults;
  std::string command = "ropecheck run";
  if (!args.plugin.empty()) command += " --plugin " + shell_word(args.plugin);
  if (!args.implementation.empty()) command += " --impl " + shell_word(args.implementation);
  if (args.judge.model != defaults.judge.model) command += " --model " + shell_word(args.judge.model);
  if (!args.judge.tolerance.empty()) command += " --tolerance " + shell_word(args.judge.tolerance);
  if (args.timeout != defaults.timeout) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.17g", args.timeout);
    command += " --timeout " + std::string(seconds);
  }
  if (args.memory_limit_mib != defaults.memory_limit_mib) command += " --memory-limit " + std::to_string(args.memory_limit_mib);
  command += " --props";
  if (args.props_cases != defaults.props_cases) command += " --props-cases " + std::to_string(args.props_cases);
  return command + " --seed " + std::to_string(args.seed) + " --property " + identity;
}

// --property: a catalog identity's name, and only with --props.
void check_property_option(const RunArguments& args) {
  if (args.property.empty()) return;
  if (!args.props) throw UsageError("--property: runs one identity of --props; expected --props too");
  if (proofs::find_identity(args.property)) return;
  std::string names;
  for (const proofs::Identity& identity : proofs::catalog()) names += (names.empty() ? "" : ", ") + std::string(identity.name);
  throw UsageError("--property: expected one of " + names + ", got '" + args.property + "'");
}

}  // namespace

int run_check(const CheckArguments& args) {
  if (args.spec) return run_direct_check(args);
  if (args.golden.empty()) throw UsageError("check: expected --golden FILE|FOLDER, or --spec with --positions and --input");
  check_report_paths({args.reports.json, args.reports.junit, args.reports.html}, {args.golden, args.candidate});
  const judge::Settings settings = settings_of(args.judge);  // every option checked before the work
  const runner::Claims& claims = settings.claims;
  const std::vector<runner::LoadedGolden> suites = runner::load_golden(args.golden, settings.threads);
  std::vector<const golden::GoldenFile*> files;
  for (const runner::LoadedGolden& g : suites) files.push_back(&g.file);
  // A big .npy or safetensors candidate is read one test at a time (memory of one test, as the
  // sidecar suites it answers); the others whole.
  std::unique_ptr<runner::CandidateFile> candidate;
  if (file_size(args.candidate) > kReadWholeBytes && streamable(args.candidate)) {
    candidate = std::make_unique<runner::CandidateFile>(args.candidate, tensorio::TensorFile::open(args.candidate), files, claims);
  } else {
    candidate = std::make_unique<runner::CandidateFile>(
        args.candidate, tensorio::parse_candidate(tensorio::read_candidate_bytes(args.candidate), args.candidate), files, claims);
  }
  Report report = judge_into_report(suites, *candidate, settings, "check");
  report.candidate = args.candidate;
  for (const std::string& note : candidate->notes()) report.notes.push_back(note);
  std::vector<std::string> inputs = report.golden_files;
  inputs.push_back(args.candidate);
  return finish(report, args.reports, inputs);
}

int run_implementation(const RunArguments& args) {
  if (args.implementation.empty() && args.plugin.empty()) throw UsageError("run: expected --impl NAME or --plugin PATH");
  check_property_option(args);
  check_report_paths({args.reports.json, args.reports.junit, args.reports.html}, {args.golden, args.plugin});
  const judge::Settings settings = settings_of(args.judge);
  runner::RegistryOptions registry;
  registry.claims = settings.claims;
  registry.timeout_seconds = args.timeout;
  registry.memory_limit_mib = args.memory_limit_mib;
  const std::unique_ptr<runner::Implementation> implementation = runner::make_implementation({args.implementation, args.plugin}, registry);
  const std::vector<runner::LoadedGolden> suites = runner::load_golden(args.golden, settings.threads);
  Report report = judge_into_report(suites, *implementation, settings, "run");
  report.candidate = args.plugin.empty() ? args.implementation : args.plugin;
  if (const auto* isolated = dynamic_cast<const runner::IsolatedImplementation*>(implementation.get())) {
    if (const runner::ApplyResult* e = isolated->start_error()) {
      report.notes.push_back(std::string(runner::kind_name(e->status)) + ": " + e->message);
    }
  }
  if (const std::optional<std::string> reason = implementation->stopped_reason()) report.notes.push_back("stopped: " + *reason);
  if (args.props) {
    proofs::RunOptions run_options;
    run_options.cases = args.props_cases;
    run_options.seed = args.seed;
    for (const proofs::Identity& identity : proofs::catalog()) {
      if (!args.property.empty() && identity.name != args.property) continue;
      const proofs::IdentityReport r = proofs::run_identity(identity, *implementation, run_options);
      PropertyResult p;
      p.name = r.name;
      p.formula = std::string(identity.formula);
      p.proof = std::string(identity.proof);
      p.holds = r.holds;
      p.cases = r.cases;
      p.gave_up = r.gave_up;
      p.worst_units = r.tally.worst_units;
      p.failure = r.failure;
      p.counterexample = r.counterexample;
      if (!p.holds && !p.gave_up) p.replay = replay_command(args, p.name);
      report.properties.push_back(std::move(p));
    }
  }
  std::vector<std::string> inputs = report.golden_files;
  if (!args.plugin.empty()) inputs.push_back(args.plugin);
  return finish(report, args.reports, inputs);
}

}  // namespace ropecheck::gate
