"""The exact reference end to end, as a user calls it: `ropecheck apply` from a .npy input to a .npy
output, and Python's `ropecheck.apply` of a float32 array, for 4096 tokens x 32 heads x 128 dims
f32, half layout, base 500000, positions 0..4095 (bench/README.md "reference_bench").

    PYTHONPATH=build/python /usr/bin/python3 bench/apply_end_to_end.py [--ropecheck build/bin/ropecheck] [--runs 5]

Prints, per route, the median over the runs of wall time and CPU time (the child's user + system
for the CLI, this process's for Python) and the elements per second of each, the machine's load
average, and the I/O alone: the CLI's reads and writes of the same files done here (the input read
in 256 KiB pieces, the output's 67 MB written and fsync'ed), timed apart. Both routes run on one
thread. Nothing is asserted, except that the two routes give the same bits.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import ropecheck

SPEC = "layout=half,head_dim=128,base=500000,dtype=f32"
TOKENS, HEADS, HEAD_DIM = 4096, 32, 128


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_cli(binary, x_path, out_path):
    if os.path.exists(out_path):
        os.unlink(out_path)
    command = [binary, "apply", "--spec", SPEC, "--positions", f"0:{TOKENS}", "--input", x_path, "--out", out_path]
    cpu0, wall0 = child_cpu(), time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - wall0, child_cpu() - cpu0


def time_python(x, positions):
    cpu0, wall0 = time.process_time(), time.perf_counter()
    out = ropecheck.apply(x, positions, SPEC)
    return time.perf_counter() - wall0, time.process_time() - cpu0, out


def time_io(x_path, out_path, nbytes):
    """The CLI's file work without the CLI: the input read in 256 KiB pieces, nbytes written in
    256 KiB pieces and fsync'ed (gate/report.h write_atomically_streamed fsyncs before the rename)."""
    wall0 = time.perf_counter()
    fd = os.open(x_path, os.O_RDONLY)
    offset = 0
    while True:
        piece = os.pread(fd, 1 << 18, offset)
        if not piece:
            break
        offset += len(piece)
    os.close(fd)
    read_s = time.perf_counter() - wall0
    block = b"\0" * (1 << 18)
    wall0 = time.perf_counter()
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    written = 0
    while written < nbytes:
        written += os.write(fd, block[: min(len(block), nbytes - written)])
    os.fsync(fd)
    os.close(fd)
    return read_s, time.perf_counter() - wall0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ropecheck", default="build/bin/ropecheck")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(2024)
    x = rng.uniform(-1, 1, (TOKENS, HEADS, HEAD_DIM)).astype(np.float32)
    positions = np.arange(TOKENS)
    elements = x.size
    with tempfile.TemporaryDirectory() as folder:
        x_path, out_path = os.path.join(folder, "x.npy"), os.path.join(folder, "y.npy")
        np.save(x_path, x)
        cli, python, io = [], [], []
        for _ in range(args.runs):  # alternated, so that both see the same state of a shared machine
            cli.append(time_cli(args.ropecheck, x_path, out_path))
            wall, cpu, out = time_python(x, positions)
            python.append((wall, cpu))
            io.append(time_io(x_path, os.path.join(folder, "io.bin"), os.path.getsize(out_path)))
        same = np.array_equal(np.load(out_path).view(np.uint32), out.view(np.uint32))
    print(f"{TOKENS} x {HEADS} x {HEAD_DIM} f32, {SPEC}, {args.runs} runs, medians; "
          f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for name, runs in (("ropecheck apply (.npy -> .npy)", cli), ("ropecheck.apply (Python)", python)):
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"  {name:32s} wall {wall:.3f} s ({elements / wall / 1e6:.1f} M/s)  "
              f"CPU {cpu:.3f} s ({elements / cpu / 1e6:.1f} M/s)")
    print(f"  I/O alone: read of the input {statistics.median(r[0] for r in io):.3f} s, "
          f"write + fsync of the output {statistics.median(r[1] for r in io):.3f} s")
    print(f"  CLI and Python outputs bit-identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
