#!/usr/bin/env python3
"""timm's axial 2-D RoPE (`timm.layers.pos_embed_sincos`) against ropecheck's `axes=2d` specs, for
`ropecheck check` (peers/timm/README.md).

    timm_peer.py INPUTS.npz OUT_DIR

INPUTS.npz is `ropecheck golden export --format npz`. Writes OUT_DIR/timm-rope2d.npz with
SUITE/ID/output for every test timm expresses and OUT_DIR/timm-rope2d.npz.skipped.json with the
reason for every other test. Prints one header line; exits 3 when timm does not import.

The two conventions (spec/schedule.h; timm's build_rotary_pos_embed and apply_rot_embed):
- ropecheck 2-D RoPE over D = rotary_dim dims: pair j (j < D/2) is rotated by m_(j mod 2)·θ_(j div 2),
  θ_g = b^(−2g/(D/2)) = b^(−4g/D); layout interleaved pairs dims (2j, 2j+1), half (j, j + D/2).
- timm, `in_pixels=False` (temperature bands, index grid): num_bands G = D/4 and
  bands = freq_bands(G, temperature, step=1) = temperature^(−g/G) = b^(−4g/D) — the same θ_g with
  temperature = base. The (sin, cos) embedding is (axis 0 bands 0..G−1, axis 1 bands 0..G−1),
  laid out per pair k (k < D/2): axis k div G, band k mod G; `rotate_half=False` pairs dims
  (2k, 2k+1) (apply_rot_embed(half=False), rot()), `rotate_half=True` pairs (k, k + D/2)
  (apply_rot_embed(half=True), rope_rotate_half()).
- So both rotate the same pairs by the same angles up to the ORDER of the pairs: spec pair j is
  timm pair k(j) = (j mod 2)·G + j div 2. The peer permutes the input's dims into timm's order
  (pure data movement, exact), runs timm, and permutes the output back. The spec's layout picks
  timm's: interleaved -> rotate_half=False, half -> rotate_half=True.
- Positions: timm builds its grid as arange(s).float() + grid_offset over a feat_shape. For a
  token at (m1, m2) the peer calls build_rotary_pos_embed(feat_shape=[1, 1], grid_offset=m) once
  for m = m1 and once for m = m2 (both axes of a 1x1 grid sit at m, in float32), and takes the
  axis-0 entries of the first and the axis-1 entries of the second (selection, exact); a
  feat_shape grid would need |m1 − m2| + 1 cells per token (golden positions reach 2^31 − 1).
- dtypes: sin/cos are built in float32 (timm's default, dtype=torch.float32) and apply_rot_embed
  promotes f16/bf16 x to float32, casting the rotated result back once (timm's documented rule).
Not expressible (skipped with the reason): every spec without axes=2d (timm's RoPE is axial
2-D), f64 (timm's bands and grid are float32), scalings (timm's ref_feat_shape interpolation has no
2-D golden test), the inverse direction, rotary_dim not a multiple of 4.
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

IMPL = "timm-rope2d"


def pair_dims(layout, dim):
    """[D/2, 2] dim indices of each pair: interleaved (2k, 2k+1), half (k, k + D/2)."""
    k = np.arange(dim // 2)
    return np.stack([2 * k, 2 * k + 1], 1) if layout == "interleaved" else np.stack([k, k + dim // 2], 1)


def permutation(layout, dim):
    """perm with timm_x = x[..., perm]: timm dim perm^-1(i) holds spec dim i."""
    j = np.arange(dim // 2)
    k = (j % 2) * (dim // 4) + j // 2  # spec pair j -> timm pair k
    spec, timm = pair_dims(layout, dim), pair_dims(layout, dim)[k]
    perm = np.empty(dim, dtype=np.int64)
    perm[timm.ravel()] = spec.ravel()
    return perm


def axis_mask(layout, dim):
    """True where timm's (sin, cos) entry belongs to axis 1 (second position component)."""
    k = np.arange(dim // 2)
    per_pair = k // (dim // 4) == 1
    mask = np.empty(dim, dtype=bool)
    mask[pair_dims(layout, dim).ravel()] = np.repeat(per_pair, 2)
    return mask


def compute(torch, pes, spec, x, positions):
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    if spec.get("axes", "none") != "2d":
        raise Unsupported(f"axes={spec.get('axes', 'none')}: timm's RoPE is axial 2-D (axes=2d only)")
    if spec["dtype"] not in dtypes:
        raise Unsupported("timm's bands and position grid are float32: no f64 RoPE")
    peerlib.one_dtype(spec, "apply_rot_embed returns x's dtype: no mixed input/output dtypes")
    if spec.get("scaling", "none") != "none":
        raise Unsupported(f"scaling {spec['scaling']}: not expressed with timm's 2-D RoPE")
    peerlib.forward_only(spec, "timm has no inverse rotation")
    dim = peerlib.rotary_dim(spec)
    if dim % 4:
        raise Unsupported(f"rotary_dim {dim}: timm's axial RoPE needs a multiple of 4 (dim // 4 bands per axis)")
    layout, half = spec["layout"], spec["layout"] == "half"
    perm, mask = permutation(layout, dim), torch.from_numpy(axis_mask(layout, dim))
    inverse = np.argsort(perm)

    embeds = {}

    def embed(m):  # timm's (sin, cos) [D] for a 1x1 grid at offset m (both axes at m)
        if m not in embeds:
            sin, cos = pes.build_rotary_pos_embed(
                [1, 1], dim=dim, temperature=float(spec["base"]), in_pixels=False, grid_offset=float(m),
                rotate_half=half, dtype=torch.float32)
            embeds[m] = (sin[0], cos[0])
        return embeds[m]

    sins, coss = [], []
    for m1, m2 in np.asarray(positions, dtype=np.int64).reshape(-1, 2).tolist():
        (s1, c1), (s2, c2) = embed(m1), embed(m2)
        sins.append(torch.where(mask, s2, s1))
        coss.append(torch.where(mask, c2, c1))
    sin, cos = torch.stack(sins)[:, None, :], torch.stack(coss)[:, None, :]  # [tokens, 1 (heads), D]

    dtype = dtypes[spec["dtype"]]
    q = torch.from_numpy(x).to(dtype)
    q_rot = q[..., :dim][..., torch.from_numpy(perm)]
    out = pes.apply_rot_embed(q_rot, sin, cos, half=half)[..., torch.from_numpy(inverse)]
    out = torch.cat((out, q[..., dim:]), dim=-1)
    return (out.float() if dtype == torch.bfloat16 else out).numpy()


def load():
    import torch
    import timm
    from timm.layers import pos_embed_sincos as pes

    torch.set_num_threads(1)
    return (f"- timm: PyPI timm=={timm.__version__} on torch {torch.__version__}, "
            "timm.layers.pos_embed_sincos build_rotary_pos_embed + apply_rot_embed",
            {IMPL: lambda s, x, p: compute(torch, pes, s, x, p)})


if __name__ == "__main__":
    sys.exit(peerlib.main("timm_peer", load))
