#!/bin/sh
# The Python module's tests (tests/python/test_*.py) with pytest, on the
# library of BUILD; each test's outcome as a line the runner counts ("ok -",
# "not ok -", "skip -"). Without a python3 that has pytest, NumPy, SciPy
# and scikit-learn (scripts/deps.sh installs Debian's), one skip line.
# usage: tests/python/run.sh BUILD
set -u
build=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
py=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$p" -c "import pytest, numpy, scipy, sklearn" >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "skip - python: no python3 with pytest, numpy, scipy and sklearn (scripts/deps.sh installs them)"
    exit 0
fi
lib=$(cd "$build" && pwd)/libtcjoin.so
if [ ! -e "$lib" ]; then
    echo "not ok - python: no $lib (make tests builds it)"
    exit 0
fi
out=$(mktemp)
TCJOIN_LIBRARY=$lib "$py" -m pytest -v -p no:cacheprovider -o console_output_style=classic \
    "$here/tests/python" >"$out" 2>&1
rc=$?
sed -n 's/^\(tests\/python\/\)\{0,1\}\([^ ]*::[^ ]*\) \(PASSED\|FAILED\|SKIPPED\|ERROR\|XFAIL\|XPASS\).*/\3 \2/p' "$out" |
    while read -r what name; do
        case $what in
        PASSED | XFAIL) echo "ok - python $name" ;;
        SKIPPED) echo "skip - python $name" ;;
        *) echo "not ok - python $name" ;;
        esac
    done
# a collection error or a crash has no test lines: say so
if [ $rc -ne 0 ] && ! grep -q ' FAILED\| ERROR' "$out"; then
    echo "not ok - python: pytest exit $rc"
fi
[ $rc -ne 0 ] && tail -n 60 "$out" >&2
rm -f "$out"
exit 0
