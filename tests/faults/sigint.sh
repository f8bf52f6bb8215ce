#!/bin/sh
# Ctrl-C (SIGINT) during `curve`: batch mode stops within a second with exit
# status 130 and says the curve was cancelled; the line REPL (in tmux, when
# installed) cancels the curve and takes the next command. SIGINT during
# `run` in batch mode with --json: the line and the record say cancelled,
# never error, and the run is stored as cancelled.
. "$(dirname "$0")/lib.sh"
db=$dir/s.db
# About 10 s of histogram pass on this machine's CPUs without a cancel
# (brute force: the grid index would cut it short).
cmds='set cpu-index off; gen uniform n=100000 d=16 seed=3; curve 0 0.6 engine=cpu'
"$bin" --db "$db" -e "$cmds" >"$dir/out" 2>"$dir/err" &
pid=$!
n=0
# The dataset row is committed before the curve starts (stdout is buffered).
until [ "$("$fdb" count "$db" datasets 2>/dev/null)" = 1 ]; do
    sleep 0.05
    n=$((n + 1))
    [ $n -lt 400 ] || fail "gen never finished"
done
sleep 0.5
t0=$(now_ms)
kill -INT "$pid"
wait "$pid"
status=$?
t1=$(now_ms)
[ "$status" -eq 130 ] || fail "batch exit status $status after SIGINT, expected 130"
[ $((t1 - t0)) -le 1000 ] || fail "curve took $((t1 - t0)) ms to stop after SIGINT"
grep -qx 'tcjoin: curve: cancelled' "$dir/err" || fail "no 'curve: cancelled' line: $(cat "$dir/err")"
grep -q 'error' "$dir/err" && fail "a cancel said as an error: $(cat "$dir/err")"
echo "batch: curve stopped $((t1 - t0)) ms after SIGINT, exit 130"

# wait_rows DB TABLE N: until the log holds N rows (committed before the
# next command starts).
wait_rows() {
    n=0
    until [ "$("$fdb" count "$1" "$2" 2>/dev/null)" = "$3" ]; do
        sleep 0.05
        n=$((n + 1))
        [ $n -lt 400 ] || fail "$2 never reached $3 rows"
    done
}
rdb=$dir/r.db
# About 30 s of join on two threads without a cancel.
"$bin" --json --db "$rdb" -e 'gen uniform n=100000 d=16 seed=3; eps 0.6; run cpu' \
    >"$dir/out" 2>"$dir/err" &
pid=$!
wait_rows "$rdb" datasets 1
sleep 0.5
kill -INT "$pid"
wait "$pid"
status=$?
[ "$status" -eq 130 ] || fail "batch run: exit status $status after SIGINT, expected 130"
grep -qx 'tcjoin: run cpu: cancelled' "$dir/err" ||
    fail "no 'tcjoin: run cpu: cancelled' line: $(cat "$dir/err")"
grep -q 'error' "$dir/err" && fail "a cancelled run said as an error: $(cat "$dir/err")"
grep -q '"type":"error"' "$dir/out" && fail "a cancelled run gave an error record: $(cat "$dir/out")"
grep -q '^{"type":"cancelled","message":"run cpu: cancelled","command":"run cpu","line":null}$' \
    "$dir/out" || fail "no cancelled record: $(cat "$dir/out")"
"$bin" --db "$rdb" -e 'show run 1' >"$dir/show" 2>&1 || fail "show run 1: $(cat "$dir/show")"
grep -Eq '^status +cancelled$' "$dir/show" || fail "the run is not stored as cancelled: $(cat "$dir/show")"
echo "batch: run cancelled by SIGINT said as cancelled (line, record, log), exit 130"

if ! command -v tmux >/dev/null 2>&1; then
    echo "skipped: the REPL half needs tmux"
    exit 77
fi
sock=tcjoin-sigint-$$
t="tmux -L $sock"
trap '$t kill-server >/dev/null 2>&1; rm -rf "$dir"' EXIT
$t new-session -d -s r -x 120 -y 40 "'$bin' --plain --db '$db' 2>&1" || fail "tmux"
screen() { $t capture-pane -p -t r; }
wait_screen() { # REGEX SECONDS
    n=$(($2 * 10))
    while [ $n -gt 0 ]; do
        screen | grep -Eq -- "$1" && return 0
        sleep 0.1
        n=$((n - 1))
    done
    fail "the REPL never showed /$1/: $(screen)"
}
$t send-keys -t r "set cpu-index off" Enter
wait_screen '^cpu-index off' 10
$t send-keys -t r "gen uniform n=100000 d=16 seed=3" Enter
wait_screen '^dataset' 20
$t send-keys -t r "curve 0 0.6 engine=cpu" Enter
sleep 1
t0=$(now_ms)
$t send-keys -t r C-c
wait_screen 'curve: cancelled' 3
t1=$(now_ms)
$t send-keys -t r "eps 0.25" Enter
wait_screen '^eps 0\.25' 5
[ $((t1 - t0)) -le 1500 ] || fail "REPL: curve took $((t1 - t0)) ms to stop"
echo "REPL: curve stopped within $((t1 - t0)) ms (screen polled), next command ran"
