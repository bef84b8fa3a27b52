"""Careful RoPE implementations: every one must PASS ropecheck and get NO explanation.

Three styles, each written here from the spec's own definition (spec/README.md, docs/rope.md §2), for
specs that mirror the cases of cases.py:

- `hf`: the transformers recipe. inv_freq in float32 (the default schedule computed as transformers
  does, base ** (2i/d) in float32; scaled schedules computed in float64 and stored as float32),
  freqs = outer(positions.float(), inv_freq), cos/sin in float32 times the attention factor, cast
  to the activations' dtype, q*cos + rotate(q)*sin in that dtype.
- `fused`: a fused-kernel style. θ correctly rounded to float32, the angle position x θ in float32,
  cos/sin in float32, each pair rotated in float32 (a complex multiply for interleaved pairs), one
  rounding to the output dtype.
- `f64`: everything in float64, one rounding to the output dtype.

A control takes the spec text (`candidate(x, positions)` is bound to it), so its parameters are
read from the spec; its arithmetic is its own.
"""
import dataclasses
import functools
import math
from typing import Callable

import torch

from cases import (SPEC_LLAMA32_1B, SPEC_LLAMA3_F32, SPEC_LLAMA_F32, SPEC_DEEPSEEK_ROPE, SPEC_FLUX_TEXT, SPEC_GLM4, SPEC_GLM4V, SPEC_GPT_OSS, SPEC_GPTJ, SPEC_LAGUNA_YARN,
                   SPEC_LLAMA2_F16, SPEC_LLAMA3_8B, SPEC_LLAMA31, SPEC_NANOGPT, SPEC_NOMIC_DYNAMIC, SPEC_PARTIAL_HALF,
                   SPEC_PHI3_LONG, SPEC_PHI3_SHORT, SPEC_QWEN25_DRAFT, SPEC_QWEN25_YARN, SPEC_QWEN3VL)


@dataclasses.dataclass(frozen=True)
class Control:
    name: str
    style: str
    spec: str
    context: int
    candidate: Callable
    dtype: str = ""
    heads: int = 2


def parse(spec):
    """The compact spec text as a dict with the spec's defaults filled in."""
    d = dict(item.split("=", 1) for item in spec.split(","))
    d.setdefault("rotary_dim", d["head_dim"])
    d.setdefault("direction", "forward")
    d.setdefault("scaling", "none")
    d.setdefault("axes", "none")
    return d


