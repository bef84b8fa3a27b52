// ropecheck: the command-line front end. Each subcommand lives in gate/commands/.
#include <cstdio>
#include <exception>

#include "gate/commands/command.h"
#include "spec/spec.h"

int main(int argc, char** argv) {
  using namespace ropecheck::gate;
  CLI::App app{"ropecheck: reference and verification harness for Rotary Position Embedding"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  int status = 0;
  add_apply_command(app, status);
  add_golden_command(app, status);
  add_props_command(app, status);
  add_check_command(app, status);
  add_run_command(app, status);
  add_fuzz_command(app, status);
  add_report_merge_command(app, status);
  add_sweep_command(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ropecheck: %s (see --help)\n", e.what());
    return 2;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ropecheck: %s\n", e.what());
    return 2;
  } catch (const InputError& e) {
    std::fprintf(stderr, "ropecheck: %s\n", e.what());
    return 2;
  } catch (const ropecheck::SpecError& e) {
    std::fprintf(stderr, "ropecheck: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ropecheck: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ropecheck: internal error: %s\n", e.what());
    return 3;
  }
  return status;
}
