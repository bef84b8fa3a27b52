"""The bug zoo: RoPE implementations with real bugs, each written from a public bug report.

Every entry of CASES is a small candidate `candidate(x, positions) -> output` (x: a torch tensor
[tokens, heads, head_dim] in the spec's dtype; positions: int64 [tokens], or [tokens, 3] for
M-RoPE) that reproduces what the cited report says the buggy code did, written here in PyTorch
(torch 1.13, Debian's /usr/bin/python3) from the report's description: none of it is copied from
the library that had the bug. `spec` is what the implementation SHOULD compute (spec/README.md);
`expect_kind` / `expect_text` are what ropecheck's explanation must say (judge/README.md
"Explanation"); tests/explain/README.md lists the cases and how "named" is decided.

Reports are cited as found (owner/repo#number: title); a candidate reproduces the mechanism the
report describes, with the model's own shape where the report names a model.
"""
import dataclasses
import json
import math
import os
from typing import Callable

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    bug_class: str
    report: str
    spec: str
    context: int  # the model's context length: positions 0..4095 and samples up to it
    candidate: Callable
    expect_kind: str
    expect_text: str
    dtype: str = ""  # the spec's dtype, filled from the spec
    what: str = ""  # one line for the README's table
    raises: bool = False
    heads: int = 2


# ---- building blocks (what an ordinary PyTorch RoPE is made of) ------------------------------------

def hf_inv_freq(base, dim):
    """transformers' default inv_freq: base ** (2i/dim) in float32, then its reciprocal."""
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def rotate(x, cos, sin, layout, compute_dtype):
    """x [T, H, D]; cos/sin [T, P] per pair (P = rotary_dim/2) for every head; the rotation in
    compute_dtype (cos/sin cast to it, as transformers casts them to the activations' dtype), the
    dims past rotary_dim passed through, the result in x's dtype."""
    rd = 2 * cos.shape[-1]
    if layout == "half":
        c, s, rot = torch.cat((cos, cos), -1), torch.cat((sin, sin), -1), rotate_half
    else:
        c, s, rot = cos.repeat_interleave(2, -1), sin.repeat_interleave(2, -1), rotate_every_two
    c, s = c.to(compute_dtype)[:, None, :], s.to(compute_dtype)[:, None, :]
    xr = x[..., :rd].to(compute_dtype)
    out = (xr * c + rot(xr) * s).to(x.dtype)
    return torch.cat((out, x[..., rd:]), -1)


def hf_rope(x, positions, inv_freq, layout="half", attention=1.0):
    """The transformers recipe: angle = position x inv_freq in float32, cos/sin in float32 (times
    the attention factor), cast to the activations' dtype, q*cos + rotate(q)*sin in that dtype."""
    freqs = positions.float()[:, None] * inv_freq.float()[None, :]
    return rotate(x, freqs.cos() * attention, freqs.sin() * attention, layout, x.dtype)


def round_mantissa(t, bits):
    """float32 values rounded to nearest-even with `bits` stored significand bits (10: TF32)."""
    i = t.float().contiguous().view(torch.int32).to(torch.int64)
    drop = 23 - bits
    i = i + (1 << (drop - 1)) - 1 + ((i >> drop) & 1)
    return ((i >> drop) << drop).to(torch.int32).view(torch.float32)


def yarn_inv_freq(base, dim, factor, original, beta_fast=32.0, beta_slow=1.0, truncate=True):
    """YaRN's blend of interpolated and extrapolated frequencies (the YaRN paper's ramp over the
    correction range), in float32 as the PyTorch implementations compute it."""
    def correction_dim(rotations):
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))
    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    return interpolation * ramp + extrapolation * (1 - ramp)


def yarn_mscale(factor, mscale=1.0):
    return 0.1 * mscale * math.log(factor) + 1.0 if factor > 1 else 1.0


