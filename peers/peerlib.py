"""What the file-route peers (peers/torch, peers/onnx) share: reading `ropecheck golden export`
files, the spec text, and writing a candidate for `ropecheck check` (gate/README.md "File layout").

A peer writes an output for every test it computes; a test it cannot express gets no output and a
reason in OUTPUTS.skipped.json ({"SUITE/ID": reason}), and `ropecheck check --allow-missing` then
counts it as skipped. scripts/peers reads the reasons back for peers/RESULTS.md.
"""
import json

import numpy as np


class Unsupported(Exception):
    """The peer cannot express this spec; the message says why (never guessed around)."""


def parse_spec(text):
    """Canonical spec text (`key=value,...`, lists `/`-separated) -> dict of strings."""
    return dict(item.split("=", 1) for item in text.split(","))


def floats(spec, key):
    """A `/`-separated list parameter as Python floats."""
    return [float(v) for v in spec[key].split("/")]


def rotary_dim(spec):
    return int(spec.get("rotary_dim", spec["head_dim"]))


def exported_tests(path):
    """Yields (prefix "SUITE/ID/", spec dict, input array [tokens, heads, head_dim], positions)."""
    data = np.load(path, allow_pickle=False)
    for name in data.files:
        if name.endswith("/input"):
            prefix = name[: -len("input")]
            yield prefix, parse_spec(str(data[prefix + "spec"])), data[name], data[prefix + "positions"]


def save_candidate(path, outputs, skipped):
    """outputs: {"SUITE/ID/output": array}; skipped: {"SUITE/ID": reason}."""
    np.savez(path, **outputs)
    with open(path + ".skipped.json", "w") as f:
        json.dump(skipped, f, indent=0, sort_keys=True)


def run_over(inputs, outputs_path, compute):
    """Calls compute(spec, x, positions) for every exported test; Unsupported -> skipped with its reason.
    Returns (computed, skipped) counts."""
    outputs, skipped = {}, {}
    for prefix, spec, x, positions in exported_tests(inputs):
        try:
            outputs[prefix + "output"] = compute(spec, x, positions)
        except Unsupported as why:
            skipped[prefix.rstrip("/")] = str(why)
    save_candidate(outputs_path, outputs, skipped)
    return len(outputs), len(skipped)


def one_dtype(spec, why):
    """Unsupported(why) when the inputs' dtype differs from the outputs' (GPT-J's f16 -> f32)."""
    if spec.get("input_dtype", spec["dtype"]) != spec["dtype"]:
        raise Unsupported(why)


def forward_only(spec, why):
    """Unsupported(why) for the inverse rotation."""
    if spec.get("direction", "forward") != "forward":
        raise Unsupported(why)


def main(tag, load, argv=None):
    """The command line every file-route peer shares (scripts/peers): `PEER INPUTS.npz OUT_DIR`.

    load() imports the library and returns (the RESULTS.md header line, {implementation name:
    compute(spec, x, positions)}); any exception from it means the library is not there: one line
    on stderr, exit 3 (scripts/peers then skips the peer, saying why). Each implementation's
    candidate is OUT_DIR/NAME.npz (run_over)."""
    import argparse
    import os
    import sys

    parser = argparse.ArgumentParser(description=f"{tag}: a ropecheck file-route peer (peers/README.md)")
    parser.add_argument("inputs")
    parser.add_argument("out_dir")
    args = parser.parse_args(argv)
    try:
        header, implementations = load()
    except Exception as why:  # noqa: BLE001 - any failure to load means: peer not installed
        print(f"{tag}: cannot load its library: {why}".splitlines()[0], file=sys.stderr)
        return 3
    os.makedirs(args.out_dir, exist_ok=True)
    print(header)
    for name, compute in implementations.items():
        run_over(args.inputs, os.path.join(args.out_dir, name + ".npz"), compute)
    return 0
