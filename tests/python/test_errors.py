"""Bad arguments raise ValueError with the command line's one-line message; nothing crashes."""
import numpy as np
import pytest

import ropecheck

SPEC = "layout=half,head_dim=4,base=10000,dtype=f32"
X = np.ones((2, 1, 4), dtype=np.float32)


@pytest.mark.parametrize("call,words", [
    (lambda: ropecheck.Spec("layout=half,head_dim=3,base=10000"), "rotary_dim"),
    (lambda: ropecheck.Spec("layout=diagonal,head_dim=4"), "layout"),
    (lambda: ropecheck.Spec({"layout": "half", "head_dim": 4, "base": "0.5"}), "base"),
    (lambda: ropecheck.Spec(42), "spec"),
    (lambda: ropecheck.apply(X, [0, 1], None), "spec"),
    (lambda: ropecheck.apply(X, [0, 1], SPEC, model="f32-angle"), "f32-angle"),
    (lambda: ropecheck.apply(X, [0, 1], SPEC, model="fast"), "--model"),
    (lambda: ropecheck.apply(X, [0, 1, 2], SPEC), "positions"),
    (lambda: ropecheck.apply(X, [0.5, 1.5], SPEC), "integers"),
    (lambda: ropecheck.apply(np.ones((2, 1, 6)), [0, 1], SPEC), "head_dim"),
    (lambda: ropecheck.apply(np.ones(4), [0], SPEC), "shape"),
    (lambda: ropecheck.apply(np.array([["a", "b", "c", "d"]]), [0], SPEC), "floating"),
    (lambda: ropecheck.apply(X, [0, 1], SPEC, bf16="half"), None),
    (lambda: ropecheck.apply(X, ([0, 1], [0, 1]), "layout=interleaved,head_dim=8,base=10000,axes=2d"), "head_dim"),
    (lambda: ropecheck.apply(np.ones((2, 1, 8)), [0, 1], "layout=interleaved,head_dim=8,base=10000,axes=2d"), "components"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, tolerance="e=-1"), "--tolerance"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, tolerance="speed=3"), "--tolerance"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, max_position=-5), "--max-position"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, max_position=2.5), "--max-position"),
    (lambda: ropecheck.check(X[:1], X, [0, 1], SPEC), "output"),
    (lambda: ropecheck.gate(lambda x, p: x, spec=SPEC, suites="/nonexistent/suites"), "/nonexistent/suites"),
    (lambda: ropecheck.gate(lambda x: x, spec=SPEC), "fn"),
    (lambda: ropecheck.gate("not a function", spec=SPEC), "fn"),
    (lambda: ropecheck.assert_rope_close(lambda x, p: x, X, [0, 1], spec=SPEC), "draws the inputs"),
    (lambda: ropecheck.assert_rope_close(X, spec=SPEC), "required"),
    (lambda: ropecheck.assert_rope_close(lambda x, p: x, spec=SPEC, samples=0), "--samples"),
    (lambda: ropecheck.kernels.apply(X, [0, 1], SPEC, impl="gpu9000"), "--impl"),
    (lambda: ropecheck.kernels.apply(X, [0, 1], SPEC, threads=-1), "threads"),
    (lambda: ropecheck.kernels.apply(X, [0, 1], SPEC + ",input_dtype=bf16"), "input_dtype"),
])
def test_bad_arguments_raise_value_error(call, words):
    with pytest.raises(ValueError) as raised:
        call()
    message = str(raised.value)
    assert "\n" not in message
    if words:
        assert words in message, message


def test_a_function_that_raises_fails_the_gate_instead_of_crashing():
    def broken(x, positions):
        raise RuntimeError("kernel exploded")

    result = ropecheck.gate(broken, spec="layout=half,head_dim=64,base=10000,dtype=f32")
    assert not result.passed
    assert any("kernel exploded" in c.message for c in result.worst_cases)


def test_a_function_that_returns_the_wrong_size_fails_the_gate():
    result = ropecheck.gate(lambda x, p: x[:, :, :2], spec="layout=half,head_dim=64,base=10000,dtype=f32")
    assert not result.passed
    assert any("output values" in c.message for c in result.worst_cases)


def test_a_very_long_number_is_a_value_error_not_a_crash():
    # 40,000 digits once overflowed the stack of the spec parser's regex and killed the interpreter.
    with pytest.raises(ValueError, match="at most 400 characters") as raised:
        ropecheck.Spec("layout=half,head_dim=64,base=" + "1" * 40000)
    assert len(str(raised.value)) < 300


@pytest.mark.parametrize("stop,check", [(KeyboardInterrupt, lambda e: True), (lambda: SystemExit(3), lambda e: e.code == 3)])
def test_an_interrupt_inside_the_callable_stops_the_gate(stop, check):
    # Ctrl-C or sys.exit() inside the user's function ends the gate at once, raised again as it was
    # (it was recorded as that call's failure and the gate ran on).
    calls = []

    def fn(x, positions):
        calls.append(1)
        raise stop()

    with pytest.raises((KeyboardInterrupt, SystemExit)) as raised:
        ropecheck.judge_callable(fn, "layout=half,head_dim=64,base=10000,dtype=f32", samples=64)
    assert check(raised.value)
    assert len(calls) == 1


# A uint64 position above 2^63 - 1 was wrapped to a negative int64 (2^64 - 1 became position -1)
# and judged or rotated there; it is refused, naming positions.
UINT64_TOP = np.array([0, 2**64 - 1], dtype=np.uint64)