def longrope_inv_freq(base, dim, factors):
    ext = torch.tensor(factors, dtype=torch.float32)
    return 1.0 / (ext * base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def mrope_components(sections, interleaved):
    """Which of (t, h, w) drives frequency j: chunked sections (Qwen2-VL) or Qwen3-VL's
    interleaved layout (t everywhere, h on j % 3 == 1 below 3*s_h, w on j % 3 == 2 below 3*s_w)."""
    if not interleaved:
        return [k for k, n in enumerate(sections) for _ in range(n)]
    comp = [0] * sum(sections)
    for j in range(1, 3 * sections[1], 3):
        comp[j] = 1
    for j in range(2, 3 * sections[2], 3):
        comp[j] = 2
    return comp


def mrope_angles(positions, inv_freq, components):
    """positions [T, 3] (t, h, w): angle [T, P] with pair j driven by component components[j]."""
    pos = positions.float()[:, components]  # [T, P]
    return pos * inv_freq.float()[None, :]


def _phi3_factors():
    with open(os.path.join(REPO, "hfconfig", "examples", "phi-3-vision-128k-instruct.json")) as f:
        scaling = json.load(f)["rope_scaling"]
    return scaling["short_factor"], scaling["long_factor"]


PHI3_SHORT, PHI3_LONG = _phi3_factors()


def _listed(values):
    return "/".join(repr(float(v)) for v in values)


# ---- specs (what the implementations should compute) -----------------------------------------------

SPEC_LLAMA3_8B = "layout=half,head_dim=128,base=500000,dtype=bf16"
SPEC_QWEN25_DRAFT = "layout=half,head_dim=128,base=1000000,dtype=f32"
SPEC_QWEN3 = "layout=half,head_dim=128,base=1000000,dtype=bf16"
SPEC_QWEN25_OV = "layout=half,head_dim=128,base=1000000,dtype=f32"
SPEC_FLUX_TEXT = "layout=interleaved,head_dim=128,base=10000,dtype=bf16"
SPEC_LLAMA2_F16 = "layout=half,head_dim=128,base=10000,dtype=f16"
SPEC_NANOGPT = "layout=half,head_dim=128,base=10000,dtype=f32,direction=inverse"
SPEC_LLAMA31 = ("layout=half,head_dim=128,base=500000,dtype=f32,scaling=llama3,factor=8,original_max_position=8192,"
                "low_freq_factor=1,high_freq_factor=4")
_PHI3_LONGROPE = ("layout=half,head_dim=96,base=10000,dtype={dtype},scaling=longrope,"
                  "short_factor=" + _listed(PHI3_SHORT) + ",long_factor=" + _listed(PHI3_LONG) +
                  ",original_max_position=4096,seq_len={seq},factor=32")
SPEC_PHI3_SHORT = _PHI3_LONGROPE.format(dtype="f32", seq=4096)
SPEC_PHI3_LONG = _PHI3_LONGROPE.format(dtype="bf16", seq=8192)
SPEC_GPT_OSS = ("layout=half,head_dim=64,base=150000,dtype=bf16,scaling=yarn,factor=32,original_max_position=4096,"
                "beta_fast=32,beta_slow=1,truncate=false")
SPEC_QWEN25_YARN = ("layout=half,head_dim=128,base=1000000,dtype=f32,scaling=yarn,factor=4,original_max_position=32768,"
                    "beta_fast=32,beta_slow=1,truncate=true")
SPEC_NOMIC_DYNAMIC = ("layout=half,head_dim=64,base=1000,dtype=f32,scaling=dynamic,factor=2,original_max_position=2048,"
                      "seq_len=3072")
SPEC_LAGUNA_YARN = ("layout=half,head_dim=128,base=500000,dtype=bf16,scaling=yarn,factor=64,original_max_position=4096,"
                    "beta_fast=32,beta_slow=1,truncate=true,attention_factor=1")
SPEC_GLM4V = "layout=interleaved,head_dim=128,rotary_dim=64,base=10000,dtype=bf16,axes=mrope,sections=8/12/12"
SPEC_QWEN3VL = "layout=half,head_dim=128,base=5000000,dtype=bf16,axes=imrope,sections=24/20/20"
SPEC_QWEN2_05B = "layout=half,head_dim=64,base=1000000,dtype=f16"
SPEC_GEMMA_2B = "layout=half,head_dim=256,base=10000,dtype=bf16"
SPEC_GLM4 = "layout=interleaved,head_dim=128,rotary_dim=64,base=10000,dtype=bf16"
SPEC_PARTIAL_HALF = "layout=half,head_dim=128,rotary_dim=64,base=10000,dtype=f32"
SPEC_GPTJ = "layout=interleaved,head_dim=256,rotary_dim=64,base=10000,dtype=f16"
SPEC_ORION = "layout=half,head_dim=128,base=10000,dtype=f32"
SPEC_NANOCHAT = "layout=half,head_dim=128,base=10000,dtype=bf16"
SPEC_LLAMA_F32 = "layout=half,head_dim=128,base=10000,dtype=f32"
SPEC_PHI3_MINI_F16 = "layout=half,head_dim=96,base=10000,dtype=f16"
SPEC_LLAMA32_1B = ("layout=half,head_dim=64,base=500000,dtype=bf16,scaling=llama3,factor=32,original_max_position=8192,"
                   "low_freq_factor=1,high_freq_factor=4")
SPEC_LLAMA3_F32 = "layout=half,head_dim=128,base=500000,dtype=f32"
SPEC_DEEPSEEK_ROPE = ("layout=interleaved,head_dim=64,base=10000,dtype=bf16,scaling=yarn,factor=40,"
                      "original_max_position=4096,beta_fast=32,beta_slow=1,mscale=1,mscale_all_dim=1")


# ---- the candidates ---------------------------------------------------------------------------------

def llama3_base_ignored(x, positions):
    # lyogavin/airllm#369: the MLX Llama path never copied rope_theta from the config, so the
    # Llama-2-era default 10000 was used for Llama 3 (rope_theta 500000). Otherwise the usual recipe.
    return hf_rope(x, positions, hf_inv_freq(10000.0, 128))


def draft_base_ignored(x, positions):
    # sgl-project/SpecForge#265: the draft model's rotary embedding never read rope_theta, so every
    # one used the default base=10000 while the Qwen2.5-VL target's config says 1000000.
    return hf_rope(x, positions, hf_inv_freq(10000.0, 128))


def jax_inv_freq_bf16(x, positions):
    # sgl-project/sglang-jax#1472: inv_freq (stored in float32) was converted to the model dtype
    # (bfloat16) before the phase; positions were float32 and the einsum promoted to float32.
    inv_freq = hf_inv_freq(1000000.0, 128).to(torch.bfloat16).float()
    return hf_rope(x, positions, inv_freq)


def openvino_inv_freq_f16(x, positions):
    # openvinotoolkit/openvino#35674: exporting in FP16 compresses the inv_freq constant to f16; the
    # constant is decompressed to f32 at run time, so the product position x inv_freq is f32 but
    # carries θ's f16 rounding (Qwen2.5-VL's text rotary, base 1000000, f32 activations).
    inv_freq = hf_inv_freq(1000000.0, 128).half().float()
    return hf_rope(x, positions, inv_freq)


def flux_positions_bf16(x, positions):
    # Nerogar/OneTrainer#1177: every value passed to the transformer, the text position ids
    # included, was cast to the train dtype (bfloat16) before Flux's rope, which then computes its
    # angles in float64 (interleaved pairs, base 10000); bf16 cannot tell 257 from 256.
    pos = positions.to(torch.bfloat16).double()
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, 128, 2, dtype=torch.float64) / 128))
    freqs = pos[:, None] * inv_freq[None, :]
    return rotate(x, freqs.cos().float(), freqs.sin().float(), "interleaved", torch.float32)


