// The reports of `ropecheck certify` (gate/README.md "Certifying every position"): a shard's report
// (one contiguous run of the range's chunks, runner/certify.h shard_range) and the certificate,
// which `certify` writes for an unsharded run and `report merge` from the shards of one run once
// they cover the range exactly once. Both are JSON: the run's identity (spec, implementation and its
// library's SHA-256, model and tolerance, range, stride, seed, chunk, ropecheck's version), per
// pair the worst e and where, failures and outputs not bit for bit, and the verdict.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/certify.h"

namespace ropecheck::gate {

inline constexpr const char* kCertifyShardKind = "ropecheck certify shard";
inline constexpr const char* kCertificateKind = "ropecheck certificate";

// What a run certifies and how (every shard of one run has the same).
struct CertifyIdentity {
  std::string spec;            // canonical spec text
  std::string implementation;  // Implementation::name()
  std::string selector;        // Implementation::selector()
  std::string library;         // --plugin's path ("" for a project kernel)
  std::string sha256;          // the library's "sha256:HEX" ("" for a project kernel)
  std::string model;           // judge::name(model)
  judge::Tolerance tolerance;
  bool strict_zeros = false;
  bool require_bits = false;
  runner::CertifyOptions options;  // range, stride, seed, chunk (threads not recorded)
};

struct ShardPlace {
  int index = 0;
  int count = 1;
};

// The JSON of a shard (place.count > 1) or of the certificate (place = 0/1: the whole range).
nlohmann::ordered_json certify_json(const CertifyIdentity& id, const runner::CertifyResult& result, ShardPlace place);
// A shard's report or the certificate as its file holds it (certify --json, report merge --out).
std::string certify_file_text(const nlohmann::ordered_json& report);

// The claims of a certify run: `model` (exact or f32-angle: certify judges against the exact
// values) and an explicit `tolerance` ("" for the implementation's bound); UsageError otherwise.
runner::Claims certify_claims(const std::string& model, const std::string& tolerance);
// The positions a run certifies: 0 <= first < end <= 2^31 (the kernels' documented range,
// runner/implementation.h), a stride >= 0 and chunks of 1 to 2^20 positions; UsageError naming the
// option (--positions, --stride, --chunk) otherwise.
inline constexpr std::int64_t kMaxCertifyPosition = std::int64_t{1} << 31;
void check_certify_options(const runner::CertifyOptions& options);

// One certify run, the command line's and a Python callable's alike (python/certify.cpp): the
// identity of `implementation` on `spec` over options' range (name, selector, model, the rule's
// tolerance, and with a `library` (a plugin, a callable's source file) its path and SHA-256),
// certified over shard `place` of the range.
// UsageError "--shard: ..." when the range has fewer chunks than shards.
struct CertifyRun {
  CertifyIdentity id;
  runner::CertifyResult result;
  nlohmann::ordered_json report;  // certify_json of the two
};
CertifyRun run_certify(const runner::Implementation& implementation, const Spec& spec, const runner::CertifyOptions& options,
                       bool strict_zeros, bool require_bits, ShardPlace place, const std::string& library);
// The summary printed by certify, report merge and --verify's header.
std::string certify_text(const nlohmann::ordered_json& report);

bool is_certify_report(const nlohmann::ordered_json& report);
// A report read back (InputError naming `file` and the field when it is not one of ours).
struct CertifyReport {
  CertifyIdentity id;
  runner::CertifyResult result;
  ShardPlace place;
  bool certificate = false;
};
CertifyReport read_certify_report(const nlohmann::ordered_json& report, const std::string& file);

// `report merge` of the shards of one certify run: InputError unless every report is a shard of the
// same run (same identity and shard count), each shard index appears once, each covers the range
// shard_range gives it, and together they cover [first, end) exactly once. Returns the certificate.
nlohmann::ordered_json merge_certify_shards(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& reports);

}  // namespace ropecheck::gate
