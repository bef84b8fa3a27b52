// Shared by the generator and verify, not part of golden.h (it needs the MPFR number type).
#pragma once

#include <string>

#include "reference/multiprecision.h"

namespace ropecheck::golden {

// The `exact` field's text of a value: 40 significant decimal digits, correctly rounded by MPFR,
// as "d.<39 digits>e±NN" ("-" first when negative; zero as "0.000…e+00").
std::string format_exact(const reference::Real& value);

}  // namespace ropecheck::golden
