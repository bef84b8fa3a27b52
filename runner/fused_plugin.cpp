#include "runner/fused_plugin.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fused/fp8.h"
#include "optimized/c_spec.h"
#include "reference/rounding.h"
#include "runner/abi_call.h"
#include "runner/child_process.h"

namespace ropecheck::runner {
namespace {

using Clock = std::chrono::steady_clock;

constexpr unsigned char kGuardByte = 0xA5;

// One output buffer of `bytes`, pre-filled with all-ones bytes, between kGuardBytes guard bytes on
// each side (runner/abi_call.h): a write just past either end changes them and is reported as `guard`.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::size_t bytes) : bytes_(bytes), data_(bytes + 2 * kGuardBytes, kGuardByte) {
    std::memset(data_.data() + kGuardBytes, 0xff, bytes_);
  }
  unsigned char* get() { return data_.data() + kGuardBytes; }
  const unsigned char* get() const { return data_.data() + kGuardBytes; }
  std::size_t bytes() const { return bytes_; }
  bool intact() const {
    for (std::size_t i = 0; i < kGuardBytes; ++i) {
      if (data_[i] != kGuardByte || data_[kGuardBytes + bytes_ + i] != kGuardByte) return false;
    }
    return true;
  }

 private:
  std::size_t bytes_;
  std::vector<unsigned char> data_;
};

std::vector<unsigned char> encode(const std::vector<double>& values, Dtype dtype) {
  const std::size_t w = ropecheck_dtype_size(static_cast<std::int32_t>(dtype));
  std::vector<unsigned char> out(values.size() * w);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint64_t bits = reference::encode_bits(values[i], dtype);  // little-endian: the low w bytes
    std::memcpy(out.data() + i * w, &bits, w);
  }
  return out;
}

// The stored values of an output tensor: FP8 codes decoded, or elements of the data dtype.
std::vector<double> decode(const GuardedBuffer& buffer, const fused::FusedSpec& spec) {
  if (spec.fp8 != fused::Fp8::none) {
    std::vector<double> out(buffer.bytes());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = fused::decode_fp8(buffer.get()[i], spec.fp8);
    return out;
  }
  const std::size_t w = ropecheck_dtype_size(static_cast<std::int32_t>(spec.rope.dtype));
  std::vector<double> out(buffer.bytes() / w);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, buffer.get() + i * w, w);
    out[i] = reference::decode_bits(bits, spec.rope.dtype);
  }
  return out;
}

std::vector<double> decode_scales(const GuardedBuffer& buffer) {
  std::vector<double> out(buffer.bytes() / sizeof(float));
  for (std::size_t i = 0; i < out.size(); ++i) {
    float v = 0;
    std::memcpy(&v, buffer.get() + i * sizeof(float), sizeof v);
    out[i] = static_cast<double>(v);
  }
  return out;
}

// The element counts of every output of one call: q_out, k_out, k_cache, q_scale, k_scale.
struct OutputCounts {
  std::size_t q_out = 0, k_out = 0, k_cache = 0, q_scale = 0, k_scale = 0;
};
OutputCounts output_counts(const fused::FusedSpec& spec, const fused::FusedInputs& in) {
  const auto d = static_cast<std::size_t>(spec.rope.head_dim);
  const auto tokens = static_cast<std::size_t>(in.tokens);
  OutputCounts c;
  c.q_out = tokens * static_cast<std::size_t>(spec.q_heads) * d;
  const std::size_t k_row = static_cast<std::size_t>(spec.k_heads) * d;
  if (spec.destination == fused::Destination::paged) {
    c.k_cache = static_cast<std::size_t>(in.num_blocks) * static_cast<std::size_t>(spec.block_size) * k_row;
  } else {
    c.k_out = tokens * k_row;
  }
  if (spec.fp8 != fused::Fp8::none && spec.scale != fused::ScaleMode::fixed) {
    const bool per_head = spec.scale == fused::ScaleMode::per_head;
    c.q_scale = tokens * (per_head ? static_cast<std::size_t>(spec.q_heads) : 1);
    c.k_scale = tokens * (per_head ? static_cast<std::size_t>(spec.k_heads) : 1);
  }
  return c;
}

