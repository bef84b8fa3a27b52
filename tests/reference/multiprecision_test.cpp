// Real and PrecisionScope (reference/multiprecision.h): the precision rules and correct rounding of
// Real's operations, and the working precision being per thread: reference::apply and rotate_exact
// on several threads at once, each thread under its own PrecisionScopes, give bit for bit what the
// same calls give on one thread.
#include "reference/multiprecision.h"

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <latch>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "reference/rope.h"
#include "reference/rounding.h"

namespace ropecheck {
namespace {

using reference::PrecisionScope;
using reference::Real;

// Same precision, same value, same sign of zero: the same bits.
bool identical(const Real& a, const Real& b) {
  return a.precision() == b.precision() && mpfr_equal_p(a.data(), b.data()) != 0 &&
         mpfr_signbit(a.data()) == mpfr_signbit(b.data());
}

// MPFR's own correctly rounded result of op at `bits`.
template <class Op>
Real mpfr_result(int bits, Op op) {
  PrecisionScope scope(bits);
  Real r;
  op(r.data());
  return r;
}

TEST(Real, PrecisionOfResults) {
  PrecisionScope outer(100);
  const Real one(1);
  EXPECT_EQ(one.precision(), 100);
  EXPECT_EQ(Real().precision(), 100);
  EXPECT_EQ(Real("0.1").precision(), 100);
  EXPECT_EQ(Real(0.1L).precision(), 100);
  Real wide;
  {
    PrecisionScope inner(300);
    EXPECT_EQ(reference::working_precision(), 300);
    wide = Real(2) / 3;
  }
  EXPECT_EQ(reference::working_precision(), 100);
  EXPECT_EQ(wide.precision(), 300);             // assignment: the source's
  EXPECT_EQ(Real(wide).precision(), 300);       // copy: the source's
  EXPECT_EQ((one + wide).precision(), 300);     // Real ∘ Real: the larger
  EXPECT_EQ((wide - one).precision(), 300);
  EXPECT_EQ((one * 3).precision(), 100);        // Real ∘ scalar: the Real's
  EXPECT_EQ((3.0 / wide).precision(), 300);
  EXPECT_EQ(sqrt(wide).precision(), 300);       // one argument: its own
  EXPECT_EQ(ldexp(one, -5).precision(), 100);
  Real grown = one;
  grown += wide;
  EXPECT_EQ(grown.precision(), 300);
  Real kept = wide;
  kept *= one;
  EXPECT_EQ(kept.precision(), 300);
  Real scaled = one;
  scaled /= 7;
  EXPECT_EQ(scaled.precision(), 100);
}

TEST(Real, OperationsAreMpfrsCorrectlyRoundedOnes) {
  PrecisionScope scope(100);
  EXPECT_TRUE(identical(Real(1) / 3, mpfr_result(100, [](mpfr_ptr r) {
    mpfr_set_ui(r, 1, MPFR_RNDN);
    mpfr_div_ui(r, r, 3, MPFR_RNDN);
  })));
  EXPECT_TRUE(identical(Real("0.1"), mpfr_result(100, [](mpfr_ptr r) { mpfr_set_str(r, "0.1", 10, MPFR_RNDN); })));
  EXPECT_TRUE(identical(0.1 - Real(1) / 3, mpfr_result(100, [](mpfr_ptr r) {
    mpfr_set_ui(r, 1, MPFR_RNDN);
    mpfr_div_ui(r, r, 3, MPFR_RNDN);
    mpfr_d_sub(r, 0.1, r, MPFR_RNDN);
  })));
  EXPECT_TRUE(identical(pow(Real(10), Real(-1) / 3), mpfr_result(100, [](mpfr_ptr r) {
    mpfr_t third;
    mpfr_init2(third, 100);
    mpfr_set_si(third, -1, MPFR_RNDN);
    mpfr_div_ui(third, third, 3, MPFR_RNDN);
    mpfr_ui_pow(r, 10, third, MPFR_RNDN);
    mpfr_clear(third);
  })));
  // Scalars enter exactly: a 64-bit integer and a 64-bit long double significand.
  EXPECT_EQ(Real(0) + std::numeric_limits<std::uint64_t>::max(), ldexp(Real(1), 64) - 1);
  EXPECT_EQ(Real(1.0L + 0x1p-63L) - 1, ldexp(Real(1), -63));
  EXPECT_EQ(static_cast<double>(Real(1) / 3), 1.0 / 3);
  EXPECT_EQ(static_cast<std::int64_t>(Real(-2.75)), -2);
  EXPECT_EQ(static_cast<long double>(Real(1) + ldexp(Real(1), -63)), 1.0L + 0x1p-63L);
  int e = 0;
  EXPECT_EQ(frexp(Real(-12), &e), Real(-0.75));
  EXPECT_EQ(e, 4);
  EXPECT_EQ(floor(Real(-2.5)), -3);
  EXPECT_EQ(ceil(Real(-2.5)), -2);
  EXPECT_EQ(trunc(Real(-2.5)), -2);
}

TEST(Real, ComparisonsTreatNanAsUnordered) {
  const Real nan(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(isnan(nan));
  EXPECT_FALSE(nan == nan);
  EXPECT_TRUE(nan != nan);
  EXPECT_FALSE(nan < 1);
  EXPECT_FALSE(1 < nan);
  EXPECT_FALSE(nan >= Real(0));
  EXPECT_TRUE(Real(2) > 1.5);
  EXPECT_TRUE(1.5 < Real(2));
  EXPECT_TRUE(Real(-0.0) == 0);
}

TEST(Real, DecimalTextMustBeANumber) {
  EXPECT_THROW(Real("1.5x"), std::invalid_argument);
  EXPECT_THROW(Real(""), std::invalid_argument);
  EXPECT_THROW(Real(std::string("ten")), std::invalid_argument);
  EXPECT_EQ(Real("-2.5E+1"), -25);
  PrecisionScope scope(64);
  EXPECT_EQ((Real(1) / 3).str(5, std::ios_base::scientific), "3.3333e-01");
}

TEST(PrecisionScope, RejectsPrecisionsMpfrCannotHold) {
  EXPECT_THROW(PrecisionScope(0), std::invalid_argument);
  EXPECT_EQ(reference::working_precision(), reference::kDefaultPrecisionBits);
}

// ---------------------------------------------------------------------------------------------
// Threads.

TEST(PrecisionScope, MpfrIsBuiltThreadSafe) {
  // MPFR's caches, flags and exponent range are per thread only in a thread-safe build.
  EXPECT_TRUE(mpfr_buildopt_tls_p());
}

// Waits (≤ 10 s, so that a test of a lock fails instead of hanging) for another thread's flag.
bool wait_for(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Two threads inside PrecisionScopes at once, each checking its own precision after the other has
// set a different one: fails when scopes take a process-wide lock (the second thread cannot enter)
// and when the precision is process-wide (the first sees the second's).
TEST(PrecisionScope, ScopesOnTwoThreadsOverlapAndStaySeparate) {
  std::atomic<bool> first_inside = false, second_inside = false, first_checked = false;
  bool first_saw_second = false, second_saw_first = false;
  int first_bits = 0, first_value_bits = 0, second_bits = 0;
  std::thread first([&] {
    PrecisionScope scope(80);
    first_inside = true;
    first_saw_second = wait_for(second_inside);
    first_bits = reference::working_precision();
    first_value_bits = (Real(1) / 3).precision();
    first_checked = true;
  });
  std::thread second([&] {
    if (!wait_for(first_inside)) return;
    PrecisionScope scope(500);
    second_inside = true;
    second_saw_first = wait_for(first_checked);
    second_bits = reference::working_precision();
  });
  first.join();
  second.join();
  EXPECT_TRUE(first_saw_second) << "the second thread could not enter a PrecisionScope while the first held one";
  EXPECT_TRUE(second_saw_first);
  EXPECT_EQ(first_bits, 80);
  EXPECT_EQ(first_value_bits, 80);
  EXPECT_EQ(second_bits, 500);
}

// One reference call and its result.
struct Job {
  enum class Kind { apply, rotate_exact };
  Kind kind;
  std::string spec;
  std::vector<std::int64_t> positions;
  std::int64_t heads;
  std::vector<double> input;
  int bits;
  reference::Model model = reference::Model::exact;
  reference::Form form = reference::Form::elementwise;
};

struct Result {
  std::vector<double> rounded;  // apply
  std::vector<Real> exact;      // rotate_exact
};

Result run(const Job& job) {
  const Spec spec = parse_spec(job.spec);
  const std::int64_t tokens = static_cast<std::int64_t>(job.positions.size()) / position_components(spec);
  const reference::Shape shape{tokens, job.heads, spec.head_dim};
  Result r;
  if (job.kind == Job::Kind::apply) {
    reference::Options options;
    options.precision_bits = job.bits;
    options.model = job.model;
    r.rounded = reference::apply(spec, shape, job.positions, job.input, options);
  } else {
    r.exact = reference::rotate_exact(spec, shape, job.positions, job.input, job.bits, job.form);
  }
  return r;
}

// Empty when `got` has the bits of `want`, else where it differs first.
std::string difference(const Job& job, const Result& got, const Result& want) {
  if (got.rounded.size() != want.rounded.size() || got.exact.size() != want.exact.size()) return job.spec + ": sizes differ";
  for (std::size_t i = 0; i < want.rounded.size(); ++i) {
    if (std::bit_cast<std::uint64_t>(got.rounded[i]) != std::bit_cast<std::uint64_t>(want.rounded[i])) {
      return job.spec + " apply element " + std::to_string(i) + ": " + reference::to_hex(got.rounded[i]) + " instead of " +
             reference::to_hex(want.rounded[i]);
    }
  }
  for (std::size_t i = 0; i < want.exact.size(); ++i) {
    if (!identical(got.exact[i], want.exact[i])) {
      return job.spec + " rotate_exact element " + std::to_string(i) + ": " + got.exact[i].str(40) + " at " +
             std::to_string(got.exact[i].precision()) + " bits instead of " + want.exact[i].str(40) + " at " +
             std::to_string(want.exact[i].precision()) + " bits";
    }
  }
  return "";
}

std::vector<double> inputs(std::size_t n, Dtype dtype, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> out(n);
  for (double& v : out) v = reference::round_to_format(uniform(rng), dtype);
  return out;
}

// Calls that use the working precision in every way the reference does: the fast path at several
// precisions, both rounding models, scalings, the cold path (magnitudes near 2^±950, f16 overflow,
// exact ties that run the Ziv loop to its 16384-bit limit) and the three exact forms.
std::vector<Job> jobs() {
  std::vector<Job> out;
  using K = Job::Kind;
  const std::vector<std::int64_t> positions = {3, 123456789, std::int64_t{1} << 40};
  std::vector<double> far = inputs(3 * 2 * 8, Dtype::f64, 1);
  for (std::size_t i = 0; i < far.size(); ++i) far[i] = std::ldexp(far[i], i % 3 == 0 ? 950 : i % 3 == 1 ? -950 : 0);
  out.push_back({K::apply, "layout=half,head_dim=8,base=10000,dtype=f64", positions, 2, far, 256});
  out.push_back({K::apply,
                 "layout=interleaved,head_dim=8,base=500000,dtype=f32,scaling=yarn,factor=4,original_max_position=4096",
                 positions, 2, inputs(3 * 2 * 8, Dtype::f32, 2), 64});
  out.push_back({K::apply, "layout=half,head_dim=8,base=500000,dtype=bf16,scaling=llama3,factor=8,original_max_position=8192",
                 positions, 2, inputs(3 * 2 * 8, Dtype::bf16, 3), 128, reference::Model::f32_recipe});
  out.push_back({K::apply, "layout=interleaved,head_dim=2,base=10000,dtype=f32", {0, 0}, 1,
                 {1.0 + 0x1p-24, 1.0 + 3 * 0x1p-24, -1.0 - 0x1p-24, 0x1p-149 / 2}, 200});
  out.push_back({K::apply, "layout=interleaved,head_dim=2,base=10000,dtype=f16", {1, 2, 3, 4, 5, 6, 7, 8}, 1,
                 std::vector<double>(16, 60000.0), 256});
  out.push_back({K::rotate_exact, "layout=half,head_dim=8,base=10000,dtype=f32,scaling=ntk,factor=8", positions, 2,
                 inputs(3 * 2 * 8, Dtype::f32, 4), 160, reference::Model::exact, reference::Form::matrix});
  out.push_back({K::rotate_exact, "layout=interleaved,head_dim=8,base=10000,dtype=f64,direction=inverse", positions, 2,
                 inputs(3 * 2 * 8, Dtype::f64, 5), 512, reference::Model::exact, reference::Form::complex});
  out.push_back({K::rotate_exact, "layout=half,head_dim=12,base=10000,dtype=bf16,axes=mrope,sections=1/2/3",
                 {1, 2, 3, 7, 8, 9}, 2, inputs(2 * 2 * 12, Dtype::bf16, 6), 72, reference::Model::exact,
                 reference::Form::elementwise});
  return out;
}

// 4 threads run every job 3 times each, in different orders, each thread under its own outer
// PrecisionScope (and the reference's own inner ones), all at once; every result must have the bits
// of the same call made on this thread alone. With one process-wide working precision the threads
// would compute at each other's precisions and the exact results would differ.
TEST(PrecisionScope, ReferenceCallsOnFourThreadsMatchOneThread) {
  const std::vector<Job> all = jobs();
  std::vector<Result> expected;
  for (const Job& job : all) expected.push_back(run(job));

  constexpr int kThreads = 4, kRounds = 3;
  const int outer_bits[kThreads] = {53, 113, 300, 1000};
  std::latch start(kThreads);
  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      PrecisionScope outer(outer_bits[t]);
      for (int round = 0; round < kRounds; ++round) {
        for (std::size_t k = 0; k < all.size(); ++k) {
          const std::size_t i = (k + static_cast<std::size_t>(t) * 3 + static_cast<std::size_t>(round)) % all.size();
          const std::string problem = difference(all[i], run(all[i]), expected[i]);
          if (!problem.empty()) failures[t].push_back(problem);
          if (reference::working_precision() != outer_bits[t] || (Real(1) / 3).precision() != outer_bits[t]) {
            failures[t].push_back("working precision " + std::to_string(reference::working_precision()) + " instead of " +
                                  std::to_string(outer_bits[t]) + " after " + all[i].spec);
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(failures[t].empty()) << "thread " << t << " (" << failures[t].size() << " failures), first: "
                                     << (failures[t].empty() ? "" : failures[t].front());
  }
}

}  // namespace
}  // namespace ropecheck
