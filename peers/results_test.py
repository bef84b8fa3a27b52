#!/usr/bin/python3
"""ctest peers_results: peers/results.py writes the table and `check` fails on a changed verdict.

Builds small fake reports (gate/schema/report.schema.json fields that results.py reads) in a fresh
temporary folder: write a table, then check it against the same reports (exit 0), a table with a --section
copied before the table (not compared by check), against reports
where one verdict flipped (exit 1, the row named), with that peer marked not run (exit 0), and
with only a horizon moved (exit 0, reported as moved)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results.py")
sys.path.insert(0, HERE)
import testlib  # noqa: E402


def group(suite, verdict, horizon, points, skipped=()):
    return {"kind": "rope", "suite": suite, "group": 0, "dtype": suite.split("-")[1] if suite.startswith(("half", "inter")) else "f32",
            "verdict": verdict, "tests": 3, "tests_skipped": len(skipped), "skipped_tests": list(skipped),
            "horizon": horizon, "max_position": 2147483647, "points": points}


def write_reports(folder, flip=False, horizon=70):
    os.makedirs(os.path.join(folder, "exact"), exist_ok=True)
    a = {"command": "run", "implementation": "plugin x: ggml-zen4", "groups": [
        group("half-f32-base10000", "fail", horizon, [[0, 0.0, True], [100, 12.5, False], [5000, 9e3, False]]),
        group("scaling-ntk", "skip", None, [], skipped=(1, 2, 3))]}
    b = {"command": "check", "implementation": "candidate", "groups": [
        group("half-f32-base10000", "fail" if flip else "pass", None if flip else 2147483647, [[7, "inf" if flip else 1.5, not flip]]),
        group("scaling-ntk", "skip", None, [], skipped=(1, 2, 3))]}
    json.dump(a, open(os.path.join(folder, "exact", "ggml-best.json"), "w"))
    json.dump(b, open(os.path.join(folder, "exact", "torch-llama.json"), "w"))
    json.dump({"scaling-ntk/1": "no ntk"}, open(os.path.join(folder, "exact", "torch-llama.skipped.json"), "w"))


def run(*args):
    proc = subprocess.run([sys.executable, RESULTS, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def main():
    checks = testlib.Checks("peers_results")
    expect = checks.expect
    with tempfile.TemporaryDirectory() as tmp:
        reports, table = os.path.join(tmp, "reports"), os.path.join(tmp, "RESULTS.md")
        write_reports(reports)
        rc, out = run("write", "--reports", reports, "--out", table)
        expect(rc == 0, f"write: exit {rc}: {out}")
        text = open(table).read()
        expect("| ggml-best | exact | f32 | half | 3/3 | fail | 12.5 | 70 |  |  |" in text, "ggml row:\n" + text)
        expect("| torch-llama | exact | f32 | half | 3/3 | pass | 1.5 | >=2147483647 |" in text, "torch row:\n" + text)
        expect("| torch-llama | exact | f32 | scaling-ntk | 0/3 | skip | – | – |  | 3 skipped: no ntk;" in text, "reasons:\n" + text)
        expect("reported unsupported by the plugin (peers/ggml/README.md)" in text, "plugin reason:\n" + text)
        rc, out = run("check", "--reports", reports, "--against", table)
        expect(rc == 0 and "0 verdicts changed" in out, f"same reports: exit {rc}: {out}")

        section, with_section = os.path.join(tmp, "section.md"), os.path.join(tmp, "RESULTS-section.md")
        with open(section, "w") as f:
            f.write("## Model types\n\n| model type | verdict |\n|---|---|\n| llama | pass |\n")
        rc, out = run("write", "--reports", reports, "--out", with_section, "--section", section)
        text = open(with_section).read() if rc == 0 else ""
        expect(rc == 0 and "## Model types\n\n| model type | verdict |\n|---|---|\n| llama | pass |\n\n## Table" in text,
               f"section before the table: exit {rc}: {out}\n{text}")
        rc, out = run("check", "--reports", reports, "--against", with_section)
        expect(rc == 0 and "0 verdicts changed" in out, f"a section is not a verdict row: exit {rc}: {out}")

        write_reports(reports, flip=True)
        rc, out = run("check", "--reports", reports, "--against", table)
        expect(rc == 1 and "CHANGED: torch-llama exact f32 half: verdict pass -> fail" in out, f"flipped: exit {rc}: {out}")
        rc, out = run("check", "--reports", reports, "--against", table, "--not-run", "torch=package missing")
        expect(rc == 0 and "torch not run" in out, f"flipped, torch not run: exit {rc}: {out}")

        write_reports(reports, horizon=90)
        rc, out = run("check", "--reports", reports, "--against", table)
        expect(rc == 0 and "moved (not failing): ggml-best exact f32 half: horizon 70 -> 90" in out, f"moved: exit {rc}: {out}")
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
