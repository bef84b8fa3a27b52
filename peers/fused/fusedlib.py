"""What the fused peers share (peers/fused/README.md): the fused spec text, the inputs file of
`ropecheck fused inputs` and the outputs file `ropecheck fused check` judges (fused/README.md,
"`ropecheck fused`"), and the skip reason of a spec a library cannot express.

Inputs (row-major): q [tokens, q_heads, head_dim], k [tokens, k_heads, head_dim], positions
[tokens, components], q_weight/k_weight [head_dim] (norm only), slot_mapping [tokens] and
num_blocks (paged only). Outputs: q_out, k_out (FP8 outputs as their decoded values, not multiplied
by the scale), q_scale/k_scale ([tokens] for a per-token scale), k_cache (paged only).
"""
import numpy as np

# The fused keys of the spec text and their defaults (fused/fused.h, FusedSpec); the other keys are
# the rotation's (spec/README.md).
FUSED_DEFAULTS = {
    "norm": "none", "norm_weight": "plain", "eps": "1e-6", "fp8": "none", "saturate": "true",
    "scale": "fixed", "scale_value": "1", "rounding": "once", "destination": "contiguous",
    "block_size": "16", "q_heads": "1", "k_heads": "1",
}
# The largest finite value of each FP8 format (OCP 8-bit floating point specification, v1.0,
# table 1: E4M3 448, E5M2 57344).
FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}


class Unsupported(Exception):
    """The library cannot express this spec; the message says why (never guessed around)."""


def parse_spec(text):
    """`key=value,...` -> dict of strings, the fused keys defaulted."""
    spec = dict(FUSED_DEFAULTS)
    for item in text.split(","):
        key, _, value = item.partition("=")
        spec[key.strip()] = value.strip()
    return spec


def rope_spec_text(spec):
    """The rotation's part of a parsed fused spec, as spec text (what `ropecheck apply` reads)."""
    return ",".join(f"{k}={v}" for k, v in spec.items() if k not in FUSED_DEFAULTS)


def rotary_dim(spec):
    return int(spec.get("rotary_dim", spec["head_dim"]))


def heads(spec, which):
    return int(spec[which + "_heads"])


def load_inputs(path, spec):
    """The inputs file as float64/int64 arrays, q and k shaped [tokens, heads, head_dim]."""
    data = np.load(path, allow_pickle=False)
    head_dim = int(spec["head_dim"])
    positions = np.asarray(data["positions"], dtype=np.int64)
    tokens = positions.shape[0]
    out = {"positions": positions.reshape(tokens, -1)}
    for name in ("q", "k"):
        out[name] = np.asarray(data[name], dtype=np.float64).reshape(tokens, heads(spec, name), head_dim)
    for name in ("q_weight", "k_weight"):
        if name in data.files:
            out[name] = np.asarray(data[name], dtype=np.float64).reshape(-1)
    return out


def save_outputs(path, q_out, k_out, q_scale=None, k_scale=None):
    """q_out/k_out as float32 or float64 arrays (a bf16 or FP8 result as its exact float32 value)."""
    arrays = {"q_out": q_out, "k_out": k_out}
    if q_scale is not None:
        arrays["q_scale"], arrays["k_scale"] = q_scale, k_scale
    np.savez(path, **arrays)


def require(spec, **wanted):
    """Unsupported naming the first key whose value is not one of those the library has."""
    for key, allowed in wanted.items():
        allowed = (allowed,) if isinstance(allowed, str) else allowed
        value = spec.get(key, "none")
        if value not in allowed:
            raise Unsupported(f"{key}={value}: the library has {' or '.join(key + '=' + a for a in allowed)} only")
