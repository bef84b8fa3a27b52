// The identity catalog: one property per identity of docs/design.md, each with its formula, its source
// and the derivation of its tolerance next to the code. All tolerances come from the implementation's
// ErrorClaim, propagated by ball arithmetic (proofs/ball.h): an output component c with claimed bound
// b is the ball {c, b} around the exact value; an identity lhs = rhs of exact values holds for the
// computed ones iff their balls intersect. No constant in this file is a tuned tolerance.
#include "proofs/catalog.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include <rapidcheck.h>

#include "proofs/ball.h"
#include "proofs/generators.h"
#include "runner/reference_implementation.h"
#include "reference/attention.h"
#include "reference/rounding.h"
#include "spec/schedule.h"

namespace ropecheck::proofs {
namespace {

using Positions = std::vector<std::int64_t>;
using rc::gen::inRange;

[[noreturn]] void fail(std::string message) {
  throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure, std::move(message));
}
[[noreturn]] void discard(std::string why) {
  throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Discard, std::move(why));
}

std::string hex(const Real& v) { return reference::to_hex(static_cast<double>(v)); }
std::string brief(const Real& v) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.3g", static_cast<double>(v));
  return buffer;
}
std::string show(const Positions& p) {
  std::string s = "(";
  for (std::size_t i = 0; i < p.size(); ++i) s += (i ? "," : "") + std::to_string(p[i]);
  return s + ")";
}

Positions minus(const Positions& a, const Positions& b) {
  Positions r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) r[i] = a[i] - b[i];
  return r;
}
Positions plus(const Positions& a, const Positions& b) {
  Positions r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) r[i] = a[i] + b[i];
  return r;
}
Positions negated(const Positions& a) { return minus(Positions(a.size(), 0), a); }
Spec with_direction(Spec spec, Direction direction) {
  spec.direction = direction;
  return spec;
}
Spec with_layout(Spec spec, Layout layout) {
  spec.layout = layout;
  return spec;
}

// Everything one property evaluation needs: the implementation, the spec, the precision of the
// catalog's own arithmetic and the ledger of comparisons.
class Context {
 public:
  Context(const Implementation& impl, Tally& tally, Spec spec)
      : impl_(impl), tally_(tally), spec_(std::move(spec)), scope_(comparison_bits(impl)) {
    if (!impl_.supports(spec_)) discard("unsupported spec " + to_string(spec_));
    ++tally_.cases;
  }

  // 64 bits beyond what the implementation delivers (≥ 53), so that the rounding of every ball
  // midpoint (≤ 2^-P relative, and carried in its radius anyway) stays far below claimed bounds.
  static int comparison_bits(const Implementation& impl) { return std::max(impl.exact_precision_bits(), 53) + 64; }
  int bits() const { return comparison_bits(impl_); }

  const Implementation& impl() const { return impl_; }
  const Spec& spec() const { return spec_; }
  bool negatives() const { return impl_.supports_negative_positions(); }

  // The identity says lhs = rhs (exact values). `scale` is the quantity's natural magnitude, for the
  // reported discrepancy only.
  template <class Where>
  void expect_equal(const Ball& lhs, const Ball& rhs, const Real& scale, Where&& where) {
    const Comparison c = compare(lhs, rhs);
    record(c.discrepancy, c.allowed, scale);
    if (!c.holds()) {
      fail(std::string(where()) + ": lhs " + hex(lhs.mid) + " (±" + brief(lhs.rad) + "), rhs " + hex(rhs.mid) +
           " (±" + brief(rhs.rad) + "): discrepancy " + brief(c.discrepancy) + " > allowed " + brief(c.allowed) +
           " (" + relative_text(c.discrepancy, scale) + ")");
    }
  }
  // The identity says value ≤ bound (exact values): some point of value's ball is ≤ some point of
  // bound's ball.
  template <class Where>
  void expect_at_most(const Ball& value, const Ball& bound, const Real& scale, Where&& where) {
    const Real excess = value.mid - bound.mid;
    const Real discrepancy = excess > 0 ? excess : Real(0);
    const Real allowed = (value.rad + bound.rad) * (1 + ldexp(Real(1), 8 - bits()));
    record(discrepancy, allowed, scale);
    if (discrepancy > allowed) {
      fail(std::string(where()) + ": value " + hex(value.mid) + " (±" + brief(value.rad) + ") exceeds bound " +
           hex(bound.mid) + " (±" + brief(bound.rad) + ") by " + brief(discrepancy));
    }
  }

  // The attention factor g as a ball: the schedule's few correctly rounded operations stay within
  // 2^(13−P) relative (the bound reference/rope.cpp states for θ'_j).
  Ball attention() const {
    const Real g = attention_factor<Real>(spec_);
    return Ball{g, abs(g) * ldexp(Real(1), 13 - bits())};
  }

  Positions tuple(std::int64_t max_position) const {
    return *gen::position_tuple(spec_, max_position, negatives());
  }
  Positions tuple() const { return tuple(impl_.max_position()); }
  // One tuple per token, row-major [tokens, components] (drawn in token order).
  Positions tuples(std::int64_t tokens) const {
    Positions positions;
    for (std::int64_t t = 0; t < tokens; ++t) {
      const Positions p = tuple();
      positions.insert(positions.end(), p.begin(), p.end());
    }
    return positions;
  }

