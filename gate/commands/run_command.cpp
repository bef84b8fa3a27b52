// `ropecheck run`: the command line of gate/check.h run_implementation.
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "gate/check.h"
#include "gate/commands/command.h"
#include "gate/commands/judge_options.h"

#ifndef ROPECHECK_GOLDEN_DIR
#define ROPECHECK_GOLDEN_DIR "golden/suites"
#endif
#ifndef ROPECHECK_INSTALL_GOLDEN_DIR
#define ROPECHECK_INSTALL_GOLDEN_DIR "share/ropecheck/golden"
#endif

namespace ropecheck::gate {
namespace {

// The suites `run` judges by default: an installed command's own (PREFIX/bin/ropecheck beside
// PREFIX/share/ropecheck/golden, cmake/install.cmake; in the wheel of `pip install .`, the package's
// ropecheck/bin/ropecheck beside ropecheck/golden, gate/CMakeLists.txt), else the repository's
// golden/suites that the build tree's command was built from.
std::string default_golden_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path executable = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = executable.parent_path().parent_path() / ROPECHECK_INSTALL_GOLDEN_DIR;
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return ROPECHECK_GOLDEN_DIR;
}

}  // namespace

void add_run_command(CLI::App& root, int& status) {
  auto* cmd = root.add_subcommand("run", "Run a project kernel or a plugin over the golden suites (and the identities) and judge it");
  auto args = std::make_shared<RunArguments>();
  args->golden = default_golden_dir();
  cmd->add_option("--impl", args->implementation,
                  "scalar | avx2 | avx512 | avx512bf16 | cuda | auto | reference | reference-exact | reference-f32-recipe "
                  "(runner/registry.h); with --plugin: the name passed to the plugin (default auto)");
  cmd->add_option("--plugin", args->plugin, "Shared library exporting the C ABI of include/ropecheck/kernel.h");
  cmd->add_option("--golden", args->golden,
                  "Golden suite file or folder (default: the installed suites, PREFIX/share/ropecheck/golden "
                  "or the Python package's ropecheck/golden, or the repository's golden/suites for a command in the build tree)");
  add_judge_options(cmd, args->judge);
  add_report_options(cmd, args->reports);
  cmd->add_flag("--props", args->props, "Also run the identity catalog (proofs/) against the implementation");
  cmd->add_option("--props-cases", args->props_cases, "Cases per identity with --props")->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", args->seed, "RapidCheck seed of --props (the same seed replays the same cases)");
  cmd->add_option("--property", args->property,
                  "With --props: run this identity only (a failing identity prints the command that replays it)");
  add_child_options(cmd, args->timeout, args->memory_limit_mib);
  cmd->callback([args, &status] { status = run_implementation(*args); });
}

}  // namespace ropecheck::gate
