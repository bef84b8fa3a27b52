// The fused judge (fused/fused.h judge_fused): every output element held to its derived bound
// (fused/bounds.h), the dynamic scales to theirs, and the report text.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "fused/bounds.h"
#include "fused/exact.h"
#include "fused/explain.h"
#include "reference/rounding.h"

namespace ropecheck::fused {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Context {
  const FusedSpec& spec;
  const FusedInputs& in;
  const FusedBound& bound;
  FusedJudgement& result;
};

// One judged value: counted, its e kept when the worst, the first failure (e > 1, or NaN) kept.
void record(Context& c, TensorResult& r, FailingElement element) {
  ++r.judged;
  if (!(element.e <= r.worst_e)) r.worst_e = std::isnan(element.e) ? kInf : element.e;
  if (element.e <= 1) return;
  ++r.failed;
  if (!c.result.first_failure) {
    element.tensor = r.tensor;
    c.result.first_failure = element;
  }
}

// E_i (fused/bounds.h) of every element of one tensor.
std::vector<double> element_errors(const Context& c, const ExactTensor& ex, const std::vector<double>& weight) {
  const Spec& rope = c.spec.rope;
  const std::int64_t d = rope.head_dim, pairs = rope.rotary_dim / 2;
  std::vector<int> pair_of(static_cast<std::size_t>(d), -1);
  for (int j = 0; j < pairs; ++j) {
    const auto [f, s] = reference::pair_dims(rope, j);
    pair_of[f] = pair_of[s] = j;
  }
  const bool layer = c.spec.norm != NormPlace::none && c.spec.norm_kind == NormKind::layer;
  std::vector<double> e(ex.y.size());
  for (std::int64_t t = 0; t < c.in.tokens; ++t) {
    for (std::int64_t h = 0; h < ex.heads; ++h) {
      const double* wh = c.spec.norm == NormPlace::none ? nullptr : head_weight(c.spec, weight, h);
      const auto w_abs = [&](std::int64_t i) { return std::fabs(c.spec.weight == NormWeight::one_plus ? 1 + wh[i] : wh[i]); };
      // LayerNorm (§1b): ν_L of the row and δ/r; the normalized pair's error ν_L·ρ + (1 + ν_L)·‖w'‖·δ/r.
      const LayerRow lr =
          layer ? layer_row(c.bound.norm_c, c.bound.w, ex.mean_abs[t * ex.heads + h], ex.rms[t * ex.heads + h]) : LayerRow{};
      for (std::int64_t i = 0; i < d; ++i) {
        const std::int64_t n = (t * ex.heads + h) * d + i;
        const bool rotated = pair_of[i] >= 0;
        const double angle = rotated ? ex.angle[t * pairs + pair_of[i]] : 0;
        const double abs_y = std::fabs(static_cast<double>(ex.y[n]));
        if (c.spec.norm == NormPlace::after) {
          e[n] = c.bound.after_error(abs_y, w_abs(i), ex.rho[n], ex.rms[t * ex.heads + h], angle, rotated);
        } else if (layer) {
          double weight_norm = w_abs(i);
          if (rotated) {
            const auto [f, s] = reference::pair_dims(rope, pair_of[i]);
            weight_norm = std::hypot(w_abs(f), w_abs(s));
          }
          e[n] = c.bound.before_error(rotated ? ex.rho[n] : abs_y, angle, rotated, lr.nu, (1 + lr.nu) * weight_norm * lr.delta_r);
        } else {
          e[n] = c.bound.before_error(rotated ? ex.rho[n] : abs_y, angle, rotated);
        }
      }
    }
  }
  return e;
}

// The returned scales of one tensor against amax|Y|/M of their groups (Fused.v dynamic_scale_bound).
void judge_scales(Context& c, const ExactTensor& ex, const std::vector<double>& e, const std::vector<double>& scales,
                  const std::vector<bool>& judged_token, TensorResult& r) {
  const std::int64_t d = c.spec.rope.head_dim;
  const std::int64_t groups = static_cast<std::int64_t>(scales.size());
  std::vector<double> amax(static_cast<std::size_t>(groups), 0), max_e(static_cast<std::size_t>(groups), 0);
  for (std::int64_t t = 0; t < c.in.tokens; ++t) {
    for (std::int64_t h = 0; h < ex.heads; ++h) {
      const std::int64_t g = scale_group(c.spec, t, h, ex.heads);
      for (std::int64_t i = 0; i < d; ++i) {
        const std::int64_t n = (t * ex.heads + h) * d + i;
        amax[g] = std::max(amax[g], std::fabs(static_cast<double>(ex.y[n])));
        max_e[g] = std::max(max_e[g], (1 + c.bound.u_d) * e[n] + c.bound.mu_d);
      }
    }
  }
  const bool per_head = c.spec.scale == ScaleMode::per_head;
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t t = per_head ? g / ex.heads : g;
    if (!judged_token[t]) continue;
    const double s = scales[g], exact = amax[g] / c.bound.fp8_max, allowed = c.bound.scale(amax[g], max_e[g]);
    double err = 0;
    if (!std::isfinite(s) || !(s > 0))
      err = kInf;
    else if (amax[g] > 0)
      err = std::fabs(s - exact) / allowed;
    record(c, r, {"", t, per_head ? g % ex.heads : -1, -1, s, exact, allowed, err});
  }
}