 private:
  void record(const Real& discrepancy, const Real& allowed, const Real& scale) {
    ++tally_.comparisons;
    // Where the natural magnitude is 0 (a zero input pair, ρ = 0) there is no relative measure: the
    // discrepancy is then only ball-arithmetic width at 0 (√ of a ball around 0), judged against
    // `allowed` through `fraction`; it is left out of the u·ρ column instead of showing as inf.
    const double relative = scale > 0 ? static_cast<double>(Real(discrepancy / scale)) : 0.0;
    const double units = relative / std::ldexp(1.0, -significand_bits(spec_.dtype));
    const double fraction = allowed > 0 ? static_cast<double>(Real(discrepancy / allowed))
                                        : (discrepancy > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    tally_.worst_relative = std::max(tally_.worst_relative, relative);
    tally_.worst_units = std::max(tally_.worst_units, units);
    tally_.worst_fraction = std::max(tally_.worst_fraction, fraction);
  }
  std::string relative_text(const Real& discrepancy, const Real& scale) const {
    const double relative = scale > 0 ? static_cast<double>(Real(discrepancy / scale)) : 0.0;
    if (impl_.exact_precision_bits() > 0) return brief(Real(-std::log2(relative))) + " bits of agreement";
    return brief(Real(relative / std::ldexp(1.0, -significand_bits(spec_.dtype)))) + " u·ρ";
  }

  const Implementation& impl_;
  Tally& tally_;
  Spec spec_;
  reference::PrecisionScope scope_;
};

// ---------------------------------------------------------------------------------------------
// Outputs as balls.

// The implementation's outputs for one call as balls around the exact rotation. A rotary component
// of pair j at token t gets the claimed radius ρ·(relative + per_angle·|φ| + per_position·|m|) +
// absolute (ρ the input pair's norm, φ = m·θ'_j, m the position component driving pair j). When the
// inputs are themselves balls (an earlier output fed back in), the exact map is linear and acts on
// each pair as g·R(φ), of 2-norm g, so each output component moves by at most g·‖(rx, ry)‖ more.
// Pass-through components are claimed bit-identical: radius = the input's radius.
// A non-finite output where the exact one cannot overflow (g·ρ + radius below the dtype's largest
// finite value) violates the claim; where it can, the identity is not applicable: the case is
// discarded.
std::vector<Ball> rotated(Context& ctx, const Spec& spec, Shape shape, const Positions& positions,
                          std::span<const double> input, std::span<const Real> input_radius = {}) {
  const Implementation& impl = ctx.impl();
  if (!impl.supports(spec)) discard("unsupported spec " + to_string(spec));
  std::vector<Ball> out(input.size());
  std::optional<std::vector<Real>> exact = impl.apply_exact(spec, shape, positions, input);
  std::vector<double> rounded;
  if (!exact) rounded = impl.apply(spec, shape, positions, input);
  if ((exact ? exact->size() : rounded.size()) != input.size()) {
    fail(impl.name() + " returned " + std::to_string(exact ? exact->size() : rounded.size()) + " values for " +
         std::to_string(input.size()) + " inputs");
  }
  const ErrorClaim claim = impl.claim(spec);
  const std::vector<Real> theta = reference::frequencies(spec, 64);
  const double g = runner::attention_magnitude(spec);
  const int components = position_components(spec);
  const std::int64_t d = spec.head_dim;
  const Real widen = 1 + ldexp(Real(1), 4 - ctx.bits());  // ρ and the products below, each rounded
  auto radius_of = [&](std::size_t i) { return input_radius.empty() ? Real(0) : input_radius[i]; };
  auto value_of = [&](std::size_t i) { return exact ? (*exact)[i] : Real(rounded[i]); };

  for (std::size_t i = 0; i < input.size(); ++i) out[i] = Ball{value_of(i), radius_of(i)};  // pass-through
  for (std::int64_t t = 0; t < shape.tokens; ++t) {
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const std::int64_t m = positions[t * components + position_component(spec, j)];
      const Real magnitude_m = Real(static_cast<long long>(m < 0 ? -m : m));
      // |φ| from θ'_j at 64 bits: relative error ≤ 2^-50, covered by `widen`... and by 1 + 2^-40 here.
      const Real angle = magnitude_m * theta[j] * (1 + ldexp(Real(1), -40));
      const Real delta = Real(claim.relative) + Real(claim.per_angle) * angle + Real(claim.per_position) * magnitude_m;
      const reference::PairDims pd = reference::pair_dims(spec, j);
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        const std::size_t a = static_cast<std::size_t>((t * shape.heads + h) * d + pd.first);
        const std::size_t b = static_cast<std::size_t>((t * shape.heads + h) * d + pd.second);
        const Real x(input[a]), y(input[b]);
        const Real rho = sqrt(x * x + y * y) * widen;
        Real extra(0);
        if (!input_radius.empty()) extra = Real(g) * sqrt(radius_of(a) * radius_of(a) + radius_of(b) * radius_of(b)) * widen;
        const Real radius = (rho * delta + Real(claim.absolute) + extra) * widen;
        for (std::size_t k : {a, b}) {
          if (!exact && !std::isfinite(rounded[k])) {
            if (Real(g) * rho + radius >= Real(reference::max_finite(spec.dtype))) discard("output may overflow");
            fail(impl.name() + " returned " + reference::to_hex(rounded[k]) + " at token " + std::to_string(t) +
                 ", head " + std::to_string(h) + ", dim " + std::to_string(k % d) + " for finite inputs (" +
                 reference::to_hex(input[a]) + ", " + reference::to_hex(input[b]) + ") whose exact rotation cannot overflow");
          }
          out[k].rad = radius;
        }
      }
    }
  }
  return out;
}

// R_m's 2×2 block of pair j (times g), as the implementation shows it: column 1 is the output for the
// basis vector of the pair's first dim, column 2 for its second (rotating basis vectors yields the
// columns of R_m). One call covers every pair: input Σ_j e_first(j) excites each pair's first dim
// only, since R_m is block diagonal (the catalog's complex_equivalence checks that pairs do not mix).
// Inputs 0 and 1 are exact in every dtype; each entry's ball has ρ = 1.
struct Block {
  Ball e[2][2];
};
Block operator*(const Block& a, const Block& b) {
  Block r;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) r.e[i][k] = a.e[i][0] * b.e[0][k] + a.e[i][1] * b.e[1][k];
  return r;
}
Block transpose(const Block& a) {
  Block r;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) r.e[i][k] = a.e[k][i];
  return r;
}
Block scaled(const Block& a, const Ball& s) {
  Block r;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) r.e[i][k] = a.e[i][k] * s;
  return r;
}
Block identity_block(const Ball& s) {
  Block r;
  r.e[0][0] = s;
  r.e[1][1] = s;
  r.e[0][1] = r.e[1][0] = exact_ball(Real(0));
  return r;
}

// blocks[p][j]: pair j's block at position tuple p.
std::vector<std::vector<Block>> blocks(Context& ctx, const Spec& spec, const std::vector<Positions>& tuples) {
  const std::int64_t d = spec.head_dim;
  const int pairs = spec.rotary_dim / 2;
  const std::int64_t tokens = 2 * static_cast<std::int64_t>(tuples.size());
  std::vector<double> input(static_cast<std::size_t>(tokens * d), 0.0);
  Positions positions;
  for (std::size_t p = 0; p < tuples.size(); ++p) {
    for (int j = 0; j < pairs; ++j) {
      const reference::PairDims pd = reference::pair_dims(spec, j);
      input[(2 * p) * d + pd.first] = 1.0;
      input[(2 * p + 1) * d + pd.second] = 1.0;
    }
    positions.insert(positions.end(), tuples[p].begin(), tuples[p].end());
    positions.insert(positions.end(), tuples[p].begin(), tuples[p].end());
  }
  const std::vector<Ball> out = rotated(ctx, spec, Shape{tokens, 1, d}, positions, input);
  std::vector<std::vector<Block>> result(tuples.size(), std::vector<Block>(pairs));
  for (std::size_t p = 0; p < tuples.size(); ++p) {
    for (int j = 0; j < pairs; ++j) {
      const reference::PairDims pd = reference::pair_dims(spec, j);
      Block& b = result[p][j];
      b.e[0][0] = out[(2 * p) * d + pd.first];
      b.e[1][0] = out[(2 * p) * d + pd.second];
      b.e[0][1] = out[(2 * p + 1) * d + pd.first];
      b.e[1][1] = out[(2 * p + 1) * d + pd.second];
    }
  }
  return result;
}

