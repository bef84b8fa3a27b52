"""NumPy arrays and torch tensors to the contiguous buffers the extension takes, and back.

No arithmetic on values happens here except exact conversions: widening to float64 (every f16,
bf16 and f32 value is a double), bf16 bit patterns to float32 (a 16-bit shift) and NumPy's own
correctly rounded narrowing to float32/float16. Rounding to bfloat16 is the C++ reference's
(reference/rounding.h, through _ropecheck.bf16_bits).
"""
import numpy as np

from . import _ropecheck as _rc

# spec dtype -> the NumPy type a result is given in (bf16: float32 holding bfloat16 values).
_RESULT = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "bf16": np.float32}


def _torch():
    """torch when it is already imported (a tensor can only come from it); None otherwise."""
    import sys

    return sys.modules.get("torch")


def is_tensor(x):
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def host_tensor(tensor, what):
    """A torch tensor detached and copied to the host. A tensor without data (device "meta") or one
    NumPy cannot take (sparse, quantized) is refused with one line naming `what` (torch raises
    NotImplementedError or RuntimeError with a message of many lines)."""
    if tensor.device.type == "meta":
        raise ValueError(f"{what}: expected a tensor with data (CPU or CUDA), got a tensor on device 'meta' "
                         f"of shape {list(tensor.shape)}")
    if tensor.layout != _torch().strided or tensor.is_quantized:
        raise ValueError(f"{what}: expected a dense tensor, got layout {tensor.layout}"
                         f"{' (quantized)' if tensor.is_quantized else ''}")
    return tensor.detach().cpu()


def as_numpy(x, what, dtype=None, floats_only=False):
    """x as a NumPy array, values exact: a torch tensor leaves the graph and the device; bf16 is
    widened to float32 (exact). A uint16 array is read as bf16 bit patterns when `dtype` (a spec's
    dtype name: its input_dtype for inputs, its dtype for outputs) is bf16 (the documented uint16
    view) and as float16 bits when it is f16. floats_only: an output, whose integer array would be
    values already truncated (a kernel's result cast to int32): refused, naming the dtype expected."""
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        x = host_tensor(x, what)
        if x.dtype == torch.bfloat16:
            x = x.float()
        x = x.numpy()
    try:
        array = np.asarray(x)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{what}: expected an array or a tensor, got {type(x).__name__} ({error})") from None
    if array.dtype == np.uint16 and dtype in ("bf16", "f16"):
        if dtype == "f16":
            return array.view(np.float16)
        return (array.astype(np.uint32) << 16).view(np.float32)
    if floats_only and array.dtype.kind != "f":
        expected = np.dtype(_RESULT[dtype]).name if dtype in _RESULT else "float32"
        raise ValueError(f"{what}: expected floating-point values ({expected} for the spec's dtype {dtype}; "
                         f"float16, float32 and float64 are read exactly), got an array of {array.dtype}")
    if array.dtype.kind not in "fiu" or array.dtype == np.uint16:
        raise ValueError(f"{what}: expected floating-point values, got an array of {array.dtype}")
    return array


def head_shape(x, spec, what="x"):
    """(token_shape, heads) of [..., heads, head_dim] or [tokens, head_dim] (one head)."""
    if x.ndim < 2:
        raise ValueError(f"{what}: expected shape [..., heads, head_dim] or [tokens, head_dim], got {list(x.shape)}")
    if x.shape[-1] != spec.head_dim:
        raise ValueError(f"{what}: expected last dim head_dim={spec.head_dim} (spec {spec}), got shape {list(x.shape)}")
    if x.ndim == 2:
        return x.shape[:1], 1
    return x.shape[:-2], x.shape[-2]


