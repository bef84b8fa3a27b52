"""Explanations that never mislead (judge/README.md "Explanation"): outputs no change of the spec
gives are said as they are, a few far-off values are named where they are, subnormals flushed to
zero are named, and a "closest" change is said only where it changes the outputs and fits half of
them or more. Every explanation checked here says only what reproduces the outputs, and no
diagnosis line beside it blames what the outputs do not show (a precision, a frequency, an angle
of 0 rad). Inputs are drawn here; nothing is written to disk."""
import re

import numpy as np
import pytest

import ropecheck

SPEC32 = "layout=half,head_dim=64,base=10000,dtype=f32"
SPEC64 = "layout=half,head_dim=64,base=10000,dtype=f64"


def tensors(tokens, heads, spec, seed=1, scale=1.0):
    """(x, positions, the spec's own outputs) for standard normal inputs times `scale`."""
    rng = np.random.default_rng(seed)
    dtype = np.float64 if "f64" in spec else np.float32
    x = (rng.standard_normal((tokens, heads, 64)) * scale).astype(dtype)
    positions = np.arange(tokens, dtype=np.int64)
    return x, positions, np.asarray(ropecheck.apply(x, positions, spec)).astype(dtype)


def judged(out, x, positions, spec):
    result = ropecheck.check(out, x, positions, spec, model="f32-angle")
    assert not result.passed
    return result, "\n".join(result.diagnosis)


def assert_no_blame(lines):
    """Diagnosis lines that would blame what the outputs do not show."""
    for text in ("precision", "frequency error", "largest angle error 0 rad", "e <= 0\n", "running product"):
        assert text not in lines + "\n", lines


def assert_no_empty_closest(explanation):
    """A closest change, where one is said, fits half of the pairs or more."""
    found = re.search(r"closest: .* \((\d+)%\)$", explanation)
    assert found is None or int(found.group(1)) >= 50, explanation


@pytest.mark.parametrize("tokens,token", [(512, 100), (4200, 101)], ids=["in the sample", "outside the sample"])
def test_one_corrupted_value_is_named_where_it_is(tokens, token):
    # 4200 x 4 x 64 values are more than the diagnosis sample keeps (2^20): token 101 is not in it,
    # and the group's counts and kept cases name it.
    x, positions, y = tensors(tokens, 4, SPEC32)
    y[token, 2, 5] = 1e6
    result, lines = judged(y, x, positions, SPEC32)
    assert result.explanation_kind == "isolated_values", result.explanation
    assert f"1 of {tokens * 4 * 32} pairs out of the bound" in result.explanation
    assert f"token {token}, head 2, dim 5 = 1e+06" in result.explanation
    assert_no_blame(lines)


def test_a_few_corrupted_values_are_counted_and_listed():
    x, positions, y = tensors(512, 4, SPEC32)
    y[10, 0, 3] = 7.0
    y[300, 3, 60] = -1e4
    result, lines = judged(y, x, positions, SPEC32)
    assert result.explanation_kind == "isolated_values", result.explanation
    assert "2 of 65536 pairs out of the bound" in result.explanation
    assert "token 300, head 3, dim 60 = -10000" in result.explanation and "token 10, head 0, dim 3 = 7" in result.explanation
    assert_no_blame(lines)


def test_a_systematic_error_is_not_called_isolated():
    # cos/sin rounded to bfloat16 on float32 data: every pair is off; a change of the arithmetic.
    x, positions, _ = tensors(512, 2, SPEC32)
    angle = positions[:, None].astype(np.float32) * (1.0 / 10000 ** (np.arange(0, 64, 2) / 64)).astype(np.float32)
    bf16 = lambda v: (v.astype(np.float32).view(np.uint32) + 0x8000 & 0xFFFF0000).view(np.float32)
    cos = np.concatenate([bf16(np.cos(angle))] * 2, -1)[:, None, :]
    sin = np.concatenate([bf16(np.sin(angle))] * 2, -1)[:, None, :]
    out = (x * cos + np.concatenate([-x[..., 32:], x[..., :32]], -1) * sin).astype(np.float32)
    result, _ = judged(out, x, positions, SPEC32)
    assert result.explanation_kind == "cos_sin_dtype", result.explanation


@pytest.mark.parametrize("rows", [slice(None), slice(10, 20)], ids=["every input", "some rows"])
def test_subnormals_flushed_to_zero_are_named(rows):
    x, positions, _ = tensors(256, 2, SPEC32)
    x[rows] *= np.float32(1e-39)  # below float32's smallest normal 1.18e-38: subnormal
    y = np.asarray(ropecheck.apply(x, positions, SPEC32)).astype(np.float32)
    y[np.abs(y) < np.finfo(np.float32).tiny] = 0  # what flush-to-zero arithmetic stores
    result, lines = judged(y, x, positions, SPEC32)
    assert result.explanation_kind == "subnormal_flush", result.explanation
    assert "subnormals flushed to zero" in result.explanation
    assert_no_blame(lines)


