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