def megatron_angle_half(x, positions):
    # deepspeedai/Megatron-DeepSpeed#206: the rope embedding (the angles, computed in float32) was
    # converted to half precision first and the cosine taken afterwards: cos(A.half()).
    freqs = positions.float()[:, None] * hf_inv_freq(10000.0, 128)[None, :]
    angle = freqs.half()
    return rotate(x, angle.float().cos(), angle.float().sin(), "half", x.dtype)


def nanogpt_cos_sin_bf16(x, positions):
    # KellerJordan/modded-nanogpt#39: cos_cached and sin_cached were converted to bfloat16 (the
    # report's fix: keep them float32); the activations here are float32. This code base rotates
    # with y1 = x1*cos + x2*sin, y2 = -x1*sin + x2*cos: its spec says direction=inverse.
    freqs = positions.float()[:, None] * hf_inv_freq(10000.0, 128)[None, :]
    cos, sin = freqs.cos().bfloat16().float(), freqs.sin().bfloat16().float()
    d = 64
    x1, x2 = x[..., :d], x[..., d:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat((x1 * c + x2 * s, -x1 * s + x2 * c), -1)


def qwen3_tf32_angle(x, positions):
    # huggingface/transformers#48428: the angle is inv_freq @ position_ids, a float32 matmul; with
    # torch.set_float32_matmul_precision("high") it runs on TF32 tensor cores, which round both
    # operands to 10 stored significand bits (position 2049 becomes 2048) and accumulate in f32.
    inv_freq = round_mantissa(hf_inv_freq(1000000.0, 128), 10)
    pos = round_mantissa(positions.float(), 10)
    freqs = pos[:, None] * inv_freq[None, :]
    return rotate(x, freqs.cos(), freqs.sin(), "half", x.dtype)


def llama31_scaling_dropped(x, positions):
    # ggml-org/llama.cpp#8676: before it, Llama 3.1 GGUFs were run without the llama3 rope_scaling
    # (rope factors): plain base^(-2i/d) frequencies with rope_theta 500000, in float32.
    return hf_rope(x, positions, hf_inv_freq(500000.0, 128))


def phi3_long_factors_short_sequence(x, positions):
    # ggml-org/llama.cpp#24823: the long/short factor set was chosen from the allocated context
    # (above original_max_position_embeddings=4096) instead of the sequence length, so a short
    # sequence is rotated with long_factor (the LongRoPE attention factor as usual).
    attention = math.sqrt(1 + math.log(131072 / 4096) / math.log(4096))
    return hf_rope(x, positions, longrope_inv_freq(10000.0, 96, PHI3_LONG), attention=attention)


def phi3_longrope_chunked_prefill(x, positions):
    # trymirai/uzu#604: a chunked prefill chose the factor set per chunk from the chunk's end, so
    # the windows inside the first 4096 positions took short_factor and the later ones long_factor,
    # where the model (one pass over a 5511-token prompt) uses long_factor for every position.
    attention = math.sqrt(1 + math.log(131072 / 4096) / math.log(4096))
    short = longrope_inv_freq(10000.0, 96, PHI3_SHORT)
    long = longrope_inv_freq(10000.0, 96, PHI3_LONG)
    window = 1024
    chunk_end = (positions // window + 1) * window  # each position's chunk, aligned windows
    inv = torch.where((chunk_end > 4096)[:, None], long[None, :], short[None, :])
    freqs = positions.float()[:, None] * inv
    return rotate(x, freqs.cos() * attention, freqs.sin() * attention, "half", x.dtype)


def gpt_oss_yarn_truncated(x, positions):
    # vllm-project/vllm#27722: vLLM's yarn_find_correction_range always rounded the bounds to
    # integers (floor/ceil), while gpt-oss's config says truncate=false.
    inv = yarn_inv_freq(150000.0, 64, 32.0, 4096, truncate=True)
    return hf_rope(x, positions, inv, attention=yarn_mscale(32.0))


def keras_yarn_untruncated(x, positions):
    # keras-team/keras-hub#2981: RotaryEmbedding's YaRN defaulted truncate to False where the
    # reference reads rope_parameters.get("truncate", True): the correction range not rounded.
    inv = yarn_inv_freq(1000000.0, 128, 4.0, 32768, truncate=False)
    return hf_rope(x, positions, inv, attention=yarn_mscale(4.0))


def nomic_dynamic_ntk_static(x, positions):
    # vllm-project/vllm#41236: max_len = max_position_embeddings * scaling_factor was substituted
    # into (a * max_len / max_position - (a - 1)), a constant: the cache is built once at the base
    # of a sequence of factor * 2048 = 4096 tokens, whatever the length served (here 3072).
    factor, original, dim = 2.0, 2048, 64
    max_len = original * factor
    base = 1000.0 * ((factor * max_len / original) - (factor - 1)) ** (dim / (dim - 2))
    return hf_rope(x, positions, hf_inv_freq(base, dim))


def laguna_yarn_attention_factor(x, positions):
    # vllm-project/vllm#46280: get_rope() forwarded attn_factor but not attention_factor, so a YaRN
    # config with factor=64 and attention_factor=1.0 got the derived 0.1*ln(64)+1 = 1.4158883.
    inv = yarn_inv_freq(500000.0, 128, 64.0, 4096, truncate=True)
    return hf_rope(x, positions, inv, attention=yarn_mscale(64.0))


def glm4v_mrope_neox_pairs(x, positions):
    # vllm-project/vllm#42765: _triton_mrope_forward hardcoded NeoX rotation, pairs (i, i + rd/2),
    # for GLM-4.1V whose M-RoPE (sections 8/12/12 over its 64 rotary dims) rotates (2i, 2i+1).
    inv = hf_inv_freq(10000.0, 64)
    angle = mrope_angles(positions, inv, mrope_components([8, 12, 12], interleaved=False))
    return rotate(x, angle.cos(), angle.sin(), "half", x.dtype)


def qwen3vl_imrope_as_chunked(x, positions):
    # alibaba/MNN#4133: Qwen3-VL uses interleaved M-RoPE but the old implementation applied the
    # blocked (chunked) sections of Qwen2.5-VL: t for the first 24 frequencies, h, w after.
    inv = hf_inv_freq(5000000.0, 128)
    angle = mrope_angles(positions, inv, mrope_components([24, 20, 20], interleaved=False))
    return rotate(x, angle.cos(), angle.sin(), "half", x.dtype)


def tiny_llm_offset_plus5(x, positions):
    # skyzh/tiny-llm#46: after the first decoding step the offset was advanced by the prompt's
    # size (6 -> 12 for a 6-token prompt), so every generated token is rotated at its position + 5.
    return hf_rope(x, positions + 5, hf_inv_freq(1000000.0, 64))


def openpi_decode_plus_one(x, positions):
    # Physical-Intelligence/openpi#705: the decode loop gives the new token the position
    # prefix_start + prefill_len + step + 1 where step alone is its place: one past its position.
    return hf_rope(x, positions + 1, hf_inv_freq(10000.0, 256))


def glm_partial_rotary_ignored(x, positions):
    # ml-explore/mlx-lm#1698: GLM's attention built nn.RoPE(dims=head_dim, traditional=True), so
    # all 128 dims rotate (interleaved, frequencies over 128) where partial_rotary_factor 0.5
    # rotates the first 64 and passes the rest through.
    return hf_rope(x, positions, hf_inv_freq(10000.0, 128), layout="interleaved")


def cascadia_partial_pairs(x, positions):
    # labscommunity/cascadia#69: the port zero-padded inv_freq to head_dim width and rotated the
    # whole head with one rotate_half split at head_dim/2, pairing dim i with i + head_dim/2; the
    # cos/sin values matched HF's, the pairs did not.
    inv = torch.cat((hf_inv_freq(10000.0, 64), torch.zeros(32)))  # rotary_dim 64 of 128
    return hf_rope(x, positions, inv)


def gptj_neox_rotation(x, positions):
    # vllm-project/vllm#941: vLLM's GPT-J used the GPT-NeoX style rotary (pairs (i, i + 32) over
    # its 64 rotary dims) where GPT-J rotates adjacent pairs (2i, 2i+1).
    return hf_rope(x, positions, hf_inv_freq(10000.0, 64), layout="half")


def orion_norm_rope(x, positions):
    # ggml-org/llama.cpp#13261: Orion was given the NORM rope type (adjacent pairs) while its
    # checkpoints rotate (i, i + d/2) like NeoX.
    return hf_rope(x, positions, hf_inv_freq(10000.0, 128), layout="interleaved")


def nanochat_rotation(x, positions):
    # karpathy/nanochat#489: apply_rotary_emb computes y1 = x1*cos + x2*sin, y2 = -x1*sin + x2*cos
    # (the transpose of the textbook rotation), here judged against the forward-direction spec.
    freqs = positions.float()[:, None] * hf_inv_freq(10000.0, 128)[None, :]
    cos, sin = freqs.cos().to(x.dtype)[:, None, :], freqs.sin().to(x.dtype)[:, None, :]
    x1, x2 = x[..., :64], x[..., 64:]
    return torch.cat((x1 * cos + x2 * sin, x1 * (-sin) + x2 * cos), -1)


def mlx_single_token_batch_rows(x, positions):
    # ml-explore/mlx#3949: mx.fast.rope on [B, H, 1, D] (batched decode, one token per sequence)
    # writes only the first batch row; the rest of the output stays zeros. Each token here is one
    # sequence of the batch.
    out = torch.zeros_like(x)
    out[:1] = hf_rope(x[:1], positions[:1], hf_inv_freq(10000.0, 128))
    return out


def liger_single_kv_head(x, positions):
    # linkedin/Liger-Kernel#342: LigerRopeFunction left k unchanged when it has one head
    # (num_kv_heads = 1): k_out == k. x here is that one-head k.
    return x.clone()


def ort_positions_past_cache(x, positions):
    # microsoft/onnxruntime#28205: com.microsoft.RotaryEmbedding returns the input unchanged for
    # position ids outside its cos/sin cache (microsoft/onnxruntime#27597: "pass through the input
    # unchanged"); the cache holds max_sequence_length = 4096 positions (Phi-3-mini, head 96).
    out = hf_rope(x, positions.clamp(max=4095), hf_inv_freq(10000.0, 96))
    past = positions >= 4096
    out[past] = x[past]
    return out


def fused_qk_token_stride_ignored(x, positions):
    # vllm-project/vllm#17091: the rope kernel did not consider the stride along the first (token)
    # dimension of a sliced query/key. Here q and k are the two head slices of one fused [T, 4, D]
    # projection (x: 2 q heads, then 2 k heads); the kernel walks each slice as a contiguous
    # [T, 2, D] tensor, so token t reads the rows at t*2*D of the fused buffer.
    T, H, D = x.shape
    rows = x.reshape(T * H, D)
    out = []
    for start in (0, 2):  # the q slice, then the k slice
        flat = torch.arange(T)[:, None] * 2 + torch.arange(2)[None, :] + start
        out.append(rows[flat.clamp(max=T * H - 1)])
    gathered = torch.cat(out, 1)  # [T, 4, D]: what the kernel read for each (token, head)
    inv = yarn_inv_freq(10000.0, 64, 40.0, 4096)
    return hf_rope(gathered, positions, inv, layout="interleaved", attention=1.0)


def long_max_model_len_cache(x, positions):
    # vllm-project/vllm#44286: with VLLM_ALLOW_LONG_MAX_MODEL_LEN the server accepts sequences
    # longer than max_position_embeddings (4096 for Llama 2) while the cos/sin cache still has 4096
    # rows, so indexing it past the end fails (on CPU: index_select raises IndexError).
    inv = hf_inv_freq(10000.0, 128)
    t = torch.arange(4096, dtype=torch.float32)
    freqs = t[:, None] * inv[None, :]
    cache = torch.cat((freqs.cos(), freqs.sin()), -1)
    cos_sin = cache.index_select(0, positions)
    cos, sin = cos_sin.chunk(2, -1)
    return rotate(x, cos, sin, "half", x.dtype)


def gqa_heads_floor_division(x, positions):
    # fla-org/flash-linear-attention#1029: the group size is G = HQ // H without checking that H
    # divides HQ, so a grid of H groups of G query heads leaves the last HQ - G*H heads untouched.
    # Here an in-place rope over q with HQ = 6 query heads and H = 4 kv heads: G = 1, the grid
    # covers heads 0..3, heads 4 and 5 keep their input.
    num_heads, num_kv_heads = x.shape[1], 4
    group = num_heads // num_kv_heads
    q = x.clone()
    covered = num_kv_heads * group
    q[:, :covered] = hf_rope(q[:, :covered], positions, hf_inv_freq(10000.0, 128))
    return q


def rope_flat_grid_head0(x, positions):
    # paiml/aprender#2079: the NORM rope kernel indexes head = blockIdx.x but was launched on a
    # flat grid, so every pair landed in block 0: only head 0 was rotated and heads 1..N-1 of the
    # output buffer stayed 0.0.
    out = torch.zeros_like(x)
    out[:, :1] = hf_rope(x[:, :1], positions, hf_inv_freq(10000.0, 128))
    return out


def head_offset_floors_to_zero(x, positions):
    # BobMcDear/attorch#14: the kernel turns the head's offset into a row index by dividing by the
    # token stride; on a [tokens, heads, dim] view the head stride is D and the token stride H*D, so
    # head * D // (H * D) floors to 0 and every head reads head 0's rows.
    T, H, D = x.shape
    token_stride, head_stride = H * D, D
    head_index = [h * head_stride // token_stride for h in range(H)]  # all 0
    read = x[:, head_index]
    return hf_rope(read, positions, hf_inv_freq(10000.0, 128))


def rope_iterates_heads_as_tokens(x, positions):
    # elixir-nx/emlx#121: mlx fast::rope on a row-contiguous {B, T, H, D} tensor walks its own "T"
    # axis over the heads, so head h is rotated at position + h instead of position (head 0 is
    # right). Decode-style: each token's heads get offset + head index.
    heads = x.shape[1]
    outs = [hf_rope(x[:, h:h + 1], positions + h, hf_inv_freq(10000.0, 128)) for h in range(heads)]
    return torch.cat(outs, 1)


def llama3_factors_swapped(x, positions):
    # Lightning-AI/litgpt#1745: the review of the llama3 frequency bands mixed up which wavelength
    # bound belongs to low_freq_factor and which to high_freq_factor. Here the reference
    # apply_scaling loop (high band kept, low band divided by the factor, a smooth band between)
    # is called with the two factors in each other's place.
    def apply_scaling(freqs, scale_factor, low_freq_factor, high_freq_factor, old_context_len):
        low_freq_wavelen = old_context_len / low_freq_factor
        high_freq_wavelen = old_context_len / high_freq_factor
        new_freqs = []
        for freq in freqs.tolist():
            wavelen = 2 * math.pi / freq
            if wavelen < high_freq_wavelen:
                new_freqs.append(freq)
            elif wavelen > low_freq_wavelen:
                new_freqs.append(freq / scale_factor)
            else:
                smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
                new_freqs.append((1 - smooth) * freq / scale_factor + smooth * freq)
        return torch.tensor(new_freqs, dtype=freqs.dtype)

    rope_scaling = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    inv_freq = apply_scaling(hf_inv_freq(500000.0, 128), rope_scaling["factor"], rope_scaling["high_freq_factor"],
                             rope_scaling["low_freq_factor"], rope_scaling["original_max_position_embeddings"])
    return hf_rope(x, positions, inv_freq)


def llama3_base_10000_decode_plus_one(x, positions):
    # lyogavin/airllm#369 (rope_theta never copied from the config: the default 10000 for Llama 3's
    # 500000) in a decode loop that also places each new token one position past its place
    # (Physical-Intelligence/openpi#705): two mistakes at once.
    return hf_rope(x, positions + 1, hf_inv_freq(10000.0, 128))


def shainet_interleaved_no_llama3(x, positions):
    # NeuraLegion/shainet#111: Llama 3.2 1B rotated with interleaved pairs (2i, 2i+1) where
    # HuggingFace Llama pairs i with i + head_dim/2, and without the llama3 rope_scaling
    # (rope_theta 500000 alone): both fixed in the same PR.
    return hf_rope(x, positions, hf_inv_freq(500000.0, 64), layout="interleaved")


def fused_qkv_key_slice_walked(x, positions):
    # vllm-project/vllm#17091: the rope kernel ignored the token stride of a sliced key. Here k is
    # the key slice of one fused [T, 8 q + 2 k + 2 v heads, D] projection (token stride 12 heads);
    # the kernel walks it from k's first element as a contiguous [T, 2, D] tensor.
    T, H, D = x.shape
    q_heads, kv_heads = 8, H
    g = torch.Generator().manual_seed(17091)
    qkv = torch.randn(T, q_heads + 2 * kv_heads, D, generator=g).to(x.dtype)
    qkv[:, q_heads:q_heads + kv_heads] = x
    flat = qkv.reshape(-1, D)
    rows = q_heads + torch.arange(T)[:, None] * kv_heads + torch.arange(kv_heads)[None, :]  # row t*H + h from k's start
    walked = flat[rows]
    return hf_rope(walked, positions, hf_inv_freq(10000.0, 128))


def transposed_view_walked(x, positions):
    # Dao-AILab/flash-attention#2667: a kernel built its layout with strides synthesized from the
    # shape (a contiguous [tokens, heads, dim]) and reused only the base pointer, so a transposed
    # view ([heads, tokens, dim] storage) was read at the wrong addresses.
    T, H, D = x.shape
    storage = x.transpose(0, 1).contiguous()  # what the caller holds: [H, T, D]; x is its transpose(0, 1)
    walked = storage.reshape(T, H, D)         # contiguous strides from the shape, same base pointer
    return hf_rope(walked, positions, hf_inv_freq(10000.0, 128))


def k_head_index_not_rebased(x, positions):
    # sgl-project/sglang#20559: one launch handles q heads then k heads, and the k pointer is
    # indexed with the launch's head id instead of head_id - num_qo_heads. With one k head and 8 q
    # heads, k row r reads k row r + 8: token t holds token t + 8's key (past the end: what lies
    # after the tensor, zeros here).
    T, H, D = x.shape
    num_qo_heads = 8
    flat = torch.cat((x.reshape(T * H, D), torch.zeros(num_qo_heads, D, dtype=x.dtype)), 0)
    read = flat[num_qo_heads:num_qo_heads + T * H].view(T, H, D)
    return hf_rope(read, positions, hf_inv_freq(10000.0, 128))


def _c(name, bug_class, report, spec, context, candidate, kind, text, what, **kw):
    dtype = [item.split("=")[1] for item in spec.split(",") if item.startswith("dtype=")][0]
    return Case(name, bug_class, report, spec, context, candidate, kind, text, dtype=dtype, what=what, **kw)


CASES = [
    _c("llama3_base_10000", "base",
       "lyogavin/airllm#369: Carry rope_theta from the config in the MLX Llama path (fixes #368)",
       SPEC_LLAMA3_8B, 8192, llama3_base_ignored, "base", "base=10000 (expected 500000)",
       "Llama 3 with the default base 10000 instead of rope_theta 500000"),
    _c("draft_base_10000", "base",
       "sgl-project/SpecForge#265: `rope_theta` from config isn't used?",
       SPEC_QWEN25_DRAFT, 32768, draft_base_ignored, "base", "base=10000 (expected 1000000)",
       "draft model rotary with base 10000 where the config says 1000000"),
    _c("jax_inv_freq_bf16", "theta_dtype",
       "sgl-project/sglang-jax#1472: [Bug] RoPE inverse frequencies are quantized before phase computation",
       SPEC_QWEN3, 40960, jax_inv_freq_bf16, "theta_dtype", "inv_freq (theta) rounded to bf16",
       "inv_freq cast to bfloat16 before the float32 phase"),
    _c("openvino_inv_freq_f16", "theta_dtype",
       "openvinotoolkit/openvino#35674: [FIX] Recover operation precision with transformation to reduce f16 e\u2026",
       SPEC_QWEN25_OV, 32768, openvino_inv_freq_f16, "theta_dtype", "inv_freq (theta) rounded to f16",
       "inv_freq constant compressed to f16 in an FP16 export, f32 compute"),
    _c("flux_positions_bf16", "positions_dtype",
       "Nerogar/OneTrainer#1177: [Bug]: Precision issues with positional embeddings",
       SPEC_FLUX_TEXT, 512, flux_positions_bf16, "positions_dtype", "positions rounded to bf16",
       "text position ids cast to bfloat16 before a float64 rope"),
    _c("megatron_angle_half", "angle_dtype",
       "deepspeedai/Megatron-DeepSpeed#206: Fix: Avoid compromising accuracy by prematurely applying half-precision.",
       SPEC_LLAMA2_F16, 4096, megatron_angle_half, "angle_dtype", "angle rounded to f16",
       "the angle converted to half before cos/sin"),
    _c("nanogpt_cos_sin_bf16", "cos_sin_dtype",
       "KellerJordan/modded-nanogpt#39: RoPE has precision errors when used with BFloat16",
       SPEC_NANOGPT, 1024, nanogpt_cos_sin_bf16, "cos_sin_dtype", "cos/sin rounded to bf16",
       "cos/sin tables in bfloat16 applied to float32 activations"),
    _c("qwen3_tf32_angle", "angle_tf32",
       "huggingface/transformers#48428: RoPE corruption due to TF32 on B200 (possibly others) when using "
       "`torch.set_float32_matmul_precision(\"high\")`",
       SPEC_QWEN3, 40960, qwen3_tf32_angle, "angle_tf32", "angle product in TF32",
       "inv_freq @ position_ids on TF32 tensor cores"),
    _c("llama31_scaling_dropped", "scaling",
       "ggml-org/llama.cpp#8676: Add llama 3.1 rope scaling factors to llama conversion and inference",
       SPEC_LLAMA31, 131072, llama31_scaling_dropped, "scaling", "scaling=none (expected llama3)",
       "Llama 3.1 without its llama3 rope scaling"),
    _c("phi3_long_factors_short_seq", "scaling",
       "ggml-org/llama.cpp#24823: Eval bug:Phi-3 / Phi-4 LongRoPE: short sequences silently use long-context RoPE "
       "factors when the allocated context exceeds original_max_position_embeddings",
       SPEC_PHI3_SHORT, 4096, phi3_long_factors_short_sequence, "scaling", "long_factor",
       "LongRoPE long factors for a 4096-token sequence"),
    _c("phi3_longrope_chunked_prefill", "scaling",
       "trymirai/uzu#604: Add LongRoPE config variant",
       SPEC_PHI3_LONG, 8192, phi3_longrope_chunked_prefill, "scaling", "switched per position",
       "LongRoPE factor set chosen per prefill chunk"),
    _c("gpt_oss_yarn_truncated", "scaling",
       "vllm-project/vllm#27722: [Bug]: `yarn_find_correction_range` incorrect for GPT-OSS",
       SPEC_GPT_OSS, 131072, gpt_oss_yarn_truncated, "scaling", "truncate=true (expected false)",
       "YaRN correction range rounded where gpt-oss says truncate=false"),
    _c("keras_yarn_untruncated", "scaling",
       "keras-team/keras-hub#2981: Match the reference YaRN implementation in RotaryEmbedding",
       SPEC_QWEN25_YARN, 131072, keras_yarn_untruncated, "scaling", "truncate=false (expected true)",
       "YaRN correction range not rounded (truncate defaulted to False)"),
    _c("nomic_dynamic_ntk_static", "scaling",
       "vllm-project/vllm#41236: [Bug]: Dynamic NTK RoPE scaling is wrong",
       SPEC_NOMIC_DYNAMIC, 3072, nomic_dynamic_ntk_static, "scaling", "seq_len=4096 (expected 3072)",
       "dynamic NTK at a constant base (the length factor*2048)"),
    _c("laguna_yarn_attention_factor", "attention_factor",
       "vllm-project/vllm#46280: [Bugfix] YaRN RoPE: honor explicit attention_factor from the rope config",
       SPEC_LAGUNA_YARN, 262144, laguna_yarn_attention_factor, "attention_factor", "attention factor",
       "YaRN's derived mscale 1.4159 where the config says attention_factor 1"),
    _c("glm4v_mrope_neox_pairs", "axes",
       "vllm-project/vllm#42765: [Bugfix] _triton_mrope_forward: support GPT-J-style rotation (#42016)",
       SPEC_GLM4V, 65536, glm4v_mrope_neox_pairs, "axes", "layout=half (expected interleaved)",
       "M-RoPE kernel with NeoX pairs for GLM-4.1V's interleaved rotation"),
    _c("qwen3vl_imrope_as_chunked", "axes",
       "alibaba/MNN#4133: fix: interleaved mrope in qwen3-vl",
       SPEC_QWEN3VL, 262144, qwen3vl_imrope_as_chunked, "axes", "axes=mrope (expected imrope)",
       "Qwen3-VL's interleaved M-RoPE computed with chunked sections"),
    _c("tiny_llm_offset_plus5", "position_offset",
       "skyzh/tiny-llm#46: fix: Add flash attention option and fix token offset",
       SPEC_QWEN2_05B, 32768, tiny_llm_offset_plus5, "position_offset", "positions offset by +5",
       "decode offset advanced by the prompt size: positions + 5"),
    _c("openpi_decode_plus_one", "position_offset",
       "Physical-Intelligence/openpi#705: potential bug in setting `positions` value for new token during decoding",
       SPEC_GEMMA_2B, 8192, openpi_decode_plus_one, "position_offset", "positions offset by +1",
       "decoded tokens one position past their place"),
    _c("glm_partial_rotary_ignored", "rotary_dim",
       "ml-explore/mlx-lm#1698: Honor partial_rotary_factor in glm",
       SPEC_GLM4, 32768, glm_partial_rotary_ignored, "rotary_dim", "rotary_dim=128 (expected 64)",
       "GLM's partial rotary ignored: all 128 dims rotated"),
    _c("cascadia_partial_pairs", "partial_pairs",
       "labscommunity/cascadia#69: feat(shard): partial rotary support + config-first arch rejection (reconcile #47)",
       SPEC_PARTIAL_HALF, 4096, cascadia_partial_pairs, "partial_pairs", "pairs (i, i + head_dim/2)",
       "partial rotary paired across head_dim/2 (zero-padded inv_freq)"),
    _c("gptj_neox_rotation", "layout",
       "vllm-project/vllm#941: [BugFix] Implement RoPE for GPT-J",
       SPEC_GPTJ, 2048, gptj_neox_rotation, "layout", "layout=half (expected interleaved)",
       "GPT-J rotated with NeoX-style halves"),
    _c("orion_norm_rope", "layout",
       "ggml-org/llama.cpp#13261: llama: orion rope type is neox",
       SPEC_ORION, 4096, orion_norm_rope, "layout", "layout=interleaved (expected half)",
       "Orion rotated with adjacent pairs (NORM) instead of NeoX halves"),
    _c("nanochat_inverse", "direction",
       "karpathy/nanochat#489: Fix rotation calculations in apply_rotary_emb function",
       SPEC_NANOCHAT, 2048, nanochat_rotation, "direction", "direction=inverse",
       "the transpose of the rotation (sine's sign flipped)"),
    _c("mlx_batched_decode_zeros", "memory_zeros",
       "ml-explore/mlx#3949: mx.fast.rope writes only the first batch row when sequence length is 1",
       SPEC_LLAMA_F32, 4096, mlx_single_token_batch_rows, "memory_zeros", "never written (zeros)",
       "only the first batch row written, the rest zeros"),
    _c("liger_single_kv_head", "memory_identity",
       "linkedin/Liger-Kernel#342: Rope fails when num_head = 1",
       SPEC_LLAMA_F32, 4096, liger_single_kv_head, "memory_identity", "no rotation applied",
       "k with one head returned unrotated", heads=1),
    _c("ort_positions_past_cache", "memory_identity",
       "microsoft/onnxruntime#28205: com.microsoft.RotaryEmbedding: returns if position_ids are out of boundary",
       SPEC_PHI3_MINI_F16, 8192, ort_positions_past_cache, "memory_identity", "no rotation applied",
       "positions past the 4096-row cache passed through unrotated"),
    _c("fused_qk_token_stride", "memory_stride",
       "vllm-project/vllm#17091: [Bugfix] Add contiguous call inside rope kernel wrapper",
       SPEC_DEEPSEEK_ROPE, 163840, fused_qk_token_stride_ignored, "memory_stride", "another token's data",
       "q/k slices of a fused projection walked as contiguous", heads=4),
    _c("gqa_heads_floor_division", "head_unrotated",
       "fla-org/flash-linear-attention#1029: [Bug] Non-divisible GQA head counts can leave outputs unwritten or read invalid KV heads",
       SPEC_LLAMA_F32, 4096, gqa_heads_floor_division, "head_unrotated", "heads 4..5 of 6 left unrotated",
       "in-place rope over G = HQ // H groups: q heads 4, 5 of 6 keep their input", heads=6),
    _c("aprender_head0_only", "head_zeros",
       "paiml/aprender#2079: fix(cuda): RoPE NORM GPU kernel rotated only head 0 \u2014 LLaMA/Mistral GPU decode garbage (PMAT-792)",
       SPEC_LLAMA_F32, 4096, rope_flat_grid_head0, "head_zeros", "heads 1..3 of 4 never written (zeros)",
       "a flat grid: only head 0 rotated, heads 1..3 left 0.0", heads=4),
    _c("attorch_every_head_reads_head0", "head_permuted",
       "BobMcDear/attorch#14: MultiheadAttention resolves every head to head 0: the kernels derive the head offset by dividing "
       "strides, which is wrong for the layout the layer passes them",
       SPEC_LLAMA_F32, 4096, head_offset_floors_to_zero, "head_permuted",
       "heads holding another head's input (head 1 holds head 0's input, head 2 holds head 0's input, head 3 holds head 0's input)",
       "head offset = h*D // (H*D) = 0: every head reads head 0", heads=4),
    _c("emlx_heads_as_positions", "head_positions",
       "elixir-nx/emlx#121: EMLX.Fast.rope*/mlx::core::fast::rope miscomputes rotations for multi-head (H>1) {B,T,H,D} tensors",
       SPEC_LLAMA_F32, 4096, rope_iterates_heads_as_tokens, "head_positions",
       "positions that differ by head: head 1 at positions offset by +1, head 2 by +2, head 3 by +3",
       "heads walked as the sequence axis: head h rotated at position + h", heads=4),
    _c("litgpt_llama3_factors_swapped", "two_changes",
       "Lightning-AI/litgpt#1745: Improve rope",
       SPEC_LLAMA31, 131072, llama3_factors_swapped, "two_changes",
       "low_freq_factor=4 and high_freq_factor=1 (expected 1 and 4): llama3's two frequency factors swapped",
       "llama3 apply_scaling with low_freq_factor and high_freq_factor in each other's place"),
    _c("airllm_base_and_decode_offset", "two_changes",
       "lyogavin/airllm#369: Carry rope_theta from the config in the MLX Llama path (fixes #368)",
       SPEC_LLAMA3_F32, 8192, llama3_base_10000_decode_plus_one, "two_changes",
       "two changes: base=10000 (expected 500000) and positions offset by +1",
       "Llama 3 at base 10000 and every position one past its place"),
    _c("shainet_layout_and_scaling", "two_changes",
       "NeuraLegion/shainet#111: fix: RoPE half-split convention + LLaMA 3 rope_scaling",
       SPEC_LLAMA32_1B, 131072, shainet_interleaved_no_llama3, "two_changes",
       "two changes: layout=interleaved (expected half) and scaling=none (expected llama3)",
       "Llama 3.2 1B with interleaved pairs and no llama3 scaling"),
    _c("fused_qkv_key_slice", "memory_stride",
       "vllm-project/vllm#17091: [Bugfix] Add contiguous call inside rope kernel wrapper",
       SPEC_LLAMA_F32, 4096, fused_qkv_key_slice_walked, "memory_stride",
       "the token stride ignored (token t, head h reads head row 2t + h as if tokens were 2 head rows apart; the data's tokens "
       "are 12 head rows apart",
       "the key slice of a fused QKV (token stride 12 heads) walked as contiguous"),
    _c("flash_attn_transposed_view", "memory_head_stride",
       "Dao-AILab/flash-attention#2667: fix(hd256/sm100): make the dedicated hd256 kernel stride-aware (supersede #2666 copy)",
       SPEC_LLAMA_F32, 4096, transposed_view_walked, "memory_head_stride",
       "the head stride ignored (a [heads, tokens] layout of 4096 tokens walked as [tokens, heads]",
       "a [heads, tokens] storage read with strides synthesized for [tokens, heads]", heads=4),
    _c("sglang_k_head_not_rebased", "memory_offset",
       "sgl-project/sglang#20559: [Bug] [ROPE] IMA and ivalid logic in rope.cuh",
       SPEC_LLAMA_F32, 4096, k_head_index_not_rebased, "memory_offset",
       "row r (token x head) holds row r+8's input (token t holds token t+8's)",
       "k indexed by the launch's head id, not head_id - num_qo_heads: row r reads row r + 8", heads=1),
    _c("cos_sin_cache_past_end", "raised",
       "vllm-project/vllm#44286: [Bugfix] Fail fast or extend RoPE cache when VLLM_ALLOW_LONG_MAX_MODEL_LEN exceeds "
       "model positions",
       SPEC_LLAMA2_F16, 8192, long_max_model_len_cache, "raised", "raised IndexError at position 4096",
       "cos/sin cache of 4096 rows indexed past its end", raises=True),
]
