#!/usr/bin/python3
"""ctest peers_fused_driver: peers/fused/run.py's section reads back and `--against` fails on a
changed verdict.

In a fresh temporary folder: a section written from fake rows, inside a RESULTS.md between other
sections, parses back to the same verdicts (the other sections' tables are not read); compared
with the same rows: 0; with one verdict flipped: 1; with a row gone or a new row: 1; with that
implementation not run: 0 (not compared); with only a worst e moved: 0. And the cells read from `fused check`'s text."""
import contextlib
import io
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402

ROWS = {
    ("ort-fused-crcache", "qk-f32", "exact"): ("pass", "q_out 1.2, k_out 0.9", "–", ""),
    ("ort-fused-crcache", "qk-f32", "f32-angle"): ("pass", "q_out 1.1, k_out 0.8", "–", ""),
    ("hf-olmo2", "olmo2-f32", "exact"): ("fail", "q_out 300, k_out 20", "q_out token 3 head 0 dim 1", ""),
    ("hf-olmo2", "olmo2-bf16", "exact"): ("skip", "–", "–", "no bf16 here"),
}


def compare(rows, against, not_run=()):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = run.compare(rows, against, set(not_run))
    return rc, out.getvalue()


def main():
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "RESULTS.md")
        other = "| a | b | c | d | e | f | g |\n|---|---|---|---|---|---|---|\n| ort-fused-crcache | qk-f32 | exact | fail | x | y | |\n"
        with open(path, "w", encoding="utf-8") as f:
            f.write("# top\n\n## Other\n\n" + other + "\n" + run.section(ROWS, ["lib 1.0"], []) + "\n## Table\n\n" + other)
        parsed = run.parse_section(path)
        expect("parsed rows", sorted(parsed), sorted(ROWS))
        expect("parsed verdict", parsed[("hf-olmo2", "olmo2-f32", "exact")]["verdict"], "fail")
        expect("same rows", compare(ROWS, path)[0], 0)
        flipped = dict(ROWS)
        flipped[("hf-olmo2", "olmo2-f32", "exact")] = ("pass", "q_out 0.5, k_out 0.5", "–", "")
        rc, out = compare(flipped, path)
        expect("flipped verdict", rc, 1)
        expect("flipped row named", "hf-olmo2 olmo2-f32 exact: verdict fail -> pass" in out, True)
        expect("flipped, not run", compare(flipped, path, ["hf-olmo2"])[0], 0)
        gone = {k: v for k, v in ROWS.items() if k[2] != "f32-angle"}
        expect("row gone", compare(gone, path)[0], 1)
        added = {**ROWS, ("keras-fused-fp8", "qk-fp8", "exact"): ("pass", "q_out 0.9", "–", "")}
        expect("new row", compare(added, path)[0], 1)
        moved = dict(ROWS)
        moved[("ort-fused-crcache", "qk-f32", "exact")] = ("pass", "q_out 1.3, k_out 0.9", "–", "")
        rc, out = compare(moved, path)
        expect("moved judgement", rc, 0)
        expect("moved named", "moved (not failing)" in out, True)
    text = ("fused: FAIL under model exact\n  q_out: worst e 43.937 (32768 judged, 7164 failed)\n"
            "  k_out: worst e 39.6189 (16384 judged, 3537 failed)\n"
            "first failure: q_out token 1 head 0 dim 4: got 0.529785, expected 0.52949 within 0.000264566 (e 1.11667)\n")
    expect("cells", run.judgement_cells(text),
           ("q_out 43.9, k_out 39.6", "q_out token 1 head 0 dim 4 (e 1.12)"))
    expect("cells of a pass", run.judgement_cells("fused: PASS\n  q_out: worst e 0.5 (8 judged, 0 failed)\n"), ("q_out 0.5", "–"))
    for line in failures:
        print("FAIL", line)
    print(f"{'FAILED' if failures else 'passed'}: run.py section and --against")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
