#include "fuzz/search/candidate.h"

#include <cstring>
#include <stdexcept>

#include <ropecheck/kernel.h>

#include "gate/compare.h"
#include "gate/isolation.h"
#include "optimized/c_spec.h"
#include "optimized/error_bounds.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::fuzz {
namespace {

bool attention_is_one(const Spec& spec) { return attention_factor<long double>(spec) == 1.0L; }

using ApplyFn = std::int32_t (*)(const char*, const ropecheck_call*);

// Runs one C ABI apply: converts doubles to the dtype's storage, calls, converts back.
ApplyResult apply_through_abi(ApplyFn apply, const char* implementation, const Spec& spec, std::int64_t tokens,
                              std::span<const std::int64_t> positions, std::span<const double> input) {
  const kernels::CSpec c_spec(spec);
  const std::size_t count = input.size();
  const std::size_t element = ropecheck_dtype_size(static_cast<std::int32_t>(spec.dtype));
  std::vector<unsigned char> in_bytes(count * element), out_bytes(count * element);
  for (std::size_t i = 0; i < count; ++i) {
    switch (spec.dtype) {
      case Dtype::f64: std::memcpy(&in_bytes[i * 8], &input[i], 8); break;
      case Dtype::f32: {
        const float v = static_cast<float>(input[i]);
        std::memcpy(&in_bytes[i * 4], &v, 4);
        break;
      }
      case Dtype::f16:
      case Dtype::bf16: {
        const auto bits = static_cast<std::uint16_t>(reference::encode_bits(input[i], spec.dtype));
        std::memcpy(&in_bytes[i * 2], &bits, 2);
        break;
      }
    }
  }
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = tokens;
  call.positions = positions.data();
  call.q.heads = 1;
  call.q.input = in_bytes.data();
  call.q.input_token_stride = spec.head_dim;
  call.q.input_head_stride = spec.head_dim;
  call.q.output = out_bytes.data();
  call.q.output_token_stride = spec.head_dim;
  call.q.output_head_stride = spec.head_dim;
  call.threads = 1;
  ApplyResult result;
  result.status = apply(implementation, &call);
  if (result.status != ROPECHECK_OK) return result;
  result.output.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    switch (spec.dtype) {
      case Dtype::f64: std::memcpy(&result.output[i], &out_bytes[i * 8], 8); break;
      case Dtype::f32: {
        float v = 0;
        std::memcpy(&v, &out_bytes[i * 4], 4);
        result.output[i] = v;
        break;
      }
      case Dtype::f16:
      case Dtype::bf16: {
        std::uint16_t bits = 0;
        std::memcpy(&bits, &out_bytes[i * 2], 2);
        result.output[i] = reference::decode_bits(bits, spec.dtype);
        break;
      }
    }
  }
  return result;
}

class KernelCandidate final : public Candidate {
 public:
  explicit KernelCandidate(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string selector() const override { return "--impl " + name_; }
  double default_tolerance(const Spec& spec) const override {
    return kernels::on_the_fly_bound(spec.dtype, attention_is_one(spec));
  }
  std::string tolerance_source(const Spec&) const override {
    return "the kernels' on-the-fly bound for this dtype (optimized/error_bounds.h)";
  }
  ApplyResult apply(const Spec& spec, std::int64_t tokens, std::span<const std::int64_t> positions,
                    std::span<const double> input) const override {
    return apply_through_abi(&ropecheck_kernel_apply, name_.c_str(), spec, tokens, positions, input);
  }

 private:
  std::string name_;
};

class ReferenceCandidate final : public Candidate {
 public:
  explicit ReferenceCandidate(reference::Model model) : model_(model) {}
  std::string name() const override {
    return model_ == reference::Model::exact ? "reference" : "reference-f32-recipe";
  }
  std::string selector() const override { return "--impl " + name(); }
  double default_tolerance(const Spec& spec) const override {
    return model_ == reference::Model::exact ? 1.0 : gate::default_tolerance(gate::Model::exact, spec).value;
  }
  std::string tolerance_source(const Spec& spec) const override {
    return model_ == reference::Model::exact
               ? "correct rounding: half an ulp of A is at most u*|A| <= u*rho*g (reference/error_metric.h)"
               : "the gate's " + gate::default_tolerance(gate::Model::exact, spec).source;
  }
  ApplyResult apply(const Spec& spec, std::int64_t tokens, std::span<const std::int64_t> positions,
                    std::span<const double> input) const override {
    reference::Options options;
    options.model = model_;
    ApplyResult result;
    result.output = reference::apply(spec, reference::Shape{tokens, 1, spec.head_dim}, positions, input, options);
    return result;
  }

 private:
  reference::Model model_;
};

class PluginCandidate final : public Candidate {
 public:
  PluginCandidate(std::string path, double timeout_seconds)
      : path_(std::move(path)), kernel_(gate::Source::plugin, path_, "auto", timeout_seconds) {
    if (const gate::ApplyResult* error = kernel_.start_error()) {
      throw std::invalid_argument("--plugin " + path_ + ": " + error->message);
    }
  }
  std::string name() const override { return path_; }
  std::string selector() const override { return "--plugin " + path_; }
  double default_tolerance(const Spec& spec) const override {
    return gate::default_tolerance(gate::Model::exact, spec).value;
  }
  std::string tolerance_source(const Spec& spec) const override {
    return "the gate's " + gate::default_tolerance(gate::Model::exact, spec).source;
  }
  ApplyResult apply(const Spec& spec, std::int64_t tokens, std::span<const std::int64_t> positions,
                    std::span<const double> input) const override {
    gate::ApplyResult r = kernel_.apply(spec, reference::Shape{tokens, 1, spec.head_dim}, positions, input);
    ApplyResult result;
    switch (r.status) {
      case gate::ApplyResult::Status::ok: result.output = std::move(r.output); break;
      case gate::ApplyResult::Status::unsupported: result.status = ROPECHECK_ERROR_UNSUPPORTED; break;
      default:
        result.status = ROPECHECK_ERROR_INTERNAL;
        result.message = std::string(gate::kind_name(r.status)) + ": " + r.message;
        break;
    }
    return result;
  }

 private:
  std::string path_;
  mutable gate::IsolatedKernel kernel_;  // a child process serving calls; restarted after a crash
};

}  // namespace

std::vector<std::string> implementation_names() {
  std::vector<std::string> names;
  for (std::int32_t i = 0; i < ropecheck_kernel_count(); ++i) {
    const char* name = ropecheck_kernel_name(i);
    if (name != nullptr && ropecheck_kernel_available(name) == 1) names.emplace_back(name);
  }
  names.emplace_back("auto");
  names.emplace_back("reference");
  names.emplace_back("reference-f32-recipe");
  return names;
}

std::unique_ptr<Candidate> make_implementation(const std::string& name) {
  if (name == "reference") return std::make_unique<ReferenceCandidate>(reference::Model::exact);
  if (name == "reference-f32-recipe") return std::make_unique<ReferenceCandidate>(reference::Model::f32_recipe);
  if (ropecheck_kernel_available(name.c_str()) == 1) {
    const char* resolved = ropecheck_kernel_resolve(name.c_str());
    return std::make_unique<KernelCandidate>(resolved != nullptr ? resolved : name);
  }
  std::string known;
  for (const std::string& n : implementation_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("--impl: expected one of " + known + " (available on this machine), got '" + name + "'");
}

std::unique_ptr<Candidate> make_plugin(const std::string& path, double timeout_seconds) {
  return std::make_unique<PluginCandidate>(path, timeout_seconds);
}

}  // namespace ropecheck::fuzz
