// `ropecheck certify`: every position of a range × every pair of a spec, for a project kernel or a
// plugin (runner/certify.h): unit probes (1, 0) and (0, 1) at every position, random inputs at a
// stride, each pair judged by the one pair rule against the consecutive reference. `--shard K/N` or
// `--shard auto` (gate/shard.h: a Slurm job array, a Kubernetes Indexed Job) certifies a contiguous
// part of the range; `report merge` of the shards' --json reports checks that they cover the range
// exactly once and writes the certificate (gate/certificate.h). `--verify CERT` re-checks a random
// subset of a certificate's positions, and each pair's worst and first failing position, against
// the implementation given (gate/README.md "Certifying every position").
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>

#include "base/checked_json.h"
#include "base/random.h"
#include "gate/certificate.h"
#include "gate/commands/command.h"
#include "gate/commands/judge_options.h"
#include "gate/commands/spec_options.h"
#include "gate/report.h"
#include "gate/shard.h"
#include "golden/sha256.h"
#include "runner/registry.h"
#include "tensorio/readers.h"

namespace ropecheck::gate {
namespace {

constexpr std::int64_t kMaxCertifyPosition = std::int64_t{1} << 31;  // the kernels' documented range (runner/implementation.h)

struct CertifyArguments {
  std::string implementation = "auto";
  std::string plugin;
  SpecOptions spec;
  std::string positions;
  runner::CertifyOptions options;
  std::string model = std::string(judge::name(judge::kDefaultModel));
  std::string tolerance;
  bool strict_zeros = false;
  bool require_bits = false;
  std::string json;
  double timeout = 60;
  std::int64_t memory_limit_mib = runner::kDefaultMemoryLimitMiB;
  std::string shard = "0/1";
  std::optional<std::int64_t> shard_count;
  Shard resolved;
  std::string verify;          // --verify CERT
  std::int64_t samples = 256;  // --samples (with --verify)
};

// "A:B" with 0 <= A < B <= 2^31: positions [A, B).
std::pair<std::int64_t, std::int64_t> parse_range(const std::string& text) {
  const std::size_t colon = text.find(':');
  std::int64_t a = 0, b = 0;
  const char* s = text.data();
  const auto ok = [](std::from_chars_result r, const char* end) { return r.ec == std::errc() && r.ptr == end; };
  if (colon == std::string::npos || !ok(std::from_chars(s, s + colon, a), s + colon) ||
      !ok(std::from_chars(s + colon + 1, s + text.size(), b), s + text.size()) || a < 0 || b <= a || b > kMaxCertifyPosition) {
    throw UsageError("--positions: expected A:B with 0 <= A < B <= 2^31 = " + std::to_string(kMaxCertifyPosition) +
                     " (positions A to B - 1), got \"" + text + "\"");
  }
  return {a, b};
}

std::unique_ptr<runner::Implementation> implementation_of(const CertifyArguments& a, const runner::Claims& claims) {
  runner::RegistryOptions registry;
  registry.claims = claims;
  registry.timeout_seconds = a.timeout;
  registry.memory_limit_mib = a.memory_limit_mib;
  registry.kernel_threads = 1;  // calls run on the certify's own threads
  return runner::make_implementation({a.implementation, a.plugin}, registry);
}

runner::Claims claims_of(const std::string& model, const std::string& tolerance) {
  runner::Claims claims = runner::Claims::parse(model, tolerance);
  if (!judge::judges_exact_values(claims.model)) {
    throw UsageError("--model: expected exact or f32-angle (certify judges against the exact values), got " + model);
  }
  return claims;
}

int run_certify(const CertifyArguments& a) {
  check_report_paths({a.json}, {a.plugin});
  const auto [first, end] = parse_range(a.positions);
  if (a.options.stride < 0) throw UsageError("--stride: expected an integer >= 0, got " + std::to_string(a.options.stride));
  if (a.options.chunk <= 0 || a.options.chunk > (std::int64_t{1} << 20)) {
    throw UsageError("--chunk: expected 1 to 2^20 positions, got " + std::to_string(a.options.chunk));
  }
  const runner::Claims claims = claims_of(a.model, a.tolerance);
  const Spec spec = resolve_spec(a.spec);
  const std::unique_ptr<runner::Implementation> implementation = implementation_of(a, claims);
  if (end - 1 > implementation->max_position()) {
    throw UsageError("--positions: expected positions up to " + std::to_string(implementation->max_position()) + " for " +
                     implementation->name() + ", got " + a.positions);
  }
  CertifyIdentity id;
  id.spec = to_string(spec);
  id.implementation = implementation->name();
  id.selector = implementation->selector();
  if (!a.plugin.empty()) {
    id.library = a.plugin;
    id.sha256 = golden::sha256_of_file(a.plugin);
  }
  id.model = std::string(judge::name(claims.model));
  id.strict_zeros = a.strict_zeros;
  id.require_bits = a.require_bits;
  id.options = a.options;
  id.options.first = first;
  id.options.end = end;
  const judge::PairRule rule = runner::certify_rule(*implementation, spec, a.strict_zeros);
  id.tolerance = rule.tolerance;
  runner::PositionRange range;
  try {
    range = runner::shard_range(id.options, a.resolved.index, a.resolved.count);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--shard: ") + e.what());
  }
  const runner::CertifyResult result = runner::certify(*implementation, spec, rule, id.options, range);
  const nlohmann::ordered_json report = certify_json(id, result, {a.resolved.index, a.resolved.count});
  std::fputs(certify_text(report).c_str(), stdout);
  std::fflush(stdout);
  if (!a.json.empty()) {
    write_atomically(a.json, report.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n", {a.plugin});
  }
  return result.pass(a.require_bits) ? 0 : 1;
}

// --verify: the certificate's positions re-checked on a random subset (and each pair's worst and
// first failing position): consistent when every pair's worst e there is the certificate's at its
// worst position and nowhere larger, a pass finds no failure, and no output leaves the correctly
// rounded bits where the certificate found none.
int run_verify(const CertifyArguments& a) {
  const nlohmann::ordered_json j =
      parse_json_file_checked<nlohmann::ordered_json>(tensorio::read_file_bytes(a.verify, std::uint64_t{1} << 30), a.verify,
                                                      "expected a certificate written by ropecheck certify or report merge");
  const CertifyReport cert = read_certify_report(j, a.verify);
  if (!cert.certificate) throw InputError(a.verify + ": kind: expected \"" + std::string(kCertificateKind) + "\" (merge the shards first)");
  if (a.samples < 0) throw UsageError("--samples: expected an integer >= 0, got " + std::to_string(a.samples));
  runner::Claims claims = claims_of(cert.id.model, "");
  claims.tolerance = cert.id.tolerance;
  const Spec spec = parse_spec(cert.id.spec);
  const std::unique_ptr<runner::Implementation> implementation = implementation_of(a, claims);
  std::vector<std::string> problems;
  if (implementation->selector() != cert.id.selector) {
    problems.push_back("implementation: " + implementation->selector() + ", the certificate's is " + cert.id.selector);
  }
  if (!cert.id.sha256.empty() && !a.plugin.empty() && golden::sha256_of_file(a.plugin) != cert.id.sha256) {
    problems.push_back("library " + a.plugin + ": SHA-256 " + golden::sha256_of_file(a.plugin) + ", the certificate's is " +
                       cert.id.sha256);
  }
  std::set<std::int64_t> positions;
  SplitMix64 rng(cert.id.options.seed ^ 0x5eedULL);
  for (std::int64_t i = 0; i < a.samples; ++i) positions.insert(rng.range(cert.id.options.first, cert.id.options.end - 1));
  for (const runner::PairRecord& p : cert.result.pairs) {
    if (p.worst_position >= 0) positions.insert(p.worst_position);
    if (p.first_failure >= 0) positions.insert(p.first_failure);
  }
  const judge::PairRule rule = runner::certify_rule(*implementation, spec, cert.id.strict_zeros);
  const runner::CertifyResult again = runner::certify_positions(*implementation, spec, rule, cert.id.options,
                                                                std::vector<std::int64_t>(positions.begin(), positions.end()));
  for (std::size_t i = 0; i < cert.result.pairs.size() && i < again.pairs.size(); ++i) {
    const runner::PairRecord &c = cert.result.pairs[i], &g = again.pairs[i];
    const std::string pair = "pair " + std::to_string(i) + ": ";
    if (g.worst_position >= 0 && (g.worst_e > c.worst_e || (c.worst_position >= 0 && g.worst_e != c.worst_e))) {
      char line[200];
      std::snprintf(line, sizeof line, "worst e %.17g at position %lld, the certificate's %.17g at %lld", g.worst_e,
                    static_cast<long long>(g.worst_position), c.worst_e, static_cast<long long>(c.worst_position));
      problems.push_back(pair + line);
    }
    if (c.failures == 0 && g.failures > 0)
      problems.push_back(pair + "fails at position " + std::to_string(g.first_failure) + ": " + g.first_failure_message);
    if (c.first_failure >= 0 && g.failures == 0)
      problems.push_back(pair + "passes at the certificate's first failure " + std::to_string(c.first_failure));
    if (c.mismatches == 0 && g.mismatches > 0)
      problems.push_back(pair + std::to_string(g.mismatches) + " outputs not the correctly rounded bits");
  }
  if (again.failed_calls > 0) problems.push_back("failed calls: " + again.first_call_error);
  std::fputs(certify_text(certify_json(cert.id, cert.result, {0, 1})).c_str(), stdout);  // the fields read and checked
  std::printf("verify: %zu positions re-checked (%lld at random)\n", positions.size(), static_cast<long long>(a.samples));
  for (const std::string& p : problems) std::printf("  inconsistent: %s\n", p.c_str());
  std::printf("verify: %s\n", problems.empty() ? "consistent" : "inconsistent");
  return problems.empty() ? 0 : 1;
}

}  // namespace

void add_certify_command(CLI::App& root, int& status) {
  auto args = std::make_shared<CertifyArguments>();
  CLI::App* cmd = root.add_subcommand("certify", "Certify an implementation at every position of a range and every pair of a spec");
  cmd->add_option("--impl", args->implementation,
                  "A project kernel (scalar, avx2, avx512, avx512bf16, auto), or with --plugin the name passed to it")
      ->capture_default_str();
  cmd->add_option("--plugin", args->plugin, "A shared library exporting the C ABI of include/ropecheck/kernel.h");
  add_spec_options(cmd, args->spec, SpecCount::one);
  cmd->add_option("--positions", args->positions, "A:B: every position from A to B - 1 (B <= 2^31)");
  cmd->add_option("--stride", args->options.stride, "Random inputs at positions A + k*stride (0: unit probes only)")->capture_default_str();
  cmd->add_option("--seed", args->options.seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_option("--chunk", args->options.chunk, "Positions per implementation call")->capture_default_str();
  cmd->add_option("--model", args->model, "The claim judged (exact or f32-angle; judge/README.md \"Models\")")->capture_default_str();
  cmd->add_option("--tolerance", args->tolerance, "e=N or ulp=N in place of the implementation's bound (judge/tolerance.h)");
  cmd->add_option("--threads", args->options.threads, "Threads (0: every core)")->capture_default_str();
  cmd->add_flag("--strict-zeros", args->strict_zeros, "A zero output must carry the correctly rounded result's sign");
  cmd->add_flag("--require-bits", args->require_bits, "Fail unless every output is the correctly rounded value, bit for bit");
  cmd->add_option("--json", args->json, "Write the shard's report, or unsharded the certificate, as JSON");
  add_child_options(cmd, args->timeout, args->memory_limit_mib);
  CLI::Option* shard = cmd->add_option("--shard", args->shard,
                                       "K/N: certify the Kth of N contiguous parts of the range; `ropecheck report merge` of the shards' "
                                       "--json reports writes the certificate. auto: from a Slurm job array or a Kubernetes Indexed Job "
                                       "(gate/shard.h)")
                           ->capture_default_str();
  cmd->add_option("--shard-count", args->shard_count, "With --shard auto: the number of shards (a Kubernetes Indexed Job's completions)");
  cmd->add_option("--verify", args->verify, "Re-check a certificate's positions on a random subset against the implementation given");
  cmd->add_option("--samples", args->samples, "With --verify: random positions re-checked")->capture_default_str();
  cmd->callback([args, shard, &status] {
    if (!args->plugin.empty() && args->implementation == "auto") args->implementation.clear();
    if (!args->verify.empty()) {
      if (!args->positions.empty() || !args->spec.specs.empty() || !args->spec.hf_configs.empty()) {
        throw UsageError("--verify: expected no --positions, --spec or --hf-config (the certificate names them)");
      }
      status = run_verify(*args);
      return;
    }
    if (args->positions.empty()) throw UsageError("--positions: expected A:B (or --verify CERT)");
    args->resolved = resolve_shard(shard->count() > 0 ? std::optional(args->shard) : std::nullopt, args->shard_count, shard_environment());
    status = run_certify(*args);
  });
}

}  // namespace ropecheck::gate
