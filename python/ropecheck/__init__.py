"""ropecheck in Python: the exact RoPE oracle, and the gate, where RoPE kernels are written and tested.

    import ropecheck
    ropecheck.assert_rope_close(out, x, positions, "layout=half,head_dim=128,base=500000,dtype=bf16")
                                                            # in place of torch.testing.assert_close
    ropecheck.assert_rope_close(my_rope, spec="layout=half,head_dim=128,base=500000,dtype=f32",
                                as_torch=True, max_position=131071)  # inputs drawn by ropecheck

The claim judged, unless model= names another: DEFAULT_MODEL (f32-angle, the judge's default:
a careful float32 implementation meets it). A callable is handed no position above max_position.

Every function is a thin layer over the C++ libraries (python/README.md): the same spec parser,
reference, verdict rule, tolerances and reports as the `ropecheck` command.

Tensors: NumPy arrays or torch tensors (bf16 included; a callable's on device=), shape [..., heads, head_dim] or
[tokens, head_dim]; positions an int array with one position per token (broadcast over leading
batch dims), for multi-axis specs (2d, mrope) a tuple of one int array per component or an int
array [..., components].

dtypes: results are NumPy arrays of the spec's dtype (f64 float64, f32 float32, f16 float16);
bf16, which NumPy lacks, as float32 holding the bfloat16 values exactly (bf16="uint16": their bit
patterns, the top halves of the float32 words); as_torch=True gives a torch tensor of the spec's
dtype, torch.bfloat16 included. Inputs of any float dtype are accepted; a uint16 array is read as
bf16 (or f16) bit patterns when the spec's dtype is bf16 (f16).

Errors: bad arguments raise ValueError with the command line's one-line message; failures of the
gate raise AssertionError (assert_rope_close only); nothing the module does crashes the
interpreter. A callable runs in this process unless isolate=True or timeout= is given: then each
call runs in a forked child, and its crash or hang is that test's failure (python/README.md
"Isolation of a callable").
"""
import importlib.util
import inspect
import os
import re
import warnings

import numpy as np

# The compiled extension first: python/ropecheck/ of the source tree holds none (every submodule
# imports it, and a missing one surfaced as a circular import of a submodule).
if importlib.util.find_spec(__name__ + "._ropecheck") is None:
    raise ImportError(
        f"ropecheck: the compiled extension ropecheck._ropecheck is not in {os.path.dirname(os.path.abspath(__file__))} "
        "(a source tree, or an incomplete install): build first, then import the built package: `cmake -S . -B build && cmake --build build "
        "--target _ropecheck` and PYTHONPATH=build/python, or `pip install .` (python/README.md)")

from . import _callable as _fn
from . import _checks as _c
from . import _fused
from . import _ropecheck as _rc
from . import _tensors as _t
from ._ropecheck import (Case, Group, LayerRotation, ModelRotations, Result, Spec, __version__,  # noqa: F401
                         hf_config_rotations)

# The golden suites the package carries, beside this file: installed by `pip install .`
# (pyproject.toml); in a build folder, a link to the repository's golden/suites (python/CMakeLists.txt).
GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")

MAX_POSITION = 2**31 - 1

# The claim judged when none is named: the C++ default (judge/tolerance.h kDefaultModel, the
# default of gate/judge_args.h JudgeArguments::model), read from it: f32-angle, the class a careful
# float32 implementation belongs to.
DEFAULT_MODEL = _rc.JudgeArguments().model

__all__ = ["Spec", "Result", "Group", "Case", "FusedResult", "apply", "check", "assert_rope_close", "gate", "kernels",
           "fused_gate", "hf_config_rotations", "ModelRotations", "LayerRotation", "GOLDEN_DIR", "MAX_POSITION", "DEFAULT_MODEL", "RoundedInputWarning"]


FusedResult = _fused.FusedResult


class RoundedInputWarning(UserWarning):
    """check() rounded input values that were not values of the spec's input dtype to it."""


def _spec(spec):
    if spec is None:
        raise ValueError("spec: expected the compact text (layout=half,head_dim=128,...), a dict or a Spec, got None")
    return spec if isinstance(spec, Spec) else Spec(spec)


_MODELS = "exact, f32-angle or f32-recipe"


