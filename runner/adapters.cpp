#include "runner/adapters.h"

#include <cstring>
#include <stdexcept>

#include <ropecheck/kernel.h>

#include "base/errors.h"
#include "judge/inference.h"
#include "optimized/error_bounds.h"
#include "runner/abi_call.h"
#include "runner/golden_run.h"
#include "spec/schedule.h"

namespace ropecheck::runner {
namespace {

// The ABI's answer as a status of the implementation interface.
ApplyResult from_abi(AbiCallResult call) {
  ApplyResult result;
  if (!call.guard_intact) {
    result.status = ApplyResult::Status::guard;
    result.message = "wrote outside its output buffer (guard bytes changed)";
  } else if (call.status == ROPECHECK_ERROR_UNSUPPORTED) {
    result.status = ApplyResult::Status::unsupported;
    result.message = "the implementation reports this spec as unsupported";
  } else if (call.status != ROPECHECK_OK) {
    result.status = ApplyResult::Status::kernel_error;
    result.message = "returned status " + std::to_string(call.status) + " (" + ropecheck_status_message(call.status) + ")";
  } else {
    result.output = std::move(call.output);
  }
  return result;
}

}  // namespace

judge::Tolerance project_kernel_bound(const Spec& spec) {
  judge::Tolerance t;
  t.kind = judge::Tolerance::Kind::e;
  t.value = kernels::on_the_fly_bound(spec.dtype, attention_factor<double>(spec) == 1.0);
  t.source = "the project kernel's proven bound (optimized/error_bounds.h, proofs/formal/coq/ErrorBound.v)";
  return t;
}

KernelImplementation::KernelImplementation(std::string kernel, Claims claims, int threads)
    : Implementation(std::move(claims)), kernel_(std::move(kernel)), threads_(threads) {
  const char* resolved = ropecheck_kernel_resolve(kernel_.c_str());
  resolved_ = resolved != nullptr ? resolved : kernel_;
}

ApplyResult KernelImplementation::run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                      std::span<const double> input) const {
  if (std::string why = abi_declines(spec); !why.empty()) return {ApplyResult::Status::unsupported, why, {}};
  try {
    return from_abi(call_kernel(&ropecheck_kernel_apply, kernel_.c_str(), spec, shape, positions, input, threads_));
  } catch (const std::exception& e) {
    return {ApplyResult::Status::kernel_error, std::string("the spec cannot be passed through the C ABI: ") + e.what(), {}};
  }
}

// Under the exact model, and the f32-angle model too: the kernels' proven bound is relative to the
// exact values, which both models judge against, and is the tighter claim.
std::optional<judge::Tolerance> KernelImplementation::proven_bound(const Spec& spec, judge::Model model) const {
  if (!judge::judges_exact_values(model)) return std::nullopt;
  return project_kernel_bound(spec);
}

IsolatedImplementation::IsolatedImplementation(Source source, std::string plugin_path, std::string implementation,
                                               ChildLimits limits, Claims claims)
    : Implementation(std::move(claims)),
      source_(source),
      plugin_path_(std::move(plugin_path)),
      implementation_(std::move(implementation)),
      kernel_(source_, plugin_path_, implementation_, limits) {}

std::string IsolatedImplementation::name() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return (source_ == Source::plugin ? "plugin " + plugin_path_ + ": " : std::string("ropecheck kernel ")) + kernel_.describe();
}

std::string IsolatedImplementation::selector() const {
  if (source_ == Source::library) return "--impl " + implementation_;
  return "--plugin " + plugin_path_ + (implementation_ == "auto" ? std::string() : " --impl " + implementation_);
}

const ApplyResult* IsolatedImplementation::start_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kernel_.start_error();
}

ApplyResult IsolatedImplementation::run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                        std::span<const double> input) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kernel_.apply(spec, shape, positions, input);
}

std::optional<std::string> IsolatedImplementation::stopped_reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!kernel_.circuit_open()) return std::nullopt;
  return std::to_string(kCircuitBreakerTimeouts) + " consecutive calls timed out: the implementation is taken to hang "
         "and no further call is made (circuit breaker)";
}

