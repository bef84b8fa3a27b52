#include "runner/tensor_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <string_view>
#include <utility>

#include "base/errors.h"
#include "base/parallel.h"

namespace ropecheck::runner {

TensorSource::TensorSource(const std::string& path, const std::string& preferred) : path_(path) {
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

std::optional<TensorValues> TensorSource::in_place() const {
  if (!file_) return std::span<const double>(values_);
  if (!mapped_) return std::nullopt;
  const auto n = static_cast<std::size_t>(mapped_->elements());
  const std::string& dtype = mapped_->dtype();
  if (dtype == "F64") return std::span(static_cast<const double*>(mapped_->data()), n);
  if (dtype == "F32") return std::span(static_cast<const float*>(mapped_->data()), n);
  const std::span bits(static_cast<const std::uint16_t*>(mapped_->data()), n);
  if (dtype == "F16") return Binary16Span{bits};
  return Bfloat16Span{bits};
}

void TensorSource::read_into(std::uint64_t first, std::span<double> out, std::string& bytes) const {
  if (!file_) {
    std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(first), out.size(), out.begin());
    return;
  }
  file_->read_into(first, out, bytes);
}

namespace {

// The direct check of a tensor that cannot be read in place (integers, a safetensors tensor at an
// odd offset), read a chunk at a time.
judge::GroupResult judge_read_in_chunks(const Spec& spec, std::uint64_t heads, std::span<const std::int64_t> positions,
                                        const TensorSource& input, const TensorSource& output, const judge::Settings& settings,
                                        const std::string& label,
                                        const std::function<void(std::int64_t)>& progress) {
  const auto components = static_cast<std::uint64_t>(position_components(spec));
  const std::uint64_t tokens = positions.size() / components;
  const std::uint64_t token_size = heads * static_cast<std::uint64_t>(spec.head_dim);
  TensorJudge judge(spec, static_cast<std::int64_t>(heads), settings, label);
  const std::uint64_t chunk = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(TensorJudge::kChunkElements) / token_size);
  // The next chunk is read (and decoded to doubles) while this one is judged: reading is one
  // thread's work, judging every thread's. One chunk ahead: memory is two chunks' arrays, each used
  // again two chunks later (the judge gives the input's back), so a check of any length faults in
  // four arrays, not two per chunk (bench/README.md "A check's memory: population").
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
  // While the first chunk is read: the diagnosis's arrays, the first serial step after it.
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
      released.push_back(release_on_own_thread(std::move(spare)));
    }
    current.input = judge.add(positions.subspan(t * components, n * components), std::move(current.input), current.output);
    spare = std::move(current);
    if (progress) progress(static_cast<std::int64_t>(t + n));
  }
  released.push_back(release_on_own_thread(std::move(spare)));
  return judge.finish();
}

// Whether a file's first bytes are a .npy magic or a safetensors header (8-byte length, then '{'):
// the formats read a test at a time. An .npz or JSON candidate of any size is read whole.
bool streamable(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[9] = {};
  if (!in.read(head, sizeof head)) return false;
  return std::string_view(head, 6) == "\x93NUMPY" || head[8] == '{';
}

std::uint64_t file_size(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::uint64_t>(size);
}

// Candidate files above this size are read a test at a time (tensorio::TensorFile), so that the
// memory of a check follows one test, not the file (a 537 M-value candidate is 2.1 GB of f32; held
// whole, its values take 8 bytes each). Below it the file is read whole, in one read.
constexpr std::uint64_t kReadWholeBytes = std::uint64_t{1} << 24;

}  // namespace

judge::GroupResult judge_tensor_sources(const Spec& spec, std::uint64_t heads, std::span<const std::int64_t> positions, TensorSource& input,
                                        TensorSource& output, const judge::Settings& settings, const std::string& label,
                                        const std::function<void(std::int64_t)>& progress) {
  const std::optional<TensorValues> input_values = input.in_place(), output_values = output.in_place();
  if (!input_values || !output_values) return judge_read_in_chunks(spec, heads, positions, input, output, settings, label, progress);
  // Both where they are (mapped, or read whole): Python's check, to the line — no reading, each
  // chunk widened on every thread (judge_tensor_values). The values of the tokens judged are not
  // read again: after each chunk their mapped pages are let go (MappedTensor::release_before) on a
  // thread of their own while the next chunk is judged, so that the files' pages do not add to the
  // peak resident set; once every token is judged the mappings are undone there too, while the
  // diagnosis runs, not after the reports (bench/README.md "A check's memory: chunks").
  const auto tokens = static_cast<std::int64_t>(positions.size() / static_cast<std::size_t>(position_components(spec)));
  const std::uint64_t token_size = heads * static_cast<std::uint64_t>(spec.head_dim);
  std::future<void> unmapped, released_pages;
  return judge_tensor_values(
      spec, static_cast<std::int64_t>(heads), positions, *input_values, *output_values, settings, label, [&](std::int64_t done) {
        if (progress) progress(done);
        if (released_pages.valid()) released_pages.get();
        if (done == tokens) {
          unmapped = release_on_own_thread(std::make_pair(input.take_mapping(), output.take_mapping()));
          return;
        }
        const std::uint64_t judged = static_cast<std::uint64_t>(done) * token_size;
        released_pages = std::async(std::launch::async | std::launch::deferred, [in = input.mapping(), out = output.mapping(), judged] {
          for (const tensorio::MappedTensor* mapping : {in, out}) {
            if (mapping) mapping->release_before(judged);
          }
        });
      });
}

std::unique_ptr<CandidateFile> open_candidate_file(const std::string& path, const std::vector<const golden::GoldenFile*>& golden,
                                                   const Claims& claims) {
  if (file_size(path) > kReadWholeBytes && streamable(path)) {
    return std::make_unique<CandidateFile>(path, tensorio::TensorFile::open(path), golden, claims);
  }
  return std::make_unique<CandidateFile>(path, tensorio::parse_candidate(tensorio::read_candidate_bytes(path), path), golden, claims);
}

}  // namespace ropecheck::runner
