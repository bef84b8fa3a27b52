"""What each model type's own code does with positions, per decoder layer: transformers 4.47.1's classes
where the installed release has the model type, else the faithful ports of 4.57.6 (ports.py); for
DeepSeek-V3 and Kimi-K2 also DeepSeek's own inference code (a config with `"_code":
"deepseek-ai/DeepSeek-V3"`).

`model_rotation(raw)` takes a config.json dict (a `text_config` is read as the model reads it) and
returns a `Model`: `source` (where the code comes from), `num_layers`, and `layer(i)`: None for a
layer whose attention applies no RoPE, else a `Rotation` with `inv_freq` (the float32 frequencies the
module holds), `attention` (its attention_scaling) and `rotate(x, positions)`: the rotation of
x [tokens, heads, head_dim] (torch, the activations' dtype) at int64 positions [tokens] (Qwen2-VL:
[3, tokens]), computed by the model's own module and apply function, as its attention calls them
(transposed to HF's [1, heads, tokens, head_dim] and back).
"""
import copy
import importlib
import math
from dataclasses import dataclass
from typing import Callable, Optional

import torch

import ports

try:
    import transformers
    from transformers import CONFIG_MAPPING
except ImportError:  # the test skips without it
    transformers = None

INSTALLED = transformers.__version__ if transformers is not None else None


@dataclass
class Rotation:
    inv_freq: torch.Tensor
    attention: float
    rotate: Callable


@dataclass
class Model:
    source: str
    num_layers: int
    layer: Callable[[int], Optional[Rotation]]


def text_fields(raw):
    """The text model's fields: a vision-language config's `text_config` (the top level's torch_dtype kept)."""
    fields = {k: copy.deepcopy(v) for k, v in raw.items() if not k.startswith("_") and k != "architectures"}
    if "text_config" in fields:
        text = fields.pop("text_config")
        fields = dict({k: v for k, v in fields.items() if k != "model_type"}, **text)
    return fields


def hf_layout(x):
    """[tokens, heads, d] -> HF's [1, heads, tokens, d]."""
    return x.permute(1, 0, 2).unsqueeze(0)


def from_hf_layout(q):
    return q.squeeze(0).permute(1, 0, 2).contiguous()


# ---- transformers 4.47.1 (installed) ------------------------------------------------------------

def installed(model_type, fields, make_module, apply, head_dim_of, rotary_dims=None):
    """A model type whose every layer is the same rotary module + apply function of the installed library.
    make_module(config) builds the module as the model does; apply(q, k, cos, sin) is the model's function;
    rotary_dims(config): GPT-NeoX's `rotary_ndims` (query[..., :rotary_ndims] rotated, the rest passed)."""
    config = CONFIG_MAPPING[model_type](**{k: v for k, v in fields.items() if k != "model_type"})
    module = make_module(config)

    def rotate(x, positions):
        q = hf_layout(x)
        position_ids = positions[None, :] if positions.dim() == 1 else positions[:, None, :]
        if model_type == "mixtral":  # MixtralAttention: the cached table up to kv_seq_len, indexed by position_ids
            cos, sin = module(q, seq_len=int(positions.max()) + 1)
            out, _ = apply(q, q, cos, sin, position_ids)
            return from_hf_layout(out)
        cos, sin = module(q, position_ids)
        if rotary_dims is None:
            out, _ = apply(q, q, cos, sin)
        else:
            n = rotary_dims(config)
            out, _ = apply(q[..., :n], q[..., :n], cos, sin)
            out = torch.cat((out, q[..., n:]), dim=-1)
        return from_hf_layout(out)

    zero = torch.zeros(3, 1, 1, dtype=torch.int64) if model_type == "qwen2_vl" else torch.zeros(1, 1, dtype=torch.int64)
    cos0, _ = module(torch.zeros(1), seq_len=1) if model_type == "mixtral" else module(torch.zeros(1), zero)
    rotation = Rotation(module.inv_freq.float(), float(cos0.reshape(-1)[0]), rotate)  # cos(0) = attention scaling
    return Model(f"transformers {INSTALLED}", config.num_hidden_layers, lambda i: rotation)


