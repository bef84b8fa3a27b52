// The public RopeSpec (include/ropecheck/spec.h) over the library's Spec: the same parser, printer
// and validation; SpecError becomes std::invalid_argument with the same one-line message.
#include "spec/public_spec.h"

#include <stdexcept>

namespace ropecheck {

namespace {

using Access = detail::SpecAccess;

// The public enums list the library's values in the same order (include/ropecheck/kernel.h fixes
// that order for the C ABI too); each conversion names every value so that a reordering fails here.
RopeSpec::Dtype public_dtype(Dtype d) {
  switch (d) {
    case Dtype::f64: return RopeSpec::Dtype::f64;
    case Dtype::f32: return RopeSpec::Dtype::f32;
    case Dtype::f16: return RopeSpec::Dtype::f16;
    case Dtype::bf16: return RopeSpec::Dtype::bf16;
  }
  throw std::logic_error("RopeSpec: unknown dtype");
}

template <class Parse>
RopeSpec parsed(Parse parse) {
  try {
    return Access::make(parse());
  } catch (const SpecError& e) {
    throw std::invalid_argument(e.what());
  }
}

}  // namespace

RopeSpec RopeSpec::parse(std::string_view text) {
  return parsed([&] { return parse_spec(text); });
}
RopeSpec RopeSpec::parse_json(std::string_view json) {
  return parsed([&] { return parse_spec_json(json); });
}

std::string RopeSpec::text() const { return to_string(data_->spec); }
std::string RopeSpec::json() const { return to_json(data_->spec); }
RopeSpec::Layout RopeSpec::layout() const {
  return data_->spec.layout == ropecheck::Layout::interleaved ? Layout::interleaved : Layout::half;
}
int RopeSpec::head_dim() const { return data_->spec.head_dim; }
int RopeSpec::rotary_dim() const { return data_->spec.rotary_dim; }
std::string RopeSpec::base() const { return data_->spec.base; }
std::string_view RopeSpec::scaling() const { return name(data_->spec.scaling.type); }
RopeSpec::Direction RopeSpec::direction() const {
  return data_->spec.direction == ropecheck::Direction::forward ? Direction::forward : Direction::inverse;
}
RopeSpec::Dtype RopeSpec::dtype() const { return public_dtype(data_->spec.dtype); }
RopeSpec::Dtype RopeSpec::input_dtype() const { return public_dtype(input_dtype_of(data_->spec)); }
int RopeSpec::position_components() const { return ropecheck::position_components(data_->spec); }

bool operator==(const RopeSpec& a, const RopeSpec& b) { return a.data_ == b.data_ || a.data_->spec == b.data_->spec; }

}  // namespace ropecheck
