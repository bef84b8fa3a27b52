"""Models whose layers rotate differently (hfconfig ModelRotations): `ropecheck spec --hf-config`
lists every rotation, `--layer N|global|local` picks one wherever --hf-config is taken (gate/README.md
"A model whose layers rotate differently"), and Python's Spec.from_hf_config(layer=) and
hf_config_rotations do the same. A config whose layers all rotate alike reads as it always did."""
import json
import os
import warnings

import numpy as np
import pytest

import ropecheck
from conftest import run_cli

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "hfconfig", "examples")
LLAMA = os.path.join(EXAMPLES, "llama-2-7b.json")
LLAMA_SPEC = "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=f16,direction=forward,scaling=none"

# Gemma-3 27B (62 layers): every sixth layer, from layer 5, is a global one (sliding_window_pattern
# 6) at base 1e6 with linear factor 8; the other 52 are local at base 10000 (modeling_gemma3.py).
GEMMA3 = os.path.join(EXAMPLES, "gemma-3-27b-it.json")
GEMMA3_GLOBAL_LAYERS = [5, 11, 17, 23, 29, 35, 41, 47, 53, 59]
GEMMA3_LOCAL_LAYERS = [n for n in range(62) if n not in GEMMA3_GLOBAL_LAYERS]
GEMMA3_LOCAL = "layout=half,head_dim=128,rotary_dim=128,base=10000,dtype=bf16,direction=forward,scaling=none"
GEMMA3_GLOBAL = ("layout=half,head_dim=128,rotary_dim=128,base=1000000,dtype=bf16,direction=forward,"
                 "scaling=linear,factor=8")
# SmolLM3 3B (36 layers): no_rope_layers leaves every fourth layer (3, 7, ..., 35) without RoPE.
SMOLLM3 = os.path.join(EXAMPLES, "smollm3-3b.json")
SMOLLM3_NOPE_LAYERS = list(range(3, 36, 4))
SMOLLM3_SPEC = "layout=half,head_dim=128,rotary_dim=128,base=5000000,dtype=bf16,direction=forward,scaling=none"


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
    ("9223372036854775808", "got '9223372036854775808'"),
])
def test_layer_values_refused_by_name(ropecheck_bin, value, words):
    for command in (["spec"], ["apply", "--positions", "1", "--input", "1,0"]):
        status, _, err = run_cli(ropecheck_bin, *command, "--hf-config", LLAMA, f"--layer={value}")
        assert status == 2
        assert err.strip() == "ropecheck: --layer: expected a layer index N >= 0 or all|global|local, " + words


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
    assert str(raised.value) == "layer: expected an int >= 0 or 'all'|'global'|'local', " + words


def test_python_rotations_bad_config_raises_value_error():
    with pytest.raises(ValueError, match="--hf-config"):
        ropecheck.hf_config_rotations("/nonexistent/config.json")
    with pytest.raises(ValueError, match="--seq-len"):
        ropecheck.hf_config_rotations(LLAMA, seq_len=0)


# --- several rotations: the listing -------------------------------------------------------------

def test_gemma3_lists_local_and_global_layers(ropecheck_bin):
    status, out, err = run_cli(ropecheck_bin, "spec", "--hf-config", GEMMA3)
    assert status == 0, err
    assert out.splitlines() == [
        "local   layers 0-4,6-10,12-16,18-22,24-28,30-34,36-40,42-46,48-52,54-58,60-61 (52 of 62)  " + GEMMA3_LOCAL,
        "global  layers 5,11,17,23,29,35,41,47,53,59 (10 of 62)  " + GEMMA3_GLOBAL,
    ]
    # The config leaves rope_theta to the config class: said, on stderr, naming the file.
    notes = err.splitlines()
    assert notes and all(line.startswith(GEMMA3 + ": note: ") for line in notes), err
    assert any("rope_theta" in line for line in notes), err


def test_smollm3_lists_its_nope_layers(ropecheck_bin):
    status, out, err = run_cli(ropecheck_bin, "spec", "--hf-config", SMOLLM3)
    assert status == 0, err
    assert out.splitlines() == [
        "all     layers 0-2,4-6,8-10,12-14,16-18,20-22,24-26,28-30,32-34 (27 of 36)  " + SMOLLM3_SPEC,
        "nope    layers 3,7,11,15,19,23,27,31,35 (9 of 36)  no rotation",
    ]


