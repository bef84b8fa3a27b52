// Golden vectors (docs/design.md "Golden JSON format"; golden/README.md documents the format for
// consumers): the in-memory form of one golden file, its reader and writer, the deterministic
// generator of the checked-in suites, and the two checks run on files: lint (structure a schema
// cannot express) and verify (every expected value recomputed with the exact reference).
//
// This header stays light (standard library and spec/ only); JSON and MPFR live in the sources.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spec/spec.h"

namespace ropecheck::golden {

// The only schema identifier this code reads and writes.
inline constexpr std::string_view kSchema = "ropecheck-golden/1";
// Version of the generation algorithm (not of the package): bumped only when the generator's output
// changes, so that regenerated files stay byte-identical across releases otherwise.
inline constexpr std::string_view kGeneratorVersion = "1";

// What the tests of a file compute: a RoPE application, or attention over RoPE'd Q and K.
enum class Kind { rope, attention };
std::string_view name(Kind kind);

struct Generator {
  std::string name = "ropecheck";
  std::string version{kGeneratorVersion};
  int precision_bits = 256;  // working precision of the reference's first attempt
  std::uint64_t seed = 0;    // see generator.cpp: every group's inputs derive from it
};

// One RoPE test: input [tokens, heads, head_dim] at one position tuple per token.
struct RopeTest {
  std::int64_t id = 0;
  std::string comment;
  std::vector<std::string> flags;
  std::vector<std::int64_t> positions;  // row-major [tokens, position_components(spec)]
  std::int64_t tokens = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::vector<double> input;     // values of spec.dtype
  std::vector<double> expected;  // correctly rounded exact result (Model::exact)
  std::optional<std::vector<double>> expected_f32_recipe;  // Model::f32_recipe, where carried
  std::optional<std::vector<std::string>> exact;           // 40 significant decimal digits
  // A test of a file with a sidecar (GoldenFile::sidecar) names the sidecar tensors of its input and
  // expected values instead of listing them; `input` and `expected` stay empty until load_arrays.
  struct SidecarArrays {
    std::string input, expected;
  };
  std::optional<SidecarArrays> sidecar;
};

// One attention test: out_h = softmax(RoPE(Q_h) RoPE(K_h)ᵀ/√head_dim + M) V_h (reference/attention.h).
struct AttentionTest {
  std::int64_t id = 0;
  std::string comment;
  std::vector<std::string> flags;
  bool causal = false;
  std::int64_t q_tokens = 0;
  std::int64_t k_tokens = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t v_dim = 0;
  std::vector<std::int64_t> q_positions;  // one per query token
  std::vector<std::int64_t> k_positions;  // one per key token
  std::vector<double> q;                  // [q_tokens, heads, head_dim]
  std::vector<double> k;                  // [k_tokens, heads, head_dim]
  std::vector<double> v;                  // [k_tokens, heads, v_dim]
  std::vector<double> expected_scores;    // [heads, q_tokens, k_tokens], before softmax and mask
  std::vector<double> expected_outputs;   // [q_tokens, heads, v_dim]
};

struct Group {
  Spec spec;
  std::vector<RopeTest> rope_tests;            // kind == rope
  std::vector<AttentionTest> attention_tests;  // kind == attention
};

struct GoldenFile {
  std::string suite;
  Kind kind = Kind::rope;
  std::string description;
  Generator generator;
  std::int64_t number_of_tests = 0;                         // as declared in the file
  std::vector<std::pair<std::string, std::string>> notes;   // flag → explanation, in file order
  std::vector<Group> groups;
  // Big suites (`golden generate --spec ...`) keep their arrays in a safetensors file beside the
  // JSON (golden/README.md "Sidecar"): its name as written (relative to the JSON's folder), and the
  // path read_golden_file resolved it to (not written).
  std::string sidecar;
  std::string sidecar_path;
  // The sidecar's content hash ("sha256:" + 64 hex digits, golden/sha256.h) as written with it:
  // checked whenever the sidecar is opened, so a JSON is never read with another suite's arrays.
  // Empty: not recorded (files written before the field; read unchecked).
  std::string sidecar_sha256;
  std::string path;  // the JSON file read_golden_file read (not written; empty when parsed from text)
};

// The one exception type of the reader: "FILE: PATH: expected WHAT, got WHAT", e.g.
// "suite.json: groups[2].tests[5].expected[3]: expected a hex-float string, got 12".
// The project's one input error (base/errors.h), named for where it comes from.
using GoldenError = InputError;

// Parses and checks a golden file's text against schema ropecheck-golden/1: every field's type,
// every length against the declared shape (overflow-safe, before any value array is allocated),
// every value representable in the group's dtype. Never crashes; throws only GoldenError.
// Duplicate ids, undocumented flags and a wrong declared count are left to lint().
GoldenFile parse_golden(std::string_view text, std::string_view file_name);
// Reads a file and parses it; an unreadable file is a GoldenError too.
GoldenFile read_golden_file(const std::string& path);

// Fills a sidecar test's input and expected values from the file's sidecar (a no-op for a test
// that lists them), checking each tensor's storage dtype, count and shape against the test
// (golden/sidecar.h sidecar_entry): a reader of a big suite loads a copy of one test at a time and
// drops it after judging. Throws GoldenError.
void load_arrays(const GoldenFile& file, const Spec& spec, RopeTest& test);

// Canonical text of a file: fixed key order and layout, hex floats, '\n' line ends, no locale,
// no timestamps. write_golden(parse_golden(t)) == t for every file this writer produced.
std::string write_golden(const GoldenFile& file);

// Hex floats (every value in a file's JSON): reference/rounding.h to_hex and parse_hex.

// Suite generation. Every suite's content is a pure function of its definition (generator.cpp)
// and the reference: no clock, no locale, no platform-dependent library call.
std::vector<std::string> suite_names();
// Throws std::invalid_argument for an unknown name.
GoldenFile generate_suite(std::string_view suite_name);

// Problems a schema cannot express: duplicate ids, flags used but not explained in notes, the
// declared number of tests, unknown flag names. Empty when the file is clean.
std::vector<std::string> lint(const GoldenFile& file, std::string_view file_name);

// Recomputes every expected value (and expected_f32_recipe, exact where present) with the
// reference and compares bit for bit. Each failure names the file, the test id and the element.
struct VerifyResult {
  std::int64_t tests_checked = 0;
  std::int64_t values_checked = 0;
  std::vector<std::string> failures;  // at most max_failures are kept
  std::int64_t failing_tests = 0;
};
// Throws GoldenError when a sidecar test's arrays cannot be read (load_arrays).
VerifyResult verify(const GoldenFile& file, std::string_view file_name, int max_failures = 20);

// The known flags with their explanations (what each exercises, the bug class it targets).
const std::vector<std::pair<std::string, std::string>>& flag_catalog();

}  // namespace ropecheck::golden
