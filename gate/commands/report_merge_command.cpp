// `ropecheck report merge A.json B.json ... --out F`: combines the JSON reports of one sharded (or
// repeated) fuzz search (fuzz/README.md "Sharding"), or of the shards of one `sweep --shard K/N`
// (gate/merge.h), into one. Exit status: the merged verdict (0 pass, 1 a violation or failure), 2
// for unreadable or mismatched reports (nothing is written then).
#include <cstdint>
#include <cstdio>
#include <memory>

#include "base/checked_json.h"
#include "fuzz/search/search.h"
#include "gate/certificate.h"
#include "gate/commands/command.h"
#include "gate/merge.h"
#include "gate/report.h"
#include "tensorio/readers.h"

namespace ropecheck::gate {
namespace {

// A report as one bounded read (a regular file only, no FIFO) and the one checked JSON parse
// (base/checked_json.h: bounded nesting, linear time, each key once).
nlohmann::ordered_json read_report(const std::string& path) {
  return parse_json_file_checked<nlohmann::ordered_json>(
      tensorio::read_file_bytes(path, std::uint64_t{1} << 30), path,
      "expected a JSON report written by ropecheck fuzz or sweep, got text that is not JSON");
}

}  // namespace

void add_report_merge_command(CLI::App& root, int& status) {
  auto* report = root.add_subcommand("report", "Work with JSON reports");
  report->require_subcommand(1);
  auto* merge = report->add_subcommand("merge", "Combine the JSON reports of a sharded fuzz search or sweep into one");
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  merge->add_option("reports", *inputs, "Reports to merge (ropecheck fuzz --json, or sweep --shard K/N --json)")->required();
  merge->add_option("--out", *out, "Where to write the merged report")->required();
  merge->callback([inputs, out, &status] {
    std::vector<std::pair<std::string, nlohmann::ordered_json>> reports;
    for (const std::string& path : *inputs) reports.emplace_back(path, read_report(path));
    if (is_certify_report(reports.front().second)) {  // the certificate of certify's shards (gate/certificate.h)
      const nlohmann::ordered_json certificate = merge_certify_shards(reports);
      const std::string text = certificate.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
      write_atomically(*out, text, *inputs);
      std::fputs(certify_text(certificate).c_str(), stdout);
      status = certificate.value("verdict", "") == "pass" ? 0 : 1;
      return;
    }
    if (is_sweep_report(reports.front().second)) {
      const Report merged = merge_sweep_reports(reports);
      // Both forms are made before anything is written: a failure leaves no --out behind.
      const std::string text = to_json(merged);
      const std::string summary = sweep_text(merged);
      write_atomically(*out, text, *inputs);
      std::fputs(summary.c_str(), stdout);
      status = merged.verdict == judge::Verdict::pass ? 0 : 1;
      return;
    }
    nlohmann::ordered_json merged;
    try {
      merged = fuzz::merge_reports(reports);
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
    // Both forms are made before anything is written: a failure leaves no --out behind.
    const std::string text = merged.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    const std::string summary = fuzz::to_text(merged);
    write_atomically(*out, text, *inputs);  // never onto one of the reports being merged
    std::fputs(summary.c_str(), stdout);
    status = fuzz::verdict_status(merged);
  });
}

}  // namespace ropecheck::gate
