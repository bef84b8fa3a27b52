#!/usr/bin/python3
"""ctest peers_file_route: the PyTorch and ONNX Runtime adapters end to end on two small suites.

    file_peers_test.py --ropecheck BIN --ort DIR

Exports half-f32-base10000 and scaling-ntk (fresh temporary folder), runs peers/torch/hf_rope.py
(recipe llama) and peers/onnx/ort_rope.py, and judges every candidate with `ropecheck check
--allow-missing --json`. Checks: the adapters' mapping is sane — position 0 exact (e = 0), e below
1e4 up to position 1000 (a wrong layout, sign or base gives e ~ 1e6-1e7; a float32 angle 1e2-1e3)
— ORT with the correctly rounded cache passes the f32 suite outright, and what a peer cannot
express is skipped with its reason (torch: scaling ntk). A peer whose package is absent is left
out; exit 77 (skipped) when both are."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import testlib  # noqa: E402

SUITES = ("half-f32-base10000", "scaling-ntk")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ropecheck", required=True)
    parser.add_argument("--ort", required=True)
    parser.add_argument("--golden", default=os.path.join(HERE, "..", "golden", "suites"))
    args = parser.parse_args()
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    have_ort = have_torch and os.path.exists(os.path.join(args.ort, "package.json"))
    if not have_torch:
        print("skipped: python3-torch is not installed (scripts/peers installs it)")
        return 77
    checks = testlib.Checks("peers_file_route")
    expect = checks.expect
    with tempfile.TemporaryDirectory() as tmp:
        golden = os.path.join(tmp, "golden")
        os.makedirs(golden)
        for suite in SUITES:
            os.symlink(os.path.abspath(os.path.join(args.golden, suite + ".json")), os.path.join(golden, suite + ".json"))
        inputs = os.path.join(tmp, "inputs.npz")
        subprocess.run([args.ropecheck, "golden", "export", "--golden", golden, "--format", "npz", "--out", inputs],
                       check=True, capture_output=True)
        subprocess.run([sys.executable, os.path.join(HERE, "torch", "hf_rope.py"), "--recipe", "llama", inputs,
                        os.path.join(tmp, "torch-llama.npz")], check=True, capture_output=True)
        if have_ort:
            subprocess.run([sys.executable, os.path.join(HERE, "onnx", "ort_rope.py"), "--ropecheck", args.ropecheck,
                            "--ort", args.ort, inputs, tmp], check=True, capture_output=True)
        else:
            print(f"ONNX Runtime left out: no package in {args.ort}")
        for candidate in sorted(f for f in os.listdir(tmp) if f.endswith(".npz") and f != "inputs.npz"):
            impl = candidate[: -len(".npz")]
            report = os.path.join(tmp, impl + ".json")
            proc = subprocess.run([args.ropecheck, "check", "--golden", golden, "--candidate", os.path.join(tmp, candidate),
                                   "--allow-missing", "--json", report], capture_output=True, text=True)
            expect(proc.returncode in (0, 1), f"{impl}: exit {proc.returncode}: {proc.stderr[-300:]}")
            groups = [g for g in json.load(open(report))["groups"] if g["suite"] == "half-f32-base10000"]
            expect(groups and all(g["tests_skipped"] == 0 for g in groups), f"{impl}: half-f32 not all judged")
            for g in groups:
                testlib.expect_sane_points(checks, impl, g)
            if impl.endswith("crcache"):
                expect(all(g["verdict"] == "pass" for g in groups), f"{impl}: correctly rounded cache does not pass f32")
        skipped = json.load(open(os.path.join(tmp, "torch-llama.npz.skipped.json")))
        ntk = [reason for test, reason in skipped.items() if test.startswith("scaling-ntk/")]
        expect(len(ntk) == 27 and any("scaling ntk is not a rope_type" in reason for reason in ntk),
               f"torch: {len(ntk)} scaling-ntk tests skipped (27 expected), reasons {sorted(set(ntk))}")
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
