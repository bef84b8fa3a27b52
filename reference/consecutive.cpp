// Consecutive positions by angle addition (consecutive.h). Per pair j the state z_p ≈ A·e^{±ipθ'_j}
// (cos·A, sin·A in double-double) is seeded at a block's first position by fast_trig's
// cos_sin_of_multiple (within 2^-96·|A| per component, rope.cpp kFastPairError) and advanced by the
// step w_j = e^{±iθ'_j} (MPFR at 256 bits, each component split into a double-double: within
// 1.0001·2^-106 of the exact one, |θ'_j| ≤ 2^40):
//   c' = add(multiply(c, C), −multiply(s, S)),  s' = add(multiply(s, C), multiply(c, S))
// (double_double.h, JMP's Algorithms 12 and 6: each component within 8.01·2^-106·|z|·|w| of the
// rotation of the computed values). proofs/formal/coq/Consecutive.v carries these through a block:
// every state of a block is within kConsecutiveError·|A| of A·(cos, sin) per component. The
// rotation and the rounding test are apply's (ApplyPlan::rotate_token), with that bound.
// Premise written, not modelled (as fast_trig.g's): no underflow in the double-double operations —
// |A| ≥ 2^-500 and |c|, |s| ≥ 2^-60·|A| are required of a state before it is used, and a product
// below 2^-969 costs at most 2^-1074 more (≪ 2^-106·|A|).
#include "reference/consecutive.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#include "reference/fast_trig.h"
#include "reference/multiprecision.h"
#include "spec/schedule.h"

namespace ropecheck::reference {
namespace {

constexpr int kStepBits = 256;              // θ'_j, A and the step in MPFR (relative error 2^-243)
constexpr double kStepAngleLimit = 0x1p40;  // |θ'_j| up to which the step's MPFR cos/sin is within 2^-200
constexpr double kSmallTrig = 0x1p-60;      // |cos|, |sin| below this ·|A|: the present path
constexpr std::int64_t kPositionLimit = std::int64_t{1} << 62;

DoubleDouble split(const Real& v) {
  const double hi = static_cast<double>(v);
  return {hi, static_cast<double>(Real(v - hi))};
}

// The state and step arrays of every pair (SoA: the AVX2 loop loads four pairs at once).
struct State {
  double* c_hi;
  double* c_lo;
  double* s_hi;
  double* s_lo;
  double* error;
};
struct Step {
  const double* c_hi;
  const double* c_lo;
  const double* s_hi;
  const double* s_lo;
};

// One step of pairs [from, pairs): (c, s) ← (c, s)·(C, S) in double-double, then the rounding
// test's bound per pair (rotation_error). Returns whether a new |c| or |s| is below `small` (the
// caller then takes the present path for that position). Built twice (FMA or not), as rope.cpp's rows.
ROPECHECK_FMA_CLONES bool advance_scalar(int from, int pairs, const State& z, const Step& w, double cs_error, double small) {
  bool below = false;
  for (int j = from; j < pairs; ++j) {
    const DoubleDouble c{z.c_hi[j], z.c_lo[j]}, s{z.s_hi[j], z.s_lo[j]};
    const DoubleDouble C{w.c_hi[j], w.c_lo[j]}, S{w.s_hi[j], w.s_lo[j]};
    const DoubleDouble sS = multiply(s, S);
    const DoubleDouble c_next = add(multiply(c, C), DoubleDouble{-sS.hi, -sS.lo});
    const DoubleDouble s_next = add(multiply(s, C), multiply(c, S));
    z.c_hi[j] = c_next.hi;
    z.c_lo[j] = c_next.lo;
    z.s_hi[j] = s_next.hi;
    z.s_lo[j] = s_next.lo;
    z.error[j] = rotation_error(cs_error, c_next.hi, s_next.hi);
    below = below || std::fabs(c_next.hi) < small || std::fabs(s_next.hi) < small;
  }
  return below;
}

#if defined(__GNUC__) && defined(__x86_64__)
#define ROPECHECK_CONSECUTIVE_AVX2 1
#define ROPECHECK_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

struct Lanes {
  __m256d hi, lo;
};
// double_double.h's two_sum, fast_two_sum, multiply (JMP Algorithm 12) and add (Algorithm 6), four
// lanes at a time, operation for operation.
ROPECHECK_AVX2_INLINE Lanes two_sum_lanes(__m256d a, __m256d b) {
  const __m256d s = _mm256_add_pd(a, b);
  const __m256d bb = _mm256_sub_pd(s, a);
  return {s, _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b, bb))};
}
ROPECHECK_AVX2_INLINE Lanes fast_two_sum_lanes(__m256d a, __m256d b) {
  const __m256d s = _mm256_add_pd(a, b);
  return {s, _mm256_sub_pd(b, _mm256_sub_pd(s, a))};
}
ROPECHECK_AVX2_INLINE Lanes multiply_lanes(Lanes x, Lanes y) {
  const __m256d p = _mm256_mul_pd(x.hi, y.hi);
  const __m256d e = _mm256_fmsub_pd(x.hi, y.hi, p);
  const __m256d t = _mm256_fmadd_pd(x.hi, y.lo, _mm256_mul_pd(x.lo, y.lo));
  return fast_two_sum_lanes(p, _mm256_add_pd(e, _mm256_fmadd_pd(x.lo, y.hi, t)));
}
ROPECHECK_AVX2_INLINE Lanes add_lanes(Lanes x, Lanes y) {
  const Lanes s = two_sum_lanes(x.hi, y.hi);
  const Lanes t = two_sum_lanes(x.lo, y.lo);
  const Lanes v = fast_two_sum_lanes(s.hi, _mm256_add_pd(s.lo, t.hi));
  return fast_two_sum_lanes(v.hi, _mm256_add_pd(t.lo, v.lo));
}

