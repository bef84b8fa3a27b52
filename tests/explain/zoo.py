"""The bug zoo's runner: every case and control judged by ropecheck and by two common rules.

    PYTHONPATH=build/python /usr/bin/python3 tests/explain/zoo.py [--json rows.json] [--only NAME ...]

For each entry: inputs are drawn (standard normal, fixed seed, rounded to the dtype; positions
0..4095 and 64 sorted samples up to the model's context, or 0..context-1 for a shorter context;
(t, h, w) triples for M-RoPE), the candidate runs, and its outputs are judged by

- ropecheck.check(out, x, positions, spec, model="f32-angle") (a raising candidate:
  ropecheck.judge_callable(fn, spec, model="f32-angle", max_position=context-1, samples=64,
  as_torch=True)), with the verdict and the explanation;
- torch.testing.assert_close(out, ref64.to(dtype)) with its default tolerances, ref64 being the
  exact rotation in float64 (ropecheck.apply with dtype=f64);
- llama.cpp test-backend-ops' rule NMSE = sum((out - ref)^2) / sum(ref^2) <= 1e-7.

A markdown table and the totals are printed. Exit status 1 when a bug is not caught or not named
(explanation_kind == expect_kind and expect_text in the explanation), or a control fails or gets an
explanation; 0 otherwise.
"""
import argparse
import json
import os
import sys
import time
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import ropecheck  # noqa: E402

from cases import CASES  # noqa: E402
from controls import CONTROLS  # noqa: E402

TORCH_DTYPES = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
NMSE_LIMIT = 1e-7
SAMPLES = 64
EXACT_PREFIX = 4096


def spec_items(spec):
    return [item.split("=", 1) for item in spec.split(",")]


def f64_spec(spec):
    """The spec with dtype=f64 (and no input_dtype): the float64 reference's."""
    return ",".join(f"{k}={'f64' if k == 'dtype' else v}" for k, v in spec_items(spec) if k != "input_dtype")


