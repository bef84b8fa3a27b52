// How a `ropecheck` subcommand plugs into the CLI: one add_*_command function per subcommand, each
// in its own file under gate/commands/, listed in gate/main.cpp and gate/CMakeLists.txt.
// A subcommand's callback stores its exit status in `status` (0 pass, 1 fail); bad arguments or bad
// input are reported by throwing UsageError / InputError, which main prints as one line, exit 2.
#pragma once

#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

namespace ropecheck::gate {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input data: the message names the file, the field and what was expected.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void add_apply_command(CLI::App& root, int& status);

}  // namespace ropecheck::gate
