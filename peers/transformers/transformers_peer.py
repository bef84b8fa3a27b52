#!/usr/bin/python3
"""RoPE as HF transformers' own code computes it, for `ropecheck check` (peers/transformers/README.md).

    transformers_peer.py [--impl NAME ...] INPUTS.npz OUT_DIR

INPUTS.npz is `ropecheck golden export --format npz`; OUT_DIR/<impl>.npz gets SUITE/ID/output for
every test the implementation expresses, OUT_DIR/<impl>.npz.skipped.json the reason for each other
test. Prints one header line (what runs) on stdout; exits 3 with a one-line reason on stderr when
transformers (or torch) cannot be imported.

Unlike peers/torch (a recipe written from HF's formulas), every number here comes out of the
installed transformers package: its config classes, its rotary-embedding modules (inv_freq from
`modeling_rope_utils.ROPE_INIT_FUNCTIONS` or the model's own init, cos/sin from the module's
forward), and its models' apply functions. The glue only builds the config, calls the module the
way the model's attention calls it, and reshapes (the golden layout [tokens, heads, head_dim] is
HF's [batch=1, heads, tokens, head_dim] permuted).

Implementations:
- hf-llama    LlamaConfig + LlamaRotaryEmbedding + llama apply_rotary_pos_emb (layout half, full
              rotary; rope types default, linear, dynamic, yarn, llama3, and longrope when the
              served length is past the original one).
- hf-neox     GPTNeoXConfig (rotary_pct, rotary_emb_base) + GPTNeoXRotaryEmbedding + its
              apply_rotary_pos_emb on query[..., :rotary_ndims], pass-through concatenated back as
              GPTNeoXAttention does (layout half, partial rotary, the same rope types).
- hf-cohere   CohereConfig + CohereRotaryEmbedding (repeat_interleave) + cohere apply_rotary_pos_emb
              (layout interleaved; float32 rotation of x.dtype cos/sin, cast back; the rope types).
- hf-gptj     modeling_gptj create_sinusoidal_positions + apply_rotary_pos_emb/rotate_every_two on
              query[..., :rotary_dim] (layout interleaved, base fixed at 10000 by GPT-J's code, output
              float32: spec dtype=f32 with input_dtype f32/f16/bf16).
- hf-qwen2vl  Qwen2VLConfig (rope_scaling mrope_section) + Qwen2VLRotaryEmbedding +
              apply_multimodal_rotary_pos_emb (axes=mrope with three sections, layout half).
- hf-phi3     Phi3Config + Phi3LongRoPEScaledRotaryEmbedding + phi3 apply_rotary_pos_emb, called with
              seq_len as Phi3Attention passes it (kv_seq_len) (scaling longrope).
"""
import argparse
import importlib.util
import os
import sys