def installed_model(model_type, fields):
    m = transformers.models
    head = lambda c: c.hidden_size // c.num_attention_heads  # noqa: E731  (the attentions' head_dim, 4.47.1)
    old_style = lambda cls, dim: lambda c: cls(dim(c), max_position_embeddings=c.max_position_embeddings,  # noqa: E731
                                               base=c.rope_theta)
    table = {
        # LlamaModel: LlamaRotaryEmbedding(config=...) (modeling_llama.py:288), apply_rotary_pos_emb
        "llama": (lambda c: m.llama.modeling_llama.LlamaRotaryEmbedding(config=c), m.llama.modeling_llama.apply_rotary_pos_emb),
        "qwen2": (lambda c: m.qwen2.modeling_qwen2.Qwen2RotaryEmbedding(config=c), m.qwen2.modeling_qwen2.apply_rotary_pos_emb),
        "qwen2_moe": (lambda c: m.qwen2_moe.modeling_qwen2_moe.Qwen2MoeRotaryEmbedding(config=c),
                      m.qwen2_moe.modeling_qwen2_moe.apply_rotary_pos_emb),
        "granite": (lambda c: m.granite.modeling_granite.GraniteRotaryEmbedding(c),
                    m.granite.modeling_granite.apply_rotary_pos_emb),
        "cohere": (lambda c: m.cohere.modeling_cohere.CohereRotaryEmbedding(config=c),
                   m.cohere.modeling_cohere.apply_rotary_pos_emb),
        "gpt_neox": (lambda c: m.gpt_neox.modeling_gpt_neox.GPTNeoXRotaryEmbedding(config=c),
                     m.gpt_neox.modeling_gpt_neox.apply_rotary_pos_emb),
        "qwen2_vl": (old_style(m.qwen2_vl.modeling_qwen2_vl.Qwen2VLRotaryEmbedding, head),
                     lambda q, k, cos, sin: m.qwen2_vl.modeling_qwen2_vl.apply_multimodal_rotary_pos_emb(
                         q, k, cos, sin, QWEN2_VL_SECTIONS[0])),
        # the attentions that build their module from (head_dim, max_position_embeddings, rope_theta):
        # MistralAttention (modeling_mistral.py:208), Gemma2Attention (:357), Phi3Attention (:341),
        # Olmo2Attention (:211), GlmModel (modeling_glm.py:708: dim = head_dim · partial_rotary_factor)
        "mistral": (old_style(m.mistral.modeling_mistral.MistralRotaryEmbedding, lambda c: c.head_dim),
                    m.mistral.modeling_mistral.apply_rotary_pos_emb),
        "gemma2": (old_style(m.gemma2.modeling_gemma2.Gemma2RotaryEmbedding, lambda c: c.head_dim),
                   m.gemma2.modeling_gemma2.apply_rotary_pos_emb),
        # MixtralAttention (modeling_mixtral.py:299): the cached cos/sin table of 4.47.1's Mixtral
        "mixtral": (old_style(m.mixtral.modeling_mixtral.MixtralRotaryEmbedding, lambda c: c.head_dim),
                    m.mixtral.modeling_mixtral.apply_rotary_pos_emb),
        "gemma": (old_style(m.gemma.modeling_gemma.GemmaRotaryEmbedding, lambda c: c.head_dim),
                  m.gemma.modeling_gemma.apply_rotary_pos_emb),
        "phi3": (old_style(m.phi3.modeling_phi3.Phi3RotaryEmbedding, head), m.phi3.modeling_phi3.apply_rotary_pos_emb),
        "olmo2": (old_style(m.olmo2.modeling_olmo2.Olmo2RotaryEmbedding, head), m.olmo2.modeling_olmo2.apply_rotary_pos_emb),
        "glm": (old_style(m.glm.modeling_glm.GlmRotaryEmbedding, lambda c: int(c.head_dim * c.partial_rotary_factor)),
                m.glm.modeling_glm.apply_rotary_pos_emb),
    }
    make, apply = table[model_type]
    if model_type == "qwen2_vl":
        QWEN2_VL_SECTIONS[0] = fields["rope_scaling"]["mrope_section"]
    rotary = (lambda c: int(head(c) * c.rotary_pct)) if model_type == "gpt_neox" else None  # GPTNeoXAttention:272
    return installed(model_type, fields, make, apply, head, rotary)


