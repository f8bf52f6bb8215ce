#!/bin/sh
# The clustering commands under an address-space limit (ulimit -v) that
# holds the dataset but not their per-point arrays: each fails in one line
# ("needs ... of memory for ...") with exit 1, never an abort (exit 134),
# and the session's dataset stays usable. Skipped under AddressSanitizer,
# whose shadow memory cannot live under such a limit.
# usage: tests/cli/memlimit_cluster.sh PATH/TO/tcjoin   (exit 0 pass, 77 skip, 1 fail)
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if nm "$bin" 2>/dev/null | grep -q __asan_init || ldd "$bin" 2>/dev/null | grep -q libasan; then
    echo "AddressSanitizer build: an address-space limit cannot apply"
    exit 77
fi
export MALLOC_ARENA_MAX=2 # each thread's malloc arena would take 64 MB of the limit
n=2000000 # 2e6 x 8 f32: 64 MB of data; the per-point arrays need more
setup="set threads 2; gen uniform n=$n d=8 seed=1; eps 0.01"
"$bin" --db "$tmp/s.db" -e 'gen uniform n=10 d=2' >/dev/null 2>&1 || { echo "creating the log"; exit 1; }

runs() { # runs KIB COMMAND: the setup then COMMAND under ulimit -v KIB; output in $tmp/out
    # the outer shell's "Aborted", where a tight limit stops the setup, to /dev/null
    ( (ulimit -v "$1" && exec "$bin" --db "$tmp/s.db" -e "$setup; $2") >"$tmp/out" 2>"$tmp/err") 2>/dev/null
}
# The smallest limit (8 MiB steps) under which the setup and `info`
# succeed, found by halving; the commands below get 32 MiB more.
lo=96 hi=1120
runs $((hi * 1024)) "info" || { echo "setup fails under $hi MiB: $(cat "$tmp/err")"; exit 1; }
while [ $((hi - lo)) -gt 8 ]; do
    mid=$(((lo + hi) / 2))
    if runs $((mid * 1024)) "info"; then hi=$mid; else lo=$mid; fi
done
limit=$(((hi + 32) * 1024))
echo "setup fits in $hi MiB; the commands get $((limit / 1024)) MiB"
fails=0
for cmd in "dbscan" "dbscan curve max=0.01" "kdist 4" "run cpu mode=perpoint"; do
    runs "$limit" "$cmd"
    rc=$?
    lines=$(grep -c . "$tmp/err")
    if [ $rc -ne 1 ] || [ "$lines" -ne 1 ] || ! grep -q "needs .* of memory for" "$tmp/err"; then
        echo "FAIL $cmd: exit $rc, $lines lines on stderr: $(head -c 400 "$tmp/err")"
        fails=$((fails + 1))
    else
        echo "ok $cmd: $(cat "$tmp/err")"
    fi
done
[ $fails -eq 0 ] || exit 1
echo "memlimit_cluster: ok"
