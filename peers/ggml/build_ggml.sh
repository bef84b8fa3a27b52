#!/usr/bin/env bash
# Builds llama.cpp's ggml CPU backend from source for the ggml peer (peers/ggml/README.md), in two
# variants, and prints one line per variant, `NAME DIR`: DIR is the folder to give the plugin as
# ROPECHECK_GGML_DIR (it holds libggml-base.so and one CPU variant library libggml-cpu-<isa>.so, the
# layout of llama.cpp's own releases, so `--impl ggml-best` runs that variant).
#
#   peers/ggml/build_ggml.sh BUILD_DIR
#
#   ggml-fma    BUILD_DIR/peers/ggml/fma     libggml-cpu-haswell.so (SSE4.2 AVX F16C FMA AVX2 BMI2)
#   ggml-nofma  BUILD_DIR/peers/ggml/nofma   libggml-cpu-x64.so     (x86-64 baseline, SSE2: no FMA)
#
# Source: the ggml CMake project vendored in the PyPI sdist of llama-cpp-python (pinned below, with
# its sha256), fetched once with Debian's pip (`pip download`) into BUILD_DIR/peers/pip-cache/; a
# second run needs no network. Built once (BUILD_DIR/peers/ggml-src/VERSION/) with llama.cpp's release
# configuration, GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS (GGML_NATIVE off), of which only ggml-base
# and the two variant targets are compiled: Release, shared, CPU only, no tests/examples, -j2
# (ROPECHECK_JOBS overrides). Idempotent: nothing is done when both folders hold a build of the same
# pin and configuration (a stamp file). On x86-64 only.
# Exit 0 with the two lines on stdout; on failure one line on stderr saying why, exit 1.
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION=0.3.36   # vendors llama.cpp's ggml 0.25.3
SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
# NAME:folder:isa. The haswell variant is llama.cpp's first x86 variant with FMA (the rotation
# x·cos − y·sin contracts to an FMA there); x64 is its variant without any extension beyond SSE2.
VARIANTS=(ggml-fma:fma:haswell ggml-nofma:nofma:x64)

fail() { echo "build_ggml.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] || { echo "usage: peers/ggml/build_ggml.sh BUILD_DIR" >&2; exit 2; }
mkdir -p "$1" || fail "cannot create $1"
build_dir=$(cd "$1" && pwd)
jobs=${ROPECHECK_JOBS:-2}
python=${ROPECHECK_PIP_PYTHON:-/usr/bin/python3}
case "$(uname -m)" in
  x86_64 | amd64) ;;
  *) fail "the ggml variants built here are x86-64 ones (this is $(uname -m))" ;;
esac

sdist=llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz
cache=$build_dir/peers/pip-cache
src_root=$build_dir/peers/ggml-src/$LLAMA_CPP_PYTHON_VERSION
out_root=$build_dir/peers/ggml
# shellcheck disable=SC2016  # '$ORIGIN' below is literal on purpose
cmake_args=(
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON
  -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON -DGGML_NATIVE=OFF -DGGML_CPU=ON
  -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_BLAS=OFF -DGGML_HIP=OFF -DGGML_SYCL=OFF
  -DGGML_OPENCL=OFF -DGGML_RPC=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF -DGGML_CCACHE=OFF
  # the libraries find each other next to themselves, wherever the folder is moved (a literal $ORIGIN)
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN'
)
stamp_text="llama-cpp-python $LLAMA_CPP_PYTHON_VERSION sha256 $SDIST_SHA256 cmake ${cmake_args[*]}"

print_lines() {
  local v name folder
  for v in "${VARIANTS[@]}"; do
    IFS=: read -r name folder _ <<<"$v"
    echo "$name $out_root/$folder"
  done
}

# ---- already built? ------------------------------------------------------------------------------
built=1
for v in "${VARIANTS[@]}"; do
  IFS=: read -r _ folder isa <<<"$v"
  d=$out_root/$folder
  if [ ! -e "$d/libggml-base.so" ] || [ ! -e "$d/libggml-cpu-$isa.so" ] ||
    [ "$(cat "$d/.ropecheck-ggml-stamp" 2>/dev/null)" != "$stamp_text" ]; then
    built=0
  fi