void expect_blocks_equal(Context& ctx, const Block& lhs, const Block& rhs, const Real& scale, const std::string& what,
                         int pair) {
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k)
      ctx.expect_equal(lhs.e[i][k], rhs.e[i][k], scale, [&] {
        return what + ", pair " + std::to_string(pair) + ", entry (" + std::to_string(i) + "," + std::to_string(k) + ")";
      });
}

// The natural magnitude of each dim of a [rows, head_dim] tensor, for reported discrepancies: the
// pair norm ρ for rotary dims, |x| for pass-through dims.
std::vector<double> dim_scales(const Spec& spec, std::span<const double> data) {
  const std::int64_t d = spec.head_dim;
  std::vector<double> scales(data.size());
  for (std::size_t row = 0; row * d < data.size(); ++row) {
    for (std::int64_t i = 0; i < d; ++i) scales[row * d + i] = std::fabs(data[row * d + i]);
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const reference::PairDims pd = reference::pair_dims(spec, j);
      scales[row * d + pd.first] = scales[row * d + pd.second] =
          std::hypot(data[row * d + pd.first], data[row * d + pd.second]);
    }
  }
  return scales;
}

Ball power(const Ball& b, int k) {
  Ball r = exact_ball(Real(1));
  for (int i = 0; i < k; ++i) r = r * b;
  return r;
}

std::vector<double> pair_norms(const Spec& spec, std::span<const double> head) {
  std::vector<double> norms;
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    const reference::PairDims pd = reference::pair_dims(spec, j);
    norms.push_back(std::hypot(head[pd.first], head[pd.second]));
  }
  return norms;
}

// ---------------------------------------------------------------------------------------------
// relative_matrix / multi_axis_relative: R_mᵀ R_n = R_{n−m} (RoFormer §3.2.2, eq. 16:
// per 2×2 block, cos(A−B) and sin(A−B)), per axis for multi-axis specs (2-D RoPE: docs/rope.md §2).
//
// Through apply: with B_m = g·R_m + E_m the implementation's block (|E| entries ≤ the claim at ρ = 1),
// B_mᵀ·B_n = g²·R_{n−m} + (error) and g·B_{n−m} = g²·R_{n−m} + g·E_{n−m}; the balls of both sides
// contain g²·R_{n−m}, so they must intersect. The vector form applies B_mᵀ to the implementation's
// own F_n(x) for a random x and compares with g·F_{n−m}(x) (= g²·R_{n−m}x), catching data-dependent
// faults (subnormals, cancellation) that basis vectors do not reach.
void check_relative(Context& ctx, const Positions& m, const Positions& n) {
  const Spec& spec = ctx.spec();
  const Positions difference = minus(n, m);
  const auto b = blocks(ctx, spec, {m, n, difference});
  const Ball g = ctx.attention();
  const Real g2 = abs(g.mid * g.mid);
  const std::string what = "R_m^T R_n vs R_{n-m}, m=" + show(m) + ", n=" + show(n);
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    expect_blocks_equal(ctx, transpose(b[0][j]) * b[1][j], scaled(b[2][j], g), g2, what, j);
  }
  const Values x = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(spec.head_dim));
  const Shape shape{1, 1, spec.head_dim};
  const std::vector<Ball> at_n = rotated(ctx, spec, shape, n, x.data);
  const std::vector<Ball> at_difference = rotated(ctx, spec, shape, difference, x.data);
  const std::vector<double> rho = pair_norms(spec, x.data);
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    const reference::PairDims pd = reference::pair_dims(spec, j);
    const Block bt = transpose(b[0][j]);
    const Ball lhs[2] = {bt.e[0][0] * at_n[pd.first] + bt.e[0][1] * at_n[pd.second],
                         bt.e[1][0] * at_n[pd.first] + bt.e[1][1] * at_n[pd.second]};
    const Ball rhs[2] = {g * at_difference[pd.first], g * at_difference[pd.second]};
    for (int c = 0; c < 2; ++c) {
      ctx.expect_equal(lhs[c], rhs[c], g2 * rho[j], [&] {
        return "B_m^T F_n(x) vs g F_{n-m}(x), m=" + show(m) + ", n=" + show(n) + ", pair " + std::to_string(j) +
               ", component " + std::to_string(c);
      });
    }
  }
}

// Two position tuples, ordered so that n − m ≥ 0 per component for implementations without
// negative positions.
std::pair<Positions, Positions> two_tuples(const Context& ctx) {
  Positions m = ctx.tuple(), n = ctx.tuple();
  if (!ctx.negatives()) {
    for (std::size_t i = 0; i < m.size(); ++i)
      if (n[i] < m[i]) std::swap(m[i], n[i]);
  }
  return {m, n};
}

void relative_matrix(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec({.axes = gen::AxesChoice::single}));
  const auto [m, n] = two_tuples(ctx);
  check_relative(ctx, m, n);
}

// multi_axis_relative: R_{m1,m2}ᵀ R_{n1,n2} = R_{n1−m1, n2−m2} (2-D RoPE: docs/rope.md §2), and the axes
// are independent: R_{(m1,…,mc)} = Π_k R_{m_k·e_k} (each pair is driven by one component only, the
// others leave it at R_0 = I). Through apply the product of c blocks carries g^c, the single block g:
// Π_k B_{m_k e_k} vs g^(c−1)·B_m, balls propagated as above.
void multi_axis_relative(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec({.axes = gen::AxesChoice::multi}));
  const auto [m, n] = two_tuples(ctx);
  check_relative(ctx, m, n);
  const Spec& spec = ctx.spec();
  const int c = position_components(spec);
  std::vector<Positions> tuples{m};
  for (int k = 0; k < c; ++k) {
    Positions axis(c, 0);
    axis[k] = m[k];
    tuples.push_back(axis);
  }
  const auto b = blocks(ctx, spec, tuples);
  const Ball g = ctx.attention();
  const Real gc = abs(power(g, c).mid);
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    Block product = b[1][j];
    for (int k = 1; k < c; ++k) product = product * b[1 + k][j];
    expect_blocks_equal(ctx, product, scaled(b[0][j], power(g, c - 1)), gc, "prod_k R_{m_k e_k} vs R_m, m=" + show(m), j);
  }
}

