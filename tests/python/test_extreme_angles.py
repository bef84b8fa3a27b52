"""The oracle passes its own gate at huge angles: ropecheck.apply's outputs for an HF
config whose rope_scaling is linear with factor 1e-308 (θ'_0 = 1e308, angles to 2^1044 at these
positions) pass ropecheck.check under model="exact", the default claim and e <= 1 (correct rounding),
as they do at factor 1e-70 (angles to 2^263). 256-bit exact values had lost every bit of such angles:
the identical bits were judged e = 3.4e7 and blamed on "an angle computed in binary32"."""
import numpy as np
import pytest

import ropecheck


def config(factor):
    return {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 4, "max_position_embeddings": 4096,
            "rope_scaling": {"type": "linear", "factor": factor}, "rope_theta": 10000, "torch_dtype": "float32"}


@pytest.mark.parametrize("factor", [1e-308, 1e-70])
def test_apply_then_check_passes_at_huge_angles(factor):
    spec = ropecheck.Spec.from_hf_config(config(factor))
    x = np.random.default_rng(50).standard_normal((64, 4, 128)).astype(np.float32)
    positions = np.arange(64, dtype=np.int64) * 1000
    y = ropecheck.apply(x, positions, spec)
    for model, tolerance in (("exact", None), (None, None), ("exact", "e=1")):
        result = ropecheck.check(y, x, positions, spec, model=model, tolerance=tolerance)
        assert result.passed, (model, tolerance, result.worst_e, result.diagnosis)
        assert result.worst_e <= 1
