// A golden file's sidecar (golden/README.md "Sidecar"), as the readers in golden/ see it: where it
// lies, and a test's tensor checked against the test from the header alone. One check for
// load_arrays (format.cpp) and lint (lint.cpp).
#pragma once

#include <optional>
#include <string>

#include "golden/golden.h"
#include "tensorio/readers.h"

namespace ropecheck::golden {

// The sidecar's path: beside the JSON when read from a file, else its name as written.
std::string sidecar_path_of(const GoldenFile& file);

// The sidecar opened (its header read). Throws GoldenError "sidecar.file: expected the safetensors
// file it names (NAME), got REASON" for the caller to prefix with the JSON (the file a user ran the
// command on: lint's problem prefix, load_arrays' file.path).
tensorio::TensorFile open_sidecar(const GoldenFile& file);

// Test `test`'s tensor `name` in the sidecar at `path`: present, of `dtype`'s storage (schema:
// sidecarTensor, "of the test's shape and the group's dtype"), of the test's count and shape.
// Throws GoldenError naming the sidecar and the tensor.
const tensorio::TensorFile::Entry& sidecar_entry(const tensorio::TensorFile& sidecar, const std::string& path, const RopeTest& test,
                                                 const std::string& name, Dtype dtype);

// Loads the sidecar tests of one file (load_arrays), opening the sidecar and reading its header
// once: a suite of many small tests cost its whole header per test (quadratic in the tests).
class SidecarLoader {
 public:
  explicit SidecarLoader(const GoldenFile& file) : file_(file) {}
  // As load_arrays(file, spec, test), into test.input and test.expected as they are (a caller may
  // leave the arrays of a test it is done with there: their memory is reused). Throws GoldenError.
  void load(const Spec& spec, RopeTest& test);

 private:
  const GoldenFile& file_;
  std::optional<tensorio::TensorFile> sidecar_;
  std::string bytes_;  // the read buffer, one block
};

}  // namespace ropecheck::golden