QWEN2_VL_SECTIONS = [None]  # Qwen2VLAttention passes config.rope_scaling["mrope_section"]
INSTALLED_TYPES = ("llama", "qwen2", "qwen2_moe", "granite", "cohere", "gpt_neox", "qwen2_vl", "mistral", "mixtral", "gemma",
                   "gemma2", "phi3", "olmo2", "glm")
# Model types whose code is another's: phi3_v (remote code, Phi3VForCausalLM) runs transformers' Phi-3 text model;
# qwen2_vl_text is Qwen2-VL's text_config (transformers 4.57.6 names it; 4.47.1 reads the same fields as qwen2_vl).
ALIASES = {"phi3_v": "phi3", "qwen2_vl_text": "qwen2_vl"}


def installed_sinusoidal(model_type, fields):
    """GPT-J / CodeGen (4.47.1): create_sinusoidal_positions(max_positions, rotary_dim) (modeling_gptj.py:61-64,
    modeling_codegen.py:41-44), the rows of the positions gathered, split into sin and cos, and
    apply_rotary_pos_emb (gptj:79-82, repeat_interleave, rotate_every_two) on query[..., :rotary_dim] in
    [batch, tokens, heads, d] (GPTJAttention.forward :216-231; CodeGenAttention likewise)."""
    config = CONFIG_MAPPING[model_type](**{k: v for k, v in fields.items() if k != "model_type"})
    module = importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
    head_dim = config.n_embd // config.n_head
    dim = config.rotary_dim or head_dim
    table = module.create_sinusoidal_positions(config.n_positions, dim)
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.int64) / dim))  # gptj:62, the table's operand

    def rotate(x, positions):
        q = x.unsqueeze(0)
        sincos = table[positions[None, :]]
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        out = module.apply_rotary_pos_emb(q[..., :dim], sin, cos)
        return torch.cat([out, q[..., dim:]], dim=-1).squeeze(0)

    rotation = Rotation(inv_freq.float(), 1.0, rotate)
    return Model(f"transformers {INSTALLED}", config.n_layer, lambda i: rotation)


# ---- ports of 4.57.6 ---------------------------------------------------------------------------

def standard(config, rope_type, emb_kind, apply, dtype_out=True):
    """A rotary module of the Llama pattern (ports.freqs / cos_sin) and an apply function on [1, heads, tokens, d]."""
    inv_freq, attention = ports.rope_init(config, rope_type)

    def rotate(x, positions):
        q = hf_layout(x)
        cos, sin = ports.cos_sin(ports.freqs(inv_freq, positions[None, :]), attention, emb_kind,
                                 q.dtype if dtype_out else None)
        return from_hf_layout(apply(q, cos, sin))

    return Rotation(inv_freq, attention, rotate)


def complex_rotation(config, rope_type, tokens_first):
    """Llama-4 / DeepSeek-V2: freqs_cis and the complex apply (ports.apply_complex)."""
    inv_freq, attention = ports.rope_init(config, rope_type)

    def rotate(x, positions):
        f = ports.freqs_cis(ports.freqs(inv_freq, positions[None, :]), attention)
        if tokens_first:  # Llama4TextAttention applies it on [1, tokens, heads, d] (llama4:321-331)
            return ports.apply_complex(x.unsqueeze(0), f, "tokens_first").squeeze(0)
        return from_hf_layout(ports.apply_complex(hf_layout(x), f, "heads_first"))

    return Rotation(inv_freq, attention, rotate)


