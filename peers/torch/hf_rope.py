#!/usr/bin/python3
"""RoPE as HF transformers' PyTorch models compute it, for `ropecheck check` (peers/torch/README.md).

    hf_rope.py --recipe llama|gptj INPUTS.npz OUTPUTS.npz

INPUTS.npz is `ropecheck golden export --format npz`; OUTPUTS.npz gets SUITE/ID/output for every
test the recipe expresses, OUTPUTS.npz.skipped.json the reason for each other test.

Written from the formulas of transformers' modeling code (no code copied; names cited):
- recipe `llama` (LlamaRotaryEmbedding + apply_rotary_pos_emb/rotate_half, layout half):
  inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d)) in float32
  (or the scaling's rope_init_fn, modeling_rope_utils), freqs = positions.float() ⊗ inv_freq,
  emb = cat(freqs, freqs), cos = emb.cos()·attention_scaling, sin likewise (float32), cast to the
  data dtype, then q·cos + rotate_half(q)·sin in the data dtype. Partial rotary: the first
  rotary_dim dims rotate, the rest are concatenated back unchanged.
- recipe `gptj` (GPT-J: create_sinusoidal_positions, rotate_every_two, layout interleaved):
  inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64) / d)), the angle table
  positions.float() ⊗ inv_freq in float32, sin/cos float32 repeated per pair, and
  q·cos + rotate_every_two(q)·sin with q in the data dtype: PyTorch promotes f16/bf16 × float32
  to float32, so the rotation is float32, cast back to the data dtype at the end.
Data dtypes f32, f16, bf16 (the recipes' cos/sin are float32, so f64 data is not a float64
recipe: skipped). Scalings (recipe llama only; rope_init_fn of modeling_rope_utils): linear,
dynamic (NTK), yarn (with its attention factor), llama3, longrope; ntk, yarn-ggml, 2-D and M-RoPE
axes and the inverse direction are not in these recipes: skipped with the reason.
"""
import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import peerlib  # noqa: E402
from peerlib import Unsupported  # noqa: E402

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def default_inv_freq(base, dim):
    """The default rope_init_fn: 1.0 / (base ** (arange(0, dim, 2, int64).float() / dim)), float32."""
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def yarn_inv_freq(spec, base, dim):
    """HF yarn (_compute_yarn_parameters): ramp between interpolated and extrapolated frequencies."""
    factor = float(spec["factor"])
    l0 = float(spec["original_max_position"])
    beta_fast = float(spec.get("beta_fast", 32))
    beta_slow = float(spec.get("beta_slow", 1))
    truncate = spec.get("truncate", "true") in ("true", "1")

    def correction_dim(rotations):  # d·ln(L0 / (2π r)) / (2 ln b), in Python floats as HF does
        return dim * math.log(l0 / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    extrapolation_factor = 1 - ramp
    inv_freq = interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor
    return inv_freq, yarn_attention_factor(spec, factor)


def yarn_attention_factor(spec, factor):
    def mscale(scale, m=1.0):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    if "attention_factor" in spec:
        return float(spec["attention_factor"])
    m, m_all = float(spec.get("mscale", 0)), float(spec.get("mscale_all_dim", 0))
    if m and m_all:
        return float(mscale(factor, m) / mscale(factor, m_all))
    return mscale(factor)


def llama3_inv_freq(spec, base, dim):
    """HF llama3 (_compute_llama3_parameters), float32 tensor arithmetic on the default inv_freq."""
    inv_freq = default_inv_freq(base, dim)
    factor = float(spec["factor"])
    low_ff, high_ff = float(spec.get("low_freq_factor", 1)), float(spec.get("high_freq_factor", 4))
    l0 = float(spec["original_max_position"])
    low_wavelen, high_wavelen = l0 / low_ff, l0 / high_ff
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (l0 / wavelen - low_ff) / (high_ff - low_ff)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, scaled)


def longrope_inv_freq(spec, base, dim):
    """HF longrope (_compute_longrope_parameters): 1 / (ext · base^(arange/d)), ext long or short."""
    l0 = int(spec["original_max_position"])
    key = "long_factor" if int(spec.get("seq_len", 0)) > l0 else "short_factor"
    ext = torch.tensor(peerlib.floats(spec, key), dtype=torch.float32)
    shape = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    inv_freq = 1.0 / (ext * base**shape)
    if "attention_factor" in spec:
        attention = float(spec["attention_factor"])
    else:
        factor = float(spec["factor"]) if "factor" in spec else 1.0
        attention = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(l0))
    return inv_freq, attention


