#!/bin/sh
# The disk fills while pairs are written: the run fails with one line naming
# the file and the cause, batch mode exits 1, the log records the run as
# failed with that error, and no partial pair file (nor its temporary file)
# is left. Three ways to fill it: /dev/full as the pair output, a file size
# limit (RLIMIT_FSIZE, SIGXFSZ ignored), and a 256 KB tmpfs when this user
# may mount one.
. "$(dirname "$0")/lib.sh"
db=$dir/s.db
# About 500,000 pairs: 8 MB of bin64.
setup='gen uniform n=4000 d=2 seed=5; eps 0.1'

# check_failed STATUS FILE LABEL CAUSE: the pair run into FILE failed as described.
check_failed() {
    status=$1 file=$2 label=$3 cause=$4
    [ "$status" -eq 1 ] || fail "$label: exit $status, expected 1: $(cat "$dir/err")"
    grep -q "error: $file: write failed: $cause" "$dir/err" ||
        fail "$label: no line naming $file and '$cause': $(cat "$dir/err")"
    "$fdb" failed "$db" >"$dir/failed"
    grep -q "$file: write failed: $cause" "$dir/failed" ||
        fail "$label: the log has no failed run for it: $(cat "$dir/failed")"
    echo "$label: $(grep error "$dir/err" | head -n 1)"
}

"$bin" --db "$db" -e "$setup; run cpu mode=pairs out=/dev/full format=bin64" >"$dir/out" 2>"$dir/err"
check_failed $? /dev/full /dev/full "No space left on device"

mkdir "$dir/lim"
(trap '' XFSZ; ulimit -f 2048; exec "$bin" --db "$db" -e "$setup; run cpu mode=pairs out=$dir/lim/p.bin format=bin64") \
    >"$dir/out" 2>"$dir/err"
check_failed $? "$dir/lim/p.bin" "file size limit" "File too large"
[ -z "$(ls -A "$dir/lim")" ] || fail "file size limit: left behind: $(ls -A "$dir/lim")"

mkdir "$dir/small"
if mount -t tmpfs -o size=256k tcjoin-test "$dir/small" 2>/dev/null; then
    trap 'umount "$dir/small" 2>/dev/null; rm -rf "$dir"' EXIT
    "$bin" --db "$db" -e "$setup; run cpu mode=pairs out=$dir/small/p.csv format=csv" \
        >"$dir/out" 2>"$dir/err"
    check_failed $? "$dir/small/p.csv" "256 KB tmpfs" "No space left on device"
    [ -z "$(ls -A "$dir/small")" ] || fail "tmpfs: left behind: $(ls -A "$dir/small")"
    umount "$dir/small"
else
    echo "(no tmpfs: mounting needs privilege here)"
fi
[ "$("$fdb" check "$db")" = ok ] || fail "integrity_check"
