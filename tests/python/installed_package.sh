#!/usr/bin/env bash
# The Python tests against the installed package (python/README.md "Install"): a fresh virtual
# environment of Debian's python3 (with its site-packages: numpy, torch, pytest), `pip install` of
# the repository (pyproject.toml: scikit-build-core and pybind11 from PyPI into pip's build
# environment), then tests/python under that environment's interpreter, without PYTHONPATH: the
# module, its extension and its golden suites come from the environment's site-packages.
#
# Usage: installed_package.sh SOURCE_DIR WORK_DIR ROPECHECK_BIN [COMPILER_LAUNCHER]
# Everything is written under WORK_DIR: the environment (new each run), pip's cache and temporary
# files, and pip's CMake build folder, kept between runs so that a second run builds incrementally
# (COMPILER_LAUNCHER, e.g. ccache, as the build folder's own compiles use it).
set -euo pipefail
source_dir=$1
work_dir=$2
ropecheck_bin=$3
launcher=${4:-}

rm -rf "$work_dir/venv" "$work_dir/tmp"
mkdir -p "$work_dir/tmp"
export TMPDIR=$work_dir/tmp PIP_CACHE_DIR=$work_dir/pip-cache PIP_DISABLE_PIP_VERSION_CHECK=1
/usr/bin/python3 -m venv --system-site-packages "$work_dir/venv"
python=$work_dir/venv/bin/python

settings=(--config-settings "build-dir=$work_dir/pip-build")
if [ -n "$launcher" ]; then
  settings+=(--config-settings "cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=$launcher"
             --config-settings "cmake.define.CMAKE_C_COMPILER_LAUNCHER=$launcher")
fi
start=$SECONDS
CMAKE_BUILD_PARALLEL_LEVEL=2 "$python" -m pip install --quiet "${settings[@]}" "$source_dir"
echo "pip install: $((SECONDS - start)) s"

cd "$work_dir/tmp"
env -u PYTHONPATH -u ROPECHECK_GOLDEN_DIR ROPECHECK_BIN="$ropecheck_bin" ROPECHECK_EXPECT_INSTALLED=1 \
  PYTHONDONTWRITEBYTECODE=1 "$python" -B -m pytest -q -p no:cacheprovider "$source_dir/tests/python"
