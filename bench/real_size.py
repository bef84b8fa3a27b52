#!/usr/bin/python3
"""targets at real size, measured in one run: wall time and peak RSS of each command.

    /usr/bin/python3 bench/real_size.py [--ropecheck build/bin/ropecheck] [--full]

1. `check --spec` of a 4096 x 32 x 128 f32 tensor at positions 0..4095 (target: <= 2 s wall).
2. Llama-3.1-8B's config (hfconfig/examples/llama-3.1-8b.json) over positions 0..131071, 2048 tokens
   x 32 heads x 128 per test: `golden generate` + `check --golden` of a candidate holding the
   expected values (target: < 30 s in all, peak RSS < 1 GB). The default spreads one 2048-token test
   over the whole context (step 64); --full also does every position 0..131071 (64 tests).

The candidate of (1) is float64 numpy rounded to float32 (within an ulp of the correctly rounded
result: it passes); the candidate of (2) is the suite's own expected values, renamed. Peak RSS is
the child's ru_maxrss (os.wait4). Everything is written in a temporary folder, removed afterwards.
Prints figures, asserts nothing: targets belong here, not in timed tests.
"""
import argparse
import json
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def measure(argv, cwd):
    """(wall seconds, peak RSS in MB, exit status) of one command."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.stdout.write(output.decode(errors="replace"))
    return wall, usage.ru_maxrss / 1024.0, code


def write_inputs(folder):
    """x.npy and out.npy of (1), written by a child process (--write-inputs): the parent stays small,
    since a child started by vfork reports the parent's resident pages in its ru_maxrss."""
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, (4096, 32, 128)).astype(np.float32)
    np.save(os.path.join(folder, "x.npy"), x)
    np.save(os.path.join(folder, "out.npy"), rope_f64(np, x, np.arange(4096), 10000.0).astype(np.float32))


def rope_f64(np, x, positions, base):
    """Half-layout RoPE in float64 (docs/rope.md: pairs (i, i + d/2), theta_i = base^(-2i/d))."""
    d = x.shape[-1]
    inv = 1.0 / (base ** (np.arange(0, d, 2, dtype=np.float64) / d))
    angle = positions.astype(np.float64)[:, None] * inv[None, :]
    c, s = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    a, b = x[..., : d // 2].astype(np.float64), x[..., d // 2 :].astype(np.float64)
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def rename_expected(sidecar, out):
    """A candidate file: each SUITE/ID/expected of a sidecar stored as SUITE/ID/output, bytes as is."""
    with open(sidecar, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header, base = json.loads(f.read(n)), 8 + n
        tensors, blobs, offset = {}, [], 0
        for name, entry in header.items():
            if name == "__metadata__" or not name.endswith("/expected"):
                continue
            begin, end = entry["data_offsets"]
            f.seek(base + begin)
            blobs.append(f.read(end - begin))
            tensors[name[: -len("expected")] + "output"] = {
                "dtype": entry["dtype"], "shape": entry["shape"], "data_offsets": [offset, offset + end - begin]}
            offset += end - begin
    text = json.dumps(tensors).encode()
    text += b" " * (-len(text) % 8)
    with open(out, "wb") as g:
        g.write(struct.pack("<Q", len(text)))
        g.write(text)
        for blob in blobs:
            g.write(blob)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ropecheck", default=str(ROOT / "build" / "bin" / "ropecheck"))
    parser.add_argument("--full", action="store_true", help="also every position 0..131071 (64 tests)")
    parser.add_argument("--write-inputs", help=argparse.SUPPRESS)
    parser.add_argument("--rename-expected", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_inputs:
        write_inputs(args.write_inputs)
        return
    if args.rename_expected:
        rename_expected(*args.rename_expected)
        return
    exe = os.path.abspath(args.ropecheck)
    config = str(ROOT / "hfconfig" / "examples" / "llama-3.1-8b.json")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="ropecheck-real-size-") as tmp:
        subprocess.run([sys.executable, __file__, "--write-inputs", tmp], check=True)
        wall, rss, code = measure([exe, "check", "--spec", "layout=half,head_dim=128,base=10000,dtype=f32",
                                   "--positions", "0:4096", "--input", "x.npy", "--candidate", "out.npy"], tmp)
        print(f"check --spec 4096x32x128 f32: {wall:.2f} s wall, {rss:.0f} MB peak RSS, exit {code} (target <= 2 s)")

        runs = [("0:131072:64", "llama-3-1-spread")] + ([("0:131072", "llama-3-1-full")] if args.full else [])
        for positions, name in runs:
            g_wall, g_rss, g_code = measure([exe, "golden", "generate", "--hf-config", config, "--positions", positions,
                                             "--tokens", "2048", "--heads", "32", "--out", name + ".json"], tmp)
            # In a child, as write_inputs: the 1 GB of blobs would count in the check's peak RSS.
            subprocess.run([sys.executable, __file__, "--rename-expected", os.path.join(tmp, name + ".safetensors"),
                            os.path.join(tmp, name + "-candidate.safetensors")], check=True)
            c_wall, c_rss, c_code = measure([exe, "check", "--golden", name + ".json", "--candidate",
                                             name + "-candidate.safetensors"], tmp)
            size = os.path.getsize(os.path.join(tmp, name + ".safetensors")) / 2**20
            print(f"llama-3.1 positions {positions}, 2048 tokens x 32 heads x 128 per test (sidecar {size:.0f} MB): "
                  f"generate {g_wall:.2f} s / {g_rss:.0f} MB (exit {g_code}), check {c_wall:.2f} s / {c_rss:.0f} MB "
                  f"(exit {c_code}); total {g_wall + c_wall:.2f} s (target < 30 s, < 1024 MB)")


if __name__ == "__main__":
    main()
