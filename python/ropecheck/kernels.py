"""The project's fast, accurate RoPE kernels (optimized/, include/ropecheck/kernel.h) on NumPy arrays
and torch tensors: `ropecheck.kernels.apply(x, positions, spec, impl="auto")`.

Each kernel's error bound is proven (optimized/error_bounds.h, proofs/formal/) and checked against
the reference in the project's tests (tests/optimized/).
impl: "auto" (the best CPU kernel: avx512bf16, else avx512, else avx2, else scalar), "scalar",
"avx2", "avx512", "avx512bf16", "cuda" (host memory in and out). Arrays already in the spec's
storage type (float64, float32, float16; bf16 as a torch.bfloat16 tensor or uint16 bit patterns) are not converted.
"""
import numpy as np

from . import _checks as _c
from . import _ropecheck as _rc
from . import _tensors as _t


def names():
    """Every kernel name and whether it runs here: {name: resolved name or None}."""
    return {name: _rc.kernel_resolve(name) for name in _rc.kernel_names() + ["auto"]}


def resolve(impl="auto"):
    """The kernel `impl` runs as here ("auto" -> "avx512", ...); None when unavailable."""
    return _rc.kernel_resolve(_c.text(impl, "--impl", "a kernel name"))


def _storage(x, spec):
    """x in the spec's storage type, C-contiguous: exact when already of it; otherwise NumPy's
    correctly rounded narrowing (f32, f16) or the reference's rounding to bfloat16."""
    storage = _rc.storage_dtype(spec)
    if _t.is_tensor(x):
        import torch

        if spec.dtype == "bf16" and x.dtype == torch.bfloat16:
            return _t.host_tensor(x, "x").contiguous().view(torch.int16).numpy().view(np.uint16), x.shape
    array = _t.as_numpy(x, "x", spec.dtype) if not (isinstance(x, np.ndarray) and x.dtype == storage) else x
    if array.dtype == storage:
        return np.ascontiguousarray(array), array.shape
    if spec.dtype == "bf16":
        return _rc.bf16_bits(_t.doubles(array)).reshape(array.shape), array.shape
    return np.ascontiguousarray(array, dtype=storage), array.shape


def apply(x, positions, spec, *, impl="auto", threads=0, as_torch=False, bf16="float32"):
    """RoPE of x at positions by a project kernel; the result in the spec's dtype, x's shape
    (bf16 as in ropecheck.apply: float32 holding bfloat16 values, bf16="uint16" for the bit
    patterns, as_torch=True for a torch tensor). threads: 0 = all cores."""
    from . import _spec

    spec = _spec(spec)
    impl = _c.text(impl, "--impl", "a kernel name (auto, scalar, avx2, avx512, avx512bf16, cuda)")
    threads = _c.integer(threads, "threads", 0, 4096)  # 0: all cores; the bound of the CLI's --threads
    if bf16 not in ("float32", "uint16"):
        raise ValueError(f"bf16: expected 'float32' or 'uint16', got {bf16!r}")
    array, shape = _storage(x, spec)
    token_shape, heads = _t.head_shape(array, spec)
    where = _t.positions_of(positions, token_shape, spec, shape)
    out = _rc.kernel_apply(spec, array, heads, where, impl, threads).reshape(shape)
    if spec.dtype != "bf16":
        if as_torch:
            import torch

            return torch.from_numpy(out)
        return out
    if as_torch:
        import torch

        return torch.from_numpy(out.view(np.int16)).view(torch.bfloat16)
    if bf16 == "uint16":
        return out
    return (out.astype(np.uint32) << 16).view(np.float32)