std::int32_t fp8_code(fused::Fp8 f) {
  switch (f) {
    case fused::Fp8::none:
      return ROPECHECK_FP8_NONE;
    case fused::Fp8::e4m3:
      return ROPECHECK_FP8_E4M3;
    case fused::Fp8::e5m2:
      return ROPECHECK_FP8_E5M2;
  }
  return ROPECHECK_FP8_NONE;
}

ApplyResult::Status status_of(std::int32_t plugin_status, std::string& message) {
  if (plugin_status == ROPECHECK_OK) return ApplyResult::Status::ok;
  if (plugin_status == ROPECHECK_ERROR_UNSUPPORTED) {
    message = "the plugin reports this spec as unsupported";
    return ApplyResult::Status::unsupported;
  }
  message = "returned status " + std::to_string(plugin_status) + " (" + ropecheck_status_message(plugin_status) + ")";
  return ApplyResult::Status::kernel_error;
}

// ---- the child's reply ----------------------------------------------------------------------------
void put_bytes(std::string& out, const void* data, std::size_t size) { out.append(static_cast<const char*>(data), size); }
void put_vector(std::string& out, const std::vector<double>& v) {
  const std::uint64_t n = v.size();
  put_bytes(out, &n, sizeof n);
  put_bytes(out, v.data(), n * sizeof(double));
}

bool get_vector(int fd, const Clock::time_point& deadline, std::size_t expected, std::vector<double>& v, bool& timed_out) {
  std::uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n, &deadline, &timed_out)) return false;
  if (n != 0 && n != expected) return false;  // sizes come from the child: checked before allocating
  v.resize(n);
  return read_all(fd, v.data(), n * sizeof(double), &deadline, &timed_out);
}

// The child: loads the plugin, makes the call, writes the reply to `out` and ends.
[[noreturn]] void serve_one_call(const std::string& plugin_path, const fused::FusedSpec& spec, const fused::FusedInputs& inputs,
                                 const ChildLimits& limits, int out) {
  // Faults end the child with their signal (the report names it); no core file in the user's folder.
  for (int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGINT, SIGTERM, SIGHUP, SIGALRM}) ::signal(signal_number, SIG_DFL);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::dup2(2, 1);  // whatever the plugin prints goes to stderr: stdout carries the gate's report
  limit_address_space(limits.memory_limit_mib);
  // Should the gate die without ending this process, the call still ends by this alarm.
  ::alarm(static_cast<unsigned>(std::min(86400.0 * 3, std::ceil(2 * limits.timeout_seconds) + 1)));
  FusedCallResult result;
  void* handle = ::dlopen(plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = ::dlerror();
    result.status = ApplyResult::Status::load;
    result.message = plugin_path + ": dlopen failed: " + (err ? err : "unknown error");
  } else if (auto entry = reinterpret_cast<ropecheck_fused_v1_fn>(::dlsym(handle, ROPECHECK_FUSED_ENTRY_POINT)); !entry) {
    result.status = ApplyResult::Status::abi;
    result.message = plugin_path + ": missing entry point " ROPECHECK_FUSED_ENTRY_POINT " (this gate speaks fused ABI version " +
                     std::to_string(ROPECHECK_FUSED_ABI_VERSION) + ")";
  } else {
    try {
      result = call_fused(entry, spec, inputs);
    } catch (const std::exception& e) {
      result = {ApplyResult::Status::kernel_error, std::string("the gate's side of the call failed: ") + e.what(), {}};
    }
  }
  std::string reply;
  const auto status = static_cast<std::int32_t>(result.status);
  put_bytes(reply, &status, sizeof status);
  const std::uint64_t message_size = result.message.size();
  put_bytes(reply, &message_size, sizeof message_size);
  reply += result.message;
  for (const auto* v :
       {&result.outputs.q_out, &result.outputs.k_out, &result.outputs.k_cache, &result.outputs.q_scale, &result.outputs.k_scale}) {
    put_vector(reply, *v);
  }
  write_all(out, reply.data(), reply.size());
  ::_exit(0);
}

