"""What a failing check costs against a passing one, end to end (the explanation included):
`ropecheck check --spec` of a 4096 x 32 x 128 f32 tensor, a careful candidate (the transformers
recipe in float32) against the same recipe with the wrong base, and the same pair through Python's
`ropecheck.check`. Prints the median wall time of each and the failing/passing ratio, measured in
one run (judge/README.md "Explanation": the target is at most 2); then the passing and failing
checks, CLI and Python, on 1 thread against 2, their repeats taken in turn (the target is at least
1.8), and two one-thread CLI checks side by side against one alone: the ceiling 2·alone/side-by-side
is what a second core gives this work on this machine at all (shared caches, memory bandwidth, a
VM's vCPUs), whatever the program does with it. Beside the ratio, where it goes: the CPU time the
two-thread run takes against the one-thread run's (above 1: the threads slow each other down, or
do work one thread does not), and the share of the two cores' time it kept busy (below 1: a
thread waited — a serial step, or a vCPU the host took away); ratio = 2 · busy / CPU ratio, where
a one-thread run keeps its core busy.

    PYTHONPATH=build/python /usr/bin/python3 bench/check_ratio.py [--bin build/bin/ropecheck] [--repeat 3]
"""
import argparse
import os
import sys
import tempfile

import numpy as np

import ropecheck

sys.dont_write_bytecode = True  # run from the source tree: no __pycache__ beside the script
from run_timing import ceiling, medians_in_turn, run_expecting, side_by_side  # noqa: E402 (bench/run_timing.py)

SPEC = "layout=half,head_dim=128,base=10000,dtype=f32"


def hf_rope(x, positions, base):
    inv = (1.0 / (base ** (np.arange(0, 128, 2, dtype=np.float32) / 128))).astype(np.float32)
    angle = positions.astype(np.float32)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(angle)] * 2, -1)[:, None, :]
    sin = np.concatenate([np.sin(angle)] * 2, -1)[:, None, :]
    return (x * cos + np.concatenate([-x[..., 64:], x[..., :64]], -1) * sin).astype(np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join("build", "bin", "ropecheck"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    positions = np.arange(4096, dtype=np.int64)
    x = np.random.default_rng(1).standard_normal((4096, 32, 128)).astype(np.float32)
    outputs = {"passing": hf_rope(x, positions, 10000.0), "failing": hf_rope(x, positions, 500000.0)}
    verdict_rc = {"passing": 0, "failing": 1}  # the CLI's exit codes: pass, fail
    with tempfile.TemporaryDirectory() as folder:
        np.save(os.path.join(folder, "x.npy"), x)
        rows, threads = [], []
        for name, out in outputs.items():
            path = os.path.join(folder, name + ".npy")
            np.save(path, out)
            command = [args.bin, "check", "--spec", SPEC, "--positions", "0:4096", "--input", os.path.join(folder, "x.npy"),
                       "--candidate", path, "--model", "f32-angle"]
            rc = verdict_rc[name]
            (cli, _), (py, _) = medians_in_turn([lambda: run_expecting(command, rc),
                                                 lambda: ropecheck.check(out, x, positions, SPEC, model="f32-angle")], args.repeat)
            rows.append((name, cli, py))
            threads.append((name, *medians_in_turn(
                [lambda t=t: run_expecting(command + ["--threads", str(t)], rc) for t in (1, 2)] +
                [lambda t=t: ropecheck.check(out, x, positions, SPEC, model="f32-angle", threads=t) for t in (1, 2)] +
                [lambda: side_by_side(command + ["--threads", "1"], rc)], args.repeat)))
    print("| check, 4096 x 32 x 128 f32 | CLI (s) | Python (s) |")
    print("|---|---|---|")
    for name, cli, py in rows:
        print(f"| {name} | {cli:.2f} | {py:.2f} |")
    (_, cli_pass, py_pass), (_, cli_fail, py_fail) = rows
    print(f"| failing / passing | {cli_fail / cli_pass:.2f} | {py_fail / py_pass:.2f} |")
    print()
    print("| check, 4096 x 32 x 128 f32 | --threads 1 (s) | --threads 2 (s) | ratio | CPU time 2 / 1 | two cores busy | "
          "two --threads 1 at once (s) | ceiling |")
    print("|---|---|---|---|---|---|---|---|")
    for name, *runs in threads:
        (one, cpu_one), (two, cpu_two), (py_one, py_cpu_one), (py_two, py_cpu_two), (pair, _) = runs
        print(f"| {name}, CLI | {one:.2f} | {two:.2f} | {one / two:.2f} | {cpu_two / cpu_one:.2f} | {cpu_two / (2 * two):.2f} | "
              f"{pair:.2f} | {ceiling(one, pair):.2f} |")
        print(f"| {name}, Python (threads=) | {py_one:.2f} | {py_two:.2f} | {py_one / py_two:.2f} | {py_cpu_two / py_cpu_one:.2f} | "
              f"{py_cpu_two / (2 * py_two):.2f} | | |")
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