// advance_scalar four pairs at a time (the remaining pairs % 4 by advance_scalar).
__attribute__((target("avx2,fma"))) bool advance_avx2(int pairs, const State& z, const Step& w, double cs_error, double small) {
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d small_v = _mm256_set1_pd(small);
  const __m256d error_scale = _mm256_set1_pd(0x1p-100);
  const __m256d cs_term = _mm256_set1_pd(cs_error * (1 + 0x1p-40));
  __m256d below = _mm256_setzero_pd();
  int j = 0;
  for (; j + 4 <= pairs; j += 4) {
    const Lanes c{_mm256_loadu_pd(z.c_hi + j), _mm256_loadu_pd(z.c_lo + j)};
    const Lanes s{_mm256_loadu_pd(z.s_hi + j), _mm256_loadu_pd(z.s_lo + j)};
    const Lanes C{_mm256_loadu_pd(w.c_hi + j), _mm256_loadu_pd(w.c_lo + j)};
    const Lanes S{_mm256_loadu_pd(w.s_hi + j), _mm256_loadu_pd(w.s_lo + j)};
    const Lanes sS = multiply_lanes(s, S);
    const Lanes c_next = add_lanes(multiply_lanes(c, C), Lanes{_mm256_xor_pd(sS.hi, sign), _mm256_xor_pd(sS.lo, sign)});
    const Lanes s_next = add_lanes(multiply_lanes(s, C), multiply_lanes(c, S));
    _mm256_storeu_pd(z.c_hi + j, c_next.hi);
    _mm256_storeu_pd(z.c_lo + j, c_next.lo);
    _mm256_storeu_pd(z.s_hi + j, s_next.hi);
    _mm256_storeu_pd(z.s_lo + j, s_next.lo);
    const __m256d ac = _mm256_andnot_pd(sign, c_next.hi), as = _mm256_andnot_pd(sign, s_next.hi);
    // rotation_error: cs_error·(1 + 2^-40) + max(|c|, |s|)·2^-100
    _mm256_storeu_pd(z.error + j, _mm256_add_pd(cs_term, _mm256_mul_pd(_mm256_max_pd(ac, as), error_scale)));
    below = _mm256_or_pd(below, _mm256_or_pd(_mm256_cmp_pd(ac, small_v, _CMP_LT_OQ), _mm256_cmp_pd(as, small_v, _CMP_LT_OQ)));
  }
  const bool tail = advance_scalar(j, pairs, z, w, cs_error, small);
  return _mm256_movemask_pd(below) != 0 || tail;
}

bool cpu_has_avx2_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#endif

bool advance(int pairs, const State& z, const Step& w, double cs_error, double small) {
#ifdef ROPECHECK_CONSECUTIVE_AVX2
  static const bool avx2 = cpu_has_avx2_fma();
  if (avx2) return advance_avx2(pairs, z, w, cs_error, small);
#endif
  return advance_scalar(0, pairs, z, w, cs_error, small);
}

}  // namespace

