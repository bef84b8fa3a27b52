#!/usr/bin/env python3
"""lucidrains' rotary-embedding-torch (`RotaryEmbedding`) on PyTorch, for `ropecheck check`
(peers/rotary_embedding_torch/README.md).

    rotary_embedding_torch_peer.py INPUTS.npz OUT_DIR

INPUTS.npz is `ropecheck golden export --format npz`. Writes, per implementation, OUT_DIR/IMPL.npz
with SUITE/ID/output for every test it expresses and OUT_DIR/IMPL.npz.skipped.json with the reason
for every other test. Prints one header line; exits 3 when rotary_embedding_torch does not import.

Implementations (the library's public API, version 0.3.6 — the last release that accepts torch < 2):
- `rotary-embedding-torch`: `RotaryEmbedding.rotate_queries_or_keys(t, offset=position)`, one call
  per token (t = that token's heads, shape [heads, 1, rotary_dim]): the library's own positions
  (arange(seq_len) + offset) / interpolate_factor, built in t's dtype (get_seq_pos), the angle
  table positions ⊗ freqs in float32 (forward), then apply_rotary_emb.
- `rotary-embedding-torch-apply`: explicit positions through the module's forward: freqs =
  rotary(positions as float32 / interpolate_factor) (float32 einsum with its freqs, each repeated
  per pair), then `apply_rotary_emb(freqs, t)` on all tokens at once.
Both: apply_rotary_emb casts the angle table to t's dtype (`freqs.to(t)`), takes cos/sin there and
rotates t·cos + rotate_half(t)·sin, rotate_half pairing dims (2j, 2j+1): layout interleaved.
Partial rotary: RotaryEmbedding(dim=rotary_dim), apply_rotary_emb passes dims past rotary_dim through.
Constructor: dim = rotary_dim, theta = base, freqs_for='lang' (freqs = 1/(theta^(arange(0, dim, 2)/dim)),
float32); scaling linear: interpolate_factor = factor (>= 1); ntk: theta_rescale_factor = factor
(theta *= factor^(dim/(dim−2))). Data dtypes f32, f16, bf16 (torch dtypes).
Not expressible (skipped with the reason): layout half, f64 (freqs are a float32 parameter: no
float64 RoPE), dynamic/yarn/yarn-ggml/llama3/longrope (no such option), 2-D/M-RoPE axes (one position
per token), the inverse direction.
"""
import os
import sys

import numpy as np

# peers/ only while importing peerlib: its folders (mlx/, timm/, ...) would otherwise shadow, as
# namespace packages, a library that is not installed.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import peerlib  # noqa: E402
from peerlib import Unsupported  # noqa: E402

del sys.path[0]

IMPLEMENTATIONS = ("rotary-embedding-torch", "rotary-embedding-torch-apply")


def module_arguments(spec):
    args = {"dim": peerlib.rotary_dim(spec), "theta": float(spec["base"]), "freqs_for": "lang"}
    scaling = spec.get("scaling", "none")
    if scaling == "none":
        return args
    if scaling == "linear":
        factor = float(spec["factor"])
        if factor < 1:
            raise Unsupported(f"linear factor {factor} < 1: interpolate_factor must be >= 1")
        return dict(args, interpolate_factor=factor)
    if scaling == "ntk":
        return dict(args, theta_rescale_factor=float(spec["factor"]))
    raise Unsupported(f"scaling {scaling}: RotaryEmbedding has interpolate_factor (linear) and "
                      "theta_rescale_factor (NTK) only")


def compute(torch, ret, impl, spec, x, positions):
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    if spec["dtype"] not in dtypes:
        raise Unsupported("the frequencies are a float32 parameter and the angles float32: no f64 RoPE")
    peerlib.one_dtype(spec, "apply_rotary_emb computes in t's dtype: no mixed input/output dtypes")
    if spec.get("axes", "none") != "none":
        raise Unsupported(f"{spec['axes']} axes: one position per token ('lang' frequencies)")
    peerlib.forward_only(spec, "the library has no inverse rotation")
    if spec["layout"] != "interleaved":
        raise Unsupported("rotate_half pairs dims (2j, 2j+1): layout interleaved only")
    rotary = ret.RotaryEmbedding(**module_arguments(spec))
    dtype = dtypes[spec["dtype"]]
    t = torch.from_numpy(x).to(dtype)  # [tokens, heads, head_dim]
    pos = np.asarray(positions, dtype=np.int64)
    try:
        out = rotate(torch, ret, rotary, impl, t, pos)
    except RuntimeError as why:  # torch 1.13's CPU kernels have no float16 cos/sin
        if "not implemented for 'Half'" in str(why):
            raise Unsupported(f"apply_rotary_emb takes cos/sin in t's dtype and this torch's CPU has none for "
                              f"float16: {str(why).splitlines()[0]}") from None
        raise
    return (out.float() if dtype == torch.bfloat16 else out).numpy()


def rotate(torch, ret, rotary, impl, t, pos):
    with torch.no_grad():
        if impl == "rotary-embedding-torch":
            # one call per token: t[i] as [heads, seq 1, head_dim] (seq_dim -2), offset = its position
            out = torch.stack([rotary.rotate_queries_or_keys(t[i][:, None, :], offset=int(p))[:, 0, :]
                               for i, p in enumerate(pos.tolist())])
        else:
            seq = torch.from_numpy(pos).float() / rotary.interpolate_factor
            freqs = rotary(seq)  # [tokens, rotary_dim]: positions ⊗ freqs, repeated per pair
            out = ret.apply_rotary_emb(freqs[:, None, :], t, seq_dim=0)
    return out


def load():
    import torch
    import rotary_embedding_torch as ret
    from importlib.metadata import version

    versions = version("rotary-embedding-torch"), version("einops")  # not installed: PackageNotFoundError
    torch.set_num_threads(1)
    return (f"- rotary-embedding-torch: PyPI rotary-embedding-torch=={versions[0]}, einops=={versions[1]}, on torch {torch.__version__}",
            {impl: (lambda s, x, p, i=impl: compute(torch, ret, i, s, x, p)) for impl in IMPLEMENTATIONS})


if __name__ == "__main__":
    sys.exit(peerlib.main("rotary_embedding_torch_peer", load))
