"""A RoPE written in PyTorch and its test, gated by ropecheck: copy this file next to your kernel.

    PYTHONPATH=ropecheck/build/python python3 -m pytest test_my_rope.py

`my_rope` is HF transformers' LLaMA recipe (float32 inv_freq and cos/sin, rotate_half); put yours
in its place. Where a test used to say

    torch.testing.assert_close(my_rope(q, positions), reference_rope(q, positions))

it says the one line below: ropecheck draws the inputs (the golden suites of your spec, and
positions up to 2^31 - 1), judges every output against the exact rotation, and on failure says
where (worst e, position, pair), how far the result stays accurate (the accuracy horizon) and why
(e.g. "outputs match the sine's sign flipped").
"""
import pytest
import torch

import ropecheck


def my_rope(q, positions, base=500000.0):
    """q [tokens, heads, head_dim] (any float dtype), positions [tokens] int64."""
    d = q.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = torch.outer(positions.float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(q.dtype)[:, None, :], emb.sin().to(q.dtype)[:, None, :]
    half = d // 2
    rotated = torch.cat((-q[..., half:], q[..., :half]), dim=-1)
    return q * cos + rotated * sin


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_my_rope(dtype):
    # f32-angle: the promise of a float32 angle, what this recipe computes (README "Which model").
    ropecheck.assert_rope_close(my_rope, spec=f"layout=half,head_dim=128,base=500000,dtype={dtype}",
                                model="f32-angle", as_torch=True)
