#!/usr/bin/python3
"""ONNX Runtime's RotaryEmbedding on the golden inputs, for `ropecheck check` (peers/onnx/README.md).

    ort_rope.py --ropecheck BIN --node NODE --ort DIR INPUTS.npz WORKDIR

INPUTS.npz is `ropecheck golden export --format npz`. Writes WORKDIR/IMPL.npz (+ .skipped.json)
for four implementations:
  ort-onnx23-crcache   the opset-23 ai.onnx op, cos/sin cache correctly rounded to the data dtype
  ort-onnx23-f32cache  the opset-23 ai.onnx op, cos/sin cache of HF's float32 recipe
  ort-msft-crcache     the com.microsoft contrib op, correctly rounded cache
  ort-msft-f32cache    the com.microsoft contrib op, HF float32 recipe's cache
The op only rotates: pair j of token t uses cos_cache[position_ids[t], j] (and sin). Each test gets
a cache with one row per token (position_ids = 0 .. tokens-1) holding that token's A·cos(α_j),
A·sin(α_j) — so any spec (scaling, attention factor, 2-D and M-RoPE axes, large positions) reaches
the op, and the inverse direction is the negated sine. The correctly rounded cache comes from the
exact reference (`ropecheck apply` on unit pairs (1, 0): the output pair is (A·cos α, A·sin α),
correctly rounded); the float32 one from peers/torch/hf_rope.py's cos_sin (HF LLaMA recipe, which
has no 2-D/M-RoPE, ntk or yarn-ggml: skipped). Models are built with Debian's python3-onnx
(1.12: opset 23 is newer, so ir_version is set to 10 by hand and the checker is not run) and run
by WORKDIR's run_ort.js under node with the onnxruntime-node package in DIR. Data types as given;
ORT's own error (no bf16 or f64 kernel) is the skip reason.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "torch"))
import hf_rope  # noqa: E402
import peerlib  # noqa: E402
from peerlib import Unsupported  # noqa: E402

OPS = {"onnx23": "", "msft": "com.microsoft"}
CACHES = ("crcache", "f32cache")
ONNX_TYPES = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16,
              "f64": TensorProto.DOUBLE}


def implementations():
    return [f"ort-{op}-{cache}" for op in OPS for cache in CACHES]


def build_model(op, dtype, heads, head_dim, rotary_dim, interleaved, path):
    """One RotaryEmbedding node on X [1, tokens, heads·head_dim] (3-D input with num_heads)."""
    attrs = dict(interleaved=int(interleaved), num_heads=heads, rotary_embedding_dim=rotary_dim)
    t = ONNX_TYPES[dtype]
    hidden = heads * head_dim
    if op == "onnx23":  # inputs X, cos_cache, sin_cache, position_ids
        node = helper.make_node("RotaryEmbedding", ["X", "cos", "sin", "pos"], ["Y"], **attrs)
        opsets = [helper.make_opsetid("", 23)]
    else:  # com.microsoft: input, position_ids, cos_cache, sin_cache
        node = helper.make_node("RotaryEmbedding", ["X", "pos", "cos", "sin"], ["Y"], domain="com.microsoft", **attrs)
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    graph = helper.make_graph(
        [node], "rope",
        [helper.make_tensor_value_info("X", t, [1, "tokens", hidden]),
         helper.make_tensor_value_info("cos", t, ["rows", rotary_dim // 2]),
         helper.make_tensor_value_info("sin", t, ["rows", rotary_dim // 2]),
         helper.make_tensor_value_info("pos", TensorProto.INT64, [1, "tokens"])],
        [helper.make_tensor_value_info("Y", t, [1, "tokens", hidden])])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10 if op == "onnx23" else 8
    onnx.save(model, path)


def raw(values, dtype):
    """Bytes of an array in the data dtype as ORT's JavaScript tensors take them (bf16: the bit
    pattern, rounded to nearest even from float32 as torch's .to(torch.bfloat16) does)."""
    if dtype == "bf16":
        bits = np.asarray(values, dtype=np.float32).reshape(-1).view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return rounded.astype(np.uint16).tobytes()
    return np.asarray(values, dtype={"f32": np.float32, "f16": np.float16, "f64": np.float64}[dtype]).tobytes()


def from_raw(path, dtype, shape):
    if dtype == "bf16":
        bits = np.fromfile(path, dtype=np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).reshape(shape)
    return np.fromfile(path, dtype={"f32": np.float32, "f16": np.float16, "f64": np.float64}[dtype]).reshape(shape)


