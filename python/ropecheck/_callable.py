"""The user's function as the C++ judge calls it (python/callable.cpp): its inputs in the tensor
library and on the device it takes, only the positions it accepts, and an exception it raises told
with where in the user's code it was raised and a hint for the common causes."""
import os
import traceback

import numpy as np

from . import _checks as _c
from . import _tensors as _t

# The package's own folder: frames in it are ropecheck's, not the user's.
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The standard library's folder: its frames are not the user's either.
_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__))
# The attribute callable.cpp reads an exception's one-line description from (set by wrap()).
DESCRIPTION_ATTRIBUTE = "_ropecheck_description"
# The most of an exception's message a description keeps, in characters (callable.h
# kMaxMessageBytes bounds it again in UTF-8 bytes): a 100 MiB message is not copied.
MESSAGE_CHARACTERS = 2048


def device_of(device, as_torch):
    """The torch device the callable's inputs are handed on: None (torch's default, the CPU) or a
    torch.device parsed from any device string torch takes ("cpu", "cuda", "cuda:1", "mps")."""
    if device is None:
        return None
    if not as_torch:
        raise ValueError(f"device: applies to torch tensors; give as_torch=True with device={_c.short(device)}")
    import torch

    if isinstance(device, torch.device):
        return device
    text = _c.text(device, "device", "a torch device such as 'cpu' or 'cuda:0'")
    try:
        return torch.device(text)
    except (RuntimeError, ValueError) as error:
        raise ValueError(f"device: expected a torch device such as 'cpu' or 'cuda:0', got {text!r} ({error})") from None


def wrap(fn, as_torch, with_spec, max_position=None, device=None):
    """fn as the C++ judge calls it: (Spec, float64 [tokens, heads, head_dim], int64 [tokens,
    components]) -> flat float64. fn gets x in the spec's input dtype (NumPy, bf16 as float32; or
    torch on `device` with as_torch=True) and positions [tokens] (one component) or [tokens,
    components]; its outputs are taken from any device.

    max_position: the largest position fn accepts (a cos/sin table's length - 1). Tokens with a
    position component above it are not handed to fn: it is called with the other tokens only (not
    at all when none is left). The judge, given the same bound (python/ropecheck/__init__.py),
    judges no token above it (judge/group.h tokens_beyond_max_position, skipped_by_position) and
    its diagnosis reads none (judge/diagnosis.h within_max_position): the left-out tokens' outputs
    are their inputs, read by nothing."""

    def call_on(spec, x, positions):
        inputs = _t.result_array(x, x.shape, spec.input_dtype, "float32", as_torch)
        where = positions[:, 0] if positions.shape[1] == 1 else positions
        if as_torch:
            import torch

            where = torch.from_numpy(np.ascontiguousarray(where))
            if device is not None:
                inputs, where = inputs.to(device), where.to(device)
        try:
            out = fn(inputs, where, spec) if with_spec else fn(inputs, where)
        except Exception as error:
            _describe_into(error, as_torch)
            raise
        return _t.doubles(_t.as_numpy(out, "output", spec.dtype, floats_only=True))

    def call(spec, x, positions):
        if max_position is None:
            return call_on(spec, x, positions)
        kept = positions.max(axis=1) <= max_position
        if kept.all():
            return call_on(spec, x, positions)
        out = np.array(x, dtype=np.float64)  # the left-out tokens' outputs: their inputs
        if kept.any():
            shape = (int(kept.sum()),) + out.shape[1:]
            out[kept] = call_on(spec, np.ascontiguousarray(x[kept]), np.ascontiguousarray(positions[kept])).reshape(shape)
        return out.reshape(-1)

    return call


def _describe_into(error, as_torch):
    """Stores describe(error)'s text on the exception for callable.cpp; an exception that takes no
    attribute keeps its own text."""
    try:
        setattr(error, DESCRIPTION_ATTRIBUTE, describe(error, as_torch))
    except Exception:  # noqa: BLE001  (a type with __slots__ or a read-only __setattr__)
        pass


def describe(error, as_torch):
    """One line: "TYPE: message (raised at FILE:LINE in FUNCTION); hint: ...". FILE:LINE is the
    innermost frame of the user's own code (not ropecheck's, not an installed library's), else the
    outermost frame below ropecheck's call (the callable itself)."""
    message = str(error)[:MESSAGE_CHARACTERS].split("\n", 1)[0].rstrip()
    text = type(error).__name__ + (f": {message}" if message else "")
    where = _user_frame(error.__traceback__)
    if where is not None:
        text += f" (raised at {_short_path(where.filename)}:{where.lineno} in {where.name})"
    hint = _hint(error, message, as_torch)
    return text + (f"; hint: {hint}" if hint else "")


def _library_file(path):
    parts = os.path.normpath(path).split(os.sep)
    return ("site-packages" in parts or "dist-packages" in parts or path.startswith("<")
            or os.path.abspath(path).startswith(_STDLIB_DIR + os.sep))


def _user_frame(trace):
    frames = [f for f in traceback.extract_tb(trace)
              if os.path.dirname(os.path.abspath(f.filename)) != _PACKAGE_DIR]
    if not frames:
        return None
    own = [f for f in frames if not _library_file(f.filename)]
    return own[-1] if own else frames[0]


def _short_path(path):
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


# The common causes an exception's type and message point at, and what to change.
def _hint(error, message, as_torch):
    lowered = message.lower()
    if not as_torch and isinstance(error, (AttributeError, TypeError)) and "numpy" in lowered:
        return "the callable looks like it expects torch tensors; pass as_torch=True"
    if as_torch and isinstance(error, (AttributeError, TypeError)) and "'tensor'" in lowered:
        return "the callable looks like it expects NumPy arrays; leave as_torch unset"
    if as_torch and "device" in lowered and ("cuda" in lowered or "expected all tensors" in lowered):
        return "the inputs are on the device given by device= (the CPU by default); give the one the callable's tables are on"
    if isinstance(error, IndexError) and ("out of bounds" in lowered or "out of range" in lowered):
        return ("a table (cos/sin cache) shorter than the positions ropecheck draws? give max_position= its "
                "length - 1: no position above it is handed to the callable")
    if "size of tensor" in lowered or "could not be broadcast" in lowered or "shape" in lowered:
        return "x is [tokens, heads, head_dim] and positions [tokens] (or [tokens, components])"
    return ""
