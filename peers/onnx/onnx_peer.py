"""ONNX Runtime's RotaryEmbedding and ONNX's reference implementation of it, on the golden inputs,
for `ropecheck check` (peers/onnx/README.md). Run by scripts/peers in build/peers/venv:

    onnx_peer.py INPUTS.npz OUT_DIR

INPUTS.npz is `ropecheck golden export --format npz`. Writes OUT_DIR/IMPL.npz (+ .skipped.json)
for six implementations:
  ort-onnx23-crcache   ONNX Runtime, the opset-23 ai.onnx op, cos/sin cache correctly rounded to
                       the data dtype
  ort-onnx23-f32cache  ONNX Runtime, the opset-23 ai.onnx op, cos/sin cache of HF's float32 recipe
  ort-msft-crcache     ONNX Runtime, the com.microsoft contrib op, correctly rounded cache
  ort-msft-f32cache    ONNX Runtime, the com.microsoft contrib op, HF float32 recipe's cache
  onnxref-crcache      onnx.reference.ReferenceEvaluator running the opset-23 op, correctly
                       rounded cache
  onnxref-f32cache     onnx.reference.ReferenceEvaluator, HF float32 recipe's cache
The op only rotates: pair j of token t uses cos_cache[position_ids[t], j] (and sin). Each test gets
a cache with one row per token (position_ids = 0 .. tokens-1) holding that token's A·cos(α_j),
A·sin(α_j) — so any spec (scaling, attention factor, 2-D and M-RoPE axes, large positions) reaches
the op, and the inverse direction is the negated sine. The correctly rounded cache comes from the
exact reference (`ropecheck apply` on unit pairs (1, 0): the output pair is (A·cos α, A·sin α),
correctly rounded; the binary is $ROPECHECK_BIN, else build/bin/ropecheck); the float32 one from
peers/torch/hf_rope.py's cos_sin (HF LLaMA recipe, which has no 2-D/M-RoPE, ntk or yarn-ggml,
and no float64 recipe: skipped). Data types as given; what a runtime refuses (ONNX Runtime: no bf16 or f64 kernel) is
skipped with its own message. Prints the RESULTS.md header lines on stdout; exits 3 with a
one-line reason on stderr when onnx, onnxruntime or torch cannot be imported.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

try:  # the libraries first: peers/ on sys.path would make peers/onnx and peers/torch namespace packages
    import ml_dtypes
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator
except ImportError as why:
    print(f"cannot import {getattr(why, 'name', None) or why} (peers/onnx/requirements.txt): {why}", file=sys.stderr)
    sys.exit(3)

sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "torch"))
import hf_rope  # noqa: E402
import peerlib  # noqa: E402
from peerlib import Unsupported  # noqa: E402

RUNNERS = ("ort-onnx23", "ort-msft", "onnxref")
CACHES = ("crcache", "f32cache")
ONNX_TYPES = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16,
              "f64": TensorProto.DOUBLE}
NP_TYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f64": np.float64}


def implementations():
    return [f"{runner}-{cache}" for runner in RUNNERS for cache in CACHES]


def build_model(op, dtype, heads, head_dim, rotary_dim, interleaved):
    """One RotaryEmbedding node on X [1, tokens, heads·head_dim] (3-D input with num_heads)."""
    attrs = dict(interleaved=int(interleaved), num_heads=heads, rotary_embedding_dim=rotary_dim)
    t = ONNX_TYPES[dtype]
    hidden = heads * head_dim
    if op == "onnx23":  # inputs X, cos_cache, sin_cache, position_ids
        node = helper.make_node("RotaryEmbedding", ["X", "cos", "sin", "pos"], ["Y"], **attrs)
        opsets, ir_version = [helper.make_opsetid("", 23)], 11
    else:  # com.microsoft: input, position_ids, cos_cache, sin_cache
        node = helper.make_node("RotaryEmbedding", ["X", "pos", "cos", "sin"], ["Y"], domain="com.microsoft", **attrs)
        opsets, ir_version = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)], 8
    graph = helper.make_graph(
        [node], "rope",
        [helper.make_tensor_value_info("X", t, [1, "tokens", hidden]),
         helper.make_tensor_value_info("cos", t, ["rows", rotary_dim // 2]),
         helper.make_tensor_value_info("sin", t, ["rows", rotary_dim // 2]),
         helper.make_tensor_value_info("pos", TensorProto.INT64, [1, "tokens"])],
        [helper.make_tensor_value_info("Y", t, [1, "tokens", hidden])])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = ir_version
    return model


def first_line(error):
    """The runtime's message, one line, without ONNX Runtime's status prefix and empty node name."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return re.sub(r" node with name ''|\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text)


class Runners:
    """The three runners of one model shape, made once; a runner that refuses the model keeps its
    message (the skip reason of every test of that shape)."""

    def __init__(self):
        self.made = {}

    def get(self, runner, dtype, heads, head_dim, d, interleaved):
        key = (runner, dtype, heads, head_dim, d, interleaved)
        if key not in self.made:
            op = "msft" if runner == "ort-msft" else "onnx23"
            model = build_model(op, dtype, heads, head_dim, d, interleaved)
            try:
                if runner == "onnxref":
                    self.made[key] = ReferenceEvaluator(model)
                else:
                    options = ort.SessionOptions()
                    options.intra_op_num_threads = 1
                    options.log_severity_level = 3
                    self.made[key] = ort.InferenceSession(model.SerializeToString(), options,
                                                          providers=["CPUExecutionProvider"])
            except Exception as error:  # noqa: BLE001 — the runtime's refusal is the skip reason
                self.made[key] = Unsupported(("ONNX Runtime: " if runner != "onnxref" else "onnx.reference: ")
                                             + first_line(error))
        made = self.made[key]
        if isinstance(made, Unsupported):
            raise made
        return made


