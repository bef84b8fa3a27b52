// `ropecheck golden`: list, generate, verify and lint golden files (golden/README.md).
//   golden list                                          suite names, one per line
//   golden generate (--suite NAME... | --all) --out DIR [--force]
//   golden generate --spec S --positions P --tokens N [--heads H] --out FILE.json   your own suite
//   golden generate --fused S --tokens N [--positions P] --out FILE.json   a fused suite (fused_golden_command.h)
//   golden verify FILE|DIR...                            recompute every expected value
//   golden lint FILE|DIR...                              schema, unique ids, notes, counts
//   golden export ...                                    gate/commands/golden_export_command.cpp
// Each action is its own add_golden_* function, so that a later action is one more function and
// one more call in add_golden_command.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gate/commands/command.h"
#include "gate/commands/custom_suite_command.h"
#include "gate/commands/fused_golden_command.h"
#include "gate/commands/spec_options.h"
#include "gate/report.h"
#include "golden/fused_golden.h"
#include "golden/golden.h"
#include "tensorio/readers.h"

namespace ropecheck::gate {
namespace {

namespace fs = std::filesystem;

// Files named on the command line, with folders expanded to their *.json files in name order.
std::vector<std::string> expand_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(path, error)) {
        std::error_code kind_error;  // a symbolic-link loop or an unreadable entry is not a golden file
        if (entry.is_regular_file(kind_error) && entry.path().extension() == ".json") files.push_back(entry.path().string());
      }
      if (error) throw InputError(path + ": expected a readable folder, got " + error.message());
      std::sort(files.begin(), files.end());
      if (files.empty()) throw InputError(path + ": expected a folder with *.json golden files, got none");
      out.insert(out.end(), files.begin(), files.end());
    } else if (fs::is_regular_file(path, error)) {
      out.push_back(path);
    } else {
      struct stat st {};
      const bool there = ::stat(path.c_str(), &st) == 0;
      throw InputError(path + ": expected a golden file or a folder of them, got " +
                       (there ? tensorio::file_kind(st.st_mode) : std::string("nothing there (") + std::strerror(errno) + ")"));
    }
  }
  return out;
}


void add_golden_list(CLI::App& golden, int& status) {
  CLI::App* list = golden.add_subcommand("list", "Print the names of the suites the generator knows");
  list->callback([&status] {
    for (const std::string& name : golden::suite_names()) std::printf("%s\n", name.c_str());
    status = 0;
  });
}

void add_golden_generate(CLI::App& golden, int& status) {
  CLI::App* generate = golden.add_subcommand("generate", "Write golden suites (deterministic: same bytes on every run)");
  auto suites = std::make_shared<std::vector<std::string>>();
  auto all = std::make_shared<bool>(false);
  auto out_dir = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  generate->add_option("--suite", *suites, "Suite to write (repeatable; see `ropecheck golden list`)");
  generate->add_flag("--all", *all, "Write every suite");
  generate->add_option("--out", *out_dir, "Folder to write NAME.json into (created if missing); with --spec, the FILE.json")->required();
  generate->add_flag("--force", *force, "Replace existing files");
  // A suite of your own (gate/commands/custom_suite_command.cpp): --out names the FILE.json then.
  auto custom = std::make_shared<CustomSuiteArgs>();
  // A suite for --spec or --hf-config instead (with --positions, --tokens; --out FILE.json).
  auto spec = std::make_shared<SpecOptions>();
  add_spec_options(generate, *spec, SpecCount::one);
  const std::vector<CLI::Option*> custom_options = {
      generate->add_option("--positions", custom->positions, "With --spec: positions, a range START:STOP[:STEP] or a .npy/.json file"),
      generate->add_option("--tokens", custom->tokens, "With --spec: tokens per test"),
      generate->add_option("--heads", custom->heads, "With --spec: heads per token (default 1)"),
      generate->add_option("--seed", custom->seed, "With --spec: seed of the inputs (default 1)"),
      generate->add_option("--name", custom->suite, "With --spec: the suite's name (default: the file's name)"),
      generate->add_option("--threads", custom->threads, "With --spec: threads for the inputs and expected values (0: all cores; same bytes for any count)")};
  // A fused suite instead (gate/commands/fused_golden_command.h): --fused SPEC with --tokens, --positions, --seed, --name.
  auto fused = std::make_shared<std::string>();
  generate
      ->add_option("--fused", *fused,
                   "A fused suite for this fused spec (fused/README.md; with --tokens, --positions, --seed, --name; --out FILE.json)")
      ->excludes(generate->get_option("--spec"))
      ->excludes(generate->get_option("--hf-config"));
  generate->callback([&status, suites, all, out_dir, force, custom, spec, custom_options, fused] {
    if (!fused->empty()) {
      if (*all || !suites->empty()) throw UsageError("golden generate: expected --fused or --suite/--all, not both");
      if (custom->tokens == 0) throw UsageError("golden generate --fused: expected --tokens N (tokens per test)");
      if (custom->heads != 1 || custom->threads != 0)
        throw UsageError("golden generate --fused: expected no --heads or --threads (the spec's q_heads and k_heads)");
      generate_fused_suite({*fused, custom->positions, *out_dir, custom->suite, custom->tokens, custom->seed, *force});
      status = 0;
      return;
    }
    if (std::optional<Spec> own = resolve_optional_spec(*spec, custom_options, "a suite of your own")) {
      custom->spec = *own;
      if (*all || !suites->empty()) throw UsageError("golden generate: expected --spec or --suite/--all, not both");
      if (custom->positions.empty()) throw UsageError("golden generate --spec: expected --positions");
      if (custom->tokens == 0) throw UsageError("golden generate --spec: expected --tokens N (tokens per test)");
      custom->out = *out_dir;
      custom->force = *force;
      generate_custom_suite(*custom);
      status = 0;
      return;
    }
    if (*all == !suites->empty()) throw UsageError("golden generate: expected exactly one of --suite NAME or --all");
    const std::vector<std::string> known = golden::suite_names();
    const std::vector<std::string> names = *all ? known : *suites;
    for (const std::string& name : names) {
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        throw UsageError("--suite: expected one of the names `ropecheck golden list` prints, got '" + name + "'");
      }
    }
    std::error_code error;
    fs::create_directories(*out_dir, error);
    if (error) throw InputError(*out_dir + ": expected a folder to write into, got " + error.message());
    // Refuse before generating anything, so that a refused run changes nothing.
    for (const std::string& name : names) {
      const fs::path target = fs::path(*out_dir) / (name + ".json");
      std::error_code exists_error;
      if (!*force && (fs::exists(target, exists_error) || fs::is_symlink(target, exists_error))) {
        throw UsageError(target.string() + ": expected a new file, got an existing one (use --force to replace it)");
      }
    }
    for (const std::string& name : names) {
      const fs::path target = fs::path(*out_dir) / (name + ".json");
      const golden::GoldenFile file = golden::generate_suite(name);
      const std::string text = golden::write_golden(file);
      write_atomically(target.string(), text, {});
      std::printf("wrote %s (%lld tests, %zu bytes)\n", target.string().c_str(),
                  static_cast<long long>(file.number_of_tests), text.size());
    }
    status = 0;
  });
}