@pytest.mark.parametrize("call", [
    lambda: ropecheck.apply(X, UINT64_TOP, SPEC),
    lambda: ropecheck.kernels.apply(X, UINT64_TOP, SPEC),
    lambda: ropecheck.check(X, X, UINT64_TOP, SPEC),
    lambda: ropecheck.apply(np.ones((2, 1, 8)), (UINT64_TOP, np.array([0, 1])), "layout=interleaved,head_dim=8,base=10000,axes=2d"),
])
def test_a_uint64_position_above_int64_is_refused(call):
    with pytest.raises(ValueError, match="positions") as raised:
        call()
    assert "\n" not in str(raised.value)
    assert "18446744073709551615" in str(raised.value)


def test_a_list_position_above_int64_is_refused():
    with pytest.raises(ValueError, match="positions") as raised:
        ropecheck.apply(X, [0, 2**64 - 1], SPEC)
    assert "\n" not in str(raised.value)


def test_uint64_and_int64_components_stay_exact():
    # Stacked as they were, uint64 and int64 components became float64: 2^62 + 1 rounded to 2^62.
    spec = "layout=interleaved,head_dim=8,base=10000,axes=2d,dtype=f64"
    x = np.ones((1, 1, 8))
    mixed = ropecheck.apply(x, (np.array([2**62 + 1], dtype=np.uint64), np.array([3])), spec)
    same = ropecheck.apply(x, (np.array([2**62 + 1], dtype=np.int64), np.array([3])), spec)
    rounded = ropecheck.apply(x, (np.array([2**62], dtype=np.int64), np.array([3])), spec)
    assert np.array_equal(mixed, same)
    assert not np.array_equal(same, rounded)


def test_uint64_positions_within_int64_are_taken_exactly():
    # The largest int64 position a uint64 holds is the same position as the int64 itself.
    top = 2**63 - 1
    got = ropecheck.apply(X, np.array([0, top], dtype=np.uint64), SPEC)
    want = ropecheck.apply(X, np.array([0, top], dtype=np.int64), SPEC)
    assert np.array_equal(got, want)


# Every argument pybind11 cannot convert (an int beyond its C++ type, None for a string, a str
# with a lone surrogate, a torch meta tensor) is a one-line ValueError naming the argument, not
# pybind11's TypeError listing the overloads and dumping the arguments (the whole input array).
@pytest.mark.parametrize("call,words", [
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, max_position=2**80), "--max-position"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, require_horizon=2**64), "--require-horizon"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, worst=2**62), "--worst"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, threads=2**40), "--threads"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, model=3), "--model"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, label=None), "label"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, tolerance="e=3\udc80"), "--tolerance"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, skip_flags=[None]), "--skip-flags"),
    (lambda: ropecheck.check(X, X, [0, 1], SPEC, skip_flags=5), "--skip-flags"),
    (lambda: ropecheck.Spec.from_hf_config("/nonexistent/config-\udc80.json"), "--hf-config: /nonexistent/config-\udc80.json"),
    (lambda: ropecheck.apply(X, [0, 1], SPEC, model=None), "--model"),
    (lambda: ropecheck.apply(X, [0, 1], SPEC, precision_bits=2**70), "--precision"),
    (lambda: ropecheck.kernels.apply(X, [0, 1], SPEC, impl=None), "--impl"),
    (lambda: ropecheck.kernels.apply(X, [0, 1], SPEC, threads=2**62), "threads"),
    (lambda: ropecheck.kernels.resolve(None), "--impl"),
    (lambda: ropecheck.gate(lambda x, p: x, spec=SPEC, model=b"exact"), "--model"),
    (lambda: ropecheck.gate(lambda x, p: x, spec=SPEC, worst=2**62), "--worst"),
    (lambda: ropecheck.gate(lambda x, p: x, spec=SPEC, name=3), "name"),
    (lambda: ropecheck.gate(lambda x, p: x, spec=SPEC, suites=3), "suites"),
    (lambda: ropecheck.assert_rope_close(lambda x, p: x, spec=SPEC, max_position=2**80), "--max-position"),
    (lambda: ropecheck.assert_rope_close(lambda x, p: x, spec=SPEC, seed=2**64), "--seed"),
    (lambda: ropecheck.assert_rope_close(lambda x, p: x, spec=SPEC, samples=2**70), "--samples"),
    (lambda: ropecheck.Spec("layout=half\udc80"), "spec"),
    (lambda: ropecheck.Spec.from_json('{"layout": "half\udc80"}'), "spec"),
    (lambda: ropecheck.Spec.from_json(None), "spec"),
])
def test_arguments_pybind11_cannot_convert_are_one_line_value_errors(call, words):
    with pytest.raises(ValueError) as raised:
        call()
    message = str(raised.value)
    assert "\n" not in message and len(message) < 300, message
    assert words in message, message


def test_a_meta_tensor_is_a_value_error():
    torch = pytest.importorskip("torch")
    meta = torch.empty(4, 1, 8, device="meta")
    spec = "layout=half,head_dim=8,base=10000,dtype=f32"
    real = torch.ones(4, 1, 8)
    for call, words in [
        (lambda: ropecheck.apply(meta, [0, 1, 2, 3], spec), "x: "),
        (lambda: ropecheck.kernels.apply(meta, [0, 1, 2, 3], spec), "x: "),
        (lambda: ropecheck.kernels.apply(meta.to(torch.bfloat16), [0, 1, 2, 3], "layout=half,head_dim=8,base=10000,dtype=bf16"), "x: "),
        (lambda: ropecheck.check(meta, real, [0, 1, 2, 3], spec), "output: "),
        (lambda: ropecheck.apply(real, torch.empty(4, dtype=torch.int64, device="meta"), spec), "positions: "),
    ]:
        with pytest.raises(ValueError) as raised:
            call()
        message = str(raised.value)
        assert "\n" not in message and words in message and "meta" in message, message
