// Exact RoPE: three independent forms at working precision, and correctly rounded application.
//
// Correct rounding follows CORE-MATH's shape: a fast path in double-double arithmetic with a
// written error bound and a rounding test, and a cold path that recomputes with MPFR at doubling
// precision (a Ziv loop) only when the fast path cannot decide the rounding. With the default
// 256-bit cos/sin the fast path's bound is ≈ 2^-100·(|x|+|y|), so the cold path runs when an output
// lies within ~2^-100 relative of a rounding boundary (never seen in the tests' random data) or in
// the range guards below (magnitudes beyond 2^±900, results rounding to 0 or overflowing).
#include "reference/rope.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "reference/fast_trig.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define ROPECHECK_AVX2_ROWS 1
#endif

namespace ropecheck::reference {
namespace {

// Bits of headroom in the error bound of MPFR-computed cos/sin: θ'_j from the schedule takes a
// handful of correctly rounded MPFR operations (pow, log, division, a ramp), each within 2^-P
// relative; 2^12 covers their accumulation with a wide margin. The angle p·θ then carries a relative
// error ≤ 2^(−P+13), i.e. an absolute error ≤ |a|·2^(−P+13) that cos and sin inherit.
constexpr int kScheduleErrorBits = 13;
// Largest precision of the Ziv loop. Past it the exact value is taken to be the computed one: that
// happens only for outputs that are exactly representable ties (e.g. position 0 with inputs that are
// not values of the dtype), where the MPFR computation is exact.
constexpr int kMaxPrecisionBits = 16384;

// Sizes of one call against a spec already validated: the shape's element count (checked), and
// position_components(spec) positions per token.
std::int64_t checked_elements(const Spec& spec, Shape shape, std::span<const std::int64_t> positions) {
  if (shape.head_dim != spec.head_dim) {
    throw std::invalid_argument("shape: head_dim " + std::to_string(shape.head_dim) + " differs from spec head_dim " +
                                std::to_string(spec.head_dim));
  }
  if (shape.tokens < 0 || shape.heads < 0) throw std::invalid_argument("shape: negative tokens or heads");
  // Checked: a product that wraps around could equal the input's size.
  std::int64_t elements = 0;
  if (__builtin_mul_overflow(shape.tokens, shape.heads, &elements) ||
      __builtin_mul_overflow(elements, shape.head_dim, &elements)) {
    throw std::invalid_argument("shape: expected tokens*heads*head_dim below 2^63, got tokens=" + std::to_string(shape.tokens) +
                                ", heads=" + std::to_string(shape.heads) + ", head_dim=" + std::to_string(shape.head_dim));
  }
  const std::int64_t components = position_components(spec);
  if (static_cast<std::int64_t>(positions.size()) / components != shape.tokens ||
      static_cast<std::int64_t>(positions.size()) % components != 0) {
    throw std::invalid_argument("positions: expected " + std::to_string(components) + " values per token for " +
                                std::to_string(shape.tokens) + " tokens, got " + std::to_string(positions.size()));
  }
  return elements;
}

// The same, and the input's size.
void check_sizes(const Spec& spec, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input) {
  const std::int64_t elements = checked_elements(spec, shape, positions);
  if (static_cast<std::int64_t>(input.size()) != elements) {
    throw std::invalid_argument("input: expected tokens*heads*head_dim = " + std::to_string(elements) +
                                " values, got " + std::to_string(input.size()));
  }
}

void check_shapes(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                  std::span<const double> input) {
  validate(spec);
  check_sizes(spec, shape, positions, input);
}

// Per-call plan at one precision: frequencies and the attention factor.
struct Plan {
  std::vector<Real> theta;
  std::vector<double> theta_f32;  // f32-recipe model only: θ'_j correctly rounded to binary32
  Real attention;
  std::vector<PairDims> dims;
  std::vector<int> component;
};

double recipe_theta(const Spec& spec, int pair_index, int precision);

// With only_pair ≥ 0 the frequencies of that pair alone are computed (the cold path needs one).
Plan make_plan(const Spec& spec, Model model, int precision, int only_pair = -1) {
  Plan plan;
  const int pairs = spec.rotary_dim / 2;
  plan.theta.assign(pairs, Real(0));
  if (model == Model::f32_recipe) plan.theta_f32.assign(pairs, 0.0);
  for (int j = 0; j < pairs; ++j) {
    plan.dims.push_back(pair_dims(spec, j));
    plan.component.push_back(position_component(spec, j));
    if (only_pair >= 0 && j != only_pair) continue;
    plan.theta[j] = frequency<Real>(spec, j);
    if (model == Model::f32_recipe) plan.theta_f32[j] = recipe_theta(spec, j, precision);
  }
  plan.attention = attention_factor<Real>(spec);
  return plan;
}

Real signed_angle(const Spec& spec, const Real& position_times_theta) {
  return spec.direction == Direction::inverse ? Real(-position_times_theta) : position_times_theta;
}

// θ'_j correctly rounded to binary32 by its own Ziv loop (the MPFR value carries the schedule's
// error bound).
double recipe_theta(const Spec& spec, int pair_index, int precision) {
  for (int bits = precision;; bits *= 2) {
    PrecisionScope scope(bits);
    const Real theta = frequency<Real>(spec, pair_index);
    const Real error = abs(theta) * ldexp(Real(1), -bits + kScheduleErrorBits);
    if (std::optional<double> theta32 = round_if_decided(theta, error, Dtype::f32)) return *theta32;
    if (bits >= kMaxPrecisionBits) return static_cast<double>(round_to_format(theta, Dtype::f32));
  }
}

// The exact model's angle ±m·θ'_j, and the precision Q it was computed at: its absolute error is
// at most |φ|·2^(13−Q) (kScheduleErrorBits: θ'_j within 2^(13−Q) relative, one product).
// While |φ| < 2^kAngleBits that is the working precision P (error < 2^(kAngleBits+13−P)); past
// it, with MPFR's exponent e of the P-bit angle (|φ| < 2^(e+1) once the P-bit angle's own error is
// allowed for), θ'_j is computed again at Q = P + e + 1 − kAngleBits bits and so is the product:
// |φ|·2^(13−Q) < 2^(e+1+13−P−e−1+kAngleBits) = 2^(kAngleBits+13−P). So the angle error, and the
// cos/sin error it causes, stays below 2^(kAngleBits+13−P) however large the angle is (every θ'_j
// and position the spec's validation and the int64 positions allow: |φ| < 2^1140 needs
// Q < P + 1101); a fixed P alone loses every bit of the angle once |φ| > 2^(P−13) (with
// P = 256: linear factor 1e-70 at position 2^30).
constexpr int kAngleBits = 40;

struct ExactAngle {
  Real value;
  int bits;  // Q
};

// θ'_j at the precision the largest angle of one call needs, per pair, computed on the first angle
// past 2^kAngleBits: a call's angles of one pair then share one evaluation of the schedule (as
// costly as their cos and sin at those bits). Q_j = P + e_j + 1 − kAngleBits with e_j the exponent of
// the P-bit |m|_max·θ'_j, at least each angle's own Q (rounding is monotone: |a| ≤ |m|_max·θ'_j).
// Local to one call (apply_into's rows, rotate_exact): nothing shared between threads.
class WideFrequencies {
 public:
  WideFrequencies(int pairs, std::span<const std::int64_t> positions) : pairs_(pairs), positions_(positions) {}
  // θ'_j at Q_j (computed now if not yet) and Q_j, given θ'_j at the working precision.
  const Real& theta(const Spec& spec, int pair_index, const Real& theta_at_p, int precision, int& bits) {
    if (theta_.empty()) {  // the first huge angle of the call: most calls have none
      theta_.resize(static_cast<std::size_t>(pairs_));
      for (std::int64_t m : positions_) largest_ = std::max(largest_, std::fabs(static_cast<long double>(m)));
    }
    Real& theta = theta_[static_cast<std::size_t>(pair_index)];
    if (theta.precision() <= precision) {
      const Real top = Real(largest_) * theta_at_p;
      const long exponent = mpfr_regular_p(top.data()) ? static_cast<long>(mpfr_get_exp(top.data())) : 0;
      PrecisionScope scope(precision + static_cast<int>(std::max(exponent + 1 - kAngleBits, 1L)));
      theta = frequency<Real>(spec, pair_index);
    }
    bits = std::max(bits, theta.precision());
    return theta;
  }

