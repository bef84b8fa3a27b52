#include "gate/commands/judge_options.h"

#include <cstdio>

namespace ropecheck::gate {

void add_judge_options(CLI::App* cmd, JudgeArguments& args, JudgeOptionSet which) {
  cmd->add_option("--model", args.model,
                  "What the implementation claims to compute: exact (the true rotation) | f32-angle (the angle in "
                  "binary32) | f32-recipe (judge/README.md)")
      ->capture_default_str();
  cmd->add_option("--tolerance", args.tolerance,
                  "Override the default bounds, comma-separated: e=NUMBER (u*rho units) or ulp=NUMBER; theta_ulps=K "
                  "(f32-angle: frequencies within K binary32 ulps, default 8); attention_scores=NUMBER, "
                  "attention_outputs=NUMBER for attention suites");
  if (which.max_position) {
    cmd->add_option("--max-position", args.settings.max_position, "Judge positions <= N only (your context length)");
  }
  if (which.skip_flags) {
    cmd->add_option("--skip-flags", args.skip_flags,
                    "Leave out golden tests carrying any of these flags, comma-separated (e.g. Overflow,NaNInput)");
  }
  cmd->add_option("--require-horizon", args.settings.require_horizon,
                  "Require accuracy up to position N only: ordinary failures above N are reported, not failed");
  cmd->add_option("--threads", args.settings.threads, "Threads for the exact values (0 = all cores)")->capture_default_str();
  cmd->add_flag("--strict-zeros", args.settings.strict_zeros, "Require IEEE signs of zero results (default: +0 and -0 compare equal)");
  cmd->add_option("--worst", args.settings.worst_cases, "Worst cases listed per group")->capture_default_str();
  if (which.allow_missing) {
    cmd->add_flag("--allow-missing", args.settings.allow_missing, "Skip tests the candidate has no output for (default: they fail)");
  }
}

void add_report_options(CLI::App* cmd, ReportPaths& paths, bool verbose_flag) {
  cmd->add_option("--json", paths.json, "Write the JSON report (gate/schema/report.schema.json) here");
  cmd->add_option("--junit", paths.junit, "Write a JUnit XML file (one testcase per group) here");
  cmd->add_option("--html", paths.html, "Write a self-contained HTML report here");
  if (!verbose_flag) return;  // a command whose text is one group's figures (sweep)
  cmd->add_flag_callback("--verbose", [&paths] { paths.text = TextForm::table; },
                         "Print every group's row, every identity and the cases and diagnosis of failing and marginal groups "
                         "(default: a summary; the reports hold everything)");
}

CLI::Validator number_in(double min, double max) {
  char range[96];
  std::snprintf(range, sizeof range, "[%g, %g]", min, max);
  const std::string text = range;
  return CLI::Validator(
      [min, max, text](std::string& input) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(input, value)) return "expected a number in " + text + ", got '" + input + "'";
        if (!(value >= min && value <= max)) return "expected a number in " + text + ", got " + input + " (out of range)";
        return "";
      },
      "NUMBER in " + text);
}

void add_child_options(CLI::App* cmd, double& timeout_seconds, std::int64_t& memory_limit_mib) {
  cmd->add_option("--timeout", timeout_seconds, "Seconds allowed per call before the child process is killed")
      ->check(number_in(0.01, 86400.0))
      ->capture_default_str();
  cmd->add_option("--memory-limit", memory_limit_mib,
                  "MiB of address space a plugin's child process may map beyond what it starts with (RLIMIT_AS; 0: "
                  "no limit)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 30))
      ->capture_default_str();
}

}  // namespace ropecheck::gate