def run(runners, runner, spec, x, cos, sin):
    """x [tokens, heads, head_dim] float64-exact values, cos/sin [tokens, d/2]: Y [tokens, heads·head_dim]."""
    dtype, (tokens, heads, head_dim) = spec["dtype"], x.shape
    d = peerlib.rotary_dim(spec)
    made = runners.get(runner, dtype, heads, head_dim, d, spec["layout"] == "interleaved")
    t = NP_TYPES[dtype]
    feeds = {"X": np.asarray(x, dtype=np.float64).astype(t).reshape(1, tokens, heads * head_dim),
             "cos": np.asarray(cos, dtype=np.float64).astype(t), "sin": np.asarray(sin, dtype=np.float64).astype(t),
             "pos": np.arange(tokens, dtype=np.int64).reshape(1, tokens)}
    try:
        if runner == "onnxref":
            with np.errstate(all="ignore"):  # inf/nan inputs of edge-cases: numpy would warn
                y = made.run(None, feeds)[0]
        else:
            if dtype == "bf16":  # numpy has no bfloat16: the bit patterns with their ONNX type
                feeds = {k: (ort.OrtValue.ortvalue_from_numpy_with_onnx_type(v.view(np.uint16), TensorProto.BFLOAT16)
                             if v.dtype == t else v) for k, v in feeds.items()}
            y = made.run(None, feeds)[0]
            if dtype == "bf16":
                y = np.asarray(y).view(ml_dtypes.bfloat16)
    except Exception as error:  # noqa: BLE001
        raise Unsupported(("ONNX Runtime: " if runner != "onnxref" else "onnx.reference: ") + first_line(error))
    y = np.asarray(y).reshape(tokens, heads * head_dim)
    return y.astype(np.float32) if dtype == "bf16" else y.astype(t)  # bf16 as its exact float32 value


def rounded_cos_sin(ropecheck, spec, positions, workdir):
    """(A·cos α, A·sin α) [tokens, d/2] correctly rounded to the data dtype, by the exact reference."""
    d, head_dim = peerlib.rotary_dim(spec), int(spec["head_dim"])
    tokens = positions.shape[0]
    unit = np.zeros((tokens, 1, head_dim))
    first = np.arange(0, d, 2) if spec["layout"] == "interleaved" else np.arange(d // 2)
    second = first + 1 if spec["layout"] == "interleaved" else first + d // 2
    unit[:, :, first] = 1.0
    forward = dict(spec, direction="forward")  # the inverse is the negated sine
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
    """HF's float32 LLaMA recipe's cos/sin (float32 values, as float64)."""
    if spec["dtype"] == "f64":  # as peers/torch: a float64 result would be a float32 one
        raise Unsupported("HF's recipe computes cos/sin in float32: no float64 recipe")
    if spec.get("axes", "none") != "none":
        raise Unsupported(f"HF's float32 recipe has no {spec['axes']} axes")
    cos, sin = hf_rope.cos_sin(spec, positions, "llama")
    return cos.numpy().astype(np.float64), sin.numpy().astype(np.float64)


def main():
    if len(sys.argv) != 3:
        print("usage: onnx_peer.py INPUTS.npz OUT_DIR", file=sys.stderr)
        return 2
    inputs, out_dir = sys.argv[1:]
    ropecheck = os.environ.get("ROPECHECK_BIN") or os.path.join(HERE, "..", "..", "build", "bin", "ropecheck")
    if not os.access(ropecheck, os.X_OK):
        print(f"no ropecheck binary at {ropecheck} (the correctly rounded cache): set ROPECHECK_BIN", file=sys.stderr)
        return 3
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    ort.set_default_logger_severity(3)
    runners = Runners()
    outputs = {impl: {} for impl in implementations()}
    skipped = {impl: {} for impl in implementations()}
    with tempfile.TemporaryDirectory(dir=out_dir) as workdir:
        for prefix, spec, x, positions in peerlib.exported_tests(inputs):
            test = prefix.rstrip("/")
            sign = -1.0 if spec.get("direction", "forward") == "inverse" else 1.0
            for cache in CACHES:
                try:
                    if cache == "crcache":
                        cos, sin = rounded_cos_sin(ropecheck, spec, positions, workdir)
                    else:
                        cos, sin = recipe_cos_sin(spec, positions)
                except Unsupported as why:
                    for runner in RUNNERS:
                        skipped[f"{runner}-{cache}"][test] = str(why)
                    continue
                for runner in RUNNERS:
                    impl = f"{runner}-{cache}"
                    try:
                        outputs[impl][prefix + "output"] = run(runners, runner, spec, x, cos, sign * sin)
                    except Unsupported as why:
                        skipped[impl][test] = str(why)
    for impl in implementations():
        peerlib.save_candidate(os.path.join(out_dir, impl + ".npz"), outputs[impl], skipped[impl])
        print(f"{impl}: {len(outputs[impl])} outputs, {len(skipped[impl])} skipped", file=sys.stderr)
    print(f"ONNX Runtime: PyPI onnxruntime {ort.__version__} (CPU provider), models built with PyPI onnx {onnx.__version__}")
    print(f"ONNX reference: onnx.reference.ReferenceEvaluator of PyPI onnx {onnx.__version__} (the opset-23 op)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