 private:
  int pairs_;
  std::span<const std::int64_t> positions_;
  long double largest_ = 0;  // the largest |position| of the call (exact: |m| ≤ 2^62)
  std::vector<Real> theta_;  // per pair; at the working precision until computed
};

// `wide` (optional): the call's cache of θ'_j at the bits its huge angles need.
ExactAngle exact_angle(const Spec& spec, const Plan& plan, std::int64_t position, int pair_index, int precision,
                       WideFrequencies* wide = nullptr) {
  Real a = signed_angle(spec, Real(static_cast<long long>(position)) * plan.theta[pair_index]);
  // e with 0.5 ≤ |a|·2^-e < 1 (0 for a zero or non-finite angle, which no precision changes).
  const long exponent = mpfr_regular_p(a.data()) ? static_cast<long>(mpfr_get_exp(a.data())) : 0;
  if (exponent <= kAngleBits) return {std::move(a), precision};
  int bits = precision + static_cast<int>(exponent) + 1 - kAngleBits;
  if (wide) {
    const Real& theta = wide->theta(spec, pair_index, plan.theta[pair_index], precision, bits);
    PrecisionScope scope(bits);
    return {signed_angle(spec, Real(static_cast<long long>(position)) * theta), bits};
  }
  PrecisionScope scope(bits);
  return {signed_angle(spec, Real(static_cast<long long>(position)) * frequency<Real>(spec, pair_index)), bits};
}

// The f32-recipe angle: RN32(RN32(p)·RN32(θ)), exactly representable.
Real recipe_angle(const Spec& spec, double theta_f32, std::int64_t position) {
  const Real p32 = round_to_format(Real(static_cast<long long>(position)), Dtype::f32);
  const Real product = round_to_format(Real(p32 * Real(theta_f32)), Dtype::f32);
  return signed_angle(spec, product);
}

// cos and sin of one pair's angle (times the attention factor), with an absolute error bound.
struct CosSin {
  Real cos;
  Real sin;
  Real error;  // |computed − exact| bound for each of cos and sin
};

CosSin cos_sin(const Spec& spec, const Plan& plan, std::span<const std::int64_t> position_tuple, int pair_index, Model model, int precision,
               WideFrequencies* wide = nullptr) {
  const std::int64_t p = position_tuple[plan.component[pair_index]];
  Real a;
  Real angle_error;
  int bits = precision;
  if (model == Model::f32_recipe) {
    a = recipe_angle(spec, plan.theta_f32[pair_index], p);
    angle_error = Real(0);
  } else {
    ExactAngle exact = exact_angle(spec, plan, p, pair_index, precision, wide);
    bits = exact.bits;
    a = std::move(exact.value);
    angle_error = abs(a) * ldexp(Real(1), -bits + kScheduleErrorBits);
  }
  PrecisionScope scope(bits);  // cos and sin of a Q-bit angle at Q bits (at least P: the bound below holds)
  CosSin cs;
  Real c, s;
  sin_cos(a, s, c);
  cs.cos = c * plan.attention;
  cs.sin = s * plan.attention;
  // cos/sin inherit the angle error (|d cos/da| ≤ 1), plus their own and the product's rounding.
  cs.error = abs(plan.attention) * (angle_error + ldexp(Real(1), -precision + 3));
  return cs;
}

// x·c − y·s (or x·s + y·c with the roles passed accordingly) in double-double.
// Error ≤ 2^-100·(|x|+|y|)·max(|c|,|s|) plus the representation error of c and s (≤ 2^-106 relative):
// the two exact products and their exact sum leave only the low-order terms (each ≤ 2^-52 of the
// magnitudes), summed with ≤ 4 roundings of 2^-53 each.
inline DoubleDouble rotate_component(double x, DoubleDouble c, double y, DoubleDouble s) {
  const DoubleDouble xc = two_product(x, c.hi);
  const DoubleDouble ys = two_product(y, s.hi);
  DoubleDouble sum = two_sum(xc.hi, -ys.hi);
  const double tail = sum.lo + ((xc.lo - ys.lo) + (x * c.lo - y * s.lo));
  return two_sum(sum.hi, tail);
}

// The cold path: one output component, recomputed with MPFR at doubling precision until decided.
double slow_component(const Spec& spec, std::span<const std::int64_t> position_tuple, int pair_index, double x,
                      double y, bool second, Model model, int precision) {
  for (int bits = std::max(2 * precision, 128);; bits *= 2) {
    PrecisionScope scope(bits);
    const Plan plan = make_plan(spec, model, bits, pair_index);
    const CosSin cs = cos_sin(spec, plan, position_tuple, pair_index, model, bits);
    const Real rx(x), ry(y);
    // first: x·c − y·s; second: x·s + y·c
    const Real value = second ? Real(rx * cs.sin + ry * cs.cos) : Real(rx * cs.cos - ry * cs.sin);
    const Real magnitude = abs(rx) + abs(ry);
    const Real error = magnitude * (cs.error + ldexp(abs(plan.attention), -bits + 2));
    if (auto r = round_if_decided(value, error, spec.dtype)) return *r;
    if (bits >= kMaxPrecisionBits) return static_cast<double>(round_to_format(value, spec.dtype));
  }
}

}  // namespace

PairDims pair_dims(const Spec& spec, int pair_index) {
  if (spec.layout == Layout::interleaved) return {2 * pair_index, 2 * pair_index + 1};
  return {pair_index, pair_index + spec.rotary_dim / 2};
}

std::vector<Real> frequencies(const Spec& spec, int precision_bits) {
  validate(spec);
  PrecisionScope scope(precision_bits);
  std::vector<Real> out;
  for (int j = 0; j < spec.rotary_dim / 2; ++j) out.push_back(frequency<Real>(spec, j));
  return out;
}

Real angle(const Spec& spec, std::span<const std::int64_t> position, int pair_index, int precision_bits) {
  validate(spec);
  if (static_cast<int>(position.size()) != position_components(spec)) {
    throw std::invalid_argument("angle: expected " + std::to_string(position_components(spec)) + " position components");
  }
  PrecisionScope scope(precision_bits);
  const std::int64_t p = position[position_component(spec, pair_index)];
  return signed_angle(spec, Real(static_cast<long long>(p)) * frequency<Real>(spec, pair_index));
}

std::vector<Real> rotate_exact(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                               std::span<const double> input, int precision_bits, Form form) {
  check_shapes(spec, shape, positions, input);
  for (double v : input) {
    if (!std::isfinite(v)) throw std::invalid_argument("rotate_exact: inputs must be finite");
  }
  PrecisionScope scope(precision_bits);
  const Plan plan = make_plan(spec, Model::exact, precision_bits);
  WideFrequencies wide(spec.rotary_dim / 2, positions);
  const int pairs = spec.rotary_dim / 2;
  const int components = position_components(spec);
  const std::int64_t d = spec.head_dim;
  std::vector<Real> out(static_cast<std::size_t>(shape.elements()));
  const bool inverse = spec.direction == Direction::inverse;

  for (std::int64_t t = 0; t < shape.tokens; ++t) {
    std::span<const std::int64_t> position(positions.data() + t * components, components);
    auto token_angle = [&](int j) { return exact_angle(spec, plan, position[plan.component[j]], j, precision_bits, &wide).value; };
    if (form == Form::elementwise) {
      // RoFormer: out = q ⊗ cos + rotate(q) ⊗ sin, with cos/sin laid out like the pairs
      // (interleaved: (cos θ0, cos θ0, cos θ1, …); half: cat(cos, cos)), and 1/0 on pass-through dims.
      std::vector<Real> cos_vector(d, Real(1)), sin_vector(d, Real(0));
      for (int j = 0; j < pairs; ++j) {
        const Real a = token_angle(j);
        const PairDims pd = plan.dims[j];
        cos_vector[pd.first] = cos_vector[pd.second] = cos(a) * plan.attention;
        sin_vector[pd.first] = sin_vector[pd.second] = sin(a) * plan.attention;
      }
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        const std::int64_t row = (t * shape.heads + h) * d;
        std::vector<Real> rotated(d, Real(0));  // rotate_half / rotate_every_two
        for (int j = 0; j < pairs; ++j) {
          const PairDims pd = plan.dims[j];
          rotated[pd.first] = Real(-input[row + pd.second]);
          rotated[pd.second] = Real(input[row + pd.first]);
        }
        for (std::int64_t i = 0; i < d; ++i) out[row + i] = Real(input[row + i]) * cos_vector[i] + rotated[i] * sin_vector[i];
      }
    } else if (form == Form::matrix) {
      // The block-diagonal R_m (RoFormer): 2×2 blocks [[cos, −sin], [sin, cos]] at each pair's dims,
      // identity elsewhere; out = R_m·q as a full matrix-vector product.
      std::vector<Real> matrix(static_cast<std::size_t>(d * d), Real(0));
      for (std::int64_t i = 0; i < d; ++i) matrix[i * d + i] = Real(1);
      for (int j = 0; j < pairs; ++j) {
        const Real a = token_angle(j);
        const Real c = cos(a) * plan.attention;
        const Real s = sin(a) * plan.attention;
        const PairDims pd = plan.dims[j];
        matrix[pd.first * d + pd.first] = c;
        matrix[pd.first * d + pd.second] = -s;
        matrix[pd.second * d + pd.first] = s;
        matrix[pd.second * d + pd.second] = c;
      }
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        const std::int64_t row = (t * shape.heads + h) * d;
        for (std::int64_t i = 0; i < d; ++i) {
          Real sum(0);
          for (std::int64_t k = 0; k < d; ++k) sum += matrix[i * d + k] * Real(input[row + k]);
          out[row + i] = sum;
        }
      }
    } else {
      // Complex form (RoFormer §3.2): z·(e^{iθ})^m with the power taken by repeated squaring,
      // never through the angle m·θ; conjugated for negative m and for the inverse direction.
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        const std::int64_t row = (t * shape.heads + h) * d;
        for (std::int64_t i = pairs * 2; i < d; ++i) out[row + i] = Real(input[row + i]);  // pass-through
      }
      for (int j = 0; j < pairs; ++j) {
        const std::int64_t m = position[plan.component[j]];
        Real base_re = cos(plan.theta[j]), base_im = sin(plan.theta[j]);
        Real power_re(1), power_im(0);
        unsigned long long n = m < 0 ? 0ULL - static_cast<unsigned long long>(m) : static_cast<unsigned long long>(m);
        while (n) {
          if (n & 1) {
            const Real re = power_re * base_re - power_im * base_im;
            power_im = power_re * base_im + power_im * base_re;
            power_re = re;
          }
          const Real re = base_re * base_re - base_im * base_im;
          base_im = 2 * base_re * base_im;
          base_re = re;
          n >>= 1;
        }
        if ((m < 0) != inverse) power_im = -power_im;
        power_re *= plan.attention;
        power_im *= plan.attention;
        const PairDims pd = plan.dims[j];
        for (std::int64_t h = 0; h < shape.heads; ++h) {
          const std::int64_t row = (t * shape.heads + h) * d;
          const Real zr(input[row + pd.first]), zi(input[row + pd.second]);
          out[row + pd.first] = zr * power_re - zi * power_im;
          out[row + pd.second] = zr * power_im + zi * power_re;
        }
      }
    }
  }
  return out;
}