def mrope(config, sections, interleaved):
    """Qwen2.5-VL (modeling_qwen2_5_vl.py:491-526 forward on [3, batch, tokens] positions; apply_multimodal_rotary_pos_emb
    :545-587, sections doubled and each chunk of cos/sin taken from component i % 3) and Qwen3-VL
    (modeling_qwen3_vl.py:278-334: apply_interleaved_mrope :299-314 overwrites the temporal angles at indices
    1, 4, 7.. with the height's and 2, 5, 8.. with the width's up to 3·section; apply_rotary_pos_emb :358-382)."""
    inv_freq, attention = ports.rope_init(config, ports.rope_type_of(config))

    def rotate(x, positions):
        q = hf_layout(x)
        inv_freq_expanded = inv_freq[None, None, :, None].float().expand(3, 1, -1, 1)
        position_ids_expanded = positions[:, None, None, :].float()
        f = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(2, 3)
        if interleaved:
            freqs_t = f[0]
            for dim, offset in enumerate((1, 2), start=1):
                length = sections[dim] * 3
                idx = slice(offset, length, 3)
                freqs_t[..., idx] = f[dim, ..., idx]
            cos, sin = ports.cos_sin(freqs_t, attention, "cat", q.dtype)
            return from_hf_layout(ports.apply_half(q, cos, sin))
        cos, sin = ports.cos_sin(f, attention, "cat", q.dtype)
        doubled = sections * 2
        cos = torch.cat([m[i % 3] for i, m in enumerate(cos.split(doubled, dim=-1))], dim=-1)
        sin = torch.cat([m[i % 3] for i, m in enumerate(sin.split(doubled, dim=-1))], dim=-1)
        return from_hf_layout(ports.apply_half(q, cos, sin))

    return Rotation(inv_freq, attention, rotate)


def port_qwen2_5_vl(f):
    """qwen2_5_vl (and its text_config, qwen2_5_vl_text): Qwen2_5_VLTextConfig rope_theta 1e6, head_dim =
    hidden_size // num_attention_heads (modeling_qwen2_5_vl.py:609), rope type `mrope` read as default
    (configuration_qwen2_5_vl.py:256-259)."""
    c = ports.make_config(f, {"rope_theta": 1000000.0, "rope_scaling": None})
    c.head_dim = c.hidden_size // c.num_attention_heads
    if c.rope_scaling is not None and "type" in c.rope_scaling:
        if c.rope_scaling["type"] == "mrope":
            c.rope_scaling["type"] = "default"
        c.rope_scaling["rope_type"] = c.rope_scaling["type"]
    r = mrope(c, c.rope_scaling["mrope_section"], interleaved=False)
    return port("qwen2_5_vl/modeling_qwen2_5_vl.py", c, c.num_hidden_layers, lambda i: r)


def port_qwen3_vl(f):
    """qwen3_vl (and qwen3_vl_text): Qwen3VLTextConfig rope_theta 5e6, head_dim 128 (configuration_qwen3_vl.py:175,
    182); Qwen3VLTextRotaryEmbedding reads rope_scaling's rope_type, default "default" (:284), and mrope_section,
    default [24, 20, 20] (:297)."""
    c = ports.make_config(f, {"rope_theta": 5000000.0, "head_dim": 128, "rope_scaling": None})
    rope_type = c.rope_scaling.get("rope_type", "default") if c.rope_scaling is not None else "default"
    c.rope_scaling = dict(c.rope_scaling or {}, rope_type=rope_type)
    r = mrope(c, c.rope_scaling.get("mrope_section", [24, 20, 20]), interleaved=True)
    return port("qwen3_vl/modeling_qwen3_vl.py", c, c.num_hidden_layers, lambda i: r)


def port(path, config, num_layers, layer):
    return Model(f"port of transformers {ports.VERSION} {ports.MODELS}/{path}", num_layers, layer)


def port_qwen3(f):
    """qwen3: Qwen3Config defaults rope_theta 10000, head_dim 128 (configuration_qwen3.py); Qwen3RotaryEmbedding
    (modeling_qwen3.py:299-332), apply_rotary_pos_emb (:93-117)."""
    c = ports.make_config(f, {"rope_theta": 10000.0, "head_dim": 128, "rope_scaling": None})
    r = standard(c, ports.rope_type_of(c), "cat", ports.apply_half)
    return port("qwen3/modeling_qwen3.py", c, c.num_hidden_layers, lambda i: r)


