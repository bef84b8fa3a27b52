#include "reference/multiprecision.h"

#include <ostream>
#include <stdexcept>

namespace ropecheck::reference {
namespace {

// The one piece of mutable state of this type, one per thread (see the header for why).
constinit thread_local mpfr_prec_t working_bits = kDefaultPrecisionBits;

// MPFR keeps per-thread caches (π, log 2, … at the largest precision asked for) that it frees only
// on request: release them when a thread that computed ends, so that threads made for reference
// work (gate's sweep) do not leave them behind.
struct ThreadCacheRelease {
  ~ThreadCacheRelease() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }
};

}  // namespace

int working_precision() { return static_cast<int>(working_bits); }

PrecisionScope::PrecisionScope(int bits) : previous_(working_bits) {
  if (bits < MPFR_PREC_MIN || bits > MPFR_PREC_MAX) {
    throw std::invalid_argument("PrecisionScope: " + std::to_string(bits) + " bits is outside MPFR's precision range");
  }
  thread_local ThreadCacheRelease release;
  (void)release;
  working_bits = bits;
}

PrecisionScope::~PrecisionScope() { working_bits = previous_; }

Real::Real(const char* decimal) : Real(Precision{working_bits}) {
  char* end = nullptr;
  mpfr_strtofr(value_, decimal, &end, 10, MPFR_RNDN);
  if (end == decimal || *end != '\0') {
    // The delegated-to constructor has finished, so the destructor frees value_.
    throw std::invalid_argument(std::string("not a decimal number: '") + decimal + "'");
  }
}

std::string Real::str(std::streamsize digits, std::ios_base::fmtflags flags) const {
  const int significant =
      digits > 0 ? static_cast<int>(digits) : static_cast<int>(mpfr_get_str_ndigits(10, mpfr_get_prec(value_)));
  const bool scientific = (flags & std::ios_base::floatfield) == std::ios_base::scientific;
  char* text = nullptr;
  if (scientific) {
    mpfr_asprintf(&text, "%.*Re", significant - 1, value_);
  } else {
    mpfr_asprintf(&text, "%.*Rg", significant, value_);
  }
  std::string out = text != nullptr ? text : "";
  mpfr_free_str(text);
  return out;
}

std::ostream& operator<<(std::ostream& out, const Real& x) { return out << x.str(out.precision(), out.flags()); }

}  // namespace ropecheck::reference
