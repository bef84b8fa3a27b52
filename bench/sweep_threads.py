"""What a second core buys a sweep and a golden run, end to end: `ropecheck sweep --samples 4096`
with --threads 1 against --threads 2 (and 0 = all cores where there are more), for a passing sweep
(the scalar kernel, f64: a marginal pass, so the diagnosis runs too; and f32) and a failing one
(the float32 recipe judged by the exact model: the explanation runs); then `ropecheck run --impl
scalar` over the project's golden suites. Prints the median wall time of each and the 1-thread /
N-thread ratio, measured in one run (the two thread counts' repeats taken in turn); and, beside
them, two --threads 1 runs side by side against one alone: the ceiling 2·alone/side-by-side says
what a second core gives this work on this machine at all (shared caches, memory bandwidth, a
VM's vCPUs), whatever the program does with it. Beside the ratio, where the rest goes (as in
check_ratio.py): the CPU time the N-thread run takes against the one-thread run's, and the share
of the N cores' time it kept busy. bench/README.md keeps the figures.

    /usr/bin/python3 bench/sweep_threads.py [--bin build/bin/ropecheck] [--repeat 3] [--threads 2]
"""
import argparse
import os
import resource
import statistics
import subprocess
import time

SPEC = "layout=half,head_dim=128,base=500000,dtype={dtype}"
CASES = [
    ("passing, scalar kernel, f64", "scalar", "f64", 0),
    ("passing, scalar kernel, f32", "scalar", "f32", 0),
    ("failing, float32 recipe, f32", "reference-f32-recipe", "f32", 1),
]


def children_cpu_seconds():
    """User and system time of the finished children so far (every thread of each)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median_seconds(commands, expected_rc, repeat, side_by_side=None):
    """The median wall time of each command, the repeats taken in turn (one of each, then the next
    round): a drift of the shared machine's load reaches every command alike, not the later one.
    With `side_by_side`, a command run twice at once is one more entry: the wall time until both
    are done (two independent processes, nothing shared but the machine). Then the median CPU time
    of each of `commands` (not of the pair)."""
    runs_of = list(commands) + ([side_by_side] if side_by_side else [])
    times = [[] for _ in runs_of]
    cpu = [[] for _ in commands]
    for _ in range(repeat):
        for k, (command, runs) in enumerate(zip(runs_of, times)):
            start = time.perf_counter()
            if side_by_side and k == len(commands):
                pair = [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
                errors = [p.communicate()[1] for p in pair]  # read while they run: a full pipe would stall them
                runs.append(time.perf_counter() - start)
                failed = [p.returncode for p in pair if p.returncode != expected_rc]
                done = subprocess.CompletedProcess(command, failed[0] if failed else expected_rc, b"", b"".join(errors))
            else:
                cpu_start = children_cpu_seconds()
                done = subprocess.run(command, capture_output=True, check=False)
                runs.append(time.perf_counter() - start)
                cpu[k].append(children_cpu_seconds() - cpu_start)
            if done.returncode != expected_rc:
                raise SystemExit(f"{' '.join(command)}: exit {done.returncode}, expected {expected_rc}\n{done.stderr.decode()}")
    return [statistics.median(runs) for runs in times] + [statistics.median(seconds) for seconds in cpu]


def ceiling(one, two_at_once):
    """What two cores can give this work here: two one-thread runs side by side against one alone
    (2.00 where the second core is as fast as the first and nothing is shared)."""
    return 2 * one / two_at_once


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join("build", "bin", "ropecheck"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--samples", type=int, default=4096)
    args = parser.parse_args()
    threads = args.threads or os.cpu_count() or 1  # --threads 0: one per core
    print(f"| sweep --samples {args.samples}, head_dim 128 | --threads 1 (s) | --threads {args.threads} (s) | ratio | "
          f"CPU time {threads} / 1 | {threads} cores busy | two --threads 1 at once (s) | ceiling |")
    print("|---|---|---|---|---|---|---|---|")

    def row(name, one, many, pair, cpu_one, cpu_many):
        return (f"| {name} | {one:.2f} | {many:.2f} | {one / many:.2f} | {cpu_many / cpu_one:.2f} | "
                f"{cpu_many / (threads * many):.2f} | {pair:.2f} | {ceiling(one, pair):.2f} |")

    for name, impl, dtype, rc in CASES:
        base = [args.bin, "sweep", "--impl", impl, "--spec", SPEC.format(dtype=dtype), "--samples", str(args.samples)]
        print(row(name, *median_seconds([base + ["--threads", "1"], base + ["--threads", str(args.threads)]], rc, args.repeat,
                                        side_by_side=base + ["--threads", "1"])))
    golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "suites")
    base = [args.bin, "run", "--impl", "scalar", "--golden", golden]
    print(row("run --impl scalar, the golden suites",
              *median_seconds([base + ["--threads", "1"], base + ["--threads", str(args.threads)]], 0, args.repeat,
                              side_by_side=base + ["--threads", "1"])))
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