FusedCallResult call_isolated(const std::string& plugin_path, const fused::FusedSpec& spec, const fused::FusedInputs& inputs,
                              const ChildLimits& limits) {
  ::signal(SIGPIPE, SIG_IGN);
  int reply[2];
  if (::pipe2(reply, O_CLOEXEC) != 0) return {ApplyResult::Status::crash, "could not create a pipe for the child process", {}};
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t supervisor = fork_supervised();
  if (supervisor < 0) {
    ::close(reply[0]);
    ::close(reply[1]);
    return {ApplyResult::Status::crash, "could not start a child process", {}};
  }
  if (supervisor == 0) {
    ::close(reply[0]);
    serve_one_call(plugin_path, spec, inputs, limits, reply[1]);
  }
  ::close(reply[1]);
  const int fd = reply[0];
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.timeout_seconds));
  const OutputCounts counts = output_counts(spec, inputs);
  FusedCallResult result;
  bool timed_out = false;
  std::int32_t status = 0;
  std::uint64_t message_size = 0;
  bool ok = read_all(fd, &status, sizeof status, &deadline, &timed_out) &&
            read_all(fd, &message_size, sizeof message_size, &deadline, &timed_out) && message_size <= (1u << 20);
  if (ok) {
    result.message.resize(message_size);
    ok = read_all(fd, result.message.data(), message_size, &deadline, &timed_out) &&
         get_vector(fd, deadline, counts.q_out, result.outputs.q_out, timed_out) &&
         get_vector(fd, deadline, counts.k_out, result.outputs.k_out, timed_out) &&
         get_vector(fd, deadline, counts.k_cache, result.outputs.k_cache, timed_out) &&
         get_vector(fd, deadline, counts.q_scale, result.outputs.q_scale, timed_out) &&
         get_vector(fd, deadline, counts.k_scale, result.outputs.k_scale, timed_out);
  }
  ::close(fd);
  // The supervisor ends as its child ended (its status, or its signal): given until the deadline
  // to do so, so that the report names how the child ended; then it is ended with its tree.
  while (!timed_out && !has_ended(supervisor) && Clock::now() < deadline) ::usleep(1000);
  const int wait_status = end_supervised(supervisor);
  if (ok && status >= 0 && status <= static_cast<std::int32_t>(ApplyResult::Status::unavailable)) {
    result.status = static_cast<ApplyResult::Status>(status);
    return result;
  }
  result = {};
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", limits.timeout_seconds);
  const std::string limit = limits.memory_limit_mib > 0
                                ? " (address space limited to " + std::to_string(limits.memory_limit_mib) + " MiB more: --memory-limit)"
                                : "";
  if (timed_out) {
    result.status = ApplyResult::Status::timeout;
    result.message = std::string("no answer within ") + seconds + " s while running the call (killed)";
  } else if (WIFSIGNALED(wait_status)) {
    result.status = ApplyResult::Status::crash;
    result.message = "killed by " + signal_text(WTERMSIG(wait_status)) + " while running the call" + limit;
  } else {
    result.status = ApplyResult::Status::crash;
    result.message = "exited with status " + std::to_string(WEXITSTATUS(wait_status)) + " while running the call" + limit;
  }
  return result;
}

}  // namespace

