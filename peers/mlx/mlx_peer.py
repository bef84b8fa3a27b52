#!/usr/bin/env python3
"""MLX's fused RoPE, `mx.fast.rope`, on the CPU, for `ropecheck check` (peers/mlx/README.md).

    mlx_peer.py INPUTS.npz OUT_DIR

INPUTS.npz is `ropecheck golden export --format npz`. Writes OUT_DIR/mlx-rope.npz (traditional=False:
pairs (j, j + d/2), layout half) and OUT_DIR/mlx-rope-traditional.npz (traditional=True: pairs
(2j, 2j+1), layout interleaved), each with SUITE/ID/output for every test it expresses and
OUT_DIR/IMPL.npz.skipped.json with the reason for every other test. Prints one header line; exits 3
when mlx does not import.

How each spec is handed to mx.fast.rope(a, dims, traditional=, base=, scale=, offset=, freqs=)
(MLX documentation of mlx.core.fast.rope; the scaling conventions of mlx-lm's rope_utils):
- the input [tokens, heads, head_dim] is viewed as (B = tokens, heads, T = 1, head_dim) and
  `offset` is the vector of the B token positions (int32), so one call rotates every token of a
  test at its own position (offset + 0 along the T axis of length 1);
- dims = rotary_dim (partial rotary: MLX leaves the remaining dims unchanged);
- scaling none: base = the spec's base; linear: base, scale = 1/factor (mlx-lm's "linear");
  ntk and dynamic: base = the scaled base b' computed here in float64 (ntk: b·f^(d/(d−2)); HF
  dynamic: b·(f·L/L0 − (f − 1))^(d/(d−2)) with L = max(seq_len, L0));
- scaling llama3, yarn, yarn-ggml, longrope: freqs = the periods 1/θ'_j computed here in float64
  (formulas of HF modeling_rope_utils / llama.cpp, as spec/schedule.h names them) and rounded to
  float32, base None (mlx-lm's Llama3RoPE, YarnRoPE and SuScaledRoPE pass such `freqs`); their
  attention factor g ≠ 1 (yarn, yarn-ggml, longrope) is applied as mlx-lm does, x[..., :dims] *= g
  in the data dtype before mx.fast.rope (mx.fast.rope has no magnitude argument);
- direction inverse: mx.vjp of mx.fast.rope with the input as cotangent — MLX's backward RoPE, the
  transposed (inverse) rotation.
Data dtypes f32, f16, bf16 (mx.bfloat16). Not expressible (skipped with the reason): f64 (mx.fast.rope
returns float32 for a float64 input), 2-D and M-RoPE axes (one offset per token), the other layout.
"""
import math
import os
import sys

import numpy as np

# peers/ only while importing peerlib: its folders (mlx/, timm/, ...) would otherwise shadow, as
# namespace packages, a library that is not installed.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import peerlib  # noqa: E402
from peerlib import Unsupported  # noqa: E402

del sys.path[0]

IMPLEMENTATIONS = {"mlx-rope": False, "mlx-rope-traditional": True}  # name -> traditional
LAYOUT = {False: "half", True: "interleaved"}


def theta(base, dim):
    """θ_j = base^(−2j/d), float64, j < d/2."""
    return base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)


def correction_dim(rotations, dim, base, l0):
    return dim * math.log(l0 / (2 * math.pi * rotations)) / (2 * math.log(base))


def yarn_mscale(scale, m=1.0):
    return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0


def yarn_frequencies(spec, base, dim):
    """HF _compute_yarn_parameters: the ramp between θ/f and θ, and the attention factor."""
    f, l0 = float(spec["factor"]), float(spec["original_max_position"])
    low = correction_dim(float(spec.get("beta_fast", 32)), dim, base, l0)
    high = correction_dim(float(spec.get("beta_slow", 1)), dim, base, l0)
    if spec.get("truncate", "true") in ("true", "1"):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    th = theta(base, dim)
    freqs = th / f * ramp + th * (1 - ramp)
    if "attention_factor" in spec:
        g = float(spec["attention_factor"])
    else:
        m, m_all = float(spec.get("mscale", 0)), float(spec.get("mscale_all_dim", 0))
        g = yarn_mscale(f, m) / yarn_mscale(f, m_all) if m and m_all else yarn_mscale(f)
    return freqs, g


