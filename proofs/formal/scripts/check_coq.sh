#!/usr/bin/env bash
# Compiles the Coq proofs in dependency order, in a scratch copy under WORK_DIR (the source tree
# stays clean). Fails on any error and on any Admitted/admit/Axiom in a source file.
# Usage: check_coq.sh COQC SOURCE_DIR WORK_DIR
set -euo pipefail
coqc="$1"; src="$2"; work="$3"
order=(Rotation Layouts Attention CosSinTaylor FastTrig F64CosSin ErrorBound RoundingTest32 RoundingBits AngleAddition Consecutive GateTolerance Fused FusedNorm FusedBackward)

# Forbidden: unfinished proofs and new axioms (words, outside nothing — comments must not use them).
if grep -nwE 'Admitted|admit|Axiom|Axioms|Parameter|Parameters|Conjecture|Hypothesis|Hypotheses' "$src"/*.v; then
  echo "check_coq: forbidden keyword (Admitted/admit/Axiom/Parameter/Conjecture/Hypothesis) above" >&2
  exit 1
fi
# Every .v file must be compiled here: a new file must be added to 'order'.
for f in "$src"/*.v; do
  name=$(basename "$f" .v)
  [[ " ${order[*]} " == *" $name "* ]] || { echo "check_coq: $f is not in the compile order" >&2; exit 1; }
done

rm -rf "$work"; mkdir -p "$work"
cp "$src"/*.v "$work"/
cd "$work"
for name in "${order[@]}"; do
  start=$(date +%s%N)
  "$coqc" -Q . RopeCheck "$name.v"
  echo "check_coq: $name.v ok ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
done
