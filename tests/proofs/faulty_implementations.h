// Deliberately wrong implementations (proofs have teeth: each breaks one identity): the exact
// reference with one classic RoPE bug injected, each claiming the reference's own error bound.
#pragma once

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runner/reference_implementation.h"
#include "proofs/catalog.h"

namespace ropecheck::proofs::testing {

using runner::ApplyResult;
using runner::ReferenceImplementation;

struct Fault {
  std::string name;
  std::function<Spec(Spec)> alter_spec = [](Spec s) { return s; };
  std::function<std::vector<std::int64_t>(std::vector<std::int64_t>)> alter_positions = [](auto p) { return p; };
  bool drop_last_head = false;  // the last head's rotary dims come out unrotated
};

class FaultyReference final : public Implementation {
 public:
  FaultyReference(Fault fault, int precision_bits)
      : fault_(std::move(fault)), inner_(precision_bits, reference::Model::exact, ReferenceImplementation::Output::exact) {}

  std::string name() const override { return "faulty-" + fault_.name; }
  std::string selector() const override { return name(); }
  bool supports(const Spec&) const override { return true; }
  bool supports_negative_positions() const override { return true; }
  std::int64_t max_position() const override { return inner_.max_position(); }
  int exact_precision_bits() const override { return inner_.exact_precision_bits(); }

  ApplyResult run(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                  std::span<const double> input) const override {
    const std::vector<std::int64_t> p = fault_.alter_positions({positions.begin(), positions.end()});
    ApplyResult out = inner_.run(fault_.alter_spec(spec), shape, p, input);
    if (fault_.drop_last_head && out.status == ApplyResult::Status::ok) drop(spec, shape, input, out.output);
    return out;
  }
  std::optional<std::vector<Real>> apply_exact(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                                               std::span<const double> input) const override {
    const std::vector<std::int64_t> p = fault_.alter_positions({positions.begin(), positions.end()});
    std::vector<Real> out = *inner_.apply_exact(fault_.alter_spec(spec), shape, p, input);
    if (fault_.drop_last_head) drop(spec, shape, input, out);
    return out;
  }

 protected:
  std::optional<ErrorClaim> own_claim(const Spec& spec) const override { return inner_.claim(spec); }

 private:
  template <class T>
  static void drop(const Spec& spec, Shape shape, std::span<const double> input, std::vector<T>& out) {
    for (std::int64_t t = 0; t < shape.tokens; ++t) {
      const std::int64_t row = (t * shape.heads + shape.heads - 1) * shape.head_dim;
      for (int i = 0; i < spec.rotary_dim; ++i) out[row + i] = T(input[row + i]);
    }
  }
  Fault fault_;
  ReferenceImplementation inner_;
};

inline std::vector<Fault> classic_faults() {
  std::vector<Fault> faults;
  faults.push_back({.name = "sin-sign-flipped", .alter_spec = [](Spec s) {
                      // x·cos + y·sin, −x·sin + y·cos: the rotation by −φ, i.e. the other direction
                      s.direction = s.direction == Direction::forward ? Direction::inverse : Direction::forward;
                      return s;
                    }});
  faults.push_back({.name = "layouts-swapped", .alter_spec = [](Spec s) {
                      s.layout = s.layout == Layout::half ? Layout::interleaved : Layout::half;
                      return s;
                    }});
  faults.push_back({.name = "position-off-by-one", .alter_positions = [](std::vector<std::int64_t> p) {
                      for (auto& v : p) v += 1;
                      return p;
                    }});
  faults.push_back({.name = "base-off-by-one-ulp", .alter_spec = [](Spec s) {
                      char buffer[64];
                      std::snprintf(buffer, sizeof buffer, "%.17g", std::nextafter(std::strtod(s.base.c_str(), nullptr), 1e300));
                      s.base = buffer;
                      return s;
                    }});
  faults.push_back({.name = "last-head-pairs-dropped", .drop_last_head = true});
  faults.push_back({.name = "rotary-dim-ignored", .alter_spec = [](Spec s) {
                      Spec all = s;
                      all.rotary_dim = all.head_dim;
                      try {
                        validate(all);
                        return all;
                      } catch (const SpecError&) {
                        return s;  // e.g. M-RoPE sections or LongRoPE factors sized for rotary_dim
                      }
                    }});
  return faults;
}

}  // namespace ropecheck::proofs::testing
