"""ropecheck.apply against `ropecheck apply` bit for bit: on every golden suite (whose expected
values are `apply`'s output, checked by `golden verify`), and on a few calls of the CLI itself."""
import os

import numpy as np
import pytest

import ropecheck
from conftest import golden_suites, hex_values, run_cli

SUITES = golden_suites()


def bits(values):
    """float64 bit patterns, every NaN the same (the golden files write NaN without a sign)."""
    values = np.asarray(values, dtype=np.float64)
    return np.where(np.isnan(values), np.float64("nan"), values).view(np.uint64)


@pytest.mark.parametrize("name,data", SUITES, ids=[name for name, _ in SUITES])
def test_apply_matches_golden_expected_values(name, data):
    checked = 0
    for group in data["groups"]:
        spec = ropecheck.Spec(group["spec"])
        for test in group["tests"]:
            tokens, heads, head_dim = test["shape"]
            x = hex_values(test["input"]).reshape(tokens, heads, head_dim)
            positions = np.array(test["positions"], dtype=np.int64).reshape(tokens, -1)
            got = ropecheck.apply(x, positions if spec.position_components > 1 else positions[:, 0], spec)
            expected = hex_values(test["expected"])
            assert got.shape == x.shape
            assert np.array_equal(bits(got.astype(np.float64).reshape(-1)), bits(expected)), (
                f"{name} test {test['id']}: apply differs from the golden expected values")
            checked += 1
    assert checked > 0


def test_apply_result_dtypes():
    x = np.array([[1.0, 0.0, 0.5, -0.25]], dtype=np.float64)
    for dtype, numpy_type in [("f64", np.float64), ("f32", np.float32), ("f16", np.float16), ("bf16", np.float32)]:
        out = ropecheck.apply(x, [3], f"layout=half,head_dim=4,base=10000,dtype={dtype}")
        assert out.dtype == numpy_type and out.shape == x.shape
    bits16 = ropecheck.apply(x, [3], "layout=half,head_dim=4,base=10000,dtype=bf16", bf16="uint16")
    as_f32 = ropecheck.apply(x, [3], "layout=half,head_dim=4,base=10000,dtype=bf16")
    assert bits16.dtype == np.uint16
    assert np.array_equal((bits16.astype(np.uint32) << 16).view(np.float32), as_f32)