def draw_inputs(entry):
    """(x, positions) of an entry: deterministic from its name."""
    spec = ropecheck.Spec(entry.spec)
    seed = zlib.crc32(entry.name.encode())
    rng = np.random.default_rng(seed)
    ctx = entry.context
    base = np.arange(min(ctx, EXACT_PREFIX), dtype=np.int64)
    if ctx > EXACT_PREFIX:
        extra = np.sort(rng.choice(np.arange(EXACT_PREFIX, ctx, dtype=np.int64), size=SAMPLES, replace=False))
        base = np.concatenate([base, extra])
    positions = torch.from_numpy(base)
    if spec.position_components == 3:  # M-RoPE: (t, h, w), an image-like grid per token
        i = torch.arange(len(positions))
        positions = torch.stack((positions, positions + (i // 32) % 32, positions + i % 32), 1)
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(len(base), entry.heads, spec.head_dim, generator=generator, dtype=torch.float64)
    return x.to(TORCH_DTYPES[spec.input_dtype]), positions


def reference(x, positions, spec):
    return torch.from_numpy(np.asarray(ropecheck.apply(x.double(), positions, f64_spec(spec)), dtype=np.float64))


def common_rules(out, ref, dtype):
    """(assert_close passed, NMSE) of outputs against the float64 reference."""
    try:
        torch.testing.assert_close(out, ref.to(dtype))
        close = True
    except AssertionError:
        close = False
    diff = out.double() - ref
    nmse = float((diff * diff).sum() / (ref * ref).sum())
    return close, nmse


def judge(entry, is_case):
    """One row: the verdicts of ropecheck, assert_close and NMSE for an entry."""
    spec = entry.spec
    dtype = TORCH_DTYPES[entry.dtype]
    x, positions = draw_inputs(entry)
    ref = reference(x, positions, spec)
    row = {"name": entry.name, "kind": "bug" if is_case else "control",
           "class": entry.bug_class if is_case else f"control ({entry.style})", "spec": spec}
    started = time.time()
    raised = None
    try:
        out = entry.candidate(x, positions)
        out = out.to(dtype)
    except Exception as error:  # a candidate may raise (the raised class)
        raised = f"{type(error).__name__}: {error}"
        out = None
    if getattr(entry, "raises", False):
        def fn(xs, ps):
            return entry.candidate(xs, ps)
        fn.__name__ = fn.__qualname__ = entry.name
        result = ropecheck.judge_callable(fn, spec, model="f32-angle", max_position=entry.context - 1, samples=SAMPLES,
                                          as_torch=True)
    elif out is None:
        row.update(passed=False, explanation="", explanation_kind="", raised=raised)
        result = None
    else:
        result = ropecheck.check(out, x, positions, spec, model="f32-angle")
    if result is not None:
        row.update(passed=bool(result.passed), explanation=getattr(result, "explanation", "") or "",
                   explanation_kind=getattr(result, "explanation_kind", "") or "")
    row["seconds"] = round(time.time() - started, 2)
    if out is None:
        row.update(assert_close=False, nmse=None, nmse_ok=False, raised=raised)
    else:
        close, nmse = common_rules(out, ref, dtype)
        row.update(assert_close=close, nmse=nmse, nmse_ok=nmse <= NMSE_LIMIT)
    if is_case:
        row.update(report=entry.report, expect_kind=entry.expect_kind, expect_text=entry.expect_text)
        row["caught"] = not row["passed"]
        row["named"] = (row["caught"] and row["explanation_kind"] == entry.expect_kind
                        and entry.expect_text in row["explanation"])
        row["ok"] = row["caught"] and row["named"]
    else:
        row["ok"] = row["passed"] and row["explanation"] == ""
    return row


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(rows):
    lines = ["| name | class | ropecheck | explanation | named | assert_close | NMSE |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = "pass" if r["passed"] else "FAIL"
        explanation = r["explanation"][:100] + ("..." if len(r["explanation"]) > 100 else "")
        if r["kind"] == "bug":
            named = "yes" if r["named"] else "NO"
        else:
            named = "-" if not r["explanation"] else "NAMED (false alarm)"
        close = "raised" if r.get("raised") else ("pass" if r["assert_close"] else "FAIL")
        nmse = "raised" if r.get("raised") else f"{r['nmse']:.1e} {'pass' if r['nmse_ok'] else 'FAIL'}"
        lines.append(f"| {cell(r['name'])} | {cell(r['class'])} | {verdict} | {cell(explanation)} | {named} | "
                     f"{close} | {nmse} |")
    return "\n".join(lines)


def totals(rows):
    bugs = [r for r in rows if r["kind"] == "bug"]
    controls = [r for r in rows if r["kind"] == "control"]
    n, m = len(bugs), len(controls)
    lines = [
        "",
        f"bugs: {n}, controls: {m}",
        "| rule | bugs caught | bugs named | controls passing (false alarms) |",
        "|---|---|---|---|",
        f"| ropecheck (f32-angle) | {sum(r['caught'] for r in bugs)}/{n} | {sum(r['named'] for r in bugs)}/{n} | "
        f"{sum(r['ok'] for r in controls)}/{m} ({m - sum(r['ok'] for r in controls)}) |",
        f"| assert_close (defaults) | {sum(not r['assert_close'] for r in bugs)}/{n} | - | "
        f"{sum(r['assert_close'] for r in controls)}/{m} ({m - sum(r['assert_close'] for r in controls)}) |",
        f"| NMSE <= 1e-7 | {sum(not r['nmse_ok'] for r in bugs)}/{n} | - | "
        f"{sum(r['nmse_ok'] for r in controls)}/{m} ({m - sum(r['nmse_ok'] for r in controls)}) |",
    ]
    return "\n".join(lines)


def entries(only=None):
    out = [(c, True) for c in CASES] + [(c, False) for c in CONTROLS]
    if only:
        out = [(e, k) for e, k in out if e.name in only]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    parser.add_argument("--only", nargs="*", metavar="NAME", help="judge only these cases or controls")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    selected = entries(args.only)
    if not selected:
        print(f"--only: no case or control named {args.only}", file=sys.stderr)
        return 2
    rows = []
    for entry, is_case in selected:
        rows.append(judge(entry, is_case))
    print(table(rows))
    print(totals(rows))
    bad = [r["name"] for r in rows if not r["ok"]]
    if bad:
        print("\nnot as expected: " + ", ".join(bad))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
