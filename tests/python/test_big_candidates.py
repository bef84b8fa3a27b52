"""`ropecheck check --golden` takes an .npz candidate of any size: above 2^24 bytes the .npy and
safetensors files are read a test at a time, and an .npz (or JSON) is read whole — it was refused
("expected a .npy file ... or a safetensors file"). Files in pytest's tmp_path only."""
import json
import os
import subprocess

import numpy as np
import pytest

BIN = os.environ.get("ROPECHECK_BIN", "")
SPEC = "layout=half,head_dim=128,base=10000,dtype=f32"


def hf_rope(x, positions):
    inv = (1.0 / (10000.0 ** (np.arange(0, 128, 2, dtype=np.float32) / 128))).astype(np.float32)
    angle = positions.astype(np.float32)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(angle)] * 2, -1)[:, None, :]
    sin = np.concatenate([np.sin(angle)] * 2, -1)[:, None, :]
    return (x * cos + np.concatenate([-x[..., 64:], x[..., :64]], -1) * sin).astype(np.float32)


def read_safetensors(path):
    """name -> array of a safetensors file (8-byte little-endian header length, JSON header, data)."""
    raw = path.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + size])
    kinds = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(raw[8 + size + begin:8 + size + end], dtype=kinds[entry["dtype"]]).reshape(entry["shape"])
    return out


@pytest.mark.skipif(not BIN, reason="ROPECHECK_BIN is not set (ctest sets it)")
def test_an_npz_candidate_above_16_mib_is_judged(tmp_path):
    suite = tmp_path / "big.json"
    made = subprocess.run([BIN, "golden", "generate", "--spec", SPEC, "--positions", "0:8400", "--tokens", "8400", "--heads", "4",
                           "--out", str(suite)], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    data = read_safetensors(tmp_path / "big.safetensors")  # a suite this size keeps its arrays there
    outputs = {name[: -len("input")] + "output": hf_rope(data[name], data[name[: -len("input")] + "positions"])
               for name in data if name.endswith("/input")}
    candidate = tmp_path / "candidate.npz"
    np.savez(candidate, **outputs)
    assert candidate.stat().st_size > 2**24
    checked = subprocess.run([BIN, "check", "--golden", str(suite), "--candidate", str(candidate), "--model", "f32-angle"],
                             capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr
