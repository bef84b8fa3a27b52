// Kernel tests: ONE list of cases (llama.cpp test-backend-ops style: each case prints its
// parameters as its name, which is also the gtest filter), instantiated over every implementation
// of the C ABI (include/ropecheck/kernel.h); implementations this machine lacks are skipped with a
// message, never silently untested. Each case is checked against the exact reference
// (reference::rotate_exact, MPFR at 128 bits) with the error metric of judge/pair_rule.h and
// the tolerance of optimized/error_bounds.h, plus: pass-through dims bit-identical, guard bytes
// around every output buffer and padding between strided rows untouched, and bit-for-bit
// agreement with the scalar kernel (all CPU kernels run the same IEEE operations).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <limits>
#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <ropecheck/kernel.h>

#include "optimized/c_spec.h"
#include "optimized/error_bounds.h"
#include "judge/pair_rule.h"
#include "reference/rope.h"
#include "reference/rounding.h"
#include "spec/schedule.h"
#include "spec/spec.h"
#include "tests/optimized/kernel_test_support.h"

namespace ropecheck::kernels::testing {
namespace {

// Instances named by their kernel (Cpu/Bfloat16Rounding.EveryInputAgreesWithTheScalarKernel/avx2),
// so that --gtest_filter='*avx512*' selects every test of a kernel.
std::string kernel_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

const std::vector<Case>& cases() {
  static const std::vector<Case> list = [] {
    std::vector<Case> v;
    const std::vector<std::int64_t> typical = {0, 1, 7, 1000, 65535};
    const std::vector<std::int64_t> large = {2147483647, 2147483646, 1000000007, 123456789, 1 << 20};
    // every layout × dtype, full rotary
    for (const char* layout : {"interleaved", "half"}) {
      for (const char* dtype : {"f64", "f32", "f16", "bf16"}) {
        v.push_back(Case{std::string("layout=") + layout + ",head_dim=64,base=10000,dtype=" + dtype, 5, 3, typical});
        v.push_back(Case{std::string("layout=") + layout + ",head_dim=64,base=500000,dtype=" + dtype, 5, 2, large});
      }
    }
    // partial rotary (18 pairs: SIMD body + tail), tiny heads
    for (const char* layout : {"interleaved", "half"}) {
      for (const char* dtype : {"f32", "bf16", "f64"}) {
        v.push_back(Case{std::string("layout=") + layout + ",head_dim=80,rotary_dim=36,base=10000,dtype=" + dtype, 4, 3,
                         {3, 99, 4096, 2147483647}});
      }
      v.push_back(Case{std::string("layout=") + layout + ",head_dim=6,rotary_dim=2,base=10000,dtype=f32", 3, 2, {0, 5, 1 << 30}});
      // bfloat16 past one even/odd block and not a whole number of them (50 pairs; half layout:
      // AVX-512 one block of 32, one vector of 16 and a tail of 2, AVX2 three blocks of 16 and a
      // tail of 2)
      v.push_back(Case{std::string("layout=") + layout + ",head_dim=128,rotary_dim=100,base=10000,dtype=bf16", 4, 3,
                       {3, 99, 4096, 2147483647}});
      v.push_back(Case{std::string("layout=") + layout + ",head_dim=10,rotary_dim=10,base=10000000,dtype=f16", 3, 2, {2, 31, 60000}});
    }
    // every scaling type (half layout, head_dim 128 as in Llama), f32; f64 for those with A ≠ 1
    const std::string llama = "layout=half,head_dim=128,base=500000,";
    std::string factors_short;
    std::string factors_long;
    for (int j = 0; j < 64; ++j) {
      factors_short += (j ? "/" : "") + std::to_string(1.0 + j * 0.01).substr(0, 4);
      factors_long += (j ? "/" : "") + std::to_string(1.0 + j * 0.25).substr(0, 5);
    }
    for (const char* dtype : {"f32", "f64", "bf16"}) {
      const std::string d = std::string(",dtype=") + dtype;
      v.push_back(Case{llama + "scaling=linear,factor=4" + d, 5, 2, large});
      v.push_back(Case{llama + "scaling=ntk,factor=2" + d, 5, 2, large});
      v.push_back(Case{llama + "scaling=dynamic,factor=2,original_max_position=4096,seq_len=16384" + d, 5, 2, large});
      v.push_back(Case{llama + "scaling=yarn,factor=8,original_max_position=4096" + d, 5, 2, large});
      v.push_back(Case{llama + "scaling=yarn,factor=16,original_max_position=4096,mscale=1,mscale_all_dim=0.5" + d, 5, 2, typical});
      v.push_back(Case{llama + "scaling=yarn-ggml,freq_scale=0.25,original_max_position=4096" + d, 5, 2, large});
      v.push_back(Case{llama + "scaling=llama3,factor=8,original_max_position=8192" + d, 5, 2, large});
      v.push_back(Case{llama + "scaling=longrope,short_factor=" + factors_short + ",long_factor=" + factors_long +
                           ",original_max_position=4096,seq_len=131072" + d,
                       5, 2, large});
    }
    // 16-bit data rotated in binary32 with an attention factor (optimized/error_bounds.h step 6:
    // the table entry RN32(RN64(A·ĉ))): f16 with A > 1 and A < 1, bf16 with A < 1 (bf16 with
    // |A| > 1 rotates in binary64: the yarn cases above)
    for (const char* layout : {"interleaved", "half"}) {
      const std::string l = std::string("layout=") + layout + ",head_dim=128,base=500000,";
      v.push_back(Case{l + "scaling=yarn,factor=8,original_max_position=4096,dtype=f16", 5, 2, large});
      v.push_back(Case{l + "scaling=yarn,factor=8,original_max_position=4096,attention_factor=0.75,dtype=f16", 5, 2, large});
      v.push_back(Case{l + "scaling=yarn,factor=8,original_max_position=4096,attention_factor=0.75,dtype=bf16", 5, 2, large});
    }
    // multi-axis: 2-D RoPE (two position components) and M-RoPE (three)
    for (const char* dtype : {"f32", "f64"}) {
      const std::string d = std::string(",dtype=") + dtype;
      v.push_back(Case{"layout=interleaved,head_dim=64,base=10000,axes=2d" + d, 3, 2, {0, 0, 5, 17, 40000, 2147483647}});
      v.push_back(Case{"layout=half,head_dim=128,base=1000000,axes=mrope,sections=16/24/24" + d, 2, 2,
                       {3, 3, 3, 100, 2000, 2147483647}});
      // ggml's four-section M-RoPE (a zero section) and interleaved M-RoPE, 3 and 4 sections:
      // the kernels take each pair's component from the schedule (spec/schedule.h position_component).
      v.push_back(Case{"layout=half,head_dim=128,base=1000000,axes=mrope,sections=16/24/24/0" + d, 2, 2,
                       {3, 3, 3, 0, 100, 2000, 2147483647, 9}});
      v.push_back(Case{"layout=half,head_dim=128,base=5000000,axes=imrope,sections=24/20/20" + d, 2, 2,
                       {3, 5, 7, 100, 2000, 2147483647}});
      v.push_back(Case{"layout=half,head_dim=128,base=5000000,axes=imrope,sections=24/20/20/0" + d, 2, 2,
                       {3, 5, 7, 11, 100, 2000, 2147483647, 40000}});
    }
    // inverse direction, negative positions
    for (const char* dtype : {"f32", "f64", "f16"}) {
      v.push_back(Case{std::string("layout=interleaved,head_dim=64,base=10000,direction=inverse,dtype=") + dtype, 4, 2,
                       {0, 1, -7, 2147483647}});
    }
    v.push_back(Case{"layout=half,head_dim=64,base=10000,dtype=f32", 3, 1, {-1, -65536, -2147483648LL}});
    // strided views, in place, q and k together, threads
    for (const char* dtype : {"f32", "bf16"}) {
      const std::string d = std::string(",dtype=") + dtype;
      Case strided{"layout=half,head_dim=64,base=10000" + d, 4, 3, {1, 2, 3, 70000}};
      strided.input_head_padding = 5;
      strided.input_token_padding = 7;
      strided.output_head_padding = 3;
      strided.output_token_padding = 11;
      v.push_back(strided);
      Case in_place{"layout=interleaved,head_dim=48,rotary_dim=40,base=10000" + d, 4, 3, {9, 8, 100000, 2147483647}};
      in_place.in_place = true;
      in_place.input_head_padding = in_place.output_head_padding = 2;
      v.push_back(in_place);
      Case qk{"layout=half,head_dim=64,base=500000" + d, 4, 4, {0, 11, 12, 1 << 24}};
      qk.k_heads = 2;
      v.push_back(qk);
      Case threaded{"layout=half,head_dim=128,base=500000" + d, 96, 8, {}};
      threaded.threads = 2;
      v.push_back(threaded);
    }
    // cache mode (the caller's cos/sin tables, correctly rounded by the reference)
    const std::pair<const char*, const char*> cache_types[] = {
        {"f32", "f32"}, {"bf16", "f32"}, {"f16", "f16"}, {"f64", "f64"}, {"bf16", "bf16"}, {"f32", "f64"}};
    for (const auto& [data, cache] : cache_types) {
      for (const char* layout : {"interleaved", "half"}) {
        Case c{std::string("layout=") + layout + ",head_dim=64,rotary_dim=48,base=10000,dtype=" + data, 5, 2, {0, 3, 9, 31, 17}};
        c.cache = true;
        c.cache_dtype = parse_dtype(cache);
        v.push_back(c);
      }
    }
    Case mrope_cache{"layout=half,head_dim=64,base=1000000,axes=mrope,sections=8/12/12,dtype=f32", 2, 2, {1, 2, 3, 30, 20, 10}};
    mrope_cache.cache = true;
    v.push_back(mrope_cache);
    Case inverse_cache{"layout=interleaved,head_dim=32,base=10000,direction=inverse,dtype=f32", 3, 2, {4, 5, 6}};
    inverse_cache.cache = true;
    v.push_back(inverse_cache);
    // f16 overflow: x = y = 60000 rotated by ≈45° gives ≈84853 > 65504, which must become +Inf
    Case overflow{"layout=interleaved,head_dim=2,base=10000,dtype=f16", 1, 1, {1}};
    overflow.fixed_input = {60000.0, 60000.0};
    v.push_back(overflow);
    // the same overflow in the half layout with 16 pairs: the 8-element 16-bit loads/stores of the
    // AVX2 kernel (Avx2Ops::load8/store8) for f16, and bfloat16 overflowing past 3.39e38
    Case overflow_half{"layout=half,head_dim=32,base=10000,dtype=f16", 2, 2, {1, 2}};
    overflow_half.fixed_input = std::vector<double>(32, 60000.0);
    v.push_back(overflow_half);
    Case overflow_bf16{"layout=half,head_dim=32,base=10000,dtype=bf16", 2, 2, {1, 2}};
    overflow_bf16.fixed_input = std::vector<double>(32, 3.0e38);
    v.push_back(overflow_bf16);
    // binary16 subnormals (below 2^-14) beside normal values: every other pair scaled by 2^-12 (the
    // others by 2^12), in both layouts — the conversions of every kernel's 16-bit path, the CUDA
    // kernel's 8-byte words included (rotate_chunk_packed)
    for (const char* layout : {"half", "interleaved"}) {
      Case subnormals{std::string("layout=") + layout + ",head_dim=64,base=10000,dtype=f16", 3, 2, {0, 7, 1000000}};
      subnormals.magnitude_exponent = 12;
      v.push_back(subnormals);
    }
    // subnormal-free tiny and huge magnitudes in f32
    Case magnitudes{"layout=half,head_dim=16,base=10000,dtype=f32", 2, 2, {5, 2147483647}};
    magnitudes.magnitude_exponent = 100;
    v.push_back(magnitudes);
    return v;
  }();
  return list;
}

class KernelCase : public ::testing::TestWithParam<std::tuple<std::string, std::size_t>> {};

TEST_P(KernelCase, WithinErrorBoundOfExactReference) {
  const auto& [implementation, index] = GetParam();
  const Case& c = cases()[index];
  if (unavailable(implementation)) GTEST_SKIP() << unavailable_message(implementation);
  KernelRun run = run_case(c, implementation);
  ASSERT_EQ(run.status, ROPECHECK_OK) << ropecheck_status_message(run.status);
  check_guards_and_padding(c, run);
  check_against_exact(c, run);
}

TEST_P(KernelCase, BitForBitEqualToScalar) {
  const auto& [implementation, index] = GetParam();
  const Case& c = cases()[index];
  if (implementation == "scalar") GTEST_SKIP() << "the scalar kernel is the baseline of this comparison";
  if (unavailable(implementation)) GTEST_SKIP() << unavailable_message(implementation);
  if (implementation == "cuda" && c.spec().dtype == Dtype::f64 && !c.cache) {
    GTEST_SKIP() << "cuda rotates f64 data in binary64, the CPU kernels in double-double (optimized/README.md)";
  }
  const KernelRun run = run_case(c, implementation);
  const KernelRun baseline = run_case(c, "scalar");
  ASSERT_EQ(run.status, ROPECHECK_OK);
  ASSERT_EQ(baseline.status, ROPECHECK_OK);
  // Same IEEE operations in the same order on every ISA (kernel-inl.h), so the same bits; NaNs are
  // compared as NaN (their payloads are not specified).
  const auto a = outputs_as_double(c, run);
  const auto b = outputs_as_double(c, baseline);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    ASSERT_EQ(reference::to_hex(a[i]), reference::to_hex(b[i])) << "element " << i;
    ASSERT_EQ(std::signbit(a[i]), std::signbit(b[i])) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(All, KernelCase,
                         ::testing::Combine(::testing::Values("scalar", "avx2", "avx512", "avx512bf16", "cuda"),
                                            ::testing::Range<std::size_t>(0, cases().size())),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + cases()[std::get<1>(info.param)].name();
                         });

// Step 1 by addition (kernel-inl.h token_phases) and, for 16-bit data, the table by angle addition
// (kernel-inl.h next_table_by_rotation): consecutive positions in one call reuse the previous
// token's phase plus the step, or its table rotated by one position; a call per token always
// computes both directly. Both must give
// the same output bits: runs across −1 → 0, the 2^31 boundary, the ends of int64 (where
// position + 1 would overflow) and runs broken and restarted (where the shortcut must not be
// taken), on the fast angle path (f32, bf16) and the precise one (f64, which does not take it).
// A wrong carry between the phase words moves cos/sin by ~2^-54 turn, below what f32 outputs show:
// angle_test's PhaseByAddition checks the words themselves.
class ConsecutivePositions : public ::testing::TestWithParam<std::string> {};

TEST_P(ConsecutivePositions, OneCallGivesTheBitsOfOneCallPerToken) {
  const std::string implementation = GetParam();
  if (unavailable(implementation)) GTEST_SKIP() << unavailable_message(implementation);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  std::vector<std::vector<std::int64_t>> runs = {
      {-4, -3, -2, -1, 0, 1, 2, 3},
      {2147483644, 2147483645, 2147483646, 2147483647, 2147483648, 2147483649},
      {kMax - 3, kMax - 2, kMax - 1, kMax, kMin, kMin + 1, kMin + 2},
      {5, 6, 7, 5, 6, 100, 101, 102},  // runs broken and restarted
  };
  // a prefill longer than kernel-inl.h kRotationRun: 16-bit tables by angle addition, restarted
  runs.emplace_back();
  for (std::int64_t p = 123400; p < 123500; ++p) runs.back().push_back(p);

  for (const char* text : {"layout=half,head_dim=64,base=500000,dtype=f32",
                           "layout=interleaved,head_dim=40,rotary_dim=36,base=10000,scaling=yarn,factor=8,"
                           "original_max_position=4096,dtype=bf16",
                           "layout=half,head_dim=32,base=10000,dtype=f64",
                           "layout=half,head_dim=128,base=500000,scaling=yarn,factor=8,original_max_position=4096,"
                           "attention_factor=0.9,dtype=bf16",
                           "layout=half,head_dim=128,base=500000,direction=inverse,dtype=f16"}) {
    const Spec spec = parse_spec(text);
    const CSpec c_spec(spec);
    const std::size_t element = ropecheck_dtype_size(static_cast<std::int32_t>(spec.dtype));
    constexpr std::int64_t kHeads = 2;
    const std::int64_t row = kHeads * spec.head_dim;  // elements per token
    for (const auto& positions : runs) {
      const auto tokens = static_cast<std::int64_t>(positions.size());
      std::vector<unsigned char> input(static_cast<std::size_t>(tokens * row) * element);
      std::mt19937_64 random(static_cast<std::uint64_t>(tokens));
      for (std::size_t i = 0; i < input.size(); i += element) {
        const double value = std::uniform_real_distribution<double>(-4.0, 4.0)(random);
        write_element(input.data() + i, reference::round_to_format(value, spec.dtype), spec.dtype);
      }
      auto call_for = [&](std::int64_t first, std::int64_t count, std::vector<unsigned char>& output) {
        ropecheck_call call{};
        call.spec = c_spec.get();
        call.tokens = count;
        call.positions = positions.data() + first;
        call.q = ropecheck_tensor{kHeads, input.data() + static_cast<std::size_t>(first * row) * element, row,
                                  spec.head_dim, output.data() + static_cast<std::size_t>(first * row) * element, row,
                                  spec.head_dim};
        call.threads = 1;
        return ropecheck_kernel_apply(implementation.c_str(), &call);
      };
      std::vector<unsigned char> together(input.size());
      std::vector<unsigned char> apart(input.size());
      ASSERT_EQ(call_for(0, tokens, together), ROPECHECK_OK) << text;
      for (std::int64_t t = 0; t < tokens; ++t) ASSERT_EQ(call_for(t, 1, apart), ROPECHECK_OK) << text;
      for (std::int64_t t = 0; t < tokens; ++t) {
        const std::size_t begin = static_cast<std::size_t>(t * row) * element;
        const std::size_t end = begin + static_cast<std::size_t>(row) * element;
        EXPECT_TRUE(std::equal(together.begin() + static_cast<std::ptrdiff_t>(begin),
                               together.begin() + static_cast<std::ptrdiff_t>(end),
                               apart.begin() + static_cast<std::ptrdiff_t>(begin)))
            << text << ": position " << positions[static_cast<std::size_t>(t)];
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, ConsecutivePositions, ::testing::Values("scalar", "avx2", "avx512", "avx512bf16"),
                         kernel_name);

// Non-temporal stores (dispatch.cpp streaming_stores_pay: out of place, outputs of 16 MiB or more,
// rows 64-byte aligned) write the bits of plain stores: the same call into a 64-byte-aligned output
// (streamed) and into one 16 bytes off (plain stores) must agree, and agree with the scalar kernel
// (which has no streaming stores), for f32 (binary64 rotation) and f16/bf16 (binary32 rotation), in
// both layouts, with q and k in one call.
class StreamingStores : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamingStores, SameBitsAsPlainStores) {
  const std::string implementation = GetParam();
  if (unavailable(implementation)) GTEST_SKIP() << unavailable_message(implementation);
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  for (const char* text : {"layout=half,head_dim=128,base=500000,dtype=f32", "layout=interleaved,head_dim=128,base=10000,dtype=f32",
                           "layout=half,head_dim=128,base=500000,dtype=bf16", "layout=interleaved,head_dim=64,base=10000,dtype=bf16",
                           "layout=half,head_dim=128,base=500000,dtype=f16", "layout=interleaved,head_dim=128,base=10000,dtype=f16"}) {
    const Spec spec = parse_spec(text);
    const CSpec c_spec(spec);
    const std::size_t element = ropecheck_dtype_size(static_cast<std::int32_t>(spec.dtype));
    constexpr std::int64_t kHeads = 24;  // q 16 heads, k 8 heads
    const std::int64_t row = kHeads * spec.head_dim;
    // 18 MiB of output, above the 16 MiB threshold
    const std::int64_t tokens = (std::int64_t{18} << 20) / (row * static_cast<std::int64_t>(element));
    const std::size_t bytes = static_cast<std::size_t>(tokens * row) * element;
    std::vector<unsigned char> input(bytes);
    std::mt19937_64 random(7);
    for (std::size_t i = 0; i < bytes; i += element) {
      const double value = std::uniform_real_distribution<double>(-4.0, 4.0)(random);
      write_element(input.data() + i, reference::round_to_format(value, spec.dtype), spec.dtype);
    }
    std::vector<std::int64_t> positions(static_cast<std::size_t>(tokens));
    for (std::int64_t t = 0; t < tokens; ++t) positions[static_cast<std::size_t>(t)] = 1000 + 3 * t;
    auto run = [&](const std::string& which, std::size_t offset) {
      std::unique_ptr<unsigned char, Free> storage(static_cast<unsigned char*>(std::aligned_alloc(64, bytes + 64)));
      unsigned char* out = storage.get() + offset;
      ropecheck_call call{};
      call.spec = c_spec.get();
      call.tokens = tokens;
      call.positions = positions.data();
      const std::int64_t q_heads = 16;
      call.q = ropecheck_tensor{q_heads, input.data(), row, spec.head_dim, out, row, spec.head_dim};
      call.k = ropecheck_tensor{kHeads - q_heads, input.data() + q_heads * spec.head_dim * element, row, spec.head_dim,
                                out + q_heads * spec.head_dim * element, row, spec.head_dim};
      call.threads = 1;
      EXPECT_EQ(ropecheck_kernel_apply(which.c_str(), &call), ROPECHECK_OK) << which << " " << text;
      return std::vector<unsigned char>(out, out + bytes);
    };
    const auto streamed = run(implementation, 0);
    const auto plain = run(implementation, 16);
    const auto scalar = run("scalar", 16);
    EXPECT_TRUE(streamed == plain) << implementation << " " << text << ": streamed and plain stores differ";
    EXPECT_TRUE(streamed == scalar) << implementation << " " << text << ": differs from the scalar kernel";
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, StreamingStores, ::testing::Values("avx2", "avx512", "avx512bf16"),
                         kernel_name);

// The SIMD kernels round binary32 to bfloat16 with integer code (ops_avx2-inl.h bf16_pair_words:
// the carry out of the dropped half computed in 16-bit lanes) or, avx512bf16, with vcvtne2ps2bf16
// and the integer code for vectors holding a binary32 subnormal (which that instruction flushes:
// the subnormal inputs below reach it), the scalar kernel with convert-inl.h float_to_bf16. At position 0 the rotation is a = RN32(x·c), b = RN32(y·c) with
// c = RN32(A) (cos 0 = 1, sin 0 = 0), so every bfloat16 input (all 65536 bit patterns: zeros,
// subnormals, the largest values, ±Inf, NaNs) goes through one rounding of a known binary32 value;
// the attention factors are chosen so that those values include exact ties with an even and with an
// odd last kept bit (c = 1 − 2^-9: x = 1 gives 1.1111111|1 × 2^-1; c = 2^-1 + 2^-9: 1.0000000|1 × 2^-1),
// which the test checks before comparing every output bit for bit with the scalar kernel, in both
// layouts (half: even/odd blocks of two vectors, 16 pairs on AVX2 and 32 — this head_dim's — on
// AVX-512; interleaved: pairs in 32-bit words).
class Bfloat16Rounding : public ::testing::TestWithParam<std::string> {};

TEST_P(Bfloat16Rounding, EveryInputAgreesWithTheScalarKernel) {
  const std::string implementation = GetParam();
  if (unavailable(implementation)) GTEST_SKIP() << unavailable_message(implementation);
  constexpr int kHeadDim = 64;
  constexpr std::int64_t kTokens = 65536 / kHeadDim;
  std::vector<std::uint16_t> input(65536);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<std::uint16_t>(i);
  const std::vector<std::int64_t> positions(kTokens, 0);
  int even_ties = 0;
  int odd_ties = 0;
  for (const char* attention : {"0.998046875", "0.501953125", "0.7071067811865476"}) {
    const float c = static_cast<float>(std::strtod(attention, nullptr));  // RN32(A): exact for the first two
    for (const std::uint16_t x : input) {
      const std::uint32_t x_bits = static_cast<std::uint32_t>(x) << 16;
      float x_value;
      std::memcpy(&x_value, &x_bits, sizeof x_value);
      const float product = x_value * c;  // RN32(x·c), the value the kernels round to bfloat16
      std::uint32_t bits;
      std::memcpy(&bits, &product, sizeof bits);
      if (std::isfinite(product) && (bits & 0xFFFFu) == 0x8000u) ++((bits >> 16) & 1u ? odd_ties : even_ties);
    }
    for (const char* layout : {"half", "interleaved"}) {
      const Spec spec = parse_spec(std::string("layout=") + layout + ",head_dim=64,base=10000,scaling=yarn,factor=8," +
                                   "original_max_position=4096,attention_factor=" + attention + ",dtype=bf16");
      const CSpec c_spec(spec);
      auto run = [&](const std::string& which) {
        std::vector<std::uint16_t> out(input.size(), 0);
        ropecheck_call call{};
        call.spec = c_spec.get();
        call.tokens = kTokens;
        call.positions = positions.data();
        call.q = ropecheck_tensor{1, input.data(), kHeadDim, kHeadDim, out.data(), kHeadDim, kHeadDim};
        call.threads = 1;
        EXPECT_EQ(ropecheck_kernel_apply(which.c_str(), &call), ROPECHECK_OK) << which;
        return out;
      };
      const auto got = run(implementation);
      const auto expected = run("scalar");
      // A NaN result's sign and payload are those of the NaN operand each ISA's fused operation
      // propagates (x86's vfmsub keeps a NaN addend's sign; the scalar fmaf(x, c, −p) flips it), so
      // NaNs are compared as NaNs (abi_test SpecialValuesIn16BitDataFollowIeeeArithmetic), every
      // other output bit for bit.
      const auto is_nan = [](std::uint16_t bits) { return (bits & 0x7F80u) == 0x7F80u && (bits & 0x7Fu) != 0; };
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (is_nan(got[i]) && is_nan(expected[i])) continue;
        ASSERT_EQ(got[i], expected[i]) << implementation << " " << layout << " A = " << attention << " element " << i
                                       << " (input bits 0x" << std::hex << input[i] << ")";
      }
    }
  }
  EXPECT_GT(even_ties, 0) << "no binary32 value exactly halfway with an even last kept bit";
  EXPECT_GT(odd_ties, 0) << "no binary32 value exactly halfway with an odd last kept bit";
}

INSTANTIATE_TEST_SUITE_P(Cpu, Bfloat16Rounding, ::testing::Values("avx2", "avx512", "avx512bf16"),
                         kernel_name);

}  // namespace
}  // namespace ropecheck::kernels::testing
