"""HF transformers' OLMo-2 attention, which normalises q and k (RMSNorm) before the rotation, run as
the model runs it (peers/fused/README.md): `Olmo2Attention.forward` of transformers 4.47.1
(models/olmo2/modeling_olmo2.py) with q_proj and k_proj set to the identity, the inputs' q_weight
and k_weight as q_norm.weight and k_norm.weight, and the inputs' positions as position_ids; the
rotated q and k are what forward passes on after `apply_rotary_pos_emb` (wrapped to keep them).

What forward does to them (4.47.1): `q_norm(q_proj(x))`, Olmo2RMSNorm over the whole projection
(num_heads·head_dim: one head, so that it is the per-head norm of the spec), computed in float32
and cast to the data dtype before the weight multiplies it (`self.weight * hidden.to(input_dtype)`);
then cos/sin of the float32 angle cast to the data dtype and `q·cos + rotate_half(q)·sin` in the
data dtype (layout half). q and k pass through two forward calls (q_proj = k_proj = identity: the
input is q in the first, k in the second).

Not expressible (skipped, saying why): more than one head (OLMo-2 normalises all heads together),
the interleaved layout, `norm_weight=one_plus`, the norm after the rotation, FP8, a paged cache.

Cohere with `use_qk_norm` (`hf-cohere`): `CohereAttention.forward` of transformers 4.47.1
(models/cohere/modeling_cohere.py) with q_proj and k_proj the identity (num_key_value_heads =
num_attention_heads, so both are square), the inputs' per-head q_weight and k_weight [heads, head_dim]
as q_norm.weight and k_norm.weight (CohereLayerNorm of hidden_size (heads, head_dim)): per head, in
float32, the mean subtracted, × rsqrt(variance + eps), × weight, cast to the data dtype
(`norm_kind=layer,weight_shape=per_head`); then CohereRotaryEmbedding's cos/sin (float32 angle,
`repeat_interleave`: the interleaved layout) cast to the data dtype and the rotation in float32
(`q.float()`), cast back. Kept as for OLMo-2 (apply_rotary_pos_emb wrapped; q from the first call,
k from the second). Not expressible: a q/k head count that differ, the half layout, the norm after,
`norm_weight=one_plus`, FP8, a paged cache.
"""
import torch
import transformers
from transformers.models.cohere import modeling_cohere
from transformers.models.olmo2 import modeling_olmo2

import fusedlib
from fusedlib import Unsupported

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def header():
    return [f"HF transformers (fused): PyPI transformers=={transformers.__version__} on torch {torch.__version__}, "
            "Olmo2Attention.forward (q_norm/k_norm RMSNorm before RoPE), "
            "CohereAttention.forward (use_qk_norm: per-head LayerNorm before RoPE)"]


def olmo2(spec, inputs, ropecheck, workdir):
    fusedlib.require(spec, norm="before", norm_weight="plain", fp8="none", destination="contiguous", layout="half")
    if spec.get("scaling", "none") != "none" or spec.get("axes", "none") != "none":
        raise Unsupported("the fused peers run unscaled one-axis RoPE only")
    if fusedlib.heads(spec, "q") != 1 or fusedlib.heads(spec, "k") != 1:
        raise Unsupported("OLMo-2's q_norm/k_norm normalise all heads together: one q and one k head only")
    if fusedlib.rotary_dim(spec) != int(spec["head_dim"]):
        raise Unsupported("Olmo2RotaryEmbedding rotates the whole head (no partial rotary)")
    if spec["dtype"] not in DTYPES:
        raise Unsupported(f"dtype={spec['dtype']}: torch's OLMo-2 runs f32, bf16, f16")
    head_dim, dtype = int(spec["head_dim"]), DTYPES[spec["dtype"]]
    config = modeling_olmo2.Olmo2Config(
        hidden_size=head_dim, num_attention_heads=1, num_key_value_heads=1, rope_theta=float(spec["base"]),
        rms_norm_eps=float(spec["eps"]), attention_bias=False, max_position_embeddings=4096)
    config._attn_implementation = "eager"
    attention = made_under(dtype, lambda: modeling_olmo2.Olmo2Attention(config, layer_idx=0))
    with torch.no_grad():
        for proj in (attention.q_proj, attention.k_proj):
            proj.weight.copy_(torch.eye(head_dim).to(dtype))
        attention.q_norm.weight.copy_(torch.tensor(inputs["q_weight"]).to(dtype))
        attention.k_norm.weight.copy_(torch.tensor(inputs["k_weight"]).to(dtype))
    q_out, k_out = kept_rotations(modeling_olmo2, attention, inputs, dtype)
    return {"q_out": q_out, "k_out": k_out}