def schedule(d):
    """θ'_j for j < rotary_dim/2 (float64) and the attention factor, from the spec's fields."""
    dim = int(d["rotary_dim"])
    base = float(d["base"])
    kind = d["scaling"]
    pairs = range(dim // 2)
    attention = 1.0
    if kind == "ntk":
        base = base * float(d["factor"]) ** (dim / (dim - 2))
    if kind == "dynamic":
        f, lmax = float(d["factor"]), int(d["original_max_position"])
        length = max(int(d["seq_len"]), lmax)
        base = base * (f * length / lmax - (f - 1)) ** (dim / (dim - 2))
    theta = [base ** (-2.0 * j / dim) for j in pairs]
    if kind == "linear":
        theta = [t / float(d["factor"]) for t in theta]
    elif kind == "yarn":
        f, l0 = float(d["factor"]), int(d["original_max_position"])

        def corr(rotations):
            return dim * math.log(l0 / (2 * math.pi * rotations)) / (2 * math.log(base))
        low, high = corr(float(d.get("beta_fast", 32))), corr(float(d.get("beta_slow", 1)))
        if d.get("truncate", "true") == "true":
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = [min(max((j - low) / (high - low), 0.0), 1.0) for j in pairs]
        theta = [t / f * r + t * (1 - r) for t, r in zip(theta, ramp)]

        def mscale(m):
            return 0.1 * m * math.log(f) + 1 if f > 1 else 1.0
        if "attention_factor" in d:
            attention = float(d["attention_factor"])
        elif float(d.get("mscale", 0)) and float(d.get("mscale_all_dim", 0)):
            attention = mscale(float(d["mscale"])) / mscale(float(d["mscale_all_dim"]))
        else:
            attention = mscale(1.0)
    elif kind == "llama3":
        f, l0 = float(d["factor"]), int(d["original_max_position"])
        low, high = float(d["low_freq_factor"]), float(d["high_freq_factor"])
        out = []
        for t in theta:
            wavelength = 2 * math.pi / t
            if wavelength < l0 / high:
                out.append(t)
            elif wavelength > l0 / low:
                out.append(t / f)
            else:
                s = (l0 / wavelength - low) / (high - low)
                out.append((1 - s) * t / f + s * t)
        theta = out
    elif kind == "longrope":
        l0 = int(d["original_max_position"])
        factors = d["long_factor"] if int(d["seq_len"]) > l0 else d["short_factor"]
        ext = [float(v) for v in factors.split("/")]
        theta = [1.0 / (e * float(d["base"]) ** (2.0 * j / dim)) for j, e in zip(pairs, ext)]
        f = float(d["factor"])
        if "attention_factor" in d:
            attention = float(d["attention_factor"])
        elif f > 1:
            attention = math.sqrt(1 + math.log(f) / math.log(l0))
    return theta, attention


def components(d):
    """The position component of each pair (0 for single-axis specs)."""
    pairs = int(d["rotary_dim"]) // 2
    if d["axes"] == "mrope":
        sections = [int(v) for v in d["sections"].split("/")]
        return [k for k, n in enumerate(sections) for _ in range(n)]
    if d["axes"] == "imrope":
        s = [int(v) for v in d["sections"].split("/")]
        out = []
        for j in range(pairs):
            if j % 3 == 1 and j < 3 * s[1]:
                out.append(1)
            elif j % 3 == 2 and j < 3 * s[2]:
                out.append(2)
            else:
                out.append(0)
        return out
    return [0] * pairs


def pair_positions(positions, d, dtype):
    """positions as [T, P] in `dtype`: each pair's own component for multi-axis specs."""
    if positions.dim() == 2:
        return positions[:, components(d)].to(dtype)
    return positions.to(dtype)[:, None].expand(-1, int(d["rotary_dim"]) // 2)


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), -1)


def _rotate_adjacent(x):
    return torch.stack((-x[..., 1::2], x[..., 0::2]), -1).flatten(-2)


def hf_style(spec, x, positions):
    d = parse(spec)
    rd = int(d["rotary_dim"])
    theta, attention = schedule(d)
    if d["scaling"] == "none":  # transformers' own float32 computation of the default schedule
        inv_freq = 1.0 / (float(d["base"]) ** (torch.arange(0, rd, 2, dtype=torch.int64).float() / rd))
    else:
        inv_freq = torch.tensor(theta, dtype=torch.float64).float()
    freqs = pair_positions(positions, d, torch.float32) * inv_freq[None, :]
    cos, sin = freqs.cos() * attention, freqs.sin() * attention
    if d["direction"] == "inverse":
        sin = -sin
    if d["layout"] == "half":
        cos, sin, rot = torch.cat((cos, cos), -1), torch.cat((sin, sin), -1), _rotate_half
    else:
        cos, sin, rot = cos.repeat_interleave(2, -1), sin.repeat_interleave(2, -1), _rotate_adjacent
    cos, sin = cos.to(x.dtype)[:, None, :], sin.to(x.dtype)[:, None, :]
    q, rest = x[..., :rd], x[..., rd:]
    return torch.cat((q * cos + rot(q) * sin, rest), -1)


