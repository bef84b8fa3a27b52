"""Gates the fused peers (norm -> RoPE -> FP8; peers/fused/README.md) with `ropecheck fused` and
writes their RESULTS.md section; scripts/peers runs it in build/peers/venv:

    run.py --ropecheck BIN --work DIR --out SECTION.md [--ggml NAME=DIR ...] [--against RESULTS.md] [--skip PEER ...]

For every row of RUNS (implementation, spec) it makes the inputs with `ropecheck fused inputs --spec
S --tokens TOKENS --seed SEED -o in.npz` (token t then moved to position t·POSITION_STEP), runs the implementation on them (its module's
IMPLEMENTATIONS[name](spec, inputs, ropecheck, workdir) -> outputs), writes out.npz and judges it
under every model of MODELS with `ropecheck fused check --spec S --model M in.npz out.npz` (exit 0
pass, 1 fail; anything else is an error: exit 2). A module that cannot be imported is not run (its
rows say why and --against leaves them alone); a spec its library cannot express is a "skip" row
with the reason.

--against: compares the fresh verdicts with the section of the checked-in RESULTS.md: exit 1 when
a verdict changed or a row appeared or went away (rows of peers not run are not compared); other
cells that moved are printed without failing.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fusedlib  # noqa: E402

# Verdict models (judge/README.md), as for the RoPE table (scripts/peers MODELS).
MODELS = ("exact", "f32-angle")
TOKENS, SEED = 64, 52
# `fused inputs` gives positions 0 .. TOKENS-1; the peers are judged at token t's position
# t·POSITION_STEP instead (0 .. 32256), the context lengths these models run at, where an angle
# computed in float32 is off by more than the exact model's bound (the RoPE table's horizons).
POSITION_STEP = 512
# The specs the peers are judged on: a LLaMA-shaped attention (head_dim 128, base 10^4, 4 q heads
# sharing 2 k heads, q/k RMSNorm before RoPE as Qwen3 and OLMo-2 do), OLMo-2's base 5·10^5 with one
# head (its norm spans all heads), a head_dim-64 one, and the FP8 E4M3 per-token form of the first.
_QK = "norm=before,eps=1e-6"
SPECS = {
    "qk-f32": f"layout=half,head_dim=128,base=10000,dtype=f32,{_QK},q_heads=4,k_heads=2",
    "qk-f16": f"layout=half,head_dim=128,base=10000,dtype=f16,{_QK},q_heads=4,k_heads=2",
    "qk-bf16": f"layout=half,head_dim=128,base=10000,dtype=bf16,{_QK},q_heads=4,k_heads=2",
    "qk64-f32": f"layout=half,head_dim=64,base=10000,dtype=f32,{_QK},q_heads=4,k_heads=2",
    "olmo2-f32": f"layout=half,head_dim=128,base=500000,dtype=f32,{_QK},q_heads=1,k_heads=1",
    "olmo2-bf16": f"layout=half,head_dim=128,base=500000,dtype=bf16,{_QK},q_heads=1,k_heads=1",
    "qk-fp8": f"layout=half,head_dim=128,base=10000,dtype=f32,{_QK},fp8=e4m3,scale=per_token,q_heads=4,k_heads=2",
}
# (module, implementation, spec names). The module is the peer (--skip names it without "_fused").
RUNS = [
    ("onnx_fused", impl, ("qk-f32", "qk-f16", "qk-bf16"))
    for impl in ("ort-fused-crcache", "ort-fused-f32cache", "onnxref-fused-crcache", "onnxref-fused-f32cache")
] + [
    ("transformers_fused", "hf-olmo2", ("olmo2-f32", "olmo2-bf16")),
    ("ggml_fused", "ggml-fused-fma", ("qk-f32", "qk64-f32")),
    ("ggml_fused", "ggml-fused-nofma", ("qk-f32", "qk64-f32")),
    ("onnx_fused", "ort-fused-fp8", ("qk-fp8",)),
    ("onnx_fused", "onnxref-fused-fp8", ("qk-fp8",)),
    ("fp8_fused", "ort-fused-fp8-mldtypes", ("qk-fp8",)),
    ("fp8_fused", "keras-fused-fp8", ("qk-fp8",)),
]
COLUMNS = ("implementation", "spec", "model", "verdict", "worst e", "first failure", "note")
TITLE = "## Fused: RMSNorm → RoPE (→ FP8), judged by `ropecheck fused check`"


def run_cli(args, what):
    """ropecheck ARGS -> (exit code, stdout); exit > 1 is an error (this script exits 2)."""
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode > 1:
        print(f"fused peers: {what}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[-500:]}",
              file=sys.stderr)
        sys.exit(2)
    return done.returncode, done.stdout


def load_module(name, ggml_dirs):
    """(module, None) or (None, why it cannot run)."""
    try:
        module = __import__(name)
        if name == "ggml_fused":
            module.configure(ggml_dirs)
        return module, None
    except Exception as why:  # noqa: BLE001 — any failure to load: the peer is not installed
        return None, f"{name}: {str(why).splitlines()[0] if str(why) else type(why).__name__}"


def judgement_cells(text):
    """(worst e per output tensor, the first failing element) from `fused check`'s text: its lines
    "  TENSOR: worst e E (N judged, F failed)" and "first failure: ..." (fused_report_text)."""
    worst, first = [], "–"
    for line in text.splitlines():
        line = line.strip()
        match = re.match(r"(\w+): worst e (\S+) \(", line)
        if match:
            worst.append(f"{match.group(1)} {float(match.group(2)):.3g}")
        elif line.startswith("first failure:"):
            first = line[len("first failure:"):].strip()
            short = re.match(r"([^:]+):.*\(e (\S+)\)$", first)  # the element and its e
            if short:
                first = f"{short.group(1)} (e {float(short.group(2)):.3g})"
    return (", ".join(worst) or "–").replace("|", "/"), first.replace("|", "/")


def spread_positions(path):
    """Rewrites the inputs file with token t at position t·POSITION_STEP (every component)."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    positions = arrays["positions"]
    tokens = positions.shape[0]
    steps = (np.arange(tokens, dtype=np.int64) * POSITION_STEP).reshape((tokens,) + (1,) * (positions.ndim - 1))
    arrays["positions"] = np.broadcast_to(steps, positions.shape).astype(positions.dtype)
    np.savez(path, **arrays)


