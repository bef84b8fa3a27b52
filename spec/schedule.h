// The frequency schedule: the one place where a Spec becomes per-pair angular frequencies θ'_j and
// the attention (magnitude) factor. Every implementation in the project instantiates this template:
// the reference with MPFR numbers at its working precision, the kernels with long double once per
// spec. Formulas: docs/rope.md §2 (RoFormer for the default schedule; HF transformers and llama.cpp for
// the scaling schemes, as cited per case).
//
// Real needs: construction from int, + - * /, comparisons, and pow, log, exp, sqrt, floor, ceil,
// acos found by argument-dependent or std lookup.
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "spec/spec.h"

namespace ropecheck {

// Reads an exact decimal string as Real: correctly rounded at Real's precision.
template <class Real>
Real decimal_to(const std::string& text) {
  if constexpr (std::is_floating_point_v<Real>) {
    return static_cast<Real>(std::strtold(text.c_str(), nullptr));
  } else {
    return Real(text);
  }
}

// Which component of a token's position tuple drives pair j (0 for single-axis specs). The
// frequency of pair j is θ'_j whatever the component (ggml and HF multiply every component's
// position by the same inv_freq[j]); only the position changes.
//
// M-RoPE and interleaved M-RoPE follow ggml (ggml-org/llama.cpp ggml/src/ggml-cpu/ops.cpp,
// ggml_mrope_cache_init): with sections s_0..s_{n-1} and S = Σ s_k, sector = j mod S (= j, since
// validate() makes S = rotary_dim/2), and
//   mrope:  the k with s_0 + … + s_{k−1} <= sector < s_0 + … + s_k (a zero section owns no pair);
//   imrope: 1 (h) if sector mod 3 = 1 and sector < 3·s_1; else 2 (w) if sector mod 3 = 2 and
//           sector < 3·s_2; else with four sections 0 (t) if sector mod 3 = 0 and sector < 3·s_0,
//           and 3 (e) otherwise; with three sections 0 (t) otherwise — HF transformers'
//           Qwen3-VL apply_interleaved_mrope, which starts from t and overwrites the h and w slots.
// The two differ only on pairs past the interleaved range (24/20/20: pairs 61 and 62 are t in HF,
// e in ggml's 24/20/20/0).
inline int position_component(const Spec& spec, int pair_index) {
  const std::vector<int>& s = spec.axes.sections;
  switch (spec.axes.kind) {
    case AxesKind::none: return 0;
    case AxesKind::two_d: return pair_index % 2;  // 2-D RoPE (docs/rope.md §2): (m1·θ_g, m2·θ_g) per group of 4 dims
    case AxesKind::mrope: {
      int start = 0;
      for (int k = 0; k < static_cast<int>(s.size()); ++k) {
        start += s[k];
        if (pair_index < start) return k;
      }
      return static_cast<int>(s.size()) - 1;
    }
    case AxesKind::imrope: {
      int total = 0;
      for (int n : s) total += n;
      const int sector = total > 0 ? pair_index % total : pair_index;
      if (sector % 3 == 1 && sector < 3 * s[1]) return 1;
      if (sector % 3 == 2 && sector < 3 * s[2]) return 2;
      if (s.size() == 4 && !(sector % 3 == 0 && sector < 3 * s[0])) return 3;
      return 0;
    }
  }
  return 0;
}

namespace schedule_detail {
template <class Real>
Real clamp(Real v, Real lo, Real hi) {
  if (v < lo) return lo;
  if (v > hi) return hi;
  return v;
}
// YaRN correction dimension (HF find_correction_dim, llama.cpp ggml_rope_yarn_corr_dim):
// corr(r) = d·ln(L0 / (2π r)) / (2 ln b)
template <class Real>
Real yarn_correction_dim(Real rotations, Real dim, Real base, Real original_max_position) {
  using std::acos;
  using std::log;
  const Real two_pi = 2 * acos(Real(-1));
  return dim * log(original_max_position / (two_pi * rotations)) / (2 * log(base));
}
// YaRN magnitude g(s, m) = 0.1·m·ln s + 1 for s > 1, else 1 (HF get_mscale).
template <class Real>
Real yarn_mscale(Real scale, Real m) {
  using std::log;
  if (!(scale > 1)) return Real(1);
  return Real(1) / 10 * m * log(scale) + 1;
}
}  // namespace schedule_detail

// θ'_j: the angular frequency of rotary pair j ∈ [0, rotary_dim/2) (radians per position unit).
template <class Real>
Real frequency(const Spec& spec, int pair_index) {
  using std::acos;
  using std::ceil;
  using std::floor;
  using std::log;
  using std::pow;
  using std::sqrt;
  namespace sd = schedule_detail;
  const Scaling& sc = spec.scaling;
  // Frequency index k and the dimension d that the schedule is laid over: 2-D RoPE runs one
  // 1-D schedule of rotary_dim/2 dims per axis (2-D RoPE, docs/rope.md §2).
  const bool two_d = spec.axes.kind == AxesKind::two_d;
  const int k = two_d ? pair_index / 2 : pair_index;
  const Real dim = Real(two_d ? spec.rotary_dim / 2 : spec.rotary_dim);
  Real base = decimal_to<Real>(spec.base);
  const Real exponent = Real(2 * k) / dim;  // θ_k = b^(−2k/d), RoFormer eq. 15

  switch (sc.type) {
    case ScalingType::none:
      return pow(base, -exponent);
    case ScalingType::linear:  // position interpolation: θ/f
      return pow(base, -exponent) / decimal_to<Real>(sc.factor);
    case ScalingType::ntk: {  // NTK-aware: b' = b·f^(d/(d−2))
      const Real f = decimal_to<Real>(sc.factor);
      base = base * pow(f, dim / (dim - 2));
      return pow(base, -exponent);
    }
    case ScalingType::dynamic: {  // HF dynamic NTK: b' = b·(f·L'/Lmax − (f − 1))^(d/(d−2))
      // Evaluated as 1 + f·(L' − Lmax)/Lmax, the same number (L' ≥ Lmax): a sum of non-negative
      // terms, each within a few roundings, where HF's difference of two near-equal terms loses
      // every bit for a large f (f = 1e308 at L' = Lmax gave 0, and θ'_j = +Inf, at 256 bits).
      const Real f = decimal_to<Real>(sc.factor);
      const Real lmax = Real(sc.original_max_position);
      const std::int64_t len = sc.seq_len > sc.original_max_position ? sc.seq_len : sc.original_max_position;
      const Real beyond = Real(len - sc.original_max_position);  // exact: both are int64 >= 1
      base = base * pow(1 + f * beyond / lmax, dim / (dim - 2));
      return pow(base, -exponent);
    }
    case ScalingType::yarn: {  // HF _compute_yarn_parameters
      const Real f = decimal_to<Real>(sc.factor);
      const Real l0 = Real(sc.original_max_position);
      Real low = sd::yarn_correction_dim(decimal_to<Real>(sc.beta_fast), dim, base, l0);
      Real high = sd::yarn_correction_dim(decimal_to<Real>(sc.beta_slow), dim, base, l0);
      if (sc.truncate) {
        low = floor(low);
        high = ceil(high);
      }
      if (low < 0) low = Real(0);
      if (high > dim - 1) high = dim - 1;
      if (low == high) high = high + Real(1) / 1000;
      const Real ramp = sd::clamp((Real(k) - low) / (high - low), Real(0), Real(1));
      const Real theta = pow(base, -exponent);
      return theta / f * ramp + theta * (1 - ramp);
    }
    case ScalingType::yarn_ggml: {  // llama.cpp rope_yarn + ggml_rope_yarn_corr_dims
      const Real freq_scale = decimal_to<Real>(sc.freq_scale);
      const Real ext = decimal_to<Real>(sc.ext_factor);
      const Real l0 = Real(sc.original_max_position);
      Real low = floor(sd::yarn_correction_dim(decimal_to<Real>(sc.beta_fast), dim, base, l0));
      Real high = ceil(sd::yarn_correction_dim(decimal_to<Real>(sc.beta_slow), dim, base, l0));
      if (low < 0) low = Real(0);
      if (high > dim - 1) high = dim - 1;
      Real span = high - low;
      if (span < Real(1) / 1000) span = Real(1) / 1000;
      const Real ramp = 1 - sd::clamp((Real(k) - low) / span, Real(0), Real(1));
      const Real mix = ramp * ext;
      const Real theta = pow(base, -exponent);
      return theta * freq_scale * (1 - mix) + theta * mix;
    }
    case ScalingType::llama3: {  // HF _compute_llama3_parameters
      const Real f = decimal_to<Real>(sc.factor);
      const Real low_ff = decimal_to<Real>(sc.low_freq_factor);
      const Real high_ff = decimal_to<Real>(sc.high_freq_factor);
      const Real l0 = Real(sc.original_max_position);
      const Real theta = pow(base, -exponent);
      const Real wavelength = 2 * acos(Real(-1)) / theta;
      if (wavelength < l0 / high_ff) return theta;
      if (wavelength > l0 / low_ff) return theta / f;
      const Real s = (l0 / wavelength - low_ff) / (high_ff - low_ff);
      return (1 - s) * theta / f + s * theta;
    }
    case ScalingType::longrope: {  // HF _compute_longrope_parameters: θ = 1/(ext_k · b^(2k/d))
      const auto& factors = sc.seq_len > sc.original_max_position ? sc.long_factor : sc.short_factor;
      return 1 / (decimal_to<Real>(factors[static_cast<std::size_t>(k)]) * pow(base, exponent));
    }
  }
  return pow(base, -exponent);
}

// The attention factor that multiplies cos and sin (1 for schemes without one).
template <class Real>
Real attention_factor(const Spec& spec) {
  using std::log;
  using std::sqrt;
  namespace sd = schedule_detail;
  const Scaling& sc = spec.scaling;
  switch (sc.type) {
    case ScalingType::yarn: {
      if (sc.attention_factor) return decimal_to<Real>(*sc.attention_factor);
      const Real f = decimal_to<Real>(sc.factor);
      if (sc.mscale && sc.mscale_all_dim && decimal_to<Real>(*sc.mscale) != 0 &&
          decimal_to<Real>(*sc.mscale_all_dim) != 0) {
        return sd::yarn_mscale(f, decimal_to<Real>(*sc.mscale)) /
               sd::yarn_mscale(f, decimal_to<Real>(*sc.mscale_all_dim));
      }
      return sd::yarn_mscale(f, Real(1));
    }
    case ScalingType::yarn_ggml: {  // mscale *= 1 + 0.1·ln(1/freq_scale) when ext_factor ≠ 0
      const Real attn = decimal_to<Real>(sc.attn_factor);
      if (decimal_to<Real>(sc.ext_factor) == 0) return attn;
      return attn * (1 + Real(1) / 10 * log(1 / decimal_to<Real>(sc.freq_scale)));
    }
    case ScalingType::longrope: {  // √(1 + ln f / ln L0) for f > 1
      if (sc.attention_factor) return decimal_to<Real>(*sc.attention_factor);
      if (sc.factor.empty()) return Real(1);
      const Real f = decimal_to<Real>(sc.factor);
      if (!(f > 1)) return Real(1);
      return sqrt(1 + log(f) / log(Real(sc.original_max_position)));
    }
    default:
      return Real(1);
  }
}

}  // namespace ropecheck