namespace {

// Precision of the MPFR values the fast path starts from (θ'_j and the attention factor): their
// relative error 2^(−P+13) = 2^-243 is far below the fast path's bound.
constexpr int kFastPlanBits = 256;
// Bound on |computed − exact| of the fast path's cos·A and sin·A, per unit of |A| (fast_trig.h's
// kFastCosSinError = 2^-97, then one double-double product with Â: relative 5u² + u² (Â's own
// rounding) + 2^-243; total < 2^-96.9). A zero angle: cos·A = Â, error ≤ u²·|A| ≤ 2^-96·|A| too.
constexpr double kFastPairError = 0x1p-96;

// The fast path's per-call constants: θ'_j as normalised triple-doubles and the attention factor
// as a double-double, each word the rounded remainder of the MPFR value (error ≤ u³ relative).
struct FastPlan {
  std::vector<std::array<double, 3>> theta;
  DoubleDouble attention{0, 0};
  bool usable = false;  // |A| in [2^-500, 2^500]: A·cos and A·sin stay far from under/overflow
};

FastPlan make_fast_plan(const Plan& plan) {
  FastPlan fast;
  for (const Real& theta : plan.theta) {
    const double t1 = static_cast<double>(theta);
    const Real rest = theta - t1;  // exact: within the Real's precision
    const double t2 = static_cast<double>(rest);
    fast.theta.push_back({t1, t2, static_cast<double>(Real(rest - t2))});
  }
  const double a1 = static_cast<double>(plan.attention);
  fast.attention = {a1, static_cast<double>(Real(plan.attention - a1))};
  fast.usable = std::fabs(a1) >= 0x1p-500 && std::fabs(a1) <= 0x1p500;
  return fast;
}

// One (token, pair)'s cos·A and sin·A in double-double, with the bound that the rounding test
// takes per unit of |x| + |y| (their error plus the rotation's, rotate_component).
struct PairTrig {
  DoubleDouble c{0, 0};
  DoubleDouble s{0, 0};
  double error = 0;
  double cs_error = 0;  // |computed − exact| of c and of s alone (for deciding their f64 rounding)
  bool fast = false;    // from the double-double path (else from MPFR)
  // RN to binary64 of the exact cos·A and sin·A, for the IEEE special values (filled on demand).
  bool ieee_known = false;
  double c_ieee = 0;
  double s_ieee = 0;
};

double total_error(double cs_error, DoubleDouble c, DoubleDouble s) { return rotation_error(cs_error, c.hi, s.hi); }

PairTrig mpfr_pair_trig(const Spec& spec, const Plan& plan, std::span<const std::int64_t> position, int j, Model model, int precision,
                        WideFrequencies* wide = nullptr) {
  const CosSin cs = cos_sin(spec, plan, position, j, model, precision, wide);
  PairTrig trig;
  const double c_hi = static_cast<double>(cs.cos);
  const double s_hi = static_cast<double>(cs.sin);
  trig.c = {c_hi, static_cast<double>(Real(cs.cos - c_hi))};
  trig.s = {s_hi, static_cast<double>(Real(cs.sin - s_hi))};
  // MPFR's bound, the split into double-doubles (2^-106 relative), and the rotation's.
  trig.cs_error = static_cast<double>(cs.error) + std::max(std::fabs(c_hi), std::fabs(s_hi)) * 0x1p-105;
  trig.error = total_error(trig.cs_error, trig.c, trig.s);
  trig.ieee_known = true;
  trig.c_ieee = c_hi;
  trig.s_ieee = s_hi;
  return trig;
}

constexpr double kExactIntegerLimit = 0x1p53;  // positions exactly representable as doubles

// The fast path for one (token, pair), or nothing (the caller takes MPFR): see fast_trig.h's domain.
std::optional<PairTrig> fast_pair_trig(const Spec& spec, const Plan& plan, const FastPlan& fast,
                                       std::span<const std::int64_t> position, int j, Model model) {
  if (!fast.usable) return std::nullopt;
  const std::int64_t p = position[plan.component[j]];
  if (p > kExactIntegerLimit || p < -kExactIntegerLimit) return std::nullopt;
  const bool inverse = spec.direction == Direction::inverse;
  double m = 1;
  std::array<double, 3> theta{};
  double zero_angle = 1;  // the signed zero angle when the angle is zero, else nonzero
  if (model == Model::f32_recipe) {
    // RN32(RN32(p)·RN32(θ)): p exact as a double, the product of two 24-bit significands exact.
    const double p32 = round_to_format(static_cast<double>(p), Dtype::f32);
    double product = round_to_format(p32 * plan.theta_f32[j], Dtype::f32);
    if (inverse) product = -product;
    theta = {product, 0, 0};
    if (product == 0) zero_angle = product;
  } else {
    m = inverse ? -static_cast<double>(p) : static_cast<double>(p);
    theta = fast.theta[j];
    if (p == 0) zero_angle = inverse ? -(0.0 * theta[0]) : 0.0 * theta[0];  // as MPFR: ±(0·θ)
  }
  PairTrig trig;
  trig.fast = true;
  trig.cs_error = std::fabs(fast.attention.hi) * kFastPairError;
  if (zero_angle == 0) {
    // cos(±0)·A = A; sin(±0)·A = ±0 with the IEEE sign of the product.
    trig.c = fast.attention;
    trig.s = {zero_angle * fast.attention.hi, 0};
    trig.ieee_known = true;
    trig.c_ieee = trig.c.hi;
    trig.s_ieee = trig.s.hi;
  } else {
    const std::optional<CosSinDD> cs = cos_sin_of_multiple(m, theta);
    if (!cs) return std::nullopt;
    trig.c = multiply(cs->cos, fast.attention);
    trig.s = multiply(cs->sin, fast.attention);
  }
  trig.error = total_error(trig.cs_error, trig.c, trig.s);
  return trig;
}

// Decides RN64 of the exact cos·A and sin·A for the IEEE special values, which multiply them in
// double arithmetic (where x·c can overflow, the exact double matters); MPFR when undecided.
void settle_ieee(PairTrig& trig, const Spec& spec, const Plan& plan, std::span<const std::int64_t> position, int j,
                 Model model, int precision) {
  if (trig.ieee_known) return;
  const double error = trig.cs_error * (1 + 0x1p-40);
  const std::optional<double> c = round_if_decided(trig.c, error, Dtype::f64);
  const std::optional<double> s = round_if_decided(trig.s, error, Dtype::f64);
  if (c && s) {
    trig.c_ieee = *c;
    trig.s_ieee = *s;
  } else {
    const PairTrig exact = mpfr_pair_trig(spec, plan, position, j, model, precision);
    trig.c_ieee = exact.c_ieee;
    trig.s_ieee = exact.s_ieee;
  }
  trig.ieee_known = true;
}

// The pair (x, y)'s rotation in long double, for pairs outside the double-double range: each
// product and the sum round once (2^-64 relative) and c, s carry 2^-64 relative from their
// conversion: error ≤ 3·2^-64·(|x|·|c| + |y|·|s|) + 2^-64·|result| plus (|x|+|y|)·cs_error.
long double rotate_long_double(double x, DoubleDouble c, double y, DoubleDouble s) {
  const long double cl = static_cast<long double>(c.hi) + c.lo;
  const long double sl = static_cast<long double>(s.hi) + s.lo;
  return static_cast<long double>(x) * cl - static_cast<long double>(y) * sl;
}

}  // namespace