def gate(args, module, impl, spec_name, rows):
    text = SPECS[spec_name]
    spec = fusedlib.parse_spec(text)
    folder = os.path.join(args.work, impl, spec_name)
    os.makedirs(folder, exist_ok=True)
    inputs_path, outputs_path = os.path.join(folder, "in.npz"), os.path.join(folder, "out.npz")
    run_cli([args.ropecheck, "fused", "inputs", "--spec", text, "--tokens", str(TOKENS), "--seed", str(SEED),
             "-o", inputs_path], f"fused inputs --spec {text}")
    spread_positions(inputs_path)
    try:
        with tempfile.TemporaryDirectory(dir=folder) as workdir:
            outputs = module.IMPLEMENTATIONS[impl](spec, fusedlib.load_inputs(inputs_path, spec), args.ropecheck,
                                                   workdir)
    except fusedlib.Unsupported as why:
        for model in MODELS:
            rows[(impl, spec_name, model)] = ("skip", "–", "–", str(why))
        return
    fusedlib.save_outputs(outputs_path, **outputs)
    for model in MODELS:
        rc, out = run_cli([args.ropecheck, "fused", "check", "--spec", text, "--model", model, inputs_path,
                           outputs_path], f"fused check --spec {text} --model {model} ({impl})")
        with open(os.path.join(folder, f"check-{model}.txt"), "w") as f:
            f.write(out)
        rows[(impl, spec_name, model)] = ("pass" if rc == 0 else "fail", *judgement_cells(out), "")


