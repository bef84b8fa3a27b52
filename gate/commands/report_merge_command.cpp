// `ropecheck report merge A.json B.json ... --out F`: combines the JSON reports of one sharded (or
// repeated) fuzz search (fuzz/README.md "Sharding"), or of the shards of one `sweep --shard K/N`
// (gate/merge.h), into one. Exit status: the merged verdict (0 pass, 1 a violation or failure), 2
// for unreadable or mismatched reports (nothing is written then).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include <unistd.h>

#include "fuzz/search/search.h"
#include "gate/commands/command.h"
#include "gate/merge.h"
#include "gate/report.h"

namespace ropecheck::gate {
namespace {

namespace fs = std::filesystem;

nlohmann::ordered_json read_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": expected a readable JSON report, got no such file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw InputError(path + ": expected a JSON report written by ropecheck fuzz or sweep, got text that is not JSON");
  }
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
    if (is_sweep_report(reports.front().second)) {
      const nlohmann::ordered_json merged = merge_sweep_reports(reports);
      write_atomically(*out, merged.dump(1) + "\n", *inputs);
      std::fputs(sweep_text(merged).c_str(), stdout);
      status = merged.value("verdict", "") == "pass" ? 0 : 1;
      return;
    }
    nlohmann::ordered_json merged;
    try {
      merged = fuzz::merge_reports(reports);
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
    const std::string text = merged.dump(2) + "\n";
    write_atomically(*out, text, *inputs);  // never onto one of the reports being merged
    std::fputs(fuzz::to_text(merged).c_str(), stdout);
    status = fuzz::verdict_status(merged);
  });
}

}  // namespace ropecheck::gate
