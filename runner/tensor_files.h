// Reading a user's tensor files for judging: the direct check's two tensors (`check --spec`),
// mapped where they lie or read in chunks while they are judged (runner/tensor_judge.h), and a
// golden check's candidate file, read whole or one test at a time by its size and format. What is
// judged and how is tensor_judge.h's and the golden loop's; this file only decides how the bytes
// come in, so that the reports are the same whichever way they come.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "golden/golden.h"
#include "judge/group.h"
#include "runner/adapters.h"
#include "runner/golden_run.h"
#include "runner/implementation.h"
#include "runner/tensor_judge.h"
#include "spec/spec.h"
#include "tensorio/readers.h"

namespace ropecheck::runner {

// One tensor of the direct check, mapped or streamed from a .npy or safetensors file (its only
// tensor, or the one named `preferred`), or held whole when the file is another format (npz, JSON:
// likewise). The format is told from the first bytes (tensorio/readers.h sniff_format): a file of
// none is refused from them, and a .npy or safetensors file is never read whole (its reader's error
// is the error). Throws InputError naming the file.
class TensorSource {
 public:
  TensorSource(const std::string& path, const std::string& preferred);
  std::uint64_t elements() const { return file_ ? file_->elements() : values_.size(); }
  const std::vector<std::int64_t>& shape() const { return file_ ? file_->shape() : shape_; }
  // The values where they are, when they can be read so: a mapped file's floating-point tensor
  // (tensorio/readers.h TensorFile::map) or the values read whole. Empty for a file read in chunks.
  std::optional<TensorValues> in_place() const;
  // The mapping, handed over (none when the values are not mapped): for a caller done reading them.
  std::optional<tensorio::MappedTensor> take_mapping() { return std::exchange(mapped_, std::nullopt); }
  // The mapping while held, else null.
  const tensorio::MappedTensor* mapping() const { return mapped_ ? &*mapped_ : nullptr; }
  // Values [first, first + out.size()) into `out`, through `bytes` (buffers the caller reuses).
  void read_into(std::uint64_t first, std::span<double> out, std::string& bytes) const;

 private:
  std::string path_;
  std::optional<tensorio::TensorFile> file_;
  std::optional<tensorio::MappedTensor> mapped_;
  std::vector<double> values_;
  std::vector<std::int64_t> shape_;
};

// The direct check of `input` rotated into `output` ([tokens, heads, head_dim] each, positions
// [tokens, position_components(spec)]; the caller checked the sizes): one group, as
// judge_tensor_values gives it. Both tensors in place: judged where they are, the pages of the
// tokens judged let go after each chunk and the mappings undone once every token is judged, on a
// thread of their own (bench/README.md "A check's memory: chunks"). Else read a chunk at a time,
// the next chunk read while one is judged. `progress`, when given, is told the tokens judged so far.
judge::GroupResult judge_tensor_sources(const Spec& spec, std::uint64_t heads, std::span<const std::int64_t> positions, TensorSource& input,
                                        TensorSource& output, const judge::Settings& settings, const std::string& label,
                                        const std::function<void(std::int64_t)>& progress = {});

// A golden check's candidate file answering `golden`: a .npy or safetensors file above 16 MiB read
// one test at a time (the memory of one test, as the sidecar suites it answers), any other read
// whole in one read (kReadWholeBytes in tensor_files.cpp).
std::unique_ptr<CandidateFile> open_candidate_file(const std::string& path, const std::vector<const golden::GoldenFile*>& golden,
                                                   const Claims& claims);

}  // namespace ropecheck::runner