def port_qwen3_moe(f):
    """qwen3_moe: Qwen3MoeConfig rope_theta 10000 (configuration_qwen3_moe.py:184), no head_dim default: the
    attention's getattr falls back to hidden_size // num_attention_heads (modeling_qwen3_moe.py:129);
    Qwen3MoeRotaryEmbedding (:368), rotate_half / apply_rotary_pos_emb (:50-81), the lines of qwen3."""
    c = ports.make_config(f, {"rope_theta": 10000.0, "rope_scaling": None})
    r = standard(c, ports.rope_type_of(c), "cat", ports.apply_half)
    return port("qwen3_moe/modeling_qwen3_moe.py", c, c.num_hidden_layers, lambda i: r)


def port_gemma3(f):
    """gemma3_text: Gemma3TextConfig (configuration_gemma3.py:177-242: head_dim 256, rope_theta 1e6,
    rope_local_base_freq 1e4, layer_types from sliding_window_pattern 6); Gemma3TextModel builds the global
    module from the config (modeling_gemma3.py:472) and the local one from a copy with rope_theta =
    rope_local_base_freq and rope_scaling default (:476-480); sliding layers take the local one (:377-380)."""
    c = ports.make_config(f, {"head_dim": 256, "rope_theta": 1_000_000.0, "rope_local_base_freq": 10_000.0,
                              "rope_scaling": None, "layer_types": None})
    if c.layer_types is None:
        c.layer_types = ports.layer_types_from_pattern(c.num_hidden_layers, f.get("sliding_window_pattern", 6))
    glob = standard(c, ports.rope_type_of(c), "cat", ports.apply_half)
    local_config = copy.deepcopy(c)
    local_config.rope_theta = local_config.rope_local_base_freq
    local_config.rope_scaling = {"rope_type": "default"}
    local = standard(local_config, "default", "cat", ports.apply_half)
    return port("gemma3/modeling_gemma3.py", c, c.num_hidden_layers,
                lambda i: local if c.layer_types[i] == "sliding_attention" else glob)


def port_cohere2(f):
    """cohere2: Cohere2Config (configuration_cohere2.py:174, 206, 220-228: rope_theta 1e4, head_dim =
    hidden_size // num_attention_heads, layer_types from sliding_window_pattern 4); Cohere2RotaryEmbedding
    (modeling_cohere2.py:43-76, repeat_interleave), apply_rotary_pos_emb (:142-169); only sliding layers
    rotate (:217-218)."""
    c = ports.make_config(f, {"rope_theta": 10000.0, "rope_scaling": None, "layer_types": None})
    c.head_dim = c.hidden_size // c.num_attention_heads
    if c.layer_types is None:
        c.layer_types = ports.layer_types_from_pattern(c.num_hidden_layers, getattr(c, "sliding_window_pattern", 4))
    r = standard(c, ports.rope_type_of(c), "repeat_interleave", ports.apply_cohere2)
    return port("cohere2/modeling_cohere2.py", c, c.num_hidden_layers,
                lambda i: r if c.layer_types[i] == "sliding_attention" else None)


def port_smollm3(f):
    """smollm3: SmolLM3Config (configuration_smollm3.py:176, 218-223: rope_theta 2e6, no_rope_layers from
    no_rope_layer_interval 4); SmolLM3RotaryEmbedding (modeling_smollm3.py:303-336), apply (:56-80); a layer
    rotates iff no_rope_layers[i] (:147, 171-173)."""
    c = ports.make_config(f, {"rope_theta": 2_000_000.0, "rope_scaling": None, "no_rope_layers": None,
                              "no_rope_layer_interval": 4})
    if c.no_rope_layers is None:
        c.no_rope_layers = ports.no_rope_layers_from_interval(c.num_hidden_layers, c.no_rope_layer_interval)
    r = standard(c, ports.rope_type_of(c), "cat", ports.apply_half)
    return port("smollm3/modeling_smollm3.py", c, c.num_hidden_layers, lambda i: r if c.no_rope_layers[i] else None)


