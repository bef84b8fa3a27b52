// Calibration of the verdict models and of the diagnosis (issue "A verdict real float32
// implementations can pass"): test candidates written from the formulas — not copied from any
// library — run over the checked-in golden suites through the one golden loop (runner/golden_run.h).
//   - the torch-style float32 recipe (HF transformers' LLaMA rotary embedding, from its formulas:
//     inv_freq = 1.0 / base ** (arange(0, d, 2).float() / d), freqs = t.float() * inv_freq,
//     cos/sin of freqs in float32 then cast to the data dtype, q·cos + rotate_half(q)·sin in the
//     data dtype; YaRN's attention factor multiplied into cos/sin);
//   - a running-product recipe (ggml's: the angle of pair j is p·r^j formed by repeated float32
//     multiplication, r = base^(-2/d));
//   - a correctly rounded float32 angle (θ'_j rounded once, then the angle rounded once);
//   - an implementation whose angle is computed in binary64;
//   - each usual bug planted in the torch-style recipe.
// Expected verdicts come from the models' definitions (judge/tolerance.h) and the diagnosis must
// name the planted cause.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "runner/golden_run.h"
#include "runner/implementation.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::judge {
namespace {

using runner::ApplyResult;
using runner::Implementation;
using runner::judge_golden;
using runner::Judgement;
using runner::load_golden;
using runner::Shape;

const std::string kSuites = std::string(ROPECHECK_SOURCE_DIR) + "/golden/suites/";

enum class Angle { torch, running_product, correctly_rounded, binary64 };

struct Bugs {
  bool swap_layout = false;
  bool sin_flipped = false;
  bool theta_bf16 = false;    // inv_freq held in bfloat16
  bool cos_sin_bf16 = false;  // cos/sin cached in bfloat16 for float32 data
  bool missing_mscale = false;
  std::int64_t position_shift = 0;
  std::string base = {};  // a base other than the spec's
};

double round_to(double v, Dtype dtype) { return std::isfinite(v) ? reference::round_to_format(v, dtype) : v; }

class Recipe final : public Implementation {
 public:
  Recipe(std::string name, Angle angle, Bugs bugs = {}, Model model = Model::exact)
      : Implementation(Claims{model, std::nullopt}), name_(std::move(name)), angle_(angle), bugs_(std::move(bugs)) {}
  std::string name() const override { return name_; }
  std::string selector() const override { return name_; }