struct ApplyPlan::Constants {
  Spec spec;
  Options options;
  Plan plan;      // at options.precision_bits: the MPFR path, the cold path's pair table, the recipe's θ
  FastPlan fast;  // Path::fast only: the double words of 256-bit θ'_j and A
};

namespace {

// The constants of apply / evaluate for one spec and options (validated here, once).
std::unique_ptr<const ApplyPlan::Constants> make_constants(const Spec& spec, Options options) {
  validate(spec);
  if (options.precision_bits < 64) throw std::invalid_argument("precision_bits: expected >= 64");
  auto k = std::make_unique<ApplyPlan::Constants>();
  k->spec = spec;
  k->options = options;
  PrecisionScope scope(options.precision_bits);
  k->plan = make_plan(spec, options.model, options.precision_bits);
  if (options.path == Path::fast) {
    if (options.precision_bits >= kFastPlanBits) {
      k->fast = make_fast_plan(k->plan);
    } else {
      PrecisionScope fast_scope(kFastPlanBits);
      k->fast = make_fast_plan(make_plan(spec, Model::exact, kFastPlanBits));
    }
  }
  return k;
}

// The finite pairs the hot loop takes: both components finite, not both zero (IEEE special values,
// decided by settle_ieee), largest magnitude inside (2^-900, 2^900) (outside, the cold path decides).
// Comparisons with NaN are false, so a NaN component is not ordinary.
inline bool ordinary_pair(double x, double y) {
  const double ax = std::fabs(x), ay = std::fabs(y);
  return ax < 0x1p900 && ay < 0x1p900 && (ax > 0x1p-900 || ay > 0x1p-900);
}

// Where one pair's outputs go: the rounded values, and evaluate's exact values (null for apply).
struct PairOut {
  double& first;
  double& second;
  long double* exact_first;
  long double* exact_second;
};

// One pair (x, y) of a token by the general rules: IEEE special values, exact zeros at angle 0,
// magnitudes outside the double-double range, and the MPFR cold path where the rounding test does
// not decide. rotate_rounded's hot loop sends here every pair it does not finish itself; for the
// pairs it does finish this gives the same values (the same double-double rotation and test).
// Out of line: kept out of the hot loop's registers.
[[gnu::noinline]] void rotate_pair(const ApplyPlan::Constants& k, PairTrig& cs, std::span<const std::int64_t> position,
                                   int j, double x, double y, PairOut out) {
  const Spec& spec = k.spec;
  const Options& options = k.options;
  const bool fast_path = options.path == Path::fast;
  const Dtype dtype = spec.dtype;
  if (!std::isfinite(x) || !std::isfinite(y) || (x == 0 && y == 0)) {
    // IEEE 754 arithmetic of the formula with the exact cos/sin rounded to double (their
    // signs and zeroness are the exact ones): NaN propagates, Inf·0 = NaN, signed zeros.
    settle_ieee(cs, spec, k.plan, position, j, options.model, options.precision_bits);
    out.first = x * cs.c_ieee - y * cs.s_ieee;
    out.second = x * cs.s_ieee + y * cs.c_ieee;
    if (out.exact_first) {
      *out.exact_first = std::isfinite(out.first) ? out.first : 0.0L;  // finite: ±0
      *out.exact_second = std::isfinite(out.second) ? out.second : 0.0L;
    }
    return;
  }
  // An exactly zero output: at angle 0 (sin exactly ±0) the first component is x·c, zero when
  // x is; the second is y·c, zero when y is. No rounding test can decide an exact zero, so
  // take its IEEE sign from the formula directly. (cos is never exactly 0: cos of a nonzero
  // algebraic angle is transcendental, Lindemann–Weierstrass.)
  const bool angle_zero = cs.s.hi == 0;
  const bool first_zero = angle_zero && x == 0;
  const bool second_zero = angle_zero && y == 0;
  const double largest = std::max(std::fabs(x), std::fabs(y));
  const bool in_range = largest > 0x1p-900 && largest < 0x1p900;
  const double error = (std::fabs(x) + std::fabs(y)) * cs.error;
  std::optional<double> first, second;
  if (first_zero) first = x * cs.c.hi - y * cs.s.hi;
  if (second_zero) second = x * cs.s.hi + y * cs.c.hi;
  if (in_range) {
    const DoubleDouble v1 = rotate_component(x, cs.c, y, cs.s);
    const DoubleDouble v2 = rotate_component(x, cs.s, -y, cs.c);
    if (!first) first = fast_path ? round_if_decided_fast(v1, error, dtype) : round_if_decided(v1, error, dtype);
    if (!second) second = fast_path ? round_if_decided_fast(v2, error, dtype) : round_if_decided(v2, error, dtype);
    if (out.exact_first) {
      *out.exact_first = first_zero ? 0.0L : static_cast<long double>(v1.hi) + v1.lo;
      *out.exact_second = second_zero ? 0.0L : static_cast<long double>(v2.hi) + v2.lo;
    }
  } else if (out.exact_first) {
    *out.exact_first = first_zero ? 0.0L : rotate_long_double(x, cs.c, y, cs.s);
    *out.exact_second = second_zero ? 0.0L : rotate_long_double(x, cs.s, -y, cs.c);
  }
  out.first = first ? *first : slow_component(spec, position, j, x, y, false, options.model, options.precision_bits);
  out.second = second ? *second : slow_component(spec, position, j, x, y, true, options.model, options.precision_bits);
}

// One token's cos·A, sin·A and error bounds pair by pair, as arrays (the AVX2 rows load four pairs'
// values at once); `hot`: every pair may take the hot loop (fast path, nonzero angle).
struct TokenTable {
  std::vector<double> c_hi, c_lo, s_hi, s_lo, error;
  bool hot = false;
  explicit TokenTable(int pairs)
      : c_hi(static_cast<std::size_t>(pairs)), c_lo(c_hi), s_hi(c_hi), s_lo(c_hi), error(c_hi) {}
  void fill(const std::vector<PairTrig>& trig, bool fast_path) {
    hot = fast_path;
    for (std::size_t j = 0; j < trig.size(); ++j) {
      c_hi[j] = trig[j].c.hi;
      c_lo[j] = trig[j].c.lo;
      s_hi[j] = trig[j].s.hi;
      s_lo[j] = trig[j].s.lo;
      error[j] = trig[j].error;
      hot = hot && trig[j].s.hi != 0;
    }
  }
  TrigRow row() const { return {c_hi.data(), c_lo.data(), s_hi.data(), s_lo.data(), error.data(), 0}; }
};

// The hot loop for one pair: an ordinary pair at a nonzero angle (sin ≠ 0: neither output is an
// exact zero) on the fast path, both roundings decided; everything else goes to rotate_pair.
// Inlined into rotate_rounded, so that each of its clones computes it with that clone's instructions.
// Returns whether the pair went to rotate_pair.
[[gnu::always_inline]] inline bool rotate_one_pair(const ApplyPlan::Constants& k, PairTrig& cs, PairDims pd,
                                                   std::span<const std::int64_t> position, int j, bool fast_path,
                                                   const FastRounding& rounding, const double* in, double* out,
                                                   long double* out_exact) {
  const double x = in[pd.first];
  const double y = in[pd.second];
  if (fast_path && cs.s.hi != 0 && ordinary_pair(x, y)) {
    const double error = (std::fabs(x) + std::fabs(y)) * cs.error;
    const DoubleDouble v1 = rotate_component(x, cs.c, y, cs.s);
    const DoubleDouble v2 = rotate_component(x, cs.s, -y, cs.c);
    double first = 0, second = 0;
    const bool first_decided = decide_rounding_fast(v1, error, rounding, first);
    const bool second_decided = decide_rounding_fast(v2, error, rounding, second);
    if (first_decided && second_decided) {
      out[pd.first] = first;
      out[pd.second] = second;
      if (out_exact) {
        out_exact[pd.first] = static_cast<long double>(v1.hi) + v1.lo;
        out_exact[pd.second] = static_cast<long double>(v2.hi) + v2.lo;
      }
      return false;
    }
  }
  rotate_pair(k, cs, position, j, x, y,
              {out[pd.first], out[pd.second], out_exact ? out_exact + pd.first : nullptr,
               out_exact ? out_exact + pd.second : nullptr});
  return true;
}

#ifdef ROPECHECK_AVX2_ROWS
#define ROPECHECK_AVX2 __attribute__((target("avx2,fma")))
#define ROPECHECK_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

// decide_rounding_fast's constants for one dtype, in AVX2 registers.
struct RoundingLanes {
  __m256d sign_pd;
  __m256i sign;
  __m256i lowest_field_minus_one;  // biased exponent > this: exponent ≥ lowest
  __m256i emax_field;              // biased exponent < this: exponent < emax
  __m128i shift;
  bool rounds;                     // shift > 0
  __m256i dropped, half_dropped, one, mantissa, precision;
  __m256d margin_scale, halve;
};

ROPECHECK_AVX2_INLINE RoundingLanes rounding_lanes(const FastRounding& f) {
  RoundingLanes k;
  k.sign_pd = _mm256_set1_pd(-0.0);
  k.sign = _mm256_castpd_si256(k.sign_pd);
  k.lowest_field_minus_one = _mm256_set1_epi64x(f.lowest + 1023 - 1);
  k.emax_field = _mm256_set1_epi64x(f.emax + 1023);
  k.shift = _mm_cvtsi32_si128(f.shift);
  k.rounds = f.shift > 0;
  const std::uint64_t dropped = k.rounds ? (std::uint64_t{1} << f.shift) - 1 : 0;
  k.dropped = _mm256_set1_epi64x(static_cast<long long>(dropped));
  k.half_dropped = _mm256_set1_epi64x(static_cast<long long>(dropped >> 1));
  k.one = _mm256_set1_epi64x(1);
  k.mantissa = _mm256_set1_epi64x((std::int64_t{1} << 52) - 1);
  k.precision = _mm256_set1_epi64x(f.precision);  // half-width field: exponent − (p − 1) − 1
  k.margin_scale = _mm256_set1_pd(0x1p-49);
  k.halve = _mm256_set1_pd(0.5);
  return k;
}

// two_sum(a, b) of double_double.h: s + e = a + b.
ROPECHECK_AVX2_INLINE __m256d two_sum_lanes(__m256d a, __m256d b, __m256d& e) {
  const __m256d s = _mm256_add_pd(a, b);
  const __m256d bb = _mm256_sub_pd(s, a);
  e = _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b, bb));
  return s;
}

