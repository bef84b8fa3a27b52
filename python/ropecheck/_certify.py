"""certify(fn, spec, positions): a callable certified at every position of a range and every pair
of the spec (python/README.md "Certifying a callable"), the run of `ropecheck certify`
(gate/certificate.h run_certify) with the callable as the implementation. Its report is the file
`ropecheck certify --json` writes, byte for byte: `ropecheck report merge` joins the shards of a
callable into the certificate, and `ropecheck certify --verify` reads it."""
import inspect
import json as _json
import os

from . import _checks as _c
from . import _ropecheck as _rc

# The range the kernels document (gate/certificate.h kMaxCertifyPosition): positions below 2^31.
MAX_END = 2**31
# Positions per call of the callable (runner/certify.h CertifyOptions::chunk, the CLI's default)
# and its bound (gate/certificate.h check_certify_options).
DEFAULT_CHUNK = 4096
MAX_CHUNK = 2**20
# Positions the explanation's sweep samples (runner/sweep.h; judge_callable's default).
EXPLAIN_SAMPLES = 256


class Certificate:
    """The outcome of certify(): `report` (the JSON as a dict: the certificate, or with shard= the
    shard's report), `text` (the file's text, as `ropecheck certify --json` writes it), `summary()`
    (what `ropecheck certify` prints), `passed`, `verdict`, `worst_e`, `first_failure` and
    `first_mismatch` (dicts: position, pair, probe, and the pair's message; None when there is
    none), and on a failure `explanation` and `explanation_kind`: what the callable's outputs are
    (judge/README.md "Explanation"), from a sweep of the callable up to the range's last position
    (judge_callable()'s route); "" on a pass."""

    def __init__(self, text, summary, passed):
        self.text = text
        self.report = _json.loads(text)
        self._summary = summary
        self.passed = passed
        self.verdict = self.report["verdict"]
        self.worst_e = self.report["worst_e"]
        self.first_failure = _first(self.report["pairs"], "first_failure", "first_failure_probe", "first_failure_message")
        self.first_mismatch = _first(self.report["pairs"], "first_mismatch", "first_mismatch_probe", None)
        self.explanation = ""
        self.explanation_kind = ""

    def summary(self):
        """The summary `ropecheck certify` prints, and on a failure the first failing position and
        the explanation."""
        text = self._summary
        if self.first_failure is not None:
            f = self.first_failure
            text += f"first failure: position {f['position']}, pair {f['pair']}, {f['probe']}: {f['message']}\n"
        if self.explanation:
            text += f"explanation: {self.explanation}\n"
        return text

    def write(self, path):
        """Writes the report's text to `path` (what `ropecheck certify --json` writes)."""
        with open(os.fspath(path), "w", encoding="utf-8") as out:
            out.write(self.text)

    def __repr__(self):
        r = self.report
        return f"<ropecheck.Certificate {self.verdict} [{r['range']['first']}, {r['range']['end']}) {r['implementation']['name']}>"


def _first(pairs, position_key, probe_key, message_key):
    """The lowest position any pair records under position_key (the lower pair on a tie)."""
    found = [p for p in pairs if p[position_key] is not None]
    if not found:
        return None
    p = min(found, key=lambda p: (p[position_key], p["pair"]))
    out = {"position": p[position_key], "pair": p["pair"], "probe": p[probe_key]}
    if message_key is not None:
        out["message"] = p[message_key]
    return out


def positions_of(positions):
    """(first, end) of `positions`: range(A, B) (step 1), a pair (A, B), or an int B (0 to B - 1);
    0 <= A < B <= 2^31, the CLI's --positions A:B."""
    if isinstance(positions, range):
        if positions.step != 1:
            raise ValueError(f"positions: expected a range of step 1, got {positions!r}")
        first, end = positions.start, positions.stop
    elif isinstance(positions, (tuple, list)) and len(positions) == 2:
        first, end = positions
    else:
        first, end = 0, positions
    first = _c.integer(first, "positions", 0, MAX_END - 1)
    end = _c.integer(end, "positions", 1, MAX_END)
    if end <= first:
        raise ValueError(f"positions: expected A < B (positions A to B - 1), got {first}:{end}")
    return first, end


def shard_of(shard, shard_count):
    """(index, count) of `shard`: None (the whole range), (K, N), "K/N", or "auto" (a Slurm job
    array, or a Kubernetes Indexed Job with shard_count= its completions), resolved by the CLI's
    rule (gate/shard.h resolve_shard, --shard and --shard-count)."""
    if isinstance(shard, (tuple, list)) and len(shard) == 2:
        shard = f"{_c.integer(shard[0], '--shard', 0, _c.INT32_MAX)}/{_c.integer(shard[1], '--shard', 1, _c.INT32_MAX)}"
    if shard is not None:
        shard = _c.text(shard, "--shard", "K/N, (K, N) or 'auto'")
    shard_count = _c.optional_integer(shard_count, "--shard-count", 1, _c.INT64_MAX)
    return _rc.resolve_shard(shard, shard_count)


def source_file(fn):
    """The file that defines fn, or its type (a callable object): the implementation's identity in
    the certificate, with the file's SHA-256; "" when there is none (a builtin)."""
    for target in (fn, type(fn)):
        try:
            path = inspect.getsourcefile(target)
        except TypeError:
            continue
        if path and os.path.isfile(path):
            return os.path.abspath(path)
    return ""