def _pairs(x, rd, layout):
    """(first, second) members of each rotary pair: [T, H, P] views."""
    q = x[..., :rd]
    if layout == "half":
        return q[..., : rd // 2], q[..., rd // 2:]
    return q[..., 0::2], q[..., 1::2]


def _assemble(x, a, b, rd, layout):
    if layout == "half":
        rot = torch.cat((a, b), -1)
    else:
        rot = torch.stack((a, b), -1).flatten(-2)
    return torch.cat((rot.to(x.dtype), x[..., rd:]), -1)


def fused_style(spec, x, positions):
    d = parse(spec)
    rd = int(d["rotary_dim"])
    theta, attention = schedule(d)
    theta32 = torch.tensor(theta, dtype=torch.float64).float()
    angle = pair_positions(positions, d, torch.float32) * theta32[None, :]
    if d["direction"] == "inverse":
        angle = -angle
    if d["layout"] == "interleaved" and rd == x.shape[-1]:  # Meta's complex multiply
        z = torch.view_as_complex(x.float().reshape(*x.shape[:-1], rd // 2, 2).contiguous())
        rotor = torch.polar(torch.full_like(angle, attention), angle)[:, None, :]
        return torch.view_as_real(z * rotor).flatten(-2).to(x.dtype)
    c, s = (angle.cos() * attention)[:, None, :], (angle.sin() * attention)[:, None, :]
    a, b = _pairs(x.float(), rd, d["layout"])
    return _assemble(x, a * c - b * s, a * s + b * c, rd, d["layout"])


def f64_style(spec, x, positions):
    d = parse(spec)
    rd = int(d["rotary_dim"])
    theta, attention = schedule(d)
    angle = pair_positions(positions, d, torch.float64) * torch.tensor(theta, dtype=torch.float64)[None, :]
    if d["direction"] == "inverse":
        angle = -angle
    c, s = (angle.cos() * attention)[:, None, :], (angle.sin() * attention)[:, None, :]
    a, b = _pairs(x.double(), rd, d["layout"])
    return _assemble(x, a * c - b * s, a * s + b * c, rd, d["layout"])


STYLES = {"hf": hf_style, "fused": fused_style, "f64": f64_style}

SPEC_VICUNA_LINEAR = "layout=half,head_dim=128,base=10000,dtype=f16,scaling=linear,factor=4"

# (label, spec, context, styles, heads): the specs of the cases, and a linear-scaling one.
_PLAN = [
    ("llama3_8b", SPEC_LLAMA3_8B, 8192, ("hf", "fused", "f64"), 2),
    ("qwen25_draft", SPEC_QWEN25_DRAFT, 32768, ("hf", "f64"), 2),
    ("llama31_llama3", SPEC_LLAMA31, 131072, ("hf", "fused"), 2),
    ("phi3_longrope_short", SPEC_PHI3_SHORT, 4096, ("hf", "f64"), 2),
    ("phi3_longrope_long", SPEC_PHI3_LONG, 8192, ("hf", "fused"), 2),
    ("gpt_oss_yarn", SPEC_GPT_OSS, 131072, ("hf", "f64"), 2),
    ("qwen25_yarn", SPEC_QWEN25_YARN, 131072, ("hf", "fused"), 2),
    ("nomic_dynamic", SPEC_NOMIC_DYNAMIC, 3072, ("hf", "f64"), 2),
    ("laguna_yarn", SPEC_LAGUNA_YARN, 262144, ("hf", "fused"), 2),
    ("glm4v_mrope", SPEC_GLM4V, 65536, ("hf", "f64"), 2),
    ("qwen3vl_imrope", SPEC_QWEN3VL, 262144, ("hf", "fused"), 2),
    ("glm4_partial", SPEC_GLM4, 32768, ("hf", "f64"), 2),
    ("partial_half", SPEC_PARTIAL_HALF, 4096, ("fused", "f64"), 2),
    ("gptj", SPEC_GPTJ, 2048, ("hf", "fused"), 2),
    ("nanogpt_inverse", SPEC_NANOGPT, 1024, ("fused", "f64"), 2),
    ("llama2_f16", SPEC_LLAMA2_F16, 8192, ("hf", "fused"), 2),
    ("vicuna_linear", SPEC_VICUNA_LINEAR, 16384, ("hf", "f64"), 2),
    ("flux_text", SPEC_FLUX_TEXT, 512, ("fused", "f64"), 2),
    ("deepseek_yarn", SPEC_DEEPSEEK_ROPE, 163840, ("hf", "fused"), 4),
    ("llama32_1b_llama3", SPEC_LLAMA32_1B, 131072, ("hf", "fused"), 2),
    ("llama3_f32", SPEC_LLAMA3_F32, 8192, ("hf", "f64"), 2),
    ("llama_f32_8_heads", SPEC_LLAMA_F32, 4096, ("hf", "fused"), 8),
]


def _dtype(spec):
    return parse(spec)["dtype"]


CONTROLS = [
    Control(f"{label}_{style}", style, spec, context, functools.partial(STYLES[style], spec), dtype=_dtype(spec),
            heads=heads)
    for label, spec, context, styles, heads in _PLAN
    for style in styles
]
