"""RMSNorm -> RoPE as one ONNX graph of two opset-23 `ai.onnx` ops, `RMSNormalization` then
`RotaryEmbedding`, run by ONNX Runtime (CPU provider) and by `onnx.reference` (peers/fused/README.md).

The graph, per tensor (q with q_weight, k with k_weight):
    X [1, tokens, heads, head_dim] -> RMSNormalization(axis=-1, epsilon, stash_type=1, scale=weight)
    -> Reshape [1, tokens, heads*head_dim] -> RotaryEmbedding(num_heads, interleaved,
    rotary_embedding_dim; cos_cache, sin_cache, position_ids) -> Y
(onnx.ai/onnx/operators/onnx__RMSNormalization.html: Y = X / sqrt(mean(X^2 over the axes from `axis`)
+ epsilon) * scale, computed in the stash type; onnx__RotaryEmbedding.html: cos_cache/sin_cache
[max_position_id_plus_1, rotary_embedding_dim/2] indexed by position_ids.) As in peers/onnx, the
caches have one row per token (position_ids = 0 .. tokens-1) holding that token's cos/sin: correctly
rounded to the data dtype by the exact reference (`crcache`, `ropecheck apply` on unit pairs) or HF's
float32 recipe (`f32cache`).
"""
import os
import sys

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "onnx"))
import onnx_peer  # noqa: E402  (the caches and the runtimes' dtype tables of peers/onnx)

import fusedlib  # noqa: E402
from fusedlib import Unsupported  # noqa: E402

RUNNERS = ("ort", "onnxref")
CACHES = ("crcache", "f32cache")


def header():
    return [f"ONNX (fused): opset-23 RMSNormalization + RotaryEmbedding, PyPI onnxruntime {ort.__version__} "
            f"(CPU provider) and onnx.reference of onnx {onnx.__version__}"]


