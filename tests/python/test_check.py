"""ropecheck.check of the user's tensors agrees with `ropecheck check --spec --positions --input
--candidate` (the same judge, runner/tensor_judge.h) on the same candidate: verdict, worst e, horizon."""
import json

import numpy as np
import pytest

import ropecheck
from conftest import run_cli

torch = pytest.importorskip("torch")

SPEC = "layout=half,head_dim=64,base=10000,dtype=f32"


def hf_rope(x, positions, sin_sign=1.0):
    """HF transformers' LLaMA recipe in float32: x [tokens, heads, head_dim], positions [tokens]."""
    x = torch.from_numpy(x)
    d = x.shape[-1]
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    emb = torch.outer(torch.from_numpy(positions).float(), inv_freq)
    emb = torch.cat((emb, emb), dim=-1)
    cos, sin = emb.cos()[:, None, :], sin_sign * emb.sin()[:, None, :]
    return (x * cos + torch.cat((-x[..., d // 2:], x[..., : d // 2]), dim=-1) * sin).numpy()


def tensors():
    rng = np.random.default_rng(19)
    positions = np.concatenate([np.arange(64), rng.integers(0, 2**31 - 1, size=64)]).astype(np.int64)
    x = rng.uniform(-2, 2, size=(positions.size, 4, 64)).astype(np.float32)
    return x, positions


@pytest.mark.parametrize("model", ["exact", "f32-angle"])
@pytest.mark.parametrize("sin_sign", [1.0, -1.0])
def test_check_agrees_with_the_command_line(ropecheck_bin, tmp_path, model, sin_sign):
    x, positions = tensors()
    out = hf_rope(x, positions, sin_sign)
    result = ropecheck.check(out, x, positions, SPEC, model=model)
    for name, array in [("x.npy", x), ("out.npy", out), ("positions.npy", positions)]:
        np.save(tmp_path / name, array)
    status, _, err = run_cli(ropecheck_bin, "check", "--spec", SPEC, "--positions", tmp_path / "positions.npy",
                             "--input", tmp_path / "x.npy", "--candidate", tmp_path / "out.npy", "--model", model,
                             "--json", tmp_path / "report.json")
    assert status in (0, 1), err
    cli = json.loads((tmp_path / "report.json").read_text())
    assert result.verdict == cli["verdict"] and (status == 0) == result.passed
    [group] = cli["groups"]
    assert result.worst_e == group["worst_e"]
    assert result.horizon == group.get("horizon")
    # The float32 recipe: exact only up to its horizon; within the f32-angle bound everywhere;
    # the flipped sine fails both.
    assert result.passed == (model == "f32-angle" and sin_sign == 1.0)


def two_chunks_with_mistakes(dtype, seed):
    """A tensor of two chunks (2^22 values each) in `dtype`, HF's recipe computed in float32 and
    stored in it, with NaN, Inf and a mistake in the second chunk: (output, x, positions)."""
    rng = np.random.default_rng(seed)
    tokens = (1 << 22) // 128 + 50
    positions = rng.integers(0, 1 << 16, size=tokens).astype(np.int64)
    x = rng.uniform(-2, 2, size=(tokens, 2, 64)).astype(dtype)
    out = hf_rope(x.astype(np.float32), positions).astype(dtype)
    out[7, 0, 3] = np.nan
    out[9, 1, 5] = np.inf
    out[tokens - 20, 1, 40] *= -1  # in the second chunk
    return out, x, positions


def assert_same_report_every_way(ways, positions, spec):
    """Each (output, x) of `ways` fails with the same report, which judged every pair and keeps the
    second chunk's mistake among its worst cases."""
    reports = []
    for a, b in ways:
        result = ropecheck.check(a, b, positions, spec, model="f32-angle")
        assert not result.passed
        reports.append(result.to_json())
    assert all(r == reports[0] for r in reports[1:])
    [group] = json.loads(reports[0])["groups"]
    assert group["pairs_checked"] == positions.size * 2 * 32
    assert any(c["token"] == positions.size - 20 for c in group["worst_cases"])


def test_check_takes_float32_float64_and_other_layouts_alike():
    """float32 arrays go to C++ as they are and are widened a chunk at a time; float64 ones, mixed
    ones and non-contiguous ones are converted first: the same report every way."""
    out, x, positions = two_chunks_with_mistakes(np.float32, 23)
    assert_same_report_every_way([(out, x), (out.astype(np.float64), x.astype(np.float64)), (out, x.astype(np.float64)),
                                  (np.asfortranarray(out), x)], positions, SPEC)


def test_check_takes_float16_as_it_is_and_widened_alike():
    """float16 arrays go to C++ as they are (binary16 bit patterns, widened a chunk at a time);
    float64 ones, big-endian ones and non-contiguous ones are converted first: the same report
    every way."""
    out, x, positions = two_chunks_with_mistakes(np.float16, 29)
    big_endian = out.astype(out.dtype.newbyteorder(">"))
    assert_same_report_every_way([(out, x), (out.astype(np.float64), x.astype(np.float64)), (big_endian, x),
                                  (np.asfortranarray(out), x)], positions, "layout=half,head_dim=64,base=10000,dtype=f16")


def test_check_result_and_reports(tmp_path):
    x, positions = tensors()
    result = ropecheck.check(hf_rope(x, positions, -1.0), x, positions, SPEC, model="f32-angle", worst=3)
    assert not result.passed
    assert result.positions.shape == result.position_e.shape
    assert np.all(np.diff(result.positions) > 0)
    assert result.position_e.max() == pytest.approx(result.worst_e)
    assert 0 < len(result.worst_cases) and all(c.e > 0 for c in result.worst_cases)
    assert any("sign flipped" in line for line in result.diagnosis)
    assert json.loads(result.to_json())["verdict"] == "fail"
    assert "<failure" in result.to_junit()
    result.to_html(str(tmp_path / "r.html"))
    assert "<svg" in (tmp_path / "r.html").read_text()


def test_check_takes_batched_torch_bf16_tensors():
    spec = "layout=half,head_dim=64,base=10000,dtype=bf16"
    q = torch.randn(2, 16, 4, 64, generator=torch.Generator().manual_seed(5)).to(torch.bfloat16)
    out = ropecheck.apply(q, torch.arange(16), spec, as_torch=True)  # correctly rounded: e <= 1 (half an ulp <= u·ρ)
    result = ropecheck.assert_rope_close(out, q, torch.arange(16), spec)
    assert result.passed and result.worst_e <= 1


@pytest.mark.parametrize("options,flags", [
    (dict(max_position=100000), ["--max-position", 100000]),
    (dict(require_horizon=8), ["--require-horizon", 8]),
    (dict(tolerance="e=1e6"), ["--tolerance", "e=1e6"]),
])
def test_check_options_agree_with_the_command_line(ropecheck_bin, tmp_path, options, flags):
    """Under the exact claim the float32 recipe fails at large positions: each option changes that."""
    x, positions = tensors()
    out = hf_rope(x, positions)
    result = ropecheck.check(out, x, positions, SPEC, model="exact", **options)
    plain = ropecheck.check(out, x, positions, SPEC, model="exact")
    for name, array in [("x.npy", x), ("out.npy", out), ("positions.npy", positions)]:
        np.save(tmp_path / name, array)
    status, _, err = run_cli(ropecheck_bin, "check", "--spec", SPEC, "--positions", tmp_path / "positions.npy",
                             "--input", tmp_path / "x.npy", "--candidate", tmp_path / "out.npy",
                             "--json", tmp_path / "report.json", "--model", "exact", *flags)
    assert status in (0, 1), err
    cli = json.loads((tmp_path / "report.json").read_text())
    mine = json.loads(result.to_json())
    assert (mine["verdict"], mine["summary"], mine["options"]) == (cli["verdict"], cli["summary"], cli["options"])
    [group], [theirs] = mine["groups"], cli["groups"]
    for key in ("verdict", "worst_e", "horizon", "tolerance"):
        assert group.get(key) == theirs.get(key), key
    assert (result.passed, result.worst_e) != (plain.passed, plain.worst_e) or result.horizon != plain.horizon