def _arguments(model=None, tolerance=None, max_position=None, skip_flags=None, require_horizon=None,
               strict_zeros=False, worst=10, threads=0):
    """The CLI's judging options (gate/judge_args.h), parsed once in C++ (settings_of) with the CLI's messages.
    model None: the judge's default claim (DEFAULT_MODEL), left to the C++ default."""
    args = _rc.JudgeArguments()
    if model is not None:
        args.model = _c.text(model, "--model", _MODELS)
    if tolerance is not None:
        # The one --tolerance grammar (judge/tolerance.h parse_tolerance): "e=3", "ulp=4,theta_ulps=12",
        # or a dict of the same keys; parsed in C++.
        if isinstance(tolerance, dict):
            tolerance = ",".join(f"{key}={value}" for key, value in tolerance.items())
        args.tolerance = _c.text(tolerance, "--tolerance", "text such as 'e=3' or a dict {'e': 3}")
    # The ranges are the CLI's (gate/judge_args.cpp settings_of); the int64 and int bounds are
    # what the C++ fields hold, checked here so that pybind11 never refuses them itself.
    args.max_position = _c.optional_integer(max_position, "--max-position", 0, _c.INT64_MAX)
    args.require_horizon = _c.optional_integer(require_horizon, "--require-horizon", 0, _c.INT64_MAX)
    if skip_flags:
        if not isinstance(skip_flags, str):
            if not isinstance(skip_flags, (list, tuple, set, frozenset)):
                raise ValueError(f"--skip-flags: expected a list of golden flags or comma-separated text, got {_c.short(skip_flags)}")
            skip_flags = ",".join(_c.text(flag, "--skip-flags") for flag in skip_flags)
        args.skip_flags = _c.text(skip_flags, "--skip-flags", "a list of golden flags or comma-separated text")
    args.strict_zeros = bool(strict_zeros)
    args.worst = _c.integer(worst, "--worst", 1, 1000)
    args.threads = _c.integer(threads, "--threads", 0, 4096)
    return args


def apply(x, positions, spec, model="exact", *, as_torch=False, bf16="float32", precision_bits=256):
    """The exact RoPE of x at positions, correctly rounded to the spec's dtype (`ropecheck apply`).

    x: [..., heads, head_dim] or [tokens, head_dim], values rounded to the spec's dtype first (as
    the CLI does). model: "exact" or "f32-recipe" (the float32 recipe with θ correctly rounded).
    Returns x's shape in the spec's dtype (see the module docstring for bf16)."""
    spec = _spec(spec)
    model = _c.text(model, "--model", "exact or f32-recipe")
    precision_bits = _c.integer(precision_bits, "--precision", 64, 16384)  # python/apply.cpp's range
    array = _t.as_numpy(x, "x", spec.input_dtype)
    token_shape, heads = _t.head_shape(array, spec)
    where = _t.positions_of(positions, token_shape, spec, array.shape)
    # float32 and float64 go to C++ as they are (C-contiguous); other types widened to float64 first.
    values = np.ascontiguousarray(array) if array.dtype in (np.float32, np.float64) else _t.doubles(array)
    out = _rc.apply(spec, values, heads, where, model, precision_bits)
    return _t.result_array(out, array.shape, spec.dtype, bf16, as_torch, copy=False)


