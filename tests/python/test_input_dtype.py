"""Specs whose inputs have their own dtype (spec input_dtype; GPT-J: float16 activations times
float32 sin/cos tables, so q and k come out in float32): apply, check and the callables take the
inputs in the input dtype and give or judge outputs in the spec's dtype."""
import json
import os

import numpy as np
import pytest

import ropecheck
from conftest import run_cli

torch = pytest.importorskip("torch")

GPTJ = os.path.join(os.path.dirname(__file__), "..", "..", "hfconfig", "examples", "gpt-j-6b-float16.json")


def gptj_rope(x, positions, sin_sign=1.0):
    """HF transformers' GPT-J attention (create_sinusoidal_positions, rotate_every_two) on
    x [tokens, heads, head_dim] in float16: the first rotary_dim=64 dims rotated in float32."""
    rotary_dim = 64
    inv_freq = 1.0 / (10000 ** (torch.arange(0, rotary_dim, 2, dtype=torch.int64) / rotary_dim))
    angles = torch.outer(positions.float(), inv_freq).float()
    sin = torch.repeat_interleave(sin_sign * torch.sin(angles)[:, None, :], 2, -1)
    cos = torch.repeat_interleave(torch.cos(angles)[:, None, :], 2, -1)
    rot, rest = x[..., :rotary_dim], x[..., rotary_dim:]
    every_two = torch.stack((-rot[..., 1::2], rot[..., ::2]), dim=-1).flatten(-2)
    return torch.cat([rot * cos + every_two * sin, rest.float()], dim=-1)  # float16 * float32 -> float32


def test_spec_of_gptj_and_apply_dtypes():
    spec = ropecheck.Spec.from_hf_config(GPTJ)
    x = torch.randn(3, 2, 256, generator=torch.Generator().manual_seed(2)).to(torch.float16)
    out = ropecheck.apply(x, torch.arange(3), spec)
    assert out.dtype == np.float32 and out.shape == tuple(x.shape)
    # The f16 bit patterns as uint16 are read as f16 inputs (the input dtype, not the output's).
    assert np.array_equal(ropecheck.apply(x.numpy().view(np.uint16), np.arange(3), spec), out)
    # Inputs are rounded to f16 first: an f32 copy of the f16 values gives the same, an f32 value
    # between two f16 values gives what its f16 rounding gives.
    assert np.array_equal(ropecheck.apply(x.float().numpy(), np.arange(3), spec), out)
    nudged = x.float().numpy() * np.float32(1 + 2**-14)
    assert np.array_equal(ropecheck.apply(nudged, np.arange(3), spec),
                          ropecheck.apply(nudged.astype(np.float16), np.arange(3), spec))


def test_gptj_recipe_is_gated_with_f16_inputs():
    spec = ropecheck.Spec.from_hf_config(GPTJ)
    seen = {}

    def rope(x, positions):
        seen["dtype"] = x.dtype
        return gptj_rope(x, positions)

    result = ropecheck.assert_rope_close(rope, spec=spec, model="f32-angle", as_torch=True, samples=32)
    assert seen["dtype"] == torch.float16
    assert result.passed and result.positions.size > 0
    with pytest.raises(AssertionError, match="sign flipped"):
        ropecheck.assert_rope_close(lambda x, p: gptj_rope(x, p, sin_sign=-1.0), spec=spec, model="f32-angle",
                                    as_torch=True, samples=32)


@pytest.mark.parametrize("sin_sign", [1.0, -1.0])
def test_check_of_f16_inputs_agrees_with_the_command_line(ropecheck_bin, tmp_path, sin_sign):
    spec = ropecheck.Spec.from_hf_config(GPTJ)
    rng = np.random.default_rng(3)
    positions = np.concatenate([np.arange(16), rng.integers(0, 2**31 - 1, size=16)]).astype(np.int64)
    x = torch.from_numpy(rng.uniform(-2, 2, size=(positions.size, 2, 256)).astype(np.float16))
    out = gptj_rope(x, torch.from_numpy(positions), sin_sign)
    assert out.dtype == torch.float32
    result = ropecheck.check(out, x, positions, spec, model="f32-angle")
    for name, array in [("x.npy", x.numpy()), ("out.npy", out.numpy()), ("positions.npy", positions)]:
        np.save(tmp_path / name, array)
    status, _, err = run_cli(ropecheck_bin, "check", "--spec", str(spec), "--positions", tmp_path / "positions.npy",
                             "--input", tmp_path / "x.npy", "--candidate", tmp_path / "out.npy", "--model", "f32-angle",
                             "--json", tmp_path / "report.json")
    assert status in (0, 1), err
    [group] = json.loads((tmp_path / "report.json").read_text())["groups"]
    assert result.passed == (status == 0) == (sin_sign == 1.0)
    assert result.worst_e == group["worst_e"]
