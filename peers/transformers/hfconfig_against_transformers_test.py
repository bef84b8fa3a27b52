"""hfconfig against the real library: for every hfconfig/examples/ config (and a config per rope type
transformers defines that ropecheck models), the spec `ropecheck.Spec.from_hf_config(path, seq_len)`
derives must give the rotation transformers' own code computes:

- inv_freq (read from the rotary module the model builds, after the forward pass that serves the
  sequence length) within the f32-angle model's bound of spec.frequencies(): k = 8 binary32 ulps
  (judge kDefaultThetaUlps); the max ulps seen is printed per case;
- the attention factor (cos at position 0, which is 1 · attention_scaling in float32) equal to
  spec.attention_factor rounded to float32 (within one binary32 ulp);
- the number of pairs (rotary_dim / 2), and Qwen2-VL's mrope_section the spec's sections.

    PYTHONPATH=build/python build/peers/venv/bin/python -m pytest -s \
        peers/transformers/hfconfig_against_transformers_test.py

Skips (whole module) when transformers or ropecheck cannot be imported. Differences that are
transformers quirks of the pinned version are xfail (strict) with the reason; peers/transformers/README.md
explains each.
"""
import contextlib
import copy
import importlib
import json
import math
import os

import pytest

ropecheck = pytest.importorskip("ropecheck", reason="ropecheck's Python module is not importable (PYTHONPATH=build/python)")
torch = pytest.importorskip("torch", reason="torch is not importable (Debian python3-torch)")
transformers = pytest.importorskip("transformers", reason="transformers is not importable (pip install -r peers/transformers/requirements.txt)")
if getattr(transformers, "__file__", None) is None:  # peers/transformers/ itself, as a namespace package
    pytest.skip("transformers is not installed ('transformers' resolves to a folder of this repository)", allow_module_level=True)

from transformers import CONFIG_MAPPING  # noqa: E402

transformers.logging.set_verbosity_error()

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "hfconfig", "examples")
THETA_ULPS = 8  # the f32-angle model's default k (judge kDefaultThetaUlps)
VERSION = transformers.__version__


def ulps32(value, exact):
    """|value − exact| in binary32 ulps of exact (ulp of [2^e, 2^(e+1)) is 2^(e−23))."""
    _, e = math.frexp(exact)  # exact = m·2^e, m in [0.5, 1)
    return abs(value - exact) / math.ldexp(1.0, e - 24)


@contextlib.contextmanager
def einsum_operands(log):
    """Records torch.einsum's operands (GPT-J's create_sinusoidal_positions keeps inv_freq local)."""
    real = torch.einsum

    def spy(equation, *operands):
        log.append(operands)
        return real(equation, *operands)

    torch.einsum = spy
    try:
        yield
    finally:
        torch.einsum = real


