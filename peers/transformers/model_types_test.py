"""Every model type of hfconfig's table against the model's own rotary code: for each, a
small config (few layers, small heads) is written to this test's temp folder; per decoder layer, the
rotation ropecheck reads from it (`ropecheck.hf_config_rotations`: one spec per distinct rotation, with
its layers; `Spec.from_hf_config(config, layer=N)` picks one of them)
is compared with what the model's code does in that layer (model_rotations.py: transformers 4.47.1's
classes, or the line-by-line ports of 4.57.6 in ports.py):

- a layer the model does not rotate (NoPE) is a layer ropecheck lists as NoPE, and the reverse;
- a rotating layer: the model's output on random float32 q at positions 0..31 and 16 positions up to
  max_position_embeddings − 1 passes `ropecheck.check` under the default claim (f32-angle, judge/README.md);
  the largest distance from `ropecheck.apply` (the exact rotation, correctly rounded) is printed in
  binary32 ulps of each pair's norm; the module's inv_freq is within the f32-angle model's k = 8
  binary32 ulps of `spec.frequencies()`, and its attention scaling within one binary32 ulp of
  `spec.attention_factor`;
- negative controls, which must fail `check`: the same output judged under the spec with the other
  layout, and for a model whose layers rotate differently (Gemma-3), one layer kind's output judged under
  the other kind's spec.

    PYTHONPATH=build/python build/peers/venv/bin/python -m pytest -s peers/transformers/model_types_test.py
    PYTHONPATH=build/python build/peers/venv/bin/python peers/transformers/model_types_test.py --markdown
        (the RESULTS.md section: one row per model type and layer kind)
"""
import json
import math
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

ropecheck = pytest.importorskip("ropecheck", reason="ropecheck's Python module is not importable (PYTHONPATH=build/python)")
torch = pytest.importorskip("torch", reason="torch is not importable (Debian python3-torch)")
transformers = pytest.importorskip(
    "transformers", reason="transformers is not importable (pip install -r peers/transformers/requirements.txt)")
if getattr(transformers, "__file__", None) is None:
    pytest.skip("transformers is not installed ('transformers' resolves to a folder of this repository)",
                allow_module_level=True)
transformers.logging.set_verbosity_error()

import numpy as np  # noqa: E402

import model_rotations  # noqa: E402

THETA_ULPS = 8  # the f32-angle model's default k (judge kDefaultThetaUlps)
SMALL = 4096  # distances are printed below this position too (RESULTS.md's "worst e (pos < 4096)")


def small(model_type, **fields):
    raw = {"model_type": model_type, "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 4,
           "num_hidden_layers": 4, "max_position_embeddings": 8192, "torch_dtype": "float32"}
    raw.update(fields)
    return raw


LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 2048}
# DeepSeek-V3 / Kimi-K2's published rope object (factor 40 / 32, mscale = mscale_all_dim = 1), L0 4096.
DEEPSEEK_YARN = {"type": "yarn", "factor": 40, "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0,
                 "original_max_position_embeddings": 4096}
KIMI_YARN = {"type": "yarn", "factor": 32.0, "beta_fast": 1.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0,
             "original_max_position_embeddings": 4096}
# openai/gpt-oss-20b's published rope object
GPT_OSS_YARN = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                "original_max_position_embeddings": 4096}
MLA = {"qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
       "max_position_embeddings": 163840}

