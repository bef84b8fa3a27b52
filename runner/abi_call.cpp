#include "runner/abi_call.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "optimized/c_spec.h"
#include "reference/rounding.h"

namespace ropecheck::runner {
namespace {

constexpr unsigned char kGuardByte = 0xA5;

std::size_t dtype_bytes(Dtype d) { return ropecheck_dtype_size(static_cast<std::int32_t>(d)); }

// The loops below for one element width W: a memcpy of a constant size is one load or store (of a
// runtime size it was a library call per element).
template <std::size_t W>
void encode_as(std::span<const double> values, Dtype d, unsigned char* out) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    // Little-endian: the low W bytes of the bit pattern are the element (values of the dtype: exact).
    // A binary32 or bfloat16 value that is not NaN converts to float exactly: its bits (the upper
    // half for bfloat16) are encode_bits', without the call.
    const double v = values[i];
    std::uint64_t bits;
    if (W <= 4 && d != Dtype::f16 && !std::isnan(v)) {
      const auto word = std::bit_cast<std::uint32_t>(static_cast<float>(v));
      bits = W == 4 ? word : word >> 16;
    } else {
      bits = reference::encode_bits(v, d);
    }
    std::memcpy(out + i * W, &bits, W);
  }
}
template <std::size_t W>
void decode_as(const unsigned char* in, std::size_t count, Dtype d, double* out) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, in + i * W, W);
    out[i] = reference::decode_bits(bits, d);
  }
}

void encode(std::span<const double> values, Dtype d, unsigned char* out) {
  switch (dtype_bytes(d)) {
    case 2: return encode_as<2>(values, d, out);
    case 4: return encode_as<4>(values, d, out);
    default: return encode_as<8>(values, d, out);
  }
}

std::vector<double> decode(const unsigned char* in, std::size_t count, Dtype d) {
  std::vector<double> out(count);
  switch (dtype_bytes(d)) {
    case 2: decode_as<2>(in, count, d, out.data()); break;
    case 4: decode_as<4>(in, count, d, out.data()); break;
    default: decode_as<8>(in, count, d, out.data()); break;
  }
  return out;
}

// The protected ranges of the call in progress: [0, 1) before the output, [2, 3) after it.
std::atomic<std::uintptr_t> g_guard_pages[4];
static_assert(std::atomic<std::uintptr_t>::is_always_lock_free, "read from a signal handler");

// The output buffer of one call: `bytes` of output, pre-filled with all-ones bytes (NaN in every
// float format), behind guard bytes and, under OutputGuard::pages, between protected pages.
class OutputBuffer {
 public:
  OutputBuffer(std::size_t bytes, OutputGuard guard) : bytes_(bytes) {
    if (guard == OutputGuard::bytes) {
      heap_.assign(bytes + 2 * kGuardBytes, kGuardByte);
      body_ = heap_.data();
      body_size_ = heap_.size();
      offset_ = kGuardBytes;
    } else {
      const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      // The output ends on a 64-byte boundary less than 64 bytes before the trailing protected
      // pages (aligned for vector stores), with at least kGuardBytes of guard bytes before it.
      body_size_ = (bytes + kGuardBytes + 64 + page - 1) / page * page;
      map_size_ = body_size_ + 2 * kGuardPages * page;
      void* map = ::mmap(nullptr, map_size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (map == MAP_FAILED) throw std::bad_alloc();
      map_ = static_cast<unsigned char*>(map);
      body_ = map_ + kGuardPages * page;
      if (::mprotect(body_, body_size_, PROT_READ | PROT_WRITE) != 0) {
        ::munmap(map_, map_size_);
        throw std::bad_alloc();
      }
      offset_ = (body_size_ - bytes) / 64 * 64;
      // The guard bytes around the output (the output itself is filled below).
      std::memset(body_, kGuardByte, offset_);
      std::memset(body_ + offset_ + bytes_, kGuardByte, body_size_ - offset_ - bytes_);
      g_guard_pages[0] = reinterpret_cast<std::uintptr_t>(map_);
      g_guard_pages[1] = reinterpret_cast<std::uintptr_t>(body_);
      g_guard_pages[2] = reinterpret_cast<std::uintptr_t>(body_ + body_size_);
      g_guard_pages[3] = reinterpret_cast<std::uintptr_t>(map_ + map_size_);
    }
    std::memset(body_ + offset_, 0xff, bytes_);
  }
  ~OutputBuffer() {
    if (map_ == nullptr) return;
    for (auto& bound : g_guard_pages) bound = 0;
    ::munmap(map_, map_size_);
  }
  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  unsigned char* output() { return body_ + offset_; }
  // Every guard byte (before and after the output, inside the writable part) unchanged.
  bool guard_intact() const {
    const auto intact = [this](std::size_t from, std::size_t to) {
      for (std::size_t i = from; i < to; ++i) {
        if (body_[i] != kGuardByte) return false;
      }
      return true;
    };
    return intact(0, offset_) && intact(offset_ + bytes_, body_size_);
  }

 private:
  std::size_t bytes_;
  std::vector<unsigned char> heap_;
  unsigned char* map_ = nullptr;
  std::size_t map_size_ = 0;
  unsigned char* body_ = nullptr;
  std::size_t body_size_ = 0;
  std::size_t offset_ = 0;
};

}  // namespace

