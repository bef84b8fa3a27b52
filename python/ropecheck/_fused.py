"""The fused operation (RMSNorm -> RoPE -> FP8 -> KV cache; fused/README.md) for gate() and
assert_rope_close(): the user's callable run on inputs the C++ side draws (fused::random_inputs),
its outputs read back exactly, and the judgement fused::judge_fused's, its report text the CLI's
(`ropecheck fused check`). No value is computed here.

The callable: fn(q, k, positions, q_weight, k_weight) for a contiguous destination, and
fn(q, k, positions, q_weight, k_weight, slot_mapping, k_cache) for a paged one. q [tokens, q_heads,
head_dim] and k [tokens, k_heads, head_dim] in the spec's input dtype (NumPy, bf16 as float32; or
torch with as_torch=True), positions [tokens] (or [tokens, components]), the weights [head_dim]
(None without a norm), slot_mapping [tokens] (-1: skip the token), k_cache [num_blocks, block_size,
k_heads, head_dim] of zeros in the output type (the data dtype, or with FP8 uint8 codes) for the
callable to write into. It returns (q_out, k_out) or, with a scale it chooses (scale=per_token or
per_head), (q_out, k_out, q_scale, k_scale); k_out is the cache pages when the destination is
paged; a dict with those names works too. FP8 outputs are uint8 codes (a torch float8 tensor is
read as its codes) or the FP8 values as floats, NOT multiplied by the scale; scales are
[tokens] (per_token) or [tokens, heads] (per_head).
"""
import numpy as np

from . import _callable as _fn
from . import _checks as _c
from . import _ropecheck as _rc
from . import _tensors as _t

# Inputs drawn per judgement unless told: token counts and seeds of the draws (positions up to
# 8191, fused/fused.h random_inputs).
DEFAULT_TOKENS = 64
DEFAULT_DRAWS = 3

_OUTPUTS = ("q_out", "k_out", "q_scale", "k_scale")


def is_fused(spec):
    """Whether `spec` is a fused spec: text holding a fused key (fused/fused.h has_fused_keys)."""
    return isinstance(spec, str) and _rc.fused_has_keys(spec)


class FusedResult:
    """The judgement of a fused callable over its draws: `passed`, `verdict` ("pass" or "fail"),
    `model`, `spec` (canonical), `implementation`, `draws` (one dict per draw: tokens, seed,
    verdict, tensors [(name, worst_e, judged, failed)], first_failure, bound, derivation,
    explanation, report, call (the call's failure, "" when it returned outputs)), `report` (the
    report text of the first failing draw, else of the first), `summary()` (the AssertionError
    message)."""

    def __init__(self, implementation, spec, model, draws):
        self.implementation = implementation
        self.spec = spec
        self.model = model
        self.draws = draws
        self.passed = all(d["passed"] for d in draws)
        self.verdict = "pass" if self.passed else "fail"
        failing = [d for d in draws if not d["passed"]]
        self.report = (failing or draws)[0]["report"]

    def summary(self):
        failing = [d for d in self.draws if not d["passed"]]
        if self.passed:
            head = (f"ropecheck: PASS: {self.implementation} meets the claim {self.model} on the fused spec "
                    f"({len(self.draws)} draw(s))")
        else:
            head = (f"ropecheck: FAIL: {self.implementation} does not meet the claim {self.model} on the fused spec "
                    f"({len(failing)} of {len(self.draws)} draw(s) failed)")
        lines = [head, f"  spec {self.spec}"]
        for d in failing[:1] or self.draws[:1]:
            lines.append(f"  draw: {d['tokens']} tokens, seed {d['seed']}")
            if d["call"]:
                lines.append(f"  the call: {d['call']}")
            lines.extend("  " + line for line in d["report"].splitlines())
        return "\n".join(lines)

    def __repr__(self):
        return f"FusedResult({self.verdict}, {self.implementation}, {self.spec!r})"


