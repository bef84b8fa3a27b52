"""Spec.from_hf_config: a transformers config.json (path or dict) gives the spec that `ropecheck
spec --hf-config` prints (the same hfconfig/ mapping; every rotation, for a model whose layers
differ: test_hf_layers.py); a config ropecheck does not model raises ValueError with the command
line's one-line message."""
import json
import os
import warnings

import pytest

import ropecheck
from conftest import run_cli

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "hfconfig", "examples")
LLAMA = os.path.join(EXAMPLES, "llama-3.1-8b.json")
DYNAMIC = os.path.join(EXAMPLES, "dynamic-ntk-style.json")


def cli_spec(binary, *args):
    status, out, err = run_cli(binary, "spec", *args)
    assert status == 0, err
    return out.strip()


def test_llama_3_1_config_by_path_and_by_dict(ropecheck_bin):
    printed = cli_spec(ropecheck_bin, "--hf-config", LLAMA)
    # Written out too, so that a mapping changed on both sides at once still fails here.
    assert printed == ("layout=half,head_dim=128,rotary_dim=128,base=500000,dtype=bf16,direction=forward,"
                       "scaling=llama3,factor=8,original_max_position=8192,low_freq_factor=1,high_freq_factor=4")
    by_path = ropecheck.Spec.from_hf_config(LLAMA)
    assert str(by_path) == printed
    with open(LLAMA) as f:
        config = json.load(f)
    assert ropecheck.Spec.from_hf_config(config) == by_path
    import pathlib

    assert ropecheck.Spec.from_hf_config(pathlib.Path(LLAMA)) == by_path


def test_every_example_config_agrees_with_the_command_line(ropecheck_bin):
    checked = 0
    for name in sorted(os.listdir(EXAMPLES)):
        path = os.path.join(EXAMPLES, name)
        status, out, err = run_cli(ropecheck_bin, "spec", "--hf-config", path, "--seq-len", 10000, "--json")
        if status != 0:  # refused by the CLI: refused here with the same line
            with pytest.raises(ValueError) as raised:
                ropecheck.hf_config_rotations(path, seq_len=10000)
            assert str(raised.value) in err, name
            continue
        printed = json.loads(out)
        rotations = ropecheck.hf_config_rotations(path, seq_len=10000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the notes: tests/python/test_hf_layers.py
            if "rotations" not in printed:  # one rotation: its spec's JSON form
                assert [r.kind for r in rotations] == ["all"], name
                assert ropecheck.Spec.from_hf_config(path, seq_len=10000) == ropecheck.Spec(printed), name
                assert rotations[0].spec == ropecheck.Spec(printed), name
            else:  # several: each kind, its layers and spec, and the one spec --layer KIND picks
                assert [(r.kind, r.layers) for r in rotations] == [(p["kind"], p["layers"]) for p in printed["rotations"]], name
                assert (rotations.notes, rotations.source) == (printed["notes"], printed["source"]), name
                for r, p in zip(rotations, printed["rotations"]):
                    assert (r.spec is None) == (p["spec"] is None), name
                    if r.spec is not None:
                        assert r.spec == ropecheck.Spec(p["spec"]), name
                        assert ropecheck.Spec.from_hf_config(path, seq_len=10000, layer=r.kind) == r.spec, name
        checked += 1
    assert checked >= 10


def test_seq_len_for_dynamic_ntk(ropecheck_bin):
    spec = ropecheck.Spec.from_hf_config(DYNAMIC, seq_len=8192)
    assert str(spec) == cli_spec(ropecheck_bin, "--hf-config", DYNAMIC, "--seq-len", 8192)
    assert "seq_len=8192" in str(spec)
    with pytest.raises(ValueError, match="seq-len"):
        ropecheck.Spec.from_hf_config(DYNAMIC)


def test_gptj_config_gives_f16_inputs_and_f32_outputs():
    spec = ropecheck.Spec.from_hf_config(os.path.join(EXAMPLES, "gpt-j-6b-float16.json"))
    assert (spec.layout, spec.head_dim, spec.rotary_dim, spec.input_dtype, spec.dtype) == ("interleaved", 256, 64, "f16", "f32")


@pytest.mark.parametrize("config,seq_len,words", [
    ({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000,
      "torch_dtype": "bfloat16", "rope_scaling": {"rope_type": "foo"}}, None, "rope_scaling"),
    ({"model_type": "llama", "num_attention_heads": 32, "rope_theta": 10000, "torch_dtype": "bfloat16"}, None, "hidden_size"),
    ({"model_type": "no-such-model", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000,
      "torch_dtype": "bfloat16"}, None, "model_type"),
    ({"rope_theta": 10000}, None, "config: field"),
    ("/nonexistent/config.json", None, "--hf-config"),
    (LLAMA, 0, "--seq-len"),
    (LLAMA, 2.5, "--seq-len"),
    (42, None, "--hf-config"),
])
def test_bad_configs_raise_value_error(config, seq_len, words):
    with pytest.raises(ValueError) as raised:
        ropecheck.Spec.from_hf_config(config, seq_len=seq_len)
    message = str(raised.value)
    assert "\n" not in message and words in message, message


def test_bad_config_message_is_the_command_lines(ropecheck_bin, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
                                "rope_theta": 10000, "torch_dtype": "bfloat16", "rope_scaling": {"rope_type": "foo"}}))
    status, _, err = run_cli(ropecheck_bin, "spec", "--hf-config", path)
    assert status == 2
    with pytest.raises(ValueError) as raised:
        ropecheck.Spec.from_hf_config(str(path))
    assert err.strip() == f"ropecheck: {raised.value}"
