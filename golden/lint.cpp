// Lint: what the JSON Schema cannot say about a golden file (the reader has already checked types,
// shapes and values). A clean file has unique ids, a note for exactly the flags it uses, the right
// declared number of tests, a suite name equal to its file name, and — for a suite with a sidecar —
// every tensor a test names present in the sidecar's index with the test's shape, count and dtype (the
// header only: lint stays as fast as the JSON; `golden verify` reads the values).
#include <map>
#include <optional>
#include <set>

#include "golden/golden.h"
#include "golden/sidecar.h"
#include "tensorio/readers.h"

namespace ropecheck::golden {

namespace {

template <class Problem>
void lint_sidecar(const GoldenFile& file, const Problem& problem) {
  const std::string path = sidecar_path_of(file);
  std::optional<tensorio::TensorFile> sidecar;
  try {
    sidecar.emplace(open_sidecar(file));
  } catch (const GoldenError& e) {
    problem(e.what());
    return;
  }
  for (const Group& group : file.groups) {
    for (const RopeTest& test : group.rope_tests) {
      if (!test.sidecar) continue;
      auto expect = [&](const std::string& name, Dtype dtype) {
        try {
          sidecar_entry(*sidecar, path, test, name, dtype);
        } catch (const GoldenError& e) {
          problem(std::string("sidecar: ") + e.what());
        }
      };
      expect(test.sidecar->input, input_dtype_of(group.spec));
      expect(test.sidecar->expected, group.spec.dtype);
    }
  }
}

}  // namespace

std::vector<std::string> lint(const GoldenFile& file, std::string_view file_name) {
  std::vector<std::string> problems;
  const std::string prefix = std::string(file_name) + ": ";
  auto problem = [&](const std::string& text) { problems.push_back(prefix + text); };

  // The file name (without folders and ".json") names the suite.
  std::string stem(file_name);
  if (const auto slash = stem.find_last_of("/\\"); slash != std::string::npos) stem = stem.substr(slash + 1);
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
  if (stem != file.suite) problem("suite: expected the file's name \"" + stem + "\", got \"" + file.suite + "\"");

  std::map<std::int64_t, std::string> first_seen;  // id → path of its first test
  std::set<std::string> used;
  std::int64_t count = 0;
  auto visit = [&](std::int64_t id, const std::vector<std::string>& flags, const std::string& comment,
                   const std::string& path) {
    ++count;
    if (auto [it, inserted] = first_seen.emplace(id, path); !inserted) {
      problem(path + ".id: expected a unique id, got " + std::to_string(id) + " again (first at " + it->second + ")");
    }
    std::set<std::string> seen;
    for (const auto& f : flags) {
      if (!seen.insert(f).second) problem(path + ".flags: expected each flag once, got \"" + f + "\" twice");
      used.insert(f);
    }
    if (comment.empty()) problem(path + ".comment: expected a description of the test, got an empty string");
  };
  for (std::size_t g = 0; g < file.groups.size(); ++g) {
    const Group& group = file.groups[g];
    const std::string gpath = "groups[" + std::to_string(g) + "].tests[";
    for (std::size_t t = 0; t < group.rope_tests.size(); ++t) {
      const RopeTest& test = group.rope_tests[t];
      visit(test.id, test.flags, test.comment, gpath + std::to_string(t) + "]");
    }
    for (std::size_t t = 0; t < group.attention_tests.size(); ++t) {
      const AttentionTest& test = group.attention_tests[t];
      visit(test.id, test.flags, test.comment, gpath + std::to_string(t) + "]");
    }
  }
  if (count != file.number_of_tests) {
    problem("number_of_tests: expected " + std::to_string(count) + " (the tests in the file), got " +
            std::to_string(file.number_of_tests));
  }
  if (!file.sidecar.empty()) lint_sidecar(file, problem);
  std::set<std::string> documented;
  for (const auto& [flag, text] : file.notes) {
    documented.insert(flag);
    if (text.empty()) problem("notes." + flag + ": expected an explanation, got an empty string");
    if (!used.count(flag)) problem("notes." + flag + ": expected only flags used by some test, got an unused one");
  }
  for (const auto& flag : used) {
    if (!documented.count(flag)) problem("notes: expected an explanation of flag \"" + flag + "\" (used by a test), got none");
  }
  return problems;
}

}  // namespace ropecheck::golden