def _load_peerlib():
    """peers/peerlib.py, loaded by path: putting peers/ on sys.path would make this folder, peers/transformers/,
    importable as a namespace package named `transformers` wherever the real one is missing."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peerlib.py")
    spec = importlib.util.spec_from_file_location("peerlib", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


peerlib = _load_peerlib()
Unsupported = peerlib.Unsupported

try:
    import torch
    import transformers

    if getattr(transformers, "__file__", None) is None:
        raise ImportError(f"no transformers package ('transformers' resolves to the namespace {list(transformers.__path__)})")
    from transformers import CohereConfig, GPTNeoXConfig, LlamaConfig, Phi3Config, Qwen2VLConfig
    from transformers.models.cohere import modeling_cohere
    from transformers.models.gpt_neox import modeling_gpt_neox
    from transformers.models.gptj import modeling_gptj
    from transformers.models.llama import modeling_llama
    from transformers.models.phi3 import modeling_phi3
    from transformers.models.qwen2_vl import modeling_qwen2_vl
except Exception as why:  # noqa: BLE001 - any import failure means: no peer
    if __name__ == "__main__":
        print(f"transformers peer: cannot import transformers: {type(why).__name__}: {why}".splitlines()[0], file=sys.stderr)
        sys.exit(3)
    raise

transformers.logging.set_verbosity_error()  # deprecation warnings of the per-module constructors

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
GPTJ_MAX_TABLE_ROWS = 1 << 20  # GPT-J's sin/cos table has one row per position (max_position_embeddings)
SCALING_PARAMS = {  # spec keys each rope type reads; any other key of the spec is refused
    "none": set(),
    "linear": {"factor"},
    "dynamic": {"factor", "original_max_position", "seq_len"},
    "yarn": {"factor", "original_max_position", "beta_fast", "beta_slow", "truncate", "attention_factor"},
    "llama3": {"factor", "original_max_position", "low_freq_factor", "high_freq_factor"},
    "longrope": {"factor", "original_max_position", "seq_len", "short_factor", "long_factor", "attention_factor"},
}
SPEC_KEYS = {"layout", "head_dim", "rotary_dim", "base", "dtype", "input_dtype", "direction", "scaling", "axes", "sections"}


def header():
    return (f"- HF transformers: PyPI transformers=={transformers.__version__} on Debian torch {torch.__version__} "
            f"(rotary modules of llama, gpt_neox, cohere, gptj, qwen2_vl, phi3)")


# ---- spec -> transformers config -------------------------------------------------------------


def common_checks(spec, layout):
    if spec.get("direction", "forward") != "forward":
        raise Unsupported("transformers' rotary embeddings rotate forward only (no inverse rotation)")
    if spec["layout"] != layout:
        raise Unsupported(f"this model's rotate_half pairs the {layout} layout, the spec is {spec['layout']}")
    if spec["dtype"] == "f64":
        raise Unsupported("transformers computes cos/sin in float32 (autocast off): an f64 result is not a float64 rotation")
    if spec.get("input_dtype", spec["dtype"]) != spec["dtype"]:
        raise Unsupported(f"this model rotates in the activations' dtype: input {spec['input_dtype']} comes out "
                          f"{spec['input_dtype']}, not {spec['dtype']}")
    unknown = set(spec) - SPEC_KEYS - SCALING_PARAMS.get(spec.get("scaling", "none"), set())
    if spec.get("scaling", "none") not in SCALING_PARAMS:
        raise Unsupported(f"scaling {spec['scaling']} is not a rope_type of transformers {transformers.__version__}")
    if unknown:
        raise Unsupported(f"transformers {transformers.__version__}'s {spec['scaling']} does not read "
                          f"{', '.join(sorted(unknown))}")


def exact_int(text, what):
    value = float(text)
    if value != int(value):
        raise Unsupported(f"{what} {text} is not an integer, as transformers' config needs it")
    return int(value)


def rope_scaling(spec, head_dim):
    """(rope_scaling dict or None, max_position_embeddings, extra config kwargs) for the spec's scaling, as
    transformers' modeling_rope_utils of this version reads them. Raises Unsupported for what it cannot say."""
    scaling = spec.get("scaling", "none")
    if scaling == "none":
        return None, 4096, {}
    factor = float(spec["factor"]) if "factor" in spec else None
    if scaling == "linear":
        return {"rope_type": "linear", "factor": factor}, 4096, {}
    l0 = exact_int(spec["original_max_position"], "original_max_position")
    if scaling == "dynamic":
        # _compute_dynamic_ntk_parameters: Lmax = config.max_position_embeddings; seq_len comes from the batch
        # (dynamic_frequency_update: max(position_ids) + 1), see dynamic_positions().
        return {"rope_type": "dynamic", "factor": factor}, l0, {}
    if scaling == "yarn":
        # 4.47's _compute_yarn_parameters reads L0 from config.max_position_embeddings (no
        # original_max_position_embeddings), always truncates, and has no mscale/mscale_all_dim.
        if spec.get("truncate", "true") not in ("true", "1"):
            raise Unsupported(f"transformers {transformers.__version__}'s yarn always truncates the correction range (truncate=false)")
        rs = {"rope_type": "yarn", "factor": factor}
        for key in ("beta_fast", "beta_slow", "attention_factor"):
            if key in spec:
                rs[key] = float(spec[key])
        if rs.get("beta_fast", 32) == 0 or rs.get("beta_slow", 1) == 0:
            raise Unsupported("a zero beta reads as unset in transformers' yarn (`get('beta_fast') or 32`)")
        return rs, l0, {}
    if scaling == "llama3":
        rs = {"rope_type": "llama3", "factor": factor, "original_max_position_embeddings": l0,
              "low_freq_factor": float(spec["low_freq_factor"]), "high_freq_factor": float(spec["high_freq_factor"])}
        return rs, max(int(l0 * factor), l0 + 1), {}
    if scaling == "longrope":
        # Through ROPE_INIT_FUNCTIONS (Llama, NeoX, Cohere, Qwen2-VL): inv_freq is computed once at init with
        # seq_len=None, so the long factors are used whenever expanded = max_position_embeddings·factor > Lmax.
        seq_len = int(spec["seq_len"])
        f = factor if factor is not None else 1.0
        if (seq_len > l0) != (f > 1.0):
            raise Unsupported(f"rotary modules built on ROPE_INIT_FUNCTIONS pick longrope's factors once at init "
                              f"(long when factor > 1), not from the served length (seq_len={seq_len}, "
                              f"original {l0}, factor {spec.get('factor', 'none')}): hf-phi3 runs it")
        rs = {"rope_type": "longrope", "short_factor": peerlib.floats(spec, "short_factor"),
              "long_factor": peerlib.floats(spec, "long_factor"), "factor": f}
        if "attention_factor" in spec:
            rs["attention_factor"] = float(spec["attention_factor"])
        return rs, l0, {}
    raise Unsupported(f"scaling {scaling} is not a rope_type of transformers {transformers.__version__}")