def rounded_cos_sin(ropecheck, spec, positions, workdir):
    """(A·cos α, A·sin α) [tokens, d/2] correctly rounded to the data dtype, by the exact reference."""
    d, head_dim = peerlib.rotary_dim(spec), int(spec["head_dim"])
    tokens = positions.shape[0]
    unit = np.zeros((tokens, 1, head_dim))
    first = np.arange(0, d, 2) if spec["layout"] == "interleaved" else np.arange(d // 2)
    second = first + 1 if spec["layout"] == "interleaved" else first + d // 2
    unit[:, :, first] = 1.0
    forward = dict(spec, direction="forward")  # the inverse is the negated sine (prepare)
    text = ",".join(f"{k}={v}" for k, v in forward.items())
    rows = positions.reshape(tokens, -1)
    with tempfile.NamedTemporaryFile(suffix=".npy", dir=workdir, delete=False) as f:
        np.save(f, unit)
    try:
        out = subprocess.run([ropecheck, "apply", "--spec", text, "--heads", "1", "--input", f.name, "--format", "hex",
                              "--positions", ",".join(":".join(str(int(v)) for v in row) for row in rows)],
                             check=True, capture_output=True, text=True).stdout.split()
    finally:
        os.unlink(f.name)
    values = np.array([float.fromhex(v) for v in out]).reshape(tokens, head_dim)
    return values[:, first], values[:, second]


def recipe_cos_sin(spec, positions):
    if spec.get("axes", "none") != "none":
        raise Unsupported(f"HF's float32 recipe has no {spec['axes']} axes")
    cos, sin = hf_rope.cos_sin(spec, positions, "llama")
    return cos.numpy(), sin.numpy()


def prepare(args, workdir):
    """Writes models, data and manifest.json; returns {impl: {test: reason}} for tests not run."""
    skipped = {impl: {} for impl in implementations()}
    runs, models = [], {}
    for n, (prefix, spec, x, positions) in enumerate(peerlib.exported_tests(args.inputs)):
        test = prefix.rstrip("/")
        dtype, tokens, heads, head_dim = spec["dtype"], x.shape[0], x.shape[1], x.shape[2]
        d = peerlib.rotary_dim(spec)
        base = os.path.join(workdir, f"t{n}")
        with open(base + ".x", "wb") as f:
            f.write(raw(x.reshape(-1), dtype))
        sign = -1.0 if spec.get("direction", "forward") == "inverse" else 1.0
        for cache in CACHES:
            try:
                if cache == "crcache":
                    cos, sin = rounded_cos_sin(args.ropecheck, spec, positions, workdir)
                else:
                    cos, sin = recipe_cos_sin(spec, positions)
            except Unsupported as why:
                for op in OPS:
                    skipped[f"ort-{op}-{cache}"][test] = str(why)
                continue
            with open(f"{base}.{cache}.cos", "wb") as f:
                f.write(raw(cos, dtype))
            with open(f"{base}.{cache}.sin", "wb") as f:
                f.write(raw(sign * np.asarray(sin, dtype=np.float64), dtype))
            for op in OPS:
                key = f"{op}-{dtype}-h{heads}-d{head_dim}-r{d}-{spec['layout']}"
                if key not in models:
                    models[key] = os.path.join(workdir, key + ".onnx")
                    build_model(op, dtype, heads, head_dim, d, spec["layout"] == "interleaved", models[key])
                runs.append({"impl": f"ort-{op}-{cache}", "test": test, "model": key, "dtype": dtype,
                             "tokens": tokens, "hidden": heads * head_dim, "half": d // 2, "x": base + ".x",
                             "cos": f"{base}.{cache}.cos", "sin": f"{base}.{cache}.sin",
                             "out": f"{base}.{op}.{cache}.y"})
    with open(os.path.join(workdir, "manifest.json"), "w") as f:
        json.dump({"models": models, "runs": runs}, f)
    return skipped, runs


def collect(args, workdir, skipped, runs):
    with open(os.path.join(workdir, "results.json")) as f:
        errors = json.load(f)["errors"]  # model key -> ORT's message
    outputs = {impl: {} for impl in implementations()}
    for r in runs:
        if r["model"] in errors:
            skipped[r["impl"]][r["test"]] = "ONNX Runtime: " + errors[r["model"]]
        else:
            outputs[r["impl"]][r["test"] + "/output"] = from_raw(r["out"], r["dtype"], (r["tokens"], r["hidden"]))
    for impl in implementations():
        peerlib.save_candidate(os.path.join(args.outdir, impl + ".npz"), outputs[impl], skipped[impl])
        print(f"{impl}: {len(outputs[impl])} outputs, {len(skipped[impl])} skipped")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ropecheck", required=True, help="the ropecheck binary (exact cos/sin)")
    parser.add_argument("--node", default="node")
    parser.add_argument("--ort", required=True, help="folder of the onnxruntime-node package")
    parser.add_argument("inputs")
    parser.add_argument("outdir", help="where IMPL.npz and IMPL.npz.skipped.json go")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.outdir) as workdir:
        skipped, runs = prepare(args, workdir)
        subprocess.run([args.node, os.path.join(HERE, "run_ort.js"), os.path.abspath(args.ort), os.path.join(workdir, "manifest.json"),
                        os.path.join(workdir, "results.json")], check=True)
        collect(args, workdir, skipped, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
