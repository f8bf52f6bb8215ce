#!/bin/sh
# Install the build dependencies with apt-get when they are missing, and
# only those. As root it installs them; otherwise it prints the exact
# command and fails.
# DEPS_DRY_RUN=1: only print what would be installed ("tcjoin: would
# install: PKG ..." or "tcjoin: nothing to install") and exit 0.
set -u
need=""
have_hdr() { [ -f "$1" ]; }
have_hdr /usr/include/ncursesw/panel.h || have_hdr /usr/include/panel.h || need="$need libncurses-dev"
have_hdr /usr/include/readline/readline.h || need="$need libreadline-dev"
have_hdr /usr/include/sqlite3.h || need="$need libsqlite3-dev"
have_hdr /usr/include/hdf5/serial/hdf5.h || have_hdr /usr/include/hdf5.h || need="$need libhdf5-dev"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v tmux >/dev/null 2>&1 || need="$need tmux"
command -v make >/dev/null 2>&1 || need="$need make"
command -v cc >/dev/null 2>&1 || need="$need gcc"
# clang with libFuzzer, for tests/fuzz (make fuzz; make test runs them briefly)
command -v clang >/dev/null 2>&1 || need="$need clang"
# scikit-learn, the second oracle of dbscan, probed the way
# tests/cli/dbscan_sklearn.sh picks its interpreter: the first of $PYTHON,
# python3 on PATH and /usr/bin/python3 with scikit-learn and NumPy (PATH
# may lead to a python without them while Debian's python3-sklearn is there)
have_sklearn() {
    for p in ${PYTHON:-} python3 /usr/bin/python3; do
        "$p" -c 'import sklearn, numpy' >/dev/null 2>&1 && return 0
    done
    return 1
}
have_sklearn || need="$need python3-sklearn"
# pytest and SciPy for the Python module's tests (tests/python), probed the
# same way (python3-sklearn brings SciPy on Debian; named for other
# systems' sake)
have_py() {
    for p in ${PYTHON:-} python3 /usr/bin/python3; do
        "$p" -c "import $1" >/dev/null 2>&1 && return 0
    done
    return 1
}
have_py pytest || need="$need python3-pytest"
have_py scipy || need="$need python3-scipy"
# MPI for build/tcjoin-mpi (Open MPI; MPICH's mpicc serves as well) and
# tests/mpi (mpirun)
command -v mpicc >/dev/null 2>&1 || need="$need libopenmpi-dev"
command -v mpirun >/dev/null 2>&1 || need="$need openmpi-bin"
if [ "${DEPS_DRY_RUN:-}" = 1 ]; then
    if [ -n "$need" ]; then echo "tcjoin: would install:$need"; else echo "tcjoin: nothing to install"; fi
    exit 0
fi
[ -z "$need" ] && exit 0
cmd="apt-get install -y --no-install-recommends$need"
if [ "$(id -u)" -ne 0 ]; then
    echo "tcjoin: missing build dependencies:$need"
    echo "tcjoin: run as root: apt-get update && $cmd"
    exit 1
fi
echo "tcjoin: installing$need"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && $cmd >/dev/null || {
    echo "tcjoin: '$cmd' failed"
    exit 1
}
