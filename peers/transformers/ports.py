"""Faithful ports of the rotary code of model types that transformers 4.47.1 (the newest release that
runs on Debian's torch 1.13, README.md) does not have, from transformers 4.57.6 (the last 4.x release,
PyPI wheel `transformers-4.57.6-py3-none-any.whl`, read from its sources; 5.x moved rope parameters
into `rope_parameters`, which published configs of these models do not use).

Every statement below carries the file and line of 4.57.6 it computes (paths under
`src/transformers/`); the arithmetic is the same torch calls in the same order and dtypes, so the
bits are the library's. Only the layers' plumbing is left out (projections, norms, caches): the
q/k a layer rotates go in as [tokens, heads, head_dim] and come out the same way, transposed to and
from HF's [batch=1, heads, tokens, head_dim] around the apply function as the attention does.

A model type is a `PortedModel`: the config class's defaults and derived fields (`config`), and per
decoder layer what its attention does with positions (`layer(i)`: a `Rotation` or None for a layer
that applies no RoPE).
"""
import copy
import math
from types import SimpleNamespace

import torch

VERSION = "4.57.6"
MODELS = "src/transformers/models"
ROPE_UTILS = "src/transformers/modeling_rope_utils.py"


# ---- modeling_rope_utils.py: inv_freq and the attention factor per rope type -------------------

def default_parameters(config):
    """modeling_rope_utils.py:123-132 `_compute_default_rope_parameters`."""
    base = config.rope_theta  # :123
    partial_rotary_factor = getattr(config, "partial_rotary_factor", 1.0)  # :124
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads  # :126
    dim = int(head_dim * partial_rotary_factor)  # :126
    attention_factor = 1.0  # :128
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float) / dim))  # :131
    return inv_freq, attention_factor


def linear_parameters(config):
    """modeling_rope_utils.py:166-175 `_compute_linear_scaling_rope_parameters`."""
    factor = config.rope_scaling["factor"]  # :166
    inv_freq, attention_factor = default_parameters(config)  # :169
    inv_freq /= factor  # :174
    return inv_freq, attention_factor


def yarn_parameters(config):
    """modeling_rope_utils.py:303-368 `_compute_yarn_parameters` (4.57.6 reads original_max_position_embeddings,
    mscale, mscale_all_dim and truncate; 4.47.1 read none of them: README.md quirk 1)."""
    rs = config.rope_scaling
    base = config.rope_theta  # :302
    partial_rotary_factor = getattr(config, "partial_rotary_factor", 1.0)  # :303
    head_dim = getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)  # :304
    dim = int(head_dim * partial_rotary_factor)  # :305
    factor = rs["factor"]  # :306
    attention_factor = rs.get("attention_factor")  # :307
    mscale = rs.get("mscale")  # :308
    mscale_all_dim = rs.get("mscale_all_dim")  # :309
    original_max_position_embeddings = rs.get("original_max_position_embeddings") or config.max_position_embeddings  # :310-312

    def get_mscale(scale, mscale=1):  # :314-317
        if scale <= 1:
            return 1.0
        return 0.1 * mscale * math.log(scale) + 1.0

    if attention_factor is None:  # :320-324
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast = rs.get("beta_fast") or 32  # :328
    beta_slow = rs.get("beta_slow") or 1  # :329

    def find_correction_dim(num_rotations, dim, base, max_position_embeddings):  # :332-334
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings, truncate):  # :336-343
        low = find_correction_dim(low_rot, dim, base, max_position_embeddings)
        high = find_correction_dim(high_rot, dim, base, max_position_embeddings)
        if truncate:
            low = math.floor(low)
            high = math.ceil(high)
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min, max, dim):  # :345-351
        if min == max:
            max += 0.001
        linear_func = (torch.arange(dim, dtype=torch.float32) - min) / (max - min)
        return torch.clamp(linear_func, 0, 1)

    pos_freqs = base ** (torch.arange(0, dim, 2).to(dtype=torch.float) / dim)  # :355
    inv_freq_extrapolation = 1.0 / pos_freqs  # :356
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)  # :357
    truncate = rs.get("truncate", True)  # :359
    low, high = find_correction_range(beta_fast, beta_slow, dim, base, original_max_position_embeddings, truncate)  # :360
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2).to(dtype=torch.float)  # :363
    inv_freq = (inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)  # :364-368
                + inv_freq_extrapolation * inv_freq_extrapolation_factor)
    return inv_freq, attention_factor


