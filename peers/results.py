#!/usr/bin/python3
"""Builds peers/RESULTS.md from `ropecheck check/run --json` reports, and compares a fresh table
with the checked-in one (scripts/peers drives it; peers/README.md "RESULTS.md").

    results.py write --reports DIR --out RESULTS.md [--not-run PEER=REASON ...] [--header LINE ...] [--section FILE ...]
    results.py check --reports DIR --against RESULTS.md [--not-run PEER=REASON ...]

PEER names the implementations of a peer that could not run: a prefix ("ggml" covers ggml-fma,
ggml-nofma) or several, comma-separated ("ort,onnxref").

DIR holds MODEL/IMPL.json (gate/schema/report.schema.json) and, for file-route peers,
MODEL/IMPL.skipped.json ({"SUITE/ID": reason}). Rows: implementation × model × dtype × spec family
(the suite name without its dtype and base: "half", "interleaved", "scaling-yarn", ...), with
- verdict: fail if any group failed, pass if every judged group passed, skip if nothing was judged;
- worst e below position 4096 (judged pairs of the family at positions < 4096);
- horizon: the smallest horizon of a failing group ("none" when a smallest tested position fails),
  else ">=N" with N the smallest largest-tested-position of the family's groups;
- diagnosis: the gate's diagnosis of the family's failing (else marginal) groups (judge/diagnosis.h):
  the line most of them give first (the mistake that reproduces the outputs, or the angle).
--section FILE: a Markdown section written by another check (peers/transformers/model_types_test.py
--markdown), copied as it is after the summaries, before the table; `check` does not compare it.
`check` exits 1 when a verdict differs from the checked-in table for an implementation that ran
(an implementation not run is named, not compared), 0 otherwise; other columns that moved are
listed without failing.
"""
import argparse
import glob
import json
import math
import os
import re
import sys

DTYPES = ("f32", "f16", "bf16", "f64")
SMALL = 4096  # "worst e below position 4096"


def family(suite):
    """interleaved-f32-base10000 -> interleaved; scaling-yarn -> scaling-yarn."""
    return re.sub(r"-(f64|f32|f16|bf16)(-base\d+)?$", "", suite)


def fmt(e):
    if e is None:
        return "–"
    if math.isnan(e) or math.isinf(e):
        return str(e)
    return f"{e:.3g}" if e < 1e4 else f"{e:.2e}"


def worst(values):
    """Largest metric; nan (a pair the metric cannot measure) wins, then inf."""
    if not values:
        return None
    return math.nan if any(math.isnan(v) for v in values) else max(values)


def load_rows(reports_dir):
    """{(impl, model, dtype, family): row dict} from every MODEL/IMPL.json."""
    rows = {}
    for path in sorted(glob.glob(os.path.join(reports_dir, "*", "*.json"))):
        if path.endswith(".skipped.json"):
            continue
        model = os.path.basename(os.path.dirname(path))
        impl = os.path.basename(path)[: -len(".json")]
        report = json.load(open(path))
        # a plugin says only "unsupported"; the file-route peers give their reason
        reasons, unsupported = {}, "reported unsupported by the implementation"
        if report["command"] == "run":
            unsupported = f"reported unsupported by the plugin (peers/{impl.split('-')[0]}/README.md)"
        skipped_path = path[: -len(".json")] + ".skipped.json"
        if os.path.exists(skipped_path):
            reasons = json.load(open(skipped_path))
        for g in report["groups"]:
            if g["kind"] != "rope":
                continue  # attention suites: no peer computes attention
            key = (impl, model, g["dtype"], family(g["suite"]))
            row = rows.setdefault(key, {"groups": [], "reasons": set(), "resolved": report["implementation"]})
            row["groups"].append(g)
            for test in g["skipped_tests"]:  # {"id": N, "reason": ...} (an id alone in older reports)
                reason = reasons.get(f"{g['suite']}/{test['id'] if isinstance(test, dict) else test}")
                row["reasons"].add(reason if reason else unsupported)
    return {key: summarize(row) for key, row in rows.items()}


def summarize(row):
    groups = row["groups"]
    tests = sum(g["tests"] for g in groups)
    skipped = sum(g["tests_skipped"] for g in groups)
    judged = [g for g in groups if g["verdict"] != "skip"]
    failing = [g for g in judged if g["verdict"] == "fail"]
    verdict = "skip" if not judged else ("fail" if failing else "pass")
    small = [float(e) for g in judged for position, e, _ in g["points"] if 0 <= position < SMALL and e is not None]
    if not judged:
        horizon = "–"
    elif failing:
        values = [g["horizon"] for g in failing]
        horizon = "none" if any(v is None for v in values) else str(min(values))
    else:
        horizon = ">=" + str(min(g["max_position"] for g in judged))
    diagnosed = [g["diagnosis"]["lines"][0] for g in (failing or judged) if g.get("diagnosis") and g["diagnosis"]["lines"]]
    # the line most groups give (shortened: the table is read in a terminal and on GitHub)
    diagnosis = max(sorted(set(diagnosed)), key=diagnosed.count) if diagnosed else ""
    if len(diagnosis) > 140:
        diagnosis = diagnosis[:137] + "..."
    note = ""
    if skipped:
        reasons = sorted(row["reasons"])
        note = f"{skipped} skipped: " + "; ".join(reasons[:2]) + (" …" if len(reasons) > 2 else "")
    return {"tests": f"{tests - skipped}/{tests}", "verdict": verdict, "worst_small": fmt(worst(small)),
            "horizon": horizon, "diagnosis": diagnosis.replace("|", "/"), "note": note.replace("|", "/")}