FusedCallResult call_fused(ropecheck_fused_v1_fn entry, const fused::FusedSpec& spec, const fused::FusedInputs& inputs) {
  fused::check_inputs(spec, inputs);
  const kernels::CSpec rope(spec.rope);
  const std::string text = fused::to_string(spec);
  ropecheck_fused_spec c_spec{};
  c_spec.spec = text.c_str();
  c_spec.rope = rope.get();
  c_spec.norm = static_cast<std::int32_t>(spec.norm);
  c_spec.norm_weight = static_cast<std::int32_t>(spec.weight);
  c_spec.eps = std::strtod(spec.eps.c_str(), nullptr);
  c_spec.fp8 = fp8_code(spec.fp8);
  c_spec.saturate = spec.saturate ? 1 : 0;
  c_spec.scale = static_cast<std::int32_t>(spec.scale);
  c_spec.scale_value = std::strtod(spec.scale_value.c_str(), nullptr);
  c_spec.rounding = static_cast<std::int32_t>(spec.rounding);
  c_spec.destination = static_cast<std::int32_t>(spec.destination);
  c_spec.block_size = spec.block_size;
  c_spec.q_heads = spec.q_heads;
  c_spec.k_heads = spec.k_heads;

  const Dtype input = input_dtype_of(spec.rope);
  const std::vector<unsigned char> q = encode(inputs.q, input), k = encode(inputs.k, input);
  const std::vector<unsigned char> q_weight = encode(inputs.q_weight, input), k_weight = encode(inputs.k_weight, input);
  const OutputCounts counts = output_counts(spec, inputs);
  const std::size_t w = spec.fp8 != fused::Fp8::none ? 1 : ropecheck_dtype_size(static_cast<std::int32_t>(spec.rope.dtype));
  GuardedBuffer q_out(counts.q_out * w), k_out(counts.k_out * w), k_cache(counts.k_cache * w);
  GuardedBuffer q_scale(counts.q_scale * sizeof(float)), k_scale(counts.k_scale * sizeof(float));

  ropecheck_fused_call call{};
  call.abi_version = ROPECHECK_FUSED_ABI_VERSION;
  call.spec = &c_spec;
  call.input_dtype = static_cast<std::int32_t>(input);
  call.tokens = inputs.tokens;
  call.q = q.data();
  call.k = k.data();
  call.positions = inputs.positions.data();
  const bool norm = spec.norm != fused::NormPlace::none;
  call.q_weight = norm ? q_weight.data() : nullptr;
  call.k_weight = norm ? k_weight.data() : nullptr;
  const bool paged = spec.destination == fused::Destination::paged;
  call.slot_mapping = paged ? inputs.slot_mapping.data() : nullptr;
  call.num_blocks = paged ? inputs.num_blocks : 0;
  call.q_out = q_out.get();
  call.k_out = paged ? nullptr : k_out.get();
  call.k_cache = paged ? k_cache.get() : nullptr;
  const bool returned_scales = counts.q_scale > 0;
  call.q_scale = returned_scales ? reinterpret_cast<float*>(q_scale.get()) : nullptr;
  call.k_scale = returned_scales ? reinterpret_cast<float*>(k_scale.get()) : nullptr;
  call.threads = 1;

  FusedCallResult result;
  result.status = status_of(entry(&call), result.message);
  for (const GuardedBuffer* b : {&q_out, &k_out, &k_cache, &q_scale, &k_scale}) {
    if (!b->intact()) {
      return {ApplyResult::Status::guard, "wrote outside its output buffer (guard bytes changed)", {}};
    }
  }
  if (result.status != ApplyResult::Status::ok) return result;
  result.outputs.q_out = decode(q_out, spec);
  if (paged) {
    result.outputs.k_cache = decode(k_cache, spec);
  } else {
    result.outputs.k_out = decode(k_out, spec);
  }
  if (returned_scales) {
    result.outputs.q_scale = decode_scales(q_scale);
    result.outputs.k_scale = decode_scales(k_scale);
  }
  return result;
}

FusedCallResult call_fused_plugin(const std::string& plugin_path, const fused::FusedSpec& spec, const fused::FusedInputs& inputs,
                                  bool isolate, const ChildLimits& limits) {
  fused::check_inputs(spec, inputs);
  if (isolate) return call_isolated(plugin_path, spec, inputs, limits);
  void* handle = ::dlopen(plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = ::dlerror();
    return {ApplyResult::Status::load, plugin_path + ": dlopen failed: " + (err ? err : "unknown error"), {}};
  }
  auto entry = reinterpret_cast<ropecheck_fused_v1_fn>(::dlsym(handle, ROPECHECK_FUSED_ENTRY_POINT));
  if (!entry) {
    return {ApplyResult::Status::abi,
            plugin_path + ": missing entry point " ROPECHECK_FUSED_ENTRY_POINT " (this gate speaks fused ABI version " +
                std::to_string(ROPECHECK_FUSED_ABI_VERSION) + ")",
            {}};
  }
  return call_fused(entry, spec, inputs);
}

}  // namespace ropecheck::runner
