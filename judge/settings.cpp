#include "judge/settings.h"

namespace ropecheck::judge {

Claims Claims::parse(std::string_view model, std::string_view tolerance) {
  Claims claims;
  claims.model = parse_model(model);
  if (!tolerance.empty()) {
    const ToleranceOverrides overrides = parse_tolerance(tolerance);
    claims.tolerance = overrides.rope;
    if (overrides.theta_ulps) claims.theta_ulps = *overrides.theta_ulps;
  }
  return claims;
}

}  // namespace ropecheck::judge
