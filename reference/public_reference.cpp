// The public apply_exact (include/ropecheck/reference.h): reference::apply under the exact model,
// on the fast path (reference/README.md "How `apply` is correctly rounded").
#include <ropecheck/reference.h>

#include "reference/rope.h"
#include "spec/public_spec.h"

namespace ropecheck {

std::vector<double> apply_exact(const RopeSpec& spec, TensorShape shape, std::span<const std::int64_t> positions,
                                std::span<const double> input) {
  return reference::apply(detail::SpecAccess::spec(spec), reference::Shape{shape.tokens, shape.heads, shape.head_dim},
                          positions, input);
}

}  // namespace ropecheck
