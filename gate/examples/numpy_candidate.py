#!/usr/bin/env python3
"""The user loop of `ropecheck check` with NumPy (docs/gate-walkthrough.md, "Gate your implementation"):

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


def rotate(spec, x, cos, sin, wide_dtype):
    """x [tokens, heads, head_dim] rotated in wide_dtype by cos/sin [tokens, 1, pairs], pairs as the
    spec's layout takes them (docs/rope.md §2), the dims past rotary_dim passed through; returned in
    x's dtype (bf16: rounded to nearest even, held in float32)."""
    rotary_dim = 2 * cos.shape[-1]
    if spec["layout"] == "interleaved":
        first, second = np.arange(0, rotary_dim, 2), np.arange(1, rotary_dim, 2)
    else:
        first, second = np.arange(rotary_dim // 2), np.arange(rotary_dim // 2, rotary_dim)
    wide = x.astype(wide_dtype)
    out = wide.copy()  # the pass-through dims, bit for bit
    xs, ys = wide[..., first], wide[..., second]
    with np.errstate(invalid="ignore", over="ignore"):
        out[..., first] = xs * cos - ys * sin
        out[..., second] = xs * sin + ys * cos
    with np.errstate(over="ignore"):  # overflow to ±Inf is the IEEE result the golden files expect
        if spec["dtype"] == "bf16":
            return round_to_bfloat16(out.astype(np.float32))
        return out.astype(x.dtype)


def rope_float32(spec, x, positions, bug=None):
    """The same rotation as a careful float32 implementation computes it (HF transformers' cached
    cos/sin: inv_freq = 1 / base^(2j/d) and the angle position·inv_freq in float32, cos/sin in
    float32, the rotation in float32, then cast to x's dtype): the class `--model f32-angle`, the
    default claim, accepts (judge/README.md "Models"). `bug` plants one mistake for the README's
    walk-through: "base" uses base 10000 (500000 where the spec's is 10000), "offset" rotates
    position p + 1."""
    rotary_dim = int(spec.get("rotary_dim", spec["head_dim"]))
    base = np.float32(float(spec["base"]))
    if bug == "base":
        base = np.float32(500000 if base == 10000 else 10000)
    inv_freq = np.float32(1) / base ** (np.arange(0, rotary_dim, 2, dtype=np.float32) / np.float32(rotary_dim))
    p = positions.astype(np.float32) + np.float32(1 if bug == "offset" else 0)
    angle = p[:, None] * inv_freq[None, :]
    if spec.get("direction", "forward") == "inverse":
        angle = -angle
    return rotate(spec, x, np.cos(angle)[:, None, :], np.sin(angle)[:, None, :], np.float32)


def rope(spec, x, positions):
    """x: [tokens, heads, head_dim]; positions: [tokens]. Returns the rotated tensor in x's dtype."""
    rotary_dim = int(spec.get("rotary_dim", spec["head_dim"]))
    base = np.longdouble(spec["base"])
    j = np.arange(rotary_dim // 2, dtype=np.longdouble)
    theta = base ** (-2.0 * j / rotary_dim)
    angle = positions.astype(np.longdouble)[:, None] * theta[None, :]  # [tokens, pairs]
    if spec.get("direction", "forward") == "inverse":
        angle = -angle
    return rotate(spec, x, np.cos(angle)[:, None, :], np.sin(angle)[:, None, :], np.longdouble)


def run_candidate(inputs_path, outputs_path, float32=False, bug=None):
    data = np.load(inputs_path, allow_pickle=False)
    outputs = {}
    for name in data.files:
        if not name.endswith("/input"):
            continue
        prefix = name[: -len("input")]
        spec = parse_spec(str(data[prefix + "spec"]))
        if not supported(spec):
            continue
        if (float32 or bug) and spec["dtype"] != "f64":  # float64 data: the wide path either way
            outputs[prefix + "output"] = rope_float32(spec, data[name], data[prefix + "positions"], bug)
        else:
            outputs[prefix + "output"] = rope(spec, data[name], data[prefix + "positions"])
    np.savez(outputs_path, **outputs)
    return len(outputs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="?", help="exported inputs (.npz)")
    parser.add_argument("outputs", nargs="?", help="where to write the outputs (.npz)")
    parser.add_argument("--float32", action="store_true", help="compute as careful float32 code does (HF-style)")
    parser.add_argument("--bug", choices=["base", "offset"], help="plant a mistake (float32): another base, or position + 1")
    parser.add_argument("--ropecheck", help="the ropecheck binary: run the whole loop")
    parser.add_argument("--golden", help="golden suite file or folder (with --ropecheck)")
    parser.add_argument("--workdir", default=".", help="folder for the exported and output files")
    args = parser.parse_args()
    if not args.ropecheck:
        if not args.inputs or not args.outputs:
            parser.error("expected INPUTS OUTPUTS, or --ropecheck BIN --golden FILE")
        print(f"wrote {run_candidate(args.inputs, args.outputs, args.float32, args.bug)} outputs to {args.outputs}")
        return 0
    os.makedirs(args.workdir, exist_ok=True)
    inputs = os.path.join(args.workdir, "inputs.npz")
    outputs = os.path.join(args.workdir, "outputs.npz")
    # --force: the work folder's inputs.npz of an earlier run is replaced (export refuses otherwise)
    subprocess.run([args.ropecheck, "golden", "export", "--golden", args.golden, "--format", "npz", "--out", inputs,
                    "--force"], check=True)
    count = run_candidate(inputs, outputs, args.float32, args.bug)
    print(f"numpy candidate: {count} outputs")
    return subprocess.run([args.ropecheck, "check", "--golden", args.golden, "--candidate", outputs, "--allow-missing",
                           "--junit", os.path.join(args.workdir, "rope.xml")]).returncode


if __name__ == "__main__":
    sys.exit(main())
