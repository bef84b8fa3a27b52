#!/usr/bin/env python3
"""keras-hub's `keras_hub.layers.RotaryEmbedding` on Keras 3's JAX backend (CPU), for `ropecheck check`
(peers/keras_hub/README.md).

    keras_hub_peer.py INPUTS.npz OUT_DIR

INPUTS.npz is `ropecheck golden export --format npz`. Writes OUT_DIR/keras-hub-rope.npz with
SUITE/ID/output for every test the layer expresses and OUT_DIR/keras-hub-rope.npz.skipped.json
with the reason for every other test. Prints one header line; exits 3 when keras/keras_hub/jax do
not import. KERAS_BACKEND=jax is set before keras is imported.

How each spec is handed to the layer (keras-hub's documented arguments; no code copied):
- the input [tokens, heads, head_dim] becomes (batch 1, sequence = tokens, heads, features) with
  sequence_axis=1, feature_axis=-1, and `positions` = the tokens' positions (the layer casts them
  to float32); the layer's dtype policy is the data dtype (float32, float16, bfloat16), so its
  cos/sin are cast to that dtype and the rotation runs in it;
- max_wavelength = base; the layer pairs (j, j + d/2) (x1, x2 = split(x, 2)): layout half;
- partial rotary: the layer rotates its whole feature axis, so it is called on x[..., :rotary_dim]
  and the remaining dims are concatenated back unchanged (what keras-hub's GPT-NeoX-style models do);
- scaling none: rope_type="linear", scaling_factor=1; linear: rope_type="linear",
  scaling_factor=factor; yarn: rope_type="yarn", scaling_factor=factor, beta_fast, beta_slow,
  original_max_position_embeddings, truncate, only where the spec's attention factor is the
  layer's fixed one, 0.1·ln(factor) + 1 (no attention_factor, no mscale/mscale_all_dim pair).
Not expressible (skipped with the reason): layout interleaved, f64 (the layer's angles are float32),
ntk/dynamic/llama3/longrope/yarn-ggml (the layer's rope_type "dynamic" divides every frequency by
factor^(d/(d−2)), which is none of them), yarn with another attention factor, 2-D/M-RoPE axes, the
inverse direction.
"""
import math
import os
import sys

import numpy as np

# peers/ only while importing peerlib: its folders (mlx/, timm/, ...) would otherwise shadow, as
# namespace packages, a library that is not installed.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import peerlib  # noqa: E402
from peerlib import Unsupported  # noqa: E402

del sys.path[0]

IMPL = "keras-hub-rope"
DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}


def layer_arguments(spec):
    """Constructor arguments of RotaryEmbedding for the spec (besides dtype and axes)."""
    args = {"max_wavelength": float(spec["base"])}
    scaling = spec.get("scaling", "none")
    if scaling == "none":
        return dict(args, rope_type="linear", scaling_factor=1.0)
    if scaling == "linear":
        return dict(args, rope_type="linear", scaling_factor=float(spec["factor"]))
    if scaling == "yarn":
        factor = float(spec["factor"])
        if "attention_factor" in spec:
            raise Unsupported("yarn attention_factor: the layer's YaRN magnitude is fixed to 0.1·ln(factor) + 1")
        m, m_all = float(spec.get("mscale", 0)), float(spec.get("mscale_all_dim", 0))
        if m and m_all:
            g = (0.1 * m * math.log(factor) + 1) / (0.1 * m_all * math.log(factor) + 1)
            raise Unsupported(f"yarn mscale/mscale_all_dim (attention factor {g:g}): the layer's YaRN "
                              "magnitude is fixed to 0.1·ln(factor) + 1")
        return dict(args, rope_type="yarn", scaling_factor=factor,
                    beta_fast=float(spec.get("beta_fast", 32)), beta_slow=float(spec.get("beta_slow", 1)),
                    original_max_position_embeddings=int(spec["original_max_position"]),
                    truncate=spec.get("truncate", "true") in ("true", "1"))
    raise Unsupported(f"scaling {scaling}: not a rope_type of keras_hub.layers.RotaryEmbedding "
                      "(linear, dynamic = frequencies / factor^(d/(d-2)), yarn)")


def compute(keras, RotaryEmbedding, spec, x, positions):
    if spec["dtype"] not in DTYPES:
        raise Unsupported("the layer computes positions, frequencies and angles in float32: no f64 RoPE")
    peerlib.one_dtype(spec, "the layer's inputs and outputs share its dtype policy: no mixed dtypes")
    if spec.get("axes", "none") != "none":
        raise Unsupported(f"{spec['axes']} axes: the layer takes one position per token")
    peerlib.forward_only(spec, "the layer has no inverse rotation")
    if spec["layout"] != "half":
        raise Unsupported("the layer pairs (j, j + d/2) (split in halves): layout half only")
    dim = peerlib.rotary_dim(spec)
    layer = RotaryEmbedding(sequence_axis=1, feature_axis=-1, dtype=DTYPES[spec["dtype"]], **layer_arguments(spec))
    dtype = DTYPES[spec["dtype"]]
    q = keras.ops.cast(keras.ops.convert_to_tensor(x[None]), dtype)  # (1, tokens, heads, head_dim)
    pos = np.asarray(positions, dtype=np.int64)
    rotated = layer(q[..., :dim], positions=keras.ops.convert_to_tensor(pos.astype(np.int32)))
    out = keras.ops.concatenate([rotated, q[..., dim:]], axis=-1) if dim < x.shape[-1] else rotated
    return np.asarray(keras.ops.convert_to_numpy(keras.ops.cast(out[0], "float32" if dtype == "bfloat16" else dtype)))


def load():
    os.environ["KERAS_BACKEND"] = "jax"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import keras
    from keras_hub.layers import RotaryEmbedding
    from importlib.metadata import version

    if keras.backend.backend() != "jax":
        raise RuntimeError(f"Keras backend is {keras.backend.backend()}, not jax")
    return (f"- keras-hub: PyPI keras-hub=={version('keras-hub')}, keras=={version('keras')}, "
            f"jax/jaxlib=={version('jax')}/{version('jaxlib')} (CPU), keras_hub.layers.RotaryEmbedding",
            {IMPL: lambda s, x, p: compute(keras, RotaryEmbedding, s, x, p)})


if __name__ == "__main__":
    sys.exit(peerlib.main("keras_hub_peer", load))
