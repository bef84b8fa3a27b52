#!/usr/bin/python3
"""ctest peers_file_route: the PyTorch and ONNX file-route peers end to end on two small suites.

    file_peers_test.py --ropecheck BIN [--venv-python PYTHON]

Exports half-f32-base10000 and scaling-ntk (fresh temporary folder), runs peers/torch/torch_peer.py
with this interpreter (Debian's /usr/bin/python3 and python3-torch; torch-llama and torch-gptj) and,
when PYTHON (the peers' venv, build/peers/venv/bin/python) exists, peers/onnx/onnx_peer.py with it
(ONNX Runtime and onnx.reference, six implementations; ROPECHECK_BIN=BIN for its correctly rounded
cache), each as scripts/peers does (`PEER INPUTS.npz OUT_DIR`; exit 3 = its library cannot be
imported, the peer is left out with its reason). Every candidate is judged with `ropecheck check
--allow-missing --json`. Checks: the adapters' mapping is sane — position 0 exact (e = 0), e below
1e4 up to position 1000 (a wrong layout, sign or base gives e ~ 1e6-1e7; a float32 angle 1e2-1e3)
— every half-f32 test judged (torch-gptj, layout interleaved, skips them all with its layout reason
instead), the correctly rounded caches (ORT's two ops, onnx.reference) pass the f32 suite
outright, and what a peer cannot express is skipped with its reason (torch-llama: scaling ntk).
Exit 77 (skipped) when neither peer can run."""
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
INTERLEAVED_ONLY = ("torch-gptj",)  # layout interleaved: the half suite is all skipped


def run_peer(name, python, script, inputs, out_dir, env, checks):
    """Runs one file-route peer; True when it wrote its candidates, False when it is left out (exit 3)."""
    proc = subprocess.run([python, os.path.join(HERE, script), inputs, out_dir], capture_output=True, text=True,
                          env=env)
    if proc.returncode == 3:
        reason = proc.stderr.strip().splitlines()[-1:] or ["(no reason)"]
        print(f"{name} left out: {reason[0]}")
        return False
    checks.expect(proc.returncode == 0, f"{name}: {script} exit {proc.returncode}: {proc.stderr[-500:]}")
    if proc.returncode == 0:
        print(f"{name}: {proc.stdout.strip()}")
    return proc.returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ropecheck", required=True)
    parser.add_argument("--venv-python", help="the peers' venv python (build/peers/venv/bin/python): runs the ONNX peer")
    parser.add_argument("--golden", default=os.path.join(HERE, "..", "golden", "suites"))
    args = parser.parse_args()
    checks = testlib.Checks("peers_file_route")
    expect = checks.expect
    with tempfile.TemporaryDirectory() as tmp:
        # TMPDIR: the peers' own temporary files (onnxruntime's import leaves a mat-debug-PID.log there) go too
        env = dict(os.environ, ROPECHECK_BIN=os.path.abspath(args.ropecheck), PYTHONDONTWRITEBYTECODE="1", TMPDIR=tmp)
        golden = os.path.join(tmp, "golden")
        out = os.path.join(tmp, "out")
        os.makedirs(golden)
        for suite in SUITES:
            os.symlink(os.path.abspath(os.path.join(args.golden, suite + ".json")), os.path.join(golden, suite + ".json"))
        inputs = os.path.join(tmp, "inputs.npz")
        subprocess.run([args.ropecheck, "golden", "export", "--golden", golden, "--format", "npz", "--out", inputs],
                       check=True, capture_output=True)
        ran = {"torch": run_peer("torch", sys.executable, os.path.join("torch", "torch_peer.py"), inputs, out, env,
                                 checks)}
        if args.venv_python and os.path.exists(args.venv_python):
            ran["onnx"] = run_peer("onnx", args.venv_python, os.path.join("onnx", "onnx_peer.py"), inputs, out, env,
                                   checks)
        else:
            print(f"onnx left out: no venv python at {args.venv_python} (scripts/peers creates it)")
        if not any(ran.values()) and not checks.failures:
            print("skipped: neither the torch peer (Debian python3-torch) nor the ONNX peer (build/peers/venv) can run")
            return 77
        candidates = sorted(f[: -len(".npz")] for f in os.listdir(out) if f.endswith(".npz")) if os.path.isdir(out) else []
        expected = ({"torch-llama", "torch-gptj"} if ran["torch"] else set()) | (
            {f"{r}-{c}" for r in ("ort-onnx23", "ort-msft", "onnxref") for c in ("crcache", "f32cache")}
            if ran.get("onnx") else set())
        expect(set(candidates) == expected, f"candidates {candidates}, expected {sorted(expected)}")
        for impl in candidates:
            report = os.path.join(tmp, impl + ".json")
            proc = subprocess.run([args.ropecheck, "check", "--golden", golden, "--candidate", os.path.join(out, impl + ".npz"),
                                   "--allow-missing", "--json", report], capture_output=True, text=True)
            expect(proc.returncode in (0, 1), f"{impl}: exit {proc.returncode}: {proc.stderr[-300:]}")
            if proc.returncode not in (0, 1):
                continue
            groups = [g for g in json.load(open(report))["groups"] if g["suite"] == "half-f32-base10000"]
            skipped = json.load(open(os.path.join(out, impl + ".npz.skipped.json")))
            if impl in INTERLEAVED_ONLY:
                half = [reason for test, reason in skipped.items() if test.startswith("half-f32-base10000/")]
                expect(half and groups and all("layout interleaved only" in reason for reason in half)
                       and all(g["tests_skipped"] == g["tests"] for g in groups),
                       f"{impl}: half-f32 not skipped for its layout ({len(half)} reasons: {sorted(set(half))})")
                continue
            expect(groups and all(g["tests_skipped"] == 0 for g in groups), f"{impl}: half-f32 not all judged")
            for g in groups:
                testlib.expect_sane_points(checks, impl, g)
            if impl.endswith("crcache"):
                expect(all(g["verdict"] == "pass" for g in groups), f"{impl}: correctly rounded cache does not pass f32")
        if ran["torch"]:
            skipped = json.load(open(os.path.join(out, "torch-llama.npz.skipped.json")))
            ntk = [reason for test, reason in skipped.items() if test.startswith("scaling-ntk/")]
            expect(len(ntk) == 27 and any("scaling ntk is not a rope_type" in reason for reason in ntk),
                   f"torch-llama: {len(ntk)} scaling-ntk tests skipped (27 expected), reasons {sorted(set(ntk))}")
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
