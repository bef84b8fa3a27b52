// The project's errors for bad input, in its lowest folder so that every reader throws the same
// type: the spec parser (spec/spec.h SpecError), the tensor readers (tensorio/readers.h
// ReaderError), the golden reader (golden/golden.h GoldenError), hfconfig/ and the commands are
// all InputError under their own names. Every command reports one as its one line and exit
// status 2 (gate/main.cpp); the public C++ API throws std::invalid_argument with the same line
// (runner/public_judge.cpp), the Python module ValueError (python/module.cpp). A caller that adds
// context catches InputError and throws a new one; nothing else translates between them.
#pragma once

#include <stdexcept>

namespace ropecheck {

// Bad input data: the message names the file (or the spec text), the field and what was expected.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad arguments of a command: the message names the option and what was expected. Exit status 2
// as well; a type of its own because the commands add the option to an InputError's message
// (`--spec: ...`) where the spec came from the command line.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ropecheck
