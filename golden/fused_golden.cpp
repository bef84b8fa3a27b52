// Fused golden suites (golden/fused_golden.h): the writer, the sidecar's reading and the routing by
// schema; the reader is format.cpp's (one typed walk for both schemas).
#include "golden/fused_golden.h"

#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/checked_json.h"
#include "golden/sha256.h"
#include "tensorio/readers.h"

namespace ropecheck::golden {
namespace {

// A fused suite's JSON holds no arrays of values: far below this.
constexpr std::uint64_t kMaxJsonBytes = std::uint64_t{1} << 28;
// The sidecar is read whole (every test's tensors), as `ropecheck fused` reads its .npz files.
constexpr std::uint64_t kMaxSidecarBytes = std::uint64_t{1} << 31;

std::string quote(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

}  // namespace

bool is_fused_golden(std::string_view text) {
  if (text.find(kFusedSchema) == std::string_view::npos) return false;
  if (json_nesting_exceeds(text, kMaxJsonDepth) != std::string_view::npos) return false;
  const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (!j.is_object()) return false;
  const auto it = j.find("schema");
  return it != j.end() && it->is_string() && it->get<std::string>() == kFusedSchema;
}

FusedGoldenFile read_fused_golden_file(const std::string& path) {
  std::string text;
  try {
    text = tensorio::read_file_bytes(path, kMaxJsonBytes);
  } catch (const InputError& e) {
    throw GoldenError(std::string(e.what()));
  }
  FusedGoldenFile f = parse_fused_golden(text, path);
  f.path = path;
  f.sidecar_path = (std::filesystem::path(path).parent_path() / f.sidecar).string();
  return f;
}

std::string write_fused_golden(const FusedGoldenFile& f) {
  std::string out = "{\n";
  out += "  \"schema\": " + quote(kFusedSchema) + ",\n";
  out += "  \"suite\": " + quote(f.suite) + ",\n";
  out += "  \"description\": " + quote(f.description) + ",\n";
  out += "  \"generator\": {\"name\": " + quote(f.generator.name) + ", \"version\": " + quote(f.generator.version) +
         ", \"precision_bits\": " + std::to_string(f.generator.precision_bits) + ", \"seed\": " + std::to_string(f.generator.seed) + "},\n";
  out += "  \"spec\": " + quote(f.spec) + ",\n";
  out += "  \"number_of_tests\": " + std::to_string(f.tests.size()) + ",\n";
  out += "  \"sidecar\": {\"file\": " + quote(f.sidecar) + ", \"format\": \"safetensors\", \"sha256\": " + quote(f.sidecar_sha256) + "},\n";
  out += "  \"tests\": [";
  for (std::size_t i = 0; i < f.tests.size(); ++i) {
    const FusedGoldenTest& t = f.tests[i];
    out += i ? ",\n" : "\n";
    out +=
        "    {\"id\": " + std::to_string(t.id) + ", \"comment\": " + quote(t.comment) + ", \"tokens\": " + std::to_string(t.tokens) + "}";
  }
  out += f.tests.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string read_fused_sidecar(const FusedGoldenFile& file) {
  const std::string path = file.sidecar_path.empty() ? file.sidecar : file.sidecar_path;
  const std::string json = file.path.empty() ? "suite " + file.suite : file.path;
  std::string bytes;
  try {
    bytes = tensorio::read_file_bytes(path, kMaxSidecarBytes);
  } catch (const InputError& e) {
    throw GoldenError(json + ": sidecar.file: expected the safetensors file it names (" + file.sidecar + "), got " + e.what());
  }
  // The pair is checked by content, as ropecheck-golden/1's sidecars (golden/README.md "Sidecar").
  Sha256 hash;
  hash.update(bytes);
  const std::string actual = hash.finish();
  if (actual != file.sidecar_sha256) {
    throw GoldenError(json + ": sidecar.sha256: expected " + path + " to hash to " + file.sidecar_sha256 +
                      " (the sidecar this file was written with), got " + actual);
  }
  return bytes;
}

std::string fused_input_prefix(const FusedGoldenFile& file, std::int64_t id) { return file.suite + "/" + std::to_string(id) + "/"; }

std::string fused_expected_prefix(const FusedGoldenFile& file, std::int64_t id) { return fused_input_prefix(file, id) + "expected/"; }

}  // namespace ropecheck::golden
