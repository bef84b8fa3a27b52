// The explanation of a failing fused candidate (fused/explain.h): candidate changes judged against
// the outputs, the fits of eps and of the scale factor, and judge/'s RoPE inference where it applies.
#include "fused/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "fused/exact.h"
#include "fused/fp8.h"
#include "judge/inference.h"

namespace ropecheck::fused {
namespace {

// Set while a candidate change is judged: its judgement explains nothing (explain_failure).
thread_local int g_explaining = 0;
struct ExplainingScope {
  ExplainingScope() { ++g_explaining; }
  ~ExplainingScope() { --g_explaining; }
  ExplainingScope(const ExplainingScope&) = delete;
  ExplainingScope& operator=(const ExplainingScope&) = delete;
};

std::string figure(double v, const char* format = "%.3g") {
  char text[40];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

// The share as a whole percent, floored (99.6 % is not 100 %).
std::string percent(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return "0%";
  if (part >= whole) return "100%";
  return figure(std::floor(100.0 * static_cast<double>(part) / static_cast<double>(whole)), "%.0f") + "%";
}

// What the candidate changes are judged on: the given tensors, or at most kExplainTokens of their
// tokens (the first failing one among them), the paged cache whole (its rows are read by slot).
struct Case {
  FusedInputs in;
  FusedOutputs out;
};

Case sample(const FusedSpec& spec, const FusedInputs& in, const FusedOutputs& out, std::optional<std::int64_t> failing) {
  if (in.tokens <= kExplainTokens) return {in, out};
  std::vector<std::int64_t> tokens;
  const std::int64_t stride = (in.tokens + kExplainTokens - 2) / (kExplainTokens - 1);
  for (std::int64_t t = 0; t < in.tokens; t += stride) tokens.push_back(t);
  if (failing && *failing >= 0 && *failing < in.tokens) tokens.push_back(*failing);
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  const std::int64_t d = spec.rope.head_dim, components = position_components(spec.rope);
  const bool per_head = spec.scale == ScaleMode::per_head, dynamic = spec.fp8 != Fp8::none && spec.scale != ScaleMode::fixed;
  const bool paged = spec.destination == Destination::paged;
  Case c;
  c.in.tokens = static_cast<std::int64_t>(tokens.size());
  c.in.q_weight = in.q_weight;
  c.in.k_weight = in.k_weight;
  c.in.num_blocks = in.num_blocks;
  if (paged) c.out.k_cache = out.k_cache;
  const auto rows = [](const std::vector<double>& from, std::vector<double>& to, std::int64_t t, std::int64_t size) {
    to.insert(to.end(), from.begin() + t * size, from.begin() + (t + 1) * size);
  };
  for (const std::int64_t t : tokens) {
    rows(in.q, c.in.q, t, spec.q_heads * d);
    rows(in.k, c.in.k, t, spec.k_heads * d);
    c.in.positions.insert(c.in.positions.end(), in.positions.begin() + t * components, in.positions.begin() + (t + 1) * components);
    if (paged) c.in.slot_mapping.push_back(in.slot_mapping[t]);
    rows(out.q_out, c.out.q_out, t, spec.q_heads * d);
    if (!paged) rows(out.k_out, c.out.k_out, t, spec.k_heads * d);
    if (dynamic) {
      rows(out.q_scale, c.out.q_scale, t, per_head ? spec.q_heads : 1);
      rows(out.k_scale, c.out.k_scale, t, per_head ? spec.k_heads : 1);
    }
  }
  return c;
}

// The outputs judged under a changed spec, inputs or scales.
FusedChange judge_change(ChangeKind kind, std::string change, const FusedSpec& spec, const FusedInputs& in, const FusedOutputs& out,
                         judge::Model model) {
  FusedChange r;
  r.kind = kind;
  r.change = std::move(change);
  const FusedJudgement j = judge_fused(spec, in, out, model);
  for (const TensorResult& t : j.tensors) {
    r.judged += t.judged;
    r.within += t.judged - t.failed;
    r.worst_e = std::max(r.worst_e, t.worst_e);
  }
  r.reproduces = j.verdict == judge::Verdict::pass;
  return r;
}

// The q outputs in the exact values' units: FP8 values times their scale, others as they are.
std::vector<double> dequantized_q(const FusedSpec& spec, const Case& c) {
  std::vector<double> g = c.out.q_out;
  if (spec.fp8 == Fp8::none) return g;
  const std::int64_t d = spec.rope.head_dim, heads = spec.q_heads;
  const double fixed = std::strtod(spec.scale_value.c_str(), nullptr);
  for (std::int64_t t = 0; t < c.in.tokens; ++t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const double s = spec.scale == ScaleMode::fixed ? fixed : c.out.q_scale[scale_group(spec, t, h, heads)];
      for (std::int64_t i = 0; i < d; ++i) g[(t * heads + h) * d + i] *= s;
    }
  }
  return g;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// eps from the outputs: per q row, the least-squares ratio ρ of the outputs to the exact values
// is rms/rms' (the rotation keeps the sum of squares, so either place of the norm): with m the
// mean of the row's squares, eps' = (m + eps)/ρ² − m. A row resolves eps' to about (m + eps)
// times its relative error: the median over the quarter of rows with the smallest m + eps.
std::optional<double> fit_eps(const FusedSpec& spec, const Case& c, const ExactTensor& y, const std::vector<double>& g) {
  const std::int64_t d = spec.rope.head_dim, rows = c.in.tokens * spec.q_heads;
  const double eps = std::strtod(spec.eps.c_str(), nullptr);
  std::vector<std::pair<double, double>> estimates;  // (m + eps, eps')
  for (std::int64_t r = 0; r < rows; ++r) {
    double m = 0, gy = 0, yy = 0;
    bool finite = true;
    for (std::int64_t i = 0; i < d; ++i) {
      const double x = c.in.q[r * d + i], e = static_cast<double>(y.y[r * d + i]);
      m += x * x;
      gy += g[r * d + i] * e;
      yy += e * e;
      finite = finite && std::isfinite(g[r * d + i]);
    }
    m /= static_cast<double>(d);
    if (!finite || !(yy > 0) || !(gy > 0)) continue;
    const double rho = gy / yy;
    estimates.push_back({m + eps, (m + eps) / (rho * rho) - m});
  }
  if (estimates.empty()) return std::nullopt;
  std::sort(estimates.begin(), estimates.end());
  std::vector<double> best;
  for (std::size_t i = 0; i < std::max<std::size_t>(1, estimates.size() / 4); ++i) best.push_back(estimates[i].second);
  return median(best);
}

// The factor f of the stored values against the returned (or fixed) scale: got·ŝ ≈ f·Y, the
// median over q values of magnitude at least a quarter of the largest and not saturated.
std::optional<double> fit_scale_factor(const FusedSpec& spec, const Case& c, const ExactTensor& y, const std::vector<double>& g) {
  const double max = fp8_format(spec.fp8).max;
  double amax = 0;
  for (const reference::Real& v : y.y) amax = std::max(amax, std::fabs(static_cast<double>(v)));
  std::vector<double> ratios;
  for (std::size_t n = 0; n < y.y.size(); ++n) {
    const double e = static_cast<double>(y.y[n]);
    if (std::fabs(e) < amax / 4 || !std::isfinite(g[n]) || std::fabs(c.out.q_out[n]) >= max) continue;
    ratios.push_back(g[n] / e);
  }
  const double f = median(ratios);
  if (!(f > 0) || !std::isfinite(f)) return std::nullopt;
  return f;
}

// A fitted value said as the kernel likely wrote it: a power of two where it is within 3 % of
// one (the scale), else `digits` significant digits.
double snapped(double v, int digits, bool powers_of_two) {
  if (!(v > 0)) return 0;
  const double l = std::log2(v);
  if (powers_of_two && std::fabs(l - std::round(l)) < 0.04) return std::ldexp(1.0, static_cast<int>(std::round(l)));
  char text[40];
  std::snprintf(text, sizeof text, "%.*e", digits - 1, v);
  return std::strtod(text, nullptr);
}

std::string decimal(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

// Every candidate change of one failing case, in the order of fused/explain.h.
class Candidates {
 public:
  // The scale candidate changes c's returned scales while it is judged, and puts them back.
  Candidates(const FusedSpec& spec, Case& c, judge::Model model) : spec_(spec), c_(c), model_(model) {}

  std::vector<FusedChange> all() {
    norm_changes();
    scale_changes();
    slot_changes();
    rope_changes();
    return std::move(found_);
  }

 private:
  void add(ChangeKind kind, const std::string& change, const FusedSpec& s) { add(kind, change, s, c_.in, c_.out); }
  void add(ChangeKind kind, const std::string& change, const FusedSpec& s, const FusedInputs& in, const FusedOutputs& out) {
    try {
      validate(s);
      check_inputs(s, in);
      found_.push_back(judge_change(kind, change, s, in, out, model_));
    } catch (const InputError&) {
      // A change the spec or the inputs cannot hold is not a candidate.
    }
  }

  void norm_changes() {
    if (spec_.norm == NormPlace::none) return;
    if (c_.in.q_weight != c_.in.k_weight) {
      FusedInputs swapped = c_.in;
      std::swap(swapped.q_weight, swapped.k_weight);
      add(ChangeKind::weights_swapped, "the q and k norm weights swapped (q normalized with k_weight, k with q_weight)", spec_, swapped,
          c_.out);
    }
    FusedSpec place = spec_;
    place.norm = spec_.norm == NormPlace::before ? NormPlace::after : NormPlace::before;
    add(ChangeKind::norm_place,
        "norm=" + std::string(name(place.norm)) + " (expected " + std::string(name(spec_.norm)) + "): the RMSNorm applied " +
            (place.norm == NormPlace::after ? "after" : "before") + " the rotation",
        place);
    FusedSpec weight = spec_;
    weight.weight = spec_.weight == NormWeight::plain ? NormWeight::one_plus : NormWeight::plain;
    add(ChangeKind::norm_weight,
        "norm_weight=" + std::string(name(weight.weight)) + " (expected " + std::string(name(spec_.weight)) +
            (weight.weight == NormWeight::plain ? "): x̂·w in place of x̂·(1 + w)" : "): x̂·(1 + w) in place of x̂·w"),
        weight);
    const std::optional<double> eps = fit_eps(spec_, c_, exact_q(), dequantized_q(spec_, c_));
    if (!eps) return;
    // Below a thousandth of the rows' smallest mean square eps does not show: said as 0.
    const double e = *eps > 0 ? snapped(*eps, 1, false) : 0;
    if (e == std::strtod(spec_.eps.c_str(), nullptr)) return;
    FusedSpec changed = spec_;
    changed.eps = decimal(e);
    add(ChangeKind::eps, "eps=" + changed.eps + " (expected " + spec_.eps + "), fitted from the outputs", changed);
  }

  void scale_changes() {
    if (spec_.fp8 == Fp8::none) return;
    const std::optional<double> fitted = fit_scale_factor(spec_, c_, exact_q(), dequantized_q(spec_, c_));
    if (fitted) {
      const double f = snapped(*fitted, 3, true);
      if (f != 1) {
        if (spec_.scale == ScaleMode::fixed) {
          FusedSpec s = spec_;
          s.scale_value = decimal(std::strtod(spec_.scale_value.c_str(), nullptr) / f);
          add(ChangeKind::scale_factor,
              "scale_value=" + s.scale_value + " (expected " + spec_.scale_value + "): the values quantized at the scale / " + decimal(f) +
                  ", fitted from the outputs",
              s);
        } else {
          const std::vector<double> q_scale = c_.out.q_scale, k_scale = c_.out.k_scale;
          for (double& s : c_.out.q_scale) s /= f;
          for (double& s : c_.out.k_scale) s /= f;
          add(ChangeKind::scale_factor,
              "the returned scale " + decimal(f) + "× the scale the values were quantized at (factor fitted from the outputs)", spec_,
              c_.in, c_.out);
          c_.out.q_scale = q_scale;
          c_.out.k_scale = k_scale;
        }
      }
    }
    FusedSpec saturate = spec_;
    saturate.saturate = !spec_.saturate;
    const std::string m = figure(fp8_format(spec_.fp8).max, "%.0f");
    add(ChangeKind::saturation,
        std::string("saturate=") + (saturate.saturate ? "true (expected false): values past ±" + m + " clamped to it"
                                                      : "false (expected true): values past ±" + m + " not clamped to it"),
        saturate);
  }

  void slot_changes() {
    if (spec_.destination != Destination::paged) return;
    const std::int64_t slots = c_.in.num_blocks * spec_.block_size;
    for (const std::int64_t shift : {std::int64_t{1}, std::int64_t{-1}, std::int64_t{spec_.block_size}, -std::int64_t{spec_.block_size}}) {
      FusedInputs in = c_.in;
      for (std::int64_t& s : in.slot_mapping) {
        if (s >= 0) s = ((s + shift) % slots + slots) % slots;  // a shift of the whole cache: the slots stay distinct
      }
      const bool block = shift == spec_.block_size || shift == -spec_.block_size;
      add(ChangeKind::slot_offset,
          std::string("each token's k written one ") + (block ? "block (" + std::to_string(spec_.block_size) + " slots)" : "slot") +
              (shift > 0 ? " after" : " before") + " its slot_mapping entry",
          spec_, in, c_.out);
    }
  }

  void rope_changes() {
    FusedSpec layout = spec_;
    layout.rope.layout = spec_.rope.layout == Layout::half ? Layout::interleaved : Layout::half;
    if (spec_.rope.rotary_dim >= 4) {
      add(ChangeKind::layout,
          "layout=" + std::string(layout.rope.layout == Layout::half ? "half" : "interleaved") + " (expected " +
              (spec_.rope.layout == Layout::half ? "half" : "interleaved") + "): the neox and gptj pairing mixed",
          layout);
    }
    if (spec_.rope.rotary_dim < spec_.rope.head_dim) {
      FusedSpec full = spec_;
      full.rope.rotary_dim = spec_.rope.head_dim;
      add(ChangeKind::rotary_dim,
          "rotary_dim=" + std::to_string(full.rope.rotary_dim) + " (expected " + std::to_string(spec_.rope.rotary_dim) +
              "): the partial rotary lost, every dim rotated",
          full);
    }
  }

  // The exact q values of the spec as given (the fits of eps and of the scale factor), once.
  const ExactTensor& exact_q() {
    if (!exact_q_) exact_q_ = exact_tensor(spec_, c_.in, Which::q);
    return *exact_q_;
  }

  const FusedSpec& spec_;
  Case& c_;
  judge::Model model_;
  std::optional<ExactTensor> exact_q_;
  std::vector<FusedChange> found_;
};

// judge/'s RoPE inference on q and a contiguous k, where the fused spec is a rotation alone.
std::string rope_inference(const FusedSpec& spec, const Case& c) {
  if (spec.norm != NormPlace::none || spec.fp8 != Fp8::none) return {};
  std::vector<judge::Call> tests(spec.destination == Destination::contiguous ? 2 : 1);
  std::vector<judge::DiagnosedTest> diagnosed;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    judge::Call& t = tests[i];
    t.id = static_cast<std::int64_t>(i) + 1;
    t.tokens = c.in.tokens;
    t.heads = i == 0 ? spec.q_heads : spec.k_heads;
    t.head_dim = spec.rope.head_dim;
    t.positions = c.in.positions;
    t.input = i == 0 ? c.in.q : c.in.k;
    diagnosed.push_back({&t, i == 0 ? c.out.q_out : c.out.k_out});
  }
  judge::GroupDiagnosis d;
  (void)judge::infer_spec(spec.rope, diagnosed, true, 1, d);
  return d.explanation;
}

std::string fit_text(const FusedChange& c) {
  return percent(c.within, c.judged) + " of " + std::to_string(c.judged) + " values within the bound, worst e " + figure(c.worst_e);
}

FusedExplanation explain(const FusedSpec& spec, const FusedInputs& inputs, const FusedOutputs& outputs, judge::Model model,
                         std::optional<std::int64_t> failing) {
  FusedExplanation r;
  const ExplainingScope scope;
  Case c = sample(spec, inputs, outputs, failing);
  // Outputs that pass (on the tokens sampled, which hold the first failing one) name nothing.
  if (judge_fused(spec, c.in, c.out, model).verdict == judge::Verdict::pass) return r;
  const std::vector<FusedChange> changes = Candidates(spec, c, model).all();
  const auto better = [](const FusedChange& a, const FusedChange& b) {
    return a.within != b.within ? a.within * b.judged > b.within * a.judged : a.worst_e < b.worst_e;
  };
  for (const FusedChange& change : changes) {
    if (change.reproduces && (!r.named || change.worst_e < r.named->worst_e)) r.named = change;
    if (!r.closest || better(change, *r.closest)) r.closest = change;
  }
  if (r.named) {
    r.closest.reset();
    r.text = "reproduced by " + r.named->change + " (fit: " + fit_text(*r.named) + ")";
    return r;
  }
  r.rope = rope_inference(spec, c);
  if (!r.rope.empty()) {
    r.text = "no single change of the fused keys explains this; as a rotation: " + r.rope;
    return r;
  }
  r.text = "no single change explains this";
  if (r.closest) r.text += " (closest: " + r.closest->change + "; fit: " + fit_text(*r.closest) + ")";
  return r;
}

}  // namespace

std::string_view name(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::weights_swapped:
      return "weights_swapped";
    case ChangeKind::norm_place:
      return "norm_place";
    case ChangeKind::norm_weight:
      return "norm_weight";
    case ChangeKind::eps:
      return "eps";
    case ChangeKind::scale_factor:
      return "scale_factor";
    case ChangeKind::saturation:
      return "saturation";
    case ChangeKind::slot_offset:
      return "slot_offset";
    case ChangeKind::layout:
      return "layout";
    case ChangeKind::rotary_dim:
      return "rotary_dim";
  }
  return "";
}

FusedExplanation explain_fused(const FusedSpec& spec, const FusedInputs& inputs, const FusedOutputs& outputs, judge::Model model) {
  return explain(spec, inputs, outputs, model, std::nullopt);
}

std::string explain_failure(const FusedSpec& spec, const FusedInputs& inputs, const FusedOutputs& outputs, judge::Model model,
                            const FusedJudgement& judgement) {
  if (g_explaining > 0 || judgement.verdict == judge::Verdict::pass) return {};
  std::optional<std::int64_t> failing;
  if (judgement.first_failure) failing = judgement.first_failure->token;
  return explain(spec, inputs, outputs, model, failing).text;
}

}  // namespace ropecheck::fused
