#include "judge/abi_call.h"

#include <cstring>

#include "optimized/c_spec.h"
#include "reference/rounding.h"

namespace ropecheck::judge {
namespace {

constexpr unsigned char kGuardByte = 0xA5;

std::size_t dtype_bytes(Dtype d) { return ropecheck_dtype_size(static_cast<std::int32_t>(d)); }

void encode(std::span<const double> values, Dtype d, unsigned char* out) {
  const std::size_t w = dtype_bytes(d);
  for (std::size_t i = 0; i < values.size(); ++i) {
    // Little-endian: the low `w` bytes of the bit pattern are the element (values of the dtype: exact).
    const std::uint64_t bits = reference::encode_bits(values[i], d);
    std::memcpy(out + i * w, &bits, w);
  }
}

std::vector<double> decode(const unsigned char* in, std::size_t count, Dtype d) {
  std::vector<double> out(count);
  const std::size_t w = dtype_bytes(d);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, in + i * w, w);
    out[i] = reference::decode_bits(bits, d);
  }
  return out;
}

}  // namespace

AbiCallResult call_kernel(KernelApplyFn apply, const char* implementation, const Spec& spec, reference::Shape shape,
                          std::span<const std::int64_t> positions, std::span<const double> input, int threads) {
  const kernels::CSpec c_spec(spec);
  const std::size_t w = dtype_bytes(spec.dtype);
  std::vector<unsigned char> in_buffer(input.size() * w);
  encode(input, spec.dtype, in_buffer.data());
  // [guard][output][guard], the output pre-filled with all-ones bytes (NaN in every float format).
  std::vector<unsigned char> out_buffer(input.size() * w + 2 * kGuardBytes, kGuardByte);
  std::memset(out_buffer.data() + kGuardBytes, 0xff, input.size() * w);
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = shape.tokens;
  call.positions = positions.data();
  call.q.heads = shape.heads;
  call.q.input = in_buffer.data();
  call.q.input_token_stride = shape.heads * shape.head_dim;
  call.q.input_head_stride = shape.head_dim;
  call.q.output = out_buffer.data() + kGuardBytes;
  call.q.output_token_stride = shape.heads * shape.head_dim;
  call.q.output_head_stride = shape.head_dim;
  call.threads = threads;
  AbiCallResult result;
  result.status = apply(implementation, &call);
  for (std::size_t i = 0; i < kGuardBytes; ++i) {
    if (out_buffer[i] != kGuardByte || out_buffer[out_buffer.size() - 1 - i] != kGuardByte) result.guard_intact = false;
  }
  if (result.status == ROPECHECK_OK) result.output = decode(out_buffer.data() + kGuardBytes, input.size(), spec.dtype);
  return result;
}

}  // namespace ropecheck::judge
