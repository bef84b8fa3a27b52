// The fused backward pass (fused/backward.h): the exact gradients and their judge, with the bound
// of fused/README.md "Backward" built from the forward's pieces (fused/bounds.h).
#include "fused/backward.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "base/random.h"
#include "fused/bounds.h"
#include "fused/exact.h"
#include "reference/rounding.h"

namespace ropecheck::fused {
namespace {

using reference::Real;

constexpr double kInf = std::numeric_limits<double>::infinity();

void expect_size(const char* tensor, std::size_t got, std::int64_t expected, const char* what) {
  if (static_cast<std::int64_t>(got) != expected) {
    throw InputError(std::string(tensor) + ": expected " + std::to_string(expected) + " values (" + what + "), got " + std::to_string(got));
  }
}

// The incoming gradient's inverse rotation g = R(−θ)·dy, exactly: the forward's exact rotation
// (fused/exact.h) of dy under the spec with the other direction, without norm or quantization.
ExactTensor inverse_rotation(const FusedSpec& spec, const FusedInputs& in, const FusedGradients& gr, Which which) {
  FusedSpec g = spec;
  g.norm = NormPlace::none;
  g.fp8 = Fp8::none;
  g.destination = Destination::contiguous;
  g.rope.direction = spec.rope.direction == Direction::forward ? Direction::inverse : Direction::forward;
  FusedInputs rotated;
  rotated.tokens = in.tokens;
  rotated.positions = in.positions;
  rotated.q = gr.dq_out;
  rotated.k = gr.dk_out;
  return exact_tensor(g, rotated, which);
}

// One tensor's exact gradients and the E of their bound (the error before the output's rounding).
struct Gradient {
  std::vector<Real> dx, dw;
  std::vector<double> e_dx, e_dw;
};

// The constants of fused/README.md "Backward" for one spec.
struct BackwardBound {
  FusedBound rotation;  // the forward's bound without the norm: the rotation's E and the output's rounding
  NormConstants norm;   // the forward's norm constants: σ = a (the mean), e_r (the inverse rms)
  double xi = 0;        // x̂ = x·r̂⁻¹: (1 + e_r)(1 + w) − 1
  double eps_h = 0;     // ĥ = ŵ'·ĝ: (1 + c_w)(1 + w) − 1
  double eps_x = 0;     // x̂'·μ̂: (1 + ξ)(1 + w) − 1
  double kappa = 0;     // each product ĥ·x̂' of the mean: (1 + c_w)(1 + w)(1 + ξ) − 1
  double out = 0;       // the subtraction and the product by r̂⁻¹: (1 + e_r)(1 + w)² − 1
};

BackwardBound backward_bound(const FusedSpec& spec, judge::Model model) {
  FusedSpec rotation = spec;
  rotation.norm = NormPlace::none;
  BackwardBound b;
  b.rotation = fused_bound(rotation, model);
  const double w = b.rotation.w;
  b.norm = norm_constants(spec.rope.head_dim, spec.weight, w, false);
  const double c_w = spec.weight == NormWeight::one_plus ? w : 0;
  b.xi = (1 + b.norm.e_r) * (1 + w) - 1;
  b.eps_h = (1 + c_w) * (1 + w) - 1;
  b.eps_x = (1 + b.xi) * (1 + w) - 1;
  b.kappa = (1 + c_w) * (1 + w) * (1 + b.xi) - 1;
  b.out = (1 + b.norm.e_r) * (1 + w) * (1 + w) - 1;
  return b;
}

// E of g: the rotation's error of the forward (fused/bounds.h before_error without a norm).
std::vector<double> rotation_errors(const FusedSpec& spec, const BackwardBound& b, const ExactTensor& g) {
  const Spec& rope = spec.rope;
  const std::int64_t d = rope.head_dim, pairs = rope.rotary_dim / 2;
  std::vector<int> pair_of(static_cast<std::size_t>(d), -1);
  for (int j = 0; j < pairs; ++j) {
    const auto [f, s] = reference::pair_dims(rope, j);
    pair_of[f] = pair_of[s] = j;
  }
  std::vector<double> e(g.y.size());
  for (std::size_t n = 0; n < g.y.size(); ++n) {
    const std::int64_t i = static_cast<std::int64_t>(n) % d, t = static_cast<std::int64_t>(n) / (d * g.heads);
    const bool rotated = pair_of[i] >= 0;
    e[n] = b.rotation.before_error(rotated ? g.rho[n] : std::fabs(static_cast<double>(g.y[n])),
                                   rotated ? g.angle[t * pairs + pair_of[i]] : 0, rotated);
  }
  return e;
}

Gradient gradient(const FusedSpec& spec, const FusedInputs& in, const FusedGradients& gr, Which which, const BackwardBound& b) {
  const ExactTensor g = inverse_rotation(spec, in, gr, which);
  reference::PrecisionScope scope(kExactBits);
  Gradient r;
  const std::vector<double> e_g = rotation_errors(spec, b, g);
  if (spec.norm == NormPlace::none) {
    r.dx = g.y;
    r.e_dx = e_g;
    return r;
  }
  const std::int64_t d = spec.rope.head_dim, heads = g.heads;
  const std::vector<double>& x = which == Which::q ? in.q : in.k;
  const std::vector<double>& weight = which == Which::q ? in.q_weight : in.k_weight;
  const Real eps(spec.eps);
  const double w = b.rotation.w, mu_w = b.rotation.mu_w;
  const double sigma = b.norm.a;
  const std::int64_t rows = in.tokens * heads;
  const double gamma_n = (rows + 1) * w / (1 - (rows + 1) * w);  // γ_{N+1}: the sum of dw over N rows
  std::vector<Real> wp(static_cast<std::size_t>(d));
  double wp_max = 0;
  for (std::int64_t i = 0; i < d; ++i) {
    wp[i] = spec.weight == NormWeight::one_plus ? Real(1) + weight[i] : Real(weight[i]);
    wp_max = std::max(wp_max, std::fabs(static_cast<double>(wp[i])));
  }
  r.dx.resize(g.y.size());
  r.e_dx.resize(g.y.size());
  r.dw.assign(static_cast<std::size_t>(d), Real(0));
  std::vector<double> s1(static_cast<std::size_t>(d), 0), s2(static_cast<std::size_t>(d), 0);
  std::vector<Real> xhat(static_cast<std::size_t>(d)), h(static_cast<std::size_t>(d));
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t base = row * d;
    Real sum = 0;
    for (std::int64_t i = 0; i < d; ++i) sum = sum + Real(x[base + i]) * x[base + i];
    const Real rms = sqrt(sum / static_cast<long long>(d) + eps);
    Real mean = 0;
    double a = 0, bb = 0;  // A = mean|w'||g||x̂|, B = mean|w'|·E_g·|x̂|
    for (std::int64_t i = 0; i < d; ++i) {
      xhat[i] = Real(x[base + i]) / rms;
      h[i] = wp[i] * g.y[base + i];
      mean = mean + h[i] * xhat[i];
      const double ax = std::fabs(static_cast<double>(xhat[i])), aw = std::fabs(static_cast<double>(wp[i]));
      a += aw * std::fabs(static_cast<double>(g.y[base + i])) * ax;
      bb += aw * e_g[base + i] * ax;
      r.dw[i] = r.dw[i] + g.y[base + i] * xhat[i];
      s1[i] += std::fabs(static_cast<double>(g.y[base + i] * xhat[i]));
      s2[i] += ax * e_g[base + i];
    }
    mean = mean / static_cast<long long>(d);
    a /= static_cast<double>(d);
    bb /= static_cast<double>(d);
    // |μ̂ − μ| (fused/README.md "Backward"), with the mean's 2d + 1 roundings' underflow.
    const double e_mu = ((1 + sigma) * (1 + b.kappa) - 1) * a + (1 + sigma) * (1 + b.kappa) * bb + 4 * mu_w;
    const double abs_mu = std::fabs(static_cast<double>(mean)), inv_r = 1 / static_cast<double>(rms);
    for (std::int64_t i = 0; i < d; ++i) {
      r.dx[base + i] = (h[i] - xhat[i] * mean) / rms;
      const double ax = std::fabs(static_cast<double>(xhat[i])), aw = std::fabs(static_cast<double>(wp[i]));
      const double e_h = aw * (b.eps_h * std::fabs(static_cast<double>(g.y[base + i])) + (1 + b.eps_h) * e_g[base + i]);
      const double e_x = ax * (b.eps_x * abs_mu + (1 + b.eps_x) * e_mu);
      // Underflow: x̂, ĥ, x̂·μ̂, the difference and the product by r̂⁻¹ each within μ_w absolute.
      const double under = (4 + aw + ax) * mu_w;
      r.e_dx[base + i] = b.out * std::fabs(static_cast<double>(r.dx[base + i])) + (1 + b.out) * inv_r * (e_h + e_x + under) + mu_w;
    }
  }
  r.e_dw.resize(static_cast<std::size_t>(d));
  const double rel = (1 + gamma_n) * (1 + b.xi) * (1 + w) - 1;
  for (std::int64_t i = 0; i < d; ++i) {
    r.e_dw[i] = rel * s1[i] + (1 + rel) * s2[i] + 2 * static_cast<double>(rows) * mu_w * (1 + wp_max);
  }
  return r;
}

std::vector<double> rounded(const std::vector<Real>& v, Dtype dtype) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<double>(reference::round_to_format(v[i], dtype));
  return out;
}

