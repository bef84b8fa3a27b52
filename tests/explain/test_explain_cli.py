"""`ropecheck explain` on your own tensors, and the explanation in every report of `ropecheck check`:
a candidate with a wrong base is named (text, JSON field, HTML frequency plot), a careful one gets
nothing to explain, a raising callable is reported by its exception and first failing position.
Files are written in pytest's tmp_path only."""
import json
import os
import subprocess

import numpy as np
import pytest

import ropecheck

BIN = os.environ.get("ROPECHECK_BIN", "")
SPEC = "layout=half,head_dim=64,base=500000,dtype=f32"


def hf_rope(x, positions, base):
    """The transformers recipe in float32 NumPy: inv_freq, angle = position x inv_freq, rotate_half."""
    inv = (1.0 / (base ** (np.arange(0, 64, 2, dtype=np.float32) / 64))).astype(np.float32)
    angle = positions.astype(np.float32)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(angle), np.cos(angle)], -1)[:, None, :]
    sin = np.concatenate([np.sin(angle), np.sin(angle)], -1)[:, None, :]
    rotated = np.concatenate([-x[..., 32:], x[..., :32]], -1)
    return (x * cos + rotated * sin).astype(np.float32)


@pytest.fixture
def tensors(tmp_path):
    positions = np.arange(2048, dtype=np.int64)
    x = np.random.default_rng(7).standard_normal((2048, 2, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    return tmp_path, positions, x


def explain(tmp_path, candidate, *extra):
    return subprocess.run([BIN, "explain", "--spec", SPEC, "--positions", "0:2048", "--input", str(tmp_path / "x.npy"),
                           "--candidate", str(candidate), *extra], capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not BIN, reason="ROPECHECK_BIN is not set (ctest sets it)")
def test_explain_names_a_wrong_base_in_text_json_and_html(tensors):
    tmp_path, positions, x = tensors
    np.save(tmp_path / "out.npy", hf_rope(x, positions, 10000.0))
    ran = explain(tmp_path, tmp_path / "out.npy", "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html"))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "explanation: your outputs are RoPE with base=10000 (expected 500000)" in ran.stdout, ran.stdout
    group = json.loads((tmp_path / "r.json").read_text())["groups"][0]
    assert group["diagnosis"]["explanation_kind"] == "base"
    fitted = [f["fitted"] for f in group["diagnosis"]["frequencies"]]
    assert len(fitted) == 32 and sum(v is not None for v in fitted) >= 16
    # The fitted frequencies are the candidate's (base 10000), not the spec's, at the low ones.
    low = group["diagnosis"]["frequencies"][31]
    assert abs(float(low["fitted"]) / (10000.0 ** (-62 / 64)) - 1) < 0.01, low
    assert 'class="frequencies"' in (tmp_path / "r.html").read_text()


@pytest.mark.skipif(not BIN, reason="ROPECHECK_BIN is not set (ctest sets it)")
def test_explain_says_nothing_of_a_careful_candidate(tensors):
    tmp_path, positions, x = tensors
    np.save(tmp_path / "out.npy", hf_rope(x, positions, 500000.0))
    ran = explain(tmp_path, tmp_path / "out.npy")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "nothing to explain" in ran.stdout and "explanation:" not in ran.stdout


def test_check_result_and_assertion_carry_the_explanation(tensors):
    _, positions, x = tensors
    result = ropecheck.check(hf_rope(x, positions + 3, 500000.0), x, positions, SPEC, model="f32-angle")
    assert not result.passed
    assert result.explanation_kind == "position_offset"
    assert "positions offset by +3" in result.explanation
    with pytest.raises(AssertionError) as raised:
        ropecheck.assert_rope_close(hf_rope(x, positions + 3, 500000.0), x, positions, SPEC, model="f32-angle")
    assert "explanation: " in str(raised.value) and "positions offset by +3" in str(raised.value)


def test_a_raising_callable_is_named_by_its_exception_and_first_failing_position():
    def cached(x, positions):
        table = np.arange(1024)  # a cache of 1024 positions, indexed past its end
        return hf_rope(x, table[positions], 500000.0)

    result = ropecheck.judge_callable(cached, SPEC, model="f32-angle", max_position=4095, samples=64)
    assert not result.passed
    assert result.explanation_kind == "raised"
    assert "raised IndexError at position " in result.explanation, result.explanation
    # The sweep tests 1023 and 1024 (2^k - 1, 2^k): its failing call is bisected to 1024.
    sweep = [g for g in result.groups if g.suite == "sweep"][0]
    assert sweep.explanation == "raised IndexError at position 1024 (first failing position)", sweep.explanation
    assert "Traceback" not in result.summary() and "At:" not in result.summary()