// norm_preservation: ‖R_m x‖ = ‖x‖ per pair (R_m orthogonal: cos² + sin² = 1: a
// rotation keeps the norm; RoFormer §3.2.2). With the attention factor, ‖F_m(x)_j‖ = g·ρ_j. The left side is the
// ball √(a² + b²) of the output balls; the right side g·ρ with ρ computed from exact inputs.
void norm_preservation(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec());
  const Spec& spec = ctx.spec();
  const std::int64_t tokens = *inRange<std::int64_t>(1, 4), heads = *inRange<std::int64_t>(1, 3);
  Positions positions = ctx.tuples(tokens);
  const Values x = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(tokens * heads * spec.head_dim));
  const std::vector<Ball> out = rotated(ctx, spec, Shape{tokens, heads, spec.head_dim}, positions, x.data);
  const Ball g = ctx.attention();
  for (std::int64_t row = 0; row < tokens * heads; ++row) {
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const reference::PairDims pd = reference::pair_dims(spec, j);
      const std::size_t a = row * spec.head_dim + pd.first, b = row * spec.head_dim + pd.second;
      const Ball norm = sqrt(out[a] * out[a] + out[b] * out[b]);
      const Ball rho = sqrt(exact_ball(x.data[a]) * exact_ball(x.data[a]) + exact_ball(x.data[b]) * exact_ball(x.data[b]));
      ctx.expect_equal(norm, g * rho, abs(g.mid) * rho.mid, [&] {
        return "||F_m(x)_j|| vs g*rho, row " + std::to_string(row) + ", pair " + std::to_string(j);
      });
    }
  }
}

// complex_equivalence: R_m x ≡ z·e^{imθ}, z = x₁ + i·x₂ (RoFormer §3.2.1 and §3.4.1,
// Euler's formula). The right side is computed here, independently of the
// implementation: φ = reference::angle (θ'_j from spec/schedule.h times m, at the catalog's
// precision P), then g·(x + iy)·(cos φ + i sin φ). Its balls: φ within |φ|·2^(13−P) (the schedule
// bound of reference/rope.cpp) plus its rounding, so cos φ and sin φ within |φ|·2^(13−P) + 2^(1−P)
// (|cos'| ≤ 1, MPFR correctly rounded); the products and sum propagate by ball arithmetic.
// This is the identity that anchors an implementation to the definition: a flipped sin, a swapped
// layout, a shifted position or base all move z·e^{imθ} while keeping every relative identity.
void complex_equivalence(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec());
  const Spec& spec = ctx.spec();
  const std::int64_t tokens = *inRange<std::int64_t>(1, 4), heads = *inRange<std::int64_t>(1, 4);
  Positions positions = ctx.tuples(tokens);
  const Values x = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(tokens * heads * spec.head_dim));
  const std::vector<Ball> out = rotated(ctx, spec, Shape{tokens, heads, spec.head_dim}, positions, x.data);
  const Ball g = ctx.attention();
  const int components = position_components(spec);
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::span<const std::int64_t> tuple(positions.data() + t * components, components);
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const Real phi = reference::angle(spec, tuple, j, ctx.bits());
      const Real phi_error = abs(phi) * ldexp(Real(1), 13 - ctx.bits()) + ldexp(Real(1), 1 - ctx.bits());
      const Ball c{cos(phi), phi_error}, s{sin(phi), phi_error};
      const reference::PairDims pd = reference::pair_dims(spec, j);
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::size_t a = (t * heads + h) * spec.head_dim + pd.first, b = (t * heads + h) * spec.head_dim + pd.second;
        const Ball zx = exact_ball(x.data[a]), zy = exact_ball(x.data[b]);
        const Ball expected[2] = {g * (zx * c - zy * s), g * (zx * s + zy * c)};
        const Real scale = abs(g.mid) * std::hypot(x.data[a], x.data[b]);
        for (int k = 0; k < 2; ++k) {
          ctx.expect_equal(out[k == 0 ? a : b], expected[k], scale, [&] {
            return std::string(k == 0 ? "Re" : "Im") + "(z e^{i m theta}) at token " + std::to_string(t) + ", head " +
                   std::to_string(h) + ", pair " + std::to_string(j) + ", m=" + std::to_string(tuple[position_component(spec, j)]);
          });
        }
      }
    }
  }
}

// relative_dot: ⟨R_m q, R_n k⟩ = ⟨q, R_{n−m} k⟩ (RoFormer §3.2.2, eq. 16: qᵀR_mᵀR_n k depends on n − m only),
// hence invariant under m, n → m + t, n + t. Over the rotary dims, with the attention factor:
// ⟨F_m q, F_n k⟩ = g²⟨R_m q, R_n k⟩ = g·⟨q, F_{n−m} k⟩. Both sides are sums of products of balls:
// the propagated bound is Σ_j (|a_j|·Δb_j + |b_j|·Δa_j + Δa_j·Δb_j) over components, i.e. to first
// order g·Σ_j ρ_q,j·ρ_k,j·(√2·(δ_m + δ_n)) for a dtype implementation — written out by ball.h.
void relative_dot(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec());
  const Spec& spec = ctx.spec();
  const std::int64_t half = impl.max_position() / 2;
  Positions m = ctx.tuple(half), n = ctx.tuple(half);
  if (!ctx.negatives()) {
    for (std::size_t i = 0; i < m.size(); ++i)
      if (n[i] < m[i]) std::swap(m[i], n[i]);
  }
  Positions shift;
  for (std::size_t i = 0; i < m.size(); ++i) {
    shift.push_back(*inRange<std::int64_t>(ctx.negatives() ? -half : 0, half + 1));
  }
  const Values q = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(spec.head_dim));
  const Values k = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(spec.head_dim));
  const Shape shape{1, 1, spec.head_dim};
  const auto fq_m = rotated(ctx, spec, shape, m, q.data), fk_n = rotated(ctx, spec, shape, n, k.data);
  const auto fk_diff = rotated(ctx, spec, shape, minus(n, m), k.data);
  const auto fq_shift = rotated(ctx, spec, shape, plus(m, shift), q.data);
  const auto fk_shift = rotated(ctx, spec, shape, plus(n, shift), k.data);
  Ball lhs = exact_ball(Real(0)), rhs = exact_ball(Real(0)), shifted = exact_ball(Real(0));
  Real scale(0);
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    const reference::PairDims pd = reference::pair_dims(spec, j);
    for (int dim : {pd.first, pd.second}) {
      lhs = lhs + fq_m[dim] * fk_n[dim];
      rhs = rhs + exact_ball(q.data[dim]) * fk_diff[dim];
      shifted = shifted + fq_shift[dim] * fk_shift[dim];
    }
    scale += Real(std::hypot(q.data[pd.first], q.data[pd.second])) * Real(std::hypot(k.data[pd.first], k.data[pd.second]));
  }
  const Ball g = ctx.attention();
  scale *= g.mid * g.mid;
  ctx.expect_equal(lhs, g * rhs, scale, [&] { return "<F_m q, F_n k> vs g <q, F_{n-m} k>, m=" + show(m) + ", n=" + show(n); });
  ctx.expect_equal(shifted, lhs, scale, [&] {
    return "<F_{m+t} q, F_{n+t} k> vs <F_m q, F_n k>, m=" + show(m) + ", n=" + show(n) + ", t=" + show(shift);
  });
}

