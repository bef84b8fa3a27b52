// The two errors every command reports as one line and exit status 2 (gate/main.cpp): kept in a
// header of their own so that the engine (judge/, fuzz/) reports them without the command line.
#pragma once

#include <stdexcept>

namespace ropecheck {

// Bad arguments: the message names the option and what was expected.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input data: the message names the file, the field and what was expected.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ropecheck
