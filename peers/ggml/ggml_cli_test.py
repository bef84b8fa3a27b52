#!/usr/bin/env python3
"""`ropecheck run --plugin libropecheck_ggml.so` end to end (ctest ggml_cli_unavailable, ggml_cli_report).

    ggml_cli_test.py unavailable --ropecheck BIN --plugin LIB --golden SUITE
        without ROPECHECK_GGML_DIR the plugin says the implementation does not run here
        (ropecheck_kernel_available): one line naming it and the plugin's reason, exit 2, as for a
        project kernel this machine cannot run (runner/registry.h); no crash, no report
    ggml_cli_test.py report --ropecheck BIN --plugin LIB --golden SUITE --ggml-dir DIR
        with the libraries (ROPECHECK_GGML_DIR, else DIR; exit 77 = skipped when absent), for
        ggml-best (and ggml-x64 where its library is in DIR): a JSON report naming the variant, every
        test judged, and the adapter's mapping sane: position 0 exact (e = 0), e below 1e4 up to
        position 1000 (a wrong layout, base or sign gives e ~ 1e6-1e7 there; ggml's own float32
        angle gives ~1e2-1e3).
Writes only into a fresh temporary folder.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402


def run(args, env, impl, workdir):
    report = os.path.join(workdir, f"{impl}.json")
    cmd = [args.ropecheck, "run", "--plugin", args.plugin, "--impl", impl, "--golden", args.golden, "--json", report]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    return proc, report


def unavailable(args, checks):
    env = {k: v for k, v in os.environ.items() if k != "ROPECHECK_GGML_DIR"}
    with tempfile.TemporaryDirectory() as tmp:
        proc, report = run(args, env, "ggml-best", tmp)
        checks.expect(proc.returncode == 2, f"exit {proc.returncode}, expected 2")
        checks.expect("ROPECHECK_GGML_DIR is not set" in proc.stderr, "no reason on stderr")
        checks.expect("not available on this machine" in proc.stderr, "no 'not available on this machine' on stderr")
        checks.expect(not os.path.exists(report), "a report was written")


def report(args, checks):
    ggml_dir = os.environ.get("ROPECHECK_GGML_DIR") or args.ggml_dir
    if not ggml_dir or not os.path.exists(os.path.join(ggml_dir, "libggml-base.so")):
        print(f"skipped: no ggml libraries in {ggml_dir!r} (peers/ggml/build_ggml.sh builds them)")
        return 77
    env = dict(os.environ, ROPECHECK_GGML_DIR=ggml_dir)
    with tempfile.TemporaryDirectory() as tmp:
        # build_ggml.sh's folders hold one variant each: ggml-x64 only in the no-FMA one
        impls = ["ggml-best"] + (["ggml-x64"] if os.path.exists(os.path.join(ggml_dir, "libggml-cpu-x64.so")) else [])
        for impl in impls:
            proc, path = run(args, env, impl, tmp)
            checks.expect(proc.returncode in (0, 1), f"{impl}: exit {proc.returncode}: {proc.stderr[-500:]}")
            if not os.path.exists(path):
                checks.expect(False, f"{impl}: no report")
                continue
            data = json.load(open(path))
            checks.expect("ggml-" in data["implementation"] and "ggml-best" not in data["implementation"],
                          f"{impl}: report names {data['implementation']!r}, not the variant that ran")
            for g in data["groups"]:
                name = f"{impl} {g['suite']}#{g['group']}"
                checks.expect(g["tests"] > 0 and g["tests_skipped"] == 0, f"{name}: tests not all judged")
                testlib.expect_sane_points(checks, name, g)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["unavailable", "report"])
    parser.add_argument("--ropecheck", required=True)
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--golden", required=True)
    parser.add_argument("--ggml-dir")
    args = parser.parse_args()
    checks = testlib.Checks(f"ggml_cli {args.mode}")
    status = unavailable(args, checks) if args.mode == "unavailable" else report(args, checks)
    return 77 if status == 77 else checks.status()


if __name__ == "__main__":
    sys.exit(main())
