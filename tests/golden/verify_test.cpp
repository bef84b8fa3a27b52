// verify (golden/verify.cpp): every checked-in expected value agrees with the reference, and a
// single flipped bit in one value is caught and named by file, test id and element.
#include <filesystem>

#include <gtest/gtest.h>

#include "golden/golden.h"
#include "reference/rounding.h"

namespace ropecheck::golden {
namespace {

std::filesystem::path suites_dir() { return ROPECHECK_GOLDEN_SUITES; }

GoldenFile suite(const std::string& name) { return read_golden_file((suites_dir() / (name + ".json")).string()); }

// Flips the lowest significand bit of a value of `dtype` (in the dtype's own encoding).
double flip_lowest_bit(double value, Dtype dtype) {
  return reference::decode_bits(reference::encode_bits(value, dtype) ^ 1u, dtype);
}

TEST(Verify, EveryCheckedInSuiteAgreesWithTheReference) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(suites_dir())) {
    const std::string path = entry.path().string();
    const VerifyResult result = verify(read_golden_file(path), path);
    EXPECT_EQ(result.failing_tests, 0) << (result.failures.empty() ? path : result.failures.front());
    EXPECT_GT(result.tests_checked, 0) << path;
    EXPECT_GT(result.values_checked, result.tests_checked) << path;
    ++files;
  }
  EXPECT_EQ(files, static_cast<int>(suite_names().size()));
}

TEST(Verify, AFlippedBitInOneExpectedValueIsNamed) {
  GoldenFile f = suite("half-f32-base10000");
  RopeTest& t = f.groups[1].rope_tests[2];
  ASSERT_TRUE(std::isfinite(t.expected[5]));
  const double original = t.expected[5];
  t.expected[5] = flip_lowest_bit(original, Dtype::f32);
  ASSERT_NE(t.expected[5], original);
  const VerifyResult result = verify(f, "half-f32-base10000.json");
  EXPECT_EQ(result.failing_tests, 1);
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_EQ(result.failures[0], "half-f32-base10000.json: test " + std::to_string(t.id) + ": expected[5]: the file has " +
                                    reference::to_hex(t.expected[5]) + ", the reference gives " + reference::to_hex(original));
}

TEST(Verify, ADifferenceInTheRecipeOrExactFieldsOrAttentionIsNamed) {
  {
    GoldenFile f = suite("scaling-llama3");
    RopeTest& t = f.groups[0].rope_tests[3];
    ASSERT_TRUE(t.expected_f32_recipe.has_value());
    (*t.expected_f32_recipe)[0] = flip_lowest_bit((*t.expected_f32_recipe)[0], f.groups[0].spec.dtype);
    const VerifyResult result = verify(f, "scaling-llama3.json");
    ASSERT_EQ(result.failures.size(), 1u);
    EXPECT_NE(result.failures[0].find("test " + std::to_string(t.id) + ": expected_f32_recipe[0]"), std::string::npos);
  }
  {
    GoldenFile f = suite("interleaved-f64-base10000");
    RopeTest* with_exact = nullptr;
    for (RopeTest& t : f.groups[0].rope_tests) {
      if (t.exact) with_exact = &t;
    }
    ASSERT_NE(with_exact, nullptr);
    std::string& digits = (*with_exact->exact)[7];
    digits[3] = digits[3] == '5' ? '6' : '5';
    const VerifyResult result = verify(f, "interleaved-f64-base10000.json");
    ASSERT_EQ(result.failures.size(), 1u);
    EXPECT_NE(result.failures[0].find("test " + std::to_string(with_exact->id) + ": exact[7]"), std::string::npos);
  }
  {
    GoldenFile f = suite("attention");
    AttentionTest& t = f.groups[2].attention_tests[1];
    t.expected_outputs[2] = flip_lowest_bit(t.expected_outputs[2], f.groups[2].spec.dtype);
    const VerifyResult result = verify(f, "attention.json");
    ASSERT_EQ(result.failures.size(), 1u);
    EXPECT_NE(result.failures[0].find("test " + std::to_string(t.id) + ": expected_outputs[2]"), std::string::npos);
  }
}

TEST(Verify, AnInputThatTheReferenceRejectsIsAFailureNotACrash) {
  GoldenFile f = suite("multi-head");
  f.groups[0].rope_tests[0].positions.pop_back();  // one position short of the tokens
  const VerifyResult result = verify(f, "multi-head.json");
  EXPECT_EQ(result.failing_tests, 1);
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_NE(result.failures[0].find("the reference rejects the test"), std::string::npos);
}

}  // namespace
}  // namespace ropecheck::golden