def test_listing_json_form(ropecheck_bin):
    status, out, err = run_cli(ropecheck_bin, "spec", "--hf-config", GEMMA3, "--json")
    assert status == 0 and err == "", err
    doc = json.loads(out)
    assert (doc["model_type"], doc["num_layers"]) == ("gemma3_text", 62)
    assert doc["source"].startswith("gemma3/modeling_gemma3.py")  # the model code read (hfconfig/README.md)
    assert [(r["kind"], r["layers"]) for r in doc["rotations"]] == [("local", GEMMA3_LOCAL_LAYERS),
                                                                      ("global", GEMMA3_GLOBAL_LAYERS)]
    assert [(r["spec"]["base"], r["spec"]["scaling"]) for r in doc["rotations"]] == [("10000", "none"), ("1000000", "linear")]
    assert any("rope_theta" in note for note in doc["notes"])
    status, out, _ = run_cli(ropecheck_bin, "spec", "--hf-config", SMOLLM3, "--json")
    doc = json.loads(out)
    assert [(r["kind"], r["layers"], r["spec"]) for r in doc["rotations"]][1] == ("nope", SMOLLM3_NOPE_LAYERS, None)


# --- several rotations: --layer picks one ---------------------------------------------------------

@pytest.mark.filterwarnings("ignore::UserWarning")  # Gemma-3's notes: test_python_notes_are_warnings
@pytest.mark.parametrize("config,layer,expected", [
    (GEMMA3, "local", GEMMA3_LOCAL), (GEMMA3, "global", GEMMA3_GLOBAL), (GEMMA3, "0", GEMMA3_LOCAL),
    (GEMMA3, "5", GEMMA3_GLOBAL), (GEMMA3, "59", GEMMA3_GLOBAL), (GEMMA3, "61", GEMMA3_LOCAL),
    (SMOLLM3, "all", SMOLLM3_SPEC), (SMOLLM3, "34", SMOLLM3_SPEC),
])
def test_layer_picks_one_spec(ropecheck_bin, config, layer, expected):
    status, out, err = run_cli(ropecheck_bin, "spec", "--hf-config", config, "--layer", layer)
    assert (status, out) == (0, expected + "\n"), err
    kind_or_index = int(layer) if layer.isdigit() else layer
    assert str(ropecheck.Spec.from_hf_config(config, layer=kind_or_index)) == expected


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("config,layer", [(GEMMA3, None), (GEMMA3, "62"), (SMOLLM3, "3"), (SMOLLM3, "35"),
                                          (SMOLLM3, "global")])
def test_a_selection_without_one_rotation_is_refused(ropecheck_bin, config, layer):
    args = ["--layer", layer] if layer else []
    status, out, err = run_cli(ropecheck_bin, "apply", "--hf-config", config, *args, "--positions", "1",
                               "--input", ",".join(["1"] * 128))
    assert status == 2 and out == "", (out, err)
    line = err.strip().splitlines()[-1]
    assert line.startswith("ropecheck: " + config + ": field ") and "--layer" in line, err
    with pytest.raises(ValueError) as raised:
        ropecheck.Spec.from_hf_config(config, layer=int(layer) if layer and layer.isdigit() else layer)
    assert line == "ropecheck: " + str(raised.value)


def test_smollm3_without_layer_is_its_one_rotation(ropecheck_bin):
    status, out, err = run_cli(ropecheck_bin, "apply", "--hf-config", SMOLLM3, "--positions", "0",
                               "--input", ",".join(["1"] * 128))
    assert status == 0 and out.splitlines() == ["0x1p+0"] * 128, err  # position 0: the identity
    assert str(ropecheck.Spec.from_hf_config(SMOLLM3)) == SMOLLM3_SPEC


