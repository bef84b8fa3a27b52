// ropecheck: the command-line front end. Each subcommand lives in gate/commands/.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "base/errors.h"
#include "gate/commands/command.h"
#include "gate/echo.h"
#include "spec/spec.h"
#include "spec/suggest.h"

namespace {

// Errors are one line on stderr: a newline from the input (a JSON string, an argument) is escaped.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else
      out += c;
  }
  return out;
}

void print_error(const std::string& text) { std::fprintf(stderr, "ropecheck: %s\n", one_line(text).c_str()); }

// " (did you mean '--model'?)" for the first argument of the form --word that no option of the
// command given takes (spec/suggest.h); "" when there is none or nothing is close.
std::string unknown_option_hint(CLI::App& app, int argc, char** argv) {
  const std::vector<CLI::App*> subs = app.get_subcommands();
  CLI::App* command = subs.empty() ? &app : subs.front();
  for (CLI::App* sub = command; sub != nullptr;) {  // the deepest command given (golden export, report merge)
    command = sub;
    const std::vector<CLI::App*> inner = sub->get_subcommands();
    sub = inner.empty() ? nullptr : inner.front();
  }
  std::vector<std::string> names;
  for (const CLI::Option* option : command->get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  const std::vector<std::string_view> words(names.begin(), names.end());
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.size() < 3 || arg.substr(0, 2) != "--") continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(words.begin(), words.end(), arg) != words.end()) continue;
    return ropecheck::did_you_mean(arg, words);
  }
  return "";
}

// CLI11 reads an integer option with strtoll/strtoull and keeps what they return: a value beyond
// the type saturates (--max-position 99999999999999999999999 read as 2^63 - 1) and a negative one
// wraps in an unsigned option (--seed -1 read as 2^64 - 1). Every integer option of every command
// is checked first, on its text, with the same syntax (strtoll's base 0): out of range is refused
// by name, never saturated.
void refuse_integers_out_of_range(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    const bool is_signed = type.rfind("INT", 0) == 0;
    if (!is_signed && type.rfind("UINT", 0) != 0) continue;
    option->check(CLI::Validator(
        [is_signed](std::string& text) -> std::string {
          const std::string range = is_signed ? "-9223372036854775808 to 9223372036854775807" : "0 to 18446744073709551615";
          char* end = nullptr;
          errno = 0;
          if (is_signed) {
            (void)std::strtoll(text.c_str(), &end, 0);
          } else {
            (void)std::strtoull(text.c_str(), &end, 0);
          }
          const bool negative = !is_signed && text.find('-') != std::string::npos;
          if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || negative) {
            return "expected an integer from " + range + ", got " + ropecheck::gate::echo(text);
          }
          return "";
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) refuse_integers_out_of_range(*sub);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ropecheck::gate;
#if defined(__GLIBC__)
  // Fixed malloc thresholds. glibc's dynamic mmap threshold rises to the size of each freed mapped
  // block (up to 32 MB), after which a big suite's per-test vectors come from the heap and fragment
  // it. Mapping every block above 1 MiB instead keeps the memory that of one test but costs a
  // zeroed page fault per 4 KiB of every per-test vector (bench/README.md
  // "Judging on two cores: malloc"). Blocks up to 256 MiB (a test of 2^25 values as doubles) come from
  // the heap, and freed memory stays there for the next test of the same size unless 512 MiB of it
  // is free at the top.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
  CLI::App app{"ropecheck: reference and verification harness for Rotary Position Embedding"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  int status = 0;
  add_apply_command(app, status);
  add_golden_command(app, status);
  add_props_command(app, status);
  add_check_command(app, status);
  add_explain_command(app, status);
  add_run_command(app, status);
  add_fuzz_command(app, status);
  add_report_merge_command(app, status);
  add_sweep_command(app, status);
  add_spec_command(app, status);
  add_certify_command(app, status);
  add_fused_command(app, status);
  refuse_integers_out_of_range(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A misspelt command is not "a subcommand is required": name it and the commands.
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      std::string names;
      std::vector<std::string> words;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        names += (names.empty() ? "" : ", ") + sub->get_name();
        words.push_back(sub->get_name());
      }
      print_error("unknown command '" + std::string(argv[1]) + "': expected one of " + names +
                  ropecheck::did_you_mean(argv[1], std::vector<std::string_view>(words.begin(), words.end())) + " (see --help)");
      return 2;
    }
    print_error(std::string(e.what()) + unknown_option_hint(app, argc, argv) + " (see --help)");
    return 2;
  } catch (const ropecheck::UsageError& e) {
    print_error(e.what());
    return 2;
  } catch (const ropecheck::InputError& e) {  // every reader's (base/errors.h)
    print_error(e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    print_error(e.what());
    return 2;
  } catch (const std::exception& e) {
    print_error(std::string("internal error: ") + e.what());
    return 3;
  }
  return status;
}