// rotate_component(x, c, y, s): x·c − y·s in double-double (hi returned, lo in `lo`).
ROPECHECK_AVX2_INLINE __m256d rotate_lanes(__m256d x, __m256d c_hi, __m256d c_lo, __m256d y, __m256d s_hi, __m256d s_lo,
                                           __m256d sign_pd, __m256d& lo) {
  const __m256d xc_hi = _mm256_mul_pd(x, c_hi), xc_lo = _mm256_fmsub_pd(x, c_hi, xc_hi);  // 2Prod
  const __m256d ys_hi = _mm256_mul_pd(y, s_hi), ys_lo = _mm256_fmsub_pd(y, s_hi, ys_hi);
  __m256d sum_lo;
  const __m256d sum_hi = two_sum_lanes(xc_hi, _mm256_xor_pd(ys_hi, sign_pd), sum_lo);
  const __m256d tail = _mm256_add_pd(
      sum_lo, _mm256_add_pd(_mm256_sub_pd(xc_lo, ys_lo), _mm256_sub_pd(_mm256_mul_pd(x, c_lo), _mm256_mul_pd(y, s_lo))));
  return two_sum_lanes(sum_hi, tail, lo);
}

// decide_rounding_fast(hi + lo, error): all-ones lanes where decided, the rounded value in `r`.
ROPECHECK_AVX2_INLINE __m256d decide_lanes(__m256d hi, __m256d lo, __m256d error, const RoundingLanes& k, __m256d& r) {
  const __m256i bits = _mm256_castpd_si256(hi);
  const __m256i sign_bits = _mm256_and_si256(bits, k.sign);
  const __m256i magnitude = _mm256_xor_si256(bits, sign_bits);
  const __m256i field = _mm256_srli_epi64(magnitude, 52);
  const __m256i in_range =
      _mm256_and_si256(_mm256_cmpgt_epi64(field, k.lowest_field_minus_one), _mm256_cmpgt_epi64(k.emax_field, field));
  __m256i rounded = magnitude;
  if (k.rounds) {
    const __m256i kept_lowest = _mm256_and_si256(_mm256_srl_epi64(magnitude, k.shift), k.one);
    rounded = _mm256_andnot_si256(k.dropped, _mm256_add_epi64(_mm256_add_epi64(magnitude, k.half_dropped), kept_lowest));
  }
  r = _mm256_castsi256_pd(_mm256_or_si256(rounded, sign_bits));
  const __m256i power_of_two = _mm256_cmpeq_epi64(_mm256_and_si256(rounded, k.mantissa), _mm256_setzero_si256());
  const __m256d half_width =
      _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_sub_epi64(_mm256_srli_epi64(rounded, 52), k.precision), 52));
  const __m256d distance = _mm256_add_pd(_mm256_sub_pd(hi, r), lo);
  const __m256d away = _mm256_xor_pd(distance, _mm256_and_pd(r, k.sign_pd));  // signbit(r) ? −distance : distance
  const __m256d margin = _mm256_mul_pd(_mm256_add_pd(_mm256_andnot_pd(k.sign_pd, distance), error), k.margin_scale);
  const __m256d toward_zero_width =
      _mm256_blendv_pd(half_width, _mm256_mul_pd(half_width, k.halve), _mm256_castsi256_pd(power_of_two));
  const __m256d inside =
      _mm256_and_pd(_mm256_cmp_pd(_mm256_add_pd(_mm256_add_pd(away, error), margin), half_width, _CMP_LT_OQ),
                    _mm256_cmp_pd(_mm256_sub_pd(_mm256_add_pd(error, margin), away), toward_zero_width, _CMP_LT_OQ));
  return _mm256_and_pd(inside, _mm256_castsi256_pd(in_range));
}

