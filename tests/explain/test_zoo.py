"""The bug zoo under pytest (README.md): every case caught and named, every control passing with
no explanation. ctest runs it as explain_zoo_test with the module of this build; the same rows as
`tests/explain/zoo.py` prints."""
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import zoo  # noqa: E402
from cases import CASES  # noqa: E402
from controls import CONTROLS  # noqa: E402

KINDS = {"base", "base_dtype", "theta_running_product", "layout", "direction", "position_offset", "positions_dtype", "theta_dtype",
         "angle_dtype", "angle_tf32", "cos_sin_dtype", "rotary_dim", "frequency_dim", "partial_pairs", "scaling",
         "attention_factor", "axes", "memory_zeros", "memory_identity", "memory_stride", "raised", "head_unrotated",
         "head_zeros", "head_permuted", "head_positions", "memory_offset", "memory_head_stride", "two_changes"}


def test_the_zoo_is_well_formed():
    names = [c.name for c in CASES] + [c.name for c in CONTROLS]
    assert len(names) == len(set(names)), "names must be unique"
    assert len(CASES) >= 27 and len(CONTROLS) >= 20
    for case in CASES:
        assert re.match(r"^[\w.-]+/[\w.-]+#\d+: \S", case.report), \
            f"{case.name}: the report must read 'owner/repo#N: title'"
        assert case.expect_kind in KINDS, f"{case.name}: unknown kind {case.expect_kind!r}"
        assert case.expect_text, case.name
    assert {c.dtype for c in CASES} >= {"f32", "bf16", "f16"}
    specs = {}
    for control in CONTROLS:
        specs.setdefault(control.spec, []).append(control.style)
    assert all(len(styles) >= 2 for styles in specs.values()), "at least two controls per spec"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bug_is_caught_and_named(case):
    row = zoo.judge(case, True)
    assert row["caught"], f"{case.name} ({case.report}): ropecheck passed it"
    assert row["named"], (f"{case.name} ({case.report}): expected {case.expect_kind!r} with {case.expect_text!r}, "
                          f"got {row['explanation_kind']!r}: {row['explanation']!r}")


@pytest.mark.parametrize("control", CONTROLS, ids=[c.name for c in CONTROLS])
def test_control_passes_without_explanation(control):
    row = zoo.judge(control, False)
    assert row["passed"], f"{control.name}: a careful implementation failed ({control.spec})"
    assert row["explanation"] == "", f"{control.name}: a passing control got an explanation: {row['explanation']!r}"