def dynamic_positions(spec, positions):
    """transformers' dynamic NTK takes the sequence length from the batch (max(position_ids) + 1). The spec's
    seq_len is that length: the batch gets one more token at position seq_len − 1 (dropped afterwards), and
    a test with a position at or past seq_len is not expressible. Returns (positions, extra tokens)."""
    if spec.get("scaling") != "dynamic":
        return positions, 0
    seq_len = int(spec["seq_len"])
    if int(positions.max()) + 1 > seq_len:
        raise Unsupported(f"transformers' dynamic NTK derives the length from the batch's largest position + 1 "
                          f"({int(positions.max()) + 1} here), not the spec's seq_len={seq_len}")
    sentinel = torch.full((1,) + tuple(positions.shape[1:]), seq_len - 1, dtype=torch.int64)
    return torch.cat((positions, sentinel)), 1


def one_d(spec):
    if spec.get("axes", "none") != "none":
        raise Unsupported(f"axes={spec['axes']}: this model's rotary embedding has one position per token")


# ---- the implementations ---------------------------------------------------------------------


def to_numpy(out, dtype):
    return (out.float() if dtype == torch.bfloat16 else out).numpy()


def q_of(x, dtype):
    """golden [tokens, heads, head_dim] -> HF's query [batch=1, heads, tokens, head_dim] in the model dtype."""
    return torch.from_numpy(x).to(dtype).permute(1, 0, 2).unsqueeze(0)


def from_q(q, dtype):
    return to_numpy(q.squeeze(0).permute(1, 0, 2).contiguous(), dtype)


def rotary_forward(module, q, positions):
    """The model's `cos, sin = self.rotary_emb(value_states, position_ids)` (value in the model dtype)."""
    return module(q, positions.unsqueeze(0) if positions.dim() == 1 else positions)


