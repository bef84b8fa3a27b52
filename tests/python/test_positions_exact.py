"""Positions from a JSON file are the integers as written, exactly as the same list on the command
line (they went through double: 2^53 + 1 became 2^53). Files in pytest's tmp_path only."""
import os
import subprocess

import pytest

BIN = os.environ.get("ROPECHECK_BIN", "")


@pytest.mark.skipif(not BIN, reason="ROPECHECK_BIN is not set (ctest sets it)")
def test_json_positions_above_2_53_are_exact(tmp_path):
    listed = [2**53 + 1, 2**53 + 3, 2**53 + 5, 2**53 + 7]
    (tmp_path / "positions.json").write_text(str(listed))
    common = ["apply", "--spec", "head_dim=2,base=10000,dtype=f64", "--input", "1,0,1,0,1,0,1,0", "--format", "hex"]
    from_file = subprocess.run([BIN, *common, "--positions", str(tmp_path / "positions.json")], capture_output=True, text=True)
    from_list = subprocess.run([BIN, *common, "--positions", ",".join(map(str, listed))], capture_output=True, text=True)
    assert from_file.returncode == 0 and from_list.returncode == 0, from_file.stderr + from_list.stderr
    assert from_file.stdout == from_list.stdout
    rows = from_file.stdout.split()
    assert len(set(zip(rows[0::2], rows[1::2]))) == 4  # four distinct positions, four distinct rotations


@pytest.mark.skipif(not BIN, reason="ROPECHECK_BIN is not set (ctest sets it)")
def test_npy_positions_above_2_53_are_exact(tmp_path):
    """An int64 .npy file's positions as stored: 2^53 + 1 was read through double as 2^53."""
    import numpy as np

    listed = [2**53 + 1, 2**53 + 3]
    np.save(tmp_path / "positions.npy", np.array(listed, dtype=np.int64))
    common = ["apply", "--spec", "head_dim=2,base=10000,dtype=f64", "--input", "1,0,1,0", "--format", "hex"]
    from_file = subprocess.run([BIN, *common, "--positions", str(tmp_path / "positions.npy")], capture_output=True, text=True)
    from_list = subprocess.run([BIN, *common, "--positions", ",".join(map(str, listed))], capture_output=True, text=True)
    rounded = subprocess.run([BIN, *common, "--positions", f"{2**53},{2**53 + 4}"], capture_output=True, text=True)
    assert from_file.returncode == 0 and from_list.returncode == 0, from_file.stderr + from_list.stderr
    assert from_file.stdout == from_list.stdout
    assert from_file.stdout != rounded.stdout  # not the doubles nearest to them
