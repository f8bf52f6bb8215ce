#!/bin/sh
# Several tcjoin processes on one log at once. (1) 8 processes open a
# brand-new log at the same moment, 5 times: every one logs its session and
# its run (none refuses the file and runs unlogged). (2) 6 processes write 5
# runs each into one existing log at once: all 30 runs and every command
# line are there.
. "$(dirname "$0")/lib.sh"
trials=5
procs=8
for k in $(seq 1 $trials); do
    db=$dir/new$k.db
    # Started together: each blocks opening a FIFO until the parent opens
    # it for writing, then all open the log at once.
    mkfifo "$dir/go$k"
    for p in $(seq 1 $procs); do
        (timeout 5 cat "$dir/go$k" >/dev/null
         exec "$bin" --db "$db" -e "gen uniform n=50 d=2 seed=$p; eps 0.1; run cpu") \
            >"$dir/out$k.$p" 2>&1 &
    done
    sleep 0.3
    exec 9>"$dir/go$k"
    exec 9>&-
    wait
    for p in $(seq 1 $procs); do
        if grep -q 'error' "$dir/out$k.$p"; then
            fail "trial $k, process $p: $(grep error "$dir/out$k.$p")"
        fi
    done
    [ "$("$fdb" count "$db" sessions)" = $procs ] || fail "trial $k: $("$fdb" count "$db" sessions) sessions of $procs"
    [ "$("$fdb" count "$db" runs)" = $procs ] || fail "trial $k: $("$fdb" count "$db" runs) runs of $procs"
    [ "$("$fdb" check "$db")" = ok ] || fail "trial $k: integrity_check"
done
echo "$trials trials of $procs processes opening a new log at once: every run logged"

db=$dir/shared.db
"$bin" --db "$db" -e 'gen uniform n=10 d=2' >/dev/null 2>&1 || fail "creating the shared log"
for p in 1 2 3 4 5 6; do
    "$bin" --db "$db" -e "gen uniform n=300 d=4 seed=$p; eps 0.2; run cpu; run cpu-fp16; run cpu;
        run cpu rows=0:100; run cpu-fp16" >"$dir/w$p" 2>&1 &
done
wait
for p in 1 2 3 4 5 6; do
    grep -q error "$dir/w$p" && fail "writer $p: $(grep error "$dir/w$p")"
done
[ "$("$fdb" count "$db" runs)" = 30 ] || fail "$("$fdb" count "$db" runs) runs of 30"
# 1 command of the first session, 7 of each writer.
[ "$("$fdb" count "$db" commands)" = 43 ] || fail "$("$fdb" count "$db" commands) commands of 43"
[ "$("$fdb" check "$db")" = ok ] || fail "integrity_check of the shared log"
echo "6 writers at once: 30 runs and 43 command lines, none lost"
