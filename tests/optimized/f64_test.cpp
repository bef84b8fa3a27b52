// f64 data on the fly (optimized/kernel_f64-inl.h):
//  - F64Table: the double-double table of a token against MPFR (256 bits), positions up to 2^40,
//    within the table's share of the rounding test's K (plan.cpp decide_k_f64 less the rotation's
//    kF64RotationError; error_bounds.h step 1 and proofs/formal/gappa/f64_table.g).
//  - F64Kernels: every CPU kernel's bits equal reference::apply's on hard inputs (zeros, subnormal,
//    huge, infinite and NaN components, ties at position 0) and on random activations at random
//    positions up to 2^31 − 1, both layouts, several scalings (correct_rounding_test's Sweep has
//    every scaling type).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "optimized/c_spec.h"
#include "optimized/f64_table.h"
#include "optimized/isa.h"
#include "optimized/plan.h"
#include "optimized/workspace.h"
#include "reference/multiprecision.h"
#include "reference/rope.h"
#include "spec/schedule.h"
#include "tests/optimized/kernel_test_support.h"

namespace ropecheck::kernels::testing {
namespace {

std::vector<std::int64_t> table_positions() {
  std::vector<std::int64_t> p;
  for (std::int64_t i = -3; i < 40; ++i) p.push_back(i);
  for (int k = 5; k < 40; ++k) {
    const std::int64_t power = std::int64_t{1} << k;
    for (std::int64_t v : {power - 1, power, power + 1, -power}) p.push_back(v);
  }
  std::mt19937_64 rng(53);
  std::uniform_int_distribution<std::int64_t> any(-(std::int64_t{1} << 40) + 1, (std::int64_t{1} << 40) - 1);
  for (int i = 0; i < 40; ++i) p.push_back(any(rng));
  return p;
}

class F64Table : public ::testing::TestWithParam<std::string> {};

TEST_P(F64Table, WithinItsBound) {
  const Spec spec = parse_spec(GetParam());
  const Plan plan(spec);
  const PlanView view = plan.view();
  const int pairs = view.pairs;
  const WorkspaceStorage storage(pairs);
  const Workspace& work = storage.view();
  const CpuKernel kernel = scalar_isa::kernel();  // every CPU kernel computes the same bits (F64Kernels)
  reference::PrecisionScope scope(256);
  const reference::Real attention = attention_factor<reference::Real>(spec);
  const double scale = std::max(1.0, std::fabs(attention.convert_to<double>()));
  // the table's share of K (plan.cpp): kF64TableError and step 1's angle error, times S
  const double bound = view.decide_k_f64 - kF64RotationError * scale;
  double worst = 0;
  for (const std::int64_t position : table_positions()) {
    const std::vector<std::int64_t> tuple(static_cast<std::size_t>(position_components(spec)), position);
    kernel.f64_table(view, tuple.data(), work);
    for (int j = 0; j < pairs; ++j) {
      const reference::Real angle = reference::angle(spec, tuple, j, 256);
      const reference::Real c = reference::Real(work.cos_j[j]) + reference::Real(work.cos_lo[j]);
      const reference::Real s = reference::Real(work.sin_j[j]) + reference::Real(work.sin_lo[j]);
      const double cos_error = std::fabs((c - attention * cos(angle)).convert_to<double>());
      const double sin_error = std::fabs((s - attention * sin(angle)).convert_to<double>());
      worst = std::max({worst, cos_error, sin_error});
      ASSERT_LE(cos_error, bound) << "cos, position " << position << " pair " << j;
      ASSERT_LE(sin_error, bound) << "sin, position " << position << " pair " << j;
      ASSERT_LE(std::fabs(work.cos_lo[j]), std::ldexp(std::fabs(work.cos_j[j]), -52)) << "not normalized";
      ASSERT_LE(std::fabs(work.sin_lo[j]), std::ldexp(std::fabs(work.sin_j[j]), -52)) << "not normalized";
    }
  }
  std::printf("%s: worst |error| = 2^%.2f (bound 2^%.2f)\n", GetParam().c_str(), std::log2(worst), std::log2(bound));
}

INSTANTIATE_TEST_SUITE_P(Specs, F64Table,
                         ::testing::Values("layout=half,head_dim=128,base=500000,dtype=f64",
                                           "layout=interleaved,head_dim=64,base=10000,direction=inverse,dtype=f64",
                                           "layout=half,head_dim=64,base=10000000,scaling=yarn,factor=16,"
                                           "original_max_position=4096,mscale=1,mscale_all_dim=0.5,dtype=f64",
                                           "layout=half,head_dim=64,base=10000,scaling=yarn,factor=8,"
                                           "original_max_position=4096,attention_factor=1.5,dtype=f64",
                                           "layout=half,head_dim=64,base=1000000,axes=mrope,sections=8/12/12,dtype=f64"));

const char* const kImplementations[] = {"scalar", "avx2", "avx512", "avx512bf16"};

// Runs one f64 call of `implementation` (one head per token, contiguous) and checks every output
// against reference::apply bit for bit (NaN: any NaN).
void expect_reference_bits(const Spec& spec, const std::vector<std::int64_t>& positions, std::int64_t heads,
                           const std::vector<double>& input, const std::string& implementation) {
  const CSpec c_spec(spec);
  const std::int64_t tokens = static_cast<std::int64_t>(positions.size());
  std::vector<double> output(input.size(), -7.0);
  ropecheck_call call{};
  call.spec = c_spec.get();
  call.tokens = tokens;
  call.positions = positions.data();
  call.q.heads = heads;
  call.q.input = input.data();
  call.q.input_token_stride = heads * spec.head_dim;
  call.q.input_head_stride = spec.head_dim;
  call.q.output = output.data();
  call.q.output_token_stride = heads * spec.head_dim;
  call.q.output_head_stride = spec.head_dim;
  call.threads = 1;
  ASSERT_EQ(ropecheck_kernel_apply(implementation.c_str(), &call), ROPECHECK_OK);
  const std::vector<double> expected = reference::apply(spec, {tokens, heads, spec.head_dim}, positions, input);
  for (std::size_t i = 0; i < output.size(); ++i) {
    const std::size_t row = i / static_cast<std::size_t>(spec.head_dim);
    const std::size_t begin = row * static_cast<std::size_t>(spec.head_dim);
    ASSERT_TRUE(same_value(output[i], expected[i]))
        << implementation << ": element " << i << " = " << reference::to_hex(output[i]) << " instead of " << reference::to_hex(expected[i])
        << ", position " << positions[row / static_cast<std::size_t>(heads)] << ", dim " << i - begin;
  }
}

TEST(F64Kernels, HardInputsGiveTheReferenceBits) {
  const double inf = std::numeric_limits<double>::infinity();
  const double max = std::numeric_limits<double>::max();
  const std::vector<double> values = {0.0,       -0.0,   1.0,   -1.0, 0.1,     1.0 / 3.0, 0x1p-1074, -0x1p-1060,
                                      0x1p-1022, 1e-300, 1e300, -max, max / 3, inf,       -inf,      std::nan("")};
  const std::size_t n = values.size();
  for (const char* layout : {"half", "interleaved"}) {
    for (const char* scaling : {"scaling=none", "direction=inverse", "scaling=yarn,factor=8,original_max_position=4096",
                                "scaling=yarn,factor=8,original_max_position=4096,attention_factor=1.5"}) {
      // every (x, y) of `values` is one pair of the head
      const Spec spec =
          parse_spec(std::string("layout=") + layout + ",head_dim=" + std::to_string(2 * n * n) + ",base=10000," + scaling + ",dtype=f64");
      SCOPED_TRACE(to_string(spec));
      const std::vector<std::int64_t> positions = {0, 1, 2, 4097, 2147483646, 2147483647};
      std::vector<double> input;
      for (std::size_t t = 0; t < positions.size(); ++t) {
        std::vector<double> row(2 * n * n);
        for (std::size_t j = 0; j < n * n; ++j) {
          const auto dims = reference::pair_dims(spec, static_cast<int>(j));
          row[static_cast<std::size_t>(dims.first)] = values[j / n];
          row[static_cast<std::size_t>(dims.second)] = values[j % n];
        }
        input.insert(input.end(), row.begin(), row.end());
      }
      for (const char* implementation : kImplementations) {
        if (unavailable(implementation)) continue;
        expect_reference_bits(spec, positions, 1, input, implementation);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(F64Kernels, RandomPositionsBelow2To31GiveTheReferenceBits) {
  std::mt19937_64 rng(2026);
  std::uniform_int_distribution<std::int64_t> any(0, 2147483647);
  std::normal_distribution<double> activation(0.0, 2.0);
  std::vector<std::int64_t> positions(256);
  for (auto& p : positions) p = any(rng);
  for (const char* layout : {"half", "interleaved"}) {
    const Spec spec = parse_spec(std::string("layout=") + layout +
                                 ",head_dim=128,base=500000,scaling=llama3,factor=8,original_max_position=8192,dtype=f64");
    SCOPED_TRACE(to_string(spec));
    std::vector<double> input(positions.size() * 4 * 128);
    for (double& v : input) v = activation(rng);
    for (const char* implementation : kImplementations) {
      if (unavailable(implementation)) continue;
      expect_reference_bits(spec, positions, 4, input, implementation);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace ropecheck::kernels::testing
