// The "cuda" implementation (optimized/cuda/rope_kernel.cu). Without a GPU (or without CUDA in
// the build) it must report itself unavailable and never run; the tests that need a device skip
// with "no CUDA device: cuda kernel not run". With a device: the device-pointer entry gives the
// same bits as the host-pointer entry and as the scalar CPU kernel (they run the same per-lane
// code, angle-inl.h), and bad cache rows behind device pointers are rejected before anything is
// written. (The kernel's accuracy against the exact reference, every layout/dtype/scaling, and
// the position sweep are the "cuda" instances of optimized_kernel_test and optimized_sweep_test.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <ropecheck/kernel.h>

#include "optimized/c_spec.h"
#include "optimized/cuda/cuda_backend.h"
#include "spec/spec.h"
#include "tests/optimized/kernel_test_support.h"

namespace ropecheck::kernels::testing {
namespace {

bool have_device() { return ropecheck_kernel_available("cuda") == 1; }

TEST(Cuda, WithoutDeviceIsUnavailableAndNeverPickedByAuto) {
  EXPECT_STRNE(ropecheck_kernel_resolve("auto"), "cuda");  // auto picks CPU kernels only
  if (have_device()) {
    std::printf("cuda device: %s\n", cuda::device_name());
    EXPECT_STRNE(cuda::device_name(), "");
    GTEST_SKIP() << "a CUDA device is present: the unavailable path is not taken here";
  }
  EXPECT_EQ(ropecheck_kernel_resolve("cuda"), nullptr);
  EXPECT_EQ(cuda::device_allocate(16), nullptr);
  const Spec spec = parse_spec("layout=half,head_dim=8,base=10000,dtype=f32");
  const CSpec c_spec(spec);
  std::vector<float> input(8, 1.0f);
  std::vector<float> output(8, -7.0f);
  const std::int64_t position = 3;
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = 1;
  call.positions = &position;
  call.q = ropecheck_tensor{1, input.data(), 8, 8, output.data(), 8, 8};
  EXPECT_EQ(ropecheck_kernel_apply("cuda", &call), ROPECHECK_ERROR_UNAVAILABLE);
  call.device_pointers = 1;
  EXPECT_EQ(ropecheck_kernel_apply("cuda", &call), ROPECHECK_ERROR_UNAVAILABLE);
  for (float v : output) EXPECT_EQ(v, -7.0f);
}

// Device memory freed on scope exit.
struct DeviceBytes {
  explicit DeviceBytes(std::size_t n) : bytes(n), pointer(cuda::device_allocate(n)) {}
  ~DeviceBytes() { cuda::device_free(pointer); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  std::size_t bytes;
  void* pointer;
};

class CudaDevicePointers : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaDevicePointers, SameBitsAsHostPointersAndScalar) {
  if (!have_device()) GTEST_SKIP() << unavailable_message("cuda");
  const Spec spec = parse_spec(GetParam());
  const CSpec c_spec(spec);
  constexpr std::int64_t kTokens = 37;
  constexpr std::int64_t kHeads = 5;
  const std::int64_t row = kHeads * spec.head_dim;
  const std::size_t element = ropecheck_dtype_size(static_cast<std::int32_t>(spec.dtype));
  const std::size_t bytes = static_cast<std::size_t>(kTokens * row) * element;
  // finite inputs of every dtype: bytes of small binary16/bfloat16/float/double values
  Case c{GetParam(), kTokens, kHeads, {0, 1, 4095, 65536, 2147483647, 123456789}};
  const TensorData tensor = make_tensor(c, kHeads, 7);
  std::vector<unsigned char> input(tensor.input_buffer.bytes.begin() + kGuardBytes,
                                   tensor.input_buffer.bytes.begin() + kGuardBytes + static_cast<std::ptrdiff_t>(bytes));
  const auto positions = c.position_values();
  auto run_host = [&](const char* implementation) {
    std::vector<unsigned char> out(bytes, 0xA5);
    ropecheck_call call{};
    call.spec = c_spec.get();
    call.tokens = kTokens;
    call.positions = positions.data();
    call.q = ropecheck_tensor{kHeads, input.data(), row, spec.head_dim, out.data(), row, spec.head_dim};
    EXPECT_EQ(ropecheck_kernel_apply(implementation, &call), ROPECHECK_OK) << implementation;
    return out;
  };
  const auto scalar = run_host("scalar");
  const auto host = run_host("cuda");
  DeviceBytes device_input(bytes);
  DeviceBytes device_output(bytes);
  DeviceBytes device_positions(positions.size() * sizeof(std::int64_t));
  ASSERT_NE(device_input.pointer, nullptr);
  ASSERT_TRUE(cuda::copy_to_device(device_input.pointer, input.data(), bytes));
  ASSERT_TRUE(cuda::copy_to_device(device_positions.pointer, positions.data(), device_positions.bytes));
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = kTokens;
  call.positions = static_cast<const std::int64_t*>(device_positions.pointer);
  call.q = ropecheck_tensor{kHeads, device_input.pointer, row, spec.head_dim, device_output.pointer, row, spec.head_dim};
  call.device_pointers = 1;
  ASSERT_EQ(ropecheck_kernel_apply("cuda", &call), ROPECHECK_OK);
  std::vector<unsigned char> device(bytes);
  ASSERT_TRUE(cuda::copy_to_host(device.data(), device_output.pointer, bytes));
  // f64 data: the CPU kernels' double-double path has no CUDA counterpart (optimized/README.md)
  if (spec.dtype != Dtype::f64) {
    EXPECT_TRUE(host == scalar) << "cuda (host pointers) differs from the scalar kernel";
  }
  EXPECT_TRUE(device == host) << "cuda device pointers differ from cuda host pointers";
}

INSTANTIATE_TEST_SUITE_P(Specs, CudaDevicePointers,
                         ::testing::Values("layout=half,head_dim=128,base=500000,dtype=f32",
                                           "layout=interleaved,head_dim=80,rotary_dim=36,base=10000,dtype=bf16",
                                           "layout=half,head_dim=64,base=10000,direction=inverse,dtype=f16",
                                           "layout=half,head_dim=128,base=500000,scaling=yarn,factor=8,original_max_position=4096,dtype=f64"),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(Cuda, DevicePointerCacheRowOutOfRangeIsRejectedBeforeWriting) {
  if (!have_device()) GTEST_SKIP() << unavailable_message("cuda");
  const Spec spec = parse_spec("layout=half,head_dim=8,base=10000,dtype=f32");
  const CSpec c_spec(spec);
  const std::vector<float> input(2 * 8, 1.0f);
  const std::vector<float> sentinel(2 * 8, -7.0f);
  const std::vector<float> table(4 * 4, 0.5f);  // 4 rows × 4 pairs
  const std::vector<std::int64_t> positions = {1, 4};  // row 4 does not exist
  DeviceBytes in(input.size() * 4);
  DeviceBytes out(sentinel.size() * 4);
  DeviceBytes cos_table(table.size() * 4);
  DeviceBytes sin_table(table.size() * 4);
  DeviceBytes device_positions(positions.size() * 8);
  ASSERT_TRUE(cuda::copy_to_device(in.pointer, input.data(), in.bytes));
  ASSERT_TRUE(cuda::copy_to_device(out.pointer, sentinel.data(), out.bytes));
  ASSERT_TRUE(cuda::copy_to_device(cos_table.pointer, table.data(), cos_table.bytes));
  ASSERT_TRUE(cuda::copy_to_device(sin_table.pointer, table.data(), sin_table.bytes));
  ASSERT_TRUE(cuda::copy_to_device(device_positions.pointer, positions.data(), device_positions.bytes));
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = 2;
  call.positions = static_cast<const std::int64_t*>(device_positions.pointer);
  call.q = ropecheck_tensor{1, in.pointer, 8, 8, out.pointer, 8, 8};
  call.cos_cache = cos_table.pointer;
  call.sin_cache = sin_table.pointer;
  call.cache_dtype = ROPECHECK_DTYPE_F32;
  call.cache_rows = 4;
  call.cache_row_stride = 4;
  call.device_pointers = 1;
  EXPECT_EQ(ropecheck_kernel_apply("cuda", &call), ROPECHECK_ERROR_INVALID_ARGUMENT);
  std::vector<float> result(sentinel.size());
  ASSERT_TRUE(cuda::copy_to_host(result.data(), out.pointer, out.bytes));
  EXPECT_EQ(result, sentinel);
  call.cache_rows = 5;
  const std::vector<float> five_rows(5 * 4, 0.5f);
  DeviceBytes cos5(five_rows.size() * 4);
  DeviceBytes sin5(five_rows.size() * 4);
  ASSERT_TRUE(cuda::copy_to_device(cos5.pointer, five_rows.data(), cos5.bytes));
  ASSERT_TRUE(cuda::copy_to_device(sin5.pointer, five_rows.data(), sin5.bytes));
  call.cos_cache = cos5.pointer;
  call.sin_cache = sin5.pointer;
  ASSERT_EQ(ropecheck_kernel_apply("cuda", &call), ROPECHECK_OK);
  ASSERT_TRUE(cuda::copy_to_host(result.data(), out.pointer, out.bytes));
  // c = s = 0.5, x = y = 1: a = 1·0.5 − 1·0.5 = 0, b = 1 (exact in binary64 and binary32)
  EXPECT_EQ(result[0], 0.0f);
  EXPECT_EQ(result[4], 1.0f);
}

}  // namespace
}  // namespace ropecheck::kernels::testing
