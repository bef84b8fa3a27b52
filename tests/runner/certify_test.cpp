// runner/certify.h: the screened judging (CertifyOptions::screen, the default: pairs certain to
// change nothing skip judge_pair) gives the result of judging every pair by judge_pair, field for
// field, on the project's kernel, on an implementation whose outputs leave the correctly rounded
// bits (the float32 recipe held to the exact rotation) and on the reference with injected errors
// (an ulp off, a NaN, a zero of the other sign, a large error); and the injected errors are found.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "reference/rope.h"
#include "reference/rounding.h"
#include "runner/adapters.h"
#include "runner/certify.h"
#include "runner/registry.h"
#include "spec/spec.h"

namespace ropecheck::runner {
namespace {

const std::string kLlama =
    "layout=half,head_dim=128,base=500000,scaling=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,original_max_position=8192";
const std::string kGptj = "layout=interleaved,head_dim=64,rotary_dim=48,base=10000";

void expect_same(const CertifyResult& screened, const CertifyResult& full) {
  EXPECT_EQ(screened.range, full.range);
  EXPECT_EQ(screened.positions, full.positions);
  EXPECT_EQ(screened.random_positions, full.random_positions);
  EXPECT_EQ(screened.outputs, full.outputs);
  EXPECT_EQ(screened.passthrough_failures, full.passthrough_failures);
  EXPECT_EQ(screened.failed_calls, full.failed_calls);
  EXPECT_EQ(screened.first_call_error, full.first_call_error);
  EXPECT_EQ(screened.reference_fallback, full.reference_fallback);
  ASSERT_EQ(screened.pairs.size(), full.pairs.size());
  for (std::size_t j = 0; j < full.pairs.size(); ++j) {
    const PairRecord &s = screened.pairs[j], &f = full.pairs[j];
    SCOPED_TRACE("pair " + std::to_string(j));
    EXPECT_EQ(s.worst_e, f.worst_e);  // the same double: judge_pair's e at the same pair
    EXPECT_EQ(s.worst_position, f.worst_position);
    EXPECT_EQ(s.worst_probe, f.worst_probe);
    EXPECT_EQ(s.checked, f.checked);
    EXPECT_EQ(s.failures, f.failures);
    EXPECT_EQ(s.first_failure, f.first_failure);
    EXPECT_EQ(s.first_failure_probe, f.first_failure_probe);
    EXPECT_EQ(s.first_failure_message, f.first_failure_message);
    EXPECT_EQ(s.mismatches, f.mismatches);
    EXPECT_EQ(s.first_mismatch, f.first_mismatch);
    EXPECT_EQ(s.first_mismatch_probe, f.first_mismatch_probe);
  }
  EXPECT_EQ(screened.pass(false), full.pass(false));
  EXPECT_EQ(screened.pass(true), full.pass(true));
}

struct Both {
  CertifyResult screened, full;
};

Both certify_both(const Implementation& implementation, const Spec& spec, std::int64_t first, std::int64_t end, bool strict_zeros,
                 int threads = 2) {
  CertifyOptions options;
  options.first = first;
  options.end = end;
  options.stride = 16;
  options.chunk = 512;
  options.threads = threads;
  const judge::PairRule rule = certify_rule(implementation, spec, strict_zeros);
  Both run;
  run.screened = certify(implementation, spec, rule, options, {first, end});
  options.screen = false;
  run.full = certify(implementation, spec, rule, options, {first, end});
  return run;
}

std::unique_ptr<Implementation> registry_implementation(const std::string& name, const std::string& tolerance) {
  RegistryOptions options;
  options.claims = Claims::parse("exact", tolerance);
  return make_implementation({name, ""}, options);
}

TEST(CertifyScreen, TheProjectKernelAsJudgedPairByPair) {
  const std::unique_ptr<Implementation> kernel = registry_implementation("auto", "");
  for (const char* dtype : {"bf16", "f16", "f32"}) {
    const Spec spec = parse_spec(kLlama + ",dtype=" + dtype);
    for (const std::int64_t first : {std::int64_t{0}, std::int64_t{1} << 24, (std::int64_t{1} << 31) - 3000}) {
      SCOPED_TRACE(std::string(dtype) + " from " + std::to_string(first));
      const Both run = certify_both(*kernel, spec, first, first + 3000, false);
      expect_same(run.screened, run.full);
      EXPECT_TRUE(run.full.pass(true));  // the kernels are correctly rounded (optimized/README.md)
      for (const PairRecord& p : run.full.pairs) EXPECT_LE(p.worst_e, 1.0);  // correctly rounded: e ≤ 1
    }
  }
}

TEST(CertifyScreen, TheFloat32RecipeAsJudgedPairByPair) {
  // Its angle RN32(RN32(p)·RN32(θ)) leaves the exact rotation's bits at large positions.
  const std::unique_ptr<Implementation> recipe = registry_implementation("reference-f32-recipe", "e=1");
  for (const bool strict : {false, true}) {
    const Spec spec = parse_spec(kGptj + ",dtype=bf16");
    const Both run = certify_both(*recipe, spec, 100000, 102000, strict);
    expect_same(run.screened, run.full);
    EXPECT_GT(run.full.mismatches(), 0);
    EXPECT_GT(run.full.failures(), 0);
  }
}

// The correctly rounded reference, then at chosen outputs: one ulp of the dtype up, NaN, a zero's
// sign flipped (the reference's outputs at position 0 include exact zeros), ten ulps up.
std::vector<double> injected(const Spec& spec, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input) {
  std::vector<double> out = reference::apply(spec, shape, positions, input);
  for (std::size_t i = 0; i < out.size(); ++i) {
    double& v = out[i];
    const std::int64_t position = positions[i / static_cast<std::size_t>(shape.heads * shape.head_dim) * position_components(spec)];
    if (v == 0) {
      v = -v;
    } else if (i % 997 == 5) {
      v += reference::ulp(v, spec.dtype);
    } else if (i % 4999 == 11) {
      v = std::nan("");
    } else if (position % 1000 == 7 && i % 7 == 0) {
      v += 10 * reference::ulp(v, spec.dtype);
    }
  }
  return out;
}

TEST(CertifyScreen, InjectedErrorsAsJudgedPairByPair) {
  for (const char* dtype : {"bf16", "f32", "f64"}) {
    const Spec spec = parse_spec(kGptj + ",dtype=" + dtype);
    const FunctionImplementation buggy("injected", injected, Claims::parse("exact", "e=3"));
    for (const bool strict : {false, true}) {
      SCOPED_TRACE(std::string(dtype) + (strict ? " strict zeros" : ""));
      const Both run = certify_both(buggy, spec, 0, 3000, strict, 1);
      expect_same(run.screened, run.full);
      EXPECT_GT(run.full.mismatches(), 0);
      EXPECT_GT(run.full.failures(), 0);  // the NaNs, ten ulps (e ≥ 5 at ρ = 1 in bf16 and f32)
      EXPECT_FALSE(run.full.pass(false));
    }
  }
}

}  // namespace
}  // namespace ropecheck::runner
