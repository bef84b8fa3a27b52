#!/usr/bin/env python3
"""The user loop of `ropecheck check` with NumPy (gate/README.md, "Gate your implementation"):

    ropecheck golden export --golden SUITE.json --format npz --out inputs.npz
    python3 numpy_candidate.py inputs.npz outputs.npz        # your RoPE here
    ropecheck check --golden SUITE.json --candidate outputs.npz --junit rope.xml

Run as a whole (`--ropecheck BIN --golden FILE --workdir DIR`) it does all three steps and exits
with `check`'s status; the project's CI runs it that way.

The RoPE below is a plain NumPy implementation of the unscaled rotation (docs/rope.md §1–2: θ_j =
base^(−2j/d), angle = position·θ_j, pairs (2j, 2j+1) or (j, j + d/2)). It computes in np.longdouble
(x87 80-bit on x86-64): a float64 angle p·θ_j carries an error of about p·θ_j·2^-53, which at
positions near 2^31 is 2^-22 rad, more than float32's unit 2^-24 — the check would rightly fail it
under the exact model. Only specs it implements get an output; `check --allow-missing` skips the rest.
"""
import argparse
import os
import subprocess
import sys

import numpy as np


def parse_spec(text):
    return dict(item.split("=", 1) for item in text.split(","))


def supported(spec):
    return (spec.get("scaling", "none") == "none" and spec.get("axes", "none") == "none"
            and spec["dtype"] in ("f64", "f32", "f16", "bf16"))


def round_to_bfloat16(values):
    """float32 → nearest bfloat16 (ties to even), returned as float32 (NumPy has no bfloat16)."""
    bits = values.astype(np.float32).view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    rounded = ((bits + rounding) & np.uint32(0xFFFF0000)).view(np.float32)
    return np.where(np.isnan(values), values, rounded)


def rope(spec, x, positions):
    """x: [tokens, heads, head_dim]; positions: [tokens]. Returns the rotated tensor in x's dtype."""
    head_dim = int(spec["head_dim"])
    rotary_dim = int(spec.get("rotary_dim", head_dim))
    base = np.longdouble(spec["base"])
    pairs = rotary_dim // 2
    j = np.arange(pairs, dtype=np.longdouble)
    theta = base ** (-2.0 * j / rotary_dim)
    angle = positions.astype(np.longdouble)[:, None] * theta[None, :]  # [tokens, pairs]
    if spec.get("direction", "forward") == "inverse":
        angle = -angle
    cos = np.cos(angle)[:, None, :]
    sin = np.sin(angle)[:, None, :]
    if spec["layout"] == "interleaved":
        first, second = np.arange(0, rotary_dim, 2), np.arange(1, rotary_dim, 2)
    else:
        first, second = np.arange(pairs), np.arange(pairs, rotary_dim)
    wide = x.astype(np.longdouble)
    out = wide.copy()
    xs, ys = wide[..., first], wide[..., second]
    with np.errstate(invalid="ignore", over="ignore"):
        out[..., first] = xs * cos - ys * sin
        out[..., second] = xs * sin + ys * cos
    out[..., rotary_dim:] = wide[..., rotary_dim:]  # pass-through, bit for bit
    with np.errstate(over="ignore"):  # overflow to ±Inf is the IEEE result the golden files expect
        if spec["dtype"] == "bf16":
            return round_to_bfloat16(out.astype(np.float32))
        return out.astype(x.dtype)


def run_candidate(inputs_path, outputs_path):
    data = np.load(inputs_path, allow_pickle=False)
    outputs = {}
    for name in data.files:
        if not name.endswith("/input"):
            continue
        prefix = name[: -len("input")]
        spec = parse_spec(str(data[prefix + "spec"]))
        if not supported(spec):
            continue
        outputs[prefix + "output"] = rope(spec, data[name], data[prefix + "positions"])
    np.savez(outputs_path, **outputs)
    return len(outputs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="?", help="exported inputs (.npz)")
    parser.add_argument("outputs", nargs="?", help="where to write the outputs (.npz)")
    parser.add_argument("--ropecheck", help="the ropecheck binary: run the whole loop")
    parser.add_argument("--golden", help="golden suite file or folder (with --ropecheck)")
    parser.add_argument("--workdir", default=".", help="folder for the exported and output files")
    args = parser.parse_args()
    if not args.ropecheck:
        if not args.inputs or not args.outputs:
            parser.error("expected INPUTS OUTPUTS, or --ropecheck BIN --golden FILE")
        print(f"wrote {run_candidate(args.inputs, args.outputs)} outputs to {args.outputs}")
        return 0
    os.makedirs(args.workdir, exist_ok=True)
    inputs = os.path.join(args.workdir, "inputs.npz")
    outputs = os.path.join(args.workdir, "outputs.npz")
    # --force: the work folder's inputs.npz of an earlier run is replaced (export refuses otherwise)
    subprocess.run([args.ropecheck, "golden", "export", "--golden", args.golden, "--format", "npz", "--out", inputs,
                    "--force"], check=True)
    count = run_candidate(inputs, outputs)
    print(f"numpy candidate: {count} outputs")
    return subprocess.run([args.ropecheck, "check", "--golden", args.golden, "--candidate", outputs, "--allow-missing",
                           "--junit", os.path.join(args.workdir, "rope.xml")]).returncode


if __name__ == "__main__":
    sys.exit(main())
