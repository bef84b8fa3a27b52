// The adapters of the implementation interface (runner/implementation.h) other than the reference
// (runner/reference_implementation.h): a project kernel called in process, a project kernel or a
// plugin served by a child process, a C++ function, and a candidate file. runner/registry.h makes
// them from the command line.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runner/implementation.h"
#include "runner/isolation.h"
#include "tensorio/readers.h"

namespace ropecheck::runner {

// The proven bound of the project's kernels for a spec (optimized/error_bounds.h on_the_fly_bound,
// proofs/formal f32/f16/bf16_kernel_bound and f64_rotation_bound), as a tolerance.
judge::Tolerance project_kernel_bound(const Spec& spec);

// A project kernel (scalar, avx2, avx512, avx512bf16, cuda, auto) called in this process through the C ABI
// with guard bytes (runner/abi_call.h). Claims its proven bound under the exact model.
class KernelImplementation final : public Implementation {
 public:
  // `kernel` as the ABI names it; `threads` as ropecheck_call.threads (0: all cores).
  KernelImplementation(std::string kernel, Claims claims, int threads = 1);
  std::string name() const override { return "ropecheck kernel " + resolved_; }
  std::string selector() const override { return "--impl " + kernel_; }
  ApplyResult run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                  std::span<const double> input) const override;

 protected:
  std::optional<judge::Tolerance> proven_bound(const Spec& spec, judge::Model model) const override;

 private:
  std::string kernel_;
  std::string resolved_;
  int threads_;
};

// A plugin (a shared library exporting include/ropecheck/kernel.h), or a project kernel, served by a
// child process (runner/isolation.h): a crash, a hang or a write outside the output buffer is that
// call's failure. Calls are serialised (one child).
class IsolatedImplementation final : public Implementation {
 public:
  IsolatedImplementation(Source source, std::string plugin_path, std::string implementation, ChildLimits limits,
                         Claims claims);
  std::string name() const override;
  std::string selector() const override;
  ApplyResult run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                  std::span<const double> input) const override;
  std::optional<std::string> stopped_reason() const override;
  // The load or ABI failure of the child, when it could not start.
  const ApplyResult* start_error() const;

 protected:
  std::optional<judge::Tolerance> proven_bound(const Spec& spec, judge::Model model) const override;

 private:
  Source source_;
  std::string plugin_path_;
  std::string implementation_;
  mutable std::mutex mutex_;
  mutable IsolatedKernel kernel_;
};

// A C++ function: the GoogleTest matcher (runner/gtest.h) and the Python module call through it.
using RopeFunction = std::function<std::vector<double>(const Spec&, Shape, std::span<const std::int64_t>,
                                                       std::span<const double>)>;
class FunctionImplementation final : public Implementation {
 public:
  FunctionImplementation(std::string name, RopeFunction function, Claims claims = {})
      : Implementation(std::move(claims)), name_(std::move(name)), function_(std::move(function)) {}
  std::string name() const override { return name_; }
  std::string selector() const override { return name_; }
  // An exception from the function is that call's `kernel_error`, with its message.
  ApplyResult run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                  std::span<const double> input) const override;

 private:
  std::string name_;
  RopeFunction function_;
};

// A candidate file's outputs for the golden tests (gate/README.md "File layout"): SUITE/ID/output
// per RoPE test, SUITE/ID/scores and SUITE/ID/outputs per attention test, or a lone .npy holding
// every RoPE output concatenated in golden order. run() answers a golden test's call by looking up
// the test with that spec, positions and input; any other call is `missing`.
class CandidateFile final : public Implementation {
 public:
  // `golden`: the suites the file answers, in the order a lone .npy concatenates them.
  CandidateFile(std::string path, tensorio::TensorMap tensors, const std::vector<const golden::GoldenFile*>& golden,
                Claims claims);
  // The same over a .npy or safetensors file read one tensor at a time (a candidate for a big
  // sidecar suite: memory of one test). Sidecar tests are looked up by spec, shape and positions.
  CandidateFile(std::string path, tensorio::TensorFile file, const std::vector<const golden::GoldenFile*>& golden,
                Claims claims);
  std::string name() const override { return display_name_; }
  std::string selector() const override { return "--candidate " + path_; }
  ApplyResult run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                  std::span<const double> input) const override;
  std::optional<AttentionAnswer> attention(const std::string& suite, const golden::AttentionTest& test) const override;
  // Notes for the report (e.g. values of a lone .npy beyond the golden tests' outputs).
  const std::vector<std::string>& notes() const { return notes_; }
  bool lone_npy() const { return lone_ != tensors_.end() || (file_ && file_->find("") != nullptr); }

 private:
  // Attention tensor `key` when the file has it (null otherwise), its shape checked against
  // `expected`; throws InputError naming the file and tensor.
  const std::vector<double>* attention_tensor(const std::string& key, const std::vector<std::int64_t>& expected,
                                              const char* dims) const;
  struct Answer {
    ApplyResult::Status status = ApplyResult::Status::ok;
    std::string message;
    const double* values = nullptr;
    std::size_t count = 0;
    const tensorio::TensorFile::Entry* entry = nullptr;  // read from file_ when asked
    std::uint64_t first = 0;
  };
  void index_answers(const std::vector<const golden::GoldenFile*>& golden);
  std::string path_;
  std::string display_name_;
  tensorio::TensorMap tensors_;
  tensorio::TensorMap::const_iterator lone_;
  std::optional<tensorio::TensorFile> file_;
  std::unordered_map<std::string, Answer> answers_;  // key: spec, shape, positions and input bytes
  std::vector<std::string> notes_;
};

// Another implementation whose generated positions are limited to |m| ≤ max (`props
// --max-position`: the identities at the user's context length); everything else is the inner one's.
class PositionLimit final : public Implementation {
 public:
  PositionLimit(std::unique_ptr<Implementation> inner, std::int64_t max_position)
      : Implementation(Claims{inner->claims().model, std::nullopt}), inner_(std::move(inner)), max_position_(max_position) {}
  std::string name() const override { return inner_->name(); }
  std::string selector() const override { return inner_->selector(); }
  ApplyResult run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                  std::span<const double> input) const override {
    return inner_->run(spec, shape, positions, input);
  }
  bool supports(const Spec& spec) const override { return inner_->supports(spec); }
  std::int64_t max_position() const override { return std::min(max_position_, inner_->max_position()); }
  bool supports_negative_positions() const override { return inner_->supports_negative_positions(); }
  std::optional<std::vector<Real>> apply_exact(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                               std::span<const double> input) const override {
    return inner_->apply_exact(spec, shape, positions, input);
  }
  int exact_precision_bits() const override { return inner_->exact_precision_bits(); }

 protected:
  std::optional<judge::Tolerance> proven_bound(const Spec& spec, judge::Model) const override { return inner_->tolerance(spec); }
  std::optional<ErrorClaim> own_claim(const Spec& spec) const override { return inner_->claim(spec); }

 private:
  std::unique_ptr<Implementation> inner_;
  std::int64_t max_position_;
};

// The key CandidateFile looks a call up by.
std::string call_key(const Spec& spec, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input);

}  // namespace ropecheck::runner
