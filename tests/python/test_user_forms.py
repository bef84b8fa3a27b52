"""What new users give the gate, in Python and on the command line alike: spec text with blanks and
the ecosystem's names, float32 tensors for a bf16 spec, HF's [batch, heads, seq, head_dim] layout,
Qwen2-VL's [3, seq] positions, and a tensor read in chunks (one test, not one per chunk)."""
import json
import warnings

import numpy as np
import pytest

import ropecheck
from conftest import run_cli

torch = pytest.importorskip("torch")

SPEC = "layout=half,head_dim=64,base=10000,dtype=f32"


def rotate_half_rope(x, positions, base=10000.0, rotary_dim=None):
    """HF transformers' LLaMA recipe (rotate_half: pairs (j, j + d/2)) in float64 then float32:
    x [tokens, heads, head_dim] float32, positions [tokens]. Written here from docs/rope.md §1."""
    d = rotary_dim or x.shape[-1]
    inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angle = np.outer(positions.astype(np.float64), inv_freq)
    cos = np.concatenate([np.cos(angle)] * 2, axis=-1)[:, None, :]
    sin = np.concatenate([np.sin(angle)] * 2, axis=-1)[:, None, :]
    r = x[..., :d].astype(np.float64)
    rotated = np.concatenate([-r[..., d // 2:], r[..., : d // 2]], axis=-1)
    return np.concatenate([(r * cos + rotated * sin).astype(x.dtype), x[..., d:]], axis=-1)


def tensors(tokens=48, heads=2):
    rng = np.random.default_rng(23)
    positions = np.arange(tokens, dtype=np.int64) * 100
    x = rng.uniform(-1, 1, size=(tokens, heads, 64)).astype(np.float32)
    return x, positions


# 1. Blanks around keys, values, '=' and ',' are tolerated; str() is the canonical form.
def test_spec_text_with_blanks_is_the_canonical_spec():
    spec = ropecheck.Spec("layout=half, head_dim=64 , base = 10000,\tdtype=f32")
    assert spec == ropecheck.Spec(SPEC)
    assert " " not in str(spec)
    x, positions = tensors()
    assert ropecheck.check(rotate_half_rope(x, positions), x, positions, "layout=half, head_dim=64, base=10000").passed


# 2. neox is rotate_half's pairing, gptj the interleaved one; rope_theta is HF's name of the base.
def test_ecosystem_names_of_layouts_and_base():
    neox = ropecheck.Spec("layout=neox, head_dim=64, rope_theta=500000")
    assert str(neox) == "layout=half,head_dim=64,rotary_dim=64,base=500000,dtype=f32,direction=forward,scaling=none"
    assert ropecheck.Spec(layout="gptj", head_dim=64, rope_theta=10000).layout == "interleaved"
    x, positions = tensors()
    out = rotate_half_rope(x, positions)
    assert ropecheck.check(out, x, positions, "layout=neox,head_dim=64,rope_theta=10000").passed
    assert not ropecheck.check(out, x, positions, "layout=gptj,head_dim=64,rope_theta=10000").passed
    with pytest.raises(ValueError, match="spec field 'base': expected once, got a duplicate"):
        ropecheck.Spec("head_dim=64,base=10000,rope_theta=10000")


def bf16_values(x):
    """float32 x rounded to the nearest bfloat16 (ties to even), from the bits: written here."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return rounded.view(np.float32)


# 3. A float32 x for a bf16 spec is rounded to bf16 (what a bf16 kernel receives), with a warning
# and a note counting the values that were not bf16 values; the CLI's report has the same note.
def test_float32_inputs_for_a_bf16_spec_are_rounded_with_a_warning(ropecheck_bin, tmp_path):
    spec = "layout=half,head_dim=64,rotary_dim=32,base=10000,dtype=bf16"
    x, positions = tensors()
    as_bf16 = bf16_values(x)
    not_bf16 = int(np.count_nonzero(as_bf16 != x))
    assert not_bf16 > x.size // 2
    out = bf16_values(rotate_half_rope(as_bf16, positions, rotary_dim=32))
    with pytest.warns(ropecheck.RoundedInputWarning, match=f"^input: {not_bf16} value\\(s\\) were not values of bf16"):
        result = ropecheck.check(out, x, positions, spec)
    assert result.passed, result.summary()
    assert result.groups[0].inputs_rounded == not_bf16
    [note] = [n for n in result.notes if n.startswith("input: ")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = ropecheck.check(out, torch.from_numpy(as_bf16).to(torch.bfloat16), positions, spec)
    assert same.passed and same.worst_e == result.worst_e and same.groups[0].inputs_rounded == 0
    for name, array in [("x.npy", x), ("out.npy", out), ("p.npy", positions)]:
        np.save(tmp_path / name, array)
    status, stdout, err = run_cli(ropecheck_bin, "check", "--spec", spec, "--positions", tmp_path / "p.npy", "--input",
                                  tmp_path / "x.npy", "--candidate", tmp_path / "out.npy")
    assert status == 0, stdout + err
    assert f"note: {note}\n" in stdout


# 4. HF's [batch, heads, seq, head_dim] is refused with the CLI's message: the shape got, the shapes
# expected and the transpose; transposed, it is judged.
def test_hf_heads_first_layout_names_the_transpose(ropecheck_bin, tmp_path):
    x, positions = tensors(tokens=16, heads=4)
    out = rotate_half_rope(x, positions)
    hf_x, hf_out = np.ascontiguousarray(x.transpose(1, 0, 2)[None]), np.ascontiguousarray(out.transpose(1, 0, 2)[None])
    expected = ("x: shape [1, 4, 16, 64] reads as [batch, heads, tokens, head_dim] (HF transformers' layout; 16 tokens "
                "per sequence from the positions): expected [tokens, heads, head_dim] or [batch, tokens, heads, head_dim]; "
                "transpose it first (torch: x.transpose(1, 2), NumPy: np.swapaxes(x, 1, 2))")
    for where in (positions, positions[None]):  # [seq], and HF's position_ids [batch, seq]
        with pytest.raises(ValueError) as refused:
            ropecheck.check(torch.from_numpy(hf_out), torch.from_numpy(hf_x), torch.from_numpy(where), SPEC)
        assert str(refused.value) == expected
    with pytest.raises(ValueError, match=r"x\.transpose\(1, 2\)"):
        ropecheck.apply(hf_x, positions, SPEC)
    assert ropecheck.check(torch.from_numpy(hf_out).transpose(1, 2), torch.from_numpy(hf_x).transpose(1, 2), positions,
                           SPEC).passed
    np.save(tmp_path / "hf_x.npy", hf_x)
    np.save(tmp_path / "out.npy", out)
    status, _, err = run_cli(ropecheck_bin, "check", "--spec", SPEC, "--positions", "0:1600:100", "--input",
                             tmp_path / "hf_x.npy", "--candidate", tmp_path / "out.npy")
    assert status == 2
    assert err == "ropecheck: " + expected.replace("x: ", f"{tmp_path / 'hf_x.npy'}: ", 1) + "\n"


# 5. Position shapes: one rule (gate/positions.h components_axis) for Python and the CLI.
def test_position_shapes_are_accepted_alike(ropecheck_bin, tmp_path):
    mrope = SPEC + ",axes=mrope,sections=8/12/12"
    x, positions = tensors()
    out = rotate_half_rope(x, positions)  # every component at the token's position: the 1-D rotation
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "out.npy", out)
    forms = {"first": np.stack([positions] * 3), "last": np.stack([positions] * 3, axis=-1)}
    results = {}
    for name, where in forms.items():
        np.save(tmp_path / f"{name}.npy", where)
        result = ropecheck.check(out, x, where, mrope)
        status, _, err = run_cli(ropecheck_bin, "check", "--spec", mrope, "--positions", tmp_path / f"{name}.npy",
                                 "--input", tmp_path / "x.npy", "--candidate", tmp_path / "out.npy",
                                 "--json", tmp_path / f"{name}.json")
        assert status == 0 and result.passed, err + result.summary()
        assert json.loads((tmp_path / f"{name}.json").read_text())["groups"][0]["worst_e"] == result.worst_e
        results[name] = result.worst_e
    assert results["first"] == results["last"]
    # [tokens, 1] for a one-component spec: the CLI read it, Python refused it.
    column = positions[:, None]
    np.save(tmp_path / "column.npy", column)
    assert ropecheck.check(out, x, column, SPEC).worst_e == ropecheck.check(out, x, positions, SPEC).worst_e
    status, _, err = run_cli(ropecheck_bin, "check", "--spec", SPEC, "--positions", tmp_path / "column.npy",
                             "--input", tmp_path / "x.npy", "--candidate", tmp_path / "out.npy")
    assert status == 0, err
    # A shape neither reads: the same message.
    wrong = np.zeros((4, positions.size), dtype=np.int64)
    np.save(tmp_path / "wrong.npy", wrong)
    with pytest.raises(ValueError) as refused:
        ropecheck.check(out, x, wrong, mrope)
    status, _, err = run_cli(ropecheck_bin, "check", "--spec", mrope, "--positions", tmp_path / "wrong.npy",
                             "--input", tmp_path / "x.npy", "--candidate", tmp_path / "out.npy")
    assert status == 2
    assert str(refused.value).startswith("positions: shape: expected 3 integer components per token")
    assert err == "ropecheck: " + str(refused.value).replace("positions: ", f"{tmp_path / 'wrong.npy'}: ", 1) + "\n"


# 6. A tensor judged in chunks (runner/tensor_judge.h kChunkElements values each) is one test.
def test_a_tensor_over_several_chunks_is_one_test():
    tokens = 70000  # x 64 values: two chunks of 2^22 values
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, size=(tokens, 1, 64)).astype(np.float32)
    positions = np.arange(tokens, dtype=np.int64)
    spec = "layout=half,head_dim=64,rotary_dim=2,base=10000,dtype=f32"
    out = rotate_half_rope(x, positions, rotary_dim=2)
    result = ropecheck.check(out, x, positions, spec)
    assert result.passed, result.summary()
    [group] = result.groups
    assert (group.tests, group.tests_failed, group.tests_skipped) == (1, 0, 0)
    assert json.loads(result.to_json())["summary"]["tests"] == 1
    assert "1 tests, 0 failed" in result.table()
    out[tokens - 3, 0, 1] = -out[tokens - 3, 0, 1]  # in the second chunk: one failing test
    failed = ropecheck.check(out, x, positions, spec).groups[0]
    assert (failed.tests, failed.tests_failed) == (1, 1)
    assert failed.worst_cases[0].token == tokens - 3
