// Each scaling type's frequencies against the formula of docs/rope.md §2 written again here, independently,
// in long double (HF transformers' rope init functions and llama.cpp's rope_yarn are the sources the
// formulas cite). Bound: ≤ 40 long-double operations of relative error 2^-64 each, amplified by the
// conditioning of b^(−2j/d) (|2j/d·ln b| ≤ 21 for b ≤ 1e9) — well inside 2^-50 relative.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/rope.h"
#include "spec/schedule.h"

namespace ropecheck {
namespace {

using ld = long double;
constexpr ld kPi = 3.141592653589793238462643383279502884L;
constexpr ld kRelativeBound = 0x1p-50L;

std::vector<ld> computed(const std::string& text) {
  const auto values = reference::frequencies(parse_spec(text), 128);
  std::vector<ld> out;
  for (const auto& v : values) out.push_back(static_cast<ld>(v));
  return out;
}

void expect_close(const std::vector<ld>& got, const std::vector<ld>& expected, const std::string& what) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t j = 0; j < got.size(); ++j) {
    EXPECT_LE(std::fabs(got[j] - expected[j]), kRelativeBound * std::fabs(expected[j])) << what << " pair " << j;
  }
}

ld default_theta(ld base, int j, int d) { return std::pow(base, -2.0L * j / d); }

TEST(Schedule, DefaultIsBaseToTheMinusTwoJOverD) {
  std::vector<ld> expected;
  for (int j = 0; j < 64; ++j) expected.push_back(default_theta(10000, j, 128));
  expect_close(computed("layout=half,head_dim=128,base=10000"), expected, "default");
  // By hand: d = 4, b = 10000: θ = (1, 1/100).
  const auto small = computed("layout=half,head_dim=4,base=10000");
  EXPECT_EQ(small[0], 1.0L);
  EXPECT_LE(std::fabs(small[1] - 0.01L), 0x1p-60L);
}

TEST(Schedule, LinearDividesByTheFactor) {
  std::vector<ld> expected;
  for (int j = 0; j < 32; ++j) expected.push_back(default_theta(10000, j, 64) / 4);
  expect_close(computed("layout=half,head_dim=64,base=10000,scaling=linear,factor=4"), expected, "linear");
}

TEST(Schedule, NtkAndDynamicRaiseTheBase) {
  const int d = 128;
  std::vector<ld> ntk, dynamic, dynamic_short;
  const ld ntk_base = 10000 * std::pow(8.0L, static_cast<ld>(d) / (d - 2));
  // dynamic: L' = max(L, Lmax); b' = b·(f·L'/Lmax − (f − 1))^(d/(d−2))
  const ld dynamic_base = 10000 * std::pow(2.0L * 9000 / 4096 - 1, static_cast<ld>(d) / (d - 2));
  for (int j = 0; j < d / 2; ++j) {
    ntk.push_back(default_theta(ntk_base, j, d));
    dynamic.push_back(default_theta(dynamic_base, j, d));
    dynamic_short.push_back(default_theta(10000, j, d));  // L ≤ Lmax: b' = b·(f − f + 1) = b
  }
  expect_close(computed("layout=half,head_dim=128,base=10000,scaling=ntk,factor=8"), ntk, "ntk");
  expect_close(computed("layout=half,head_dim=128,base=10000,scaling=dynamic,factor=2,original_max_position=4096,seq_len=9000"),
               dynamic, "dynamic");
  expect_close(computed("layout=half,head_dim=128,base=10000,scaling=dynamic,factor=2,original_max_position=4096,seq_len=100"),
               dynamic_short, "dynamic below Lmax");
}

