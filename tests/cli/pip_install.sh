#!/bin/sh
# `pip install ./python` (docs/PYTHON.md): the package builds from a copy of
# python/ with the system's setuptools (no download), installs into a
# scratch directory, and the installed module, pointed at the build's
# library, clusters two far clumps of ten points each into two clusters.
# Exit 0 pass, 77 skip (no pip or setuptools: Debian's python3-pip), 1 fail.
# usage: tests/cli/pip_install.sh PATH/TO/tcjoin
set -u
build=$(cd "$(dirname "$1")" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/cli/find_python.inc"
find_python pip_install setuptools numpy
if ! "$py" -m pip --version >/dev/null 2>&1; then
    echo "skip - pip_install: $py has no pip (python3-pip)"
    exit 77
fi
if nm -D "$build/libtcjoin.so" 2>/dev/null | grep -q __asan_init; then
    echo "skip - pip_install: a sanitized libtcjoin does not load into a python without ASan"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$here/python" "$tmp/src"
if ! "$py" -m pip install -q --no-deps --no-build-isolation --no-index --target "$tmp/site" \
    "$tmp/src" >"$tmp/pip.log" 2>&1; then
    cat "$tmp/pip.log"
    exit 1
fi
[ -f "$tmp/site/tcjoin/__init__.py" ] || { echo "no tcjoin in $tmp/site"; exit 1; }
cd "$tmp" && TCJOIN_LIBRARY=$build/libtcjoin.so PYTHONPATH=$tmp/site "$py" -c '
import numpy as np, tcjoin
assert tcjoin.__file__.startswith("'"$tmp"'/site/"), tcjoin.__file__
X = np.concatenate([np.zeros((10, 2)), np.full((10, 2), 100.0)]) + np.arange(20)[:, None] % 10 * 0.01
lab = tcjoin.DBSCAN(eps=0.5, min_samples=3, engine="cpu").fit_predict(X)
assert list(lab) == [0] * 10 + [1] * 10, lab
print("installed", tcjoin.version())
'
