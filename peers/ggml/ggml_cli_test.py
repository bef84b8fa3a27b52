#!/usr/bin/env python3
"""`ropecheck run --plugin libropecheck_ggml.so` end to end (ctest ggml_cli_unavailable, ggml_cli_report).

    ggml_cli_test.py unavailable --ropecheck BIN --plugin LIB --golden SUITE
        without ROPECHECK_GGML_DIR the run completes (no crash), every test fails with the plugin's
        "implementation unavailable" status, exit 1 (gate/README.md: any error status fails a test)
    ggml_cli_test.py report --ropecheck BIN --plugin LIB --golden SUITE --ggml-dir DIR
        with the libraries (ROPECHECK_GGML_DIR, else DIR; exit 77 = skipped when absent), for
        ggml-best and ggml-x64: a JSON report naming the variant, every test judged, and the
        adapter's mapping sane: position 0 exact (e = 0), e below 1e4 up to position 1000 (a wrong
        layout, base or sign gives e ~ 1e6-1e7 there; ggml's own float32 angle gives ~1e2-1e3).
Writes only into a fresh temporary folder.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(args, env, impl, workdir):
    report = os.path.join(workdir, f"{impl}.json")
    cmd = [args.ropecheck, "run", "--plugin", args.plugin, "--impl", impl, "--golden", args.golden, "--json", report]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    return proc, report


def check(condition, message, failures):
    if not condition:
        failures.append(message)
        print("FAILED:", message)


def unavailable(args, failures):
    env = {k: v for k, v in os.environ.items() if k != "ROPECHECK_GGML_DIR"}
    with tempfile.TemporaryDirectory() as tmp:
        proc, report = run(args, env, "ggml-best", tmp)
        check(proc.returncode == 1, f"exit {proc.returncode}, expected 1", failures)
        check("ROPECHECK_GGML_DIR is not set" in proc.stderr, "no reason on stderr", failures)
        check("implementation unavailable" in proc.stdout, "no 'implementation unavailable' in the table", failures)
        data = json.load(open(report))
        summary = [(g["tests"], g["tests_failed"]) for g in data["groups"]]
        check(all(t > 0 and t == f for t, f in summary), f"not every test failed: {summary}", failures)


def report(args, failures):
    ggml_dir = os.environ.get("ROPECHECK_GGML_DIR") or args.ggml_dir
    if not ggml_dir or not os.path.exists(os.path.join(ggml_dir, "libggml-base.so")):
        print(f"skipped: no ggml libraries in {ggml_dir!r} (scripts/peers installs them)")
        return 77
    env = dict(os.environ, ROPECHECK_GGML_DIR=ggml_dir)
    with tempfile.TemporaryDirectory() as tmp:
        for impl in ("ggml-best", "ggml-x64"):
            proc, path = run(args, env, impl, tmp)
            check(proc.returncode in (0, 1), f"{impl}: exit {proc.returncode}: {proc.stderr[-500:]}", failures)
            if not os.path.exists(path):
                check(False, f"{impl}: no report", failures)
                continue
            data = json.load(open(path))
            check("ggml-" in data["implementation"] and "ggml-best" not in data["implementation"],
                  f"{impl}: report names {data['implementation']!r}, not the variant that ran", failures)
            for g in data["groups"]:
                name = f"{impl} {g['suite']}#{g['group']}"
                check(g["tests"] > 0 and g["tests_skipped"] == 0, f"{name}: tests not all judged", failures)
                for position, e, _ in g["points"]:
                    if position == 0:
                        check(e == 0, f"{name}: e = {e} at position 0", failures)
                    elif position <= 1000:
                        check(e < 1e4, f"{name}: e = {e} at position {position}", failures)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["unavailable", "report"])
    parser.add_argument("--ropecheck", required=True)
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--golden", required=True)
    parser.add_argument("--ggml-dir")
    args = parser.parse_args()
    failures = []
    status = unavailable(args, failures) if args.mode == "unavailable" else report(args, failures)
    if status == 77:
        return 77
    print(f"{args.mode}: {len(failures)} failed checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
