"""A callable run in a forked child per call (gate(..., isolate=True) and timeout=; python/README.md
"Isolation of a callable"): a crash, an exit or a hang fails that call alone, with the one-line
reason `ropecheck run --plugin` gives (runner/README.md "Isolation"), and the gate goes on to its
verdict; a careful callable gets the same Result isolated as in process; KeyboardInterrupt and
SystemExit stop the gate in both modes. One golden group of 11 tests keeps each gate quick."""
import ctypes
import json
import os
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

import ropecheck
from conftest import GOLDEN_DIR

SUITE = os.path.join(GOLDEN_DIR, "half-f32-base10000.json")
SPEC = "layout=half,head_dim=64,base=10000,dtype=f32"
# The group of SPEC in SUITE: 11 tests, one of them with positions from 2^20 up (LargePosition).
TESTS = 11
LARGE = 2**20


def careful(x, positions):
    """RoPE of the half layout in float64, rounded once to float32: within the exact model's default
    tolerance (judge/tolerance.h) at every position of the suite."""
    x = np.asarray(x, dtype=np.float64)
    half = x.shape[-1] // 2
    theta = 10000.0 ** (-np.arange(half, dtype=np.float64) / half)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta  # [tokens, half]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    a, b = x[..., :half], x[..., half:]
    with np.errstate(all="ignore"):  # the suite's NaN, Inf and overflow tests: IEEE results, no warnings
        return np.concatenate((a * cos - b * sin, b * cos + a * sin), axis=-1).astype(np.float32)


def sign_flipped(x, positions):
    """careful() with the sine's sign flipped: fails every group, with a diagnosis."""
    return careful(x, -np.asarray(positions))


def raises_at_large_positions(x, positions):
    if np.max(positions) >= LARGE:
        raise ValueError(f"position {int(np.max(positions))} is too large for this kernel")
    return careful(x, positions)


def gate(fn, **options):
    return ropecheck.gate(fn, suites=SUITE, spec=SPEC, **options)


def large_position_tests():
    with open(SUITE) as f:
        data = json.load(f)
    group = next(g for g in data["groups"] if ropecheck.Spec(g["spec"]) == ropecheck.Spec(SPEC))
    assert len(group["tests"]) == TESTS
    return {t["id"] for t in group["tests"] if max(t["positions"]) >= LARGE}


def failed(result):
    """{(test id, case kind, message)} of the failing calls (one Case per test)."""
    return {(c.test_id, c.kind, c.message) for c in result.worst_cases if c.dim < 0}


def calls_failed(tests, kind, reason):
    """failed()'s set for `tests` failing as `kind`: the judge adds the suite and test to the reason."""
    return {(test, kind, f"{reason} (suite half-f32-base10000, test {test})") for test in tests}