// HF YaRN, written out: corr(r) = d·ln(L0/(2πr))/(2 ln b), truncated, clamped, linear ramp.
std::vector<ld> yarn(ld base, int d, ld factor, ld l0, ld beta_fast, ld beta_slow, bool truncate) {
  auto corr = [&](ld r) { return d * std::log(l0 / (2 * kPi * r)) / (2 * std::log(base)); };
  ld low = corr(beta_fast), high = corr(beta_slow);
  if (truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max<ld>(low, 0);
  high = std::min<ld>(high, d - 1);
  if (low == high) high += 0.001L;
  std::vector<ld> out;
  for (int j = 0; j < d / 2; ++j) {
    const ld ramp = std::clamp((j - low) / (high - low), 0.0L, 1.0L);
    const ld theta = default_theta(base, j, d);
    out.push_back(theta / factor * ramp + theta * (1 - ramp));
  }
  return out;
}

TEST(Schedule, YarnQwenSettingAndBandEdges) {
  const auto expected = yarn(1000000, 128, 4, 32768, 32, 1, true);
  const auto got = computed("layout=half,head_dim=128,base=1000000,scaling=yarn,factor=4,original_max_position=32768");
  expect_close(got, expected, "yarn");
  // Band edges: below low the frequency is kept, above high it is divided by the factor.
  const ld low = std::floor(128 * std::log(32768 / (2 * kPi * 32)) / (2 * std::log(1000000.0L)));
  const ld high = std::ceil(128 * std::log(32768 / (2 * kPi * 1)) / (2 * std::log(1000000.0L)));
  for (int j = 0; j < 64; ++j) {
    const ld theta = default_theta(1000000, j, 128);
    if (j <= low) {
      EXPECT_LE(std::fabs(got[j] - theta), kRelativeBound * theta) << j;
    }
    if (j >= high) {
      EXPECT_LE(std::fabs(got[j] - theta / 4), kRelativeBound * theta) << j;
    }
  }
  EXPECT_GT(high - low, 2);  // the ramp has interior points, so all three branches ran
  expect_close(
      computed("layout=half,head_dim=64,base=10000,scaling=yarn,factor=16,original_max_position=4096,truncate=false,beta_fast=16,beta_slow=2"),
      yarn(10000, 64, 16, 4096, 16, 2, false), "yarn untruncated");
}

TEST(Schedule, YarnAttentionFactor) {
  // g(f) = 0.1·ln f + 1; with mscale/mscale_all_dim the ratio g(f, m)/g(f, m_all); explicit wins.
  auto factor_of = [](const std::string& text) {
    reference::PrecisionScope scope(128);
    return static_cast<ld>(attention_factor<reference::Real>(parse_spec(text)));
  };
  const std::string base = "layout=half,head_dim=64,base=10000,scaling=yarn,factor=40,original_max_position=4096";
  EXPECT_LE(std::fabs(factor_of(base) - (0.1L * std::log(40.0L) + 1)), 0x1p-60L);
  EXPECT_LE(std::fabs(factor_of(base + ",mscale=0.707,mscale_all_dim=0.707") - 1), 0x1p-60L);
  EXPECT_LE(std::fabs(factor_of(base + ",mscale=1,mscale_all_dim=0.5") -
                      (0.1L * std::log(40.0L) + 1) / (0.05L * std::log(40.0L) + 1)),
            0x1p-60L);
  EXPECT_LE(std::fabs(factor_of(base + ",attention_factor=1.25") - 1.25L), 0x1p-60L);
}

TEST(Schedule, YarnGgmlRampAndMagnitude) {
  // llama.cpp rope_yarn: ramp = 1 − clamp((j − low)/max(0.001, high − low)), mix = ramp·ext,
  // θ' = θ·fs·(1 − mix) + θ·mix; magnitude attn·(1 + 0.1·ln(1/fs)) when ext ≠ 0.
  const int d = 128;
  const ld fs = 0.25L, ext = 0.5L, base = 10000, l0 = 4096;
  auto corr = [&](ld r) { return d * std::log(l0 / (r * 2 * kPi)) / (2 * std::log(base)); };
  const ld low = std::max<ld>(0, std::floor(corr(32))), high = std::min<ld>(d - 1, std::ceil(corr(1)));
  std::vector<ld> expected;
  for (int j = 0; j < d / 2; ++j) {
    const ld ramp = 1 - std::clamp((j - low) / std::max<ld>(0.001L, high - low), 0.0L, 1.0L);
    const ld theta = default_theta(base, j, d);
    expected.push_back(theta * fs * (1 - ramp * ext) + theta * ramp * ext);
  }
  const std::string text = "layout=half,head_dim=128,base=10000,scaling=yarn-ggml,freq_scale=0.25,original_max_position=4096,ext_factor=0.5,attn_factor=2";
  expect_close(computed(text), expected, "yarn-ggml");
  reference::PrecisionScope scope(128);
  EXPECT_LE(std::fabs(static_cast<ld>(attention_factor<reference::Real>(parse_spec(text))) - 2 * (1 + 0.1L * std::log(4.0L))),
            0x1p-60L);
}

TEST(Schedule, Llama3ThreeBandsWithMetaDefaults) {
  // HF _compute_llama3_parameters: λ = 2π/θ; λ < L0/high: θ; λ > L0/low: θ/f; else smooth blend.
  const auto got = computed("layout=half,head_dim=128,base=500000,scaling=llama3");
  int kept = 0, divided = 0, blended = 0;
  for (int j = 0; j < 64; ++j) {
    const ld theta = default_theta(500000, j, 128);
    const ld wavelength = 2 * kPi / theta;
    ld expected;
    if (wavelength < 8192.0L / 4) {
      expected = theta, ++kept;
    } else if (wavelength > 8192.0L / 1) {
      expected = theta / 8, ++divided;
    } else {
      const ld s = (8192 / wavelength - 1) / (4 - 1);
      expected = (1 - s) * theta / 8 + s * theta, ++blended;
    }
    EXPECT_LE(std::fabs(got[j] - expected), kRelativeBound * expected) << "pair " << j;
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(blended, 0);
}

TEST(Schedule, LongRopePicksShortOrLongFactors) {
  const std::string factors = "short_factor=1/1.5/2/3,long_factor=2/4/8/16,original_max_position=4096";
  const std::vector<ld> short_factor = {1, 1.5L, 2, 3}, long_factor = {2, 4, 8, 16};
  std::vector<ld> expected_short, expected_long;
  for (int j = 0; j < 4; ++j) {
    expected_short.push_back(1 / (short_factor[j] * std::pow(10000.0L, 2.0L * j / 8)));
    expected_long.push_back(1 / (long_factor[j] * std::pow(10000.0L, 2.0L * j / 8)));
  }
  expect_close(computed("layout=half,head_dim=8,base=10000,scaling=longrope," + factors + ",seq_len=4096"), expected_short, "short");
  expect_close(computed("layout=half,head_dim=8,base=10000,scaling=longrope," + factors + ",seq_len=4097"), expected_long, "long");
  reference::PrecisionScope scope(128);
  const Spec spec = parse_spec("layout=half,head_dim=8,base=10000,scaling=longrope," + factors + ",seq_len=5000,factor=32");
  EXPECT_LE(std::fabs(static_cast<ld>(attention_factor<reference::Real>(spec)) -
                      std::sqrt(1 + std::log(32.0L) / std::log(4096.0L))),
            0x1p-60L);
}

TEST(Schedule, MultiAxisFrequencies) {
  // 2-D RoPE: pairs (2g, 2g+1) share θ_g of a 1-D schedule over rotary_dim/2 dims (docs/rope.md §2).
  const auto two_d = computed("layout=interleaved,head_dim=16,base=10000,axes=2d");
  for (int j = 0; j < 8; ++j) {
    const ld expected = default_theta(10000, j / 2, 8);
    EXPECT_LE(std::fabs(two_d[j] - expected), kRelativeBound * expected) << j;
  }
  // M-RoPE: frequencies as 1-D; the sections only choose the position component.
  const Spec mrope = parse_spec("layout=half,head_dim=12,base=10000,axes=mrope,sections=1/2/3");
  const int expected_component[] = {0, 1, 1, 2, 2, 2};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(position_component(mrope, j), expected_component[j]);
  const auto theta = computed("layout=half,head_dim=12,base=10000,axes=mrope,sections=1/2/3");
  for (int j = 0; j < 6; ++j) EXPECT_LE(std::fabs(theta[j] - default_theta(10000, j, 12)), kRelativeBound * theta[j]);
}

}  // namespace
}  // namespace ropecheck