# One small config per model type of the table; the fields that decide the rotation are the published
# models' (base, scaling, layer pattern, layout-deciding model_type), the sizes small.
CASES = {
    # transformers 4.47.1
    "llama": small("llama", rope_theta=500000.0, rope_scaling=LLAMA3, max_position_embeddings=131072),
    "mistral": small("mistral", head_dim=128, hidden_size=512, rope_theta=1e6),
    "qwen2": small("qwen2", rope_theta=1e6),
    "gemma2": small("gemma2", head_dim=128, rope_theta=10000.0),
    "cohere": small("cohere", rope_theta=8e6),
    "glm": small("glm", head_dim=64, partial_rotary_factor=0.5, rope_theta=10000.0),
    "phi3": small("phi3", hidden_size=384, num_attention_heads=4, rope_theta=10000.0),
    "olmo2": small("olmo2", rope_theta=500000.0),
    "granite": small("granite", rope_theta=10000000.0),
    "gpt_neox": small("gpt_neox", rotary_pct=0.25, rotary_emb_base=10000),
    "qwen2_vl": small("qwen2_vl", hidden_size=512, rope_theta=1e6,
                      rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]}),
    "mixtral": small("mixtral", head_dim=128, hidden_size=512, rope_theta=1e6),
    "qwen2_moe": small("qwen2_moe", rope_theta=1e6),
    "gemma": small("gemma", head_dim=256, hidden_size=512, rope_theta=10000.0),
    "gptj": {"model_type": "gptj", "n_embd": 256, "n_head": 4, "n_layer": 4, "n_positions": 2048, "rotary_dim": 32,
             "torch_dtype": "float32"},
    "codegen": {"model_type": "codegen", "n_embd": 256, "n_head": 4, "n_layer": 4, "n_positions": 2048, "rotary_dim": 32,
                "torch_dtype": "float32"},
    "phi3_v": small("phi3_v", hidden_size=384, rope_theta=10000.0),
    "qwen2_vl_text": small("qwen2_vl_text", hidden_size=512, rope_theta=1e6,
                           rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]}),
    # ports of 4.57.6
    "qwen3": small("qwen3", head_dim=128, rope_theta=1e6),
    "qwen3_moe": small("qwen3_moe", head_dim=128, rope_theta=1e6),
    "qwen2_5_vl": small("qwen2_5_vl", hidden_size=512, rope_theta=1e6,
                        rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]}),
    "qwen2_5_vl_text": small("qwen2_5_vl_text", hidden_size=512, rope_theta=1e6,
                             rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]}),
    "qwen3_vl": {"model_type": "qwen3_vl", "torch_dtype": "float32",
                 "text_config": dict(small("qwen3_vl_text", head_dim=128, rope_theta=5e6, max_position_embeddings=262144,
                                           rope_scaling={"rope_type": "default", "mrope_interleaved": True,
                                                         "mrope_section": [24, 20, 20]}), torch_dtype=None)},
    "qwen3_vl_text": small("qwen3_vl_text", head_dim=128, rope_theta=5e6,
                           rope_scaling={"rope_type": "default", "mrope_interleaved": True, "mrope_section": [24, 20, 20]}),
    "ernie4_5_moe": small("ernie4_5_moe", rope_theta=500000.0, max_position_embeddings=131072),
    "gemma3_text": small("gemma3_text", head_dim=64, num_hidden_layers=7, rope_theta=1e6,
                         rope_scaling={"rope_type": "linear", "factor": 8.0}),
    "gemma3": {"model_type": "gemma3", "torch_dtype": "float32",
               "text_config": {"model_type": "gemma3_text", "hidden_size": 256, "num_attention_heads": 4,
                               "num_key_value_heads": 4, "num_hidden_layers": 6, "head_dim": 64,
                               "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}},
    "cohere2": small("cohere2", rope_theta=50000.0, sliding_window=4096),
    "smollm3": small("smollm3", num_hidden_layers=8, rope_theta=5e6, max_position_embeddings=65536),
    "llama4_text": small("llama4_text", head_dim=64, rope_theta=500000.0,
                         rope_scaling={"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                                       "high_freq_factor": 1.0, "original_max_position_embeddings": 8192},
                         attn_temperature_tuning=False),
    # Llama4ForConditionalGeneration's config: Scout's rope object, attn_temperature_tuning left to its default
    # (true: a query scale on NoPE layers, no rotation; hfconfig says so in a note)
    "llama4": {"model_type": "llama4", "torch_dtype": "float32",
               "text_config": {"model_type": "llama4_text", "hidden_size": 256, "num_attention_heads": 4,
                               "num_key_value_heads": 4, "num_hidden_layers": 8, "head_dim": 64,
                               "max_position_embeddings": 262144, "rope_theta": 500000.0,
                               "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                                                "high_freq_factor": 1.0, "original_max_position_embeddings": 8192}}},
    "deepseek_v2": small("deepseek_v2", **MLA, rope_theta=10000.0,
                         rope_scaling={"type": "yarn", "factor": 40, "beta_fast": 32, "beta_slow": 1, "mscale": 0.707,
                                       "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096}),
    "deepseek_v3": small("deepseek_v3", **MLA, rope_theta=10000.0, rope_scaling=DEEPSEEK_YARN),
    "kimi_k2": small("kimi_k2", **dict(MLA, max_position_embeddings=131072), rope_theta=50000.0, rope_scaling=KIMI_YARN),
    # the same two configs through DeepSeek's own inference code (model_rotations.port_deepseek_own)
    "deepseek_v3-own-code": dict(small("deepseek_v3", **MLA, rope_theta=10000.0, rope_scaling=DEEPSEEK_YARN),
                                 _code="deepseek-ai/DeepSeek-V3"),
    "kimi_k2-own-code": dict(small("kimi_k2", **dict(MLA, max_position_embeddings=131072), rope_theta=50000.0,
                                   rope_scaling=KIMI_YARN), _code="deepseek-ai/DeepSeek-V3"),
    "ernie4_5": small("ernie4_5", head_dim=64, rope_theta=500000.0, max_position_embeddings=131072),
    "glm4": small("glm4", head_dim=64, partial_rotary_factor=0.5, rope_theta=10000.0),
    "gpt_oss": small("gpt_oss", head_dim=64, num_attention_heads=8, rope_theta=150000.0,
                     max_position_embeddings=131072, rope_scaling=GPT_OSS_YARN),
    # the rope object left to GptOssConfig's default (configuration_gpt_oss.py:65-72), the same yarn
    "gpt_oss-class-defaults": small("gpt_oss", head_dim=64, num_attention_heads=8, max_position_embeddings=131072),
}


# ---- what ropecheck reads -----------------------------------------------------------------------

def layer_specs(path, num_layers):
    """{layer: Spec, or None for a layer ropecheck lists as NoPE} from `ropecheck.hf_config_rotations` (one
    rotation per layer kind, with its layers); a kind "nope" must carry no spec and the others one."""
    read = ropecheck.hf_config_rotations(path)
    layers = {}
    for r in read:
        assert (r.kind == "nope") == (r.spec is None), f"{path}: kind {r.kind} with spec {r.spec}"
        for i in r.layers:
            assert i not in layers, f"{path}: layer {i} listed twice"
            layers[i] = r.spec
    assert read.num_layers == num_layers, f"{path}: ropecheck counts {read.num_layers} layers, the model {num_layers}"
    return layers


# ---- comparisons --------------------------------------------------------------------------------

def inputs(spec, max_position, seed, components=1):
    g = torch.Generator().manual_seed(seed)
    tokens, heads = 48, 2
    x = torch.rand(tokens, heads, spec.head_dim, generator=g, dtype=torch.float64) * 2 - 1
    spread = torch.randint(32, max_position, (16,), generator=g)
    pos = torch.cat((torch.arange(32), torch.sort(spread).values, torch.tensor([max_position - 1])))[:tokens]
    if components == 3:  # M-RoPE: temporal, height, width components differ
        pos = torch.stack((pos, pos // 2, pos // 3))
    return x.float(), pos.to(torch.int64)


def pair_index(spec):
    """(first, second) dims of each rotated pair: half (j, j + r/2), interleaved (2j, 2j + 1)."""
    r = spec.rotary_dim
    if spec.layout == "interleaved":
        return np.arange(0, r, 2), np.arange(1, r, 2)
    return np.arange(r // 2), np.arange(r // 2, r)


def ulp_distance(got, exact, x, spec):
    """Per token: the largest |got − exact| over each pair's two components, in binary32 ulps of the input
    pair's norm (a rotation keeps it); pass-through dims: the difference itself (they must be equal)."""
    a, b = pair_index(spec)
    norm = np.hypot(x[..., a], x[..., b]).astype(np.float64)
    ulp = np.ldexp(1.0, np.frexp(np.maximum(norm, np.finfo(np.float32).tiny))[1] - 24)
    err = np.maximum(np.abs(got[..., a] - exact[..., a]), np.abs(got[..., b] - exact[..., b])) / ulp
    per_token = err.reshape(err.shape[0], -1).max(axis=1)
    if spec.rotary_dim < spec.head_dim:
        rest = np.abs(got[..., spec.rotary_dim:] - exact[..., spec.rotary_dim:])
        per_token = np.maximum(per_token, rest.reshape(rest.shape[0], -1).max(axis=1))
    return per_token


def ulps32(value, exact):
    _, e = math.frexp(exact)
    return abs(value - exact) / math.ldexp(1.0, e - 24)


def control_spec(spec):
    """The spec with the other layout (half <-> interleaved)."""
    text = str(spec)
    other = "interleaved" if spec.layout == "half" else "half"
    return ropecheck.Spec(text.replace(f"layout={spec.layout}", f"layout={other}"))


def judge_layer(name, layer, rotation, spec, max_position):
    """Runs the model's rotation, judges it under `spec`, returns the row numbers."""
    components = spec.position_components
    x, pos = inputs(spec, max_position, seed=1000 + layer, components=components)
    out = rotation.rotate(x, pos)
    xs, ps = x.numpy(), pos.numpy()  # M-RoPE positions [components, tokens]: Qwen2-VL's order (gate/positions.h)
    result = ropecheck.check(out.numpy(), xs, ps, spec)
    assert result.passed, f"{name} layer {layer}: the model's output fails {spec}:\n{result.summary()}"
    exact = np.asarray(ropecheck.apply(xs, ps, spec), dtype=np.float64)
    per_token = ulp_distance(out.numpy().astype(np.float64), exact, xs.astype(np.float64), spec)
    first = ps if components == 1 else ps[0]
    distance = (float(per_token[first < SMALL].max()), float(per_token.max()))
    theta = spec.frequencies()
    inv = [float(v) for v in rotation.inv_freq.float()]
    assert len(inv) == len(theta), f"{name}: the model rotates {2 * len(inv)} dims, the spec {2 * len(theta)}: {spec}"
    theta_ulps = max(ulps32(v, t) for v, t in zip(inv, theta))
    assert theta_ulps <= THETA_ULPS, f"{name} layer {layer}: inv_freq {theta_ulps:.2f} binary32 ulps from {spec}"
    a32 = float(torch.tensor(spec.attention_factor, dtype=torch.float32))
    att = float(torch.tensor(rotation.attention, dtype=torch.float32))
    assert abs(att - a32) <= math.ldexp(abs(a32), -23), f"{name}: attention scaling {att!r}, spec {spec.attention_factor!r}"
    return out.numpy(), xs, ps, distance, theta_ulps


def compare(name, raw, tmp_path):
    """Per layer kind: {"spec", "layers", "ulps", "theta_ulps"} or {"spec": None (NoPE), "layers"}."""
    path = os.path.join(str(tmp_path), f"{name}.json")
    with open(path, "w") as f:
        json.dump(raw, f)
    model = model_rotations.model_rotation(raw)
    specs = layer_specs(path, model.num_layers)
    assert sorted(specs) == list(range(model.num_layers)), (
        f"{name}: ropecheck lists layers {sorted(specs)}, the model has {model.num_layers}")
    fields = model_rotations.text_fields(raw)
    max_position = fields.get("max_position_embeddings") or fields.get("n_positions") or 8192
    rows, outputs = {}, {}
    for i in range(model.num_layers):
        rotation, spec = model.layer(i), specs[i]
        key = str(spec) if spec is not None else "nope"
        if rotation is None or spec is None:
            assert rotation is None and spec is None, (
                f"{name} layer {i}: the model {'applies no RoPE' if rotation is None else 'rotates'}, "
                f"ropecheck reads {'NoPE' if spec is None else spec}")
            rows.setdefault(key, {"spec": None, "layers": []})["layers"].append(i)
            continue
        out, xs, ps, distance, theta_ulps = judge_layer(name, i, rotation, spec, max_position)
        row = rows.setdefault(key, {"spec": spec, "layers": [], "ulps": (0.0, 0.0), "theta_ulps": 0.0})
        row["layers"].append(i)
        row["ulps"] = tuple(max(u, d) for u, d in zip(row["ulps"], distance))
        row["theta_ulps"] = max(row["theta_ulps"], theta_ulps)
        outputs.setdefault(key, (out, xs, ps, spec))
        control = ropecheck.check(out, xs, ps, control_spec(spec))
        assert not control.passed, f"{name} layer {i}: the output passes under the other layout too ({control_spec(spec)})"
    rotating = [k for k in outputs]
    for k in rotating:  # each kind's output under every other kind's spec
        for other in rotating:
            if other != k:
                out, xs, ps, _ = outputs[k]
                assert not ropecheck.check(out, xs, ps, outputs[other][3]).passed, (
                    f"{name}: layers of {k} pass under {other} too")
    return model.source, rows


def table_model_types():
    """The model types of hfconfig/README.md's table: the first column of the table whose header's first cell is
    `model_type`, comma-separated names, `name(_suffix)` meaning name and name_suffix."""
    names, in_table = set(), False
    for line in open(os.path.join(ROOT, "hfconfig", "README.md"), encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else None
        if cells is None:
            in_table = False
        elif cells[0].strip("`") == "model_type":
            in_table = True
        elif in_table and not set(cells[0]) <= set("-: "):
            for item in cells[0].replace("`", "").split(","):
                m = re.fullmatch(r"([a-z0-9_]+)(?:\(([a-z0-9_]+)\))?", item.strip())
                assert m, f"hfconfig/README.md: model type {item.strip()!r} is not a name or name(_suffix)"
                names.update({m.group(1)} | ({m.group(1) + m.group(2)} if m.group(2) else set()))
    return names


def test_every_model_type_of_the_table_has_a_case():
    names = table_model_types()
    assert names, "hfconfig/README.md has no table whose first column is the model type"
    cased = {raw.get("model_type") for raw in CASES.values()}
    assert names <= cased, f"model types of hfconfig/README.md's table without a case here: {sorted(names - cased)}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_type_against_its_code(name, tmp_path):
    source, rows = compare(name, CASES[name], tmp_path)
    for key, row in rows.items():
        if row["spec"] is None:
            print(f"\n{name} ({source}): layers {row['layers']}: NoPE (q/k unrotated; ropecheck: NoPE)")
        else:
            print(f"\n{name} ({source}): layers {row['layers']}: {row['spec']}: pass; largest distance from "
                  f"ropecheck.apply {row['ulps'][0]:.2f} binary32 ulps below position {SMALL}, {row['ulps'][1]:.2f} at any; "
                  f"inv_freq {row['theta_ulps']:.2f} ulps")


def markdown(tmp_dir):
    """The RESULTS.md section: per model type and layer kind, the source, the spec read, the verdict under the
    default claim and the largest distances; a case whose comparison fails is one row saying why."""
    lines = [f"## Model types against their own rotary code (transformers {model_rotations.INSTALLED} or ports of "
             f"{model_rotations.ports.VERSION})", "",
             "peers/transformers/model_types_test.py (ctest `peers_model_types_against_their_code`): per model type of",
             "hfconfig's table, a small float32 config; per layer kind, the model's own rotary code on random q at 48",
             f"positions up to max_position_embeddings − 1, judged under the spec ropecheck reads (default claim "
             f"`{ropecheck.DEFAULT_MODEL}`);",
             "distances from `ropecheck.apply` (exact) in binary32 ulps of each pair's norm.", "",
             "| model type | source | layers | spec ropecheck reads | verdict | distance from ropecheck.apply, "
             f"positions < {SMALL} / all | inv_freq vs spec.frequencies() (ulps) |",
             "|---|---|---|---|---|---|---|"]
    for name in sorted(CASES):
        try:
            source, rows = compare(name, CASES[name], tmp_dir)
        except (AssertionError, ValueError) as why:
            lines.append(f"| {name} | – | – | – | fail: {str(why).splitlines()[0]} | – | – |")
            continue
        for row in rows.values():
            layers = ",".join(str(i) for i in row["layers"])
            if row["spec"] is None:
                lines.append(f"| {name} | {source} | {layers} | NoPE | q/k unrotated, NoPE read | – | – |")
            else:
                lines.append(f"| {name} | {source} | {layers} | `{row['spec']}` | pass | {row['ulps'][0]:.1f} / "
                             f"{row['ulps'][1]:.0f} | {row['theta_ulps']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import tempfile
    if sys.argv[1:] != ["--markdown"]:
        print("usage: model_types_test.py --markdown (the RESULTS.md section on stdout)", file=sys.stderr)
        sys.exit(2)
    with tempfile.TemporaryDirectory() as tmp:
        print(markdown(tmp))