def build_model(dtype, heads, head_dim, rotary_dim, interleaved, eps, fp8=False):
    """fp8: the rotated Y [1, tokens, heads·head_dim] quantized in the graph: per token
    S = ReduceMax(Abs(Y)) / 448, Q = QuantizeLinear(Y, S, axis=1, output_dtype=FLOAT8E4M3FN,
    saturate=1) (onnx__QuantizeLinear.html, opset 23: per-axis scale), and Q Cast to float32 (its
    decoded values): outputs Q and S instead of Y."""
    t = onnx_peer.ONNX_TYPES[dtype]
    hidden = heads * head_dim
    nodes = [
        helper.make_node("RMSNormalization", ["X", "W"], ["N"], axis=-1, epsilon=eps, stash_type=1),
        helper.make_node("Reshape", ["N", "shape"], ["N3"]),
        helper.make_node("RotaryEmbedding", ["N3", "cos", "sin", "pos"], ["Y"], interleaved=int(interleaved),
                         num_heads=heads, rotary_embedding_dim=rotary_dim),
    ]
    initializers = [helper.make_tensor("shape", TensorProto.INT64, [3], [1, -1, hidden])]
    outputs = [helper.make_tensor_value_info("Y", t, [1, "tokens", hidden])]
    if fp8:
        nodes += [
            helper.make_node("Abs", ["Y"], ["A"]),
            helper.make_node("ReduceMax", ["A", "hidden_axis"], ["M"], keepdims=0),
            helper.make_node("Div", ["M", "fp8_max"], ["S2"]),
            helper.make_node("Reshape", ["S2", "flat"], ["S"]),
            helper.make_node("QuantizeLinear", ["Y", "S"], ["Q8"], axis=1, output_dtype=TensorProto.FLOAT8E4M3FN,
                             saturate=1),
            helper.make_node("Cast", ["Q8"], ["Q"], to=TensorProto.FLOAT),
        ]
        initializers += [helper.make_tensor("hidden_axis", TensorProto.INT64, [1], [2]),
                         helper.make_tensor("fp8_max", t, [], [fusedlib.FP8_MAX["e4m3"]]),
                         helper.make_tensor("flat", TensorProto.INT64, [1], [-1])]
        outputs = [helper.make_tensor_value_info("Q", TensorProto.FLOAT, [1, "tokens", hidden]),
                   helper.make_tensor_value_info("S", t, ["tokens"])]
    graph = helper.make_graph(
        nodes, "norm_rope",
        [helper.make_tensor_value_info("X", t, [1, "tokens", heads, head_dim]),
         helper.make_tensor_value_info("W", t, [head_dim]),
         helper.make_tensor_value_info("cos", t, ["rows", rotary_dim // 2]),
         helper.make_tensor_value_info("sin", t, ["rows", rotary_dim // 2]),
         helper.make_tensor_value_info("pos", TensorProto.INT64, [1, "tokens"])],
        outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 11
    return model


def session(runner, model):
    name = "ONNX Runtime: " if runner == "ort" else "onnx.reference: "
    try:
        if runner == "onnxref":
            return ReferenceEvaluator(model)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.log_severity_level = 3
        return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # noqa: BLE001 — the runtime's refusal is the skip reason
        raise Unsupported(name + onnx_peer.first_line(error))


def run_graph(runner, spec, x, weight, cos, sin, fp8=False):
    """x [tokens, heads, head_dim], weight [head_dim], cos/sin [tokens, d/2]: Y [tokens, heads, head_dim]
    (fp8: the decoded E4M3 values [tokens, heads, head_dim] and the scales [tokens])."""
    dtype, (tokens, nheads, head_dim) = spec["dtype"], x.shape
    model = build_model(dtype, nheads, head_dim, fusedlib.rotary_dim(spec), spec["layout"] == "interleaved",
                        float(spec["eps"]), fp8)
    made = session(runner, model)
    t = onnx_peer.NP_TYPES[dtype]
    feeds = {"X": x.astype(t).reshape(1, tokens, nheads, head_dim), "W": weight.astype(t),
             "cos": cos.astype(t), "sin": sin.astype(t), "pos": np.arange(tokens, dtype=np.int64).reshape(1, tokens)}
    try:
        if runner == "onnxref":
            results = made.run(None, feeds)
        else:
            if dtype == "bf16":  # numpy has no bfloat16: the bit patterns with their ONNX type
                feeds = {k: (ort.OrtValue.ortvalue_from_numpy_with_onnx_type(v.view(np.uint16), TensorProto.BFLOAT16)
                             if v.dtype == t else v) for k, v in feeds.items()}
            results = made.run(None, feeds)
            if dtype == "bf16":
                results = [np.asarray(r).view(ml_dtypes.bfloat16) for r in results]
    except Exception as error:  # noqa: BLE001
        raise Unsupported(("ONNX Runtime: " if runner == "ort" else "onnx.reference: ") + onnx_peer.first_line(error))
    y = np.asarray(results[0]).astype(np.float64).reshape(tokens, nheads, head_dim)
    return (y, np.asarray(results[1]).astype(np.float64).reshape(tokens)) if fp8 else y


def make(runner, cache, fp8=False):
    def compute(spec, inputs, ropecheck, workdir):
        if fp8:
            fusedlib.require(spec, norm="before", norm_weight="plain", fp8="e4m3", scale="per_token",
                             saturate="true", destination="contiguous")
        else:
            fusedlib.require(spec, norm="before", norm_weight="plain", fp8="none", destination="contiguous")
        if spec.get("scaling", "none") != "none" or spec.get("axes", "none") != "none":
            raise Unsupported("the fused peers run unscaled one-axis RoPE only")
        rope = {k: v for k, v in spec.items() if k not in fusedlib.FUSED_DEFAULTS}
        positions = inputs["positions"][:, 0]  # one position per token (one axis), as the golden export has it
        if cache == "crcache":
            cos, sin = onnx_peer.rounded_cos_sin(ropecheck, rope, positions, workdir)
        else:
            cos, sin = onnx_peer.recipe_cos_sin(rope, positions)
        outs = [run_graph(runner, spec, inputs[n], inputs[n + "_weight"], cos, sin, fp8) for n in ("q", "k")]
        if fp8:
            return {"q_out": outs[0][0], "k_out": outs[1][0], "q_scale": outs[0][1], "k_scale": outs[1][1]}
        return {"q_out": outs[0], "k_out": outs[1]}
    return compute


IMPLEMENTATIONS = {f"{runner}-fused-{cache}": make(runner, cache) for runner in RUNNERS for cache in CACHES}
# the graph with its own FP8 quantization (QuantizeLinear), on the correctly rounded cache
IMPLEMENTATIONS.update({f"{runner}-fused-fp8": make(runner, "crcache", fp8=True) for runner in RUNNERS})