// The hot loop four pairs at a time, for CPUs with AVX2 and FMA (picked at run time: the library is
// built for baseline x86-64). Each lane does the scalar hot loop's operations on one pair —
// rotate_component (2Prod with the FMA, 2Sum, the tail), the bound (|x| + |y|)·error, and
// decide_rounding_fast's integer add-and-mask and interval test — in the same order, so a lane's
// decision and value are the scalar loop's; a group of four is stored only when all eight outputs
// are decided and all four pairs are ordinary (ordinary_pair). Groups that are not (special values,
// undecided roundings, magnitudes out of range) are left to the scalar loop: their first pair's
// index goes to `left`, and the count is returned. Pairs past the last multiple of four are the
// caller's too. Layout: half — x of pair j at dim j, y at dim j + half; interleaved — x at 2j, y at 2j + 1.
// With `out_exact` (evaluate), a stored group's exact values too, from the same double-double.
ROPECHECK_AVX2 int rotate_row_avx2(const TrigRow& t, int pairs, bool interleaved, int half, const FastRounding& f,
                                   const double* in, double* out, long double* out_exact, int* left) {
  const RoundingLanes k = rounding_lanes(f);
  const __m256d huge = _mm256_set1_pd(0x1p900), tiny = _mm256_set1_pd(0x1p-900);
  int left_count = 0;
  for (int j = 0; j + 4 <= pairs; j += 4) {
    __m256d x, y;
    if (interleaved) {
      const __m256d a = _mm256_loadu_pd(in + 2 * j), b = _mm256_loadu_pd(in + 2 * j + 4);  // x y x y | x y x y
      x = _mm256_permute4x64_pd(_mm256_unpacklo_pd(a, b), 0xD8);
      y = _mm256_permute4x64_pd(_mm256_unpackhi_pd(a, b), 0xD8);
    } else {
      x = _mm256_loadu_pd(in + j);
      y = _mm256_loadu_pd(in + j + half);
    }
    const __m256d ax = _mm256_andnot_pd(k.sign_pd, x), ay = _mm256_andnot_pd(k.sign_pd, y);
    const __m256d ordinary =
        _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(ax, huge, _CMP_LT_OQ), _mm256_cmp_pd(ay, huge, _CMP_LT_OQ)),
                      _mm256_or_pd(_mm256_cmp_pd(ax, tiny, _CMP_GT_OQ), _mm256_cmp_pd(ay, tiny, _CMP_GT_OQ)));
    const __m256d c_hi = _mm256_loadu_pd(t.c_hi + j), c_lo = _mm256_loadu_pd(t.c_lo + j);
    const __m256d s_hi = _mm256_loadu_pd(t.s_hi + j), s_lo = _mm256_loadu_pd(t.s_lo + j);
    const __m256d error = _mm256_mul_pd(_mm256_add_pd(ax, ay), _mm256_loadu_pd(t.error + j));
    __m256d v1_lo, v2_lo;
    const __m256d v1_hi = rotate_lanes(x, c_hi, c_lo, y, s_hi, s_lo, k.sign_pd, v1_lo);
    const __m256d v2_hi = rotate_lanes(x, s_hi, s_lo, _mm256_xor_pd(y, k.sign_pd), c_hi, c_lo, k.sign_pd, v2_lo);
    __m256d r1, r2;
    const __m256d decided = _mm256_and_pd(decide_lanes(v1_hi, v1_lo, error, k, r1), decide_lanes(v2_hi, v2_lo, error, k, r2));
    if (_mm256_movemask_pd(_mm256_and_pd(ordinary, decided)) != 0xF) {
      left[left_count++] = j;
      continue;
    }
    if (interleaved) {
      const __m256d a = _mm256_permute4x64_pd(r1, 0xD8), b = _mm256_permute4x64_pd(r2, 0xD8);
      _mm256_storeu_pd(out + 2 * j, _mm256_unpacklo_pd(a, b));
      _mm256_storeu_pd(out + 2 * j + 4, _mm256_unpackhi_pd(a, b));
    } else {
      _mm256_storeu_pd(out + j, r1);
      _mm256_storeu_pd(out + j + half, r2);
    }
    if (out_exact) {
      // evaluate's exact values, as rotate_one_pair's: hi + lo of the same double-double, rounded
      // once to long double (x87: no vector form).
      alignas(32) double hi1[4], lo1[4], hi2[4], lo2[4];
      _mm256_store_pd(hi1, v1_hi);
      _mm256_store_pd(lo1, v1_lo);
      _mm256_store_pd(hi2, v2_hi);
      _mm256_store_pd(lo2, v2_lo);
      for (int i = 0; i < 4; ++i) {
        const int first = interleaved ? 2 * (j + i) : j + i;
        const int second = interleaved ? first + 1 : j + i + half;
        out_exact[first] = static_cast<long double>(hi1[i]) + lo1[i];
        out_exact[second] = static_cast<long double>(hi2[i]) + lo2[i];
      }
    }
  }
  return left_count;
}