// forms_agree: matrix form ≡ complex form ≡ element-wise cos/sin form (RoFormer: R_m x as a
// block-diagonal matrix, eq. 15, as z·e^{imθ}, §3.2.1, and as q ⊗ cos + rotate(q) ⊗ sin, §3.4.2 eq. 34). The implementation's
// output is compared with each of the reference's three independent forms at precision P_f (the
// implementation's own precision when it is the reference, so its forms are checked against each
// other; 128 bits otherwise). Each form's ball is its bound from exact_form_claim
// (runner/reference_implementation.h); the complex form's bound grows with |m|, not |φ|.
void forms_agree(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec({.max_pairs = 32}));
  const Spec& spec = ctx.spec();
  const std::int64_t tokens = *inRange<std::int64_t>(1, 3), heads = *inRange<std::int64_t>(1, 3);
  Positions positions = ctx.tuples(tokens);
  const Shape shape{tokens, heads, spec.head_dim};
  const Values x = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(shape.elements()));
  const std::vector<Ball> out = rotated(ctx, spec, shape, positions, x.data);
  const int form_bits = impl.exact_precision_bits() > 0 ? impl.exact_precision_bits() : 128;
  const Ball g = ctx.attention();
  for (reference::Form form : {reference::Form::matrix, reference::Form::complex, reference::Form::elementwise}) {
    const char* form_name = form == reference::Form::matrix ? "matrix" : form == reference::Form::complex ? "complex" : "elementwise";
    const std::vector<Real> values = reference::rotate_exact(spec, shape, positions, x.data, form_bits, form);
    // Balls of the form's values: the same construction as `rotated`, with the form's claim.
    class FormImplementation final : public Implementation {
     public:
      FormImplementation(const Spec& s, int bits, reference::Form f, const std::vector<Real>& v)
          : claim_(runner::exact_form_claim(s, bits, f)), bits_(bits), values_(v) {}
      std::string name() const override { return "reference form"; }
      std::string selector() const override { return name(); }
      bool supports(const Spec&) const override { return true; }
      runner::ApplyResult run(const Spec&, Shape, std::span<const std::int64_t>, std::span<const double>) const override { return {}; }
      std::optional<std::vector<Real>> apply_exact(const Spec&, Shape, std::span<const std::int64_t>,
                                                   std::span<const double>) const override {
        return values_;
      }
      int exact_precision_bits() const override { return bits_; }

     protected:
      std::optional<ErrorClaim> own_claim(const Spec&) const override { return claim_; }

     private:
      ErrorClaim claim_;
      int bits_;
      const std::vector<Real>& values_;
    };
    const FormImplementation form_impl(spec, form_bits, form, values);
    Tally scratch;
    Context form_ctx(form_impl, scratch, spec);
    const std::vector<Ball> expected = rotated(form_ctx, spec, shape, positions, x.data);
    for (std::int64_t row = 0; row < tokens * heads; ++row) {
      for (int j = 0; j < spec.rotary_dim / 2; ++j) {
        const reference::PairDims pd = reference::pair_dims(spec, j);
        const std::size_t a = row * spec.head_dim + pd.first, b = row * spec.head_dim + pd.second;
        const Real scale = abs(g.mid) * std::hypot(x.data[a], x.data[b]);
        for (std::size_t i : {a, b}) {
          ctx.expect_equal(out[i], expected[i], scale, [&] {
            return std::string("output vs the ") + form_name + " form at " + std::to_string(form_bits) + " bits, row " +
                   std::to_string(row) + ", dim " + std::to_string(i % spec.head_dim);
          });
        }
      }
    }
  }
}

// group_law: R_m R_n = R_{m+n}; R_0 = I; R_{−m} = R_mᵀ = R_m⁻¹; inverse ∘ forward = identity
// (rotations by m·θ form a one-parameter group: angles add; docs/rope.md §3). Through apply, with
// B the forward blocks (g·R) and B⁻ the inverse-direction blocks (g·R_mᵀ, reference/rope.h):
// B_m·B_n vs g·B_{m+n}; B_0 vs g·I; B⁻_m vs B_mᵀ; B_{−m} vs B_mᵀ (negative positions only);
// B⁻_m·B_m vs g²·I. For implementations without exact outputs also the vector form
// F⁻_m(F_m(x)) vs g²·x, feeding the rounded outputs back with their balls (rotated() adds g·‖Δ‖).
void group_law(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec());
  const Spec& spec = ctx.spec();
  const Spec inverse = with_direction(spec, spec.direction == Direction::forward ? Direction::inverse : Direction::forward);
  RC_PRE(impl.supports(spec) && impl.supports(inverse));
  const std::int64_t half = impl.max_position() / 2;
  const Positions m = ctx.tuple(half), n = ctx.tuple(half);
  const Positions zero(m.size(), 0);
  std::vector<Positions> tuples{m, n, plus(m, n), zero};
  if (ctx.negatives()) tuples.push_back(negated(m));
  const auto b = blocks(ctx, spec, tuples);
  const auto b_inverse = blocks(ctx, inverse, {m});
  const Ball g = ctx.attention();
  const Real g1 = abs(g.mid), g2 = g1 * g1;
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    expect_blocks_equal(ctx, b[0][j] * b[1][j], scaled(b[2][j], g), g2, "R_m R_n vs R_{m+n}, m=" + show(m) + ", n=" + show(n), j);
    expect_blocks_equal(ctx, b[3][j], identity_block(g), g1, "R_0 vs I", j);
    expect_blocks_equal(ctx, b_inverse[0][j], transpose(b[0][j]), g1, "inverse-direction R_m vs R_m^T, m=" + show(m), j);
    if (ctx.negatives()) expect_blocks_equal(ctx, b[4][j], transpose(b[0][j]), g1, "R_{-m} vs R_m^T, m=" + show(m), j);
    expect_blocks_equal(ctx, b_inverse[0][j] * b[0][j], identity_block(g * g), g2, "R_m^-1 R_m vs I, m=" + show(m), j);
  }
  if (impl.exact_precision_bits() == 0) {
    const Values x = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(spec.head_dim));
    const Shape shape{1, 1, spec.head_dim};
    const std::vector<Ball> forward = rotated(ctx, spec, shape, m, x.data);
    std::vector<double> middle;
    std::vector<Real> middle_radius;
    for (const Ball& v : forward) {
      middle.push_back(static_cast<double>(v.mid));  // exact: the implementation's dtype values
      middle_radius.push_back(v.rad);
    }
    const std::vector<Ball> back = rotated(ctx, inverse, shape, m, middle, middle_radius);
    const std::vector<double> rho = pair_norms(spec, x.data);
    for (int j = 0; j < spec.rotary_dim / 2; ++j) {
      const reference::PairDims pd = reference::pair_dims(spec, j);
      for (int dim : {pd.first, pd.second}) {
        ctx.expect_equal(back[dim], g * g * exact_ball(x.data[dim]), g2 * rho[j], [&] {
          return "F^-1_m(F_m(x)) vs g^2 x, m=" + show(m) + ", dim " + std::to_string(dim);
        });
      }
    }
  }
}

