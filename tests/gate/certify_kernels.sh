#!/bin/bash
# The project's kernels certified bit for bit at EVERY position below 2^22 (`ropecheck
# certify --require-bits`, gate/README.md "Certifying every position") for two example configs:
# Llama-3.1-8B's (half, head_dim 128, llama3 scaling) and GPT-J's (interleaved, head_dim 64,
# rotary_dim 48), both f32, unit probes at every position and random heads every 64. Each must pass
# with every output the correctly rounded bits, every pair checked at every position.
# Usage: certify_kernels.sh ROPECHECK. Exit 0 pass, 1 fail; prints each config's wall time.
set -uo pipefail
ropecheck=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/ropecheck-certify-kernels-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

end=4194304  # 2^22
certify() {  # NAME PAIRS SPEC
  local name=$1 pairs=$2 spec=$3 start=$SECONDS
  "$ropecheck" certify --impl auto --spec "$spec" --positions "0:$end" --model exact --require-bits --threads 2 \
    --json "$work/$name.json" > "$work/$name.out" || fail "$name: $(cat "$work/$name.out")"
  echo "$name: [0, 2^22) certified bit for bit in $((SECONDS - start)) s (--threads 2)"
  /usr/bin/python3 - "$work/$name.json" "$pairs" "$end" <<'PY' || fail "$name certificate: $(cat "$work/$name.out")"
import json, sys
c, pairs, end = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
assert c["kind"] == "ropecheck certificate" and c["verdict"] == "pass" and c["require_bits"], c["verdict"]
assert c["range"] == {"first": 0, "end": end} and c["positions"] == end, c["range"]
assert c["mismatches"] == 0 and c["failures"] == 0 and c["failed_calls"] == 0, (c["mismatches"], c["failures"])
assert c["random_positions"] == end // 64 and c["outputs"] == 2 * pairs * (2 * end + end // 64), c["outputs"]
assert len(c["pairs"]) == pairs and all(p["checked"] == 2 * end + end // 64 for p in c["pairs"])
PY
}

certify llama-3.1-8b 64 "layout=half,head_dim=128,base=500000,scaling=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,original_max_position=8192,dtype=f32"
certify gpt-j 24 "layout=interleaved,head_dim=64,rotary_dim=48,base=10000,dtype=f32"
echo "PASS"