def made_under(dtype, make):
    """make() under the default dtype `dtype`, as from_pretrained(torch_dtype=...) makes a model
    (parameters in it; inv_freq stays float32), not converted by .to(dtype)."""
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        return make()
    finally:
        torch.set_default_dtype(default)


def kept_rotations(module, attention, inputs, dtype):
    """Runs attention on q (first call) and k (second call) with apply_rotary_pos_emb of `module`
    wrapped; returns q_out, k_out as float64 [tokens, heads, head_dim]."""
    kept = []
    original = module.apply_rotary_pos_emb

    def keep(q, k, cos, sin, *args, **kwargs):
        q_embed, k_embed = original(q, k, cos, sin, *args, **kwargs)
        kept.append((q_embed, k_embed))
        return q_embed, k_embed

    positions = torch.tensor(inputs["positions"][:, 0], dtype=torch.int64)[None, :]
    tokens = positions.shape[1]
    module.apply_rotary_pos_emb = keep
    try:
        with torch.no_grad():
            for name in ("q", "k"):
                x = torch.tensor(inputs[name].reshape(tokens, -1)).to(dtype)[None]  # [1, tokens, heads·head_dim]
                attention(x, position_ids=positions)
    finally:
        module.apply_rotary_pos_emb = original
    # kept[i]: [1, heads, tokens, head_dim]; q from the first call, k from the second
    q_out = kept[0][0][0].transpose(0, 1).to(torch.float64).numpy()
    k_out = kept[1][1][0].transpose(0, 1).to(torch.float64).numpy()
    return q_out, k_out


def cohere(spec, inputs, ropecheck, workdir):
    fusedlib.require(spec, norm="before", norm_kind="layer", weight_shape="per_head", norm_weight="plain", fp8="none",
                     destination="contiguous", layout="interleaved")
    if spec.get("scaling", "none") != "none" or spec.get("axes", "none") != "none":
        raise Unsupported("the fused peers run unscaled one-axis RoPE only")
    heads = fusedlib.heads(spec, "q")
    if fusedlib.heads(spec, "k") != heads:
        raise Unsupported("q_proj = k_proj = identity needs as many k heads as q heads")
    if fusedlib.rotary_dim(spec) != int(spec["head_dim"]):
        raise Unsupported("CohereRotaryEmbedding rotates the whole head (no partial rotary)")
    if spec["dtype"] not in DTYPES:
        raise Unsupported(f"dtype={spec['dtype']}: torch's Cohere runs f32, bf16, f16")
    head_dim, dtype = int(spec["head_dim"]), DTYPES[spec["dtype"]]
    config = modeling_cohere.CohereConfig(
        hidden_size=heads * head_dim, num_attention_heads=heads, num_key_value_heads=heads,
        rope_theta=float(spec["base"]), layer_norm_eps=float(spec["eps"]), use_qk_norm=True,
        attention_bias=False, max_position_embeddings=4096)
    config._attn_implementation = "eager"
    attention = made_under(dtype, lambda: modeling_cohere.CohereAttention(config, layer_idx=0))
    with torch.no_grad():
        for proj in (attention.q_proj, attention.k_proj):
            proj.weight.copy_(torch.eye(heads * head_dim).to(dtype))
        attention.q_norm.weight.copy_(torch.tensor(inputs["q_weight"]).to(dtype))
        attention.k_norm.weight.copy_(torch.tensor(inputs["k_weight"]).to(dtype))
    q_out, k_out = kept_rotations(modeling_cohere, attention, inputs, dtype)
    return {"q_out": q_out, "k_out": k_out}


IMPLEMENTATIONS = {"hf-olmo2": olmo2, "hf-cohere": cohere}
