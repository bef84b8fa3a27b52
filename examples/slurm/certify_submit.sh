#!/bin/bash
# Submits a sharded ropecheck certification: the array of certify.sbatch, then certify_merge.sbatch
# once every task of the array has ended successfully (examples/slurm/README.md "Certifying every
# position"). Extra arguments go to both sbatch calls (e.g. --partition=cpu); CERTIFY_ARRAY, when
# set, is the array's --array (e.g. 0-15: 16 shards) in place of certify.sbatch's. Prints the job ids.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable ${CERTIFY_ARRAY:+--array="$CERTIFY_ARRAY"} "$@" "$here/certify.sbatch")
array=${array%%;*}  # --parsable prints "id" or "id;cluster"
merge=$(sbatch --parsable "$@" --dependency="afterok:$array" --kill-on-invalid-dep=yes "$here/certify_merge.sbatch")
echo "certify array: ${array}  merge: ${merge%%;*}"