ConsecutiveReference::ConsecutiveReference(const Spec& spec, Model model)
    : plan_(ApplyPlan::for_evaluation(spec, Options{kDefaultPrecisionBits, model, Path::fast})) {
  if (model != Model::exact) return;
  PrecisionScope scope(kStepBits);
  const Real a = attention_factor<Real>(spec);
  attention_ = split(a);
  if (!(std::fabs(attention_.hi) >= 0x1p-500 && std::fabs(attention_.hi) <= 0x1p500)) return;
  const bool inverse = spec.direction == Direction::inverse;
  const int pairs = spec.rotary_dim / 2;
  for (int j = 0; j < pairs; ++j) {
    const Real theta = frequency<Real>(spec, j);
    const double t1 = static_cast<double>(theta);
    // fast_trig's domain for the seeds (|θ| ≥ 2^-800), the step's bound (|θ| ≤ 2^40).
    if (!(std::fabs(t1) >= 0x1p-800 && std::fabs(t1) <= kStepAngleLimit)) return;
    const Real rest = theta - t1;  // exact at 256 bits
    const double t2 = static_cast<double>(rest);
    theta_.push_back({t1, t2, static_cast<double>(Real(rest - t2))});
    Real s, c;
    sin_cos(theta, s, c);
    const DoubleDouble C = split(c), S = split(inverse ? Real(-s) : s);
    step_c_hi_.push_back(C.hi);
    step_c_lo_.push_back(C.lo);
    step_s_hi_.push_back(S.hi);
    step_s_lo_.push_back(S.lo);
  }
  additive_ = true;
}

void ConsecutiveReference::apply_into(std::int64_t first, std::int64_t count, std::int64_t heads, std::span<const double> input,
                                      std::span<double> out, ConsecutiveStats* stats) const {
  if (out.size() != input.size()) throw std::invalid_argument("out: expected as many values as the input");
  run(first, count, heads, input, out, nullptr, stats);
}

void ConsecutiveReference::evaluate_into(std::int64_t first, std::int64_t count, std::int64_t heads, std::span<const double> input,
                                         std::span<double> rounded, std::span<long double> exact, ConsecutiveStats* stats) const {
  if (rounded.size() != input.size() || exact.size() != input.size()) {
    throw std::invalid_argument("rounded, exact: expected as many values as the input");
  }
  run(first, count, heads, input, rounded, exact.data(), stats);
}

void ConsecutiveReference::evaluate_unit_probes(std::int64_t first, std::int64_t count, std::span<double> rounded,
                                                std::span<long double> exact, ConsecutiveStats* stats) const {
  const Spec& spec = plan_.spec();
  const std::int64_t d = spec.head_dim;
  const int pairs = spec.rotary_dim / 2;
  if (count < 0 || rounded.size() != static_cast<std::size_t>(count * 2 * d) || exact.size() != rounded.size()) {
    throw std::invalid_argument("rounded, exact: expected count*2*head_dim values");
  }
  std::vector<PairDims> dims;
  for (int j = 0; j < pairs; ++j) dims.push_back(pair_dims(spec, j));
  // The inputs of `heads` heads of `tokens` tokens: head 0 (1, 0) per pair, head 1 (0, 1).
  const auto unit_input = [&](std::int64_t tokens, std::int64_t heads) {
    std::vector<double> in(static_cast<std::size_t>(tokens * heads * d), 1.0);
    for (std::int64_t row = 0; row < tokens * heads; ++row) {
      for (const PairDims& pd : dims) in[static_cast<std::size_t>(row * d + (row % heads == 0 ? pd.second : pd.first))] = 0;
    }
    return in;
  };
  if (first <= 0 && first + count > 0) {  // position 0 among them: both heads evaluated
    const std::vector<double> in = unit_input(count, 2);
    run(first, count, 2, in, rounded, exact.data(), stats);
    return;
  }
  const std::vector<double> in = unit_input(count, 1);
  // Head 0 of token t into the first half of its two-head row, then head 1 from it, from the last
  // token down (token t's one-head row lies at or before its two-head row: nothing is overwritten
  // before it is read).
  run(first, count, 1, in, rounded.subspan(0, static_cast<std::size_t>(count * d)), exact.data(), stats);
  for (std::int64_t t = count - 1; t >= 0; --t) {
    double* r = rounded.data() + t * 2 * d;
    long double* e = exact.data() + t * 2 * d;
    std::copy_backward(rounded.data() + t * d, rounded.data() + (t + 1) * d, r + d);
    std::copy_backward(exact.data() + t * d, exact.data() + (t + 1) * d, e + d);
    std::copy(r, r + d, r + d);  // the pass-through dims (and every pair, replaced below)
    std::copy(e, e + d, e + d);
    for (const PairDims& pd : dims) {
      r[d + pd.first] = -r[pd.second];
      r[d + pd.second] = r[pd.first];
      e[d + pd.first] = -e[pd.second];
      e[d + pd.second] = e[pd.first];
    }
  }
}