def transformers_rotation(raw, seq_len):
    """(inv_freq float32 tensor, attention factor float32, extra dict) as the model of `raw` (a config.json
    dict) computes them with transformers' own classes, serving a sequence of length seq_len."""
    model_type = raw["model_type"]
    fields = {k: v for k, v in raw.items() if not k.startswith("_") and k not in ("architectures", "model_type")}
    if model_type == "phi3_v":  # remote code (Phi3VForCausalLM); its text model is transformers' Phi-3
        model_type = "phi3"
    if model_type not in CONFIG_MAPPING:
        pytest.skip(f"transformers {VERSION} has no model type {model_type}")
    config = CONFIG_MAPPING[model_type](**copy.deepcopy(fields))
    length = seq_len or 1
    x = torch.zeros(1, dtype=torch.float32)
    position_ids = torch.tensor([[0, length - 1]], dtype=torch.int64)  # the served length is max + 1
    extra = {}
    if model_type == "gptj":
        log = []
        with einsum_operands(log):
            table = transformers.models.gptj.modeling_gptj.create_sinusoidal_positions(2, config.rotary_dim)
        inv_freq = log[0][1]
        return inv_freq, float(table[0, config.rotary_dim // 2]), extra  # cos(0) column: no attention scaling
    if model_type == "phi3":  # Phi3Attention._init_rope
        head_dim = config.hidden_size // config.num_attention_heads
        m = transformers.models.phi3.modeling_phi3
        if config.rope_scaling is None:
            module = m.Phi3RotaryEmbedding(head_dim, config.max_position_embeddings, base=config.rope_theta)
            cos, _ = module(x, position_ids)
        else:
            module = m.Phi3LongRoPEScaledRotaryEmbedding(head_dim, config)
            cos, _ = module(x, position_ids, seq_len=seq_len)  # Phi3Attention passes kv_seq_len
    elif model_type == "mistral":  # MistralAttention: MistralRotaryEmbedding(head_dim, max_pos, base=rope_theta)
        module = transformers.models.mistral.modeling_mistral.MistralRotaryEmbedding(
            config.head_dim, max_position_embeddings=config.max_position_embeddings, base=config.rope_theta)
        cos, _ = module(x, position_ids)
    else:
        classes = {"llama": "llama.modeling_llama.LlamaRotaryEmbedding",
                   "qwen2": "qwen2.modeling_qwen2.Qwen2RotaryEmbedding",
                   "gpt_neox": "gpt_neox.modeling_gpt_neox.GPTNeoXRotaryEmbedding",
                   "qwen2_vl": "qwen2_vl.modeling_qwen2_vl.Qwen2VLRotaryEmbedding"}
        if model_type not in classes:
            pytest.skip(f"no rotary module wired for model type {model_type}")
        path, name = classes[model_type].rsplit(".", 1)
        module_class = getattr(importlib.import_module(f"transformers.models.{path}"), name)
        module = module_class(config=config)
        if model_type == "qwen2_vl":
            cos, _ = module(x, position_ids.expand(3, 1, 2))
            extra["mrope_section"] = config.rope_scaling["mrope_section"]
        else:
            cos, _ = module(x, position_ids)
    return module.inv_freq, float(cos.reshape(-1)[0]), extra  # position 0: cos = 1 · attention_scaling


def example_cases():
    seq_lens = {"dynamic-ntk-style.json": [None, 2048, 4096, 4097, 8192, 65536],
                "phi-3-vision-128k-instruct.json": [None, 4096, 4097, 131072],
                "phi3-style-longrope-synthetic.json": [None, 4096, 4097, 131072]}
    for name in sorted(os.listdir(EXAMPLES)):
        if name.endswith(".json"):
            for seq_len in seq_lens.get(name, [None]):
                yield name, os.path.join(EXAMPLES, name), seq_len


def llama(rope_scaling, **fields):
    raw = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096,
           "rope_theta": 10000.0, "torch_dtype": "bfloat16", "rope_scaling": rope_scaling}
    raw.update(fields)
    return raw


LONG = [1.0 + 0.25 * j for j in range(64)]
SHORT = [1.0 + 0.01 * j for j in range(64)]
# One config per rope type of modeling_rope_utils.ROPE_INIT_FUNCTIONS that ropecheck models, beyond the examples.
SYNTHETIC = {
    "default-d80-base1e6": (llama(None, hidden_size=2560, rope_theta=1e6), [None]),
    "default-d96-base5e5": (llama(None, hidden_size=3072, rope_theta=5e5), [None]),
    "linear-2.5": (llama({"rope_type": "linear", "factor": 2.5}), [None]),
    "dynamic-4-base5e5": (llama({"rope_type": "dynamic", "factor": 4.0}, rope_theta=5e5), [4096, 5000, 100000]),
    "yarn-beta16-2-attn": (llama({"rope_type": "yarn", "factor": 8.0, "beta_fast": 16.0, "beta_slow": 2.0,
                                  "attention_factor": 1.25}), [None]),
    "yarn-16-default-attn": (llama({"rope_type": "yarn", "factor": 16.0}, rope_theta=5e5), [None]),
    "yarn-original-below-max": (llama({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
                                      max_position_embeddings=16384), [None]),
    "llama3-d96": (llama({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                          "original_max_position_embeddings": 8192}, hidden_size=3072, max_position_embeddings=131072),
                   [None]),
    "longrope-factor-in-rope": (llama({"rope_type": "longrope", "factor": 8.0, "short_factor": SHORT,
                                       "long_factor": LONG}), [2048, 4096, 4097, 32768]),
    "longrope-attention-factor": (llama({"rope_type": "longrope", "factor": 8.0, "attention_factor": 1.1,
                                         "short_factor": SHORT, "long_factor": LONG}), [8192]),
}

# Differences that are quirks of the pinned transformers (README "hfconfig against transformers"): xfail.
QUIRKS = {
    ("deepseek-style-yarn-mscale.json", None):
        f"transformers {VERSION}'s _compute_yarn_parameters takes L0 from max_position_embeddings (163840, not "
        "rope_scaling.original_max_position_embeddings 4096) and ignores mscale/mscale_all_dim (attention factor "
        "0.1·ln 40 + 1 = 1.369 instead of mscale(40, 0.707)/mscale(40, 0.707) = 1)",
    ("yarn-original-below-max", None):
        f"transformers {VERSION}'s _compute_yarn_parameters takes L0 from max_position_embeddings (16384), not "
        "rope_scaling.original_max_position_embeddings (4096)",
    ("longrope-factor-in-rope", 2048):
        f"transformers {VERSION}'s LlamaRotaryEmbedding computes longrope's inv_freq once at init with seq_len=None: "
        "long factors whenever factor > 1, also for a sequence within original_max_position (4096)",
    ("longrope-factor-in-rope", 4096):
        f"transformers {VERSION}'s LlamaRotaryEmbedding computes longrope's inv_freq once at init with seq_len=None: "
        "long factors whenever factor > 1, also for a sequence within original_max_position (4096)",
}


def cases():
    for name, path, seq_len in example_cases():
        yield pytest.param(name, path, seq_len, id=f"{name}-seq{seq_len}" if seq_len else name,
                           marks=quirk_mark(name, seq_len))
    for name, (raw, seq_lens) in SYNTHETIC.items():
        for seq_len in seq_lens:
            yield pytest.param(name, raw, seq_len, id=f"{name}-seq{seq_len}" if seq_len else name,
                               marks=quirk_mark(name, seq_len))


def quirk_mark(name, seq_len):
    reason = QUIRKS.get((name, seq_len))
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []


@pytest.mark.parametrize("name,config,seq_len", list(cases()))
def test_spec_matches_transformers(name, config, seq_len):
    raw = json.load(open(config)) if isinstance(config, str) else config
    if "text_config" in raw:
        raw = dict(raw["text_config"], **{k: v for k, v in raw.items() if k not in ("text_config", "model_type")})
    if raw["model_type"] not in CONFIG_MAPPING and raw["model_type"] != "phi3_v":  # before reading: its layers may differ
        pytest.skip(f"transformers {VERSION} has no model type {raw['model_type']} (model_types_test.py ports its code)")
    try:
        spec = ropecheck.Spec.from_hf_config(config, seq_len=seq_len)
    except ValueError as why:
        if seq_len is None and ("seq-len" in str(why) or "seq_len" in str(why)):
            print(f"{name}: ropecheck refuses without a sequence length: {why}")
            return  # the type depends on the served length: refused by message, as hfconfig/README.md says
        raise
    inv_freq, attention, extra = transformers_rotation(raw, seq_len)
    theta = spec.frequencies()
    inv_freq = [float(v) for v in inv_freq.float()]
    assert len(inv_freq) == len(theta), f"transformers rotates {2 * len(inv_freq)} dims, the spec {2 * len(theta)}: {spec}"
    ulps = [ulps32(v, t) for v, t in zip(inv_freq, theta)]
    worst = max(range(len(ulps)), key=ulps.__getitem__)
    a32 = float(torch.tensor(spec.attention_factor, dtype=torch.float32))
    print(f"\n{name} seq_len={seq_len}: max {ulps[worst]:.2f} binary32 ulps (pair {worst} of {len(ulps)}); "
          f"attention transformers {attention!r} spec {spec.attention_factor!r}")
    assert ulps[worst] <= THETA_ULPS, (
        f"inv_freq[{worst}] = {inv_freq[worst]!r} is {ulps[worst]:.2f} binary32 ulps from θ'_{worst} = {theta[worst]!r} "
        f"(k = {THETA_ULPS}); spec {spec}")
    assert abs(attention - a32) <= math.ldexp(abs(a32), -23), (
        f"attention factor: transformers {attention!r}, spec {spec.attention_factor!r} (float32 {a32!r})")
    if "mrope_section" in extra:
        text = str(spec)
        assert f"sections={'/'.join(str(s) for s in extra['mrope_section'])}" in text, text
