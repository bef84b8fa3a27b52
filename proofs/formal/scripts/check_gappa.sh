#!/usr/bin/env bash
# Runs Gappa on one script; Gappa exits non-zero when any stated bound is not proven.
# Usage: check_gappa.sh GAPPA FILE.g
set -euo pipefail
gappa="$1"; file="$2"
"$gappa" "$file"
echo "check_gappa: $(basename "$file"): every bound proven"
