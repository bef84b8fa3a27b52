#!/usr/bin/env bash
# scripts/cuda-check against this build. Where a GPU runs the CUDA kernel, every step must pass
# (exit 0); elsewhere the script must say so in one line and exit 2 without running a step.
# Skipped (exit 77) in a build without the benchmarks: kernel_bench is one of its steps.
# Usage: cuda_check_test.sh SOURCE_DIR BUILD_DIR
set -u
root=$1
build=$2
if [[ ! -x "$build/bin/kernel_bench" ]]; then
  echo "skipped: no kernel_bench in $build (configured with ROPECHECK_BENCH=OFF)"
  exit 77
fi
logs=$(mktemp -d) || exit 1
trap 'rm -rf "$logs"' EXIT
ROPECHECK_BUILD_DIR=$build "$root/scripts/cuda-check" "$logs/steps" > "$logs/out" 2> "$logs/err"
rc=$?
if [[ $rc -eq 0 ]]; then
  echo "a GPU runs the CUDA kernel here: every step passed"
  tail -n 15 "$logs/out"
  exit 0
fi
if [[ $rc -eq 2 && $(wc -l < "$logs/err") -eq 1 ]] && grep -q "no usable CUDA kernel or device here" "$logs/err" &&
   [[ ! -e "$logs/steps/cuda_test.log" ]]; then
  echo "no GPU here: $(cat "$logs/err")"
  exit 0
fi
echo "scripts/cuda-check exited $rc"
cat "$logs/out" "$logs/err"
exit 1
