// Fused golden suites through the command line (golden/README.md "Fused suites"):
// `golden generate --fused SPEC` writes one, `check --golden FUSED.json --candidate OUT` judges a
// candidate's outputs against it, and `golden verify` / `golden lint` check one.
#pragma once

#include <cstdint>
#include <string>

#include "judge/tolerance.h"

namespace ropecheck::gate {

struct FusedSuiteArgs {
  std::string spec;         // --fused: the fused spec's text (fused/README.md "The spec")
  std::string positions;    // --positions (default 0:tokens); cut into tests of `tokens`
  std::string out;          // FILE.json; its arrays go to FILE.safetensors beside it
  std::string suite;        // --name (default: the file's name)
  std::int64_t tokens = 0;  // tokens a test
  std::uint64_t seed = 1;
  bool force = false;
};

// Throws UsageError / InputError (exit 2) naming the option or file.
void generate_fused_suite(const FusedSuiteArgs& args);

// Whether the file at `path` is a fused golden suite (a regular file whose schema is
// golden::kFusedSchema); false for anything else, including what cannot be read.
bool is_fused_golden_file(const std::string& path);

// Judges the candidate's outputs (.npz, safetensors or JSON: SUITE/ID/q_out, SUITE/ID/k_out or
// SUITE/ID/k_cache, SUITE/ID/q_scale and SUITE/ID/k_scale) test by test; prints each test's
// judgement (with its explanation when it fails) and a summary line. Returns 0 (every test passes)
// or 1; bad input throws (exit 2).
int check_fused_golden(const std::string& golden_path, const std::string& candidate_path, judge::Model model, bool allow_missing);

// Recomputes every expected output of a fused suite with the exact reference and compares bit for
// bit: prints "FILE: ok (...)" or the differing values and "FILE: FAILED (...)"; returns 0 or 1.
int verify_fused_golden(const std::string& path);

}  // namespace ropecheck::gate