void ConsecutiveReference::run(std::int64_t first, std::int64_t count, std::int64_t heads, std::span<const double> input,
                               std::span<double> out, long double* exact, ConsecutiveStats* stats) const {
  const Spec& spec = plan_.spec();
  if (count < 0 || heads < 0) throw std::invalid_argument("consecutive: expected count >= 0 and heads >= 0");
  if (first < -kPositionLimit || first > kPositionLimit || (count > 0 && first > kPositionLimit - (count - 1))) {
    throw std::invalid_argument("consecutive: expected positions within [-2^62, 2^62], got first=" + std::to_string(first) +
                                ", count=" + std::to_string(count));
  }
  std::int64_t row = 0, values = 0;
  if (__builtin_mul_overflow(heads, spec.head_dim, &row) || __builtin_mul_overflow(count, row, &values) ||
      static_cast<std::int64_t>(input.size()) != values) {
    throw std::invalid_argument("input: expected count*heads*head_dim values, got " + std::to_string(input.size()));
  }
  const int components = position_components(spec);
  std::vector<std::int64_t> tuple(static_cast<std::size_t>(components));
  ConsecutiveStats local;
  local.tokens = count;
  // The present path for one token (ApplyPlan: apply_into, or evaluate_into with exact values).
  auto present = [&](std::int64_t t) {
    std::fill(tuple.begin(), tuple.end(), first + t);
    const Shape shape{1, heads, spec.head_dim};
    const std::span<const double> in = input.subspan(static_cast<std::size_t>(t * row), static_cast<std::size_t>(row));
    const std::span<double> o = out.subspan(static_cast<std::size_t>(t * row), static_cast<std::size_t>(row));
    if (exact) {
      plan_.evaluate_into(shape, tuple, in, o, std::span<long double>(exact + t * row, static_cast<std::size_t>(row)));
    } else {
      plan_.apply_into(shape, tuple, in, o);
    }
    ++local.fallback_tokens;
  };
  if (!additive_) {
    for (std::int64_t t = 0; t < count; ++t) present(t);
    if (stats) *stats += local;
    return;
  }
  const int pairs = spec.rotary_dim / 2;
  const bool inverse = spec.direction == Direction::inverse;
  const double cs_error = std::fabs(attention_.hi) * kConsecutiveError * (1 + 0x1p-50);
  const double small = std::fabs(attention_.hi) * kSmallTrig;
  std::vector<double> c_hi(static_cast<std::size_t>(pairs)), c_lo(c_hi), s_hi(c_hi), s_lo(c_hi), error(c_hi);
  const TrigRow trig{c_hi.data(), c_lo.data(), s_hi.data(), s_lo.data(), error.data(), cs_error};
  const State state{c_hi.data(), c_lo.data(), s_hi.data(), s_lo.data(), error.data()};
  const Step step{step_c_hi_.data(), step_c_lo_.data(), step_s_hi_.data(), step_s_lo_.data()};
  for (std::int64_t block = 0; block < count; block += kConsecutiveBlock) {
    const std::int64_t end = std::min(count, block + kConsecutiveBlock);
    const std::int64_t p0 = first + block;
    // The seed: A·(cos, sin) of ±p0·θ'_j (at p0 = 0: (A, 0) exactly, up to A's own double-double).
    bool seeded = true, below = false;
    for (int j = 0; j < pairs && seeded; ++j) {
      DoubleDouble c = attention_, s{0, 0};
      if (p0 != 0) {
        const double m = inverse ? -static_cast<double>(p0) : static_cast<double>(p0);
        const std::optional<CosSinDD> cs = cos_sin_of_multiple(m, theta_[static_cast<std::size_t>(j)]);
        if (!cs) {
          seeded = false;
          break;
        }
        c = multiply(cs->cos, attention_);
        s = multiply(cs->sin, attention_);
      }
      c_hi[j] = c.hi;
      c_lo[j] = c.lo;
      s_hi[j] = s.hi;
      s_lo[j] = s.lo;
      error[j] = rotation_error(cs_error, c.hi, s.hi);
      below = below || std::fabs(c.hi) < small || std::fabs(s.hi) < small;
    }
    if (!seeded) {
      for (std::int64_t t = block; t < end; ++t) present(t);
      continue;
    }
    for (std::int64_t t = block; t < end; ++t) {
      if (t > block) {
        below = advance(pairs, state, step, cs_error, small);
      }
      const std::int64_t p = first + t;
      if (p == 0 || below) {
        present(t);
        continue;
      }
      std::fill(tuple.begin(), tuple.end(), p);
      local.general_pairs +=
          plan_.rotate_token(tuple, trig, heads, input.data() + t * row, out.data() + t * row, exact ? exact + t * row : nullptr);
    }
  }
  if (stats) *stats += local;
}

}  // namespace ropecheck::reference
