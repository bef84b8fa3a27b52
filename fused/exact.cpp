// The exact composition RMSNorm → RoPE (or RoPE → RMSNorm) in MPFR (fused/exact.h).
#include "fused/exact.h"

#include <cmath>

#include "reference/rope.h"

namespace ropecheck::fused {
namespace {

using reference::Real;

// g·cos and g·sin of every (token, pair): the exact rotation of the unit vector (1, 0) in every pair
// (reference/rope.h rotate_exact: x·c − y·s, x·s + y·c with x = 1, y = 0), at each pair's dims.
std::vector<Real> rotation_table(const FusedSpec& spec, const FusedInputs& in) {
  const Spec& rope = spec.rope;
  const std::int64_t d = rope.head_dim;
  std::vector<double> unit(static_cast<std::size_t>(in.tokens * d), 0.0);
  for (std::int64_t t = 0; t < in.tokens; ++t) {
    for (int j = 0; j < rope.rotary_dim / 2; ++j) unit[t * d + reference::pair_dims(rope, j).first] = 1;
  }
  return reference::rotate_exact(rope, {in.tokens, 1, d}, in.positions, unit, kExactBits, reference::Form::elementwise);
}

// v ← R_m v (pass-through dims unchanged), from the table's row of token t.
void rotate(const Spec& rope, const Real* row, std::vector<Real>& v) {
  for (int j = 0; j < rope.rotary_dim / 2; ++j) {
    const auto [f, s] = reference::pair_dims(rope, j);
    const Real& c = row[f];
    const Real& sn = row[s];
    const Real a = v[f] * c - v[s] * sn;
    v[s] = v[f] * sn + v[s] * c;
    v[f] = a;
  }
}

// v ← v ⊙ w' / sqrt(mean(v²) + eps), w' = w or 1 + w; returns the rms sqrt(mean(v²) + eps).
Real normalize(const FusedSpec& spec, const std::vector<double>& weight, const Real& eps, std::vector<Real>& v) {
  Real sum = 0;
  for (const Real& x : v) sum = sum + x * x;
  const Real rms = sqrt(sum / static_cast<long long>(v.size()) + eps);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Real w = spec.weight == NormWeight::one_plus ? Real(1) + weight[i] : Real(weight[i]);
    v[i] = v[i] * w / rms;
  }
  return rms;
}

double pair_norm(const Real& a, const Real& b) { return static_cast<double>(sqrt(a * a + b * b)); }

}  // namespace

ExactTensor exact_tensor(const FusedSpec& spec, const FusedInputs& in, Which which) {
  reference::PrecisionScope scope(kExactBits);
  const Spec& rope = spec.rope;
  const std::int64_t d = rope.head_dim;
  const int pairs = rope.rotary_dim / 2;
  const int components = position_components(rope);
  ExactTensor out;
  out.heads = which == Which::q ? spec.q_heads : spec.k_heads;
  const std::vector<double>& x = which == Which::q ? in.q : in.k;
  const std::vector<double>& weight = which == Which::q ? in.q_weight : in.k_weight;
  const std::vector<Real> table = rotation_table(spec, in);
  const Real eps(spec.eps);
  out.y.reserve(x.size());
  out.rho.resize(x.size());
  out.rms.resize(static_cast<std::size_t>(in.tokens * out.heads));
  out.angle.resize(static_cast<std::size_t>(in.tokens * pairs));
  for (std::int64_t t = 0; t < in.tokens; ++t) {
    const std::span<const std::int64_t> position(in.positions.data() + t * components, components);
    for (int j = 0; j < pairs; ++j) {
      out.angle[t * pairs + j] = std::fabs(static_cast<double>(reference::angle(rope, position, j, 128)));
    }
  }
  std::vector<Real> v(static_cast<std::size_t>(d));
  for (std::int64_t t = 0; t < in.tokens; ++t) {
    const Real* row = table.data() + t * d;
    for (std::int64_t h = 0; h < out.heads; ++h) {
      const std::int64_t base = (t * out.heads + h) * d;
      for (std::int64_t i = 0; i < d; ++i) v[i] = Real(x[base + i]);
      if (spec.norm != NormPlace::after) {
        if (spec.norm == NormPlace::before) out.rms[t * out.heads + h] = static_cast<double>(normalize(spec, weight, eps, v));
        rotate(rope, row, v);
      } else {
        rotate(rope, row, v);
      }
      // ρ of each pair: of the output (none, before) or of the rotation before its norm (after).
      for (int j = 0; j < pairs; ++j) {
        const auto [f, s] = reference::pair_dims(rope, j);
        out.rho[base + f] = out.rho[base + s] = pair_norm(v[f], v[s]);
      }
      if (spec.norm == NormPlace::after) out.rms[t * out.heads + h] = static_cast<double>(normalize(spec, weight, eps, v));
      for (std::int64_t i = rope.rotary_dim; i < d; ++i) out.rho[base + i] = std::fabs(static_cast<double>(v[i]));
      for (std::int64_t i = 0; i < d; ++i) out.y.push_back(v[i]);
    }
  }
  return out;
}

}  // namespace ropecheck::fused