// layout_permutation: the interleaved and half layouts are the same rotation up to a fixed
// permutation of dims (docs/rope.md §1): pair j is (2j, 2j+1) interleaved and (j, j + r/2) half, both
// rotated by the same angle, so with P: 2j ↦ j, 2j+1 ↦ j + r/2 (identity on pass-through dims),
// F_half(P·x) = P·F_interleaved(x). Both sides are outputs with their claimed balls.
void layout_permutation(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec());
  const Spec interleaved = with_layout(ctx.spec(), Layout::interleaved);
  const Spec half = with_layout(ctx.spec(), Layout::half);
  RC_PRE(impl.supports(interleaved) && impl.supports(half));
  const std::int64_t tokens = *inRange<std::int64_t>(1, 3), heads = *inRange<std::int64_t>(1, 3);
  const std::int64_t d = interleaved.head_dim;
  Positions positions = ctx.tuples(tokens);
  std::vector<std::int64_t> permutation(d);  // interleaved dim → half dim
  for (std::int64_t i = 0; i < d; ++i) permutation[i] = i;
  for (int j = 0; j < interleaved.rotary_dim / 2; ++j) {
    permutation[reference::pair_dims(interleaved, j).first] = reference::pair_dims(half, j).first;
    permutation[reference::pair_dims(interleaved, j).second] = reference::pair_dims(half, j).second;
  }
  const Values x = *gen::values(interleaved.dtype, static_cast<std::size_t>(tokens * heads * d));
  std::vector<double> permuted(x.data.size());
  for (std::int64_t row = 0; row < tokens * heads; ++row)
    for (std::int64_t i = 0; i < d; ++i) permuted[row * d + permutation[i]] = x.data[row * d + i];
  const Shape shape{tokens, heads, d};
  const auto out_interleaved = rotated(ctx, interleaved, shape, positions, x.data);
  const auto out_half = rotated(ctx, half, shape, positions, permuted);
  const Real g = abs(ctx.attention().mid);
  const std::vector<double> scales = dim_scales(interleaved, x.data);
  for (std::int64_t row = 0; row < tokens * heads; ++row) {
    for (std::int64_t i = 0; i < d; ++i) {
      const std::size_t from = row * d + i, to = row * d + permutation[i];
      ctx.expect_equal(out_half[to], out_interleaved[from], g * scales[from], [&] {
        return "F_half(P x) vs P F_interleaved(x), row " + std::to_string(row) + ", interleaved dim " + std::to_string(i);
      });
    }
  }
}

// head_independence: every head uses the same rotation and heads do not mix (multi-head
// attention rotates each head's q, k independently with the same R_m: docs/rope.md §1). (a) The same vector in every
// head gives the same output in every head; (b) each head's output equals the output of a one-head
// call on that head's input alone. Both sides are outputs with their claimed balls.
void head_independence(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec({.max_pairs = 64}));
  const Spec& spec = ctx.spec();
  const std::int64_t tokens = *inRange<std::int64_t>(1, 3), heads = *inRange<std::int64_t>(2, 5);
  const std::int64_t d = spec.head_dim;
  Positions positions = ctx.tuples(tokens);
  const Values one = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(tokens * d));
  std::vector<double> same(static_cast<std::size_t>(tokens * heads * d));
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t h = 0; h < heads; ++h)
      std::copy_n(one.data.begin() + t * d, d, same.begin() + (t * heads + h) * d);
  const auto out_same = rotated(ctx, spec, Shape{tokens, heads, d}, positions, same);
  const Real g = abs(ctx.attention().mid);
  const std::vector<double> one_scales = dim_scales(spec, one.data);
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t h = 1; h < heads; ++h)
      for (std::int64_t i = 0; i < d; ++i)
        ctx.expect_equal(out_same[(t * heads + h) * d + i], out_same[(t * heads) * d + i], g * one_scales[t * d + i], [&] {
          return "same input in every head: head " + std::to_string(h) + " vs head 0, token " + std::to_string(t) +
                 ", dim " + std::to_string(i);
        });
  const Values many = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(tokens * heads * d));
  const auto out_many = rotated(ctx, spec, Shape{tokens, heads, d}, positions, many.data);
  for (std::int64_t h = 0; h < heads; ++h) {
    std::vector<double> alone(static_cast<std::size_t>(tokens * d));
    for (std::int64_t t = 0; t < tokens; ++t)
      std::copy_n(many.data.begin() + (t * heads + h) * d, d, alone.begin() + t * d);
    const auto out_alone = rotated(ctx, spec, Shape{tokens, 1, d}, positions, alone);
    const std::vector<double> alone_scales = dim_scales(spec, alone);
    for (std::int64_t t = 0; t < tokens; ++t)
      for (std::int64_t i = 0; i < d; ++i)
        ctx.expect_equal(out_many[(t * heads + h) * d + i], out_alone[t * d + i], g * alone_scales[t * d + i], [&] {
          return "head " + std::to_string(h) + " of a " + std::to_string(heads) + "-head call vs a one-head call, token " +
                 std::to_string(t) + ", dim " + std::to_string(i);
        });
  }
}