def llama3_parameters(config):
    """modeling_rope_utils.py:495-515 `_compute_llama3_parameters`. Equal low and high factors (Llama-4) divide
    the tensor at :510 by 0.0 (inf/nan, no exception); no wavelength is then medium (:512), so the smoothed
    value is never selected."""
    inv_freq, attention_factor = default_parameters(config)  # :495
    rs = config.rope_scaling
    factor = rs["factor"]  # :497
    low_freq_factor = rs["low_freq_factor"]  # :498
    high_freq_factor = rs["high_freq_factor"]  # :499
    old_context_len = rs["original_max_position_embeddings"]  # :500
    low_freq_wavelen = old_context_len / low_freq_factor  # :502
    high_freq_wavelen = old_context_len / high_freq_factor  # :503
    wavelen = 2 * math.pi / inv_freq  # :505
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)  # :508
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)  # :510
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama  # :511
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)  # :512
    inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)  # :513
    return inv_freq_llama, attention_factor


ROPE_INIT_FUNCTIONS = {"default": default_parameters, "linear": linear_parameters,  # :521-528, the types ported
                       "yarn": yarn_parameters, "llama3": llama3_parameters}


def rope_type_of(config):
    """The rotary modules' `__init__` (e.g. models/qwen3/modeling_qwen3.py:305-308): rope_scaling's rope_type
    (or its older name `type`), else default."""
    if isinstance(getattr(config, "rope_scaling", None), dict):
        return config.rope_scaling.get("rope_type", config.rope_scaling.get("type"))
    return "default"


def rope_init(config, rope_type):
    if rope_type not in ROPE_INIT_FUNCTIONS:
        raise ValueError(f"ports.py: rope type {rope_type!r} is not ported (ported: {sorted(ROPE_INIT_FUNCTIONS)})")
    inv_freq, attention_scaling = ROPE_INIT_FUNCTIONS[rope_type](config)
    return inv_freq, attention_scaling


# ---- the rotary modules' forward: cos/sin (or freqs_cis) from inv_freq and positions -----------

def freqs(inv_freq, position_ids):
    """`forward` of every rotary module (models/qwen3/modeling_qwen3.py:322-327, the same lines in
    gemma3:169-174, smollm3:326-331, cohere2:66-71, glm4:315-320, ernie4_5:65-70, gpt_oss:197-202,
    deepseek_v3:79-84, llama4:189-194, deepseek_v2:222-227): float32 inv_freq @ float32 positions,
    autocast disabled (CPU here)."""
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    return (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)


def cos_sin(f, attention_scaling, emb_kind, dtype):
    """cos/sin of the module's `forward`: emb = cat((freqs, freqs)) (qwen3:328, gemma3:175, smollm3:332,
    glm4:321, ernie4_5:71, deepseek_v3:85), repeat_interleave(freqs, 2) (cohere2:72) or freqs itself
    (gpt_oss:203); × attention_scaling (qwen3:329-330); cast to the activations' dtype (qwen3:332)
    except ERNIE-4.5, which keeps float32 (ernie4_5:75-76)."""
    if emb_kind == "cat":
        emb = torch.cat((f, f), dim=-1)
    elif emb_kind == "repeat_interleave":
        emb = torch.repeat_interleave(f, 2, dim=-1)
    else:
        emb = f
    cos = emb.cos() * attention_scaling
    sin = emb.sin() * attention_scaling
    if dtype is None:
        return cos, sin
    return cos.to(dtype=dtype), sin.to(dtype=dtype)


def freqs_cis(f, attention_scaling):
    """Llama-4 / DeepSeek-V2 `forward` (llama4:195-196, deepseek_v2:228-229): complex cis of the angles."""
    out = torch.polar(torch.ones_like(f), f)
    return out * attention_scaling


# ---- the apply functions ------------------------------------------------------------------------

