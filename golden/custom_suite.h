// A golden suite for the user's own spec and positions (`ropecheck golden generate --spec`; the
// command's options and files are gate/commands/custom_suite_command.cpp's). The positions are
// split into tests of N tokens; each test's input is H heads of uniform values in [−2, 2) rounded
// to the spec's input dtype, drawn from (seed, test id) alone, and its expected values are the
// reference's correctly rounded outputs, computed in parallel over tokens (base/parallel.h).
//
// A suite of more than kCustomInlineValues values keeps its arrays in a safetensors sidecar beside
// the JSON (golden/README.md "Sidecar"), written test by test: memory of two tests (one computed
// while the other is written), not of the suite. Its tensors are named as `golden export` names them
// (SUITE/ID/input, SUITE/ID/positions) plus SUITE/ID/expected, so the sidecar is also the input file
// a candidate reads. Same arguments, same bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "golden/golden.h"
#include "spec/spec.h"

namespace ropecheck::golden {

// Above this many input values in all, the arrays go to the sidecar (2^20 values are ~25 MB of
// hex-float JSON, the largest checked-in suite's order of size).
inline constexpr std::int64_t kCustomInlineValues = std::int64_t{1} << 20;

// The most values one test holds. A test is computed whole, twice over (one computed while the
// other is written): 2 × (input and expected as doubles, plus their encoded bytes), up to 64 bytes
// per value, 1 GiB at this cap. `--tokens 4 --heads 262144` (2^26 values a test at head_dim 64)
// peaked at 2.6 GB and `--heads 4194304` ended in an internal error. golden/README.md's example,
// 2048 tokens x 32 heads x 128, is 2^23.
inline constexpr std::int64_t kCustomMaxTestValues = std::int64_t{1} << 24;

// What a custom suite is made of; the caller has checked the sizes against the two bounds above.
struct CustomSuiteRequest {
  Spec spec;
  std::vector<std::int64_t> positions;  // position_components(spec) a token
  std::string positions_text;           // as the user gave them, for the description and comments
  std::string suite;                    // the suite's name
  std::int64_t tokens = 0, heads = 1;   // tokens a test, heads a token
  std::uint64_t seed = 1;
  int threads = 0;
  std::string sidecar;  // the sidecar's file name, beside the JSON; empty: the arrays inline
};

// The suite's file with its tests' positions; the arrays are inline with an empty `sidecar`, else
// named for the sidecar that write_custom_sidecar writes.
GoldenFile custom_suite(const CustomSuiteRequest& request);

// The sidecar's bytes for `file` (custom_suite's, with a sidecar), passed to `write` chunk by chunk;
// returns their SHA-256 (hex), which the JSON records (golden/README.md "Sidecar").
std::string write_custom_sidecar(const GoldenFile& file, const CustomSuiteRequest& request,
                                 const std::function<void(std::string_view)>& write);

}  // namespace ropecheck::golden
