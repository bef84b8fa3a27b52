"""The fused route of gate() and assert_rope_close() (python/README.md "Fused RoPE"): a careful
NumPy/torch fused implementation written here (float32 norm and rotation, one rounding to bf16 or an
E4M3 quantization at the per-token scale it returns, the paged cache) passes on default settings;
the same with q and k norm weights swapped, or the returned scale doubled, fails; a call that
raises or crashes is a failure naming it; bad arguments are one-line ValueErrors."""
import os

import numpy as np
import pytest

import ropecheck

PAGED = ("layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=per_token,destination=paged,"
         "block_size=16,q_heads=4,k_heads=2")
CONTIGUOUS_BF16 = "layout=half,head_dim=128,base=10000,dtype=bf16,norm=before,q_heads=2,k_heads=2"
FIXED_E4M3 = "layout=half,head_dim=64,base=10000,dtype=bf16,norm=before,fp8=e4m3,scale=fixed,scale_value=0.03125,q_heads=2"
E4M3_MAX = 448.0


def bf16_round(x):
    """float32 -> the nearest bfloat16 value (ties to even), as float32: integer arithmetic on the bits."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32)


def e4m3_values(t, saturate=True):
    """float32 t -> the E4M3 value nearest (ties to even; 4 significant bits, exponent floor -6), as float64."""
    a = np.abs(t.astype(np.float64))
    _, e = np.frexp(a)  # a = m * 2^e, 0.5 <= m < 1
    q = np.maximum(e - 4, -6 - 4 + 1)
    r = np.ldexp(np.rint(np.ldexp(a, -q)), q)  # np.rint: half to even
    if saturate:
        r = np.minimum(r, E4M3_MAX)
    return np.copysign(np.where(a == 0, 0.0, r), t)


def e4m3_codes(r):
    """E4M3 values -> their OCP codes (sign, 4 exponent bits of bias 7, 3 mantissa bits)."""
    a = np.abs(r)
    _, e = np.frexp(np.where(a == 0, 1.0, a))
    e = e - 1  # a = 1.f * 2^e
    normal = ((e + 7) << 3) | (np.ldexp(a, 3 - e) - 8).astype(np.int64)
    subnormal = np.ldexp(a, 9).astype(np.int64)
    code = np.where(e < -6, subnormal, normal)
    code = np.where(a == 0, 0, code) | np.where(np.signbit(r), 0x80, 0)
    return code.astype(np.uint8)


def rows(x, weight, positions, base=10000.0, eps=1e-6):
    """x [tokens, heads, d] float32 through RMSNorm (before) and the half-layout rotation, in float32."""
    x = np.asarray(x, dtype=np.float32)
    d = x.shape[-1]
    mean = (x * x).sum(axis=-1, dtype=np.float32) / np.float32(d)
    r = np.float32(1) / np.sqrt(mean + np.float32(eps))
    y = (x * r[..., None]) * np.asarray(weight, dtype=np.float32)
    inv_freq = np.float32(1) / np.power(np.float32(base), np.arange(0, d, 2, dtype=np.float32) / np.float32(d))
    angle = np.asarray(positions).astype(np.float32)[:, None] * inv_freq  # float32 [tokens, d/2]
    c = np.cos(angle.astype(np.float64)).astype(np.float32)[:, None, :]
    s = np.sin(angle.astype(np.float64)).astype(np.float32)[:, None, :]
    first, second = y[..., : d // 2], y[..., d // 2:]
    return np.concatenate([first * c - second * s, first * s + second * c], axis=-1)


def quantized(v, double_scale=False):
    """Per-token E4M3: ŝ = amax / 448 (float32), the codes of v / ŝ, and the scale returned."""
    amax = np.abs(v).max(axis=(1, 2))
    scale = (amax / np.float32(E4M3_MAX)).astype(np.float32)
    codes = e4m3_codes(e4m3_values(v / scale[:, None, None]))
    return codes, (2 * scale if double_scale else scale)


def careful_paged(swap_weights=False, double_scale=False, codes=True):
    def fused_kernel(q, k, positions, q_weight, k_weight, slot_mapping, k_cache):
        if swap_weights:
            q_weight, k_weight = k_weight, q_weight
        q_codes, q_scale = quantized(rows(q, q_weight, positions), double_scale)
        k_codes, k_scale = quantized(rows(k, k_weight, positions), double_scale)
        pages = k_cache.reshape(-1, k_codes.shape[1], k_codes.shape[2])
        for t, slot in enumerate(slot_mapping):
            if slot >= 0:
                pages[slot] = k_codes[t]
        if codes:
            return q_codes, k_cache, q_scale, k_scale
        decode = np.frombuffer(bytes(range(256)), dtype=np.uint8)
        table = ropecheck._rc.fused_decode_fp8(PAGED, decode)  # code -> value, for the float-values form
        return table[q_codes], table[k_cache], q_scale, k_scale

    return fused_kernel


def test_careful_numpy_paged_e4m3_passes_on_defaults():
    result = ropecheck.assert_rope_close(careful_paged(), spec=PAGED)
    assert isinstance(result, ropecheck.FusedResult)
    assert result.passed and result.verdict == "pass" and result.model == ropecheck.DEFAULT_MODEL
    assert len(result.draws) == 3
    judged = {name: judged for name, _, judged, _ in result.draws[0]["tensors"]}
    assert judged["q_out"] > 0 and judged["k_cache"] > 0
    assert "PASS" in result.report


def test_fp8_values_as_floats_pass_too():
    assert ropecheck.gate(careful_paged(codes=False), spec=PAGED).passed


def test_swapped_norm_weights_fail():
    with pytest.raises(AssertionError) as failure:
        ropecheck.assert_rope_close(careful_paged(swap_weights=True), spec=PAGED)
    message = str(failure.value)
    assert message.startswith("ropecheck: FAIL: ")
    assert "fused: FAIL" in message and "first failure:" in message
    assert "PASS" not in message


def test_scale_doubled_fails():
    result = ropecheck.gate(careful_paged(double_scale=True), spec=PAGED)
    assert not result.passed
    failing = [d for d in result.draws if not d["passed"]]
    assert failing and failing[0]["first_failure"] is not None


def test_careful_torch_contiguous_bf16_passes():
    torch = pytest.importorskip("torch")

    def fused_kernel(q, k, positions, q_weight, k_weight):
        assert q.dtype == torch.bfloat16 and positions.dtype == torch.int64
        out = [torch.from_numpy(rows(x.float().numpy(), w.float().numpy(), positions.numpy())).to(torch.bfloat16)
               for x, w in ((q, q_weight), (k, k_weight))]
        return tuple(out)

    result = ropecheck.gate(fused_kernel, spec=CONTIGUOUS_BF16, as_torch=True)
    assert result.passed, result.summary()


def test_fixed_scale_dict_output_and_uint16_bits():
    def fused_kernel(q, k, positions, q_weight, k_weight):
        q_codes = e4m3_codes(e4m3_values(rows(q, q_weight, positions) / np.float32(0.03125)))
        k_codes = e4m3_codes(e4m3_values(rows(k, k_weight, positions) / np.float32(0.03125)))
        return {"q_out": q_codes, "k_out": k_codes}

    assert ropecheck.fused_gate(fused_kernel, FIXED_E4M3, tokens=16, draws=1).passed

    def bf16_bits(q, k, positions, q_weight, k_weight):
        return tuple((bf16_round(rows(x, w, positions)).view(np.uint32) >> 16).astype(np.uint16)
                     for x, w in ((q, q_weight), (k, k_weight)))

    assert ropecheck.fused_gate(bf16_bits, CONTIGUOUS_BF16, draws=1).passed


def test_a_call_that_raises_fails_naming_it():
    def broken(q, k, positions, q_weight, k_weight):
        raise IndexError("slot 9 out of range")

    result = ropecheck.fused_gate(broken, CONTIGUOUS_BF16, draws=1)
    assert not result.passed
    assert "IndexError: slot 9 out of range" in result.summary()


def test_isolated_crash_fails_that_call():
    def crashing(q, k, positions, q_weight, k_weight):
        os._exit(3)

    result = ropecheck.gate(crashing, spec=CONTIGUOUS_BF16, isolate=True)
    assert not result.passed
    assert "exited with status 3" in result.summary()


def test_wrong_output_size_is_the_calls_failure():
    def short(q, k, positions, q_weight, k_weight):
        return q[:1], k

    result = ropecheck.fused_gate(short, CONTIGUOUS_BF16, draws=1)
    assert not result.passed and "q_out: expected" in result.summary()


def test_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="taking 7 arguments"):
        ropecheck.gate(lambda q, k, p, qw, kw: (q, k), spec=PAGED)
    with pytest.raises(ValueError, match="max_position: not an option of a fused spec"):
        ropecheck.assert_rope_close(careful_paged(), spec=PAGED, max_position=100)
    with pytest.raises(ValueError, match="norm"):
        ropecheck.gate(careful_paged(), spec=PAGED.replace("norm=before", "norm=sideways"))
    with pytest.raises(ValueError, match="judged on a callable"):
        ropecheck.assert_rope_close(np.zeros(4), np.zeros(4), np.zeros(1, dtype=np.int64), PAGED)