COLUMNS = ("implementation", "model", "dtype", "family", "judged/tests", "verdict", "worst e (pos < 4096)", "horizon",
           "diagnosis", "note")


def cells(key, row):
    impl, model, dtype, fam = key
    return (impl, model, dtype, fam, row["tests"], row["verdict"], row["worst_small"], row["horizon"], row["diagnosis"],
            row["note"])


def table_line(key, row):
    return "| " + " | ".join(cells(key, row)) + " |"


def summary_matrix(rows, model):
    impls = sorted({k[0] for k in rows if k[1] == model}, key=impl_order)
    fams = sorted({k[3] for k in rows if k[1] == model})
    mark = {"pass": "✓", "fail": "✗", "skip": "·"}
    lines = ["| family | " + " | ".join(impls) + " |", "|---|" + "---|" * len(impls)]
    for fam in fams:
        line = []
        for impl in impls:
            parts = [f"{d} {mark[rows[(impl, model, d, fam)]['verdict']]}" for d in DTYPES
                     if (impl, model, d, fam) in rows and rows[(impl, model, d, fam)]["verdict"] != "skip"]
            line.append(" ".join(parts) or mark["skip"])
        lines.append(f"| {fam} | " + " | ".join(line) + " |")
    return lines


def impl_order(impl):
    order = ("ggml", "torch", "ort", "onnxref")
    return (next((i for i, p in enumerate(order) if impl.startswith(p)), len(order)), impl)


def sort_key(key):
    impl, model, dtype, fam = key
    return (impl_order(impl), model, fam, DTYPES.index(dtype) if dtype in DTYPES else 9)


def write(args):
    rows = load_rows(args.reports)
    models = sorted({k[1] for k in rows})
    out = ["# Real RoPE implementations gated by ropecheck", "",
           "Generated by `scripts/peers` (peers/results.py); do not edit by hand. What each peer is and what it",
           "cannot express: peers/README.md. Verdicts use the default bound of each model (gate/README.md).", ""]
    out += [line for line in args.header] + ([""] if args.header else [])
    for item in args.not_run:
        peer, _, reason = item.partition("=")
        out.append(f"- not run: {', '.join(p + '-*' for p in prefixes(peer))}: {reason}")
    if args.not_run:
        out.append("")
    for model in models:
        out += [f"## Summary, model `{model}` (per judged dtype: ✓ pass, ✗ fail; · nothing judged)", ""]
        out += summary_matrix(rows, model) + [""]
    for path in args.section:
        with open(path, encoding="utf-8") as f:
            out += [f.read().rstrip("\n"), ""]
    out += ["## Table", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    out += [table_line(key, rows[key]) for key in sorted(rows, key=sort_key)]
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {args.out}: {len(rows)} rows")
    return 0


def prefixes(peer):
    """--not-run's PEER: "ggml" covers ggml-fma, ggml-nofma; "ort,onnxref" covers ort-*, onnxref-*."""
    return [p for p in peer.split(",") if p]


def parse_table(path):
    """{(impl, model, dtype, family): {column: cell}} from a RESULTS.md table."""
    rows = {}
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == len(COLUMNS) and cells[0] not in ("implementation",) and not cells[0].startswith("---"):
            rows[tuple(cells[:4])] = dict(zip(COLUMNS, cells))
    return rows


def check(args):
    fresh = {k: dict(zip(COLUMNS, cells(k, v))) for k, v in load_rows(args.reports).items()}
    old = parse_table(args.against)
    not_run = {peer for item in args.not_run for peer in prefixes(item.split("=", 1)[0])}

    def skipped_peer(impl):
        return any(impl == peer or impl.startswith(peer + "-") for peer in not_run)

    changed, moved = [], []
    for key in sorted(set(old) | set(fresh), key=sort_key):
        if skipped_peer(key[0]):
            continue
        a, b = old.get(key), fresh.get(key)
        if a is None or b is None:
            changed.append(f"{' '.join(key)}: {'new row' if a is None else 'row gone'}"
                           f" ({(b or a)['verdict']})")
        elif a["verdict"] != b["verdict"]:
            changed.append(f"{' '.join(key)}: verdict {a['verdict']} -> {b['verdict']}")
        else:
            for column in ("judged/tests", "worst e (pos < 4096)", "horizon"):
                if a[column] != b[column]:
                    moved.append(f"{' '.join(key)}: {column} {a[column]} -> {b[column]}")
    for peer in sorted(not_run):
        print(f"peers check: {peer} not run, its rows not compared")
    for line in moved:
        print(f"peers check: moved (not failing): {line}")
    for line in changed:
        print(f"peers check: CHANGED: {line}")
    print(f"peers check: {len(changed)} verdicts changed, {len(moved)} other cells moved, "
          f"{len([k for k in fresh if not skipped_peer(k[0])])} rows compared")
    return 1 if changed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["write", "check"])
    parser.add_argument("--reports", required=True)
    parser.add_argument("--out")
    parser.add_argument("--against")
    parser.add_argument("--not-run", action="append", default=[], help="PEER=REASON (a peer that could not run; PEER: its implementations' prefix(es), comma-separated)")
    parser.add_argument("--header", action="append", default=[], help="a line for the top of RESULTS.md")
    parser.add_argument("--section", action="append", default=[], help="a Markdown file copied before the table (write)")
    args = parser.parse_args()
    if args.mode == "write":
        if not args.out:
            parser.error("write needs --out")
        return write(args)
    if not args.against:
        parser.error("check needs --against")
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