def llama_like(spec, x, positions, config_class, module_class, apply_fn, layout, config_extra=None):
    common_checks(spec, layout)
    one_d(spec)
    head_dim, rotary = int(spec["head_dim"]), peerlib.rotary_dim(spec)
    if rotary != head_dim:
        raise Unsupported("this model's apply_rotary_pos_emb rotates all head_dim dims (partial rotary: hf-neox)")
    heads = x.shape[1]
    rs, max_pos, extra = rope_scaling(spec, head_dim)
    kwargs = dict(hidden_size=head_dim * heads, num_attention_heads=heads, num_key_value_heads=heads,
                  rope_theta=float(spec["base"]), max_position_embeddings=max_pos, rope_scaling=rs, **extra)
    kwargs.update(config_extra or {})
    config = config_class(**kwargs)
    module = module_class(config=config)
    dtype = DTYPES[spec["dtype"]]
    pos, extra_tokens = dynamic_positions(spec, torch.from_numpy(positions).to(torch.int64))
    q = q_of(x, dtype)
    cos, sin = rotary_forward(module, q, pos)
    if extra_tokens:
        cos, sin = cos[:, :-extra_tokens], sin[:, :-extra_tokens]
    out, _ = apply_fn(q, q, cos, sin)
    return from_q(out, dtype)


def hf_llama(spec, x, positions):
    return llama_like(spec, x, positions, LlamaConfig, modeling_llama.LlamaRotaryEmbedding,
                      modeling_llama.apply_rotary_pos_emb, "half", {"head_dim": int(spec["head_dim"])})


def hf_cohere(spec, x, positions):
    return llama_like(spec, x, positions, CohereConfig, modeling_cohere.CohereRotaryEmbedding,
                      modeling_cohere.apply_rotary_pos_emb, "interleaved")


def hf_neox(spec, x, positions):
    """GPTNeoXAttention: query_rot = query[..., :rotary_ndims], apply_rotary_pos_emb, cat(query, query_pass)."""
    common_checks(spec, "half")
    one_d(spec)
    head_dim, rotary = int(spec["head_dim"]), peerlib.rotary_dim(spec)
    heads = x.shape[1]
    rotary_pct = rotary / head_dim
    if int(head_dim * rotary_pct) != rotary:
        raise Unsupported(f"rotary_ndims = int(head_size · rotary_pct) cannot give {rotary} of {head_dim}")
    rs, max_pos, extra = rope_scaling(spec, head_dim)
    config = GPTNeoXConfig(hidden_size=head_dim * heads, num_attention_heads=heads, rotary_pct=rotary_pct,
                           rotary_emb_base=float(spec["base"]), max_position_embeddings=max_pos, rope_scaling=rs, **extra)
    module = modeling_gpt_neox.GPTNeoXRotaryEmbedding(config=config)
    dtype = DTYPES[spec["dtype"]]
    pos, extra_tokens = dynamic_positions(spec, torch.from_numpy(positions).to(torch.int64))
    query = q_of(x, dtype)
    rotary_ndims = int(head_dim * config.rotary_pct)
    query_rot, query_pass = query[..., :rotary_ndims], query[..., rotary_ndims:]
    cos, sin = rotary_forward(module, query, pos)
    if extra_tokens:
        cos, sin = cos[:, :-extra_tokens], sin[:, :-extra_tokens]
    q, _ = modeling_gpt_neox.apply_rotary_pos_emb(query_rot, query_rot, cos, sin)
    return from_q(torch.cat((q, query_pass), dim=-1), dtype)


_gptj_tables = {}