void record(FusedJudgement& j, TensorResult& r, FailingElement element) {
  ++r.judged;
  if (!(element.e <= r.worst_e)) r.worst_e = std::isnan(element.e) ? kInf : element.e;
  if (element.e <= 1) return;
  ++r.failed;
  if (!j.first_failure) {
    element.tensor = r.tensor;
    j.first_failure = element;
  }
}

// One tensor of values against its exact values and E: e = |got − X|/B, B the output's rounding
// of fused/bounds.h element() (no FP8).
void judge_values(FusedJudgement& j, const FusedBound& fb, const char* tensor, const std::vector<Real>& exact, const std::vector<double>& e,
                  const std::vector<double>& got, std::int64_t heads, std::int64_t d) {
  TensorResult r{tensor};
  for (std::size_t n = 0; n < exact.size(); ++n) {
    const double x = static_cast<double>(exact[n]);
    FailingElement f;
    f.got = got[n];
    f.expected = x;
    f.bound = fb.element(std::fabs(x), e[n], 0);
    f.e = std::isfinite(got[n]) ? std::fabs(got[n] - x) / f.bound : kInf;
    const std::int64_t i = static_cast<std::int64_t>(n);
    if (heads > 0) {
      f.token = i / (heads * d);
      f.head = i / d % heads;
    }
    f.dim = i % d;
    record(j, r, f);
  }
  j.tensors.push_back(r);
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace

void check_backward_spec(const FusedSpec& spec) {
  validate(spec);
  if (spec.norm == NormPlace::after) throw InputError("spec field 'norm': expected none or before for the backward pass, got 'after'");
  if (spec.fp8 != Fp8::none) {
    throw InputError("spec field 'fp8': expected none for the backward pass, got '" + std::string(name(spec.fp8)) + "'");
  }
  if (spec.destination != Destination::contiguous) {
    throw InputError("spec field 'destination': expected contiguous for the backward pass, got 'paged'");
  }
}

void check_gradients(const FusedSpec& spec, const FusedInputs& in, const FusedGradients& gr) {
  const std::int64_t d = spec.rope.head_dim;
  expect_size("dq_out", gr.dq_out.size(), in.tokens * spec.q_heads * d, "[tokens][q_heads][head_dim]");
  expect_size("dk_out", gr.dk_out.size(), in.tokens * spec.k_heads * d, "[tokens][k_heads][head_dim]");
  for (const auto* t : {&gr.dq_out, &gr.dk_out}) {
    for (std::size_t i = 0; i < t->size(); ++i) {
      if (!std::isfinite((*t)[i])) {
        throw InputError(std::string(t == &gr.dq_out ? "dq_out" : "dk_out") + ": expected finite values, got a non-finite value at index " +
                         std::to_string(i));
      }
    }
  }
}

void check_backward_sizes(const FusedSpec& spec, const FusedInputs& in, const FusedBackwardOutputs& out) {
  const std::int64_t d = spec.rope.head_dim;
  expect_size("dq", out.dq.size(), in.tokens * spec.q_heads * d, "[tokens][q_heads][head_dim]");
  expect_size("dk", out.dk.size(), in.tokens * spec.k_heads * d, "[tokens][k_heads][head_dim]");
  const std::int64_t weights = spec.norm == NormPlace::none ? 0 : d;
  const char* what = spec.norm == NormPlace::none ? "none: the spec has no norm" : "[head_dim]";
  expect_size("dq_weight", out.dq_weight.size(), weights, what);
  expect_size("dk_weight", out.dk_weight.size(), weights, what);
}

FusedGradients random_gradients(const FusedSpec& spec, std::int64_t tokens, std::uint64_t seed) {
  SplitMix64 rng(seed ^ 0x6772616469656e74ULL);  // a stream of its own beside random_inputs' for the same seed
  const std::int64_t d = spec.rope.head_dim;
  auto draw = [&](std::int64_t n) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& x : v) x = static_cast<double>(reference::round_to_format(-1 + 2 * rng.unit(), spec.rope.dtype));
    return v;
  };
  FusedGradients g;
  g.dq_out = draw(tokens * spec.q_heads * d);
  g.dk_out = draw(tokens * spec.k_heads * d);
  return g;
}