std::optional<judge::Tolerance> IsolatedImplementation::proven_bound(const Spec& spec, judge::Model model) const {
  if (source_ != Source::library || !judge::judges_exact_values(model)) return std::nullopt;
  return project_kernel_bound(spec);
}

ApplyResult FunctionImplementation::run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                        std::span<const double> input) const {
  try {
    ApplyResult result;
    result.output = function_(spec, shape, positions, input);
    return result;
  } catch (const std::exception& e) {
    return {ApplyResult::Status::kernel_error, std::string(judge::kThrewPrefix) + e.what(), {}};
  }
}

std::string call_key(const Spec& spec, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input) {
  std::string key = to_string(spec);
  key += '|';
  for (std::int64_t n : {shape.tokens, shape.heads, shape.head_dim}) key.append(reinterpret_cast<const char*>(&n), sizeof n);
  key.append(reinterpret_cast<const char*>(positions.data()), positions.size_bytes());
  key.append(reinterpret_cast<const char*>(input.data()), input.size_bytes());
  return key;
}

CandidateFile::CandidateFile(std::string path, tensorio::TensorMap tensors, const std::vector<const golden::GoldenFile*>& golden,
                             Claims claims)
    : Implementation(std::move(claims)), path_(std::move(path)), tensors_(std::move(tensors)) {
  lone_ = tensors_.find("");
  const auto meta = tensors_.find("implementation");
  display_name_ = meta != tensors_.end() && meta->second.dtype == "U" ? meta->second.text + " (" + path_ + ")"
                                                                      : "candidate file " + path_;
  index_answers(golden);
}

CandidateFile::CandidateFile(std::string path, tensorio::TensorFile file, const std::vector<const golden::GoldenFile*>& golden,
                             Claims claims)
    : Implementation(std::move(claims)), path_(std::move(path)), file_(std::move(file)) {
  const tensorio::TensorFile::Entry* meta = file_->find("implementation");
  display_name_ = meta != nullptr && meta->dtype == "U" ? meta->text + " (" + path_ + ")" : "candidate file " + path_;
  // Attention answers are small: read now, so that attention() works as for a file read whole.
  for (const golden::GoldenFile* file : golden) {
    if (file->kind != golden::Kind::attention) continue;
    for (const golden::Group& group : file->groups) {
      for (const golden::AttentionTest& test : group.attention_tests) {
        for (const char* what : {"scores", "outputs"}) {
          const std::string name = tensor_name(file->suite, test.id, what);
          const tensorio::TensorFile::Entry* e = file_->find(name);
          if (e == nullptr) continue;
          tensorio::Tensor t;
          t.dtype = e->dtype;
          t.shape = e->shape;
          t.text = e->text;
          if (e->dtype != "U") t.values = file_->read(*e, 0, e->count);
          tensors_[name] = std::move(t);
        }
      }
    }
  }
  lone_ = tensors_.end();
  index_answers(golden);
}

void CandidateFile::index_answers(const std::vector<const golden::GoldenFile*>& golden) {
  const tensorio::TensorFile::Entry* lone_entry = file_ ? file_->find("") : nullptr;
  const std::uint64_t lone_size = lone_entry ? lone_entry->count : lone_ != tensors_.end() ? lone_->second.values.size() : 0;
  // A lone .npy holds every output concatenated in golden order (suites as given, tests in file order).
  std::uint64_t cursor = 0;
  for (const golden::GoldenFile* file : golden) {
    if (file->kind != golden::Kind::rope) continue;
    for (const golden::Group& group : file->groups) {
      for (const golden::RopeTest& test : group.rope_tests) {
        const auto elements = static_cast<std::uint64_t>(test.tokens * test.heads * test.head_dim);
        Answer answer;
        if (lone_ != tensors_.end() || lone_entry != nullptr) {
          if (lone_size - std::min(lone_size, cursor) < elements) {
            answer.status = ApplyResult::Status::missing;
            answer.message = path_ + " ends before this test's outputs (offset " + std::to_string(cursor) + ")";
          } else if (lone_entry != nullptr) {
            answer.entry = lone_entry;
            answer.first = cursor;
            answer.count = elements;
          } else {
            answer.values = lone_->second.values.data() + cursor;
            answer.count = elements;
          }
          cursor += elements;
        } else {
          const std::string name = tensor_name(file->suite, test.id, "output");
          const tensorio::Tensor* tensor = nullptr;
          const tensorio::TensorFile::Entry* entry = nullptr;
          if (file_) {
            entry = file_->find(name);
          } else if (const auto it = tensors_.find(name); it != tensors_.end()) {
            tensor = &it->second;
          }
          const std::string dtype = entry ? entry->dtype : tensor ? tensor->dtype : "";
          if (entry == nullptr && tensor == nullptr) {
            answer.status = ApplyResult::Status::missing;
            answer.message = "no tensor " + name + " in " + path_;
          } else if (dtype == "U") {
            answer.status = ApplyResult::Status::shape;
            answer.message = name + " is text, expected numbers";
          } else if (entry != nullptr) {
            answer.entry = entry;
            answer.count = entry->count;
          } else {
            answer.values = tensor->values.data();
            answer.count = tensor->values.size();
          }
        }
        // A sidecar test's input is not in memory: its call is known by spec, shape and positions.
        answers_.emplace(call_key(group.spec, Shape{test.tokens, test.heads, test.head_dim}, test.positions,
                                  test.sidecar ? std::span<const double>() : std::span<const double>(test.input)),
                         std::move(answer));
      }
    }
  }
  if (lone_size > cursor) {
    notes_.push_back(path_ + " holds " + std::to_string(lone_size - cursor) + " values beyond the golden tests' outputs");
  }
}