void add_golden_verify(CLI::App& golden, int& status) {
  CLI::App* verify = golden.add_subcommand("verify", "Recompute every expected value of golden files with the reference");
  auto paths = std::make_shared<std::vector<std::string>>();
  verify->add_option("paths", *paths, "Golden files or folders of them")->required();
  verify->callback([&status, paths] {
    int failed_files = 0;
    for (const std::string& path : expand_paths(*paths)) {
      if (is_fused_golden_file(path)) {
        failed_files += verify_fused_golden(path);
        continue;
      }
      golden::VerifyResult result;
      result = golden::verify(golden::read_golden_file(path), path);  // a sidecar is read during verify
      if (result.failing_tests == 0) {
        std::printf("%s: ok (%lld tests, %lld values)\n", path.c_str(), static_cast<long long>(result.tests_checked),
                    static_cast<long long>(result.values_checked));
        continue;
      }
      ++failed_files;
      for (const std::string& failure : result.failures) std::printf("%s\n", failure.c_str());
      std::printf("%s: FAILED (%lld of %lld tests differ from the reference)\n", path.c_str(),
                  static_cast<long long>(result.failing_tests), static_cast<long long>(result.tests_checked));
    }
    status = failed_files == 0 ? 0 : 1;
  });
}

void add_golden_lint(CLI::App& golden, int& status) {
  CLI::App* lint = golden.add_subcommand("lint", "Check golden files: schema, unique ids, documented flags, declared counts");
  auto paths = std::make_shared<std::vector<std::string>>();
  lint->add_option("paths", *paths, "Golden files or folders of them")->required();
  lint->callback([&status, paths] {
    int failed_files = 0;
    for (const std::string& path : expand_paths(*paths)) {
      std::vector<std::string> problems;
      try {
        if (is_fused_golden_file(path)) {
          // Its reader checks what lint checks of the other schema; the sidecar its hash.
          golden::read_fused_sidecar(golden::read_fused_golden_file(path));
        } else {
          problems = golden::lint(golden::read_golden_file(path), path);
        }
      } catch (const golden::GoldenError& e) {
        problems.push_back(e.what());
      }
      if (problems.empty()) {
        std::printf("%s: ok\n", path.c_str());
        continue;
      }
      ++failed_files;
      for (const std::string& problem : problems) std::printf("%s\n", problem.c_str());
    }
    status = failed_files == 0 ? 0 : 1;
  });
}

}  // namespace

void add_golden_command(CLI::App& root, int& status) {
  CLI::App* golden = root.add_subcommand("golden", "Golden vector files: list, generate, verify, lint, export");
  golden->require_subcommand(1);
  add_golden_list(*golden, status);
  add_golden_generate(*golden, status);
  add_golden_verify(*golden, status);
  add_golden_lint(*golden, status);
  add_golden_export_command(*golden, status);
}

}  // namespace ropecheck::gate