def rotate_half(x):
    """qwen3:88-90 (also gemma3:184-186, smollm3:51-53, deepseek_v3:213-215)."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_pairs(x):
    """The even/odd `rotate_half` of glm4:155-157 and ernie4_5:98-100 (cohere2:136-139 writes it with a list)."""
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_half(q, cos, sin):
    """`apply_rotary_pos_emb` of qwen3:113-117 (gemma3:209-213, smollm3:76-80, deepseek_v3:238-242)."""
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    return (q * cos) + (rotate_half(q) * sin)


def apply_cohere2(q, cos, sin):
    """cohere2:162-169: float32 rotation of the even/odd pairs, cast back."""
    dtype = q.dtype
    q = q.float()
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    q_embed = (q * cos) + (rotate_pairs(q) * sin)
    return q_embed.to(dtype=dtype)


def apply_glm4(q, cos, sin):
    """glm4:180-199: the first half of cos/sin repeat-interleaved, rotary_dim = cos.shape[-1], the pairs
    (0,1),(2,3).. of q[..., :rotary_dim] rotated, the rest passed through."""
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    cos = cos[..., : cos.shape[-1] // 2].repeat_interleave(2, dim=-1)
    sin = sin[..., : sin.shape[-1] // 2].repeat_interleave(2, dim=-1)
    rotary_dim = cos.shape[-1]
    q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
    q_embed = (q_rot * cos) + (rotate_pairs(q_rot) * sin)
    return torch.cat([q_embed, q_pass], dim=-1)


def apply_ernie4_5(q, cos, sin):
    """ernie4_5:162-174: float32 cos/sin repeat-interleaved from their first half, float32 rotation of the
    even/odd pairs, cast back to q's dtype."""
    original_dtype = q.dtype
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    cos = cos[..., : cos.shape[-1] // 2].repeat_interleave(2, dim=-1)
    sin = sin[..., : sin.shape[-1] // 2].repeat_interleave(2, dim=-1)
    q_embed = (q.float() * cos) + (rotate_pairs(q).float() * sin)
    return q_embed.to(original_dtype)


def apply_gpt_oss(q, cos, sin):
    """gpt_oss:222-238 `_apply_rotary_emb`: halves rotated with cos/sin of d/2 angles (no cat)."""
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    first_half, second_half = torch.chunk(q, 2, dim=-1)
    first_ = first_half * cos - second_half * sin
    second_ = second_half * cos + first_half * sin
    return torch.cat((first_, second_), dim=-1)


def apply_complex(q, fcis, layout):
    """`apply_rotary_emb` of llama4:201-210 and deepseek_v2:272-285: float32 pairs (0,1),(2,3).. as complex
    numbers times freqs_cis, type_as(q). HF layout [1, heads, tokens, d] for DeepSeek-V2 (freqs_cis.unsqueeze(1));
    Llama-4 applies it before the transpose, on [1, tokens, heads, d] (freqs_cis[:, :, None, :])."""
    q_ = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
    f = fcis[:, :, None, :] if layout == "tokens_first" else fcis.unsqueeze(1)
    return torch.view_as_real(q_ * f).flatten(3).type_as(q)


def apply_deepseek_v3_interleave(q, cos, sin):
    """deepseek_v3:307-318 `apply_rotary_pos_emb_interleave`: q's pairs (0,1),(2,3).. de-interleaved into
    halves, then rotate_half. Its output is in the de-interleaved order (pair j at dims j and j + d/2); the
    same permutation of q and k leaves every q·k of the attention unchanged."""
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    b, h, s, d = q.shape
    q = q.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    return (q * cos) + (rotate_half(q) * sin)


def reinterleave(out):
    """The de-interleaved order back to pairs (0,1),(2,3)..: dims j and j + d/2 → 2j, 2j+1 (the inverse of
    deepseek_v3:311's view/transpose; a permutation, no arithmetic)."""
    d = out.shape[-1]
    return torch.stack((out[..., : d // 2], out[..., d // 2:]), dim=-1).flatten(-2)


# ---- config classes: defaults and derived fields ---------------------------------------------

class Config(SimpleNamespace):
    """The fields a config class sets; `getattr(config, "head_dim", ...)` as the library's code reads them."""


def make_config(raw, defaults):
    fields = dict(defaults)
    fields.update({k: copy.deepcopy(v) for k, v in raw.items() if not k.startswith("_")})
    return Config(**fields)


def layer_types_from_pattern(num_layers, pattern):
    """gemma3/configuration_gemma3.py:236-242, cohere2/configuration_cohere2.py:220-228: every `pattern`-th layer
    full attention, the others sliding."""
    return ["sliding_attention" if bool((i + 1) % pattern) else "full_attention" for i in range(num_layers)]


def no_rope_layers_from_interval(num_layers, interval):
    """smollm3/configuration_smollm3.py:218-223, llama4/configuration_llama4.py:375-377: 1 (RoPE) except every
    `interval`-th layer."""
    return [int((i + 1) % interval != 0) for i in range(num_layers)]