def port_llama4(f):
    """llama4_text: Llama4TextConfig (configuration_llama4.py:301, 311, 361, 372-379: head_dim 128, rope_theta
    5e5, no_rope_layers from no_rope_layer_interval 4, [] meaning the default); Llama4TextRotaryEmbedding
    (modeling_llama4.py:168-198: rope type llama3 whenever rope_scaling is set, :174; freqs_cis), apply_rotary_emb
    (:201-210); a layer rotates iff no_rope_layers[i] (:296, 329-332)."""
    c = ports.make_config(f, {"head_dim": 128, "rope_theta": 500000.0, "rope_scaling": None, "no_rope_layers": None,
                              "no_rope_layer_interval": 4, "attn_temperature_tuning": True})
    if not c.no_rope_layers:
        c.no_rope_layers = ports.no_rope_layers_from_interval(c.num_hidden_layers, c.no_rope_layer_interval)
    r = complex_rotation(c, "llama3" if c.rope_scaling is not None else "default", tokens_first=True)
    return port("llama4/modeling_llama4.py", c, c.num_hidden_layers, lambda i: r if c.no_rope_layers[i] else None)


def mla_config(f):
    """DeepseekV2Config / DeepseekV3Config: rope_theta 1e4, qk_rope_head_dim 64, head_dim = qk_rope_head_dim
    (configuration_deepseek_v2.py:214, configuration_deepseek_v3.py:210), beta_fast/beta_slow/factor made float
    (configuration_deepseek_v3.py:237-240)."""
    c = ports.make_config(f, {"rope_theta": 10000.0, "qk_rope_head_dim": 64, "rope_scaling": None, "rope_interleave": True})
    c.head_dim = c.qk_rope_head_dim
    if c.rope_scaling is not None:
        if "type" in c.rope_scaling:
            c.rope_scaling["rope_type"] = c.rope_scaling["type"]
        for key in ("beta_fast", "beta_slow", "factor"):
            if key in c.rope_scaling:
                c.rope_scaling[key] = float(c.rope_scaling[key])
    return c


def port_deepseek_v2(f):
    """deepseek_v2: DeepseekV2RotaryEmbedding (modeling_deepseek_v2.py:197-231, freqs_cis), apply_rotary_emb
    (:272-285) on q_pe/k_pe, the qk_rope_head_dim part (:370)."""
    c = mla_config(f)
    rope_type = c.rope_scaling.get("rope_type", c.rope_scaling.get("type")) if c.rope_scaling is not None else "default"
    r = complex_rotation(c, rope_type, tokens_first=False)
    return port("deepseek_v2/modeling_deepseek_v2.py", c, c.num_hidden_layers, lambda i: r)


def port_deepseek_v3(f, path="deepseek_v3/modeling_deepseek_v3.py"):
    """deepseek_v3 (and Kimi-K2, whose published code is DeepSeek-V3's architecture): DeepseekV3RotaryEmbedding
    (modeling_deepseek_v3.py:56-89), apply_rotary_pos_emb_interleave (:283-318) on q_rot/k_rot when
    rope_interleave (default True, :409-412). Its output is in de-interleaved order; ports.reinterleave puts
    pair j back at dims 2j, 2j+1 (a permutation applied alike to q and k, which leaves q·k unchanged)."""
    c = mla_config(f)
    interleave = c.rope_interleave
    base = standard(c, ports.rope_type_of(c), "cat",
                    ports.apply_deepseek_v3_interleave if interleave else ports.apply_half)
    r = base if not interleave else Rotation(base.inv_freq, base.attention,
                                             lambda x, p: ports.reinterleave(base.rotate(x, p)))
    return port(path, c, c.num_hidden_layers, lambda i: r)