// e of one element: |got − target| in units of its bound; 0 or ∞ for non-finite outputs.
FailingElement judge_element(const Context& c, double y, double e, double scale, double got) {
  const FusedBound& b = c.bound;
  FailingElement r;
  r.got = got;
  // No finite bound (a LayerNorm row with λ > 1/2, fused/bounds.cpp layer_row): nothing is derived
  // there, so the element fails closed instead of passing at e = 0.
  if (!std::isfinite(e)) {
    r.expected = y;
    r.bound = kInf;
    r.e = kInf;
    return r;
  }
  if (!b.fp8) {
    r.expected = y;
    r.bound = b.element(std::fabs(y), e, 0);
    if (std::isfinite(got)) {
      r.e = std::fabs(got - y) / r.bound;
    } else {
      // ±Inf passes where a value within the bound rounds to that infinity (as judge/'s pair rule).
      const double far = std::copysign(std::fabs(y) + r.bound, got);
      const double rounded = static_cast<double>(reference::round_to_format(far, c.spec.rope.dtype));
      r.e = std::isinf(got) && rounded == got ? 0 : kInf;
    }
    return r;
  }
  // FP8, in the scaled units of the stored value: target clamp(Y/ŝ, ±M), bound B/ŝ.
  const double t = y / scale;
  r.bound = b.element(std::fabs(y), e, scale) / scale;
  r.expected = std::clamp(t, -b.fp8_max, b.fp8_max);
  const double reach = std::fabs(t) + r.bound;  // the largest |t| the kernel may have quantized
  const bool may_overflow = !c.spec.saturate && (b.overflow_inclusive ? reach >= b.overflow : reach > b.overflow);
  const bool must_overflow =
      !c.spec.saturate && (b.overflow_inclusive ? std::fabs(t) - r.bound >= b.overflow : std::fabs(t) - r.bound > b.overflow);
  if (!std::isfinite(got)) {
    const bool right_kind = c.spec.fp8 == Fp8::e4m3 ? std::isnan(got) : std::isinf(got) && std::signbit(got) == std::signbit(t);
    r.e = may_overflow && right_kind ? 0 : kInf;
  } else {
    r.e = must_overflow ? kInf : std::fabs(got - r.expected) / r.bound;
  }
  return r;
}

