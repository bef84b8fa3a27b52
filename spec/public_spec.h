// The bridge between the public RopeSpec (include/ropecheck/spec.h) and the library's Spec, for the
// library's facades (spec/public_spec.cpp, reference/public_reference.cpp, runner/public_judge.cpp).
// Not installed: users see only include/ropecheck/.
#pragma once

#include <ropecheck/spec.h>

#include <memory>
#include <utility>

#include "spec/spec.h"

namespace ropecheck {

struct RopeSpec::Data {
  Spec spec;
};

namespace detail {

struct SpecAccess {
  static const Spec& spec(const RopeSpec& s) { return s.data_->spec; }
  static RopeSpec make(Spec spec) { return RopeSpec(std::make_shared<const RopeSpec::Data>(RopeSpec::Data{std::move(spec)})); }
};

}  // namespace detail
}  // namespace ropecheck
