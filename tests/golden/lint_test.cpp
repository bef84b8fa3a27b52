// lint (golden/lint.cpp): what the schema cannot say. Each check is shown to fire on a file that
// breaks exactly that rule, and to stay quiet on every checked-in suite.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "golden/golden.h"

namespace ropecheck::golden {
namespace {

std::filesystem::path suites_dir() { return ROPECHECK_GOLDEN_SUITES; }

GoldenFile suite(const std::string& name) { return read_golden_file((suites_dir() / (name + ".json")).string()); }

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  return std::any_of(problems.begin(), problems.end(), [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

TEST(Lint, EveryCheckedInSuiteIsClean) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(suites_dir())) {
    const std::string path = entry.path().string();
    const std::vector<std::string> problems = lint(read_golden_file(path), path);
    EXPECT_TRUE(problems.empty()) << path << ": " << (problems.empty() ? "" : problems.front());
    ++files;
  }
  EXPECT_EQ(files, static_cast<int>(suite_names().size()));
}

TEST(Lint, CatchesAnUndocumentedFlag) {
  GoldenFile f = suite("multi-head");
  f.groups[0].rope_tests[1].flags.push_back("Unexplained");
  const auto problems = lint(f, "multi-head.json");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "multi-head.json: notes: expected an explanation of flag \"Unexplained\" (used by a test), got none");
}

TEST(Lint, CatchesADuplicateId) {
  GoldenFile f = suite("multi-head");
  const std::int64_t first_id = f.groups[0].rope_tests[0].id;
  f.groups[1].rope_tests[0].id = first_id;
  const auto problems = lint(f, "multi-head.json");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "multi-head.json: groups[1].tests[0].id: expected a unique id, got " + std::to_string(first_id) +
                             " again (first at groups[0].tests[0])");
}

TEST(Lint, CatchesAWrongDeclaredCount) {
  GoldenFile f = suite("attention");
  f.number_of_tests += 1;
  const auto problems = lint(f, "attention.json");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(mentions(problems, "number_of_tests: expected " + std::to_string(f.number_of_tests - 1)));
}

TEST(Lint, CatchesAnUnusedNoteARepeatedFlagAndAMisnamedFile) {
  GoldenFile f = suite("multi-head");
  f.notes.emplace_back("Subnormal", "explained but used by no test");
  f.groups[0].rope_tests[0].flags = {"MultiHead", "MultiHead"};
  const auto problems = lint(f, "some/folder/other-name.json");
  EXPECT_TRUE(mentions(problems, "notes.Subnormal: expected only flags used by some test"));
  EXPECT_TRUE(mentions(problems, "groups[0].tests[0].flags: expected each flag once, got \"MultiHead\" twice"));
  EXPECT_TRUE(mentions(problems, "suite: expected the file's name \"other-name\", got \"multi-head\""));
  EXPECT_EQ(problems.size(), 3u);
}

TEST(Lint, TheCatalogExplainsEveryFlagTheGeneratorUses) {
  // The generator writes notes from the catalog; a flag missing from it would make its own output
  // fail lint, which EveryCheckedInSuiteIsClean covers. Here: the catalog has no empty texts or
  // repeated names.
  std::vector<std::string> names;
  for (const auto& [flag, text] : flag_catalog()) {
    EXPECT_FALSE(text.empty()) << flag;
    names.push_back(flag);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  for (const char* required : {"LargePosition", "HugeBase", "Subnormal", "SignedZero", "NaNInput", "InfInput",
                               "F16Overflow", "Cancellation", "PassThrough", "PositionZero"}) {
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), required)) << required;
  }
}

}  // namespace
}  // namespace ropecheck::golden