def hf_gptj(spec, x, positions):
    """GPTJAttention: embed_positions = create_sinusoidal_positions(max_positions, rotary_dim); sincos gathered
    at position_ids, split into sin, cos; apply_rotary_pos_emb on query[:, :, :, :rotary_dim] ([batch, tokens,
    heads, head_dim] there); the float32 table promotes f16/bf16 queries to float32."""
    if spec.get("direction", "forward") != "forward":
        raise Unsupported("GPT-J rotates forward only (no inverse rotation)")
    if spec["layout"] != "interleaved":
        raise Unsupported("GPT-J's rotate_every_two pairs (2j, 2j+1): layout interleaved only")
    one_d(spec)
    if spec.get("scaling", "none") != "none":
        raise Unsupported(f"GPT-J has no rope scaling ({spec['scaling']})")
    if set(spec) - SPEC_KEYS:
        raise Unsupported(f"GPT-J does not read {', '.join(sorted(set(spec) - SPEC_KEYS))}")
    if float(spec["base"]) != 10000.0:
        raise Unsupported(f"GPT-J's create_sinusoidal_positions fixes the base at 10000 (spec base {spec['base']})")
    input_dtype = spec.get("input_dtype", spec["dtype"])
    if spec["dtype"] != "f32" or input_dtype not in DTYPES:
        raise Unsupported(f"GPT-J multiplies {input_dtype} activations by float32 sin/cos tables: the rotated q/k "
                          f"are float32 (spec dtype=f32,input_dtype={input_dtype}), never dtype={spec['dtype']}")
    rotary = peerlib.rotary_dim(spec)
    rows = int(positions.max()) + 1
    if rows > GPTJ_MAX_TABLE_ROWS:
        raise Unsupported(f"GPT-J's sin/cos table has one row per position (max_position_embeddings, 2048 in "
                          f"GPT-J-6B); position {rows - 1} would need {rows} rows (this peer builds at most "
                          f"{GPTJ_MAX_TABLE_ROWS})")
    key = (rotary,)
    table = _gptj_tables.get(key)
    if table is None or table.shape[0] < rows:
        table = modeling_gptj.create_sinusoidal_positions(max(rows, 8192), rotary)
        _gptj_tables[key] = table
    position_ids = torch.from_numpy(positions).to(torch.int64).unsqueeze(0)  # [batch=1, tokens]
    embed_positions = table.repeat(position_ids.shape[0], 1, 1)
    repeated_position_ids = position_ids.unsqueeze(-1).repeat(1, 1, embed_positions.shape[-1])
    sincos = torch.gather(embed_positions, 1, repeated_position_ids)
    sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
    query = torch.from_numpy(x).to(DTYPES[input_dtype]).unsqueeze(0)  # [batch, tokens, heads, head_dim]
    q_rot, q_pass = query[:, :, :, :rotary], query[:, :, :, rotary:]
    q_rot = modeling_gptj.apply_rotary_pos_emb(q_rot, sin, cos)
    out = torch.cat([q_rot, q_pass.to(q_rot.dtype)], dim=-1)  # torch.cat promotes the pass-through likewise
    assert out.dtype == torch.float32
    return out.squeeze(0).numpy()


def hf_qwen2vl(spec, x, positions):
    """Qwen2VLRotaryEmbedding(value, position_ids [3, batch, tokens]) + apply_multimodal_rotary_pos_emb."""
    common_checks(spec, "half")
    if spec.get("axes", "none") != "mrope":
        raise Unsupported(f"axes={spec.get('axes', 'none')}: hf-qwen2vl runs M-RoPE (axes=mrope) only; 1-D: hf-llama")
    sections = [int(s) for s in spec["sections"].split("/")]
    if len(sections) != 3:
        raise Unsupported(f"Qwen2-VL's mrope_section has three sections (t/h/w), the spec {len(sections)}")
    head_dim, rotary = int(spec["head_dim"]), peerlib.rotary_dim(spec)
    if rotary != head_dim:
        raise Unsupported("Qwen2-VL rotates all head_dim dims (no partial rotary)")
    heads = x.shape[1]
    rs, max_pos, extra = rope_scaling(spec, head_dim)
    rs = dict(rs or {"type": "mrope"})
    rs["mrope_section"] = sections
    config = Qwen2VLConfig(hidden_size=head_dim * heads, num_attention_heads=heads, num_key_value_heads=heads,
                           rope_theta=float(spec["base"]), max_position_embeddings=max_pos, rope_scaling=rs, **extra)
    module = modeling_qwen2_vl.Qwen2VLRotaryEmbedding(config=config)
    dtype = DTYPES[spec["dtype"]]
    pos, extra_tokens = dynamic_positions(spec, torch.from_numpy(positions).to(torch.int64))  # [tokens, 3]
    position_ids = pos.t().unsqueeze(1)  # [3, batch=1, tokens]
    q = q_of(x, dtype)
    cos, sin = module(q, position_ids)  # [3, batch, tokens, head_dim]
    if extra_tokens:
        cos, sin = cos[:, :, :-extra_tokens], sin[:, :, :-extra_tokens]
    out, _ = modeling_qwen2_vl.apply_multimodal_rotary_pos_emb(q, q, cos, sin, config.rope_scaling["mrope_section"])
    return from_q(out, dtype)


