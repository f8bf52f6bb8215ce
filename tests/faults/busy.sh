#!/bin/sh
# Another program holds the log's write lock. Shorter than TCJOIN_DB_WAIT:
# tcjoin waits and every row lands. Longer: each write the log refuses
# prints one line naming the log, batch mode exits 1, and nothing written
# afterwards is lost.
. "$(dirname "$0")/lib.sh"
db=$dir/s.db
cmds='gen uniform n=200 d=4 seed=1; eps 0.2; run cpu'
"$bin" --db "$db" -e "$cmds" >/dev/null 2>&1 || fail "creating the log"

"$fdb" hold "$db" 1500 >"$dir/hold" &
hold=$!
until grep -q locked "$dir/hold" 2>/dev/null; do sleep 0.05; done
TCJOIN_DB_WAIT=10 "$bin" --db "$db" -e "$cmds" >"$dir/out" 2>"$dir/err"
status=$?
wait $hold
[ $status -eq 0 ] || fail "waiting out a 1.5 s lock: exit $status: $(cat "$dir/err")"
[ "$("$fdb" count "$db" runs)" = 2 ] || fail "after a 1.5 s lock: $("$fdb" count "$db" runs) runs of 2"
[ "$("$fdb" count "$db" commands)" = 6 ] || fail "after a 1.5 s lock: $("$fdb" count "$db" commands) commands of 6"
echo "a 1.5 s lock with a 10 s wait: exit 0, every row stored"

"$fdb" hold "$db" 2500 >"$dir/hold" &
hold=$!
until grep -q locked "$dir/hold" 2>/dev/null; do sleep 0.05; done
TCJOIN_DB_WAIT=0.3 "$bin" --db "$db" -e "$cmds" >"$dir/out" 2>"$dir/err"
status=$?
wait $hold
[ $status -eq 1 ] || fail "a 2.5 s lock with a 0.3 s wait: exit $status, expected 1"
grep -q "$db: .*locked by another process for 0.3 s" "$dir/err" ||
    fail "no line naming the log and the lock: $(cat "$dir/err")"
[ "$(grep -c . "$dir/err")" -ge 2 ] || fail "the refused writes were not each reported: $(cat "$dir/err")"
echo "a 2.5 s lock with a 0.3 s wait: exit 1, $(grep -c . "$dir/err") error lines, e.g."
head -n 1 "$dir/err"
# After the lock, the log takes rows again and holds everything written.
"$bin" --db "$db" -e "$cmds" >/dev/null 2>&1 || fail "the log after the lock"
[ "$("$fdb" check "$db")" = ok ] || fail "integrity_check after the lock"

# Ctrl-C while a write waits for the lock (TCJOIN_DB_WAIT=30): the wait
# stops at once (it used to sleep the whole wait through, 52 s in all),
# one line says so, exit 130. Commands come from a FIFO so the log is open
# (unlocked) before the lock is taken.
mkfifo "$dir/in"
s0=$("$fdb" count "$db" sessions)
TCJOIN_DB_WAIT=30 "$bin" --db "$db" <"$dir/in" >"$dir/out" 2>"$dir/err" &
pid=$!
exec 3>"$dir/in"
until [ "$("$fdb" count "$db" sessions)" -gt "$s0" ]; do sleep 0.05; done
"$fdb" hold "$db" 20000 >"$dir/hold" &
hold=$!
until grep -q locked "$dir/hold" 2>/dev/null; do sleep 0.05; done
echo 'gen uniform n=10 d=2' >&3
sleep 1
t0=$(now_ms)
kill -INT $pid
wait $pid
status=$?
t1=$(now_ms)
exec 3>&-
kill $hold 2>/dev/null
wait $hold 2>/dev/null
[ $status -eq 130 ] || fail "SIGINT during a lock wait: exit $status, expected 130: $(cat "$dir/err")"
[ $((t1 - t0)) -lt 2000 ] || fail "SIGINT during a lock wait: $((t1 - t0)) ms to stop"
grep -q ": cancelled; the session log was locked by another process" "$dir/err" ||
    fail "SIGINT during a lock wait: no line saying so: $(cat "$dir/err")"
echo "SIGINT during a 30 s lock wait: exit 130 after $((t1 - t0)) ms"
