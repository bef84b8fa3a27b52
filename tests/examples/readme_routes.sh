#!/usr/bin/env bash
# The README's routes run as a new user runs them: every command of its ```sh and ```python blocks,
# read from README.md, in a temporary folder laid out as the repository (golden/, gate/, build/
# linked), `ropecheck` the built command, with the project's stand-ins for the user's code:
#   my_rope.py        gate/examples/numpy_candidate.py --float32 (careful float32, HF-style), then
#                     the same with a planted bug (--bug base);
#   config.json, q.npy, q_rotated.npy   hfconfig/examples/llama-2-7b.json, inputs drawn here and a
#                     careful float32 rotation of them, then the same rotation one position off;
#   libmykernel.so    examples/plugin/rope_plugin.c built by its README's one-line cc command;
#   my_rope           an HF-style PyTorch RoPE (cached cos/sin in float32), then one with its base
#                     wrong.
# Each careful stand-in passes on the README's default settings (exit 0); each planted bug fails
# (exit 1) with its explanation on the terminal. Arguments: the build tree, the source tree.
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
readme=$source/README.md
python=${ROPECHECK_TEST_PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The lines of the README's ```$1 block number $2 (1-based), continuation lines joined.
block() {
  awk -v lang="$1" -v want="$2" '$0 == "```" lang { n++; inside = (n == want); next } /^```/ { inside = 0; next } inside' "$readme" |
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta'
}

# Runs one README line in the work folder: prints its last lines; fails unless it exits $2.
# $3, when given: text its output must hold.
run_line() {
  local line=$1 expected=$2 want=${3:-} rc=0
  echo "+ $line"
  (cd "$work" && PATH=$work/bin:$PATH bash -c "$line") >"$work/out.txt" 2>&1 || rc=$?
  tail -n 4 "$work/out.txt" | cut -c1-240
  [[ $rc == "$expected" ]] || { cat "$work/out.txt"; fail "exit $rc, expected $expected, from: $line"; }
  if [[ -n $want ]] && ! grep -qF -- "$want" "$work/out.txt"; then
    fail "no '$want' in the output of: $line"
  fi
}

mkdir -p "$work/bin"
ln -s "$build/bin/ropecheck" "$work/bin/ropecheck"
ln -s "$source/golden" "$work/golden"

# 1. Your outputs in a file: export, the user's code, check.
route=$(block sh 1)
[[ $(grep -c '^ropecheck ' <<<"$route") == 2 && $route == *my_rope.py* ]] || fail "README sh block 1: expected export, my_rope.py, check: $route"
careful=${route//my_rope.py/$source/gate/examples/numpy_candidate.py --float32}
careful=${careful//python3 /$python }
while IFS= read -r line; do run_line "$line" 0; done <<<"$careful"
[[ -s $work/rope.html ]] || fail "check --html wrote no report"
buggy=${route//my_rope.py/$source/gate/examples/numpy_candidate.py --bug base}
buggy=${buggy//python3 /$python }
mapfile -t lines <<<"$buggy"
run_line "${lines[0]} --force" 0 "SUITE/ID/output"
run_line "${lines[1]}" 0
run_line "${lines[2]}" 1 "explanation: "
grep -q "your outputs are RoPE with base=500000 (expected 10000)" "$work/out.txt" || fail "the planted base is not named"

# 2. Your config at your context length.
route=$(block sh 2)
[[ $route == *--hf-config\ config.json* && $route == *q.npy* && $route == *q_rotated.npy* ]] || fail "README sh block 2: $route"
cp "$source/hfconfig/examples/llama-2-7b.json" "$work/config.json"
positions=$(sed -n 's/.*--positions \([0-9]*\):\([0-9]*\).*/\1 \2/p' <<<"$route")
[[ -n $positions ]] || fail "README sh block 2: expected --positions START:STOP"
"$python" - "$source" "$work" $positions <<'EOF'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/gate/examples")
from numpy_candidate import rope_float32
work, start, stop = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
spec = {"layout": "half", "head_dim": "128", "base": "10000", "dtype": "f16"}  # llama-2-7b.json
positions = np.arange(start, stop, dtype=np.int64)
x = np.random.default_rng(1).uniform(-1, 1, (len(positions), 1, 128)).astype(np.float16)
np.save(work + "/q.npy", x)
np.save(work + "/q_rotated.npy", rope_float32(spec, x, positions))
np.save(work + "/q_rotated_offset.npy", rope_float32(spec, x, positions, bug="offset"))
EOF
run_line "$route" 0 "verdict: pass"
run_line "${route//q_rotated.npy/q_rotated_offset.npy}" 1 "explanation: "
grep -q "positions offset by +1" "$work/out.txt" || fail "the planted offset is not named"

# 3. Your library through the C ABI: examples/plugin built by its README's one-line command.
route=$(block sh 3)
[[ $route == *./libmykernel.so* ]] || fail "README sh block 3: $route"
cc_line=$(awk '$0 == "```sh" { n++; inside = (n == 1); next } /^```/ { inside = 0; next } inside' "$source/examples/plugin/README.md")
[[ $cc_line == cc\ * ]] || fail "examples/plugin/README.md: expected the one-line cc command first, got: $cc_line"
ln -s "$source/include" "$work/include"
mkdir -p "$work/examples" && ln -s "$source/examples/plugin" "$work/examples/plugin"
run_line "$cc_line" 0
while IFS= read -r line; do run_line "$line" 0; done <<<"$route"

# 4. Your Python kernel: the README's call on an HF-style PyTorch RoPE, then on one with its base wrong.
call=$(block python 1)
[[ $call == *assert_rope_close\(my_rope* ]] || fail "README python block 1: $call"
cat >"$work/my_rope.py" <<'EOF'
import torch


def hf_style(base):
    def my_rope(x, positions):  # x [tokens, heads, head_dim], positions [tokens]
        d = x.shape[-1]
        inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
        freqs = positions.float()[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
        xf = x.float()
        rotated = torch.cat((-xf[..., d // 2:], xf[..., : d // 2]), dim=-1)
        return (xf * cos + rotated * sin).to(x.dtype)
    return my_rope
EOF
for case in "500000 0" "10000 1"; do
  set -- $case
  printf 'from my_rope import hf_style\nmy_rope = hf_style(%s)\n%s\n' "$1" "$call" >"$work/route4.py"
  run_line "PYTHONPATH=$build/python:. $python route4.py" "$2" "$([[ $2 == 1 ]] && echo "explanation: " || true)"
done
grep -q "base=10000 (expected 500000)" "$work/out.txt" || fail "the Python route does not name the planted base"
echo "README routes: every command ran as written"
