"""Models whose layers rotate differently (hfconfig ModelRotations): `ropecheck spec --hf-config`
lists every rotation, `--layer N|global|local` picks one wherever --hf-config is taken (gate/README.md
"A model whose layers rotate differently"), and Python's Spec.from_hf_config(layer=) and
hf_config_rotations do the same. A config whose layers all rotate alike reads as it always did."""
import json
import os
import warnings

import pytest

import ropecheck
from conftest import run_cli

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "hfconfig", "examples")
LLAMA = os.path.join(EXAMPLES, "llama-2-7b.json")
LLAMA_SPEC = "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=f16,direction=forward,scaling=none"


# --- --layer on the command line: where it is refused -----------------------------------------

@pytest.mark.parametrize("args", [
    ["spec", "--spec", "head_dim=4,base=10000,dtype=f32", "--layer", "1"],
    ["apply", "--spec", "head_dim=2,base=10000,dtype=f64", "--positions", "1", "--input", "1,0", "--layer", "global"],
    ["golden", "generate", "--suite", "half-f32-base10000", "--out", "{tmp}", "--layer", "0"],
    ["golden", "generate", "--spec", "head_dim=2,base=10000,dtype=f64", "--positions", "0:4", "--tokens", "2",
     "--out", "{tmp}/own.json", "--layer", "0"],
    ["sweep", "--impl", "reference", "--spec", "head_dim=4,base=10000,dtype=f32", "--layer", "local"],
    ["fuzz", "--impl", "reference", "--layer", "local"],
])
def test_layer_without_hf_config_is_a_usage_error(ropecheck_bin, tmp_path, args):
    status, out, err = run_cli(ropecheck_bin, *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert status == 2, (out, err)
    assert err.strip() == "ropecheck: --layer: needs --hf-config (it picks one rotation of a config's layers)"
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("value,words", [
    ("nope", "got 'nope' (NoPE layers apply no rotation: no spec to judge)"),
    ("-1", "got '-1'"),
    ("1.5", "got '1.5'"),
    ("Global", "got 'Global'"),
    ("all", "got 'all'"),
    ("9223372036854775808", "got '9223372036854775808'"),
])
def test_layer_values_refused_by_name(ropecheck_bin, value, words):
    for command in (["spec"], ["apply", "--positions", "1", "--input", "1,0"]):
        status, _, err = run_cli(ropecheck_bin, *command, "--hf-config", LLAMA, f"--layer={value}")
        assert status == 2
        assert err.strip() == "ropecheck: --layer: expected a layer index N >= 0 or global|local, " + words


# --- a config whose layers all rotate alike -----------------------------------------------------

def test_one_rotation_prints_its_spec_as_before(ropecheck_bin):
    status, out, err = run_cli(ropecheck_bin, "spec", "--hf-config", LLAMA)
    assert (status, out, err) == (0, LLAMA_SPEC + "\n", "")
    status, out, _ = run_cli(ropecheck_bin, "spec", "--hf-config", LLAMA, "--json")
    assert status == 0 and json.loads(out) == {"layout": "half", "head_dim": 128, "rotary_dim": 128, "base": "10000",
                                               "dtype": "f16", "direction": "forward", "scaling": "none"}


def test_one_rotation_in_python():
    rotations = ropecheck.hf_config_rotations(LLAMA)
    assert len(rotations) == 1 and len(rotations.rotations) == 1
    (only,) = list(rotations)
    assert only.kind == "all"
    assert str(only.spec) == LLAMA_SPEC
    assert rotations[0].spec == ropecheck.Spec.from_hf_config(LLAMA)
    with open(LLAMA) as f:
        assert str(ropecheck.hf_config_rotations(json.load(f))[0].spec) == LLAMA_SPEC
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no note: Llama 2's config gives every field it needs
        ropecheck.Spec.from_hf_config(LLAMA)


@pytest.mark.parametrize("layer,words", [
    ("nope", "got 'nope' (NoPE layers apply no rotation: no spec to judge)"),
    (-1, "got -1"),
    (True, "got True"),
    (2.0, "got 2.0"),
    ("Global", "got 'Global'"),
    (2**64, "got 18446744073709551616"),
])
def test_python_layer_values_refused_by_name(layer, words):
    with pytest.raises(ValueError) as raised:
        ropecheck.Spec.from_hf_config(LLAMA, layer=layer)
    assert str(raised.value) == "layer: expected an int >= 0 or 'global'|'local', " + words


def test_python_rotations_bad_config_raises_value_error():
    with pytest.raises(ValueError, match="--hf-config"):
        ropecheck.hf_config_rotations("/nonexistent/config.json")
    with pytest.raises(ValueError, match="--seq-len"):
        ropecheck.hf_config_rotations(LLAMA, seq_len=0)