def positions_of(positions, token_shape, spec, x_shape=None):
    """int64 [tokens, components]: one position per token, broadcast over leading batch dims (a
    [seq] vector serves a [batch, seq, heads, head_dim] tensor). Where the components lie is the
    CLI's rule (gate/positions.h components_axis): [..., components], or Qwen2-VL's [components,
    ...]; one component: any shape ([tokens], [batch, tokens], [tokens, 1]: row-major where it does
    not broadcast). Multi-axis specs also take a tuple of one array per component. x_shape: the
    tensor's shape, refused when it reads as HF's [batch, heads, tokens, head_dim]
    (gate/positions.h heads_before_tokens)."""
    components = spec.position_components
    token_shape = tuple(token_shape)
    if components > 1 and isinstance(positions, tuple) and len(positions) == components:
        array = np.stack(np.broadcast_arrays(*[as_positions(p) for p in positions]), axis=-1)
        shape_given = list(array.shape)
    else:
        array = as_positions(positions)
        shape_given = list(array.shape)
        if _rc.components_axis(list(array.shape), components, "positions") == "first":
            array = np.moveaxis(array, 0, -1)
    given = array.shape[:-1] if components > 1 else array.shape
    if x_shape is not None and len(given) > 0:
        message = _rc.heads_before_tokens(list(x_shape), int(np.prod(given)), spec.head_dim, "x")
        if message:
            raise ValueError(message)
    tail = (components,) if components > 1 else ()
    try:
        array = np.broadcast_to(array, token_shape + tail)
    except ValueError:
        # The tokens in x's order with size-1 dims of their own ([tokens, 1] for [tokens]): the
        # row-major reading the CLI gives a positions file.
        if [d for d in given if d != 1] == [d for d in token_shape if d != 1]:
            return np.ascontiguousarray(array, dtype=np.int64).reshape(-1, components)
        raise ValueError(f"positions: expected one position per token ({components} component(s) each) for tokens "
                         f"of shape {list(token_shape)} (x's dims before [heads, head_dim]), got shape {shape_given}") from None
    return np.ascontiguousarray(array, dtype=np.int64).reshape(-1, components)


def as_positions(positions):
    torch = _torch()
    if torch is not None and isinstance(positions, torch.Tensor):
        positions = host_tensor(positions, "positions").numpy()
    array = np.asarray(positions)
    if array.dtype.kind not in "iu":
        raise ValueError(f"positions: expected integers, got an array of {array.dtype}")
    # Positions travel as int64: a uint64 above 2^63 - 1 would wrap to a negative position (2^64 - 1
    # to -1), so it is refused, as the CLI refuses it in a positions file (gate/positions.h).
    if array.dtype.kind == "u" and array.dtype.itemsize >= 8 and array.size and array.max() > np.iinfo(np.int64).max:
        raise ValueError(f"positions: expected integers of at most 2^63 - 1 (int64), got {int(array.max())}")
    # int64 now (exact after the check): components of mixed uint64 and int64 would stack as float64,
    # rounding positions above 2^53.
    return array.astype(np.int64, copy=False)


def doubles(x):
    return np.ascontiguousarray(x, dtype=np.float64).reshape(-1)


def result_array(values, shape, dtype, bf16="float32", as_torch=False, copy=True):
    """Flat float64 (or float32) values of `dtype` (a spec's dtype name) as the documented result:
    an array of that dtype (bf16: float32 holding bfloat16 values, or with bf16="uint16" their bit
    patterns), or a torch tensor of that dtype (bf16 included) with as_torch=True. copy=False: the
    result may share `values` when no conversion is needed (values the caller does not keep)."""
    if bf16 not in ("float32", "uint16"):
        raise ValueError(f"bf16: expected 'float32' or 'uint16', got {bf16!r}")
    values = values.reshape(shape)
    if as_torch:
        import torch

        torch_dtype = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
        return torch.from_numpy(values).to(torch_dtype)  # exact: every value is one of the dtype
    if dtype == "bf16" and bf16 == "uint16":
        return _rc.bf16_bits(values.reshape(-1)).reshape(shape)
    return values.astype(_RESULT[dtype], copy=copy)
