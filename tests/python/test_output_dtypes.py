"""Outputs are floating-point values: an integer array (a kernel's result cast to int32, already
truncated) is refused naming the dtype expected, as bool and complex outputs are; and the package
imported from the source tree, without its compiled extension, says to build first."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ropecheck

SPEC = "layout=half,head_dim=4,base=10000,dtype=f32"


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.bool_, np.complex64])
def test_a_callables_non_float_output_fails_naming_the_dtype_expected(dtype):
    def kernel(x, positions):
        return np.zeros(x.shape, dtype=dtype)

    result = ropecheck.judge_callable(kernel, SPEC, samples=64, max_position=1000)
    assert not result.passed
    messages = " ".join(c.message for g in result.groups for c in g.worst_cases)
    assert "expected floating-point values" in messages
    assert np.dtype(dtype).name in messages
    if dtype in (np.int32, np.int64, np.uint8):
        assert "float32 for the spec's dtype f32" in messages


def test_check_refuses_an_integer_output():
    x = np.ones((2, 1, 4), dtype=np.float32)
    with pytest.raises(ValueError, match=r"output: expected floating-point values \(float32 for the spec's dtype f32.*got an array of int32"):
        ropecheck.check(x.astype(np.int32), x, [0, 1], SPEC)


def test_importing_the_source_tree_says_to_build_first(tmp_path):
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
    done = subprocess.run([sys.executable, "-B", "-c", "import ropecheck"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": os.path.abspath(source)}, timeout=60)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ropecheck: the compiled extension ropecheck._ropecheck is not in"), done.stderr
    assert "build first" in last and "pip install ." in last
    assert "circular import" not in done.stderr
