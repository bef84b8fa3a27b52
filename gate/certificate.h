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
