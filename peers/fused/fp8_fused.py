"""RMSNorm -> RoPE -> FP8 E4M3 with a per-token scale, through libraries that have the FP8 formats
(peers/fused/README.md). Two implementations:

- `ort-fused-fp8-mldtypes`: ONNX Runtime's RMSNormalization + RotaryEmbedding graph (onnx_fused.py,
  correctly rounded cos/sin cache) in the data dtype, then per token t the scale
  s_t = max|y_t| / 448 (float32; 448 the largest finite E4M3 value, fusedlib.FP8_MAX) and the
  quotient y/s_t (float32) cast by `ml_dtypes.float8_e4m3fn` (numpy's astype: round to nearest even;
  OCP FP8 E4M3, no infinities).
- `keras-fused-fp8`: all in Keras 3 on JAX (CPU): `keras.ops.rms_normalization(x, scale=w, axis=-1,
  epsilon)` (computed in float32), keras-hub's `RotaryEmbedding` (layout half, the float32 angle of
  its `positions`, rotation in the data dtype), the per-token amax with `keras.ops.max(abs)`, the
  quotient, and `keras.ops.cast(..., "float8_e4m3fn")` (XLA's convert).
q and k get their own scales (q_scale, k_scale: [tokens], over all heads of the token).

Not expressible: E5M2 is not run (the spec asks for e4m3 here), a fixed or per-head scale, the norm
after the rotation, `norm_weight=one_plus`, a paged cache; keras-fused-fp8 also the interleaved
layout (the layer splits in halves) and partial rotary.
"""
import os

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import fusedlib  # noqa: E402
from fusedlib import Unsupported  # noqa: E402

E4M3_MAX = fusedlib.FP8_MAX["e4m3"]
KERAS_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}


def header():
    from importlib.metadata import version
    return [f"FP8 (fused): PyPI ml_dtypes=={version('ml-dtypes')} (float8_e4m3fn) after ONNX Runtime's fused graph; "
            f"keras=={version('keras')}, keras-hub=={version('keras-hub')} on jax/jaxlib=={version('jax')} (CPU)"]


def check_spec(spec):
    fusedlib.require(spec, norm="before", norm_weight="plain", fp8="e4m3", scale="per_token", destination="contiguous")
    if spec.get("scaling", "none") != "none" or spec.get("axes", "none") != "none":
        raise Unsupported("the fused peers run unscaled one-axis RoPE only")


def per_token_e4m3(y):
    """y [tokens, heads, head_dim] (float64 values of the data dtype): (codes' values, scales [tokens])."""
    y32 = y.astype(np.float32)
    scale = (np.max(np.abs(y32), axis=(1, 2)) / np.float32(E4M3_MAX)).astype(np.float32)
    q = (y32 / scale[:, None, None]).astype(ml_dtypes.float8_e4m3fn)
    return q.astype(np.float64), scale.astype(np.float64)


def ort_mldtypes(spec, inputs, ropecheck, workdir):
    import onnx_fused
    check_spec(spec)
    rope_only = dict(spec, fp8="none", scale="fixed")
    out = onnx_fused.IMPLEMENTATIONS["ort-fused-crcache"](rope_only, inputs, ropecheck, workdir)
    q_out, q_scale = per_token_e4m3(out["q_out"])
    k_out, k_scale = per_token_e4m3(out["k_out"])
    return {"q_out": q_out, "k_out": k_out, "q_scale": q_scale, "k_scale": k_scale}


def keras_fp8(spec, inputs, ropecheck, workdir):
    import keras
    from keras_hub.layers import RotaryEmbedding
    check_spec(spec)
    if spec["layout"] != "half":
        raise Unsupported("keras-hub's RotaryEmbedding pairs (j, j + d/2): layout half only")
    if fusedlib.rotary_dim(spec) != int(spec["head_dim"]):
        raise Unsupported("keras-hub's RotaryEmbedding rotates its whole feature axis (no partial rotary here)")
    if spec["dtype"] not in KERAS_DTYPES:
        raise Unsupported(f"dtype={spec['dtype']}: the layer's angles are float32 (f32, f16, bf16 data)")
    dtype = KERAS_DTYPES[spec["dtype"]]
    layer = RotaryEmbedding(max_wavelength=float(spec["base"]), sequence_axis=1, feature_axis=-1, dtype=dtype)
    positions = keras.ops.convert_to_tensor(inputs["positions"][:, 0].astype(np.int32))
    result = {}
    for name in ("q", "k"):
        x = keras.ops.cast(keras.ops.convert_to_tensor(inputs[name][None]), dtype)  # (1, tokens, heads, head_dim)
        w = keras.ops.cast(keras.ops.convert_to_tensor(inputs[name + "_weight"]), dtype)
        normed = keras.ops.cast(keras.ops.rms_normalization(x, scale=w, axis=-1, epsilon=float(spec["eps"])), dtype)
        y = keras.ops.cast(layer(normed, positions=positions)[0], "float32")
        scale = keras.ops.max(keras.ops.abs(y), axis=(1, 2)) / E4M3_MAX
        q8 = keras.ops.cast(y / scale[:, None, None], "float8_e4m3fn")
        result[name + "_out"] = np.asarray(keras.ops.convert_to_numpy(keras.ops.cast(q8, "float32")), dtype=np.float64)
        result[name + "_scale"] = np.asarray(keras.ops.convert_to_numpy(scale), dtype=np.float64)
    return result


IMPLEMENTATIONS = {"ort-fused-fp8-mldtypes": ort_mldtypes, "keras-fused-fp8": keras_fp8}
