// The identity catalog against the exact reference: one RapidCheck property per identity at
// 256 bits (the correct reference must be caught by none), and the whole catalog at 64 and 256 bits
// to show that the tolerances — and the measured agreement — scale with the working precision.
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "proofs/catalog.h"
#include "runner/reference_implementation.h"
#include "proofs/runner.h"

namespace ropecheck::proofs {

using runner::ReferenceImplementation;
namespace {

ReferenceImplementation reference_at(int bits) {
  return ReferenceImplementation(bits, reference::Model::exact, ReferenceImplementation::Output::exact);
}

void run_property(const char* name) {
  const Identity* identity = find_identity(name);
  RC_ASSERT(identity != nullptr);
  Tally tally;
  identity->property(reference_at(256), tally);
}

#define ROPECHECK_CATALOG_PROPERTY(NAME) \
  RC_GTEST_PROP(ReferenceCatalog256, NAME, ()) { run_property(#NAME); }

ROPECHECK_CATALOG_PROPERTY(relative_matrix)
ROPECHECK_CATALOG_PROPERTY(norm_preservation)
ROPECHECK_CATALOG_PROPERTY(complex_equivalence)
ROPECHECK_CATALOG_PROPERTY(relative_dot)
ROPECHECK_CATALOG_PROPERTY(forms_agree)
ROPECHECK_CATALOG_PROPERTY(group_law)
ROPECHECK_CATALOG_PROPERTY(layout_permutation)
ROPECHECK_CATALOG_PROPERTY(multi_axis_relative)
ROPECHECK_CATALOG_PROPERTY(head_independence)
ROPECHECK_CATALOG_PROPERTY(attention_shift_invariance)
ROPECHECK_CATALOG_PROPERTY(long_term_decay)
ROPECHECK_CATALOG_PROPERTY(passthrough)

TEST(ReferenceCatalog, EveryDesignIdentityIsInTheCatalogOnce) {
  const char* names[] = {"relative_matrix",   "norm_preservation", "complex_equivalence",       "relative_dot",
                         "forms_agree",       "group_law",         "layout_permutation",        "multi_axis_relative",
                         "head_independence", "attention_shift_invariance", "long_term_decay", "passthrough"};
  EXPECT_EQ(catalog().size(), std::size(names));
  for (const char* name : names) EXPECT_NE(find_identity(name), nullptr) << name;
}

// At P bits the reference's claim is ≈ 2^-(P−14)·(1 + |φ|) (runner/reference_implementation.h), with
// |φ| ≤ 2^31 for generated positions. Every identity must hold at both precisions, and the measured
// agreement must follow the precision: at P bits the worst agreement must exceed P − 14 − 31 − 10
// bits (the claim, with 2^10 for the terms an identity composes), and the 256-bit run must agree by
// more than 100 bits better than the 64-bit run on the same cases (a reference that silently computed
// at a fixed precision would show the same agreement at both).
TEST(ReferenceCatalog, TolerancesAndAgreementScaleWithPrecision) {
  const ReferenceImplementation at64 = reference_at(64), at256 = reference_at(256);
  RunOptions options;
  options.cases = 25;
  options.seed = 20240601;
  for (const Identity& identity : catalog()) {
    const IdentityReport low = run_identity(identity, at64, options);
    const IdentityReport high = run_identity(identity, at256, options);
    EXPECT_TRUE(low.holds) << identity.name << " at 64 bits: " << low.failure << "\n" << low.counterexample;
    EXPECT_TRUE(high.holds) << identity.name << " at 256 bits: " << high.failure << "\n" << high.counterexample;
    if (identity.name == "passthrough" || identity.name == "layout_permutation" || identity.name == "head_independence" ||
        identity.name == "long_term_decay") {
      continue;  // exact comparisons (0 discrepancy) or reference-only quantities at the catalog's precision
    }
    const double low_bits = -std::log2(low.tally.worst_relative);
    const double high_bits = -std::log2(high.tally.worst_relative);
    EXPECT_GT(high_bits - low_bits, 100.0) << identity.name;
    EXPECT_GT(low_bits, 64.0 - 14 - 31 - 10) << identity.name;
    EXPECT_GT(high_bits, 256.0 - 14 - 31 - 10) << identity.name;
  }
}

// Each catalog entry that cites a Coq theorem names a file under proofs/formal/coq/ that
// states a Theorem of the entry's own name; an entry citing none has no such Theorem anywhere
// (the citation would be missing). Reads the sources the formal_coq ctest compiles.
TEST(ReferenceCatalog, CitedCoqTheoremsExistUnderTheEntrysName) {
  const std::string coq_dir = std::string(ROPECHECK_SOURCE_DIR) + "/proofs/formal/coq/";
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  std::string every_file;
  for (const char* file : {"Rotation.v", "Layouts.v", "Attention.v", "ErrorBound.v"}) every_file += read(coq_dir + file);
  ASSERT_NE(every_file.find("Theorem relative_matrix"), std::string::npos) << "Coq sources not found under " << coq_dir;
  for (const Identity& identity : catalog()) {
    const std::regex statement("Theorem " + std::string(identity.name) + "\\s*:");
    if (identity.proof.empty()) {
      EXPECT_FALSE(std::regex_search(every_file, statement)) << identity.name << " is proven in Coq but does not cite it";
      continue;
    }
    const std::string source = read(coq_dir + std::string(identity.proof));
    EXPECT_FALSE(source.empty()) << identity.name << ": cites missing file " << identity.proof;
    EXPECT_TRUE(std::regex_search(source, statement)) << identity.name << ": no Theorem of that name in " << identity.proof;
  }
}

}  // namespace
}  // namespace ropecheck::proofs