def judge(fn, spec, model=None, *, tokens=DEFAULT_TOKENS, draws=DEFAULT_DRAWS, seed=1, as_torch=False, device=None,
          name=None, limits=None):
    """fn judged on `draws` draws of `tokens` tokens (seeds seed, seed + 1, ...) -> FusedResult."""
    info = _rc.fused_spec_info(spec)
    text = info["canonical"]
    model = "" if model is None else _c.text(model, "--model", "exact or f32-angle")
    tokens = _c.integer(tokens, "tokens", 1, 1 << 20)
    draws = _c.integer(draws, "draws", 1, 1000)
    seed = _c.integer(seed, "--seed", 0, _c.UINT64_MAX - 1000)
    _check_callable(fn, info)
    device = _fn.device_of(device, as_torch)
    label = name if name is not None else _fn_name(fn)
    results = []
    for i in range(draws):
        inputs = _rc.fused_inputs(text, tokens, seed + i)
        results.append(_one_draw(fn, info, inputs, model, as_torch, device, label, limits, tokens, seed + i))
    return FusedResult(label, text, results[0]["model"], results)


def _fn_name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


def _check_callable(fn, info):
    import inspect

    paged = info["destination"] == "paged"
    arguments = 7 if paged else 5
    names = "q, k, positions, q_weight, k_weight" + (", slot_mapping, k_cache" if paged else "")
    if not callable(fn):
        raise ValueError(f"fn: expected a callable fn({names}), got {type(fn).__name__}")
    try:
        inspect.signature(fn).bind(*range(arguments))
    except TypeError:
        raise ValueError(f"fn: expected a callable taking {arguments} arguments ({names}) for this fused spec, "
                         f"got {_fn_name(fn)}{inspect.signature(fn)}") from None
    except ValueError:  # no signature (a builtin): called as it is
        pass


def _counts(info, inputs):
    """The element count of each output, in the order of the flat reply: q_out, k_out (or the
    cache), q_scale, k_scale."""
    tokens, d = inputs["q"].shape[0], info["head_dim"]
    q_out = tokens * info["q_heads"] * d
    if info["destination"] == "paged":
        k_out = int(inputs["num_blocks"]) * info["block_size"] * info["k_heads"] * d
    else:
        k_out = tokens * info["k_heads"] * d
    scales = (0, 0)
    if info["fp8"] != "none" and info["scale"] != "fixed":
        per_head = info["scale"] == "per_head"
        scales = (tokens * (info["q_heads"] if per_head else 1), tokens * (info["k_heads"] if per_head else 1))
    return (q_out, k_out) + scales


def _one_draw(fn, info, inputs, model, as_torch, device, label, limits, tokens, seed):
    counts = _counts(info, inputs)
    wrapped = _wrap(fn, info, inputs, counts, as_torch, device)
    status, message, flat = _rc.fused_call(wrapped, label, info["canonical"], sum(counts),
                                           limits if limits is not None else _rc.CallableLimits())
    outputs = {}
    if status == "ok":
        start = 0
        for key, count in zip(_OUTPUTS, counts):
            outputs[key] = flat[start:start + count]
            start += count
        if info["destination"] == "paged":
            outputs["k_cache"] = outputs.pop("k_out")
        judged = _rc.fused_judge(info["canonical"], inputs, outputs, model)
        judged.update(tokens=tokens, seed=seed, call="")
        return judged
    # The call failed: no outputs to judge; the report says how it failed, and it is a failure.
    text = f"{status}: {message}"
    return {"verdict": "fail", "passed": False, "model": model or _rc.JudgeArguments().model, "tensors": [],
            "first_failure": None, "bound": "", "derivation": "", "explanation": text, "tokens": tokens, "seed": seed,
            "call": text, "report": f"fused: FAIL: the call failed ({text})\n"}