done
if [ $built -eq 1 ]; then
  print_lines
  exit 0
fi

# ---- the sdist (cached) --------------------------------------------------------------------------
sha_of() { sha256sum "$1" | cut -d' ' -f1; }
if [ ! -f "$cache/$sdist" ] || [ "$(sha_of "$cache/$sdist")" != "$SDIST_SHA256" ]; then
  rm -f "$cache/$sdist"
  mkdir -p "$cache"
  "$python" -m pip --version >/dev/null 2>&1 || fail "no pip for $python (Debian: apt-get install python3-pip)"
  echo "build_ggml.sh: pip download llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION (sdist) into $cache" >&2
  # --no-binary for this package only: pip prepares the sdist's metadata, whose build backend
  # (scikit-build-core) it installs as a wheel in an isolated environment.
  log=$cache/pip-download.log
  "$python" -m pip download --no-deps --no-binary llama-cpp-python --disable-pip-version-check -d "$cache" \
    "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >"$log" 2>&1 ||
    fail "pip download llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION failed:" \
      "$(grep -E 'ERROR|Error' "$log" | tail -1) (log: $log)"
  [ -f "$cache/$sdist" ] || fail "pip download did not leave $cache/$sdist (log: $log)"
  got=$(sha_of "$cache/$sdist")
  [ "$got" = "$SDIST_SHA256" ] || { rm -f "$cache/$sdist"; fail "$sdist has sha256 $got, pinned $SDIST_SHA256"; }
fi

# ---- extract ggml/ -------------------------------------------------------------------------------
src=$src_root/ggml
if [ ! -f "$src/CMakeLists.txt" ] || [ "$(cat "$src_root/.sdist-sha256" 2>/dev/null)" != "$SDIST_SHA256" ]; then
  rm -rf "$src_root"
  mkdir -p "$src"
  tar -xzf "$cache/$sdist" -C "$src" --strip-components=4 \
    "llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp/ggml" 2>/dev/null ||
    fail "$cache/$sdist holds no vendor/llama.cpp/ggml"
  echo "$SDIST_SHA256" >"$src_root/.sdist-sha256"
fi
# ggml built as a subproject, as llama.cpp builds it (standalone, its CMakeLists wants the
# ggml.pc.in of the ggml repository, which llama.cpp's copy lacks).
cat >"$src_root/CMakeLists.txt" <<'EOF_CMAKE'
cmake_minimum_required(VERSION 3.14)
project(ropecheck_ggml C CXX)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
add_subdirectory(ggml)
EOF_CMAKE

# ---- configure once, build ggml-base and the two variants ----------------------------------------
obj=$src_root/build
log=$src_root/build.log
: >"$log"
echo "build_ggml.sh: building ggml (llama-cpp-python $LLAMA_CPP_PYTHON_VERSION) in $obj, -j$jobs; log: $log" >&2
cmake -S "$src_root" -B "$obj" "${cmake_args[@]}" >>"$log" 2>&1 || fail "cmake configure of ggml failed (log: $log)"
build_target() {
  local t0
  t0=$(date +%s)
  cmake --build "$obj" -j "$jobs" --target "$1" >>"$log" 2>&1 || fail "building $1 failed (log: $log)"
  echo "build_ggml.sh: $1 built in $(($(date +%s) - t0)) s" >&2
}
build_target ggml-base
for v in "${VARIANTS[@]}"; do
  IFS=: read -r _ _ isa <<<"$v"
  build_target "ggml-cpu-$isa"
done

# ---- one folder per variant: libggml-base.so (with its soname links) + the variant ---------------
for v in "${VARIANTS[@]}"; do
  IFS=: read -r name folder isa <<<"$v"
  d=$out_root/$folder
  rm -rf "$d"
  mkdir -p "$d"
  cp -P "$obj"/bin/libggml-base.so* "$d/" || fail "no libggml-base.so in $obj/bin"
  cp "$obj/bin/libggml-cpu-$isa.so" "$d/" || fail "no libggml-cpu-$isa.so in $obj/bin"
  echo "$stamp_text" >"$d/.ropecheck-ggml-stamp"
done
print_lines
