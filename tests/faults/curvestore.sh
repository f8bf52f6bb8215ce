#!/bin/sh
# `curve` stores all of its points or none, and says so when the log
# refuses them: a lock held past the wait, a full disk (a tmpfs with 128 KB left
# when this user may mount one). Before: no line, exit 0, and on the full
# disk 16 of 4,097 points stored.
. "$(dirname "$0")/lib.sh"
db=$dir/s.db
cmds='gen uniform n=300 d=2 seed=1; curve 0 0.5 bins=4096'
"$bin" --db "$db" -e 'gen uniform n=10 d=2' >/dev/null 2>&1 || fail "creating the log"

# check_none STATUS LABEL: curve failed with its line and left no row.
check_none() {
    [ "$1" -eq 1 ] || fail "$2: exit $1, expected 1: $(cat "$dir/err")"
    grep -q "no point of the curve is stored" "$dir/err" ||
        fail "$2: no line saying the curve was not stored: $(cat "$dir/err")"
    [ "$("$fdb" count "$db" sweeps)" = 0 ] || fail "$2: $("$fdb" count "$db" sweeps) sweeps stored"
    [ "$("$fdb" count "$db" sweep_steps)" = 0 ] ||
        fail "$2: $("$fdb" count "$db" sweep_steps) of 4097 points stored"
    echo "$2: exit 1, $(grep curve "$dir/err" | head -n 1)"
}

# The lock is taken once curve has begun (its command row committed) and
# held past its pass (about 3 s of 300,000 points) and the 0.3 s wait.
c0=$("$fdb" count "$db" commands)
TCJOIN_DB_WAIT=0.3 "$bin" --db "$db" -e "gen uniform n=300000 d=2 seed=1; curve 0 0.01 bins=4096" \
    >"$dir/out" 2>"$dir/err" &
pid=$!
until [ "$("$fdb" count "$db" commands)" -ge $((c0 + 2)) ]; do sleep 0.02; done
"$fdb" hold "$db" 8000 >"$dir/hold" &
hold=$!
wait $pid
status=$?
kill $hold 2>/dev/null
wait $hold 2>/dev/null
check_none $status "a lock held past the wait"

# The whole curve lands once the log is free.
"$bin" --db "$db" -e "$cmds" >"$dir/out" 2>"$dir/err" || fail "curve on a free log: $(cat "$dir/err")"
[ "$("$fdb" count "$db" sweep_steps)" = 4097 ] ||
    fail "free log: $("$fdb" count "$db" sweep_steps) of 4097 points"

mkdir "$dir/small"
if mount -t tmpfs -o size=1m tcjoin-test "$dir/small" 2>/dev/null; then
    trap 'umount "$dir/small" 2>/dev/null; rm -rf "$dir"' EXIT
    db=$dir/small/s.db
    "$bin" --db "$db" -e 'gen uniform n=10 d=2' >/dev/null 2>&1 || fail "creating the log on tmpfs"
    # fill the disk, then free 128 KB: room for the command rows, not for
    # 4,097 points
    dd if=/dev/zero of="$dir/small/fill" bs=4k 2>/dev/null
    truncate -s -131072 "$dir/small/fill"
    "$bin" --db "$db" -e "$cmds" >"$dir/out" 2>"$dir/err"
    check_none $? "a full disk"
    [ "$("$fdb" check "$db")" = ok ] || fail "integrity_check after the full disk"
    umount "$dir/small"
else
    echo "(no tmpfs: mounting needs privilege here)"
fi
[ "$("$fdb" check "$dir/s.db")" = ok ] || fail "integrity_check"