def test_apply_takes_float32_float64_strided_and_other_types_alike(ropecheck_bin, tmp_path):
    """float32 and float64 arrays go to C++ as they are, strided ones and other types through NumPy
    first; all give the bits of `ropecheck apply` on the same values, over several chunks of tokens
    (reference/rope.h apply_chunked: 2^15 values, here 32 tokens a chunk) with special values."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((70, 8, 128)).astype(np.float32)
    x.reshape(-1)[rng.choice(x.size, 60, replace=False)] = np.resize(
        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-41, 3e38], dtype=np.float32), 60)
    positions = np.arange(70) * 977
    spec = "layout=interleaved,head_dim=128,base=500000,dtype=f32"
    path = tmp_path / "x.npy"
    np.save(path, x)
    status, out, err = run_cli(ropecheck_bin, "apply", "--spec", spec, "--positions", ",".join(map(str, positions)),
                               "--input", path, "--format", "hex")
    assert status == 0, err
    expected = bits(hex_values(out.split()))
    wide = np.zeros((70, 16, 128), dtype=np.float32)
    wide[:, ::2] = x  # a strided view of the same values
    for name, values in [("float32", x), ("float64", x.astype(np.float64)), ("strided", wide[:, ::2])]:
        got = ropecheck.apply(values, positions, spec)
        assert got.dtype == np.float32 and got.shape == x.shape, name
        assert np.array_equal(bits(got.astype(np.float64).reshape(-1)), expected), name
    # integers: widened by NumPy, then as the CLI given the same values
    ints = (x[:2] * 100).astype(np.int32)
    np.save(path, ints.astype(np.float64))
    status, out, err = run_cli(ropecheck_bin, "apply", "--spec", spec, "--positions", "0,1", "--input", path, "--format", "hex")
    assert status == 0, err
    assert np.array_equal(bits(ropecheck.apply(ints, [0, 1], spec).astype(np.float64).reshape(-1)), bits(hex_values(out.split())))


CLI_CASES = [
    ("layout=interleaved,head_dim=2,base=10000,dtype=f64", "1", [1.0, 0.0]),
    ("layout=half,head_dim=8,base=500000,dtype=bf16", "7,123456", list(np.linspace(-3, 3, 16))),
    ("layout=half,head_dim=8,rotary_dim=4,base=10000,dtype=f16,scaling=linear,factor=4", "0,65504", list(np.linspace(-2, 2, 16))),
    ("layout=interleaved,head_dim=4,base=10000,dtype=f32,axes=2d", "3:5,2147483647:1", [0.1, 0.2, 0.3, 0.4] * 2),
    ("layout=half,head_dim=16,base=5000000,dtype=bf16,axes=imrope,sections=2/3/3", "1:2:3,70000:5:9",
     list(np.linspace(-1, 1, 32))),
    # GPT-J: f16 inputs (the values are rounded to f16 first, not to f32), f32 outputs.
    ("layout=interleaved,head_dim=8,rotary_dim=4,base=10000,dtype=f32,input_dtype=f16", "5,40000",
     list(np.linspace(-2.1, 2.3, 16))),
]


@pytest.mark.parametrize("spec,positions,values", CLI_CASES, ids=[c[0] for c in CLI_CASES])
@pytest.mark.parametrize("model", ["exact", "f32-recipe"])
def test_apply_matches_the_command_line(ropecheck_bin, tmp_path, spec, positions, values, model):
    x = np.array(values, dtype=np.float64)
    path = tmp_path / "x.npy"
    np.save(path, x)
    status, out, err = run_cli(ropecheck_bin, "apply", "--spec", spec, "--positions", positions, "--input", path,
                               "--model", model, "--format", "hex")
    assert status == 0, err
    expected = hex_values(out.split())
    parsed = ropecheck.Spec(spec)
    tuples = [tuple(int(c) for c in p.split(":")) for p in positions.split(",")]
    where = np.array(tuples, dtype=np.int64)
    where = where[:, 0] if parsed.position_components == 1 else where
    got = ropecheck.apply(x.reshape(len(tuples), -1, parsed.head_dim), where, parsed, model=model)
    assert np.array_equal(bits(got.astype(np.float64).reshape(-1)), bits(expected))


def test_torch_tensors_and_batch_shapes():
    torch = pytest.importorskip("torch")
    spec = ropecheck.Spec("layout=half,head_dim=8,base=10000,dtype=bf16")
    x = torch.randn(2, 3, 4, 8, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)  # [batch, seq, heads, d]
    positions = torch.arange(3)
    out = ropecheck.apply(x, positions, spec, as_torch=True)
    assert out.dtype == torch.bfloat16 and out.shape == x.shape
    # The same tokens one by one, from a float32 NumPy copy of the bf16 values.
    for b in range(2):
        for s in range(3):
            one = ropecheck.apply(x[b, s].float().numpy(), [s] * 4, spec)  # [tokens=4 heads as tokens, d]
            assert np.array_equal(one, out[b, s].float().numpy())


def test_spec_forms_agree():
    text = "layout=half,head_dim=128,base=500000,dtype=bf16,scaling=llama3,factor=8,original_max_position=8192"
    spec = ropecheck.Spec(text)
    assert ropecheck.Spec({"layout": "half", "head_dim": 128, "base": "500000", "dtype": "bf16",
                           "scaling": {"type": "llama3", "factor": 8, "original_max_position": 8192}}) == spec
    assert ropecheck.Spec(layout="half", head_dim=128, base=500000, dtype="bf16", scaling="llama3", factor=8,
                          original_max_position=8192) == spec
    assert ropecheck.Spec(str(spec)) == spec and ropecheck.Spec.from_json(spec.to_json()) == spec
    assert (spec.head_dim, spec.rotary_dim, spec.dtype, spec.layout, spec.scaling) == (128, 128, "bf16", "half", "llama3")


def test_multi_axis_positions_in_every_form():
    spec = ropecheck.Spec("layout=half,head_dim=16,base=10000,dtype=f32,axes=mrope,sections=2/3/3")
    x = np.linspace(-1, 1, 5 * 16).reshape(5, 1, 16)
    t, h, w = np.arange(5), np.arange(5) * 7, np.arange(5) * 11
    by_tuple = ropecheck.apply(x, (t, h, w), spec)
    assert np.array_equal(ropecheck.apply(x, np.stack([t, h, w], axis=-1), spec), by_tuple)
    assert np.array_equal(ropecheck.apply(x, np.stack([t, h, w]), spec), by_tuple)  # Qwen2-VL's [3, tokens]
    one_by_one = [ropecheck.apply(x[i], np.array([[t[i], h[i], w[i]]]), spec) for i in range(5)]
    assert np.array_equal(np.stack(one_by_one), by_tuple)