  ApplyResult run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                  std::span<const double> input) const override {
    const bool one_axis = spec.axes.kind == AxesKind::none;
    if (spec.dtype == Dtype::f64 || (angle_ == Angle::running_product && (spec.scaling.type != ScalingType::none || !one_axis))) {
      return {ApplyResult::Status::unsupported, "not in this recipe", {}};
    }
    const Dtype dtype = spec.dtype;
    const int pairs = spec.rotary_dim / 2;
    const float base = static_cast<float>(std::strtod((bugs_.base.empty() ? spec.base : bugs_.base).c_str(), nullptr));
    std::vector<float> inv_freq(static_cast<std::size_t>(pairs));
    for (int j = 0; j < pairs; ++j) {
      float theta = 0;
      if (angle_ == Angle::torch && one_axis && spec.scaling.type == ScalingType::none) {
        const float exponent = static_cast<float>(2 * j) / static_cast<float>(spec.rotary_dim);  // arange(0, d, 2).float() / d
        theta = 1.0f / std::pow(base, exponent);
      } else if (angle_ == Angle::torch && one_axis && spec.scaling.type == ScalingType::linear) {
        const float exponent = static_cast<float>(2 * j) / static_cast<float>(spec.rotary_dim);
        theta = 1.0f / std::pow(base, exponent) / static_cast<float>(std::strtod(spec.scaling.factor.c_str(), nullptr));
      } else {
        // The other schedules (HF computes them in float32 from the same formulas) and the correctly
        // rounded angle: θ'_j rounded once to float
        theta = static_cast<float>(frequency<long double>(spec, j));
      }
      if (bugs_.theta_bf16) theta = static_cast<float>(round_to(theta, Dtype::bf16));
      inv_freq[static_cast<std::size_t>(j)] = theta;
    }
    const float r = std::pow(base, -2.0f / static_cast<float>(spec.rotary_dim));
    const float g = bugs_.missing_mscale ? 1.0f : static_cast<float>(attention_factor<double>(spec));
    Spec layout_spec = spec;
    if (bugs_.swap_layout) layout_spec.layout = spec.layout == Layout::half ? Layout::interleaved : Layout::half;
    const double sign = spec.direction == Direction::inverse ? -1 : 1;
    ApplyResult out;
    out.output.assign(input.begin(), input.end());
    const int components = position_components(spec);
    for (std::int64_t t = 0; t < shape.tokens; ++t) {
      float running = static_cast<float>(positions[static_cast<std::size_t>(t * components)] + bugs_.position_shift);  // ggml: the angle itself, times r per pair
      for (int j = 0; j < pairs; ++j) {
        // multi-axis: the pair's own position component
        const std::int64_t m = positions[static_cast<std::size_t>(t * components + position_component(spec, j))] + bugs_.position_shift;
        double c = 0, s = 0;
        if (angle_ == Angle::binary64) {
          const double phi = sign * static_cast<double>(m) * frequency<double>(spec, j);
          c = std::cos(phi) * g;
          s = std::sin(phi) * g;
        } else {
          const float phi = angle_ == Angle::running_product ? running
                                                             : static_cast<float>(m) * inv_freq[static_cast<std::size_t>(j)];
          running *= r;
          c = std::cos(phi);  // float cos/sin (std::cos(float) is cosf)
          s = static_cast<float>(sign) * std::sin(phi);
          c = static_cast<float>(c) * g;
          s = static_cast<float>(s) * g;
        }
        if (bugs_.sin_flipped) s = -s;
        // cos/sin cast to the data dtype (HF's .to(x.dtype)), or to bfloat16 by mistake
        const Dtype cache = bugs_.cos_sin_bf16 ? Dtype::bf16 : dtype;
        if (angle_ != Angle::binary64) {
          c = round_to(c, cache);
          s = round_to(s, cache);
        }
        const reference::PairDims pd = reference::pair_dims(layout_spec, j);
        for (std::int64_t h = 0; h < shape.heads; ++h) {
          const std::size_t row = static_cast<std::size_t>((t * shape.heads + h) * shape.head_dim);
          const double x = input[row + static_cast<std::size_t>(pd.first)], y = input[row + static_cast<std::size_t>(pd.second)];
          double a = 0, b = 0;
          if (angle_ == Angle::binary64) {  // the rotation in binary64, one rounding to the dtype
            a = round_to(x * c - y * s, dtype);
            b = round_to(x * s + y * c, dtype);
          } else {  // q·cos + rotate_half(q)·sin, every operation rounded to the data dtype
            a = round_to(round_to(x * c, dtype) - round_to(y * s, dtype), dtype);
            b = round_to(round_to(x * s, dtype) + round_to(y * c, dtype), dtype);
          }
          out.output[row + static_cast<std::size_t>(pd.first)] = a;
          out.output[row + static_cast<std::size_t>(pd.second)] = b;
        }
      }
    }
    return out;
  }

 private:
  std::string name_;
  Angle angle_;
  Bugs bugs_;
};

Judgement judge(const std::string& suite, const Implementation& implementation) {
  return judge_golden(load_golden(kSuites + suite), implementation, Settings{});
}

std::string describe(const GroupResult& g) {
  std::string s = g.suite + "#" + std::to_string(g.index) + " " + g.spec + ": " + std::string(name(g.verdict)) + ", worst e " +
                  std::to_string(g.worst_e) + ", horizon " + (g.horizon ? std::to_string(*g.horizon) : "none");
  if (g.diagnosis) {
    for (const std::string& line : g.diagnosis->lines) s += "\n    " + line;
  }
  return s;
}

// Every checked-in RoPE suite with float32, float16 or bfloat16 groups (its float64 groups are skipped:
// the recipe is float32's).
const char* const kFloatSuites[] = {
    "interleaved-f32-base10000.json",  "interleaved-f32-base500000.json",  "interleaved-f32-base1000000.json",
    "half-f32-base10000.json",         "half-f32-base500000.json",         "half-f32-base1000000.json",
    "interleaved-f16-base10000.json",  "interleaved-f16-base500000.json",  "interleaved-f16-base1000000.json",
    "half-f16-base10000.json",         "half-f16-base500000.json",         "half-f16-base1000000.json",
    "interleaved-bf16-base10000.json", "interleaved-bf16-base500000.json", "interleaved-bf16-base1000000.json",
    "half-bf16-base10000.json",        "half-bf16-base500000.json",        "half-bf16-base1000000.json",
    "scaling-linear.json",             "scaling-ntk.json",                 "scaling-dynamic.json",
    "scaling-yarn.json",               "scaling-yarn-ggml.json",           "scaling-llama3.json",
    "scaling-longrope.json",           "axes-2d.json",                     "axes-mrope.json",
    "multi-head.json",                 "direction-inverse.json",           "edge-cases.json",
};