FusedBackwardOutputs backward_reference(const FusedSpec& spec, const FusedInputs& in, const FusedGradients& gr) {
  check_backward_spec(spec);
  check_inputs(spec, in);
  check_gradients(spec, in, gr);
  const BackwardBound b = backward_bound(spec, judge::Model::exact);
  FusedBackwardOutputs out;
  const Gradient q = gradient(spec, in, gr, Which::q, b), k = gradient(spec, in, gr, Which::k, b);
  out.dq = rounded(q.dx, spec.rope.dtype);
  out.dk = rounded(k.dx, spec.rope.dtype);
  out.dq_weight = rounded(q.dw, spec.rope.dtype);
  out.dk_weight = rounded(k.dw, spec.rope.dtype);
  return out;
}

namespace {

FusedJudgement judge_gradients(const FusedSpec& spec, const FusedInputs& in, const FusedGradients& gr, const FusedBackwardOutputs& out,
                               judge::Model model) {
  const BackwardBound b = backward_bound(spec, model);
  FusedJudgement j;
  j.model = model;
  const std::int64_t d = spec.rope.head_dim;
  const Gradient q = gradient(spec, in, gr, Which::q, b), k = gradient(spec, in, gr, Which::k, b);
  judge_values(j, b.rotation, "dq", q.dx, q.e_dx, out.dq, spec.q_heads, d);
  judge_values(j, b.rotation, "dk", k.dx, k.e_dx, out.dk, spec.k_heads, d);
  if (spec.norm != NormPlace::none) {
    judge_values(j, b.rotation, "dq_weight", q.dw, q.e_dw, out.dq_weight, 0, d);
    judge_values(j, b.rotation, "dk_weight", k.dw, k.e_dw, out.dk_weight, 0, d);
  }
  for (const TensorResult& r : j.tensors) {
    if (r.failed > 0) j.verdict = judge::Verdict::fail;
  }
  const FusedBound& fb = b.rotation;
  j.bound = "|dx − DX| ≤ " + number(fb.u_d) + "·|DX| + " + number(1 + fb.u_d) + "·E + " + number(fb.mu_d) +
            "; E of g = R(−θ)·dy: " + number(4 * fb.w) + "·ρ + " + number(3 * fb.mu_w) +
            (fb.eta > 0 ? " + " + number(fb.eta) + "·|φ|·ρ" : std::string());
  if (spec.norm != NormPlace::none) {
    j.bound += "; through the norm: " + number(b.out) + "·|DX| + " + number(1 + b.out) + "·(E_h + E_x)/r, σ = " + number(b.norm.a) +
               ", e_r = " + number(b.norm.e_r);
  }
  j.derivation = "fused/README.md \"Backward\" (by hand, from the forward's rotation and norm constants of docs/fused-bounds.md)";
  return j;
}

}  // namespace