bool cpu_has_avx2_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#endif

// One head row of one token: the pass-through dims [rotary_dim, head_dim) copied from the input,
// the pairs rotated four at a time by the AVX2 rows where `avx2_row` (the token's trig as arrays,
// every angle nonzero) is given, and by rotate_one_pair otherwise (`trig_of(j)`: pair j's PairTrig).
// `left`: pairs/4 ints of scratch. Returns the number of pairs that went to rotate_pair.
template <class TrigOf>
[[gnu::always_inline]] inline std::int64_t rotate_head(const ApplyPlan::Constants& k, const TrigRow* avx2_row,
                                                       std::span<const std::int64_t> position, TrigOf&& trig_of,
                                                       const FastRounding& rounding, const double* in, double* out,
                                                       long double* out_exact, int* left) {
  const Spec& spec = k.spec;
  const Plan& plan = k.plan;
  const int pairs = spec.rotary_dim / 2;
  const std::int64_t d = spec.head_dim;
  const std::int64_t rotary = spec.rotary_dim;
  const bool fast_path = k.options.path == Path::fast;
  if (out != in) std::copy(in + rotary, in + d, out + rotary);  // pass-through dims, bit for bit
  if (out_exact) std::copy(in + rotary, in + d, out_exact + rotary);
  std::int64_t general = 0;
  int scalar_from = 0;  // pairs [scalar_from, pairs) and the groups left by the AVX2 rows: scalar loop
#ifdef ROPECHECK_AVX2_ROWS
  if (avx2_row) {
    const int count = rotate_row_avx2(*avx2_row, pairs, spec.layout == Layout::interleaved, pairs, rounding, in, out, out_exact,
                                      left);
    for (int g = 0; g < count; ++g) {
      for (int j = left[g]; j < left[g] + 4; ++j) {
        general += rotate_one_pair(k, trig_of(j), plan.dims[j], position, j, fast_path, rounding, in, out, out_exact);
      }
    }
    scalar_from = pairs - pairs % 4;
  }
#else
  (void)avx2_row;
  (void)left;
#endif
  for (int j = scalar_from; j < pairs; ++j) {
    general += rotate_one_pair(k, trig_of(j), plan.dims[j], position, j, fast_path, rounding, in, out, out_exact);
  }
  return general;
}

bool use_avx2_rows(const ApplyPlan::Constants& k) {
#ifdef ROPECHECK_AVX2_ROWS
  return k.options.path == Path::fast && k.spec.rotary_dim / 2 >= 4 && cpu_has_avx2_fma();
#else
  (void)k;
  return false;
#endif
}

// apply and evaluate: correctly rounded outputs into `rounded`, and with `exact` non-empty the
// exact values of evaluate. Every value of both is written: the rotated dims here, the pass-through
// dims [rotary_dim, head_dim) copied from the input (pair_dims: the pairs cover [0, rotary_dim) in
// both layouts). `rounded` may be `input` itself (each pair is read before it is written).
ROPECHECK_FMA_CLONES void rotate_rounded(const ApplyPlan::Constants& k, Shape shape, std::span<const std::int64_t> positions,
                                         std::span<const double> input, std::span<double> rounded,
                                         std::span<long double> exact) {
  const Spec& spec = k.spec;
  const Options& options = k.options;
  const Plan& plan = k.plan;
  const int pairs = spec.rotary_dim / 2;
  const int components = position_components(spec);
  const std::int64_t d = spec.head_dim;
  const bool fast_path = options.path == Path::fast;
  const bool want_exact = !exact.empty();
  const FastRounding rounding = fast_rounding(spec.dtype);
  const bool avx2_rows = use_avx2_rows(k);
  std::vector<int> left(static_cast<std::size_t>(pairs / 4));

  PrecisionScope scope(options.precision_bits);
  WideFrequencies wide(pairs, positions);
  std::vector<PairTrig> trig(static_cast<std::size_t>(pairs));
  TokenTable table(pairs);
  const TrigRow row = table.row();
  for (std::int64_t t = 0; t < shape.tokens; ++t) {
    std::span<const std::int64_t> position(positions.data() + t * components, components);
    for (int j = 0; j < pairs; ++j) {
      std::optional<PairTrig> pair;
      if (fast_path) pair = fast_pair_trig(spec, plan, k.fast, position, j, options.model);
      trig[j] = pair ? *pair : mpfr_pair_trig(spec, plan, position, j, options.model, options.precision_bits, &wide);
    }
    if (avx2_rows) table.fill(trig, fast_path);
    auto trig_of = [&trig](int j) -> PairTrig& { return trig[static_cast<std::size_t>(j)]; };
    for (std::int64_t h = 0; h < shape.heads; ++h) {
      const std::int64_t offset = (t * shape.heads + h) * d;
      rotate_head(k, avx2_rows && table.hot ? &row : nullptr, position, trig_of, rounding, input.data() + offset,
                  rounded.data() + offset, want_exact ? exact.data() + offset : nullptr, left.data());
    }
  }
}

// ApplyPlan::rotate_token: the rows with the caller's cos·A and sin·A (every angle nonzero).
ROPECHECK_FMA_CLONES std::int64_t rotate_token_rows(const ApplyPlan::Constants& k, std::span<const std::int64_t> position,
                                                    const TrigRow& trig, std::int64_t heads, const double* input,
                                                    double* out, long double* exact) {
  const int pairs = k.spec.rotary_dim / 2;
  const std::int64_t d = k.spec.head_dim;
  const FastRounding rounding = fast_rounding(k.spec.dtype);
  thread_local std::vector<int> left;
  left.resize(static_cast<std::size_t>(pairs / 4));
  PairTrig pair;
  auto trig_of = [&trig, &pair](int j) -> PairTrig& {
    pair = PairTrig{};
    pair.c = {trig.c_hi[j], trig.c_lo[j]};
    pair.s = {trig.s_hi[j], trig.s_lo[j]};
    pair.error = trig.error[j];
    pair.cs_error = trig.cs_error;
    pair.fast = true;
    return pair;
  };
  const TrigRow* avx2_row = use_avx2_rows(k) ? &trig : nullptr;
  std::int64_t general = 0;
  for (std::int64_t h = 0; h < heads; ++h) {
    general += rotate_head(k, avx2_row, position, trig_of, rounding, input + h * d, out + h * d,
                           exact ? exact + h * d : nullptr, left.data());
  }
  return general;
}

}  // namespace

ApplyPlan::ApplyPlan(const Spec& spec, Options options) : constants_(make_constants(spec, options)) {}
ApplyPlan::ApplyPlan(ApplyPlan&&) noexcept = default;
ApplyPlan& ApplyPlan::operator=(ApplyPlan&&) noexcept = default;
ApplyPlan::~ApplyPlan() = default;

const Spec& ApplyPlan::spec() const { return constants_->spec; }

