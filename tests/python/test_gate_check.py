"""gate() (a callable over the golden suites, in process) agrees with `ropecheck check` of the
same outputs written to a candidate file: the verdict, and per group the verdict, worst e and
accuracy horizon; its reports are the CLI's."""
import json
import os

import numpy as np
import pytest

import ropecheck
from conftest import GOLDEN_DIR, hex_values, run_cli

torch = pytest.importorskip("torch")

SUITE_FILE = os.path.join(GOLDEN_DIR, "half-f32-base10000.json")


def hf_rope(x, positions, spec):
    """HF transformers' LLaMA recipe in float32 (partial rotary: the first rotary_dim dims)."""
    x = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    d = spec.rotary_dim
    inv_freq = 1.0 / (float(spec.base) ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = torch.outer(torch.as_tensor(np.asarray(positions)).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    rot, rest = x[..., :d], x[..., d:]
    rotated = torch.cat((-rot[..., d // 2:], rot[..., : d // 2]), dim=-1)
    return torch.cat((rot * cos + rotated * sin, rest), dim=-1).numpy()


def candidate_file(path):
    """Every test of SUITE_FILE through hf_rope, as `ropecheck check` reads a candidate."""
    with open(SUITE_FILE) as f:
        data = json.load(f)
    outputs = {}
    for group in data["groups"]:
        spec = ropecheck.Spec(group["spec"])
        for test in group["tests"]:
            x = hex_values(test["input"]).reshape(test["shape"])
            positions = np.array(test["positions"], dtype=np.int64).reshape(-1)
            outputs[f"{data['suite']}/{test['id']}/output"] = hf_rope(x, positions, spec)
    np.savez(path, **outputs)


@pytest.mark.parametrize("model", ["exact", "f32-angle"])
def test_gate_agrees_with_the_command_line(ropecheck_bin, tmp_path, model):
    result = ropecheck.gate(hf_rope, suites=SUITE_FILE, model=model)
    candidate = tmp_path / "outputs.npz"
    candidate_file(candidate)
    report_path = tmp_path / "report.json"
    status, _, err = run_cli(ropecheck_bin, "check", "--golden", SUITE_FILE, "--candidate", candidate, "--model", model,
                             "--json", report_path)
    assert status in (0, 1), err
    with open(report_path) as f:
        cli = json.load(f)
    assert result.verdict == cli["verdict"]
    assert (status == 0) == result.passed
    assert len(result.groups) == len(cli["groups"])
    for mine, theirs in zip(result.groups, cli["groups"]):
        assert mine.verdict == theirs["verdict"]
        assert mine.worst_e == pytest.approx(theirs["worst_e"], rel=1e-12, abs=0)
        assert mine.horizon_text == (f">={theirs['horizon']}" if theirs.get("horizon_complete") else
                                     str(theirs["horizon"]) if theirs.get("horizon") is not None else mine.horizon_text)
    assert result.passed == (model == "f32-angle")  # a float32 angle is not the exact rotation at large positions


def test_reports_are_the_command_line_reports(tmp_path):
    result = ropecheck.gate(hf_rope, suites=SUITE_FILE, model="f32-angle")
    report = json.loads(result.to_json())
    assert report["verdict"] == "pass" and report["groups"]
    assert "<testsuite" in result.to_junit()
    path = tmp_path / "rope.html"
    assert result.to_html(str(path)) is None
    assert "<svg" in path.read_text()
    assert "horizon" in result.table()


# The CLI's judging options, given to gate() as keywords and to `ropecheck check` as flags.
OPTIONS = [
    (dict(skip_flags=["LargePosition", "NaNInput"]), ["--skip-flags", "LargePosition,NaNInput"]),
    (dict(max_position=4096), ["--max-position", 4096]),
    (dict(require_horizon=4096), ["--require-horizon", 4096]),
    (dict(tolerance={"e": 1e6}), ["--tolerance", "e=1000000.0"]),
    (dict(tolerance="ulp=64"), ["--tolerance", "ulp=64"]),
]


@pytest.mark.parametrize("options,flags", OPTIONS, ids=[" ".join(map(str, f)) for _, f in OPTIONS])
def test_options_give_the_command_lines_report(ropecheck_bin, tmp_path, options, flags):
    """Under the exact model the float32 recipe fails at large positions; each option changes that
    (fewer tests, fewer positions, a horizon required, a wider bound) the same way in both."""
    result = ropecheck.gate(hf_rope, suites=SUITE_FILE, model="exact", **options)
    candidate = tmp_path / "outputs.npz"
    candidate_file(candidate)
    status, _, err = run_cli(ropecheck_bin, "check", "--golden", SUITE_FILE, "--candidate", candidate,
                             "--json", tmp_path / "report.json", "--model", "exact", *flags)
    assert status in (0, 1), err
    cli = json.loads((tmp_path / "report.json").read_text())
    mine = json.loads(result.to_json())
    for key in ("command", "implementation", "candidate"):  # `run` of a callable vs `check` of a file
        mine.pop(key), cli.pop(key)
    assert mine == cli
    assert result.passed == (status == 0)
    plain = json.loads(ropecheck.gate(hf_rope, suites=SUITE_FILE, model="exact").to_json())
    assert mine["summary"] != plain["summary"]  # the option was taken into account
