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