def _wrap(fn, info, inputs, counts, as_torch, device):
    """The callable as callable.cpp calls it: (Spec, x, positions) -> the flat outputs; x and
    positions are unread (fused_call's placeholders), the fused inputs are `inputs`."""
    rope = _rc.Spec(info["rope"])
    paged = info["destination"] == "paged"
    fp8 = info["fp8"] != "none"

    def tensor(values, dtype):
        return _t.result_array(np.ascontiguousarray(values), values.shape, dtype, "float32", as_torch)

    def call(_spec, _x, _positions):
        q = tensor(inputs["q"], rope.input_dtype)
        k = tensor(inputs["k"], rope.input_dtype)
        positions = inputs["positions"]
        positions = positions[:, 0] if positions.shape[1] == 1 else positions
        norm = info["norm"] != "none"
        q_weight = tensor(inputs["q_weight"], rope.input_dtype) if norm else None
        k_weight = tensor(inputs["k_weight"], rope.input_dtype) if norm else None
        args = [q, k, np.ascontiguousarray(positions), q_weight, k_weight]
        if paged:
            shape = (int(inputs["num_blocks"]), info["block_size"], info["k_heads"], info["head_dim"])
            if fp8:
                cache = np.zeros(shape, dtype=np.uint8)
            else:
                cache = _t.result_array(np.zeros(shape), shape, rope.dtype, "float32", False)
            args += [np.ascontiguousarray(inputs["slot_mapping"]), cache]
        if as_torch:
            import torch

            args = [torch.from_numpy(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a for a in args]
            if device is not None:
                args = [a.to(device) if a is not None else None for a in args]
        try:
            out = fn(*args)
            return _flatten(out, info, rope, counts)
        except Exception as error:
            _fn._describe_into(error, as_torch)
            raise

    return call


def _flatten(out, info, rope, counts):
    """The callable's outputs, checked against the counts and read exactly, as one float64 array."""
    k_name = "k_cache" if info["destination"] == "paged" else "k_out"
    scaled = counts[2] > 0
    if isinstance(out, dict):
        values = [out.get("q_out"), out.get(k_name, out.get("k_out")), out.get("q_scale"), out.get("k_scale")]
    elif isinstance(out, (tuple, list)) and len(out) in (2, 4):
        values = list(out) + [None] * (4 - len(out))
    else:
        wanted = f"(q_out, {k_name}" + (", q_scale, k_scale)" if scaled else ")")
        raise ValueError(f"fused output: expected a tuple {wanted} or a dict of those names, got {_c.short(out)}")
    names = ("q_out", k_name, "q_scale", "k_scale")
    flat = []
    for name, value, count in zip(names, values, counts):
        if count == 0:
            continue  # a scale not returned under scale=fixed (or without FP8): not read
        if value is None:
            raise ValueError(f"{name}: expected {count} values for this fused spec ({info['scale']} scale), got none")
        array = _values(value, name, info, rope, name.endswith("scale"))
        if array.size != count:
            raise ValueError(f"{name}: expected {count} values, got {array.size} (shape {list(array.shape)})")
        flat.append(array.reshape(-1))
    return np.concatenate(flat)


def _values(value, name, info, rope, is_scale):
    """One output as float64 values: FP8 uint8 codes (a torch float8 tensor's codes) decoded by the
    spec's format; bf16/f16 bit patterns as the data dtype; floats as they are."""
    torch = _t._torch()
    if torch is not None and isinstance(value, torch.Tensor):
        value = _t.host_tensor(value, name)
        if "float8" in str(value.dtype):
            value = value.view(torch.uint8)
        if value.dtype == torch.uint8:
            value = value.numpy()
    if not is_scale and info["fp8"] != "none":
        array = np.asarray(value) if isinstance(value, np.ndarray) else None
        if array is not None and array.dtype == np.uint8:
            return _rc.fused_decode_fp8(info["canonical"], np.ascontiguousarray(array)).reshape(array.shape)
    # bf16/f16 bit patterns (uint16) only for the data dtype's outputs; FP8 values and scales are floats.
    dtype = None if is_scale or info["fp8"] != "none" else rope.dtype
    array = _t.as_numpy(value, name, dtype, floats_only=True)
    return _t.doubles(array).reshape(array.shape)
