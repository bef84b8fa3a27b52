// The reports of `ropecheck certify` (gate/certificate.h).
#include "gate/certificate.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "base/errors.h"
#include "gate/report_parts.h"
#include "golden/sha256.h"

namespace ropecheck::gate {
namespace {

using Json = nlohmann::ordered_json;

using runner::CertifyResult;
using runner::PairRecord;

// A pair's recorded places, each a position (-1: none; null in the report) and its probe ("" with
// none): written and read from this one list.
struct Place {
  const char* position;
  const char* probe;
  std::int64_t PairRecord::*at;
  runner::Probe PairRecord::*which;
};
constexpr Place kPlaces[] = {{"position", "probe", &PairRecord::worst_position, &PairRecord::worst_probe},
                             {"first_failure", "first_failure_probe", &PairRecord::first_failure, &PairRecord::first_failure_probe},
                             {"first_mismatch", "first_mismatch_probe", &PairRecord::first_mismatch, &PairRecord::first_mismatch_probe}};
// The counts of a pair and of a result, read from these lists (certify_json writes them in its order).
constexpr std::pair<const char*, std::int64_t PairRecord::*> kPairCounts[] = {
    {"checked", &PairRecord::checked}, {"failures", &PairRecord::failures}, {"mismatches", &PairRecord::mismatches}};
constexpr std::pair<const char*, std::int64_t CertifyResult::*> kCounts[] = {
    {"positions", &CertifyResult::positions},       {"random_positions", &CertifyResult::random_positions},
    {"outputs", &CertifyResult::outputs},           {"passthrough_failures", &CertifyResult::passthrough_failures},
    {"failed_calls", &CertifyResult::failed_calls}, {"reference_fallback", &CertifyResult::reference_fallback}};

void put_place(Json& o, const Place& place, const PairRecord& rec) {
  const std::int64_t at = rec.*place.at;
  o[place.position] = at < 0 ? Json(nullptr) : Json(at);
  o[place.probe] = at < 0 ? "" : std::string(runner::name(rec.*place.which));
}

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

// One field of a report, `expected` naming what it must be: InputError naming file and field when it
// is missing or `ok` refuses it (the one message of every field read).
const Json& field(const Json& j, const char* key, const std::string& file, const char* expected, bool (*ok)(const Json&)) {
  if (!j.is_object() || !j.contains(key)) throw InputError(file + ": " + key + ": missing, expected " + expected);
  const Json& v = j.at(key);
  if (!ok(v)) throw InputError(file + ": " + key + ": expected " + expected + ", got " + v.dump());
  return v;
}
const Json& object(const Json& j, const char* key, const std::string& file) {
  return field(j, key, file, "an object", [](const Json& x) { return x.is_object(); });
}
std::int64_t integer(const Json& j, const char* key, const std::string& file) {
  return field(j, key, file, "an integer", [](const Json& x) { return x.is_number_integer(); }).get<std::int64_t>();
}
std::int64_t integer_or_none(const Json& j, const char* key, const std::string& file) {
  const Json& v = field(j, key, file, "an integer or null", [](const Json& x) { return x.is_null() || x.is_number_integer(); });
  return v.is_null() ? -1 : v.get<std::int64_t>();
}
double number(const Json& j, const char* key, const std::string& file) {
  return field(j, key, file, "a number", [](const Json& x) { return x.is_number(); }).get<double>();
}
std::string text(const Json& j, const char* key, const std::string& file) {
  const Json& v = field(j, key, file, "a string", [](const Json& x) { return x.is_null() || x.is_string(); });
  return v.is_null() ? "" : v.get<std::string>();
}
bool flag(const Json& j, const char* key, const std::string& file) {
  return field(j, key, file, "true or false", [](const Json& x) { return x.is_boolean(); }).get<bool>();
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
    Json o;
    o["pair"] = p;
    o["worst_e"] = rec.worst_e;
    put_place(o, kPlaces[0], rec);
    o["checked"] = rec.checked;
    o["failures"] = rec.failures;
    put_place(o, kPlaces[1], rec);
    o["first_failure_message"] = rec.first_failure_message;
    o["mismatches"] = rec.mismatches;
    put_place(o, kPlaces[2], rec);
    pairs.push_back(std::move(o));
  }
  j["worst_e"] = worst;
  j["pairs"] = std::move(pairs);
  j["verdict"] = r.pass(id.require_bits) ? "pass" : "fail";
  return j;
}

std::string certify_file_text(const Json& report) { return report.dump(1, ' ', false, Json::error_handler_t::replace) + "\n"; }

runner::Claims certify_claims(const std::string& model, const std::string& tolerance) {
  runner::Claims claims = runner::Claims::parse(model, tolerance);
  if (!judge::judges_exact_values(claims.model)) {
    throw UsageError("--model: expected exact or f32-angle (certify judges against the exact values), got " + model);
  }
  return claims;
}

void check_certify_options(const runner::CertifyOptions& o) {
  if (o.first < 0 || o.end <= o.first || o.end > kMaxCertifyPosition) {
    throw UsageError("--positions: expected A:B with 0 <= A < B <= 2^31 = " + std::to_string(kMaxCertifyPosition) +
                     " (positions A to B - 1), got " + std::to_string(o.first) + ":" + std::to_string(o.end));
  }
  if (o.stride < 0) throw UsageError("--stride: expected an integer >= 0, got " + std::to_string(o.stride));
  if (o.chunk <= 0 || o.chunk > (std::int64_t{1} << 20)) {
    throw UsageError("--chunk: expected 1 to 2^20 positions, got " + std::to_string(o.chunk));
  }
}

CertifyRun run_certify(const runner::Implementation& implementation, const Spec& spec, const runner::CertifyOptions& options,
                       bool strict_zeros, bool require_bits, ShardPlace place, const std::string& library) {
  check_certify_options(options);
  CertifyRun run;
  CertifyIdentity& id = run.id;
  id.spec = to_string(spec);
  id.implementation = implementation.name();
  id.selector = implementation.selector();
  if (!library.empty()) {
    id.library = library;
    id.sha256 = golden::sha256_of_file(library);
  }
  id.model = std::string(judge::name(implementation.claims().model));
  id.strict_zeros = strict_zeros;
  id.require_bits = require_bits;
  id.options = options;
  const judge::PairRule rule = runner::certify_rule(implementation, spec, strict_zeros);
  id.tolerance = rule.tolerance;
  runner::PositionRange range;
  try {
    range = runner::shard_range(options, place.index, place.count);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--shard: ") + e.what());
  }
  run.result = runner::certify(implementation, spec, rule, options, range);
  run.report = certify_json(id, run.result, place);
  return run;
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
  const Json& impl = object(j, "implementation", file);
  id.implementation = text(impl, "name", file);
  id.selector = text(impl, "selector", file);
  id.library = text(impl, "library", file);
  id.sha256 = text(impl, "sha256", file);
  id.model = text(j, "model", file);
  const Json& tol = object(j, "tolerance", file);
  id.tolerance.kind = text(tol, "kind", file) == "ulp" ? judge::Tolerance::Kind::ulp : judge::Tolerance::Kind::e;
  id.tolerance.value = number(tol, "value", file);
  id.tolerance.per_radian = number(tol, "per_radian", file);
  id.tolerance.source = text(tol, "source", file);
  id.strict_zeros = flag(j, "strict_zeros", file);
  id.require_bits = flag(j, "require_bits", file);
  const Json& range = object(j, "range", file);
  id.options.first = integer(range, "first", file);
  id.options.end = integer(range, "end", file);
  id.options.stride = integer(j, "stride", file);
  id.options.seed = field(j, "seed", file, "an integer >= 0", [](const Json& x) { return x.is_number_unsigned(); }).get<std::uint64_t>();
  id.options.chunk = integer(j, "chunk", file);
  if (id.options.chunk <= 0 || id.options.end < id.options.first)
    throw InputError(file + ": range, chunk: expected first <= end and chunk > 0");
  runner::CertifyResult& r = out.result;
  if (out.certificate) {
    out.place = {0, 1};
    r.range = {id.options.first, id.options.end};
  } else {
    const Json& shard = object(j, "shard", file);
    out.place = {static_cast<int>(integer(shard, "index", file)), static_cast<int>(integer(shard, "count", file))};
    r.range = {integer(shard, "first", file), integer(shard, "end", file)};
  }
  for (const auto& [key, member] : kCounts) r.*member = integer(j, key, file);
  r.first_call_error = text(j, "first_call_error", file);
  const Json& pairs = field(j, "pairs", file, "an array", [](const Json& x) { return x.is_array(); });
  for (const Json& p : pairs) {
    runner::PairRecord rec;
    rec.worst_e = number(p, "worst_e", file);
    for (const Place& place : kPlaces) {
      rec.*place.at = integer_or_none(p, place.position, file);
      rec.*place.which = probe(p, place.probe, file);
    }
    for (const auto& [key, member] : kPairCounts) rec.*member = integer(p, key, file);
    rec.first_failure_message = text(p, "first_failure_message", file);
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
  if (j["mismatches"].get<std::int64_t>() > 0) {
    for (const Json& p : j["pairs"]) {
      if (p["first_mismatch"].is_null()) continue;
      std::snprintf(line, sizeof line,
                    "  pair %d: %" PRId64 " outputs not the correctly rounded bits, first at position %" PRId64 " (%s)\n",
                    p["pair"].get<int>(), p["mismatches"].get<std::int64_t>(), p["first_mismatch"].get<std::int64_t>(),
                    p["first_mismatch_probe"].get<std::string>().c_str());
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