TEST(Calibration, TorchRecipePassesF32AngleEverywhereAndFailsExactWithAHorizon) {
  const Recipe f32_angle("torch-recipe", Angle::torch, {}, Model::f32_angle);
  const Recipe exact("torch-recipe", Angle::torch, {}, Model::exact);
  int judged = 0, failed_exact = 0;
  for (const char* suite : kFloatSuites) {
    for (const GroupResult& g : judge(suite, f32_angle).groups) {
      EXPECT_NE(g.verdict, ropecheck::judge::Verdict::fail) << describe(g);
      judged += g.verdict == judge::Verdict::pass;
    }
    for (const GroupResult& g : judge(suite, exact).groups) {
      if (g.verdict != judge::Verdict::fail || g.dtype != Dtype::f32) continue;
      ++failed_exact;
      // A float32 angle is accurate at small positions only: a horizon, below the largest position.
      ASSERT_TRUE(g.horizon.has_value() || g.max_position >= 0) << describe(g);
      EXPECT_FALSE(g.horizon_complete) << describe(g);
      ASSERT_TRUE(g.diagnosis.has_value()) << describe(g);
      EXPECT_NE(g.diagnosis->lines.front().find("--model f32-angle judges this class"), std::string::npos) << describe(g);
    }
  }
  EXPECT_GT(judged, 80);
  EXPECT_GT(failed_exact, 10);
}

TEST(Calibration, CorrectlyRoundedAndBinary64AnglesPassF32Angle) {
  for (Angle angle : {Angle::correctly_rounded, Angle::binary64}) {
    const Recipe recipe("angle", angle, {}, Model::f32_angle);
    for (const char* suite : {"half-f32-base500000.json", "interleaved-bf16-base10000.json", "scaling-yarn.json"}) {
      for (const GroupResult& g : judge(suite, recipe).groups) EXPECT_NE(g.verdict, ropecheck::judge::Verdict::fail) << describe(g);
    }
  }
}

TEST(Calibration, RunningProductFailsF32AngleWithAFrequencyErrorGrowingWithThePairIndex) {
  const Recipe running("running-product", Angle::running_product, {}, Model::f32_angle);
  int failed = 0;
  for (const GroupResult& g : judge("half-f32-base10000.json", running).groups) {
    if (g.verdict != judge::Verdict::fail) continue;
    ++failed;
    ASSERT_TRUE(g.diagnosis.has_value()) << describe(g);
    EXPECT_EQ(g.diagnosis->frequency_growth, "pair index") << describe(g);
    EXPECT_GT(g.diagnosis->frequency_error_ulps, kDefaultThetaUlps) << describe(g);
  }
  EXPECT_GT(failed, 0);
}

struct Planted {
  const char* name;
  Bugs bugs;
  const char* suite;
  const char* named;  // what the diagnosis must say
};

TEST(Calibration, EveryPlantedBugFailsAtSmallPositionsAndIsNamed) {
  const Planted planted[] = {
      {"wrong layout", {.swap_layout = true}, "interleaved-f32-base10000.json", "layout=half"},
      {"wrong base", {.base = "10000"}, "half-f32-base500000.json", "base=10000"},
      {"inv_freq in bf16", {.theta_bf16 = true}, "interleaved-f32-base10000.json", "inv_freq (theta) rounded to bf16"},
      {"cos/sin in bf16", {.cos_sin_bf16 = true}, "interleaved-f32-base10000.json", "cos/sin rounded to bf16"},
      {"positions off by one", {.position_shift = 1}, "half-f32-base10000.json", "positions offset by +1"},
      {"sin sign flipped", {.sin_flipped = true}, "interleaved-f32-base10000.json", "the sine's sign flipped"},
      {"missing YaRN mscale", {.missing_mscale = true}, "scaling-yarn.json", "(missing)"},
  };
  for (const Planted& p : planted) {
    const Recipe recipe(p.name, Angle::torch, p.bugs, Model::f32_angle);
    int failed = 0;
    for (const GroupResult& g : judge(p.suite, recipe).groups) {
      // f32 groups the bug changes (the mscale of a group with attention factor 1 changes nothing)
      if (g.verdict == judge::Verdict::skip || g.dtype != Dtype::f32 || (p.bugs.missing_mscale && g.attention_magnitude == 1)) continue;
      EXPECT_EQ(g.verdict, ropecheck::judge::Verdict::fail) << p.name << ": " << describe(g);
      if (g.verdict != judge::Verdict::fail) continue;
      ++failed;
      // Caught at small positions: the first failing position is at most 100.
      EXPECT_TRUE(!g.horizon || *g.horizon < 100) << p.name << ": " << describe(g);
      ASSERT_TRUE(g.diagnosis.has_value()) << p.name;
      EXPECT_NE(g.diagnosis->mistake.find(p.named), std::string::npos) << p.name << ": " << describe(g);
    }
    EXPECT_GT(failed, 0) << p.name;
  }
}

}  // namespace
}  // namespace ropecheck::judge
