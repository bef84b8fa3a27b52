// The two angle paths of the kernels (optimized/angle-inl.h) checked on their own, against MPFR:
// cos α and sin α of every pair at positions up to 2^40 − 1 (and negative ones) must be within
// kPreciseCosSinError (f64 data) and kFastCosSinError (f32/f16/bf16 data) of the exact values —
// the intermediate bounds of optimized/error_bounds.h (steps 1–3 and 2'–3'), times the attention
// factor's extra rounding when A ≠ 1. The end-to-end tests cannot see an error of a few ε in
// cos/sin through an f32 output; this test does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "optimized/error_bounds.h"
#include "optimized/isa.h"
#include "optimized/plan.h"
#include "optimized/workspace.h"
#include "reference/multiprecision.h"
#include "reference/rope.h"
#include "spec/schedule.h"
#include "spec/spec.h"

namespace ropecheck::kernels::testing {
namespace {

std::vector<std::int64_t> test_positions() {
  std::vector<std::int64_t> p;
  for (std::int64_t i = -3; i < 40; ++i) p.push_back(i);
  for (int k = 5; k < 40; ++k) {
    const std::int64_t power = std::int64_t{1} << k;
    for (std::int64_t v : {power - 1, power, power + 1, -power}) p.push_back(v);
  }
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> any(-(std::int64_t{1} << 40) + 1, (std::int64_t{1} << 40) - 1);
  for (int i = 0; i < 40; ++i) p.push_back(any(rng));
  return p;
}

class AnglePath : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(AnglePath, CosSinWithinTheirBound) {
  const auto& [text, precise] = GetParam();
  const Spec spec = parse_spec(text);
  const Plan plan(spec);
  PlanView view = plan.view();
  view.precise_angles = precise;
  const int pairs = view.pairs;
  const WorkspaceStorage storage(pairs);
  const Workspace& work = storage.view();
  const CpuKernel kernel = scalar_isa::kernel();  // every CPU kernel computes the same bits (kernel_test)
  reference::PrecisionScope scope(256);
  const reference::Real attention = attention_factor<reference::Real>(spec);
  const double a = std::fabs(attention.convert_to<double>());
  const double delta = precise ? kPreciseCosSinError : kFastCosSinError;
  // error_bounds.h: |c − A cos α| ≤ |A|(δ + ε(1 + δ)) when A ≠ 1 (one more rounding)
  const double bound = view.attention_is_one ? delta : a * (delta + 0x1p-53 * (1 + delta));
  double worst = 0;
  std::vector<double> cos_row(static_cast<std::size_t>(pairs));
  std::vector<double> sin_row(static_cast<std::size_t>(pairs));
  for (const std::int64_t position : test_positions()) {
    kernel.cos_sin_rows(view, position, 1, work, cos_row.data(), sin_row.data());
    const std::vector<std::int64_t> tuple(static_cast<std::size_t>(position_components(spec)), position);
    for (int j = 0; j < pairs; ++j) {
      const reference::Real angle = reference::angle(spec, tuple, j, 256);
      const double cos_error = std::fabs((reference::Real(cos_row[static_cast<std::size_t>(j)]) - attention * cos(angle))
                                             .convert_to<double>());
      const double sin_error = std::fabs((reference::Real(sin_row[static_cast<std::size_t>(j)]) - attention * sin(angle))
                                             .convert_to<double>());
      worst = std::max({worst, cos_error, sin_error});
      ASSERT_LE(cos_error, bound) << "cos, position " << position << " pair " << j;
      ASSERT_LE(sin_error, bound) << "sin, position " << position << " pair " << j;
    }
  }
  std::printf("%s path, %s: worst |error| = %.3g ε (bound %.3g ε)\n", precise ? "precise" : "fast", text.c_str(),
              worst / 0x1p-53, bound / 0x1p-53);
}

// Step 1 by addition (kernel-inl.h token_phases): after rows of consecutive positions the
// workspace holds exactly P·step mod 2^128 of the last position P (two's complement), computed
// here with 128-bit integers from the plan's steps; and each row's cos/sin are the bits of that
// position computed on its own (memo cleared: the phase multiplied out). Runs cross the low word's
// carry, −1 → 0 and the ends of int64; 3000 rows let a wrong carry accumulate far past the fast
// path's 2^-54-turn rounding, which would hide a single one.
TEST(PhaseByAddition, EqualsTheProductAndGivesTheSameCosSin) {
  using Wide = unsigned __int128;
  const Spec spec = parse_spec("layout=half,head_dim=128,base=500000,scaling=yarn,factor=8,original_max_position=4096,dtype=f32");
  const Plan plan(spec);
  const PlanView view = plan.view();
  const int pairs = view.pairs;
  const WorkspaceStorage storage(pairs);
  const Workspace& work = storage.view();
  const CpuKernel kernel = scalar_isa::kernel();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const std::pair<std::int64_t, std::int64_t> runs[] = {{-1500, 3000}, {kMax - 2, 3}, {kMin, 5}, {1234567890123, 3000}};
  for (const auto& [first, rows] : runs) {
    std::vector<double> cos_rows(static_cast<std::size_t>(rows * pairs));
    std::vector<double> sin_rows(static_cast<std::size_t>(rows * pairs));
    work.memo->valid = false;
    kernel.cos_sin_rows(view, first, rows, work, cos_rows.data(), sin_rows.data());
    const std::int64_t last = first + (rows - 1);
    // P = last as a 128-bit two's complement number
    const Wide p = static_cast<Wide>(static_cast<std::uint64_t>(last)) -
                   (last < 0 ? (static_cast<Wide>(1) << 64) : static_cast<Wide>(0));
    for (int j = 0; j < pairs; ++j) {
      const Wide step = (static_cast<Wide>(plan.step_hi(j)) << 64) | plan.step_lo(j);
      const Wide phase = p * step;
      ASSERT_EQ(work.words[j], static_cast<std::uint64_t>(phase >> 64)) << first << " pair " << j;
      ASSERT_EQ(work.phase_low[j], static_cast<std::uint64_t>(phase)) << first << " pair " << j;
    }
    std::vector<double> cos_one(static_cast<std::size_t>(pairs));
    std::vector<double> sin_one(static_cast<std::size_t>(pairs));
    for (std::int64_t row = 0; row < rows; row += (rows > 100 ? 37 : 1)) {
      work.memo->valid = false;
      kernel.cos_sin_rows(view, first + row, 1, work, cos_one.data(), sin_one.data());
      for (int j = 0; j < pairs; ++j) {
        const std::size_t at = static_cast<std::size_t>(row * pairs + j);
        ASSERT_EQ(std::memcmp(&cos_rows[at], &cos_one[static_cast<std::size_t>(j)], 8), 0) << first + row << " pair " << j;
        ASSERT_EQ(std::memcmp(&sin_rows[at], &sin_one[static_cast<std::size_t>(j)], 8), 0) << first + row << " pair " << j;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Specs, AnglePath,
    ::testing::Combine(::testing::Values("layout=half,head_dim=128,base=500000,dtype=f32",
                                         "layout=interleaved,head_dim=64,base=10000,direction=inverse,dtype=f32",
                                         "layout=half,head_dim=64,base=10000000,scaling=yarn,factor=16,"
                                         "original_max_position=4096,mscale=1,mscale_all_dim=0.5,dtype=f32",
                                         "layout=half,head_dim=64,base=1000000,axes=mrope,sections=8/12/12,dtype=bf16"),
                       ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<1>(info.param) ? "precise_" : "fast_") + "case" + std::to_string(info.index / 2);
    });

// The binary32 table of 16-bit data by angle addition (kernel-inl.h next_table_by_rotation) must
// be the direct table's bits: a call over a run of consecutive positions leaves the last token's
// table in the workspace, which must equal, bit for bit, the table of a call for that token alone
// (always direct). Runs of every length 1 … 70 (past the restart after kRotationRun = 32 tokens)
// from starts near 0, across −1 → 0, near 2^31 and near 2^40, for f16 and bf16, A = 1, A < 1, A > 1
// (f16), the inverse direction, both layouts (the half layout's bfloat16 table is stored split into
// 16-pair blocks the same way by both calls). The scalar kernel (every ISA runs the same per-lane
// operations: kernel_test BitForBitEqualToScalar). The test also checks that the runs did use the
// rotation (the workspace's RotationMemo age), so that it tests what it names.
TEST(TableByRotation, GivesTheBitsOfTheDirectTable) {
  const CpuKernel kernel = scalar_isa::kernel();
  int rotated_tokens = 0;
  int compared_tokens = 0;
  double worst = 0;
  for (const char* text : {"layout=half,head_dim=128,base=500000,dtype=bf16",
                           "layout=interleaved,head_dim=64,base=10000,direction=inverse,dtype=f16",
                           "layout=half,head_dim=128,base=500000,scaling=yarn,factor=8,original_max_position=4096,"
                           "attention_factor=0.7,dtype=bf16",
                           "layout=half,head_dim=80,rotary_dim=72,base=1000000,scaling=yarn,factor=32,"
                           "original_max_position=4096,dtype=f16",
                           "layout=interleaved,head_dim=64,base=10000,scaling=yarn,factor=4,original_max_position=2048,"
                           "attention_factor=300,dtype=f16"}) {
    const Spec spec = parse_spec(text);
    const Plan plan(spec);
    CallView call;
    call.plan = plan.view();
    // the table by angle addition is the binary32 path's; f16 data takes the binary64 rotation by
    // default (plan.cpp), so the flag is set here to test the table over f16's specs too
    call.plan.rotate_binary32 = true;
    const int pairs = call.plan.pairs;
    constexpr std::int64_t kLongest = 70;
    std::vector<std::uint16_t> data(static_cast<std::size_t>(kLongest * spec.head_dim), 0);
    call.q = TensorView{1, data.data(), spec.head_dim, spec.head_dim, data.data(), spec.head_dim, spec.head_dim};
    for (const std::int64_t start : {std::int64_t{0}, std::int64_t{-35}, std::int64_t{2147483600},
                                     (std::int64_t{1} << 40) - 100}) {
      std::vector<std::int64_t> positions(static_cast<std::size_t>(kLongest));
      for (std::int64_t t = 0; t < kLongest; ++t) positions[static_cast<std::size_t>(t)] = start + t;
      call.positions = positions.data();
      for (std::int64_t length = 1; length <= kLongest; ++length) {
        const WorkspaceStorage run_storage(pairs);
        kernel.process_tokens(call, 0, length, run_storage.view());
        rotated_tokens += run_storage.view().rotation->age > 0 ? 1 : 0;
        const WorkspaceStorage alone_storage(pairs);
        kernel.process_tokens(call, length - 1, length, alone_storage.view());
        const Workspace& run = run_storage.view();
        const Workspace& alone = alone_storage.view();
        ASSERT_EQ(std::memcmp(run.cos32, alone.cos32, sizeof(float) * static_cast<std::size_t>(pairs)), 0)
            << text << ": cos, position " << start + length - 1 << " after a run of " << length;
        ASSERT_EQ(std::memcmp(run.sin32, alone.sin32, sizeof(float) * static_cast<std::size_t>(pairs)), 0)
            << text << ": sin, position " << start + length - 1 << " after a run of " << length;
        ++compared_tokens;
        // the binary64 entries themselves: within the bound the rounding test relies on
        // (error_bounds.h TABLE BY ANGLE ADDITION: 2^-44·max(1, |A|); Coq AngleAddition.v: 287.4·ε·|A|)
        const double scale = std::max(1.0, std::fabs(call.plan.attention));
        for (int j = 0; j < pairs; ++j) {
          const double gap = std::max(std::fabs(run.cos_j[j] - alone.cos_j[j]), std::fabs(run.sin_j[j] - alone.sin_j[j]));
          worst = std::max(worst, gap / scale);
          ASSERT_LE(gap, 0x1p-44 * scale) << text << ": position " << start + length - 1 << " pair " << j;
        }
      }
    }
  }
  // most runs longer than one token end on a table by rotation (a direct one only every 32 tokens
  // and where an entry lies within 2^-44 of a binary32 rounding boundary)
  EXPECT_GT(rotated_tokens, compared_tokens / 2) << rotated_tokens << " of " << compared_tokens;
  std::printf("table by rotation: %d of %d runs ended on it; worst |binary64 entry − direct| = %.3g ε·max(1, |A|) "
              "(bound 2^-44 = %.0f ε)\n", rotated_tokens, compared_tokens, worst / 0x1p-53, 0x1p-44 / 0x1p-53);
}

}  // namespace
}  // namespace ropecheck::kernels::testing
