#!/bin/sh
# Temporary files of killed writers:
# 1. `dbscan out=` makes its file only when the labels are ready: a kill
#    -9 during the clustering leaves no NAME.tcjoin-partial-* at all;
# 2. a pairs run streams into NAME.tcjoin-partial-PID-XXXXXX while it
#    runs, and a kill -9 leaves it; the next output to that directory
#    removes it (its process is gone, no lock on it) and says so in one
#    line;
# 3. a running writer's file is kept, and so is one whose PID is unknown
#    here but whose lock is held (a writer in another PID namespace or on
#    another host), until the lock goes.
. "$(dirname "$0")/lib.sh"
db=$dir/s.db
o=$dir/o
mkdir "$o"
"$bin" --db "$db" -e "gen uniform n=100 d=2; eps 0.1; run cpu" >/dev/null 2>&1 ||
    fail "creating the log"
partials() { find "$o" -name '*.tcjoin-partial-*' | sort; }

# 1. Kill the clustering once its command has started (its commands row
# is written first) and has run a while.
cmds=$("$fdb" count "$db" commands)
"$bin" --db "$db" -e "gen uniform n=2000000 d=2 seed=3; eps 0.0012; dbscan out=$o/l.npy" \
    >"$dir/out" 2>"$dir/err" &
pid=$!
i=0
until [ "$("$fdb" count "$db" commands)" -ge $((cmds + 3)) ]; do
    i=$((i + 1))
    [ $i -lt 3000 ] || { kill -9 $pid; fail "dbscan did not start: $(cat "$dir/err")"; }
    kill -0 $pid 2>/dev/null || fail "the session ended before dbscan: $(cat "$dir/err")"
    sleep 0.01
done
sleep 0.3
kill -0 $pid 2>/dev/null || fail "dbscan ended before the kill (make it longer): $(cat "$dir/out")"
kill -9 $pid
wait $pid 2>/dev/null
[ -z "$(partials)" ] || fail "a killed dbscan out= left: $(partials)"
[ -e "$o/l.npy" ] && fail "a killed dbscan out= left l.npy"
echo "kill -9 during dbscan out=: no file left"

# 2. Kill a pairs run mid-write, as tests/faults/partial.sh does.
"$bin" --db "$db" -e "gen uniform n=300000 d=2 seed=3; eps 0.003; run cpu mode=pairs out=$o/p.bin format=bin64" \
    >"$dir/out" 2>"$dir/err" &
pid=$!
i=0
until [ -n "$(partials)" ]; do
    i=$((i + 1))
    [ $i -lt 1000 ] || { kill -9 $pid; fail "no temporary file appeared"; }
    kill -0 $pid 2>/dev/null || fail "the run ended before it could be killed: $(cat "$dir/err")"
    sleep 0.01
done
kill -9 $pid
wait $pid 2>/dev/null
left=$(partials)
case $left in
"$o/p.bin.tcjoin-partial-$pid-"??????) ;;
*) fail "the killed run's file is not named NAME.tcjoin-partial-$pid-XXXXXX: '$left'" ;;
esac
# An older name without a process id is never removed (its writer is unknown).
echo old >"$o/q.bin.tcjoin-partial-Ab3dEf"
"$bin" --db "$db" -e "export runs csv $o/r.csv" >"$dir/out" 2>"$dir/err" ||
    fail "the next output: $(cat "$dir/err")"
[ -e "$left" ] && fail "the next output to $o kept the dead writer's $left"
grep -q "^note: removed 1 partial file (NAME.tcjoin-partial-PID-\*) that a killed tcjoin left in $o; others are left" \
    "$dir/out" || fail "no line saying what was removed: $(cat "$dir/out" "$dir/err")"
[ -e "$o/q.bin.tcjoin-partial-Ab3dEf" ] || fail "a partial file without a process id was removed"
rm "$o/q.bin.tcjoin-partial-Ab3dEf"
"$bin" --db "$db" -e "export runs csv $o/r2.csv" >"$dir/out" 2>&1 || fail "export r2: $(cat "$dir/out")"
grep -q "partial" "$dir/out" && fail "a line about partial files with none left: $(cat "$dir/out")"
echo "kill -9 mid-write: the next output removed $(basename "$left") and said so"

# 3. A running writer's file is kept.
"$bin" --db "$db" -e "gen uniform n=300000 d=2 seed=4; eps 0.003; run cpu mode=pairs out=$o/live.bin format=bin64" \
    >"$dir/live.out" 2>"$dir/live.err" &
pid=$!
i=0
until [ -n "$(partials)" ]; do
    i=$((i + 1))
    [ $i -lt 1000 ] || { kill -9 $pid; fail "no temporary file appeared"; }
    kill -0 $pid 2>/dev/null || fail "the run ended before the check: $(cat "$dir/live.err")"
    sleep 0.01
done
live=$(partials)
"$bin" --db "$db" -e "export runs csv $o/r3.csv" >"$dir/out" 2>&1 || fail "export r3: $(cat "$dir/out")"
alive=0
kill -0 $pid 2>/dev/null && alive=1
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
if [ $alive = 1 ]; then
    [ -e "$live" ] || fail "the file of a running writer was removed"
fi
grep -q "partial" "$dir/out" && [ $alive = 1 ] && fail "a line about a running writer's file: $(cat "$dir/out")"
rm -f "$o"/*.tcjoin-partial-*
echo "a running writer's partial file is kept"

# A dead PID with the lock held (another namespace's writer) is kept.
if command -v flock >/dev/null 2>&1; then
    held=$o/h.bin.tcjoin-partial-2147483600-XyZ123
    : >"$held"
    flock -x "$held" sleep 3 &
    fl=$!
    sleep 0.3
    "$bin" --db "$db" -e "export runs csv $o/r4.csv" >"$dir/out" 2>&1 || fail "export r4"
    [ -e "$held" ] || fail "a locked partial file was removed"
    wait $fl
    "$bin" --db "$db" -e "export runs csv $o/r5.csv" >"$dir/out" 2>&1 || fail "export r5"
    [ -e "$held" ] && fail "an unlocked partial file of a dead PID was kept"
    grep -q "^note: removed 1 partial file" "$dir/out" || fail "no line: $(cat "$dir/out")"
    echo "a locked file of an unknown PID is kept until its lock goes"
fi
