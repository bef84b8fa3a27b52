"""How the end-to-end bench scripts (check_ratio.py, sweep_threads.py) time what they run, in one
place: runs taken in turn, one of each per round, so that a drift of a shared machine's load
reaches them alike; the median wall time and CPU time of each; a run held to its exit code; two
runs side by side for the ceiling of what a second core gives.
"""
import resource
import statistics
import subprocess
import time


def cpu_seconds():
    """User and system time of this process and of its finished children so far (every thread)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def medians_in_turn(runs, repeat):
    """The median wall time and the median CPU time (every thread's, the child's where the run is a
    process) of each of `runs`, one of each per round: a drift of the shared machine's load reaches
    them alike."""
    times = [[] for _ in runs]
    for _ in range(repeat):
        for run, seconds in zip(runs, times):
            start, cpu_start = time.perf_counter(), cpu_seconds()
            run()
            seconds.append((time.perf_counter() - start, cpu_seconds() - cpu_start))
    return [(statistics.median(w for w, _ in seconds), statistics.median(c for _, c in seconds)) for seconds in times]


def run_expecting(command, expected_rc):
    """One run of `command`; a run that exits otherwise than `expected_rc` ends the benchmark (a
    run that crashed or refused its input would be timed as a fast one)."""
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode != expected_rc:
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}, expected {expected_rc}\n{done.stderr.decode()}")


def side_by_side(command, expected_rc):
    """Two runs of `command` at once, until both are done: two independent processes, nothing
    shared but the machine. Their exit codes are held to `expected_rc` as run_expecting's."""
    pair = [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
    errors = [p.communicate()[1] for p in pair]  # read while they run: a full pipe would stall them
    for p, error in zip(pair, errors):
        if p.returncode != expected_rc:
            raise SystemExit(f"{' '.join(command)}: exit {p.returncode}, expected {expected_rc}\n{error.decode()}")


def ceiling(one, two_at_once):
    """What two cores can give this work here: two one-thread runs side by side against one alone
    (2.00 where the second core is as fast as the first and nothing is shared)."""
    return 2 * one / two_at_once
