// A consumer of the installed package (tests/package/CMakeLists.txt): only installed public headers,
// the golden suites installed with the package, the kernels through the C ABI, and a C plugin built
// against the ABI header alone, each judged by MatchesGolden.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <ropecheck/gtest.h>
#include <ropecheck/kernel.h>
#include <ropecheck/reference.h>
#include <ropecheck/spec.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const std::string kSuite = std::string(GOLDEN_DIR) + "/interleaved-f32-base10000.json";

std::vector<double> exact(const ropecheck::RopeSpec& spec, ropecheck::TensorShape shape,
                          std::span<const std::int64_t> positions, std::span<const double> input) {
  return ropecheck::apply_exact(spec, shape, positions, input);
}

using ApplyFunction = int32_t (*)(const char*, const ropecheck_call*);

// float32 RoPE through a C ABI entry point: the spec's text (what the ropecheck library reads) and
// its decoded fields (what a plugin reads; kernel.h "the spec", defaults of the parameters that do
// not apply). Only single-axis float32 specs without scaling, the ones of the suite used here.
ropecheck::RopeFunction through_c_abi(ApplyFunction apply, const char* implementation) {
  return [apply, implementation](const ropecheck::RopeSpec& spec, ropecheck::TensorShape shape,
                                 std::span<const std::int64_t> positions, std::span<const double> input) {
    if (spec.scaling() != "none" || spec.position_components() != 1 || spec.dtype() != ropecheck::RopeSpec::Dtype::f32 ||
        spec.input_dtype() != ropecheck::RopeSpec::Dtype::f32) {
      throw std::invalid_argument("this consumer passes single-axis float32 specs without scaling only, got " + spec.text());
    }
    const std::string text = spec.text();
    ropecheck_spec c{};
    c.spec = text.c_str();
    c.layout = spec.layout() == ropecheck::RopeSpec::Layout::interleaved ? ROPECHECK_LAYOUT_INTERLEAVED : ROPECHECK_LAYOUT_HALF;
    c.head_dim = spec.head_dim();
    c.rotary_dim = spec.rotary_dim();
    c.direction = spec.direction() == ropecheck::RopeSpec::Direction::forward ? ROPECHECK_DIRECTION_FORWARD
                                                                            : ROPECHECK_DIRECTION_INVERSE;
    c.dtype = ROPECHECK_DTYPE_F32;
    c.base = std::strtod(spec.base().c_str(), nullptr);
    c.scaling = ROPECHECK_SCALING_NONE;
    c.factor = c.attention_factor = c.mscale = c.mscale_all_dim = c.freq_scale = NAN;
    c.beta_fast = 32;
    c.beta_slow = 1;
    c.truncate = 1;
    c.ext_factor = c.attn_factor = c.low_freq_factor = 1;
    c.high_freq_factor = 4;
    c.axes = ROPECHECK_AXES_NONE;
    c.position_components = 1;
    // Golden inputs of an f32 suite are binary32 values: the conversions are exact.
    std::vector<float> in(input.begin(), input.end()), out(input.size());
    const std::int64_t row = shape.heads * shape.head_dim;
    ropecheck_call call{};
    call.spec = &c;
    call.tokens = shape.tokens;
    call.positions = positions.data();
    call.q = {shape.heads, in.data(), row, shape.head_dim, out.data(), row, shape.head_dim};
    call.threads = 1;
    const int32_t status = apply(implementation, &call);
    if (status != ROPECHECK_OK) {
      throw std::runtime_error(std::string(implementation) + ": " + ropecheck_status_message(status));
    }
    return std::vector<double>(out.begin(), out.end());
  };
}

TEST(InstalledPackage, ParsesASpecAndAppliesTheExactReference) {
  const ropecheck::RopeSpec spec = ropecheck::RopeSpec::parse("layout=interleaved,head_dim=2,base=10000,dtype=f64");
  EXPECT_EQ(spec.text(), "layout=interleaved,head_dim=2,rotary_dim=2,base=10000,dtype=f64,direction=forward,scaling=none");
  const std::vector<std::int64_t> positions = {1};
  const std::vector<double> input = {1.0, 0.0};
  const std::vector<double> out = ropecheck::apply_exact(spec, {1, 1, 2}, positions, input);
  ASSERT_EQ(out.size(), 2u);
  // cos(1) and sin(1) correctly rounded to binary64.
  EXPECT_EQ(out[0], 0x1.14a280fb5068cp-1);
  EXPECT_EQ(out[1], 0x1.aed548f090ceep-1);
  EXPECT_THROW(ropecheck::RopeSpec::parse("layout=diagonal,head_dim=2"), std::invalid_argument);
}

TEST(InstalledPackage, TheReferenceMatchesTheInstalledSuite) { EXPECT_TRUE(ropecheck::MatchesGolden(kSuite, exact)); }

TEST(InstalledPackage, AFlippedSineFails) {
  const auto result = ropecheck::MatchesGolden(kSuite, [](const ropecheck::RopeSpec& spec, ropecheck::TensorShape shape,
                                                          std::span<const std::int64_t> positions,
                                                          std::span<const double> input) {
    // Rotating by −angle is the sine-sign bug: the same spec with direction=inverse.
    std::string text = spec.text();
    const std::string forward = "direction=forward";
    text.replace(text.find(forward), forward.size(), "direction=inverse");
    return ropecheck::apply_exact(ropecheck::RopeSpec::parse(text), shape, positions, input);
  });
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("interleaved-f32-base10000#"), std::string::npos) << result.message();
}

TEST(InstalledPackage, TheKernelsMatchTheInstalledSuite) {
  EXPECT_STREQ(ropecheck_kernel_name(0), "scalar");
  // The f32 kernels' proven bound is e <= 1 + 2^-25.7, within the exact model's default e <= 4.
  EXPECT_TRUE(ropecheck::MatchesGolden(kSuite, through_c_abi(&ropecheck_kernel_apply, "scalar")));
}

TEST(InstalledPackage, APluginBuiltAgainstTheAbiHeaderAlone) {
  void* plugin = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(plugin, nullptr) << dlerror();
  const auto version = reinterpret_cast<uint32_t (*)(void)>(dlsym(plugin, "ropecheck_kernel_abi_version"));
  const auto apply = reinterpret_cast<ApplyFunction>(dlsym(plugin, "ropecheck_kernel_apply"));
  ASSERT_NE(version, nullptr);
  ASSERT_NE(apply, nullptr);
  EXPECT_EQ(version(), ROPECHECK_KERNEL_ABI_VERSION);
  // The template's long double evaluation: e <= 1.012 for float32 (examples/plugin/rope_plugin.c).
  EXPECT_TRUE(ropecheck::MatchesGolden(kSuite, through_c_abi(apply, "example_c")));
  dlclose(plugin);
}

}  // namespace
