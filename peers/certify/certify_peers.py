"""The peers certified at every position (peers/certify/README.md): per peer, model config and
claim, the first position where the peer leaves its dtype's bound and why, as ropecheck's
explanation names it. Writes the RESULTS section of peers/certify/README.md; --check re-runs the
cheap rows and compares them with it.

    PYTHONPATH=BUILD/python ROPECHECK_BIN=BUILD/bin/ropecheck \\
      build/peers/venv/bin/python peers/certify/certify_peers.py [--budget S] [--check] [--only NAME] [--resume]

Runs in the peers' virtual environment (peers/README.md) with the build's Python module. Each row
certifies (ropecheck.certify, or `ropecheck certify --plugin` for ggml) every position of
[0, 4096), then of [2^k, 2^(k+1)) for k = 12, 13, ..., up to the model's context length and then
up to 2^24, stopping at the first range that fails: its first failing position is the peer's
first below the bound (every lower position passed). A row whose certified ranges pass until
--budget seconds are spent says how far it got ("none below N"); --resume goes on from N (the
certification is per position and the ranges are certified in order, so [0, N) need not be
certified again), adding the row's time to the table's.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "README.md")
BEGIN, END = "<!-- certify_peers.py: begin -->", "<!-- certify_peers.py: end -->"

# Positions the peers' float32 position (`positions.float()`, an int32 offset) holds exactly.
MAX_END = 2**24
FIRST_RANGE = 4096

LLAMA31 = ("layout=half,head_dim=128,base=500000,scaling=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,"
           "original_max_position=8192,dtype={dtype}")
GPTJ6B = "layout=interleaved,head_dim=256,rotary_dim=64,base=10000,dtype={dtype}"
# (config name, spec template, context length: max_position_embeddings of the model's config.json)
CONFIGS = {"Llama-3.1-8B": (LLAMA31, 131072), "GPT-J-6B": (GPTJ6B, 2048)}
MODELS = ("exact", "f32-angle")


def torch_peer(recipe):
    sys.path.insert(0, os.path.join(HERE, "..", "torch"))
    import hf_rope
    import peerlib

    return lambda text: (lambda x, p, s=peerlib.parse_spec(text): hf_rope.apply(s, np.asarray(x), np.asarray(p), recipe))


def onnx_peer(cache):
    sys.path.insert(0, os.path.join(HERE, "..", "onnx"))
    import onnx_peer as op
    import peerlib
    import ropecheck

    runners = op.Runners()

    def make(text):
        spec = peerlib.parse_spec(text)

        def fn(x, positions):
            positions = np.asarray(positions)
            if cache == "f32cache":
                cos, sin = op.recipe_cos_sin(spec, positions)
            else:  # the correctly rounded cache: ropecheck.apply on unit pairs (onnx_peer.rounded_cos_sin's values)
                d, head_dim = peerlib.rotary_dim(spec), int(spec["head_dim"])
                unit = np.zeros((positions.shape[0], 1, head_dim))
                unit[:, :, : d // 2] = 1.0
                out = np.asarray(ropecheck.apply(unit, positions, text), dtype=np.float64).reshape(-1, head_dim)
                cos, sin = out[:, : d // 2], out[:, d // 2 : d]
            return op.run(runners, "ort-onnx23", spec, np.asarray(x, dtype=np.float64), cos, sin).reshape(x.shape)

        return fn

    return make


def mlx_peer():
    sys.path.insert(0, os.path.join(HERE, "..", "mlx"))
    import mlx.core as mx
    import mlx_peer as mp
    import peerlib

    mx.set_default_device(mx.cpu)
    return lambda text: (lambda x, p, s=peerlib.parse_spec(text): mp.compute(mx, False, s, np.asarray(x), np.asarray(p)))


# (peer, make(spec text) -> fn(x, positions) or None for the plugin route, [(config, dtype)])
def peers():
    return [
        ("torch-llama", lambda: torch_peer("llama"), [("Llama-3.1-8B", "f32"), ("Llama-3.1-8B", "bf16")]),
        ("torch-gptj", lambda: torch_peer("gptj"), [("GPT-J-6B", "f32")]),
        ("ort-onnx23-f32cache", lambda: onnx_peer("f32cache"), [("Llama-3.1-8B", "f32")]),
        ("ort-onnx23-crcache", lambda: onnx_peer("crcache"), [("Llama-3.1-8B", "f32")]),
        ("mlx-rope", mlx_peer, [("Llama-3.1-8B", "f32"), ("Llama-3.1-8B", "bf16")]),
        ("ggml-fma", lambda: ggml_peer("ggml-fma"), [("Llama-3.1-8B", "f32")]),
        ("ggml-nofma", lambda: ggml_peer("ggml-nofma"), [("Llama-3.1-8B", "f32")]),
    ]


def ranges(context):
    """[0, 4096), then [2^k, 2^(k+1)) for k = 12, 13, ..., split at the context length, up to 2^24."""
    bounds, b = {0, MAX_END}, FIRST_RANGE
    while b < MAX_END:
        bounds.add(b)
        b *= 2
    bounds.add(min(context, MAX_END))
    bounds = sorted(bounds)
    return list(zip(bounds, bounds[1:]))


def ggml_paths(name):
    """(the plugin, the ggml build's folder) of `name` (ggml-fma: the haswell build, ggml-nofma: x64):
    $ROPECHECK_GGML_BUILD (default: the build folder of $ROPECHECK_BIN) holds lib/libropecheck_ggml.so
    and peers/ggml/{fma,nofma} (scripts/peers, peers/ggml/build_ggml.sh)."""
    build = os.environ.get("ROPECHECK_GGML_BUILD") or os.path.dirname(os.path.dirname(os.path.abspath(os.environ["ROPECHECK_BIN"])))
    return (os.path.join(build, "lib", "libropecheck_ggml.so"),
            os.path.join(build, "peers", "ggml", "fma" if name == "ggml-fma" else "nofma"))


def ggml_peer(name):
    plugin, folder = ggml_paths(name)
    if not os.path.isfile(plugin) or not os.path.isdir(folder):
        raise ImportError(f"no ggml plugin {plugin} or build {folder} (scripts/peers builds them)")


def ggml_certify(name, text, model, first, end, workdir):
    """`ropecheck certify --plugin` of the ggml build `name`, and on a failure `ropecheck sweep` up to
    end - 1 for its explanation: (report, explanation)."""
    binary = os.environ["ROPECHECK_BIN"]
    plugin, folder = ggml_paths(name)
    env = dict(os.environ, ROPECHECK_GGML_DIR=folder)
    common = ["--plugin", plugin, "--impl", "ggml-best", "--spec", text, "--model", model]
    out = os.path.join(workdir, "ggml.json")
    done = subprocess.run([binary, "certify", *common, "--positions", f"{first}:{end}", "--threads", "2", "--json", out], env=env,
                          capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"ropecheck certify --plugin {plugin}: exit {done.returncode}: {done.stderr.strip()}")
    report = json.load(open(out))
    if report["verdict"] == "pass":
        return report, ""
    subprocess.run([binary, "sweep", *common, "--max-position", str(end - 1), "--json", out], env=env, capture_output=True, text=True)
    for g in json.load(open(out)).get("groups", []):
        d = g.get("diagnosis") or {}
        if d.get("explanation") or d.get("lines"):  # as ropecheck.certify: the explanation, else the first line
            return report, d.get("explanation") or d["lines"][0]
    return report, ""


def first_failure(report):
    found = [p for p in report["pairs"] if p["first_failure"] is not None]
    if not found:
        return None
    p = min(found, key=lambda p: (p["first_failure"], p["pair"]))
    return p["first_failure"], p["pair"], p["first_failure_probe"], p["first_failure_message"]


def certify_row(peer, make, config, dtype, model, budget, workdir, resume=(0, 0)):
    """One row: certifies the ranges in order until one fails or the budget is spent. resume
    (covered, seconds): a row the table says passed [0, covered) in `seconds` goes on from there."""
    import ropecheck

    template, context = CONFIGS[config]
    text = template.format(dtype=dtype)
    fn = make(text) if make is not None else None
    start, (covered, earlier), row = time.time(), resume, None
    for first, end in ranges(context):
        if end <= covered:
            continue
        if first >= context and time.time() - start > budget:
            break
        if fn is None:
            report, explanation = ggml_certify(peer, text, model, first, end, workdir)
        else:
            c = ropecheck.certify(fn, text, (first, end), model, name=peer, threads=2)
            report, explanation = c.report, c.explanation
        covered = end
        failure = first_failure(report)
        if failure is not None or report["failed_calls"] > 0:
            row = dict(failure=failure, call=report["first_call_error"], explanation=explanation)
            break
    seconds = earlier + time.time() - start
    return dict(peer=peer, config=config, dtype=dtype, model=model, context=context, covered=covered, seconds=round(seconds),
                **(row or dict(failure=None, call="", explanation="")))


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows):
    lines = ["| peer | config (context) | dtype | claim | first failing position | pair, probe: e | explanation | "
             "certified | time |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f = r["failure"]
        if f is not None:
            position = f"**{f[0]}**" + (" (beyond the context)" if f[0] >= r["context"] else "")
            e = re.sub(r"\s+", " ", f[3]).split(";")[0]
            what = f"pair {f[1]}, {f[2]}: {e}"
        elif r["call"]:
            position, what = "a call failed", r["call"].split("\n")[0][:160]
        else:
            position, what = f"none below {r['covered']}", ""
        lines.append(f"| {r['peer']} | {r['config']} ({r['context']}) | {r['dtype']} | {r['model']} | {position} | {cell(what)} | "
                     f"{cell(r['explanation'] or '-')} | [0, {r['covered']}) | {r['seconds']} s |")
    return "\n".join(lines) + "\n"


def read_table():
    text = open(README).read()
    return text, text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=120, help="seconds a row may spend beyond the context length")
    parser.add_argument("--check", action="store_true",
                        help="re-run the rows whose first failure lies below 2^13 and compare the position, pair and probe "
                             "with README.md")
    parser.add_argument("--resume", action="store_true",
                        help="rows README.md says passed [0, N) go on from N (their time adds to the table's)")
    parser.add_argument("--only", action="append", default=[], help="a peer's name (repeatable)")
    args = parser.parse_args()
    rows, failed = [], []
    _, table = read_table()
    with tempfile.TemporaryDirectory() as workdir:
        for peer, load, cases in peers():
            if args.only and peer not in args.only:
                continue
            try:
                make = load()
            except ImportError as why:
                print(f"{peer}: skipped, cannot import {why}", file=sys.stderr)
                continue
            for config, dtype in cases:
                for model in MODELS:
                    expected = [line for line in table.splitlines() if line.startswith(f"| {peer} | {config} ") and
                                f"| {dtype} | {model} |" in line]
                    if args.check:
                        m = re.search(r"\| \*\*(\d+)\*\*[^|]*\| pair (\d+), ([^:]+):", expected[0]) if expected else None
                        if not m or int(m.group(1)) >= 2**13:
                            continue
                        r = certify_row(peer, make, config, dtype, model, 0, workdir)
                        got = r["failure"][:3] if r["failure"] else None
                        want = (int(m.group(1)), int(m.group(2)), m.group(3))
                        print(f"{peer} {config} {dtype} {model}: first failure {got}, the table's {want} ({r['seconds']} s)")
                        if got != want:
                            failed.append(f"{peer} {config} {dtype} {model}: {got} != {want}")
                        continue
                    m = re.search(r"\| none below (\d+) \|.*\| (\d+) s \|$", expected[0]) if args.resume and expected else None
                    resume = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
                    r = certify_row(peer, make, config, dtype, model, args.budget, workdir, resume)
                    print(f"{peer} {config} {dtype} {model}: {r['failure'] or r['call'] or 'pass'} [0, {r['covered']}) "
                          f"{r['seconds']} s", file=sys.stderr)
                    rows.append(r)
    if args.check:
        for f in failed:
            print(f"CHANGED: {f}")
        print("PASS" if not failed else "FAIL")
        return 1 if failed else 0
    text, table = read_table()
    ran = {r["peer"] for r in rows}
    kept = [line for line in table.splitlines()[2:] if line.split(" | ")[0].lstrip("| ") not in ran]  # --only: the others' rows
    order = [name for name, _, _ in peers()]
    lines = sorted(kept + markdown(rows).splitlines()[2:], key=lambda line: order.index(line.split(" | ")[0].lstrip("| ")))
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    with open(README, "w") as out:
        out.write(text[:start] + "\n" + "\n".join(markdown([]).splitlines()[:2] + lines) + "\n" + text[stop:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