def hf_phi3(spec, x, positions):
    """Phi3Attention: cos, sin = self.rotary_emb(value_states, position_ids, seq_len=kv_seq_len) with
    Phi3LongRoPEScaledRotaryEmbedding(head_dim, config); factor = max_position_embeddings / original."""
    common_checks(spec, "half")
    one_d(spec)
    if spec.get("scaling") != "longrope":
        raise Unsupported("hf-phi3 runs Phi-3's LongRoPE class only (other rope types: hf-llama)")
    if "attention_factor" in spec:
        raise Unsupported(f"Phi-3's LongRoPE class of transformers {transformers.__version__} derives the attention "
                          f"factor from max_position_embeddings / original_max_position_embeddings only")
    head_dim, rotary = int(spec["head_dim"]), peerlib.rotary_dim(spec)
    if rotary != head_dim:
        raise Unsupported("Phi-3 rotates all head_dim dims (no partial rotary)")
    l0 = exact_int(spec["original_max_position"], "original_max_position")
    factor = float(spec.get("factor", "1"))
    max_pos = round(l0 * factor)
    if max_pos / l0 != factor:
        raise Unsupported(f"factor {spec.get('factor')} is not max_position_embeddings / {l0} for an integer "
                          f"max_position_embeddings (Phi-3 derives it so)")
    heads = x.shape[1]
    config = Phi3Config(hidden_size=head_dim * heads, num_attention_heads=heads, num_key_value_heads=heads,
                        rope_theta=float(spec["base"]), max_position_embeddings=max_pos,
                        original_max_position_embeddings=l0,
                        rope_scaling={"type": "longrope", "short_factor": peerlib.floats(spec, "short_factor"),
                                      "long_factor": peerlib.floats(spec, "long_factor")})
    module = modeling_phi3.Phi3LongRoPEScaledRotaryEmbedding(head_dim, config)
    dtype = DTYPES[spec["dtype"]]
    q = q_of(x, dtype)
    cos, sin = module(q, torch.from_numpy(positions).to(torch.int64).unsqueeze(0), seq_len=int(spec["seq_len"]))
    out, _ = modeling_phi3.apply_rotary_pos_emb(q, q, cos, sin)
    return from_q(out, dtype)


IMPLEMENTATIONS = {
    "hf-llama": hf_llama,
    "hf-neox": hf_neox,
    "hf-cohere": hf_cohere,
    "hf-gptj": hf_gptj,
    "hf-qwen2vl": hf_qwen2vl,
    "hf-phi3": hf_phi3,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", action="append", choices=sorted(IMPLEMENTATIONS), help="default: all")
    parser.add_argument("inputs")
    parser.add_argument("out_dir")
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out_dir, exist_ok=True)
    print(header(), flush=True)
    for name in args.impl or IMPLEMENTATIONS:
        done, skipped = peerlib.run_over(args.inputs, os.path.join(args.out_dir, name + ".npz"), IMPLEMENTATIONS[name])
        print(f"{name}: {done} outputs, {skipped} skipped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
