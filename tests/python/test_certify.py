"""ropecheck.certify(fn, spec, positions): a Python callable certified at every position of a range
and every pair (python/README.md "Certifying a callable"): a careful callable passes, a buggy one
fails with its first failing position and the explanation, and the certificate is the one
`ropecheck certify` writes (the same file for the project's kernels, shards joined by `report
merge`)."""
import json

import numpy as np
import pytest

import ropecheck
from conftest import run_cli

SPEC = "layout=half,head_dim=64,base=500000,dtype=f32"


def careful(base):
    """RoPE of layout half in float64 (θ_j = base^(-2j/d), the angle, cos and sin in float64), the
    outputs rounded once to float32: within a few ulps of the exact rotation at these positions."""

    def rope(x, positions):
        d = x.shape[-1]
        theta = float(base) ** (-np.arange(0, d, 2, dtype=np.float64) / d)
        angle = positions.astype(np.float64)[:, None] * theta[None, :]
        cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
        x = x.astype(np.float64)
        a, b = x[..., : d // 2], x[..., d // 2 :]
        return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1).astype(np.float32)

    return rope


def test_a_careful_callable_passes_every_position():
    c = ropecheck.certify(careful(500000), SPEC, range(0, 3000), chunk=512)
    assert c.passed and c.verdict == "pass", c.summary()
    r = c.report
    assert r["kind"] == "ropecheck certificate" and r["range"] == {"first": 0, "end": 3000}
    assert r["positions"] == 3000 and r["random_positions"] == len(range(0, 3000, 64))
    assert len(r["pairs"]) == 32 and all(p["checked"] >= 2 * 3000 for p in r["pairs"])
    assert r["implementation"]["library"] == __file__
    assert r["implementation"]["name"] == "careful.<locals>.rope" and r["implementation"]["sha256"].startswith("sha256:")
    assert c.first_failure is None and c.explanation == ""


def test_a_wrong_base_fails_at_position_1_with_the_explanation():
    c = ropecheck.certify(careful(10000), SPEC, (0, 2048), model="exact", chunk=1024)
    assert not c.passed and c.verdict == "fail"
    assert c.first_failure["position"] == 1, c.summary()  # position 0 rotates by 0 whatever the base
    assert c.first_failure["message"]
    assert "base" in c.explanation and "500000" in c.explanation, c.explanation
    assert "first failure: position 1" in c.summary() and "explanation: " in c.summary()


def test_a_callable_that_raises_is_explained():
    rope = careful(500000)

    def short_table(x, positions):
        table = np.zeros(1500)
        table[positions]  # IndexError past the table's 1500 rows
        return rope(x, positions)

    c = ropecheck.certify(short_table, SPEC, 2048, chunk=512, stride=0)
    assert not c.passed and c.report["failed_calls"] == 2, c.summary()  # the calls of [1024, 1536) and [1536, 2048)
    assert c.report["first_call_error"].startswith("status: threw: IndexError: index 1500"), c.report["first_call_error"]
    assert c.explanation.startswith("raised IndexError at position 1"), c.explanation


def test_the_kernels_certificate_is_the_command_lines(ropecheck_bin, tmp_path):
    spec = "layout=interleaved,head_dim=64,rotary_dim=48,base=10000,dtype=f32"
    py = tmp_path / "py.json"
    c = ropecheck.certify(lambda x, p: ropecheck.kernels.apply(x, p, spec, impl="auto", threads=1), spec, (100, 4196),
                          model="exact", require_bits=True, chunk=1024, json=py)
    assert c.passed, c.summary()
    status, out, err = run_cli(ropecheck_bin, "certify", "--impl", "auto", "--spec", spec, "--positions", "100:4196",
                               "--model", "exact", "--require-bits", "--chunk", "1024", "--json", tmp_path / "cli.json")
    assert status == 0, out + err
    cli = json.loads((tmp_path / "cli.json").read_text())
    ours = json.loads(py.read_text())
    assert list(ours) == list(cli)  # the same fields in the same order
    for report in (ours, cli):  # a callable's identity and default tolerance; the kernel's proven bound
        del report["implementation"], report["tolerance"]
    assert ours == cli
    assert c.text == py.read_text()


def test_shards_merged_by_the_command_line_give_the_unsharded_certificate(ropecheck_bin, tmp_path):
    rope = careful(500000)
    whole = ropecheck.certify(rope, SPEC, (0, 2048), chunk=256, json=tmp_path / "whole.json")
    shards = []
    for k in range(3):
        part = ropecheck.certify(rope, SPEC, (0, 2048), chunk=256, shard=(k, 3), json=tmp_path / f"shard-{k}.json")
        assert part.report["kind"] == "ropecheck certify shard" and part.report["shard"]["index"] == k
        shards.append(str(tmp_path / f"shard-{k}.json"))
    status, out, err = run_cli(ropecheck_bin, "report", "merge", *shards, "--out", tmp_path / "merged.json")
    assert status == 0, out + err
    assert (tmp_path / "merged.json").read_text() == (tmp_path / "whole.json").read_text()
    assert whole.passed


@pytest.mark.parametrize("options, message", [
    (dict(positions=(5, 5)), "positions: expected A < B"),
    (dict(positions=(0, 2**31 + 1)), "positions: expected an integer from 1 to 2147483648"),
    (dict(positions=range(0, 10, 2)), "positions: expected a range of step 1"),
    (dict(positions=64, model="f32-recipe"), "--model: expected exact or f32-angle"),
    (dict(positions=64, chunk=0), "--chunk: expected an integer from 1 to 1048576"),
    (dict(positions=64, shard=(3, 2)), "--shard: expected K/N with 0 <= K < N"),
    (dict(positions=64, shard="1/2", chunk=64), "--shard: expected at most 1 shards"),
])
def test_bad_arguments_are_one_line_value_errors(options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        ropecheck.certify(careful(500000), SPEC, **options)


def test_isolated_calls_give_the_same_certificate():
    rope = careful(500000)
    here = ropecheck.certify(rope, SPEC, (0, 1024), chunk=256)
    forked = ropecheck.certify(rope, SPEC, (0, 1024), chunk=256, isolate=True)
    assert forked.passed and forked.text == here.text