def inv_freq_and_attention(spec, recipe):
    """(inv_freq float32 [d/2], attention scaling) of the spec as the recipe's init function gives them."""
    base, dim = float(spec["base"]), peerlib.rotary_dim(spec)
    scaling = spec.get("scaling", "none")
    if recipe == "gptj":
        if scaling != "none":
            raise Unsupported(f"GPT-J's recipe has no scaling ({scaling})")
        return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64) / dim)), 1.0
    if scaling == "none":
        return default_inv_freq(base, dim), 1.0
    if scaling == "linear":
        return default_inv_freq(base, dim) / float(spec["factor"]), 1.0
    if scaling == "dynamic":  # _compute_dynamic_ntk_parameters: base grows with the sequence length
        factor, lmax = float(spec["factor"]), int(spec["original_max_position"])
        seq_len = max(int(spec["seq_len"]), lmax)
        base = base * ((factor * seq_len / lmax) - (factor - 1)) ** (dim / (dim - 2))
        return default_inv_freq(base, dim), 1.0
    if scaling == "yarn":
        return yarn_inv_freq(spec, base, dim)
    if scaling == "llama3":
        return llama3_inv_freq(spec, base, dim), 1.0
    if scaling == "longrope":
        return longrope_inv_freq(spec, base, dim)
    raise Unsupported(f"scaling {scaling} is not a rope_type of HF transformers' LLaMA recipe")


def cos_sin(spec, positions, recipe="llama"):
    """The recipe's float32 cos and sin [tokens, rotary_dim/2] (attention scaling included)."""
    inv_freq, attention = inv_freq_and_attention(spec, recipe)
    if recipe == "gptj":  # create_sinusoidal_positions: einsum of positions.float() and inv_freq
        angles = torch.einsum("i,j->ij", torch.as_tensor(positions).float(), inv_freq).float()
    else:
        angles = torch.outer(torch.as_tensor(positions).float(), inv_freq.float())
    return angles.cos() * attention, angles.sin() * attention


def check_expressible(spec):
    if spec["dtype"] not in DTYPES:
        raise Unsupported("the recipes compute cos/sin in float32: no float64 recipe")
    if spec.get("axes", "none") != "none":
        raise Unsupported(f"{spec['axes']} axes are not in the LLaMA/GPT-J recipes")
    if spec.get("direction", "forward") != "forward":
        raise Unsupported("the recipes have no inverse rotation")


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotate_every_two(x):
    return torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)


def apply(spec, x, positions, recipe):
    """x: numpy [tokens, heads, head_dim] (bf16 arrives as float32). Returns numpy in the data dtype
    (bf16 as its exact float32 value)."""
    check_expressible(spec)
    if recipe == "llama" and spec["layout"] != "half":
        raise Unsupported("the LLaMA recipe (rotate_half) pairs (j, j + d/2): layout half only")
    if recipe == "gptj" and spec["layout"] != "interleaved":
        raise Unsupported("the GPT-J recipe (rotate_every_two) pairs (2j, 2j+1): layout interleaved only")
    dtype = DTYPES[spec["dtype"]]
    d = peerlib.rotary_dim(spec)
    q = torch.from_numpy(x).to(dtype)
    q_rot, q_pass = q[..., :d], q[..., d:]
    cos, sin = cos_sin(spec, positions, recipe)  # [tokens, d/2] float32
    if recipe == "llama":
        cos = torch.cat((cos, cos), dim=-1)[:, None, :].to(dtype)  # emb = cat(freqs, freqs); broadcast over heads
        sin = torch.cat((sin, sin), dim=-1)[:, None, :].to(dtype)
        out = q_rot * cos + rotate_half(q_rot) * sin
    else:
        cos = torch.repeat_interleave(cos[:, None, :], 2, dim=-1)
        sin = torch.repeat_interleave(sin[:, None, :], 2, dim=-1)
        out = (q_rot * cos + rotate_every_two(q_rot) * sin).to(dtype)
    out = torch.cat((out, q_pass), dim=-1)
    return (out.float() if dtype == torch.bfloat16 else out).numpy()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", choices=["llama", "gptj"], required=True)
    parser.add_argument("inputs")
    parser.add_argument("outputs")
    args = parser.parse_args()
    torch.set_num_threads(1)
    done, skipped = peerlib.run_over(args.inputs, args.outputs, lambda s, x, p: apply(s, x, p, args.recipe))
    print(f"torch {args.recipe}: {done} outputs, {skipped} skipped -> {args.outputs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
