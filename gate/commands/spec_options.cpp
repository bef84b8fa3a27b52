#include "gate/commands/spec_options.h"

#include <charconv>
#include <cstdio>
#include <optional>

#include "base/errors.h"
#include "hfconfig/hfconfig.h"
#include "tensorio/readers.h"

namespace ropecheck::gate {
namespace {

const char* const kLayerNeedsConfig = "--layer: needs --hf-config (it picks one rotation of a config's layers)";
const char* const kLayerExpected = "--layer: expected a layer index N >= 0 or all|global|local, got '";

}  // namespace

void add_spec_options(CLI::App* cmd, SpecOptions& options, SpecCount count) {
  const bool many = count == SpecCount::any;
  cmd->add_option("--spec", options.specs,
                  many ? "Spec to use (repeatable), e.g. layout=half,head_dim=128,base=500000,dtype=f32"
                       : "RoPE spec, e.g. layout=half,head_dim=128,base=500000,dtype=f32 (or --hf-config)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);  // every occurrence kept: resolve_spec counts them
  cmd->add_option("--hf-config", options.hf_configs,
                  many ? "A transformers config.json whose rotation to use (repeatable; hfconfig/README.md)"
                       : "A transformers config.json whose rotation to use instead of --spec (hfconfig/README.md)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--seq-len", options.seq_len, "Sequence length for --hf-config rope types that depend on it (dynamic, longrope)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // An integer 1..2^63-1, read exactly (a wider one is refused, never saturated).
            std::int64_t v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc() || end != text.data() + text.size() || v < 1) {
              return "expected an integer from 1 to 9223372036854775807, got '" + text.substr(0, 32) + (text.size() > 32 ? "...'" : "'");
            }
            return "";
          },
          "INT >= 1"));
  cmd->add_option("--layer", options.layer,
                  "With --hf-config: the rotation of decoder layer N (0-based), or of the all|global|local layers, for a model "
                  "whose layers rotate differently (`ropecheck spec --hf-config FILE` lists them)")
      ->expected(1);
}

std::string read_hf_config(const std::string& path) {
  try {
    return tensorio::read_file_bytes(path, std::uint64_t{1} << 24);  // a config.json is kilobytes
  } catch (const tensorio::ReaderError& e) {
    throw InputError(std::string("--hf-config: ") + e.what());
  }
}

std::optional<std::int64_t> seq_len_of(const SpecOptions& options) {
  return options.seq_len > 0 ? std::optional<std::int64_t>(options.seq_len) : std::nullopt;
}

hfconfig::LayerSelector layer_selector(const SpecOptions& options) {
  hfconfig::LayerSelector selector;
  const std::string& text = options.layer;
  if (text.empty()) return selector;
  std::int64_t index = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (ec == std::errc() && end == text.data() + text.size() && index >= 0) {
    selector.layer = index;
    return selector;
  }
  const std::optional<hfconfig::LayerKind> kind = hfconfig::parse_layer_kind(text);
  if (kind && kind != hfconfig::LayerKind::kNoRope) {
    selector.kind = kind;
    return selector;
  }
  const std::string shown = text.substr(0, 32) + (text.size() > 32 ? "..." : "");
  if (kind == hfconfig::LayerKind::kNoRope) {
    throw UsageError(std::string(kLayerExpected) + "nope' (NoPE layers apply no rotation: no spec to judge)");
  }
  throw UsageError(kLayerExpected + shown + "'");
}

void print_notes(const std::string& file, const std::vector<std::string>& notes) {
  std::fflush(stdout);  // after what the command printed, on a terminal showing both
  for (const std::string& note : notes) std::fprintf(stderr, "%s: note: %s\n", file.c_str(), note.c_str());
}

std::vector<Spec> resolve_specs(const SpecOptions& options) {
  std::vector<Spec> out;
  for (const std::string& text : options.specs) {
    Spec spec = parse_spec(text);
    validate(spec);
    out.push_back(std::move(spec));
  }
  if (!options.layer.empty() && options.hf_configs.empty()) {
    throw UsageError(kLayerNeedsConfig);
  }
  const hfconfig::LayerSelector selector = layer_selector(options);
  for (const std::string& path : options.hf_configs) {
    const std::string bytes = read_hf_config(path);
    out.push_back(hfconfig::spec_from_hf_config(bytes, seq_len_of(options), path, selector));
    print_notes(path, hfconfig::rotations_from_hf_config(bytes, seq_len_of(options), path).notes);
  }
  return out;
}

Spec resolve_spec(const SpecOptions& options) {
  const std::size_t given = options.specs.size() + options.hf_configs.size();
  if (given == 0) throw UsageError("--spec or --hf-config is required: expected one spec, got none");
  if (given > 1) {
    throw UsageError("--spec, --hf-config: expected one spec (this command judges one; fuzz takes several), got " + std::to_string(given) +
                     " (--spec " + std::to_string(options.specs.size()) + " times, --hf-config " +
                     std::to_string(options.hf_configs.size()) + " times)");
  }
  return resolve_specs(options).front();
}

std::optional<Spec> resolve_optional_spec(const SpecOptions& options, const std::vector<CLI::Option*>& dependents,
                                          const std::string& mode) {
  if (!options.specs.empty() || !options.hf_configs.empty()) return resolve_spec(options);
  for (const CLI::Option* o : dependents) {
    if (o->count() > 0) throw UsageError(o->get_name() + ": needs --spec or --hf-config (" + mode + ")");
  }
  if (options.seq_len > 0) throw UsageError("--seq-len: needs --hf-config");
  if (!options.layer.empty()) throw UsageError(kLayerNeedsConfig);
  return std::nullopt;
}

}  // namespace ropecheck::gate