FusedJudgement judge_backward(const FusedSpec& spec, const FusedInputs& in, const FusedGradients& gr, const FusedBackwardOutputs& out,
                              judge::Model model) {
  check_backward_spec(spec);
  check_inputs(spec, in);
  check_gradients(spec, in, gr);
  check_backward_sizes(spec, in, out);
  FusedJudgement j = judge_gradients(spec, in, gr, out, model);
  if (j.verdict == judge::Verdict::pass) return j;
  // The explanation: the forward rotation R(θ)·dy in place of R(−θ)·dy (the sign of θ), named
  // only where the gradients pass under it, with its fit (fused/README.md "Backward").
  FusedSpec forward = spec;
  forward.rope.direction = spec.rope.direction == Direction::forward ? Direction::inverse : Direction::forward;
  const FusedJudgement f = judge_gradients(forward, in, gr, out, model);
  if (f.verdict == judge::Verdict::pass) {
    std::int64_t judged = 0;
    double worst = 0;
    for (const TensorResult& r : f.tensors) {
      judged += r.judged;
      worst = std::max(worst, r.worst_e);
    }
    j.explanation = "reproduced by the forward rotation R(θ)·dy in place of R(−θ)·dy (the sign of θ; fit: 100% of " +
                    std::to_string(judged) + " values within the bound, worst e " + number(worst) + ")";
  } else {
    j.explanation = "no single change explains this";
  }
  return j;
}

}  // namespace ropecheck::fused
