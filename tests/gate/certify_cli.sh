#!/bin/bash
# `ropecheck certify` as its users run it (gate/README.md "Certifying every position"): the project's
# kernels certified bit for bit (--require-bits) over a range for two example configs, one of them
# up to 2^31 − 1; the same run in 4 shards merged by `report merge` into the unsharded certificate
# byte for byte; a missing and a repeated shard refused (exit 2); `--verify` consistent on the
# certificate and inconsistent on a tampered one; a wrong implementation failing with its first
# failing position. Usage: certify_cli.sh ROPECHECK. Exit 0 pass, 1 fail.
set -uo pipefail
ropecheck=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/ropecheck-certify-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

llama="layout=half,head_dim=128,base=500000,scaling=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,original_max_position=8192,dtype=f32"
gptj="layout=interleaved,head_dim=64,rotary_dim=48,base=10000,dtype=f32"

# ---- the project's kernels, bit for bit -----------------------------------------------------------
"$ropecheck" certify --impl auto --spec "$llama" --positions 2147475456:2147483648 --model exact --require-bits \
  --json "$work/llama.json" > "$work/llama.out" || fail "llama config: $(cat "$work/llama.out")"
grep -q "^outputs: .* 0 not the correctly rounded bits (required bit for bit)$" "$work/llama.out" || fail "llama: $(cat "$work/llama.out")"
"$ropecheck" certify --impl auto --spec "$gptj" --positions 0:8192 --model exact --require-bits --chunk 1024 \
  --json "$work/gptj.json" > "$work/gptj.out" || fail "gptj config: $(cat "$work/gptj.out")"
/usr/bin/python3 - "$work/gptj.json" <<'PY' || fail "gptj certificate: unexpected content"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["kind"] == "ropecheck certificate" and c["verdict"] == "pass", c["verdict"]
assert c["range"] == {"first": 0, "end": 8192} and c["positions"] == 8192 and c["mismatches"] == 0
assert len(c["pairs"]) == 24 and all(p["checked"] >= 2 * 8192 for p in c["pairs"])
assert c["tool"]["version"] and c["implementation"]["name"]
PY

# ---- 4 shards merged: the unsharded certificate, byte for byte -------------------------------------
for k in 0 1 2 3; do
  "$ropecheck" certify --impl auto --spec "$gptj" --positions 0:8192 --model exact --require-bits --chunk 1024 \
    --shard "$k/4" --json "$work/shard-$k.json" > /dev/null || fail "shard $k/4 did not pass"
done
"$ropecheck" report merge "$work"/shard-{0,1,2,3}.json --out "$work/merged.json" > "$work/merge.out" || fail "merge: $(cat "$work/merge.out")"
cmp "$work/merged.json" "$work/gptj.json" || fail "the merged certificate differs from the unsharded one"
"$ropecheck" report merge "$work"/shard-{0,1,3}.json --out "$work/bad.json" 2> "$work/missing.err"
[ $? -eq 2 ] && grep -q "missing shard 2" "$work/missing.err" || fail "a missing shard was not refused: $(cat "$work/missing.err")"
"$ropecheck" report merge "$work"/shard-{0,1,1,2,3}.json --out "$work/bad.json" 2> "$work/twice.err"
[ $? -eq 2 ] && grep -q "shard 1 given twice" "$work/twice.err" || fail "a repeated shard was not refused: $(cat "$work/twice.err")"
[ ! -e "$work/bad.json" ] || fail "a refused merge wrote its --out"

# ---- --verify ------------------------------------------------------------------------------------
"$ropecheck" certify --impl auto --verify "$work/gptj.json" --samples 64 > "$work/verify.out" || fail "verify: $(cat "$work/verify.out")"
grep -q "^verify: consistent$" "$work/verify.out" || fail "verify: $(cat "$work/verify.out")"
/usr/bin/python3 - "$work/gptj.json" "$work/tampered.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["pairs"][5]["worst_e"] = c["pairs"][5]["worst_e"] / 2
json.dump(c, open(sys.argv[2], "w"))
PY
"$ropecheck" certify --impl auto --verify "$work/tampered.json" --samples 16 > "$work/tampered.out"
[ $? -eq 1 ] && grep -q "inconsistent: pair 5: worst e" "$work/tampered.out" || fail "a tampered certificate verified: $(cat "$work/tampered.out")"
"$ropecheck" certify --impl scalar --verify "$work/gptj.json" --samples 4 > "$work/other.out"
[ $? -eq 1 ] && grep -q "inconsistent: implementation: --impl scalar" "$work/other.out" || fail "another implementation verified: $(cat "$work/other.out")"

# ---- a wrong implementation: the float32 recipe held to the exact rotation ------------------------
"$ropecheck" certify --impl reference-f32-recipe --spec "$gptj" --positions 100000:101024 --model exact --tolerance e=1 \
  > "$work/recipe.out"
[ $? -eq 1 ] || fail "the float32 recipe passed: $(cat "$work/recipe.out")"
grep -q "^  pair [0-9]*: [0-9]* failures, first at position 10[01][0-9][0-9][0-9] (unit (1, 0)): e = " "$work/recipe.out" || fail "no first failure: $(cat "$work/recipe.out")"
grep -q "^result: fail$" "$work/recipe.out" || fail "no 'result: fail'"

# ---- bad input -----------------------------------------------------------------------------------
"$ropecheck" certify --impl auto --spec "$gptj" --positions 5:5 2> "$work/range.err"
[ $? -eq 2 ] && grep -q "^ropecheck: --positions: expected A:B" "$work/range.err" || fail "an empty range was not refused: $(cat "$work/range.err")"
"$ropecheck" certify --impl auto --spec "$gptj" --positions 0:64 --model f32-recipe 2> "$work/model.err"
[ $? -eq 2 ] || fail "--model f32-recipe was not refused: $(cat "$work/model.err")"
echo "PASS"