def process_ended(pid):
    """Gone, or killed and not yet reaped by whoever adopted it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"


# ---- the same Result for a well-behaved callable ------------------------------------------------

@pytest.mark.parametrize("fn", [careful, sign_flipped, raises_at_large_positions])
def test_isolated_gives_the_result_in_process_gives(fn):
    here = gate(fn)
    isolated = gate(fn, isolate=True)
    timed = gate(fn, timeout=60)
    for other in (isolated, timed):
        assert other.verdict == here.verdict
        assert other.to_json() == here.to_json()
        assert other.summary() == here.summary()
        assert other.table() == here.table()
    assert here.passed == (fn is careful)


def test_an_exception_reads_alike_in_both_modes():
    large = large_position_tests()
    assert large
    for result in (gate(raises_at_large_positions), gate(raises_at_large_positions, isolate=True)):
        calls = failed(result)
        assert {test for test, _, _ in calls} == large
        for _, kind, message in calls:
            assert kind == "status"
            assert message.startswith("threw: ValueError: position ")
            assert "\n" not in message


def test_isolated_torch_callable():
    torch = pytest.importorskip("torch")

    def torch_careful(x, positions):
        assert isinstance(x, torch.Tensor) and isinstance(positions, torch.Tensor)
        return torch.from_numpy(careful(x.numpy(), positions.numpy()))

    assert gate(torch_careful, as_torch=True, isolate=True).to_json() == gate(torch_careful, as_torch=True).to_json()


# ---- crashes and hangs: that call's failure, the gate goes on -----------------------------------

def segfaults_at_large_positions(x, positions):
    if np.max(positions) >= LARGE:
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    return careful(x, positions)


def exits_at_large_positions(x, positions):
    if np.max(positions) >= LARGE:
        os._exit(3)
    return careful(x, positions)


def aborts_at_large_positions(x, positions):
    if np.max(positions) >= LARGE:
        os.abort()
    return careful(x, positions)


@pytest.mark.parametrize("fn,message", [
    (segfaults_at_large_positions, "killed by SIGSEGV (Segmentation fault) while running the call"),
    (exits_at_large_positions, "exited with status 3 while running the call"),
    (aborts_at_large_positions, "killed by SIGABRT (Aborted) while running the call"),
])
def test_a_crash_fails_that_call_alone(fn, message):
    large = large_position_tests()
    result = gate(fn, isolate=True)
    assert result.verdict == "fail"
    assert failed(result) == calls_failed(large, "crash", message)
    (group,) = result.groups
    assert group.tests == TESTS and group.tests_failed == len(large)
    # The other calls were made and judged: careful() outputs pass there.
    assert group.pairs_checked > 0 and group.pairs_failed == 0
    assert message in result.summary()


def test_a_hang_past_the_timeout_fails_that_call_alone(tmp_path):
    pids = tmp_path / "pids"

    def hangs_at_large_positions(x, positions):
        if np.max(positions) >= LARGE:
            # A process it started is ended with it (the child's process group).
            sleeper = subprocess.Popen(["sleep", "60"])
            with open(pids, "a") as f:
                f.write(f"{os.getpid()} {sleeper.pid}\n")
            time.sleep(60)
        return careful(x, positions)

    large = large_position_tests()
    start = time.monotonic()
    result = gate(hangs_at_large_positions, timeout=1)
    assert time.monotonic() - start < 30  # len(large) calls of 1 s each, not 60 s each
    assert failed(result) == calls_failed(large, "timeout", "no answer within 1 s while running the call (killed)")
    assert result.groups[0].tests_failed == len(large)
    assert not any(n.startswith("stopped:") for n in result.notes)
    for line in pids.read_text().split("\n")[:-1]:
        for pid in map(int, line.split()):
            assert process_ended(pid)


def test_a_callable_that_always_hangs_trips_the_circuit_breaker():
    def hangs(x, positions):
        time.sleep(60)

    start = time.monotonic()
    result = gate(hangs, timeout=1, worst=TESTS)
    assert time.monotonic() - start < 30  # 3 timeouts, then no call: not 11 s
    kinds = [(c.kind, c.message.split(" (suite ")[0]) for c in result.worst_cases if c.dim < 0]
    assert result.groups[0].tests_failed == TESTS
    assert sorted(kinds) == sorted(
        [("timeout", "no answer within 1 s while running the call (killed)")] * 3 +
        [("timeout", "not called: the previous 3 calls timed out (circuit breaker: the implementation is taken to hang)")] * (TESTS - 3))
    assert ("stopped: 3 consecutive calls timed out: the implementation is taken to hang and no further call is made "
            "(circuit breaker)") in result.notes


def test_judge_callable_isolates_the_sweep_too():
    def segfaults(x, positions):
        ctypes.string_at(0)

    result = ropecheck.judge_callable(segfaults, SPEC, samples=16, suites=SUITE, isolate=True)
    assert not result.passed
    assert {g.verdict for g in result.groups} == {"fail"}
    cases = [c for c in result.worst_cases if c.dim < 0]
    assert cases
    for c in cases:  # golden tests and sweep calls alike
        assert c.kind == "crash"
        assert c.message.startswith("killed by SIGSEGV (Segmentation fault) while running the call")


# ---- KeyboardInterrupt and SystemExit stop the gate, in both modes ------------------------------

@pytest.mark.parametrize("isolate", [False, True])
@pytest.mark.parametrize("stop,check", [
    (KeyboardInterrupt, lambda e: isinstance(e, KeyboardInterrupt)),
    (lambda: SystemExit(3), lambda e: isinstance(e, SystemExit) and e.code == 3),
    (lambda: SystemExit("bye"), lambda e: isinstance(e, SystemExit) and e.code == "bye"),
])
def test_an_interrupt_inside_the_callable_stops_the_gate(tmp_path, isolate, stop, check):
    calls = tmp_path / "calls"  # a file: an isolated call's memory does not come back

    def fn(x, positions):
        with open(calls, "a") as f:
            f.write("call\n")
        raise stop()

    with pytest.raises((KeyboardInterrupt, SystemExit)) as raised:
        gate(fn, isolate=isolate)
    assert check(raised.value)
    assert calls.read_text() == "call\n"


def test_ctrl_c_while_an_isolated_call_runs_stops_the_gate(tmp_path):
    pid_file = tmp_path / "pid"

    def sleeps(x, positions):
        pid_file.write_text(str(os.getpid()))
        time.sleep(60)

    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            gate(sleeps, isolate=True)  # no timeout: only Ctrl-C ends it
    finally:
        timer.cancel()
    assert time.monotonic() - start < 30
    assert process_ended(int(pid_file.read_text()))


# ---- arguments ----------------------------------------------------------------------------------

@pytest.mark.parametrize("options,words", [
    ({"timeout": 0}, "timeout: expected a number of seconds from 0.01 to 86400, got 0.0"),
    ({"timeout": -1}, "timeout: expected a number of seconds from 0.01 to 86400"),
    ({"timeout": float("nan")}, "timeout: expected a number of seconds"),
    ({"timeout": "1"}, "timeout: expected a number of seconds from 0.01 to 86400, got '1'"),
    ({"timeout": True}, "timeout: expected a number"),
    ({"timeout": 1, "isolate": False}, "timeout: needs the call isolated"),
    ({"isolate": "yes"}, "isolate: expected True or False, got 'yes'"),
])
def test_bad_isolation_options_are_value_errors(options, words):
    for call in (lambda: gate(careful, **options), lambda: ropecheck.judge_callable(careful, SPEC, **options)):
        with pytest.raises(ValueError) as raised:
            call()
        assert words in str(raised.value)
        assert "\n" not in str(raised.value)
