"""How a callable is called (python/README.md "Callables"): its torch inputs on the device named by
device= and its outputs taken from any device; an exception it raises told with its type, message,
the line of the user's code that raised it and a hint for the common causes, in process and
isolated alike."""
import inspect
import os
import re

import numpy as np
import pytest

import ropecheck

torch = pytest.importorskip("torch")

SPEC = "layout=half,head_dim=64,base=10000,dtype=f32"
THIS_FILE = os.path.basename(__file__)


def plain(text):
    """text with this file's path as its name alone (a path relative to the working folder, or whole)."""
    return re.sub(r"raised at \S*" + re.escape(THIS_FILE), "raised at " + THIS_FILE, text)


def rope64(x, positions):
    """The half layout in float64, rounded once to x's dtype (docs/rope.md §1), on x's device."""
    d = x.shape[-1]
    inv_freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d)
    angle = torch.outer(positions.to(torch.float64), inv_freq)
    cos = torch.cat((angle.cos(), angle.cos()), dim=-1)[:, None, :]
    sin = torch.cat((angle.sin(), angle.sin()), dim=-1)[:, None, :]
    r = x.to(torch.float64)
    rotated = torch.cat((-r[..., d // 2:], r[..., : d // 2]), dim=-1)
    return (r * cos + rotated * sin).to(x.dtype)


def run_on(device):
    seen = set()

    def rope(x, positions):
        seen.add((x.device.type, positions.device.type))
        return rope64(x, positions)

    result = ropecheck.assert_rope_close(rope, spec=SPEC, as_torch=True, device=device, samples=16, max_position=4096)
    return result, seen


def test_device_cpu_hands_cpu_tensors():
    result, seen = run_on("cpu")
    assert result.passed and seen == {("cpu", "cpu")}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_device_cuda_hands_cuda_tensors_and_takes_cuda_outputs():
    result, seen = run_on("cuda")
    assert result.passed and seen == {("cuda", "cuda")}
    gated = ropecheck.gate(lambda x, p: rope64(x, p), spec=SPEC, as_torch=True, device="cuda:0")
    assert gated.passed, gated.summary()


def test_outputs_on_another_device_than_the_inputs():
    # device="meta" holds no values: an output there is refused naming it; one on the CPU from
    # inputs elsewhere is the subject of the CUDA test above.
    result = ropecheck.gate(lambda x, p: rope64(x, p).to("meta"), spec=SPEC, as_torch=True, device="cpu")
    assert not result.passed
    assert "output: expected a tensor with data (CPU or CUDA), got a tensor on device 'meta'" in result.summary()


@pytest.mark.parametrize("call,message", [
    (lambda: ropecheck.gate(rope64, spec=SPEC, device="cpu"),
     "device: applies to torch tensors; give as_torch=True with device='cpu'"),
    (lambda: ropecheck.gate(rope64, spec=SPEC, as_torch=True, device="gpu7"),
     "device: expected a torch device such as 'cpu' or 'cuda:0', got 'gpu7'"),
    (lambda: ropecheck.judge_callable(rope64, SPEC, as_torch=True, device=3),
     "device: expected a torch device such as 'cpu' or 'cuda:0'"),
])
def test_bad_devices_are_refused_naming_device(call, message):
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value).startswith(message), str(raised.value)


def torch_rope(x, positions):
    angle = positions.float()[:, None] * x.float()  # the line that raises on NumPy inputs
    return angle


LINE = inspect.getsourcelines(torch_rope)[1] + 1


def helper_that_raises(x):
    raise ValueError(f"tokens {x.shape[0]} not supported")  # the innermost line of the user's code


HELPER_LINE = inspect.getsourcelines(helper_that_raises)[1] + 1


@pytest.mark.parametrize("isolate", [False, True])
def test_numpy_inputs_to_a_torch_callable_say_where_and_what_to_do(isolate):
    result = ropecheck.gate(torch_rope, spec=SPEC, isolate=isolate)
    assert not result.passed
    expected = (f"threw: AttributeError: 'numpy.ndarray' object has no attribute 'float' "
                f"(raised at {THIS_FILE}:{LINE} in torch_rope); "
                f"hint: the callable looks like it expects torch tensors; pass as_torch=True")
    messages = {re.sub(r" \(suite [-a-z0-9]+, test \d+\)$", "", plain(c.message)) for c in result.worst_cases}
    assert messages == {expected}, messages
    summary = plain(result.summary())
    assert "  explanation: " in summary and "raised AttributeError" in summary, summary
    assert f"\n  the call: {expected}\n" in summary, summary


def test_the_users_innermost_line_is_named():
    result = ropecheck.gate(lambda x, p: helper_that_raises(x), spec=SPEC)
    message = plain(result.worst_cases[0].message)
    assert message.startswith("threw: ValueError: tokens ")
    assert f"{THIS_FILE}:{HELPER_LINE} in helper_that_raises)" in message, message
    assert "hint" not in message  # no common cause recognised


def test_a_wrong_output_is_told_without_a_users_line():
    result = ropecheck.gate(lambda x, p: np.zeros(3), spec=SPEC)
    message = result.worst_cases[0].message
    assert message.startswith("threw: ValueError: expected ") or message.startswith("threw: expected "), message
    assert "raised at" not in message