def section(rows, headers, not_run):
    out = [TITLE, "",
           "Written by `scripts/peers` (peers/fused/run.py); what each peer runs and cannot express: "
           "peers/fused/README.md. Inputs: `ropecheck fused inputs --spec S "
           f"--tokens {TOKENS} --seed {SEED}`, token t at position t·{POSITION_STEP}; verdicts of `ropecheck fused check --spec S --model M` "
           "(fused/README.md).", ""]
    out += [f"- {h}" for h in headers]
    out += [f"- not run: {why}" for why in not_run]
    out += ["", "| spec | text |", "|---|---|"] + [f"| {name} | `{text}` |" for name, text in SPECS.items()]
    out += ["", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for key, cells in rows.items():
        out.append("| " + " | ".join((*key, *cells)) + " |")
    return "\n".join(out) + "\n"


def parse_section(path):
    """{(impl, spec, model): {column: cell}} from the fused section of a RESULTS.md."""
    rows, inside = {}, False
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            inside = line.rstrip("\n") == TITLE
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if inside and len(cells) == len(COLUMNS) and cells[0] != COLUMNS[0] and not cells[0].startswith("---"):
            rows[tuple(cells[:3])] = dict(zip(COLUMNS, cells))
    return rows


def compare(fresh, against, not_run_impls):
    old = parse_section(against)
    fresh = {k: dict(zip(COLUMNS, (*k, *v))) for k, v in fresh.items()}
    changed, moved = [], []
    for key in sorted(set(old) | set(fresh)):
        if key[0] in not_run_impls:
            continue
        a, b = old.get(key), fresh.get(key)
        if a is None or b is None:
            changed.append(f"{' '.join(key)}: {'new row' if a is None else 'row gone'} ({(b or a)['verdict']})")
        elif a["verdict"] != b["verdict"]:
            changed.append(f"{' '.join(key)}: verdict {a['verdict']} -> {b['verdict']}")
        else:
            moved += [f"{' '.join(key)}: {c} {a[c]} -> {b[c]}" for c in ("worst e", "first failure") if a[c] != b[c]]
    for impl in sorted(not_run_impls):
        print(f"fused peers check: {impl} not run, its rows not compared")
    for line in moved:
        print(f"fused peers check: moved (not failing): {line}")
    for line in changed:
        print(f"fused peers check: CHANGED: {line}")
    print(f"fused peers check: {len(changed)} verdicts changed, {len(moved)} other cells moved, "
          f"{len(fresh)} rows compared")
    return 1 if changed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ropecheck", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--out", required=True, help="the section (Markdown) to write")
    parser.add_argument("--ggml", action="append", default=[], help="NAME=DIR: a ggml build (peers/ggml/build_ggml.sh)")
    parser.add_argument("--against", help="the checked-in RESULTS.md to compare verdicts with")
    parser.add_argument("--skip", action="append", default=[], help="a peer left out (its folder name: onnx, transformers, ggml; fp8)")
    parser.add_argument("--only", action="append", default=[], help="run only the implementations named so (repeatable; no --against)")
    args = parser.parse_args()
    probe = subprocess.run([args.ropecheck, "--help"], capture_output=True, text=True)
    if not any(line.split()[:1] == ["fused"] for line in probe.stdout.splitlines()):  # its list of subcommands
        print(f"fused peers: {args.ropecheck} has no `fused` command (fused/README.md): not run", file=sys.stderr)
        return 3
    ggml_dirs = dict(item.split("=", 1) for item in args.ggml)
    rows, headers, not_run, not_run_impls, loaded = {}, [], [], set(), {}
    if args.only and args.against:
        parser.error("--only runs part of the table: it cannot be compared (--against)")
    for name, impl, spec_names in RUNS:
        if args.only and impl not in args.only:
            continue
        if name not in loaded:
            if name.removesuffix("_fused") in args.skip:
                loaded[name] = (None, f"{name}: left out (--skip {name.removesuffix('_fused')})")
            else:
                loaded[name] = load_module(name, ggml_dirs)
            module, why = loaded[name]
            if module is None:
                not_run.append(why)
            else:
                headers += module.header()
        module, why = loaded[name]
        if module is None:
            not_run_impls.add(impl)
            continue
        for spec_name in spec_names:
            gate(args, module, impl, spec_name, rows)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(section(rows, headers, not_run))
    return compare(rows, args.against, not_run_impls) if args.against else 0


if __name__ == "__main__":
    sys.exit(main())
