"""llama.cpp's ggml graph for a q/k norm before RoPE, `ggml_rms_norm` -> `ggml_mul` (the weight)
-> `ggml_rope_ext`, as llama.cpp builds it for Qwen3's q_norm/k_norm (src/llama-model.cpp:
`build_norm(Qcur, attn_q_norm, NULL, LLM_NORM_RMS)` on Qcur reshaped to [head_dim, heads, tokens],
then `ggml_rope_ext`), run by the CPU backend built from source by peers/ggml/build_ggml.sh
(peers/fused/README.md). Loaded with ctypes from the build's folders, as the ggml plugin loads them
(peers/ggml/ggml_api.h: the variant library libggml-cpu-<isa>.so, which finds libggml-base.so next
to it); the declarations below are those of ggml's public headers ggml.h and ggml-cpu.h.

ggml's CPU rms_norm (ggml-cpu/ops.cpp) sums x² in ggml_float (double) and scales by
1/sqrtf(mean + eps) in float32; ggml_mul multiplies by the weight in float32 (broadcast over heads
and tokens); rope_ext is the RoPE of the ggml peer (the angle a float32 running product,
peers/ggml/README.md). F32 tensors throughout (ggml's CPU rms_norm takes F32).

Implementations: `ggml-fused-fma` (libggml-cpu-haswell) and `ggml-fused-nofma` (libggml-cpu-x64),
the two builds of peers/ggml. Not expressible: dtypes other than f32, the norm after the rotation,
`norm_weight=one_plus`, FP8, a paged cache.
"""
import ctypes
import os

import numpy as np

import fusedlib
from fusedlib import Unsupported

GGML_TYPE_F32, GGML_TYPE_I32 = 0, 26          # enum ggml_type
MODES = {"interleaved": 0, "half": 2}          # GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX
VARIANTS = {"ggml-fused-fma": ("ggml-fma", "haswell"), "ggml-fused-nofma": ("ggml-nofma", "x64")}
_P = ctypes.c_void_p


class InitParams(ctypes.Structure):  # struct ggml_init_params (ggml.h), passed by value to ggml_init
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


class Ggml:
    """The functions of one variant library (dlsym also searches its libggml-base.so)."""

    def __init__(self, folder, isa):
        lib = ctypes.CDLL(os.path.join(folder, f"libggml-cpu-{isa}.so"))
        self.lib = lib
        sig = {
            "ggml_init": (_P, [InitParams]), "ggml_free": (None, [_P]),
            "ggml_new_tensor_1d": (_P, [_P, ctypes.c_int, ctypes.c_int64]),
            "ggml_new_tensor_3d": (_P, [_P, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]),
            "ggml_rms_norm": (_P, [_P, _P, ctypes.c_float]),
            "ggml_mul": (_P, [_P, _P, _P]),
            "ggml_rope_ext": (_P, [_P, _P, _P, _P, ctypes.c_int, ctypes.c_int, ctypes.c_int] + [ctypes.c_float] * 6),
            "ggml_new_graph": (_P, [_P]), "ggml_build_forward_expand": (None, [_P, _P]),
            "ggml_get_data": (_P, [_P]), "ggml_version": (ctypes.c_char_p, []),
            "ggml_backend_score": (ctypes.c_int, []), "ggml_cpu_init": (None, []),
            "ggml_graph_compute_with_ctx": (ctypes.c_int, [_P, _P, ctypes.c_int]),
        }
        for name, (restype, argtypes) in sig.items():
            f = getattr(lib, name)
            f.restype, f.argtypes = restype, argtypes
            setattr(self, name[len("ggml_"):], f)
        if self.backend_score() <= 0:
            raise RuntimeError(f"libggml-cpu-{isa}.so cannot run on this CPU (ggml_backend_score() = 0)")
        self.cpu_init()


_loaded = {}   # implementation -> Ggml, or the reason it is not there


def configure(dirs):
    """dirs: {"ggml-fma": folder, "ggml-nofma": folder} (build_ggml.sh's lines)."""
    if not dirs:
        raise RuntimeError("no ggml build (peers/ggml/build_ggml.sh did not run)")
    for impl, (name, isa) in VARIANTS.items():
        try:
            _loaded[impl] = Ggml(dirs[name], isa)
        except Exception as why:  # noqa: BLE001 — the reason becomes the skip note
            _loaded[impl] = f"{name}: {why}"


def header():
    versions = {g.version().decode() for g in _loaded.values() if isinstance(g, Ggml)}
    return [f"ggml (fused): rms_norm + mul + rope_ext of the peers/ggml builds (ggml_version() {', '.join(versions)})"]


def norm_rope(g, spec, x, weight, positions):
    tokens, nheads, head_dim = x.shape
    mem = 4 * x.size * 4 + head_dim * 4 + tokens * 4 + 16 * 1024 + (4 << 20)
    ctx = g.init(InitParams(mem, None, False))
    if not ctx:
        raise RuntimeError("ggml_init failed")
    try:
        a = g.new_tensor_3d(ctx, GGML_TYPE_F32, head_dim, nheads, tokens)  # ggml's ne order
        w = g.new_tensor_1d(ctx, GGML_TYPE_F32, head_dim)
        pos = g.new_tensor_1d(ctx, GGML_TYPE_I32, tokens)
        for tensor, values in ((a, x.astype(np.float32)), (w, weight.astype(np.float32)),
                               (pos, positions.astype(np.int32))):
            values = np.ascontiguousarray(values)  # held while memmove reads it
            ctypes.memmove(g.get_data(tensor), values.ctypes.data, values.nbytes)
        normed = g.mul(ctx, g.rms_norm(ctx, a, float(spec["eps"])), w)
        # llama.cpp's defaults without scaling: freq_scale 1, ext_factor 0, attn_factor 1, beta 32/1
        out = g.rope_ext(ctx, normed, pos, None, fusedlib.rotary_dim(spec), MODES[spec["layout"]], 0,
                         float(spec["base"]), 1.0, 0.0, 1.0, 32.0, 1.0)
        graph = g.new_graph(ctx)
        g.build_forward_expand(graph, out)
        if g.graph_compute_with_ctx(ctx, graph, 1) != 0:
            raise RuntimeError("ggml_graph_compute_with_ctx failed")
        y = np.ctypeslib.as_array(ctypes.cast(g.get_data(out), ctypes.POINTER(ctypes.c_float)), shape=(x.size,))
        return y.astype(np.float64).reshape(tokens, nheads, head_dim)
    finally:
        g.free(ctx)


def make(impl):
    def compute(spec, inputs, ropecheck, workdir):
        g = _loaded.get(impl, "not configured")
        if not isinstance(g, Ggml):
            raise Unsupported(g)
        fusedlib.require(spec, norm="before", norm_weight="plain", fp8="none", destination="contiguous", dtype="f32")
        if spec.get("scaling", "none") != "none" or spec.get("axes", "none") != "none":
            raise Unsupported("the fused peers run unscaled one-axis RoPE only")
        if float(np.float32(spec["base"])) != float(spec["base"]):
            raise Unsupported(f"base={spec['base']}: ggml's freq_base is a float32, which does not hold it")
        positions = inputs["positions"][:, 0]
        if np.any(np.abs(positions) > np.iinfo(np.int32).max):
            raise Unsupported("ggml's positions are int32")
        return {n + "_out": norm_rope(g, spec, inputs[n], inputs[n + "_weight"], positions) for n in ("q", "k")}
    return compute


IMPLEMENTATIONS = {impl: make(impl) for impl in VARIANTS}