// attention_shift_invariance: softmax(RoPE(Q)·RoPE(K)ᵀ/√d + M)·V is unchanged when every position
// shifts by the same t (RoFormer §3.2.2: scores depend on n − m only; a causal mask compares
// positions, also shift-invariant). Both attentions are evaluated here in ball arithmetic from the
// implementation's rotated Q and K: scores s_ij = ⟨F q_i, F k_j⟩/√d, weights exp(s_ij − c) with
// c the largest score midpoint of the row (an exact constant: softmax is invariant under it),
// outputs Σ_j w_j v_j / Σ_j w_j. ball.h's exp and division rules carry the score errors through.
void attention_shift_invariance(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec({.max_pairs = 32}));
  const Spec& spec = ctx.spec();
  const std::int64_t q_tokens = *inRange<std::int64_t>(1, 4), k_tokens = *inRange<std::int64_t>(1, 5);
  const std::int64_t heads = *inRange<std::int64_t>(1, 3), v_dim = *inRange<std::int64_t>(1, 4);
  const std::int64_t d = spec.head_dim, c = position_components(spec);
  const bool causal = c == 1 && *rc::gen::arbitrary<bool>();
  const std::int64_t half = impl.max_position() / 2;
  Positions q_positions, k_positions, shift;
  for (std::int64_t t = 0; t < q_tokens; ++t) {
    const Positions p = ctx.tuple(half);
    q_positions.insert(q_positions.end(), p.begin(), p.end());
  }
  for (std::int64_t t = 0; t < k_tokens; ++t) {
    const Positions p = ctx.tuple(half);
    k_positions.insert(k_positions.end(), p.begin(), p.end());
  }
  // Causal: key 0 is visible from every query (no all-masked row, where softmax is 0/0).
  if (causal) k_positions[0] = std::min(k_positions[0], *std::min_element(q_positions.begin(), q_positions.end()));
  for (std::int64_t k = 0; k < c; ++k) shift.push_back(*inRange<std::int64_t>(ctx.negatives() ? -half : 0, half + 1));
  const Values q = *gen::moderate_values(spec.dtype, static_cast<std::size_t>(q_tokens * heads * d));
  const Values k = *gen::moderate_values(spec.dtype, static_cast<std::size_t>(k_tokens * heads * d));
  const Values v = *gen::moderate_values(spec.dtype, static_cast<std::size_t>(k_tokens * heads * v_dim));
  Real largest_v(0);
  for (double value : v.data) largest_v = std::max(largest_v, Real(std::fabs(value)));
  const Ball inverse_sqrt_d = exact_ball(Real(1)) / sqrt(exact_ball(Real(d)));

  auto attention = [&](const Positions& qp, const Positions& kp) {
    const auto fq = rotated(ctx, spec, Shape{q_tokens, heads, d}, qp, q.data);
    const auto fk = rotated(ctx, spec, Shape{k_tokens, heads, d}, kp, k.data);
    std::vector<Ball> out(static_cast<std::size_t>(q_tokens * heads * v_dim));
    for (std::int64_t h = 0; h < heads; ++h) {
      for (std::int64_t i = 0; i < q_tokens; ++i) {
        std::vector<Ball> scores;
        std::vector<bool> visible;
        Real top(0);
        bool any = false;
        for (std::int64_t j = 0; j < k_tokens; ++j) {
          Ball dot = exact_ball(Real(0));
          for (std::int64_t x = 0; x < d; ++x) dot = dot + fq[(i * heads + h) * d + x] * fk[(j * heads + h) * d + x];
          scores.push_back(dot * inverse_sqrt_d);
          visible.push_back(!causal || kp[j] <= qp[i]);
          if (visible.back() && (!any || scores.back().mid > top)) top = scores.back().mid;
          any = any || visible.back();
        }
        Ball total = exact_ball(Real(0));
        std::vector<Ball> weights;
        for (std::int64_t j = 0; j < k_tokens; ++j) {
          weights.push_back(visible[j] ? exp(scores[j] - exact_ball(top)) : exact_ball(Real(0)));
          total = total + weights.back();
        }
        for (std::int64_t x = 0; x < v_dim; ++x) {
          Ball sum = exact_ball(Real(0));
          for (std::int64_t j = 0; j < k_tokens; ++j) sum = sum + weights[j] * exact_ball(v.data[(j * heads + h) * v_dim + x]);
          out[(i * heads + h) * v_dim + x] = sum / total;
        }
      }
    }
    return out;
  };
  Positions q_shifted, k_shifted;
  for (std::int64_t t = 0; t < q_tokens; ++t)
    for (std::int64_t k2 = 0; k2 < c; ++k2) q_shifted.push_back(q_positions[t * c + k2] + shift[k2]);
  for (std::int64_t t = 0; t < k_tokens; ++t)
    for (std::int64_t k2 = 0; k2 < c; ++k2) k_shifted.push_back(k_positions[t * c + k2] + shift[k2]);
  const auto before = attention(q_positions, k_positions);
  const auto after = attention(q_shifted, k_shifted);
  for (std::size_t i = 0; i < before.size(); ++i) {
    ctx.expect_equal(after[i], before[i], largest_v, [&] {
      return "attention output " + std::to_string(i) + " after shifting every position by " + show(shift) +
             (causal ? " (causal)" : "");
    });
  }
}

// long_term_decay (RoFormer §3.4.3): with h_i = q_[2i:2i+1]·k*_[2i:2i+1] and
// S_j = Σ_{k<j} e^{irθ_k}, r = m − n:
// (a) |Σ_i h_i e^{irθ_i}| ≤ (max_i |h_{i+1} − h_i|)·Σ_j |S_{j+1}| (Abel summation, h_{d/2} = 0),
//     from reference::decay_bound at the catalog's precision (a handful of roundings per term:
//     both sides within (d/2)·2^(8−P) relative).
// (b) the implementation's score ⟨F_m q, F_n k⟩ = g²·Re Σ_i h_i e^{irθ_i} (complex form of the dot
//     product) is at most g² times that modulus, hence within the RoFormer bound too.
// (c) the average (1/(d/2))·Σ_j |S_j| equals (d/2 + 1)/2 at r = 0 (S_j = j) and decays: its mean
//     over any W consecutive distances is at most (1/(d/2))·Σ_j √(j + Σ_{k≠l<j} min(1, 1/(W|sin(
//     (θ_k − θ_l)/2)|))) — by Cauchy–Schwarz, mean|S_j| ≤ √(mean|S_j|²), and mean|S_j|² = j +
//     Σ_{k≠l} mean e^{ir(θ_k−θ_l)}, a geometric sum of modulus ≤ 1/(W|sin(α/2)|).
void long_term_decay(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec({.axes = gen::AxesChoice::single, .max_pairs = 64}));
  const Spec& spec = ctx.spec();
  const int pairs = spec.rotary_dim / 2;
  const auto [m, n] = two_tuples(ctx);
  const Values q = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(spec.head_dim));
  const Values k = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(spec.head_dim));
  // r = m − n for the forward direction; the inverse direction rotates by −φ, i.e. r = n − m.
  const std::int64_t r = spec.direction == Direction::forward ? m[0] - n[0] : n[0] - m[0];
  const reference::DecayBound bound = reference::decay_bound(spec, r, q.data, k.data, ctx.bits());
  const Real slack = Real(pairs) * ldexp(Real(1), 8 - ctx.bits());
  Real scale(0);
  for (int j = 0; j < pairs; ++j) {
    const reference::PairDims pd = reference::pair_dims(spec, j);
    scale += Real(std::hypot(q.data[pd.first], q.data[pd.second])) * Real(std::hypot(k.data[pd.first], k.data[pd.second]));
  }
  ctx.expect_at_most(Ball{bound.lhs, abs(bound.lhs) * slack}, Ball{bound.rhs, abs(bound.rhs) * slack}, scale,
                     [&] { return "RoFormer bound |sum h_i e^{i r theta_i}| <= max|h_{i+1}-h_i| sum|S_j|, r=" + std::to_string(r); });
  const Shape shape{1, 1, spec.head_dim};
  const auto fq = rotated(ctx, spec, shape, m, q.data), fk = rotated(ctx, spec, shape, n, k.data);
  Ball score = exact_ball(Real(0));
  for (int j = 0; j < pairs; ++j) {
    const reference::PairDims pd = reference::pair_dims(spec, j);
    for (int dim : {pd.first, pd.second}) score = score + fq[dim] * fk[dim];
  }
  const Ball g = ctx.attention();
  const Ball magnitude{abs(score.mid), score.rad};
  // m and n captured by copy: structured bindings are captured by reference only from clang 16 on.
  ctx.expect_at_most(magnitude, g * g * Ball{bound.lhs, abs(bound.lhs) * slack}, abs(g.mid * g.mid) * scale,
                     [&, m = m, n = n] { return "|<F_m q, F_n k>| <= g^2 |sum h_i e^{i r theta_i}|, m=" + show(m) + ", n=" + show(n); });

  const Real at_zero = reference::decay_average(spec, 0, ctx.bits());
  const Real expected_at_zero = Real(pairs + 1) / 2;
  ctx.expect_equal(Ball{at_zero, at_zero * slack}, exact_ball(expected_at_zero), expected_at_zero,
                   [&] { return std::string("decay average at r = 0 vs (d/2 + 1)/2"); });
  constexpr int window = 16;
  const std::int64_t start = *inRange<std::int64_t>(0, (std::int64_t{1} << 31) - window);
  Real mean(0);
  for (int i = 0; i < window; ++i) mean += reference::decay_average(spec, start + i, ctx.bits());
  mean /= window;
  const std::vector<Real> theta = reference::frequencies(spec, ctx.bits());
  Real cross(0), window_bound(0);  // cross = Σ_{k≠l<j} min(1, 1/(W|sin((θ_k−θ_l)/2)|)), grown with j
  for (int j = 1; j <= pairs; ++j) {
    for (int l = 0; l < j - 1; ++l) {
      const Real s = abs(sin((theta[j - 1] - theta[l]) / 2)) * window;
      cross += 2 * (s > 1 ? Real(1 / s) : Real(1));
    }
    window_bound += sqrt(Real(j) + cross);
  }
  window_bound /= pairs;
  ctx.expect_at_most(Ball{mean, mean * slack}, Ball{window_bound, window_bound * slack}, expected_at_zero, [&] {
    return "mean decay average over distances [" + std::to_string(start) + ", " + std::to_string(start + window) +
           ") vs its Cauchy-Schwarz bound";
  });
}

