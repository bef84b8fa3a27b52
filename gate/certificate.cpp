// The reports of `ropecheck certify` (gate/certificate.h).
#include "gate/certificate.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "base/errors.h"
#include "gate/report_parts.h"

namespace ropecheck::gate {
namespace {

using Json = nlohmann::ordered_json;

Json position_or_null(std::int64_t p) { return p < 0 ? Json(nullptr) : Json(p); }

Json identity_json(const CertifyIdentity& id) {
  Json j;
  j["spec"] = id.spec;
  j["implementation"] = {{"name", id.implementation},
                         {"selector", id.selector},
                         {"library", id.library.empty() ? Json(nullptr) : Json(id.library)},
                         {"sha256", id.sha256.empty() ? Json(nullptr) : Json(id.sha256)}};
  j["model"] = id.model;
  j["tolerance"] = {{"kind", id.tolerance.kind == judge::Tolerance::Kind::e ? "e" : "ulp"},
                    {"value", id.tolerance.value},
                    {"per_radian", id.tolerance.per_radian},
                    {"source", id.tolerance.source}};
  j["strict_zeros"] = id.strict_zeros;
  j["require_bits"] = id.require_bits;
  j["range"] = {{"first", id.options.first}, {"end", id.options.end}};
  j["stride"] = id.options.stride;
  j["seed"] = id.options.seed;
  j["chunk"] = id.options.chunk;
  return j;
}

// One field of a report, of the expected JSON type, or InputError naming file and field.
const Json& field(const Json& j, const char* key, const std::string& file, const char* expected) {
  if (!j.is_object() || !j.contains(key)) throw InputError(file + ": " + key + ": missing, expected " + expected);
  return j.at(key);
}
std::int64_t integer(const Json& j, const char* key, const std::string& file) {
  const Json& v = field(j, key, file, "an integer");
  if (!v.is_number_integer()) throw InputError(file + ": " + key + ": expected an integer, got " + v.dump());
  return v.get<std::int64_t>();
}
std::int64_t integer_or_none(const Json& j, const char* key, const std::string& file) {
  const Json& v = field(j, key, file, "an integer or null");
  if (v.is_null()) return -1;
  if (!v.is_number_integer()) throw InputError(file + ": " + key + ": expected an integer or null, got " + v.dump());
  return v.get<std::int64_t>();
}
double number(const Json& j, const char* key, const std::string& file) {
  const Json& v = field(j, key, file, "a number");
  if (!v.is_number()) throw InputError(file + ": " + key + ": expected a number, got " + v.dump());
  return v.get<double>();
}
std::string text(const Json& j, const char* key, const std::string& file) {
  const Json& v = field(j, key, file, "a string");
  if (v.is_null()) return "";
  if (!v.is_string()) throw InputError(file + ": " + key + ": expected a string, got " + v.dump());
  return v.get<std::string>();
}
bool flag(const Json& j, const char* key, const std::string& file) {
  const Json& v = field(j, key, file, "true or false");
  if (!v.is_boolean()) throw InputError(file + ": " + key + ": expected true or false, got " + v.dump());
  return v.get<bool>();
}

runner::Probe probe(const Json& j, const char* key, const std::string& file) {
  const std::string name = text(j, key, file);
  if (name.empty()) return runner::Probe::unit_x;
  const std::optional<runner::Probe> p = runner::parse_probe(name);
  if (!p) throw InputError(file + ": " + key + ": expected \"unit (1, 0)\", \"unit (0, 1)\" or \"random\", got \"" + name + "\"");
  return *p;
}

}  // namespace

Json certify_json(const CertifyIdentity& id, const runner::CertifyResult& r, ShardPlace place) {
  const bool certificate = place.count == 1;
  Json j;
  j["kind"] = certificate ? kCertificateKind : kCertifyShardKind;
  j["tool"] = {{"name", "ropecheck"}, {"version", ROPECHECK_VERSION}};
  const Json identity = identity_json(id);
  for (auto it = identity.begin(); it != identity.end(); ++it) j[it.key()] = it.value();
  if (!certificate) {  // the certificate is the same however the range was sharded
    j["shard"] = {{"index", place.index}, {"count", place.count}, {"first", r.range.first}, {"end", r.range.end}};
  }
  j["positions"] = r.positions;
  j["random_positions"] = r.random_positions;
  j["outputs"] = r.outputs;
  j["failures"] = r.failures();
  j["mismatches"] = r.mismatches();
  j["passthrough_failures"] = r.passthrough_failures;
  j["failed_calls"] = r.failed_calls;
  j["first_call_error"] = r.first_call_error;
  j["reference_fallback"] = r.reference_fallback;
  double worst = 0;
  Json pairs = Json::array();
  for (std::size_t p = 0; p < r.pairs.size(); ++p) {
    const runner::PairRecord& rec = r.pairs[p];
    worst = std::max(worst, rec.worst_e);
    pairs.push_back({{"pair", p},
                     {"worst_e", rec.worst_e},
                     {"position", position_or_null(rec.worst_position)},
                     {"probe", rec.worst_position < 0 ? "" : std::string(runner::name(rec.worst_probe))},
                     {"checked", rec.checked},
                     {"failures", rec.failures},
                     {"first_failure", position_or_null(rec.first_failure)},
                     {"first_failure_probe", rec.first_failure < 0 ? "" : std::string(runner::name(rec.first_failure_probe))},
                     {"first_failure_message", rec.first_failure_message},
                     {"mismatches", rec.mismatches}});
  }
  j["worst_e"] = worst;
  j["pairs"] = std::move(pairs);
  j["verdict"] = r.pass(id.require_bits) ? "pass" : "fail";
  return j;
}

bool is_certify_report(const Json& report) {
  return report.is_object() && report.contains("kind") && report["kind"].is_string() &&
         (report["kind"] == kCertifyShardKind || report["kind"] == kCertificateKind);
}

CertifyReport read_certify_report(const Json& j, const std::string& file) {
  if (!is_certify_report(j)) {
    throw InputError(file + ": kind: expected \"" + kCertifyShardKind + "\" or \"" + kCertificateKind + "\"");
  }
  CertifyReport out;
  out.certificate = j["kind"] == kCertificateKind;
  CertifyIdentity& id = out.id;
  id.spec = text(j, "spec", file);
  const Json& impl = field(j, "implementation", file, "an object");
  id.implementation = text(impl, "name", file);
  id.selector = text(impl, "selector", file);
  id.library = text(impl, "library", file);
  id.sha256 = text(impl, "sha256", file);
  id.model = text(j, "model", file);
  const Json& tol = field(j, "tolerance", file, "an object");
  id.tolerance.kind = text(tol, "kind", file) == "ulp" ? judge::Tolerance::Kind::ulp : judge::Tolerance::Kind::e;
  id.tolerance.value = number(tol, "value", file);
  id.tolerance.per_radian = number(tol, "per_radian", file);
  id.tolerance.source = text(tol, "source", file);
  id.strict_zeros = flag(j, "strict_zeros", file);
  id.require_bits = flag(j, "require_bits", file);
  const Json& range = field(j, "range", file, "an object");
  id.options.first = integer(range, "first", file);
  id.options.end = integer(range, "end", file);
  id.options.stride = integer(j, "stride", file);
  const Json& seed = field(j, "seed", file, "an integer >= 0");
  if (!seed.is_number_unsigned()) throw InputError(file + ": seed: expected an integer >= 0, got " + seed.dump());
  id.options.seed = seed.get<std::uint64_t>();
  id.options.chunk = integer(j, "chunk", file);
  if (id.options.chunk <= 0 || id.options.end < id.options.first)
    throw InputError(file + ": range, chunk: expected first <= end and chunk > 0");
  runner::CertifyResult& r = out.result;
  if (out.certificate) {
    out.place = {0, 1};
    r.range = {id.options.first, id.options.end};
  } else {
    const Json& shard = field(j, "shard", file, "an object");
    out.place = {static_cast<int>(integer(shard, "index", file)), static_cast<int>(integer(shard, "count", file))};
    r.range = {integer(shard, "first", file), integer(shard, "end", file)};
  }
  r.positions = integer(j, "positions", file);
  r.random_positions = integer(j, "random_positions", file);
  r.outputs = integer(j, "outputs", file);
  r.passthrough_failures = integer(j, "passthrough_failures", file);
  r.failed_calls = integer(j, "failed_calls", file);
  r.first_call_error = text(j, "first_call_error", file);
  r.reference_fallback = integer(j, "reference_fallback", file);
  const Json& pairs = field(j, "pairs", file, "an array");
  if (!pairs.is_array()) throw InputError(file + ": pairs: expected an array");
  for (const Json& p : pairs) {
    runner::PairRecord rec;
    rec.worst_e = number(p, "worst_e", file);
    rec.worst_position = integer_or_none(p, "position", file);
    rec.worst_probe = probe(p, "probe", file);
    rec.checked = integer(p, "checked", file);
    rec.failures = integer(p, "failures", file);
    rec.first_failure = integer_or_none(p, "first_failure", file);
    rec.first_failure_probe = probe(p, "first_failure_probe", file);
    rec.first_failure_message = text(p, "first_failure_message", file);
    rec.mismatches = integer(p, "mismatches", file);
    r.pairs.push_back(std::move(rec));
  }
  return out;
}

Json merge_certify_shards(const std::vector<std::pair<std::string, Json>>& reports) {
  std::vector<CertifyReport> shards;
  for (const auto& [file, j] : reports) {
    shards.push_back(read_certify_report(j, file));
    if (shards.back().certificate)
      throw InputError(file + ": kind: expected \"" + std::string(kCertifyShardKind) + "\", got a certificate");
  }
  const CertifyReport& first = shards.front();
  const Json identity = identity_json(first.id);
  const int count = first.place.count;
  std::map<int, std::size_t> by_index;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const std::string& file = reports[i].first;
    if (identity_json(shards[i].id) != identity) {
      throw InputError(file + ": expected a shard of the same certify run as " + reports.front().first +
                       " (spec, implementation, model, tolerance, range, stride, seed and chunk alike)");
    }
    if (shards[i].place.count != count) {
      throw InputError(file + ": shard.count: expected " + std::to_string(count) + ", got " + std::to_string(shards[i].place.count));
    }
    if (shards[i].result.pairs.size() != first.result.pairs.size())
      throw InputError(file + ": pairs: expected " + std::to_string(first.result.pairs.size()) + " entries");
    const int index = shards[i].place.index;
    if (index < 0 || index >= count) {
      throw InputError(file + ": shard.index: expected 0 to " + std::to_string(count - 1) + ", got " + std::to_string(index));
    }
    if (!by_index.emplace(index, i).second) {
      throw InputError(file + ": shard.index: shard " + std::to_string(index) + " given twice (also " + reports[by_index[index]].first +
                       ")");
    }
    runner::PositionRange expected;
    try {
      expected = runner::shard_range(shards[i].id.options, index, count);
    } catch (const std::invalid_argument& e) {
      throw InputError(file + ": shard.count: " + e.what());
    }
    if (!(shards[i].result.range == expected)) {
      throw InputError(file + ": shard.first, shard.end: expected [" + std::to_string(expected.first) + ", " +
                       std::to_string(expected.end) + ") for shard " + std::to_string(index) + "/" + std::to_string(count) + ", got [" +
                       std::to_string(shards[i].result.range.first) + ", " + std::to_string(shards[i].result.range.end) + ")");
    }
  }
  if (static_cast<int>(by_index.size()) != count) {
    std::string missing;
    for (int k = 0; k < count && missing.size() < 200; ++k) {
      if (!by_index.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
    }
    throw InputError("report merge: expected the " + std::to_string(count) + " shards of the certify run, missing shard " + missing);
  }
  // Ranges in index order tile [first, end) exactly once: each starts where the previous ended.
  runner::CertifyResult merged;
  merged.pairs.resize(first.result.pairs.size());
  merged.range = {first.id.options.first, first.id.options.first};
  std::int64_t at = first.id.options.first;
  for (const auto& [index, i] : by_index) {
    const runner::CertifyResult& part = shards[i].result;
    if (part.range.first != at) {
      throw InputError(reports[i].first + ": shard.first: expected " + std::to_string(at) + " (where shard " + std::to_string(index - 1) +
                       " ends), got " + std::to_string(part.range.first));
    }
    if (part.positions != part.range.end - part.range.first) {
      throw InputError(reports[i].first + ": positions: expected " + std::to_string(part.range.end - part.range.first) +
                       " (the shard's range), got " + std::to_string(part.positions));
    }
    at = part.range.end;
    runner::combine(merged, part);
  }
  if (at != first.id.options.end) {
    throw InputError("report merge: the shards end at " + std::to_string(at) + ", expected the range's end " +
                     std::to_string(first.id.options.end));
  }
  return certify_json(first.id, merged, {0, 1});
}

std::string certify_text(const Json& j) {
  std::string out;
  char line[512];
  const bool certificate = j["kind"] == kCertificateKind;
  out += "implementation: " + j["implementation"]["name"].get<std::string>();
  if (j["implementation"]["sha256"].is_string()) out += " (" + j["implementation"]["sha256"].get<std::string>() + ")";
  out += "\nmodel: " + j["model"].get<std::string>() + "\nspec: " + j["spec"].get<std::string>() + "\n";
  std::snprintf(line, sizeof line, "positions: [%" PRId64 ", %" PRId64 ")", j["range"]["first"].get<std::int64_t>(),
                j["range"]["end"].get<std::int64_t>());
  out += line;
  if (!certificate) {
    std::snprintf(line, sizeof line, ", shard %d/%d: [%" PRId64 ", %" PRId64 ")", j["shard"]["index"].get<int>(),
                  j["shard"]["count"].get<int>(), j["shard"]["first"].get<std::int64_t>(), j["shard"]["end"].get<std::int64_t>());
    out += line;
  }
  std::snprintf(line, sizeof line,
                "; %zu pairs, unit probes at every position, random inputs at %" PRId64 " positions (stride %" PRId64 ")\n",
                j["pairs"].size(), j["random_positions"].get<std::int64_t>(), j["stride"].get<std::int64_t>());
  out += line;
  double worst = -1;
  const Json* worst_pair = nullptr;
  for (const Json& p : j["pairs"]) {
    if (!p["position"].is_null() && p["worst_e"].get<double>() > worst) {
      worst = p["worst_e"].get<double>();
      worst_pair = &p;
    }
  }
  if (worst_pair) {
    std::snprintf(line, sizeof line, "worst e: %.6g at position %" PRId64 ", pair %d, %s (tolerance %.9g: %s)\n", worst,
                  (*worst_pair)["position"].get<std::int64_t>(), (*worst_pair)["pair"].get<int>(),
                  (*worst_pair)["probe"].get<std::string>().c_str(), j["tolerance"]["value"].get<double>(),
                  j["tolerance"]["source"].get<std::string>().c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "outputs: %" PRId64 " compared, %" PRId64 " not the correctly rounded bits%s\n",
                j["outputs"].get<std::int64_t>(), j["mismatches"].get<std::int64_t>(),
                j["require_bits"].get<bool>() ? " (required bit for bit)" : "");
  out += line;
  if (j["failures"].get<std::int64_t>() > 0) {
    for (const Json& p : j["pairs"]) {
      if (p["first_failure"].is_null()) continue;
      std::snprintf(line, sizeof line, "  pair %d: %" PRId64 " failures, first at position %" PRId64 " (%s): %s\n", p["pair"].get<int>(),
                    p["failures"].get<std::int64_t>(), p["first_failure"].get<std::int64_t>(),
                    p["first_failure_probe"].get<std::string>().c_str(), p["first_failure_message"].get<std::string>().c_str());
      out += line;
    }
  }
  if (j["failed_calls"].get<std::int64_t>() > 0) {
    out += "failed calls: " + std::to_string(j["failed_calls"].get<std::int64_t>()) +
           " (first: " + j["first_call_error"].get<std::string>() + ")\n";
  }
  if (j["passthrough_failures"].get<std::int64_t>() > 0) {
    out += "pass-through dims changed: " + std::to_string(j["passthrough_failures"].get<std::int64_t>()) + "\n";
  }
  out += "result: " + j["verdict"].get<std::string>() + "\n";
  return out;
}

}  // namespace ropecheck::gate