std::int64_t ApplyPlan::rotate_token(std::span<const std::int64_t> position, const TrigRow& trig, std::int64_t heads,
                                     const double* input, double* out, long double* exact) const {
  const Constants& k = *constants_;
  if (k.options.path != Path::fast || k.options.model != Model::exact) {
    throw std::invalid_argument("rotate_token: expected a Path::fast plan of the exact model");
  }
  if (static_cast<int>(position.size()) != position_components(k.spec)) {
    throw std::invalid_argument("rotate_token: expected " + std::to_string(position_components(k.spec)) +
                                " position components");
  }
  PrecisionScope scope(k.options.precision_bits);
  return rotate_token_rows(k, position, trig, heads, input, out, exact);
}
const Options& ApplyPlan::options() const { return constants_->options; }

void ApplyPlan::apply_into(Shape shape, std::span<const std::int64_t> positions, std::span<const double> input,
                           std::span<double> out) const {
  check_sizes(constants_->spec, shape, positions, input);
  if (out.size() != input.size()) throw std::invalid_argument("out: expected as many values as the input");
  rotate_rounded(*constants_, shape, positions, input, out, {});
}

void apply_chunked(const ApplyPlan& plan, Shape shape, std::span<const std::int64_t> positions,
                   const std::function<void(std::int64_t first, std::span<double> values)>& load,
                   const std::function<void(std::int64_t first, std::span<const double> values)>& store) {
  (void)checked_elements(plan.spec(), shape, positions);
  const std::int64_t per_token = shape.heads * shape.head_dim;
  const std::int64_t components = position_components(plan.spec());
  if (per_token <= kApplyChunkValues) {
    const std::int64_t chunk_tokens = std::max<std::int64_t>(1, kApplyChunkValues / std::max<std::int64_t>(per_token, 1));
    std::vector<double> buffer(static_cast<std::size_t>(std::min(chunk_tokens, shape.tokens) * per_token));
    for (std::int64_t first = 0; first < shape.tokens; first += chunk_tokens) {
      const std::int64_t tokens = std::min(chunk_tokens, shape.tokens - first);
      const std::span<double> values(buffer.data(), static_cast<std::size_t>(tokens * per_token));
      load(first * per_token, values);
      plan.apply_into({tokens, shape.heads, shape.head_dim}, positions.subspan(first * components, tokens * components),
                      values, values);
      store(first * per_token, values);
    }
    return;
  }
  // A token above the chunk (a 4 GiB .npy given one position is one token of 2^27 heads): its heads
  // in chunks, each rotated at the token's position, so the buffer stays one chunk whatever the shape.
  const std::int64_t chunk_heads = std::max<std::int64_t>(1, kApplyChunkValues / std::max<std::int64_t>(shape.head_dim, 1));
  std::vector<double> buffer(static_cast<std::size_t>(std::min(chunk_heads, shape.heads) * shape.head_dim));
  for (std::int64_t token = 0; token < shape.tokens; ++token) {
    for (std::int64_t head = 0; head < shape.heads; head += chunk_heads) {
      const std::int64_t heads = std::min(chunk_heads, shape.heads - head);
      const std::span<double> values(buffer.data(), static_cast<std::size_t>(heads * shape.head_dim));
      const std::int64_t first = token * per_token + head * shape.head_dim;
      load(first, values);
      plan.apply_into({1, heads, shape.head_dim}, positions.subspan(token * components, components), values, values);
      store(first, values);
    }
  }
}

std::vector<double> ApplyPlan::apply(Shape shape, std::span<const std::int64_t> positions, std::span<const double> input) const {
  check_sizes(constants_->spec, shape, positions, input);
  // Built from the input (one pass that also fills the pass-through dims), then rotated in place:
  // std::vector cannot be allocated without initialising, and zero-filling it first would be a
  // second pass over memory the rotation overwrites.
  std::vector<double> out(input.begin(), input.end());
  apply_into(shape, positions, out, out);
  return out;
}

std::vector<double> apply(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                          std::span<const double> input, Options options) {
  return ApplyPlan(spec, options).apply(shape, positions, input);
}

void apply_into(const Spec& spec, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input,
                std::span<double> out, Options options) {
  ApplyPlan(spec, options).apply_into(shape, positions, input, out);
}

Evaluation evaluate(const Spec& spec, Shape shape, std::span<const std::int64_t> positions,
                    std::span<const double> input, Options options) {
  Evaluation out;
  if (options.model == Model::f32_recipe || options.path == Path::mpfr) {
    out.rounded = apply(spec, shape, positions, input, options);
  }
  if (options.model == Model::f32_recipe) {
    out.exact.reserve(out.rounded.size());
    for (double v : out.rounded) out.exact.push_back(std::isfinite(v) ? v : 0.0L);
    return out;
  }
  if (options.path == Path::fast) {
    out.rounded.resize(input.size());
    out.exact.resize(input.size());
    evaluate_into(spec, shape, positions, input, out.rounded, out.exact, options);
    return out;
  }
  std::vector<double> finite_input(input.begin(), input.end());
  for (double& v : finite_input) {
    if (!std::isfinite(v)) v = 0;  // judged by class only
  }
  const std::vector<Real> exact = rotate_exact(spec, shape, positions, finite_input, 128, Form::elementwise);
  out.exact.reserve(exact.size());
  for (const Real& v : exact) out.exact.push_back(static_cast<long double>(v));
  return out;
}

namespace {

// Pairs outside the fast domain take MPFR's cos/sin: at ≥ 256 bits their error stays below the
// fast path's bound too (the rounded outputs do not depend on the precision: correct rounding is unique).
Options evaluation_options(Options options) {
  if (options.model != Model::f32_recipe && options.path == Path::fast) {
    options.precision_bits = std::max(options.precision_bits, kFastPlanBits);
  }
  return options;
}

}  // namespace

ApplyPlan ApplyPlan::for_evaluation(const Spec& spec, Options options) { return ApplyPlan(spec, evaluation_options(options)); }

void ApplyPlan::evaluate_into(Shape shape, std::span<const std::int64_t> positions, std::span<const double> input,
                              std::span<double> rounded, std::span<long double> exact) const {
  const Spec& spec = constants_->spec;
  const Options& options = constants_->options;
  if (rounded.size() != input.size() || exact.size() != input.size()) {
    throw std::invalid_argument("rounded, exact: expected as many values as the input");
  }
  if (options.model == Model::f32_recipe) {
    // The recipe's correctly rounded result is both (the recipe has no other exact value).
    apply_into(shape, positions, input, rounded);
    for (std::size_t i = 0; i < rounded.size(); ++i) exact[i] = std::isfinite(rounded[i]) ? rounded[i] : 0.0L;
    return;
  }
  if (options.path != Path::fast) {
    const Evaluation e = evaluate(spec, shape, positions, input, options);
    std::copy(e.rounded.begin(), e.rounded.end(), rounded.begin());
    std::copy(e.exact.begin(), e.exact.end(), exact.begin());
    return;
  }
  if (options.precision_bits < kFastPlanBits) {
    for_evaluation(spec, options).evaluate_into(shape, positions, input, rounded, exact);
    return;
  }
  // The double-double rotation's value: error ≤ (|x|+|y|)·error of the pair (≤ 2^-95.9·|A|·(|x|+|y|)),
  // then one rounding to long double (2^-64 relative); outside [2^-900, 2^900] the long double
  // rotation (rotate_long_double). Both ≤ 2^-61·|A|·ρ, ρ = √(x² + y²) (reference/README.md).
  check_shapes(spec, shape, positions, input);
  rotate_rounded(*constants_, shape, positions, input, rounded, exact);
}

void evaluate_into(const Spec& spec, Shape shape, std::span<const std::int64_t> positions, std::span<const double> input,
                   std::span<double> rounded, std::span<long double> exact, Options options) {
  ApplyPlan::for_evaluation(spec, options).evaluate_into(shape, positions, input, rounded, exact);
}

}  // namespace ropecheck::reference