def check(output, x, positions, spec, model=None, *, tolerance=None, max_position=None, skip_flags=None,
          require_horizon=None, strict_zeros=False, worst=10, threads=0, label="tensors"):
    """Judges `output` as the RoPE of x at positions (runner/tensor_judge.h, the rule of `ropecheck check`).

    Options as the CLI's: model ("exact", "f32-angle", "f32-recipe"; None: DEFAULT_MODEL, f32-angle), tolerance ("e=3", "ulp=4",
    "theta_ulps=12"), max_position, skip_flags, require_horizon, strict_zeros. Returns a Result
    (passed, worst_e, horizon, position_e, worst_cases, diagnosis, to_json/to_junit/to_html).

    x holds values of the spec's input dtype; values that are not (a float32 x for a bf16 spec) are
    rounded to it first, as a kernel of that dtype receives them, with a RoundedInputWarning and a
    note in result.notes saying how many."""
    spec = _spec(spec)
    args = _arguments(model, tolerance, max_position, skip_flags, require_horizon, strict_zeros, worst, threads)
    inputs = _t.as_numpy(x, "x", spec.input_dtype)
    outputs = _t.as_numpy(output, "output", spec.dtype, floats_only=True)
    token_shape, heads = _t.head_shape(inputs, spec)
    if outputs.shape != inputs.shape:
        raise ValueError(f"output: expected the shape of x {list(inputs.shape)}, got {list(outputs.shape)}")
    where = _t.positions_of(positions, token_shape, spec, inputs.shape)
    # float32, float16 and float64 go to C++ as they are (C-contiguous: float32 and float16 are
    # widened a chunk at a time there, not copied whole); other types widened to float64 first.
    def values(a):
        return np.ascontiguousarray(a) if a.dtype in (np.float32, np.float16, np.float64) else _t.doubles(a)

    result = _rc.check(spec, heads, where, values(inputs), values(outputs), args, _c.text(label, "label"))
    for group in result.groups:
        if group.inputs_rounded:
            # The note of the CLI's report (also in result.notes): x was judged as the spec's dtype.
            warnings.warn(group.inputs_rounded_note, RoundedInputWarning, stacklevel=2)
    return result


