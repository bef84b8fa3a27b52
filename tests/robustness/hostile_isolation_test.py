"""Hostile callables and plugins against the isolation of python/README.md "Isolation of a callable"
and runner/README.md "Isolation": children that leave the process group or session (setsid, a
double fork), a child that stops its parent (SIGSTOP), a 100 MiB exception message. ctest runs this
file under an address-space cap (tests/robustness/CMakeLists.txt), as CI does.

Each gate runs in a fresh Python process of its own (a callable that stops its parent must not stop
pytest; a frozen gate is killed at LIMIT_S and fails its test), which prints its Result as JSON and
the pids the hostile code started. Everything is written in pytest's tmp_path.
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

GOLDEN_DIR = os.environ.get("ROPECHECK_GOLDEN_DIR")
SUITE = os.path.join(GOLDEN_DIR or "", "half-f32-base10000.json")
SPEC = "layout=half,head_dim=64,base=10000,dtype=f32"
PLUGIN_DIR = os.environ.get("ROPECHECK_PLUGIN_DIR", "")
ROPECHECK_BIN = os.environ.get("ROPECHECK_BIN", "")
# A gate that has not ended by then is frozen: killed, and its test fails.
LIMIT_S = 40
# The message a callable raises: 100 MiB.
HUGE = 100 * 2**20

# The script of one gate: `careful` is a correct RoPE (tests/python/test_isolation.py's), HOSTILE the
# code under test, run at the suite's large positions (>= 2^20) or on every call.
PRELUDE = r'''
import json, os, signal, subprocess, sys, time
import numpy as np
import ropecheck

PIDS = sys.argv[1]

def note(pid):
    with open(PIDS, "a") as f:
        f.write(f"{pid}\n")

def careful(x, positions):
    x = np.asarray(x, dtype=np.float64)
    half = x.shape[-1] // 2
    theta = 10000.0 ** (-np.arange(half, dtype=np.float64) / half)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    a, b = x[..., :half], x[..., half:]
    with np.errstate(all="ignore"):
        return np.concatenate((a * cos - b * sin, b * cos + a * sin), axis=-1).astype(np.float32)

def setsid_sleep(x, positions):
    note(subprocess.Popen(["sleep", "317"], start_new_session=True).pid)
    return careful(x, positions)

def double_fork(x, positions):
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.setsid()
        grandchild = os.fork()
        if grandchild == 0:
            os.close(read)
            os.close(write)
            while True:
                signal.pause()
        os.write(write, f"{grandchild}\n".encode())
        os._exit(0)
    os.close(write)
    note(int(os.read(read, 64)))
    os.close(read)
    os.waitpid(middle, 0)
    return careful(x, positions)

def stops_parent(x, positions):
    if np.max(positions) >= 2**20:
        os.kill(os.getppid(), signal.SIGSTOP)
        time.sleep(317)
    return careful(x, positions)

def stops_parent_and_returns(x, positions):
    if np.max(positions) >= 2**20:
        os.kill(os.getppid(), signal.SIGSTOP)
    return careful(x, positions)

def kills_parent(x, positions):
    if np.max(positions) >= 2**20:
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(317)
    return careful(x, positions)

def huge_message(x, positions):
    if np.max(positions) >= 2**20:
        raise ValueError("m" * (100 * 2**20))
    return careful(x, positions)

class Sealed(Exception):
    """Takes no attribute: the package's wrapper cannot store its description on it."""
    def __setattr__(self, name, value):
        raise AttributeError(name)

def huge_sealed_message(x, positions):
    if np.max(positions) >= 2**20:
        raise Sealed("s" * (100 * 2**20))
    return careful(x, positions)