def yarn_ggml_frequencies(spec, base, dim):
    """llama.cpp rope_yarn with ggml_rope_yarn_corr_dims (floor/ceil), ext_factor, freq_scale, attn_factor."""
    freq_scale, ext = float(spec["freq_scale"]), float(spec["ext_factor"])
    l0 = float(spec["original_max_position"])
    low = max(math.floor(correction_dim(float(spec["beta_fast"]), dim, base, l0)), 0)
    high = min(math.ceil(correction_dim(float(spec["beta_slow"]), dim, base, l0)), dim - 1)
    span = max(high - low, 0.001)
    mix = (1 - np.clip((np.arange(dim // 2, dtype=np.float64) - low) / span, 0, 1)) * ext
    th = theta(base, dim)
    g = float(spec["attn_factor"])
    if ext != 0:
        g *= 1 + 0.1 * math.log(1 / freq_scale)
    return th * freq_scale * (1 - mix) + th * mix, g


def llama3_frequencies(spec, base, dim):
    """HF _compute_llama3_parameters."""
    f, l0 = float(spec["factor"]), float(spec["original_max_position"])
    low_ff, high_ff = float(spec.get("low_freq_factor", 1)), float(spec.get("high_freq_factor", 4))
    th = theta(base, dim)
    wavelength = 2 * math.pi / th
    s = (l0 / wavelength - low_ff) / (high_ff - low_ff)
    smooth = (1 - s) * th / f + s * th
    return np.where(wavelength < l0 / high_ff, th, np.where(wavelength > l0 / low_ff, th / f, smooth))


def longrope_frequencies(spec, base, dim):
    """HF _compute_longrope_parameters: θ_j = 1/(ext_j · b^(2j/d)), long factors past L0."""
    l0 = int(spec["original_max_position"])
    ext = np.array(peerlib.floats(spec, "long_factor" if int(spec.get("seq_len", 0)) > l0 else "short_factor"))
    freqs = 1.0 / (ext * base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    if "attention_factor" in spec:
        g = float(spec["attention_factor"])
    else:
        f = float(spec["factor"]) if "factor" in spec else 1.0
        g = 1.0 if f <= 1 else math.sqrt(1 + math.log(f) / math.log(l0))
    return freqs, g


def rope_arguments(spec):
    """(keyword arguments of mx.fast.rope besides a/dims/traditional/offset, attention factor g)."""
    base, dim = float(spec["base"]), peerlib.rotary_dim(spec)
    scaling = spec.get("scaling", "none")
    if scaling == "none":
        return {"base": base, "scale": 1.0}, 1.0
    if scaling == "linear":
        return {"base": base, "scale": 1.0 / float(spec["factor"])}, 1.0
    if scaling == "ntk":
        return {"base": base * float(spec["factor"]) ** (dim / (dim - 2)), "scale": 1.0}, 1.0
    if scaling == "dynamic":
        f, l0 = float(spec["factor"]), int(spec["original_max_position"])
        length = max(int(spec["seq_len"]), l0)
        return {"base": base * (f * length / l0 - (f - 1)) ** (dim / (dim - 2)), "scale": 1.0}, 1.0
    if scaling == "llama3":
        freqs, g = llama3_frequencies(spec, base, dim), 1.0
    elif scaling == "yarn":
        freqs, g = yarn_frequencies(spec, base, dim)
    elif scaling == "yarn-ggml":
        freqs, g = yarn_ggml_frequencies(spec, base, dim)
    elif scaling == "longrope":
        freqs, g = longrope_frequencies(spec, base, dim)
    else:
        raise Unsupported(f"scaling {scaling} has no mx.fast.rope expression here")
    return {"base": None, "scale": 1.0, "freqs": (1.0 / freqs).astype(np.float32)}, g


def compute(mx, traditional, spec, x, positions):
    dtypes = {"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16}
    if spec["dtype"] not in dtypes:
        raise Unsupported("mx.fast.rope returns float32 for float64 input (angles are float32): no f64 RoPE")
    peerlib.one_dtype(spec, "mx.fast.rope returns its input's dtype: no mixed input/output dtypes")
    if spec.get("axes", "none") != "none":
        raise Unsupported(f"{spec['axes']} axes: mx.fast.rope takes one position (offset) per token")
    if spec["layout"] != LAYOUT[traditional]:
        raise Unsupported(f"traditional={traditional} pairs layout {LAYOUT[traditional]} only")
    kwargs, g = rope_arguments(spec)
    if g != 1.0 and spec.get("direction", "forward") == "inverse":
        raise Unsupported("inverse with an attention factor: mx.fast.rope has no magnitude to undo")
    if kwargs.get("freqs") is not None:
        kwargs["freqs"] = mx.array(kwargs["freqs"])
    dims = peerlib.rotary_dim(spec)
    tokens, heads, head_dim = x.shape
    a = mx.array(x).astype(dtypes[spec["dtype"]]).reshape(tokens, heads, 1, head_dim)
    offset = mx.array(np.asarray(positions, dtype=np.int64).astype(np.int32))
    if g != 1.0:  # mlx-lm's YarnRoPE / SuScaledRoPE: x[..., :dims] = g * x[..., :dims], data dtype
        a = mx.concatenate([g * a[..., :dims], a[..., dims:]], axis=-1) if dims < head_dim else g * a

    def rope(t):
        return mx.fast.rope(t, dims, traditional=traditional, offset=offset, **kwargs)

    if spec.get("direction", "forward") == "inverse":
        _, (out,) = mx.vjp(rope, [a], [a])  # backward RoPE: the transposed rotation
    else:
        out = rope(a)
    out = out.reshape(tokens, heads, head_dim)
    mx.eval(out)
    if spec["dtype"] == "bf16":
        return np.array(out.astype(mx.float32))
    return np.array(out)


def load():
    import mlx.core as mx
    from importlib.metadata import version

    mx.set_default_device(mx.cpu)
    return (f"- MLX: PyPI mlx[cpu]=={version('mlx')} (CPU), mx.fast.rope",
            {name: (lambda s, x, p, t=traditional: compute(mx, t, s, x, p)) for name, traditional in IMPLEMENTATIONS.items()})


if __name__ == "__main__":
    sys.exit(peerlib.main("mlx_peer", load))
