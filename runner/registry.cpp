#include "runner/registry.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <ropecheck/kernel.h>

#include "base/errors.h"
#include "runner/adapters.h"
#include "runner/reference_implementation.h"
#include "tensorio/readers.h"

namespace ropecheck::runner {
namespace {

struct ReferenceVariant {
  const char* name;
  const char* description;
  reference::Model model;
  ReferenceImplementation::Output output;
};

constexpr ReferenceVariant kReferences[] = {
    {"reference", "the exact reference correctly rounded to the spec's dtype (claims e <= 1)", reference::Model::exact,
     ReferenceImplementation::Output::rounded},
    {"reference-exact", "the exact reference's unrounded outputs at --precision bits (props: agreement in bits)",
     reference::Model::exact, ReferenceImplementation::Output::exact},
    {"reference-f32-recipe", "the float32 recipe (theta, position and angle rounded to binary32), correctly rounded",
     reference::Model::f32_recipe, ReferenceImplementation::Output::rounded},
};

std::string known_names() {
  std::string names;
  for (const RegistryEntry& e : implementation_names()) names += (names.empty() ? "" : ", ") + e.name;
  return names;
}

}  // namespace

std::vector<RegistryEntry> implementation_names() {
  std::vector<RegistryEntry> out;
  for (std::int32_t i = 0; i < ropecheck_kernel_count(); ++i) {
    const char* name = ropecheck_kernel_name(i);
    if (name == nullptr) continue;
    out.push_back({name, "project kernel", ropecheck_kernel_available(name) == 1});
  }
  out.push_back({"auto", "the best project kernel on this machine", true});
  for (const ReferenceVariant& r : kReferences) out.push_back({r.name, r.description, true});
  return out;
}

std::unique_ptr<Implementation> make_implementation(const Selection& selection, const RegistryOptions& options) {
  if (!selection.plugin.empty()) {
    // A FIFO or a device would block or misbehave in dlopen: a regular file only.
    struct stat st {};
    if (::stat(selection.plugin.c_str(), &st) != 0) {
      throw UsageError("--plugin: expected an existing shared library, got '" + selection.plugin + "' (" +
                       std::strerror(errno) + ")");
    }
    if (!S_ISREG(st.st_mode)) {
      throw UsageError("--plugin: expected an existing shared library, got " + tensorio::file_kind(st.st_mode) + " '" +
                       selection.plugin + "'");
    }
    auto plugin = std::make_unique<IsolatedImplementation>(
        Source::plugin, selection.plugin, selection.implementation.empty() ? "auto" : selection.implementation,
        ChildLimits{options.timeout_seconds, options.memory_limit_mib}, options.claims);
    // As for a project kernel: an implementation the plugin says does not run here is a usage error
    // (exit 2), not a failure of every test. Other start failures (dlopen, ABI) fail the tests.
    const ApplyResult* error = plugin->start_error();
    if (error && error->status == ApplyResult::Status::unavailable) {
      throw UsageError("--plugin " + selection.plugin + " --impl " + error->message);
    }
    return plugin;
  }
  const std::string& name = selection.implementation;
  if (name.empty()) throw UsageError("expected --impl NAME or --plugin PATH (--impl: one of " + known_names() + ")");
  for (const ReferenceVariant& r : kReferences) {
    if (name == r.name) {
      if (options.precision_bits < 64) {
        throw UsageError("--precision: expected >= 64 bits, got " + std::to_string(options.precision_bits));
      }
      return std::make_unique<ReferenceImplementation>(options.precision_bits, r.model, r.output, options.claims);
    }
  }
  bool known = name == "auto";
  for (std::int32_t i = 0; i < ropecheck_kernel_count(); ++i) known = known || name == ropecheck_kernel_name(i);
  if (!known) throw UsageError("--impl: expected one of " + known_names() + ", got '" + name + "'");
  const std::string unavailable = "--impl " + name + ": not available on this machine (expected a kernel that runs here)";
  if (options.isolate_kernels) {
    // The project's own kernels: no address-space limit (a CUDA kernel maps far more than it uses).
    // Whether the kernel runs here is the child's answer, not this process's: asking about "cuda"
    // initializes the CUDA driver, after which a forked child cannot use CUDA.
    auto kernel = std::make_unique<IsolatedImplementation>(Source::library, "", name,
                                                           ChildLimits{options.timeout_seconds, 0}, options.claims);
    const ApplyResult* error = kernel->start_error();
    if (error && error->status == ApplyResult::Status::unavailable) throw UsageError(unavailable);
    return kernel;
  }
  if (ropecheck_kernel_available(name.c_str()) != 1) throw UsageError(unavailable);
  return std::make_unique<KernelImplementation>(name, options.claims, options.kernel_threads);
}

}  // namespace ropecheck::runner