void judge_tensor(Context& c, Which which, const std::vector<double>& got, const std::vector<double>& scales) {
  const bool is_k = which == Which::k;
  const bool paged = is_k && c.spec.destination == Destination::paged;
  const ExactTensor ex = exact_tensor(c.spec, c.in, which);
  const std::vector<double> e = element_errors(c, ex, is_k ? c.in.k_weight : c.in.q_weight);
  const std::int64_t d = c.spec.rope.head_dim, row = ex.heads * d;
  std::vector<bool> judged_token(static_cast<std::size_t>(c.in.tokens), true);
  if (paged) {
    for (std::int64_t t = 0; t < c.in.tokens; ++t) judged_token[t] = c.in.slot_mapping[t] >= 0;
  }
  const bool dynamic = c.bound.fp8 && c.spec.scale != ScaleMode::fixed;
  TensorResult scale_result{is_k ? "k_scale" : "q_scale"};
  if (dynamic) judge_scales(c, ex, e, scales, judged_token, scale_result);
  const double fixed_scale = std::strtod(c.spec.scale_value.c_str(), nullptr);
  TensorResult r{paged ? "k_cache" : is_k ? "k_out" : "q_out"};
  for (std::int64_t t = 0; t < c.in.tokens; ++t) {
    if (!judged_token[t]) continue;
    // Paged: the token's row is slot s of the cache viewed as [num_blocks·block_size][k_heads][head_dim].
    const std::int64_t out_row = paged ? c.in.slot_mapping[t] * row : t * row;
    for (std::int64_t h = 0; h < ex.heads; ++h) {
      const double scale = !c.bound.fp8 ? 1 : dynamic ? scales[scale_group(c.spec, t, h, ex.heads)] : fixed_scale;
      for (std::int64_t i = 0; i < d; ++i) {
        const std::int64_t n = t * row + h * d + i;
        FailingElement element = judge_element(c, static_cast<double>(ex.y[n]), e[n], scale, got[out_row + h * d + i]);
        element.token = t;
        element.head = h;
        element.dim = i;
        record(c, r, element);
      }
    }
  }
  c.result.tensors.push_back(r);
  if (dynamic) c.result.tensors.push_back(scale_result);
}

std::string figure(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace

FusedJudgement judge_fused(const FusedSpec& spec, const FusedInputs& inputs, const FusedOutputs& outputs, judge::Model model) {
  validate(spec);
  check_inputs(spec, inputs);
  check_output_sizes(spec, inputs, outputs);
  const FusedBound bound = fused_bound(spec, model);
  FusedJudgement result;
  result.model = model;
  result.bound = bound_text(bound, spec);
  result.derivation = derivation_text(spec);
  Context c{spec, inputs, bound, result};
  judge_tensor(c, Which::q, outputs.q_out, outputs.q_scale);
  judge_tensor(c, Which::k, spec.destination == Destination::paged ? outputs.k_cache : outputs.k_out, outputs.k_scale);
  for (const TensorResult& r : result.tensors) {
    if (r.failed > 0) result.verdict = judge::Verdict::fail;
  }
  result.explanation = explain_failure(spec, inputs, outputs, model, result);
  return result;
}

std::string fused_report_text(const FusedJudgement& j) {
  std::string text =
      "fused: " + std::string(j.verdict == judge::Verdict::pass ? "PASS" : "FAIL") + " under " + judge::claim_text(j.model) + "\n";
  for (const TensorResult& r : j.tensors) {
    text += "  " + r.tensor + ": worst e " + figure(r.worst_e) + " (" + std::to_string(r.judged) + " judged, " + std::to_string(r.failed) +
            " failed)\n";
  }
  if (j.first_failure) {
    const FailingElement& f = *j.first_failure;
    text += "first failure: " + f.tensor + " token " + std::to_string(f.token);
    if (f.head >= 0) text += " head " + std::to_string(f.head);
    if (f.dim >= 0) text += " dim " + std::to_string(f.dim);
    if (std::isfinite(f.bound))
      text += ": got " + figure(f.got) + ", expected " + figure(f.expected) + " within " + figure(f.bound) + " (e " + figure(f.e) + ")\n";
    else
      text += ": no bound applies (a LayerNorm row whose mean is too large next to its spread, docs/fused-bounds.md §1b); not judged as a pass\n";
  }
  if (!j.explanation.empty()) text += "explanation: " + j.explanation + "\n";
  text += "bound: " + j.bound + "\n";
  text += "derivation: " + j.derivation + "\n";
  return text;
}

}  // namespace ropecheck::fused
