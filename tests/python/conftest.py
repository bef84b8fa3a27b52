"""Shared fixtures of the Python module's tests (tests/README.md, python/README.md).

ctest runs them with PYTHONPATH=BUILD/python, ROPECHECK_BIN (the command line the module is
compared with) and ROPECHECK_GOLDEN_DIR (golden/suites) set; every test writes only in pytest's
tmp_path.
"""
import json
import os
import subprocess

import numpy as np
import pytest

import ropecheck

GOLDEN_DIR = os.environ.get("ROPECHECK_GOLDEN_DIR", ropecheck.GOLDEN_DIR)


@pytest.fixture(scope="session")
def ropecheck_bin():
    path = os.environ.get("ROPECHECK_BIN")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("ROPECHECK_BIN must name the ropecheck executable (ctest sets it)")
    return path


def run_cli(binary, *args, cwd=None):
    """`ropecheck ARGS` (in folder `cwd`, else the current one): (exit status, stdout, stderr)."""
    done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def golden_suites(kind="rope"):
    """(suite name, parsed JSON) of every checked-in golden file of `kind`, read here with json and
    float.fromhex: independent of the module's own golden reader."""
    out = []
    for name in sorted(os.listdir(GOLDEN_DIR)):
        if name.endswith(".json"):
            with open(os.path.join(GOLDEN_DIR, name)) as f:
                data = json.load(f)
            if data["kind"] == kind:
                out.append((name, data))
    return out


def hex_values(values):
    return np.array([float.fromhex(v) for v in values], dtype=np.float64)
