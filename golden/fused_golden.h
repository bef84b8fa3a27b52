// Fused golden suites (golden/README.md "Fused suites", schema ropecheck-golden-fused/1): one JSON
// file that carries the fused spec's canonical text, the generator and the tests, and a safetensors
// sidecar beside it, tied to it by its SHA-256, with each test's inputs and the exact reference's
// outputs (fused/README.md "The reference"). golden/ reads and writes the file and checks the
// sidecar's hash; it does not read the spec or the tensors: gate/ parses the spec with
// fused::parse_fused_spec (so every key fused/ knows flows through unchanged) and reads the tensors
// with gate/commands/fused_files.h, which computes the suite too (`golden generate --fused`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "golden/golden.h"

namespace ropecheck::golden {

// The schema identifier of fused suites: other fields than ropecheck-golden/1, so a reader of that
// schema refuses a fused file at `schema` instead of misreading it.
inline constexpr std::string_view kFusedSchema = "ropecheck-golden-fused/1";
// Version of the fused generation algorithm (gate/commands/fused_golden_command.cpp).
inline constexpr std::string_view kFusedGeneratorVersion = "1";

struct FusedGoldenTest {
  std::int64_t id = 0;  // 1, 2, … in file order
  std::string comment;
  std::int64_t tokens = 0;
};

struct FusedGoldenFile {
  std::string suite;  // lower-case letters, digits and '-'
  std::string description;
  Generator generator;
  std::string spec;  // fused::to_string of the fused spec (not parsed here)
  std::vector<FusedGoldenTest> tests;
  std::string sidecar;         // the sidecar's file name, beside the JSON (no '/')
  std::string sidecar_sha256;  // "sha256:" + 64 hex digits
  std::string path;            // the JSON file read (not written)
  std::string sidecar_path;    // the sidecar beside it (not written)
};

// Whether `text` is a JSON object whose "schema" is kFusedSchema (a golden file of either schema
// is routed by it; anything else is left to the reader that names what is wrong).
bool is_fused_golden(std::string_view text);
// Parses and checks a fused golden file: every field, its type and range, unknown fields and keys
// given twice refused, number_of_tests equal to the tests, ids 1, 2, … Throws only GoldenError
// ("FILE: FIELD: expected WHAT, got WHAT").
FusedGoldenFile parse_fused_golden(std::string_view text, std::string_view file_name);
// Reads a file (at most 2^28 bytes) and parses it; the sidecar path is resolved beside it.
FusedGoldenFile read_fused_golden_file(const std::string& path);
// Canonical text: fixed key order, two-space indentation, '\n' line ends.
// write_fused_golden(parse_fused_golden(t)) == t for every file it wrote.
std::string write_fused_golden(const FusedGoldenFile& file);
// The sidecar's bytes (at most 2^31), after their SHA-256 is checked against the file's; the caller
// parses them as safetensors (tensorio/readers.h parse_safetensors). Throws GoldenError naming the
// JSON and the field (sidecar.file, sidecar.sha256).
std::string read_fused_sidecar(const FusedGoldenFile& file);

// The sidecar's tensor names of test `id`: inputs `SUITE/ID/NAME`, the reference's outputs
// `SUITE/ID/expected/NAME` (NAME as gate/commands/fused_files.h names them).
std::string fused_input_prefix(const FusedGoldenFile& file, std::int64_t id);
std::string fused_expected_prefix(const FusedGoldenFile& file, std::int64_t id);

}  // namespace ropecheck::golden
