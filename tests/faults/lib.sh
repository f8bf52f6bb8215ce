# Shared by the fault scripts: paths, a scratch directory, fail/skip.
# Each script is run as: sh tests/faults/NAME.sh BUILD (BUILD/tcjoin and
# BUILD/tests/f_db); exit 0 pass, 77 skip (reason on the last line), else
# fail with what went wrong.
set -u
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
bin=$build/tcjoin
fdb=$build/tests/f_db
[ -x "$bin" ] || { echo "no binary at $bin"; exit 1; }
[ -x "$fdb" ] || { echo "no helper at $fdb (make tests)"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset TCJOIN_DB TCJOIN_DB_WAIT

fail() {
    echo "FAIL: $*"
    exit 1
}

# now_ms: milliseconds of a monotonic-enough clock (date +%s%N).
now_ms() {
    echo $(($(date +%s%N) / 1000000))
}

# file_sum FILE: a checksum to tell whether a file changed.
file_sum() {
    cksum <"$1"
}
