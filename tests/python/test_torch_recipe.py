"""A PyTorch RoPE as users write it (HF transformers' LLaMA recipe: float32 inv_freq and cos/sin
cache, rotate_half), gated with assert_rope_close in f32, f16 and bf16 under model f32-angle; a
planted bug fails with the diagnosis in the AssertionError message."""
import re

import numpy as np
import pytest

import ropecheck

torch = pytest.importorskip("torch")

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
BASE, HEAD_DIM = 10000.0, 64


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def hf_rope(x, positions, sin_sign=1.0, offset=0):
    """x [tokens, heads, head_dim] (torch, the data dtype), positions [tokens] int64."""
    d = x.shape[-1]
    inv_freq = 1.0 / (BASE ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = torch.outer((positions + offset).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(x.dtype)[:, None, :], (sin_sign * emb.sin()).to(x.dtype)[:, None, :]
    return x * cos + rotate_half(x) * sin


def spec_of(dtype):
    return f"layout=half,head_dim={HEAD_DIM},base=10000,dtype={dtype}"


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_hf_recipe_passes_f32_angle(dtype):
    result = ropecheck.assert_rope_close(hf_rope, spec=spec_of(dtype), model="f32-angle", as_torch=True, samples=64)
    assert result.passed
    assert len(result.groups) >= 2  # golden groups of the spec and the sweep
    assert result.horizon == 2**31 - 1 and result.horizon_complete  # the sweep's largest position
    assert result.positions.size == result.position_e.size > 0


@pytest.mark.parametrize("bug,diagnosis", [
    (dict(sin_sign=-1.0), "sign flipped"),
    (dict(offset=1), "positions offset by +1"),
])
def test_planted_bug_fails_with_its_explanation(bug, diagnosis):
    with pytest.raises(AssertionError) as raised:
        ropecheck.assert_rope_close(lambda x, p: hf_rope(x, p, **bug), spec=spec_of("f32"), model="f32-angle",
                                    as_torch=True, samples=64)
    message = str(raised.value)
    assert re.match(r"ropecheck: FAIL: \S*<lambda> does not meet the claim f32-angle \(", message), message
    assert "worst e" in message and "accuracy horizon" in message
    assert "explanation: " in message and diagnosis in message.lower(), message
    assert "0x1." not in message  # decimal numbers, not hex floats


def test_the_exact_model_reports_where_float32_angles_stop_being_exact():
    with pytest.raises(AssertionError) as raised:
        ropecheck.assert_rope_close(hf_rope, spec=spec_of("f32"), model="exact", as_torch=True, samples=64)
    assert "accuracy horizon" in str(raised.value)


def test_numpy_inputs_for_a_numpy_function():
    seen = {}

    def rope(x, positions):
        seen["types"] = (type(x), x.dtype, type(positions), positions.dtype)
        return ropecheck.apply(x, positions, spec_of("bf16"))

    ropecheck.assert_rope_close(rope, spec=spec_of("bf16"), samples=16, max_position=4096)
    assert seen["types"] == (np.ndarray, np.float32, np.ndarray, np.int64)


def test_gate_runs_a_function_over_the_golden_suites():
    spec = ropecheck.Spec(spec_of("f16"))
    groups_of_spec = ropecheck.gate(lambda x, p: hf_rope(x, p), spec=spec, model="f32-angle", as_torch=True)
    assert groups_of_spec.passed and groups_of_spec.groups
    assert all(g.spec == spec for g in groups_of_spec.groups)

    def by_spec(x, positions, s):
        return hf_rope(x, positions)

    result = ropecheck.gate(by_spec, select=lambda s: s.layout == "half" and s.scaling == "none"
                            and s.position_components == 1 and s.dtype != "f64" and s.rotary_dim == s.head_dim
                            and s.base == "10000" and s.direction == "forward",
                            model="f32-angle", as_torch=True)
    assert result.passed, result.summary()
    assert len(result.groups) > len(groups_of_spec.groups)