def _name_of(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


def _limits(isolate, timeout):
    """How a callable is run (python/README.md "Isolation of a callable"): in this process, or in a
    child forked per call, with `timeout` seconds per call. A timeout implies isolation: a call
    running in this process cannot be stopped safely."""
    if isolate is not None and not isinstance(isolate, (bool, np.bool_)):
        raise ValueError(f"isolate: expected True or False, got {_c.short(isolate)}")
    limits = _rc.CallableLimits()
    if timeout is not None:
        # The range of the CLI's --timeout (gate/commands/judge_options.cpp add_child_options).
        limits.timeout_seconds = _c.number(timeout, "timeout", 0.01, 86400, " of seconds")
        if isolate is not None and not isolate:
            raise ValueError("timeout: needs the call isolated (a call in this process cannot be stopped safely); "
                             "leave isolate unset or give isolate=True")
    limits.isolate = bool(isolate) or timeout is not None
    if limits.isolate and not hasattr(os, "fork"):
        raise ValueError("isolate: expected a system with fork() (POSIX): each call runs in a forked child")
    return limits


def gate(fn, suites=None, *, spec=None, select=None, model=None, as_torch=False, device=None, name=None,
         tolerance=None, max_position=None, skip_flags=None, require_horizon=None, strict_zeros=False, worst=10,
         threads=0, isolate=None, timeout=None):
    """Runs fn over the golden suites and judges it, as `ropecheck run` runs a kernel.

    suites: a golden file or folder (default GOLDEN_DIR, the project's suites). With spec=, only the
    groups of that spec, and fn(x, positions); otherwise fn(x, positions, spec) over every group
    (or those `select(spec)` accepts). x: [tokens, heads, head_dim] in the spec's dtype (NumPy, or
    torch with as_torch=True, on `device`: any torch device string, the CPU by default; fn's outputs
    may lie on any device); an exception from fn fails that test, its message saying where in fn it
    was raised. Returns a Result whose `groups` are the per-group verdicts.

    model: the claim judged, "exact", "f32-angle" or "f32-recipe"; None: DEFAULT_MODEL (f32-angle).
    max_position: the largest position fn is handed (its context length - 1): a test whose every
    position is above it is left out, and fn is called without the tokens above it in the others;
    result.summary() says how many.

    isolate=True: each call runs in a child forked from this process (fn need not be picklable), so
    that a crash (segfault, abort, os._exit) fails that test alone with one line saying how the child
    ended. timeout=S: at most S seconds per call (0.01 to 86400), then the child is killed and the test
    fails as `timeout`; it implies isolate=True (isolate=False with a timeout is a ValueError).
    KeyboardInterrupt and SystemExit raised by fn stop the gate and are raised again, in either mode.

    A fused spec (one with a fused key: norm=, fp8=, scale=, destination=, ...; fused/README.md):
    fn(q, k, positions, q_weight, k_weight[, slot_mapping, k_cache]) on drawn inputs, judged by the
    fused judge (fused_gate(): python/README.md "Fused RoPE") -> FusedResult."""
    if _fused.is_fused(spec):
        _only_fused_options(suites=suites, select=select, tolerance=tolerance, max_position=max_position,
                            skip_flags=skip_flags, require_horizon=require_horizon, strict_zeros=strict_zeros)
        return fused_gate(fn, spec, model, as_torch=as_torch, device=device, name=name, isolate=isolate, timeout=timeout)
    keep = None
    if spec is not None:
        spec = _spec(spec)
        keep = spec.__eq__
    elif select is not None:
        if not callable(select):
            raise ValueError("select: expected a function Spec -> bool")
        keep = select
    args = _arguments(model, tolerance, max_position, skip_flags, require_horizon, strict_zeros, worst, threads)
    limits = _limits(isolate, timeout)
    _check_callable(fn, 2 if spec is not None else 3)
    wrapped = _fn.wrap(fn, as_torch, spec is None, args.max_position, _fn.device_of(device, as_torch))
    return _rc.gate(wrapped, _label(name, fn), _suites(suites), keep, args, limits)


def fused_gate(fn, spec, model=None, *, tokens=_fused.DEFAULT_TOKENS, draws=_fused.DEFAULT_DRAWS, seed=1, as_torch=False,
               device=None, name=None, isolate=None, timeout=None, **others):
    """fn judged on a fused spec (python/README.md "Fused RoPE"): `draws` draws of `tokens` tokens
    (fused/fused.h random_inputs, seeds seed, seed + 1, ...), fn(q, k, positions, q_weight,
    k_weight[, slot_mapping, k_cache]) called on each, its outputs judged by the fused judge
    (fused/fused.h judge_fused) under `model` (None: DEFAULT_MODEL; "exact" or "f32-angle").
    isolate=, timeout=, as_torch=, device= as gate()'s. -> FusedResult."""
    _only_fused_options(**others)
    spec = _c.text(spec, "spec", "the text of a fused spec (norm=, fp8=, ... keys)")
    if not _fused.is_fused(spec):
        raise ValueError(f"spec: expected a fused spec (a key norm=, fp8=, scale=, destination=, ...), got {_c.short(spec)}")
    limits = _limits(isolate, timeout)
    label = None if name is None else _c.text(name, "name")
    return _fused.judge(fn, spec, model, tokens=tokens, draws=draws, seed=seed, as_torch=as_torch, device=device,
                        name=label, limits=limits)


def _only_fused_options(**options):
    """The options of the RoPE route a fused spec does not take: refused when given (not ignored)."""
    for key, value in options.items():
        if value is not None and value is not False:
            raise ValueError(f"{key}: not an option of a fused spec (fused_gate() takes model, tokens, draws, seed, "
                             f"as_torch, device, name, isolate, timeout)")


def _label(name, fn):
    return _name_of(fn) if name is None else _c.text(name, "name")


def _suites(suites):
    """A golden file or folder (str or os.PathLike), default GOLDEN_DIR."""
    import os

    if suites is None:
        return GOLDEN_DIR
    if not isinstance(suites, (str, os.PathLike)):
        raise ValueError(f"suites: expected the path of a golden file or folder, got {_c.short(suites)}")
    return _c.text(os.fspath(suites), "suites", "a path")


def _check_callable(fn, arguments):
    if not callable(fn):
        raise ValueError(f"fn: expected a callable fn(x, positions{', spec' if arguments == 3 else ''}), got {type(fn).__name__}")
    try:
        inspect.signature(fn).bind(*range(arguments))
    except TypeError:
        raise ValueError(f"fn: expected a callable taking {arguments} arguments "
                         f"(x, positions{', spec' if arguments == 3 else ''}), got {_name_of(fn)}{inspect.signature(fn)}") from None
    except ValueError:  # no signature (a builtin): called as it is
        pass


def judge_callable(fn, spec, model=None, *, suites=None, max_position=None, samples=256, seed=1, as_torch=False,
                   device=None, name=None, tolerance=None, skip_flags=None, require_horizon=None, strict_zeros=False,
                   worst=10, threads=0, isolate=None, timeout=None):
    """fn(x, positions) judged on the inputs ropecheck draws: the golden groups of `spec` in `suites`
    (if any) and a sweep of `samples` positions up to max_position (default 2^31 - 1: every small
    position, 2^k - 1, 2^k, 2^k + 1, and random ones), as `ropecheck sweep`. One Result.
    model None: DEFAULT_MODEL (f32-angle). No position above max_position is handed to fn, in the
    golden groups either (gate()'s rule). as_torch=, device=, isolate= and timeout= as gate()'s.
    A fused spec: fused_gate() (samples= is not read; tokens= and draws= are fused_gate's)."""
    if _fused.is_fused(spec):
        _only_fused_options(suites=suites, max_position=max_position, tolerance=tolerance, skip_flags=skip_flags,
                            require_horizon=require_horizon, strict_zeros=strict_zeros)
        return fused_gate(fn, spec, model, as_torch=as_torch, device=device, name=name, isolate=isolate,
                          timeout=timeout, seed=seed)
    spec = _spec(spec)
    _check_callable(fn, 2)
    args = _arguments(model, tolerance, max_position, skip_flags, require_horizon, strict_zeros, worst, threads)
    limits = _limits(isolate, timeout)
    wrapped = _fn.wrap(fn, as_torch, False, args.max_position, _fn.device_of(device, as_torch))
    label = _label(name, fn)
    samples = _c.integer(samples, "--samples", 1, _c.INT64_MAX)  # the C++ sweep checks its own cap
    seed = _c.integer(seed, "--seed", 0, _c.UINT64_MAX)
    golden = _rc.gate(wrapped, label, _suites(suites), spec.__eq__, args, limits)
    top = MAX_POSITION if max_position is None else args.max_position
    sweep = _rc.sweep(wrapped, label, spec, top, samples, seed, args, limits)
    return _rc.merge([golden, sweep])


def assert_rope_close(fn_or_output, x=None, positions=None, spec=None, model=None, **options):
    """Raises AssertionError unless the RoPE passes ropecheck's gate; returns the Result otherwise.

    assert_rope_close(output, x, positions, spec, model=...): the user's tensors (check()).
    assert_rope_close(fn, spec=..., model=...): fn(x, positions) -> output on inputs ropecheck
    draws (judge_callable(): the golden groups of the spec, and a sweep up to max_position).
    model None: DEFAULT_MODEL (f32-angle), the claim a careful float32 implementation meets.
    The message says the verdict and the claim judged, the explanation, the worst e and where, the
    accuracy horizon and the diagnosis."""
    if callable(fn_or_output) and not _is_array(fn_or_output):
        if x is not None or positions is not None:
            raise ValueError("assert_rope_close(fn, ...): ropecheck draws the inputs; give spec= (and max_position=), not x or positions")
        if _fused.is_fused(spec):
            result = fused_gate(fn_or_output, spec, model, **options)
        else:
            result = judge_callable(fn_or_output, spec, model, **options)
    else:
        if _fused.is_fused(spec):
            raise ValueError("assert_rope_close(output, ...): a fused spec is judged on a callable: "
                             "assert_rope_close(fn, spec=...) or fused_gate(fn, spec)")
        if x is None or positions is None:
            raise ValueError("assert_rope_close(output, x, positions, spec): x and positions are required with an output")
        result = check(fn_or_output, x, positions, spec, model, **options)
    if not result.passed:
        raise AssertionError(result.summary())
    return result


def _is_array(value):
    return isinstance(value, np.ndarray) or _t.is_tensor(value)


def _number(value):
    return f"{value:.6g}"


def _summary(result, groups_listed=6, cases_listed=3):
    """The AssertionError message: readable in pytest's output, no hex floats. Its first line says
    the verdict and the claim judged; then one line per distinct explanation of the failing groups
    (judge/verdict.h distinct_explanations, the line every route's summary prints), the failing
    groups, what max_position left out, the notes. A failing result has no line that reads as a pass."""
    failing = [g for g in result.groups if g.verdict == "fail"]
    lines = [_headline(result, failing)]
    for line in result.explanation_lines:
        if len(line.groups) == 1:
            g = result.groups[line.groups[0]]
            lines.append(f"  explanation: {g.suite}[{g.index}]: {line.text}")
        else:
            names = ", ".join(f"{result.groups[i].suite}[{result.groups[i].index}]" for i in line.groups[:4])
            more = f" and {len(line.groups) - 4} more" if len(line.groups) > 4 else ""
            lines.append(f"  explanation: {line.text} ({names}{more})")
    lines.extend(f"  the call: {message}" for message in _raised_messages(failing))
    shown = failing if failing else result.groups
    for g in shown[:groups_listed]:
        lines.extend(_group_lines(g, cases_listed))
    if len(shown) > groups_listed:
        lines.append(f"  ... and {len(shown) - groups_listed} more failing group(s)")
    if failing and len(result.groups) > len(failing):
        lines.append(f"  {len(result.groups) - len(failing)} other group(s) without a failure")
    left_out = _left_out(result)
    if left_out:
        lines.append(f"  note: {left_out}")
    lines.extend(f"  note: {n}" for n in result.notes)
    return "\n".join(lines)


def _headline(result, failing):
    claim = f"the claim {result.model}"
    judged = sum(g.tests for g in result.groups)
    if result.passed:
        return (f"ropecheck: PASS: {result.implementation} meets {claim} "
                f"({len(result.groups)} group(s), {judged} tests judged)")
    if not failing:
        return f"ropecheck: FAIL: nothing of {result.implementation} was judged under {claim} (every test skipped)"
    return (f"ropecheck: FAIL: {result.implementation} does not meet {claim} "
            f"({len(failing)} of {len(result.groups)} group(s) failed)")


def _group_lines(g, cases_listed):
    where = ""
    if g.worst_e_position >= 0:
        where = f" at position {g.worst_e_position}" + (f", pair {g.worst_e_pair}" if g.worst_e_pair >= 0 else "")
    lines = [f"  {g.suite}[{g.index}] {g.verdict}: worst e {_number(g.worst_e)}{where} ({g.margin_text}; tolerance {g.tolerance}); "
             f"accuracy horizon {g.horizon_text}; {g.tests_failed}/{g.tests} tests failed",
             f"    spec {g.spec}"]
    if g.verdict_reason:
        lines.append(f"    {g.verdict_reason}")
    if g.edge_summary:
        lines.append(f"    edge cases: {g.edge_summary}")
    lines.extend(f"    diagnosis: {line}" for line in g.diagnosis if line != g.explanation)
    lines.extend("    " + _case_text(c) for c in g.worst_cases[:cases_listed])
    return lines


def _raised_messages(failing, listed=3):
    """The distinct messages of the calls that raised or crashed in the groups a failed call
    explains (explanation_kind "raised"): the exception, where the callable raised it and a hint."""
    messages = []
    for g in failing:
        if g.explanation_kind != "raised":
            continue
        for c in g.worst_cases:
            # A golden test's case ends in " (suite S, test N)" (runner/golden_run.cpp): said once.
            message = re.sub(r" \(suite [^,()]*, test \d+\)$", "", c.message)
            if c.dim < 0 and message and message not in messages:
                messages.append(message)
    return messages[:listed]


def _left_out(result):
    """What max_position left out: tests whose every position is above it (not called), and tokens
    above it in the other tests (not judged; a callable is not handed them)."""
    tests = sum(g.skipped_by_position for g in result.groups)
    tokens = sum(g.tokens_beyond_max_position for g in result.groups)
    if result.max_position is None or (tests == 0 and tokens == 0):
        return ""
    text = f"{tests} tests above max_position {result.max_position} left out"
    return text + (f", and {tokens} tokens above it in other tests" if tokens else "")


def _case_text(c):
    if c.dim < 0:
        return f"{c.kind}: test {c.test_id}: {c.message}"
    dims = f"dims ({c.dim}, {c.second_dim})" if c.second_dim >= 0 else f"dim {c.dim}"
    pair = lambda t: f"({_number(t[0])}, {_number(t[1])})"  # noqa: E731
    return (f"{c.kind}: position {c.position}, token {c.token}, head {c.head}, {dims}: input {pair(c.input)} "
            f"expected {pair(c.expected)} got {pair(c.got)}, e {_number(c.e)} > {_number(c.tolerance)}")


Result.summary = _summary

from . import kernels  # noqa: E402  (after the names it uses)