// passthrough: dims [rotary_dim, head_dim) of every head leave the implementation bit for bit
// (docs/rope.md §1: partial rotary; docs/design.md: pass-through dims must be bit-identical). No tolerance:
// the claim is exactness, compared on the IEEE bit patterns (so −0 ≠ +0).
void passthrough(const Implementation& impl, Tally& tally) {
  Context ctx(impl, tally, *gen::spec({.partial_rotary = true, .max_pairs = 64}));
  const Spec& spec = ctx.spec();
  const std::int64_t tokens = *inRange<std::int64_t>(1, 4), heads = *inRange<std::int64_t>(1, 4);
  const std::int64_t d = spec.head_dim;
  Positions positions = ctx.tuples(tokens);
  const Shape shape{tokens, heads, d};
  const Values x = *gen::values(input_dtype_of(spec), static_cast<std::size_t>(shape.elements()));
  const std::vector<double> out = impl.apply(spec, shape, positions, x.data);
  const std::optional<std::vector<Real>> exact = impl.apply_exact(spec, shape, positions, x.data);
  for (std::int64_t row = 0; row < tokens * heads; ++row) {
    for (std::int64_t i = spec.rotary_dim; i < d; ++i) {
      const std::size_t at = static_cast<std::size_t>(row * d + i);
      const bool same_bits = std::memcmp(&out.at(at), &x.data[at], sizeof(double)) == 0;
      const bool same_exact = !exact || (*exact)[at] == Real(x.data[at]);
      const Real discrepancy = same_bits && same_exact ? Real(0) : Real(std::numeric_limits<double>::infinity());
      ctx.expect_equal(Ball{discrepancy, Real(0)}, exact_ball(Real(0)), Real(1), [&] {
        return "pass-through dim " + std::to_string(i) + " of row " + std::to_string(row) + ": in " +
               reference::to_hex(x.data[at]) + ", out " + reference::to_hex(out.at(at)) +
               (exact ? ", exact out " + hex((*exact)[at]) : std::string());
      });
    }
  }
}

constexpr Identity kCatalog[] = {
    {"relative_matrix", "R_m^T R_n = R_{n-m}", "RoFormer 3.2.2 eq. 16", "Rotation.v", relative_matrix},
    {"norm_preservation", "||R_m x|| = ||x|| per pair", "RoFormer 3.2.2 (R is orthogonal)", "Rotation.v", norm_preservation},
    {"complex_equivalence", "R_m x = z e^{i m theta}, z = x1 + i x2", "RoFormer 3.2.1, 3.4.1 (Euler)", "Rotation.v", complex_equivalence},
    {"relative_dot", "<R_m q, R_n k> = <q, R_{n-m} k>, invariant under m,n -> m+t,n+t", "RoFormer 3.2.2 eq. 16", "Rotation.v", relative_dot},
    {"forms_agree", "matrix form = complex form = elementwise cos/sin form", "RoFormer eq. 15, 3.2.1, eq. 34", "Layouts.v", forms_agree},
    {"group_law", "R_m R_n = R_{m+n}; R_0 = I; R_{-m} = R_m^T = R_m^-1; inverse o forward = id", "rotations form a group (docs/rope.md 3)", "Rotation.v", group_law},
    {"layout_permutation", "F_half(P x) = P F_interleaved(x)", "docs/rope.md section 1", "Layouts.v", layout_permutation},
    {"multi_axis_relative", "R_{m1,m2}^T R_{n1,n2} = R_{n1-m1,n2-m2}; axes independent", "2-D RoPE (docs/rope.md 2)", "Rotation.v", multi_axis_relative},
    {"head_independence", "every head uses the same rotation; heads do not mix", "docs/rope.md 1", "", head_independence},
    {"attention_shift_invariance", "softmax(QK^T/sqrt d)V unchanged when all positions shift", "RoFormer 3.2.2 eq. 16", "Attention.v", attention_shift_invariance},
    {"long_term_decay", "|sum h_i e^{i r theta_i}| <= max|h_{i+1}-h_i| sum|S_j|; average of |S_j| decays", "RoFormer 3.4.3", "", long_term_decay},
    {"passthrough", "dims beyond rotary_dim are untouched, bit for bit", "docs/rope.md section 1, docs/design.md", "", passthrough},
};

}  // namespace

std::span<const Identity> catalog() { return kCatalog; }

const Identity* find_identity(std::string_view name) {
  for (const Identity& identity : kCatalog)
    if (identity.name == name) return &identity;
  return nullptr;
}

}  // namespace ropecheck::proofs
