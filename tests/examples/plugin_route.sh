#!/usr/bin/env bash
# examples/plugin/README.md run as a user runs it: its commands, read from its ```sh blocks, in a
# temporary copy of the repository's layout (include/, examples/plugin/, build/ linked to the build
# tree) with HOME in the temporary folder, so that `cmake --install build --prefix "$HOME/.local"`
# installs there and `ropecheck` is the installed command.
#   1. the CMake route: install, find_package(ropecheck) build of examples/plugin alone, the two
#      gate commands on its libmykernel.so;
#   2. the one-line cc build, and the two gate commands on that libmykernel.so.
# Each command exits 0, and nothing of RapidCheck's own output shows (proofs/runner.h).
# Arguments: the build tree, the source tree.
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
readme=$source/examples/plugin/README.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The lines of the README's ```sh block number $1 (1-based).
sh_block() {
  awk -v want="$1" '/^```sh$/ { n++; inside = (n == want); next } /^```/ { inside = 0; next } inside' "$readme"
}
build_one_line=$(sh_block 1)
build_cmake=$(sh_block 2)
gate=$(sh_block 3)
[[ $build_one_line == cc\ * ]] || fail "README block 1: expected the one-line cc build, got: $build_one_line"
[[ $build_cmake == *find_package* || $build_cmake == *CMAKE_PREFIX_PATH* ]] || fail "README block 2: expected the cmake route, got: $build_cmake"
[[ $(grep -c '^ropecheck ' <<<"$gate") == 2 ]] || fail "README block 3: expected the two gate commands, got: $gate"

# A directory laid out as the repository root, for the README's relative paths.
layout() {
  mkdir -p "$1/examples"
  ln -s "$source/include" "$1/include"
  ln -s "$source/examples/plugin" "$1/examples/plugin"
  ln -s "$build" "$1/build"
}

# Runs the README lines $2 in root $1; stdout and stderr to $1/out.txt; fails on a nonzero exit
# or on RapidCheck's own lines.
run_lines() {
  local root=$1 lines=$2 line rc
  while IFS= read -r line; do
    [[ -z $line ]] && continue
    echo "+ $line"
    rc=0
    (cd "$root" && HOME=$work/home PATH=$work/home/.local/bin:$PATH bash -c "$line") >"$root/out.txt" 2>&1 || rc=$?
    if ((rc != 0)); then
      cat "$root/out.txt"
      fail "exit $rc from: $line"
    fi
    tail -n 3 "$root/out.txt"
    if grep -q -e 'Using configuration' -e 'RC_PARAMS' "$root/out.txt"; then
      fail "RapidCheck's own output from: $line"
    fi
  done <<<"$lines"
}

# The sweep judged the spec and it passed (an unsupported dtype prints "skipped" and exits 1).
check_sweep() {
  grep -q '^result: pass$' "$1/out.txt" || fail "the sweep's result is not pass: $(grep '^result' "$1/out.txt")"
}

# The JUnit report `run ... --junit rope.xml` wrote: identities and suites, none failing.
check_junit() {
  local xml=$1/rope.xml
  [[ -f $xml ]] || fail "no $xml"
  grep -q 'classname="ropecheck.identities"' "$xml" || fail "$xml: no identity testcases"
  grep -q '<testsuites name="ropecheck"[^>]* failures="0"' "$xml" || fail "$xml: failures: $(grep -m1 '<testsuites' "$xml")"
  ! grep -q '<failure' "$xml" || fail "$xml: a <failure> element"
}

mkdir -p "$work/home"
root=$work/cmake-route
layout "$root"
run_lines "$root" "$build_cmake"
[[ -f $work/home/.local/bin/ropecheck ]] || fail "the install put no bin/ropecheck under \$HOME/.local"
[[ -f $root/libmykernel.so ]] || fail "the cmake route left no libmykernel.so"
run_lines "$root" "$gate"
check_sweep "$root"
check_junit "$root"

root=$work/one-line
layout "$root"
run_lines "$root" "$build_one_line"
[[ -f $root/libmykernel.so ]] || fail "the one-line build left no libmykernel.so"
run_lines "$root" "$gate"
check_sweep "$root"
check_junit "$root"
echo "plugin route: ok"