bool in_guard_pages(const void* address) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  return (a >= g_guard_pages[0] && a < g_guard_pages[1]) || (a >= g_guard_pages[2] && a < g_guard_pages[3]);
}

std::string abi_declines(const Spec& spec) {
  if (!spec.input_dtype || *spec.input_dtype == spec.dtype) return {};
  return "not passed to the C ABI: it has one dtype for inputs and outputs, the spec has input_dtype=" +
         std::string(name(*spec.input_dtype)) + " and dtype=" + std::string(name(spec.dtype));
}

AbiCallResult call_kernel(KernelApplyFn apply, const char* implementation, const Spec& spec, reference::Shape shape,
                          std::span<const std::int64_t> positions, std::span<const double> input, int threads,
                          OutputGuard guard) {
  // The kernel is given the shape and the buffers are sized by the input: they must agree, by
  // products that cannot wrap around.
  std::int64_t elements = 0, position_count = 0;
  if (shape.tokens < 0 || shape.heads < 0 || __builtin_mul_overflow(shape.tokens, shape.heads, &elements) ||
      __builtin_mul_overflow(elements, shape.head_dim, &elements) || static_cast<std::uint64_t>(elements) != input.size() ||
      __builtin_mul_overflow(shape.tokens, std::int64_t{position_components(spec)}, &position_count) ||
      static_cast<std::uint64_t>(position_count) != positions.size()) {
    throw std::invalid_argument("shape [" + std::to_string(shape.tokens) + ", " + std::to_string(shape.heads) + ", " +
                                std::to_string(shape.head_dim) + "] does not match " + std::to_string(input.size()) +
                                " inputs and " + std::to_string(positions.size()) + " positions");
  }
  if (!abi_declines(spec).empty()) {
    AbiCallResult declined;
    declined.status = ROPECHECK_ERROR_UNSUPPORTED;
    return declined;
  }
  const kernels::CSpec c_spec(spec);
  const std::size_t w = dtype_bytes(spec.dtype);
  std::vector<unsigned char> in_buffer(input.size() * w);
  encode(input, spec.dtype, in_buffer.data());
  OutputBuffer out_buffer(input.size() * w, guard);
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = shape.tokens;
  call.positions = positions.data();
  call.q.heads = shape.heads;
  call.q.input = in_buffer.data();
  call.q.input_token_stride = shape.heads * shape.head_dim;
  call.q.input_head_stride = shape.head_dim;
  call.q.output = out_buffer.output();
  call.q.output_token_stride = shape.heads * shape.head_dim;
  call.q.output_head_stride = shape.head_dim;
  call.threads = threads;
  AbiCallResult result;
  result.status = apply(implementation, &call);
  result.guard_intact = out_buffer.guard_intact();
  if (result.status == ROPECHECK_OK) result.output = decode(out_buffer.output(), input.size(), spec.dtype);
  return result;
}

}  // namespace ropecheck::runner
