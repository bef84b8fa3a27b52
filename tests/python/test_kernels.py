"""ropecheck.kernels.apply: the project's kernels on NumPy arrays and torch tensors, judged by the
gate over the golden suites under the exact model (their proven bounds are within its default),
and the same bits from every kernel this machine runs (the ISAs are bit-identical by design)."""
import numpy as np
import pytest

import ropecheck


def kernel(x, positions, spec):
    return ropecheck.kernels.apply(x, positions, spec)


def test_auto_kernel_passes_the_gate_on_f32_bf16_and_f16_suites():
    result = ropecheck.gate(kernel, select=lambda s: s.dtype != "f64" and s.base == "10000" and s.scaling == "none",
                            model="exact")
    assert len(result.groups) >= 6
    assert result.passed, result.summary()


def test_every_available_kernel_gives_the_same_bits():
    spec = ropecheck.Spec("layout=interleaved,head_dim=128,base=500000,dtype=bf16")
    rng = np.random.default_rng(7)
    x = rng.uniform(-4, 4, size=(33, 2, 128))
    positions = rng.integers(0, 2**31 - 1, size=33)
    available = [name for name, resolved in ropecheck.kernels.names().items() if resolved and name != "cuda"]
    results = {name: ropecheck.kernels.apply(x, positions, spec, impl=name, bf16="uint16") for name in available}
    first = results[available[0]]
    assert first.dtype == np.uint16 and first.shape == x.shape
    for name, out in results.items():
        assert np.array_equal(out, first), name


def test_torch_bf16_in_and_out():
    torch = pytest.importorskip("torch")
    spec = "layout=half,head_dim=64,base=10000,dtype=bf16"
    q = torch.randn(2, 5, 4, 64, generator=torch.Generator().manual_seed(3)).to(torch.bfloat16)
    out = ropecheck.kernels.apply(q, torch.arange(5), spec, as_torch=True)
    assert out.dtype == torch.bfloat16 and out.shape == q.shape
    as_float = ropecheck.kernels.apply(q.float().numpy(), np.arange(5), spec)
    assert np.array_equal(out.float().numpy(), as_float)