def port_ernie4_5(f):
    """ernie4_5: Ernie4_5Config (configuration_ernie4_5.py:161, 164, 186: rope_theta 5e5, head_dim 128);
    Ernie4_5RotaryEmbedding (modeling_ernie4_5.py:42-76, float32 cos/sin), apply_rotary_pos_emb (:141-174)."""
    c = ports.make_config(f, {"rope_theta": 500000.0, "head_dim": 128, "rope_scaling": None})
    r = standard(c, ports.rope_type_of(c), "cat", ports.apply_ernie4_5, dtype_out=False)
    return port("ernie4_5/modeling_ernie4_5.py", c, c.num_hidden_layers, lambda i: r)


def port_ernie4_5_moe(f):
    """ernie4_5_moe: Ernie4_5_MoeConfig rope_theta 5e5 (configuration_ernie4_5_moe.py:197), head_dim from
    hidden_size // num_attention_heads when absent (modeling_ernie4_5_moe.py:207); Ernie4_5_MoeRotaryEmbedding
    (:82), rotate_half / apply_rotary_pos_emb (:119-159), the lines of ernie4_5."""
    c = ports.make_config(f, {"rope_theta": 500000.0, "rope_scaling": None})
    r = standard(c, ports.rope_type_of(c), "cat", ports.apply_ernie4_5, dtype_out=False)
    return port("ernie4_5_moe/modeling_ernie4_5_moe.py", c, c.num_hidden_layers, lambda i: r)


def port_glm4(f):
    """glm4: Glm4Config (configuration_glm4.py:110-111, 119: partial_rotary_factor 0.5, head_dim 128, rope_theta
    1e4); Glm4RotaryEmbedding (modeling_glm4.py:292-325), apply_rotary_pos_emb (:160-199)."""
    c = ports.make_config(f, {"partial_rotary_factor": 0.5, "head_dim": 128, "rope_theta": 10000.0, "rope_scaling": None})
    r = standard(c, ports.rope_type_of(c), "cat", ports.apply_glm4)
    return port("glm4/modeling_glm4.py", c, c.num_hidden_layers, lambda i: r)


