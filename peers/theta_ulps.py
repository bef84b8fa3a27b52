#!/usr/bin/python3
"""How far the float32 frequency recipes of the peers land from the exact θ_j = base^(−2j/d), in
ulps of binary32 — the number the gate's coming `f32-angle` model needs ("θ within k ulps").

    theta_ulps.py [--ort]
    build/peers/venv/bin/python peers/theta_ulps.py --ort    # with the onnx rows

Recipes measured, for d in 64, 80, 96, 128, 256 and base in 1e4, 5e5, 1e6, 1e7, pairs j < d/2:
- torch:  1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d)), run by
          Debian's python3-torch (HF transformers' default inv_freq);
- ggml:   θ_0 = 1, θ_j = θ_{j−1} · r in float32 with r = powf(base, −2.0f/d) (glibc's powf via
          ctypes): llama.cpp's running product (ggml-cpu rope_cache_init; there the product starts
          at the position, θ_0 = p);
- onnx:   the same formula as an ONNX graph (Cast, Div, Pow, Div: what torch.onnx.export makes of
          the torch line) evaluated by ONNX Runtime's float32 CPU kernels (with --ort: the PyPI
          onnxruntime wheel of peers/onnx/requirements.txt, so run by the peers' venv python,
          build/peers/venv/bin/python, which also sees Debian's numpy and torch).
Exact values: Python's decimal at 60 digits (exp and ln correctly rounded there), far beyond the
2^-24 that an ulp resolves. Error in ulps = |θ̂ − θ| / ulp(θ), ulp(θ) = 2^(⌊log2 θ⌋ − 23).
"""
import argparse
import ctypes
import decimal
import math
import sys

import numpy as np

DIMS = (64, 80, 96, 128, 256)
BASES = (10000, 500000, 1000000, 10000000)
decimal.getcontext().prec = 60


def exact_theta(base, d, j):
    return (decimal.Decimal(-2 * j) / d * decimal.Decimal(base).ln()).exp()


def ulps(approx, exact):
    exponent = math.frexp(float(exact))[1] - 1  # exact in [2^exponent, 2^(exponent+1))
    ulp = decimal.Decimal(2) ** (exponent - 23)
    return float(abs(decimal.Decimal(float(approx)) - exact) / ulp)


def torch_recipe(base, d):
    import torch

    return (1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))).numpy()


def ggml_recipe(base, d):
    libm = ctypes.CDLL("libm.so.6")
    libm.powf.restype = ctypes.c_float
    libm.powf.argtypes = (ctypes.c_float, ctypes.c_float)
    r = np.float32(libm.powf(np.float32(base), np.float32(-2.0) / np.float32(d)))
    theta = np.empty(d // 2, dtype=np.float32)
    theta[0] = np.float32(1)
    for j in range(1, d // 2):
        theta[j] = theta[j - 1] * r
    return theta


def onnx_recipe_all(jobs):
    """inv_freq = 1 / (base ^ (float(idx) / dim)) by ONNX Runtime's CPU provider, for every (base, d) job."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Cast", ["idx"], ["idx_f"], to=TensorProto.FLOAT),
             helper.make_node("Div", ["idx_f", "dim"], ["exponent"]),
             helper.make_node("Pow", ["base", "exponent"], ["pos_freq"]),
             helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])),
             helper.make_node("Div", ["one", "pos_freq"], ["inv_freq"])]
    graph = helper.make_graph(nodes, "inv_freq",
                              [helper.make_tensor_value_info("base", TensorProto.FLOAT, []),
                               helper.make_tensor_value_info("dim", TensorProto.FLOAT, []),
                               helper.make_tensor_value_info("idx", TensorProto.INT64, ["n"])],
                              [helper.make_tensor_value_info("inv_freq", TensorProto.FLOAT, ["n"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    out = []
    for base, d in jobs:
        feeds = {"base": np.array(base, dtype=np.float32), "dim": np.array(d, dtype=np.float32),
                 "idx": np.arange(0, d, 2, dtype=np.int64)}
        out.append(session.run(["inv_freq"], feeds)[0].astype(np.float32))
    return out


def measure(values, base, d):
    errors = [ulps(values[j], exact_theta(base, d, j)) for j in range(d // 2)]
    return {"max": max(errors), **{f">{k}": sum(e > k for e in errors) for k in (1, 2, 3, 4)}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ort", action="store_true",
                        help="add the onnx rows (ONNX Runtime's Python package: run with build/peers/venv/bin/python)")
    args = parser.parse_args()
    jobs = [(base, d) for d in DIMS for base in BASES]
    recipes = {"ggml": [ggml_recipe(b, d) for b, d in jobs]}
    try:
        recipes["torch"] = [torch_recipe(b, d) for b, d in jobs]
    except ImportError:
        print("torch rows left out: python3-torch is not installed", file=sys.stderr)
    if args.ort:
        try:
            recipes["onnx"] = onnx_recipe_all(jobs)
        except ImportError as why:
            print(f"--ort: cannot import {why.name or why} ({why}): run with the peers' venv python, "
                  "build/peers/venv/bin/python (scripts/peers installs onnx and onnxruntime there)", file=sys.stderr)
            return 2
    print("| recipe | d | base | max ulps | pairs > 1 ulp | > 2 | > 3 | > 4 |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ("torch", "ggml", "onnx"):
        if name not in recipes:
            continue
        for (base, d), values in zip(jobs, recipes[name]):
            m = measure(values, base, d)
            print(f"| {name} | {d} | {base:.0e} | {m['max']:.2f} | {m['>1']}/{d // 2} | {m['>2']} | {m['>3']} | {m['>4']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