def test_check_judges_the_rotation_layer_picks(ropecheck_bin, tmp_path):
    # Outputs of Gemma-3's local rotation pass under --layer local and fail under --layer global
    # (base 10000 against 1e6 / 8: the angles differ from position 1 on).
    x = (np.arange(64 * 128).reshape(64, 1, 128) % 97 - 48).astype(np.float32) / 32  # bf16-exact
    np.save(tmp_path / "x.npy", x)
    status, _, err = run_cli(ropecheck_bin, "apply", "--hf-config", GEMMA3, "--layer", "local", "--positions",
                             "0:64", "--input", tmp_path / "x.npy", "--out", tmp_path / "local.npy")
    assert status == 0, err
    verdicts = {}
    for layer in ("local", "4", "global", "5"):
        verdicts[layer], _, err = run_cli(ropecheck_bin, "check", "--hf-config", GEMMA3, "--layer", layer,
                                          "--positions", "0:64", "--input", tmp_path / "x.npy",
                                          "--candidate", tmp_path / "local.npy")
    assert verdicts == {"local": 0, "4": 0, "global": 1, "5": 1}
    status, _, err = run_cli(ropecheck_bin, "check", "--hf-config", GEMMA3, "--positions", "0:64",
                             "--input", tmp_path / "x.npy", "--candidate", tmp_path / "local.npy")
    assert status == 2 and "--layer" in err


def test_golden_generate_one_suite_per_layer_kind(ropecheck_bin, tmp_path):
    common = ["golden", "generate", "--hf-config", GEMMA3, "--positions", "0:8", "--tokens", "4"]
    status, _, err = run_cli(ropecheck_bin, *common, "--out", tmp_path / "gemma3.json")
    assert status == 2 and "--layer" in err
    assert list(tmp_path.iterdir()) == []
    for kind, expected in (("local", GEMMA3_LOCAL), ("global", GEMMA3_GLOBAL)):
        out = tmp_path / f"gemma3-{kind}.json"
        status, _, err = run_cli(ropecheck_bin, *common, "--layer", kind, "--out", out)
        assert status == 0, err
        with open(out) as f:
            suite = json.load(f)
        assert [str(ropecheck.Spec(g["spec"])) for g in suite["groups"]] == [expected]
        assert run_cli(ropecheck_bin, "golden", "verify", out)[0] == 0


def test_fuzz_takes_one_layer_for_every_config(ropecheck_bin):
    # --layer applies to each --hf-config: layer 5 is one of Gemma-3's global layers and one of
    # Llama 2's (all alike); --layer global is refused by name for SmolLM3, which has none.
    status, out, err = run_cli(ropecheck_bin, "fuzz", "--impl", "reference", "--hf-config", GEMMA3, "--hf-config",
                               LLAMA, "--layer", "5", "--trials", "2")
    assert status == 0 and "verdict: pass" in out, (out, err)
    status, _, err = run_cli(ropecheck_bin, "fuzz", "--impl", "reference", "--hf-config", GEMMA3, "--hf-config",
                             SMOLLM3, "--layer", "global", "--trials", "1")
    assert status == 2 and err.splitlines()[-1].startswith("ropecheck: " + SMOLLM3 + ": field ") and "--layer global" in err, err


# --- several rotations in Python --------------------------------------------------------------------

def test_python_lists_every_rotation():
    rotations = ropecheck.hf_config_rotations(GEMMA3)
    assert (rotations.model_type, rotations.num_layers) == ("gemma3_text", 62)
    assert rotations.source.startswith("gemma3/modeling_gemma3.py")
    assert [(r.kind, r.layers, str(r.spec)) for r in rotations] == [("local", GEMMA3_LOCAL_LAYERS, GEMMA3_LOCAL),
                                                                     ("global", GEMMA3_GLOBAL_LAYERS, GEMMA3_GLOBAL)]
    assert any("rope_theta" in note for note in rotations.notes)
    smol = ropecheck.hf_config_rotations(SMOLLM3)
    assert [r.kind for r in smol] == ["all", "nope"]
    assert smol[-1].layers == SMOLLM3_NOPE_LAYERS and smol[-1].spec is None
    assert smol[0].layers == [n for n in range(36) if n not in SMOLLM3_NOPE_LAYERS]


def test_python_notes_are_warnings():
    with pytest.warns(UserWarning) as caught:
        ropecheck.Spec.from_hf_config(GEMMA3, layer="local")
    assert any(str(w.message).startswith(GEMMA3 + ": note: ") and "rope_theta" in str(w.message) for w in caught)
