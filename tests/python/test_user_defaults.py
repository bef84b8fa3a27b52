"""What a user meets on default settings (the first five minutes of a new user): the claim judged when none is named is the
judge's default, f32-angle, so a careful float32 torch RoPE (HF transformers' cached cos/sin table)
passes gate() and assert_rope_close() in f32, f16 and bf16 while a planted bug still fails; the
summary's first line names the claim and its explanation lines say what the failing outputs are;
max_position bounds the positions a callable is handed on every route, golden groups included,
and the summary says what it left out."""
import re

import pytest

import ropecheck

torch = pytest.importorskip("torch")

BASE, HEAD_DIM = 10000.0, 64
TABLE = 131072  # the cos/sin cache's entries: positions 0 .. TABLE - 1
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def spec_of(dtype):
    return f"layout=half,head_dim={HEAD_DIM},base=10000,dtype={dtype}"


class CachedRope:
    """HF transformers' LlamaRotaryEmbedding as users run it: float32 inv_freq, a cos/sin cache of
    TABLE positions computed once in float32, indexed by the positions (an IndexError beyond it),
    rotate_half. Written here from docs/rope.md §1; records the largest position it was handed."""

    def __init__(self, sin_sign=1.0):
        inv_freq = 1.0 / (BASE ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.int64).float() / HEAD_DIM))
        freqs = torch.outer(torch.arange(TABLE, dtype=torch.int64).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos, self.sin = emb.cos(), sin_sign * emb.sin()
        self.largest = -1

    def __call__(self, x, positions):
        self.largest = max(self.largest, int(positions.max()))
        cos = self.cos[positions].to(x.dtype)[:, None, :]
        sin = self.sin[positions].to(x.dtype)[:, None, :]
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin


@pytest.fixture(scope="module")
def cached():
    return CachedRope()


def test_the_default_claim_is_the_judges_f32_angle():
    assert ropecheck.DEFAULT_MODEL == "f32-angle"
    x = torch.zeros(4, 1, HEAD_DIM)
    result = ropecheck.check(x, x, [0, 1, 2, 3], spec_of("f32"))
    assert result.model == "f32-angle"


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_a_careful_float32_cache_passes_on_defaults(cached, dtype):
    gated = ropecheck.gate(cached, spec=spec_of(dtype), as_torch=True, max_position=TABLE - 1)
    assert gated.passed, gated.summary()
    assert gated.model == "f32-angle" and gated.groups
    result = ropecheck.assert_rope_close(cached, spec=spec_of(dtype), as_torch=True, max_position=TABLE - 1, samples=32)
    assert result.model == "f32-angle"
    assert cached.largest == TABLE - 1  # the sweep reaches max_position, and nothing beyond it is handed over
    assert result.summary().startswith(f"ropecheck: PASS: CachedRope meets the claim f32-angle ({len(result.groups)} group(s), ")
    # A large worst e on a passing group says it is within its bound (which grows with the angle).
    for g in result.groups:
        assert 0 <= g.worst_margin <= 1
    assert result.summary().count("(within the bound: at most ") == len(result.groups), result.summary()


def test_the_exact_claim_is_still_there_to_name():
    # The float32 angle is not the exact rotation at large positions: under model="exact" it fails.
    result = ropecheck.gate(CachedRope(), spec=spec_of("f32"), as_torch=True, max_position=TABLE - 1, model="exact")
    assert not result.passed and result.model == "exact"
    assert result.summary().startswith("ropecheck: FAIL: CachedRope does not meet the claim exact (")


@pytest.fixture(scope="module")
def buggy():
    return CachedRope(sin_sign=-1.0)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_a_planted_bug_fails_on_defaults_with_its_explanation(buggy, dtype):
    with pytest.raises(AssertionError) as raised:
        ropecheck.assert_rope_close(buggy, spec=spec_of(dtype), as_torch=True, max_position=TABLE - 1, samples=32)
    lines = str(raised.value).splitlines()
    assert re.fullmatch(r"ropecheck: FAIL: CachedRope does not meet the claim f32-angle \((\d+) of \1 group\(s\) failed\)",
                        lines[0]), lines[0]
    explanations = [line for line in lines if line.startswith("  explanation: ")]
    # Every group fails the same way: one line for them all, naming the change and the groups.
    assert len(explanations) == 1, lines
    assert re.match(r"  explanation: \d+ groups: your outputs are RoPE with direction=inverse \(expected forward\)",
                    explanations[0]), explanations
    assert f"half-{dtype}-base10000[0]" in explanations[0] and "sweep[0]" in explanations[0]
    # Nothing is said of a position the callable was never handed (the diagnosis included).
    named = [int(p) for p in re.findall(r"position (\d+)", str(raised.value))]
    assert named and max(named) <= TABLE - 1, named
    # No line of a failure reads as a pass.
    assert not [line for line in lines if re.search(r"\bpass(ed|es)?\b", line, re.IGNORECASE)], lines


def test_max_position_bounds_the_golden_groups_too(cached):
    # The golden groups of this spec hold tests with every position above 2^17 - 1 and one with
    # positions on both sides: neither reaches the table's end.
    result = ropecheck.gate(cached, spec=spec_of("f32"), as_torch=True, max_position=TABLE - 1)
    assert result.passed, result.summary()
    assert cached.largest <= TABLE - 1
    tests_left_out = sum(g.skipped_by_position for g in result.groups)
    tokens_left_out = sum(g.tokens_beyond_max_position for g in result.groups)
    assert tests_left_out > 0 and tokens_left_out > 0
    assert result.max_position == TABLE - 1
    assert (f"  note: {tests_left_out} tests above max_position {TABLE - 1} left out, "
            f"and {tokens_left_out} tokens above it in other tests") in result.summary().splitlines()


def test_without_max_position_the_table_overflows_and_the_message_says_what_to_do():
    result = ropecheck.gate(CachedRope(), spec=spec_of("f32"), as_torch=True)
    assert not result.passed
    summary = result.summary()
    assert "IndexError: index" in summary and "out of bounds" in summary, summary
    assert "hint: a table (cos/sin cache) shorter than the positions ropecheck draws? give max_position=" in summary
    assert "left out" not in summary
