#!/bin/bash
# Submits a sharded ropecheck sweep: the array of sweep.sbatch, then merge.sbatch once every task
# of the array has ended successfully (examples/slurm/README.md). Extra arguments go to both sbatch
# calls (e.g. --partition=cpu). Prints the two job ids.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable "$@" "$here/sweep.sbatch")
array=${array%%;*}  # --parsable prints "id" or "id;cluster"
merge=$(sbatch --parsable "$@" --dependency="afterok:$array" --kill-on-invalid-dep=yes "$here/merge.sbatch")
echo "sweep array: ${array}  merge: ${merge%%;*}"