'''


def run_limited(command, tmp_path, env=None):
    """`command` in tmp_path, its output into files there (a lingering process that holds a pipe
    would hold the reader too), killed at LIMIT_S: (exit status, wall seconds, stdout, stderr)."""
    out_path, err_path = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    start = time.monotonic()
    with open(out_path, "w") as out, open(err_path, "w") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=tmp_path, env=env)
        try:
            process.wait(timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            process.kill()  # frozen: SIGKILL ends a stopped process too
            process.wait()
    return process.returncode, time.monotonic() - start, out_path.read_text(), err_path.read_text()


def run_gate(tmp_path, fn, options):
    """gate(fn, spec=SPEC, **options) in a fresh Python: (exit status, wall seconds, the peak RSS in
    KiB of that process or of any of its children, its Result as a dict or None, the pids its
    callable noted)."""
    pids = tmp_path / "pids.txt"
    pids.write_text("")
    script = PRELUDE + f'''
result = ropecheck.gate({fn}, suites={SUITE!r}, spec={SPEC!r}, {options})
cases = [[c.test_id, c.kind, c.message] for c in result.worst_cases if c.dim < 0]
import resource
peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({{"verdict": result.verdict, "cases": cases, "peak_rss_kib": peak}}))
'''
    code, seconds, out, err = run_limited([sys.executable, "-c", script, str(pids)], tmp_path)
    lines = out.strip().split("\n")
    result = json.loads(lines[-1]) if code == 0 and lines[-1].startswith("{") else None
    peak = result["peak_rss_kib"] if result else None
    noted = [int(p) for p in pids.read_text().split()]
    print(f"{fn} {options}: exit {code}, {seconds:.2f} s, peak RSS {peak} KiB\n{err[-2000:]}")
    return code, seconds, peak, result, noted


def living(pids):
    """The pids of `pids` that still run (not gone, not a zombie), each killed here (the test's own
    cleanup) after a grace of a second for a SIGKILL on its way."""
    def alive(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except (FileNotFoundError, ProcessLookupError):
            return False
    deadline = time.monotonic() + 1
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.01)
    left = [p for p in pids if alive(p)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def large_tests():
    """The ids of the tests of SPEC's group with a position from 2^20 up, read with json."""
    import ropecheck  # noqa: PLC0415  (PYTHONPATH is the build's; only Spec's equality is used)
    with open(SUITE) as f:
        data = json.load(f)
    group = next(g for g in data["groups"] if ropecheck.Spec(g["spec"]) == ropecheck.Spec(SPEC))
    return sorted(t["id"] for t in group["tests"] if max(t["positions"]) >= 2**20)


@pytest.fixture(autouse=True)
def needs_the_build():
    if not GOLDEN_DIR or not os.path.isdir(GOLDEN_DIR):
        pytest.fail("ROPECHECK_GOLDEN_DIR must name golden/suites (ctest sets it)")


# ---- escaping children ----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["setsid_sleep", "double_fork"])
@pytest.mark.parametrize("options", ["isolate=True", "timeout=2"])
def test_nothing_a_callable_starts_outlives_its_call(tmp_path, fn, options):
    code, seconds, _, result, noted = run_gate(tmp_path, fn, options)
    assert code == 0 and result is not None
    assert result["verdict"] == "pass", result
    assert len(noted) == 11  # one process per call, every call made
    assert living(noted) == []
    assert seconds < LIMIT_S / 2


# ---- a stopped parent -----------------------------------------------------------------------------

@pytest.mark.parametrize("options", ["isolate=True", "timeout=2"])
def test_a_callable_that_stops_its_parent_fails_its_calls_alone(tmp_path, options):
    code, seconds, _, result, _ = run_gate(tmp_path, "stops_parent", options)
    assert code == 0, "the gate froze or died"
    assert seconds < 20
    message = "stopped the process that supervises it (SIGSTOP (Stopped (signal))) while running the call (killed)"
    large = large_tests()
    assert large
    assert sorted(c[0] for c in result["cases"]) == large
    for test_id, kind, text in result["cases"]:
        assert kind == "crash"
        assert text.startswith(message), text


def test_a_stopped_parent_fails_the_call_even_when_it_answers(tmp_path):
    code, seconds, _, result, _ = run_gate(tmp_path, "stops_parent_and_returns", "isolate=True")
    assert code == 0, "the gate froze or died"
    assert sorted(c[0] for c in result["cases"]) == large_tests()
    assert all(c[1] == "crash" and "stopped the process that supervises it" in c[2] for c in result["cases"])


def test_a_callable_that_kills_its_parent_fails_its_calls_alone(tmp_path):
    # The supervisor killed: the child dies with it (PR_SET_PDEATHSIG), the call is a crash.
    code, seconds, _, result, _ = run_gate(tmp_path, "kills_parent", "isolate=True")
    assert code == 0, "the gate froze or died"
    assert seconds < 20
    assert sorted(c[0] for c in result["cases"]) == large_tests()
    for _, kind, text in result["cases"]:
        assert kind == "crash" and text.startswith("killed by SIGKILL (Killed) while running the call"), text


# ---- huge messages --------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,letter,type_name", [("huge_message", "m", "ValueError"),
                                                ("huge_sealed_message", "s", "Sealed")])
@pytest.mark.parametrize("options", ["isolate=False", "isolate=True"])
def test_a_huge_message_is_cut_in_both_modes(tmp_path, fn, letter, type_name, options):
    code, seconds, peak, result, _ = run_gate(tmp_path, fn, options)
    assert code == 0 and result is not None, "MemoryError, or the gate died"
    assert seconds < 20
    # The 100 MiB message, its copies and the reports: within 4 times the message (the cap of
    # ctest's command stops a larger one first).
    assert peak < 4 * HUGE // 1024 + 300 * 1024
    large = large_tests()
    assert sorted(c[0] for c in result["cases"]) == large
    for _, kind, text in result["cases"]:
        assert kind == "status"
        assert text.startswith(f"threw: {type_name}: {letter * 100}")
        assert len(text.encode()) < 12 * 1024  # callable.h kMaxMessageBytes and the suite's words


# ---- plugins --------------------------------------------------------------------------------------

def plugin(name):
    path = os.path.join(PLUGIN_DIR, f"libgate_plugin_{name}.so")
    if not os.path.exists(path):
        pytest.fail(f"{path}: not built (ctest sets ROPECHECK_PLUGIN_DIR; build the gate_plugin_* targets)")
    return path


def run_cli(tmp_path, *args):
    env = dict(os.environ, ROPECHECK_TEST_PID_FILE=str(tmp_path / "pids.txt"))
    code, seconds, out, err = run_limited([ROPECHECK_BIN, *args], tmp_path, env)
    print(f"ropecheck {' '.join(args)}: exit {code}, {seconds:.2f} s\n{out[-2000:]}\n{err[-2000:]}")
    pids_file = tmp_path / "pids.txt"
    noted = [int(p) for p in pids_file.read_text().split()] if pids_file.exists() else []
    return code, seconds, noted


def test_nothing_a_plugin_starts_outlives_the_gate(tmp_path):
    code, seconds, noted = run_cli(tmp_path, "run", "--plugin", plugin("escape"), "--golden", SUITE,
                                   "--timeout", "5")
    assert code == 0
    # The child ends when its requests pipe closes: the gate does not wait out the timeout for it
    # (nor for its supervisor).
    assert seconds < 4
    assert len(noted) >= 2 * 11  # a setsid child and a double-forked grandchild per call
    assert living(noted) == []


def test_a_plugin_that_stops_its_parent_does_not_stop_the_gate(tmp_path):
    code, seconds, noted = run_cli(tmp_path, "run", "--plugin", plugin("stop_parent"), "--golden", SUITE,
                                   "--timeout", "1")
    assert code in (0, 1), "the gate froze or died"
    assert seconds < 20
    assert noted  # the supervisor it stopped
    assert living(noted) == []