def port_gpt_oss(f):
    """gpt_oss: GptOssConfig (configuration_gpt_oss.py:55, 59, 65-72: head_dim 64, rope_theta 150000, yarn x32
    from 4096 with truncate false); GptOssRotaryEmbedding (modeling_gpt_oss.py:174-207), apply (:222-238)."""
    c = ports.make_config(f, {"head_dim": 64, "rope_theta": 150000.0,
                              "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                               "truncate": False, "original_max_position_embeddings": 4096}})
    r = standard(c, ports.rope_type_of(c), "none", ports.apply_gpt_oss)
    return port("gpt_oss/modeling_gpt_oss.py", c, c.num_hidden_layers, lambda i: r)


DEEPSEEK_V3_COMMIT = "1ea5a1a7ed7429e25ba2fa2c76fe74fa5968d348"


def port_deepseek_own(f):
    """DeepSeek's own inference code, deepseek-ai/DeepSeek-V3@1ea5a1a inference/model.py: `precompute_freqs_cis`
    (the YaRN table, rows 0..max_seq_len-1) and `apply_rotary_emb` (the pairs (0,1),(2,3).. of q_pe as complex
    numbers, float32, cast back), as MLA.forward applies them to q_pe and k_pe. ModelArgs from the HF config:
    qk_rope_head_dim, rope_theta, rope_factor = factor, beta_fast, beta_slow, original_seq_len =
    original_max_position_embeddings; max_seq_len = max_position_embeddings (the table's rows: YaRN applies
    when it exceeds original_seq_len). The rotation carries no attention factor: DeepSeek scales the softmax by
    mscale² instead (MLA.__init__), which is HF's mscale/mscale_all_dim ratio of 1 for its configs."""
    c = mla_config(f)
    rs = c.rope_scaling
    dim, seqlen, base = c.qk_rope_head_dim, c.max_position_embeddings, c.rope_theta
    beta_fast, beta_slow, factor = rs["beta_fast"], rs["beta_slow"], rs["factor"]
    original_seq_len = rs["original_max_position_embeddings"]

    def find_correction_dim(num_rotations, dim, base, max_seq_len):  # return dim * math.log(max_seq_len / ...
        return dim * math.log(max_seq_len / (num_rotations * 2 * math.pi)) / (2 * math.log(base))

    def find_correction_range(low_rot, high_rot, dim, base, max_seq_len):  # math.floor / math.ceil, clamped
        low = math.floor(find_correction_dim(low_rot, dim, base, max_seq_len))
        high = math.ceil(find_correction_dim(high_rot, dim, base, max_seq_len))
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min, max, dim):  # max += 0.001 when equal; clamp((arange - min) / (max - min), 0, 1)
        if min == max:
            max += 0.001
        linear_func = (torch.arange(dim, dtype=torch.float32) - min) / (max - min)
        return torch.clamp(linear_func, 0, 1)

    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))  # freqs = 1.0 / (base ** ...)
    if seqlen > original_seq_len:  # if seqlen > args.original_seq_len:
        low, high = find_correction_range(beta_fast, beta_slow, dim, base, original_seq_len)
        smooth = 1 - linear_ramp_factor(low, high, dim // 2)
        freqs = freqs / factor * (1 - smooth) + freqs * smooth
    inv_freq = freqs
    t = torch.arange(seqlen)  # t = torch.arange(seqlen)
    table = torch.polar(torch.ones(seqlen, dim // 2), torch.outer(t, freqs))  # polar(ones_like, outer(t, freqs))

    def rotate(x, positions):
        q = x.unsqueeze(0)  # MLA.forward: q_pe [bsz, seqlen, heads, qk_rope_head_dim]
        dtype = q.dtype  # apply_rotary_emb:
        qc = torch.view_as_complex(q.float().view(*q.shape[:-1], -1, 2))
        freqs_cis = table[positions].view(1, qc.size(1), 1, qc.size(-1))  # Transformer.forward's rows, one per token
        y = torch.view_as_real(qc * freqs_cis).flatten(3)
        return y.to(dtype).squeeze(0)

    r = Rotation(inv_freq, 1.0, rotate)
    return Model(f"port of deepseek-ai/DeepSeek-V3@{DEEPSEEK_V3_COMMIT[:7]} inference/model.py", c.num_hidden_layers,
                 lambda i: r)


PORTS = {
    "qwen3": port_qwen3,
    "qwen3_moe": port_qwen3_moe,
    "qwen2_5_vl": port_qwen2_5_vl,
    "qwen2_5_vl_text": port_qwen2_5_vl,
    "qwen3_vl": port_qwen3_vl,
    "qwen3_vl_text": port_qwen3_vl,
    "ernie4_5_moe": port_ernie4_5_moe,
    "gemma3_text": port_gemma3,
    "gemma3": port_gemma3,  # Gemma3ForConditionalGeneration: its text_config is a Gemma3TextConfig
    "cohere2": port_cohere2,
    "smollm3": port_smollm3,
    "llama4_text": port_llama4,
    "llama4": port_llama4,  # Llama4ForConditionalGeneration: its text_config is a Llama4TextConfig
    "deepseek_v2": port_deepseek_v2,
    "deepseek_v3": port_deepseek_v3,
    "kimi_k2": lambda f: port_deepseek_v3(f),
    "ernie4_5": port_ernie4_5,
    "glm4": port_glm4,
    "gpt_oss": port_gpt_oss,
}


def model_rotation(raw):
    fields = text_fields(raw)
    if raw.get("_code") == "deepseek-ai/DeepSeek-V3":  # the model's own repository rather than transformers
        return port_deepseek_own(fields)
    model_type = ALIASES.get(raw.get("model_type"), raw.get("model_type"))
    if model_type in ("gptj", "codegen"):
        return installed_sinusoidal(model_type, fields)
    if model_type in INSTALLED_TYPES:
        return installed_model(model_type, fields)
    if model_type in PORTS:
        return PORTS[model_type](fields)
    raise ValueError(f"model_rotations.py: no code wired for model type {model_type!r}")