def whole_outputs(kind, y, rng):
    if kind == "nan":
        return np.full_like(y, np.nan)
    if kind == "inf":
        return np.full_like(y, np.inf)
    if kind == "constant":
        return np.full_like(y, 0.5)
    if kind == "zero":
        return np.zeros_like(y)
    if kind == "negated":
        return -y
    return rng.standard_normal(y.shape).astype(y.dtype)  # noise


@pytest.mark.parametrize("kind,spec,expect_kind,expect_text", [
    ("nan", SPEC32, "outputs_nan", "your outputs are NaN at every value"),
    ("inf", SPEC32, "outputs_nonfinite", "your outputs are infinite at every value"),
    ("constant", SPEC32, "outputs_constant", "your outputs are constant: every value is 0.5"),
    ("zero", SPEC32, "outputs_zero", "your outputs are all zero"),
    ("zero", SPEC64, "outputs_zero", "your outputs are all zero"),
    ("negated", SPEC32, "negated", "your outputs are the negation of the spec's outputs"),
    ("noise", SPEC32, "", "no single change of the spec reproduces them"),
])
def test_outputs_no_change_gives_are_said_as_they_are(kind, spec, expect_kind, expect_text):
    x, positions, y = tensors(256, 2, spec)
    out = whole_outputs(kind, y, np.random.default_rng(5))
    result, lines = judged(out, x, positions, spec)
    assert result.explanation_kind == expect_kind, result.explanation
    assert result.explanation.startswith(expect_text), result.explanation
    assert "closest" not in result.explanation and "explains the other rows" not in result.explanation
    assert_no_blame(lines)


@pytest.mark.parametrize("kind", ["zero", "nan", "negated", "constant"])
def test_a_callable_in_float64_is_described_in_every_group(kind):
    def candidate(x, positions):
        return whole_outputs(kind, np.asarray(ropecheck.apply(x, positions, SPEC64)), np.random.default_rng(5))

    result = ropecheck.judge_callable(candidate, SPEC64, model="f32-angle", max_position=4095, samples=16)
    assert not result.passed
    for group in result.groups:
        if group.passed:
            continue
        assert "closest" not in group.explanation and "base=" not in group.explanation, group.explanation
        assert group.explanation.startswith("your outputs are "), group.explanation


def test_nan_rows_among_right_ones_are_named_by_token():
    x, positions, y = tensors(256, 2, SPEC32)
    y[40:44] = np.nan
    result, lines = judged(y, x, positions, SPEC32)
    assert result.explanation_kind == "outputs_nonfinite", result.explanation
    assert result.explanation.startswith("your outputs are NaN at tokens 40..43 (8 of 512 rows")
    assert "the spec explains the other rows" in result.explanation
    assert_no_blame(lines)


def test_a_change_that_changes_nothing_is_never_the_closest():
    # Positions 0..255 are exact in bfloat16: "positions rounded to bf16" changes nothing. Half of
    # the pairs scaled by 1.5 is no change of the spec; the spec as given explains the other half.
    x, positions, y = tensors(256, 2, SPEC32)
    y[:, :, 16:32] *= 1.5
    y[:, :, 48:64] *= 1.5
    result, _ = judged(y, x, positions, SPEC32)
    assert result.explanation.startswith("no single change of the spec reproduces them"), result.explanation
    assert "closest" not in result.explanation and "rounded to" not in result.explanation, result.explanation


def test_every_explanation_here_fits_what_it_names():
    """Over outputs that are partly right and partly not, a closest change is said only with a fit
    of half of the pairs or more, and the rows memory faults leave to the spec exist."""
    x, positions, y = tensors(256, 2, SPEC32)
    rng = np.random.default_rng(9)
    partly = []
    for k in (32, 128, 200):
        noisy = y.copy()
        noisy[k:] = rng.standard_normal(noisy[k:].shape)
        partly.append(noisy)
    shifted = y.copy()
    shifted[1::2] = np.asarray(ropecheck.apply(x, positions + 7, SPEC32))[1::2]
    partly.append(shifted)
    for out in partly:
        result, _ = judged(out, x, positions, SPEC32)
        assert_no_empty_closest(result.explanation)
        if "the spec explains the other rows" in result.explanation:
            assert "fit: " in result.explanation, result.explanation
