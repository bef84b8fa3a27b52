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
Cohere's `use_qk_norm` (CohereLayerNorm) subtracts the mean: a LayerNorm, which no fused spec
describes, so Cohere is not gated here.
"""
import torch
import transformers
from transformers.models.olmo2 import modeling_olmo2

import fusedlib
from fusedlib import Unsupported

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def header():
    return [f"HF transformers (fused): PyPI transformers=={transformers.__version__} on torch {torch.__version__}, "
            "Olmo2Attention.forward (q_norm/k_norm RMSNorm before RoPE)"]


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
    # Made as from_pretrained(torch_dtype=...) makes a model: under that default dtype (parameters in
    # it; inv_freq stays float32, `.float()` in Olmo2RotaryEmbedding), not converted by .to(dtype),
    # which would round inv_freq to the data dtype as well.
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        attention = modeling_olmo2.Olmo2Attention(config, layer_idx=0)
    finally:
        torch.set_default_dtype(default)
    with torch.no_grad():
        for proj in (attention.q_proj, attention.k_proj):
            proj.weight.copy_(torch.eye(head_dim).to(dtype))
        attention.q_norm.weight.copy_(torch.tensor(inputs["q_weight"]).to(dtype))
        attention.k_norm.weight.copy_(torch.tensor(inputs["k_weight"]).to(dtype))
    kept = []
    original = modeling_olmo2.apply_rotary_pos_emb

    def keep(q, k, cos, sin, *args, **kwargs):
        q_embed, k_embed = original(q, k, cos, sin, *args, **kwargs)
        kept.append((q_embed, k_embed))
        return q_embed, k_embed

    positions = torch.tensor(inputs["positions"][:, 0], dtype=torch.int64)[None, :]
    modeling_olmo2.apply_rotary_pos_emb = keep
    try:
        with torch.no_grad():
            for name in ("q", "k"):
                x = torch.tensor(inputs[name][:, 0, :]).to(dtype)[None]  # [1, tokens, head_dim]
                attention(x, position_ids=positions)
    finally:
        modeling_olmo2.apply_rotary_pos_emb = original
    # kept[i]: [1, heads=1, tokens, head_dim]; q from the first call, k from the second
    q_out = kept[0][0][0].transpose(0, 1).to(torch.float64).numpy()
    k_out = kept[1][1][0].transpose(0, 1).to(torch.float64).numpy()
    return {"q_out": q_out, "k_out": k_out}


IMPLEMENTATIONS = {"hf-olmo2": olmo2}
