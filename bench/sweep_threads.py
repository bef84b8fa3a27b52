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
import sys

sys.dont_write_bytecode = True  # run from the source tree: no __pycache__ beside the script
from run_timing import ceiling, medians_in_turn, run_expecting, side_by_side  # noqa: E402 (bench/run_timing.py)

SPEC = "layout=half,head_dim=128,base=500000,dtype={dtype}"
CASES = [
    ("passing, scalar kernel, f64", "scalar", "f64", 0),
    ("passing, scalar kernel, f32", "scalar", "f32", 0),
    ("failing, float32 recipe, f32", "reference-f32-recipe", "f32", 1),
]


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

    def row(name, base, rc):
        one_thread, many_threads = base + ["--threads", "1"], base + ["--threads", str(args.threads)]
        (one, cpu_one), (many, cpu_many), (pair, _) = medians_in_turn(
            [lambda: run_expecting(one_thread, rc), lambda: run_expecting(many_threads, rc),
             lambda: side_by_side(one_thread, rc)], args.repeat)
        return (f"| {name} | {one:.2f} | {many:.2f} | {one / many:.2f} | {cpu_many / cpu_one:.2f} | "
                f"{cpu_many / (threads * many):.2f} | {pair:.2f} | {ceiling(one, pair):.2f} |")

    for name, impl, dtype, rc in CASES:
        base = [args.bin, "sweep", "--impl", impl, "--spec", SPEC.format(dtype=dtype), "--samples", str(args.samples)]
        print(row(name, base, rc))
    golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "suites")
    base = [args.bin, "run", "--impl", "scalar", "--golden", golden]
    print(row("run --impl scalar, the golden suites", base, 0))
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
