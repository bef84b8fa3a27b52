#include "gate/golden_set.h"

#include <map>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "gate/commands/command.h"

namespace ropecheck::gate {

std::vector<LoadedGolden> load_golden(const std::string& file_or_folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> paths;
  if (fs::is_directory(file_or_folder, ec)) {
    for (const auto& entry : fs::directory_iterator(file_or_folder, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") paths.push_back(entry.path().string());
    }
    std::sort(paths.begin(), paths.end());
    if (paths.empty()) throw UsageError("--golden: expected *.json suite files in folder " + file_or_folder + ", found none");
  } else if (fs::is_regular_file(file_or_folder, ec)) {
    paths.push_back(file_or_folder);
  } else {
    throw UsageError("--golden: expected an existing golden file or folder, got '" + file_or_folder + "'");
  }
  std::vector<LoadedGolden> out;
  for (const std::string& path : paths) {
    try {
      out.push_back({path, golden::read_golden_file(path)});
    } catch (const golden::GoldenError& e) {
      throw InputError(e.what());
    }
    // Candidates are keyed by suite and test id, so an id must name one test (golden lint reports
    // the same; reading refuses, so that a check never silently judges two tests as one).
    std::map<std::int64_t, std::string> seen;
    const golden::GoldenFile& file = out.back().file;
    for (std::size_t g = 0; g < file.groups.size(); ++g) {
      auto check = [&](std::int64_t id, std::size_t t) {
        const std::string where = "groups[" + std::to_string(g) + "].tests[" + std::to_string(t) + "].id";
        const auto [it, fresh] = seen.emplace(id, where);
        if (!fresh) {
          throw InputError(path + ": " + where + ": expected a unique test id, got " + std::to_string(id) +
                           " (also at " + it->second + ")");
        }
      };
      for (std::size_t t = 0; t < file.groups[g].rope_tests.size(); ++t) check(file.groups[g].rope_tests[t].id, t);
      for (std::size_t t = 0; t < file.groups[g].attention_tests.size(); ++t) check(file.groups[g].attention_tests[t].id, t);
    }
  }
  return out;
}

std::string tensor_name(const std::string& suite, std::int64_t test_id, const char* what) {
  return suite + "/" + std::to_string(test_id) + "/" + what;
}

Progress::Progress(std::int64_t total)
    : total_(std::max<std::int64_t>(total, 1)), tty_(::isatty(2) == 1), start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() {
  if (drawn_) std::fprintf(stderr, "\r%70s\r", "");
}

void Progress::update(std::int64_t done, const std::string& label) {
  if (!tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const int width = 30;
  const int filled = static_cast<int>(width * std::min(done, total_) / total_);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(width, ' ');
  std::fprintf(stderr, "\r[%s] %lld/%lld %-24.24s", bar.c_str(), static_cast<long long>(done), static_cast<long long>(total_),
               label.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace ropecheck::gate