ApplyResult CandidateFile::run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                               std::span<const double> input) const {
  auto it = answers_.find(call_key(spec, shape, positions, input));
  if (it == answers_.end()) it = answers_.find(call_key(spec, shape, positions, {}));  // a sidecar test
  if (it == answers_.end()) {
    return {ApplyResult::Status::missing, "a candidate file answers the golden tests' calls only (" + path_ + ")", {}};
  }
  const Answer& a = it->second;
  ApplyResult result{a.status, a.message, {}};
  if (a.status == ApplyResult::Status::ok && a.entry != nullptr) {
    try {
      result.output = file_->read(*a.entry, a.first, a.count);
    } catch (const tensorio::ReaderError& e) {
      return {ApplyResult::Status::shape, e.what(), {}};
    }
  } else if (a.status == ApplyResult::Status::ok) {
    result.output.assign(a.values, a.values + a.count);
  }
  return result;
}

std::optional<AttentionAnswer> CandidateFile::attention(const std::string& suite, const golden::AttentionTest& test) const {
  AttentionAnswer answer;
  answer.scores = attention_tensor(tensor_name(suite, test.id, "scores"), {test.heads, test.q_tokens, test.k_tokens},
                                   "(heads, q_tokens, k_tokens)");
  answer.outputs = attention_tensor(tensor_name(suite, test.id, "outputs"), {test.q_tokens, test.heads, test.v_dim},
                                    "(q_tokens, heads, v_dim)");
  return answer;
}

const std::vector<double>* CandidateFile::attention_tensor(const std::string& key, const std::vector<std::int64_t>& expected,
                                                           const char* dims) const {
  const auto it = tensors_.find(key);
  if (it == tensors_.end()) return nullptr;
  // The shape must be `expected` up to size-1 dimensions (which leave the row-major order
  // unchanged: a batch of 1, a squeezed head), or 1-D with as many values; anything else is an input
  // error, since a transposed tensor would be judged element by element against the wrong values.
  auto shape_text = [](const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  };
  auto without_ones = [](const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> out;
    for (std::int64_t n : shape) {
      if (n != 1) out.push_back(n);
    }
    return out;
  };
  const tensorio::Tensor& t = it->second;
  if (t.dtype == "U") {
    throw InputError(path_ + ": " + key + ": expected numbers of shape " + shape_text(expected) + " " + dims + ", got text");
  }
  std::int64_t count = 1;
  for (std::int64_t n : expected) count *= n;
  const bool flat = t.shape.size() == 1 && t.shape[0] == count;
  if ((!flat && without_ones(t.shape) != without_ones(expected)) || static_cast<std::int64_t>(t.values.size()) != count) {
    throw InputError(path_ + ": " + key + ": expected shape " + shape_text(expected) + " " + dims + ", got " + shape_text(t.shape));
  }
  return &t.values;
}

}  // namespace ropecheck::runner
