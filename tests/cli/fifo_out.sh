#!/bin/sh
# Outputs written to a named pipe (run out=FIFO):
#  a. no reader yet: the open waits, and Ctrl-C ends the wait as it ends
#     any command: "tcjoin: run cpu: cancelled", exit 130, within seconds;
#  b. a reader that opened the pipe and reads nothing: the blocked write
#     ends at Ctrl-C the same way;
#  c. a reader that reads a few bytes and exits: one line says the reader
#     closed the pipe (no silent death by SIGPIPE) and the script goes on
#     with its next command, exit 1 as for any failed command.
# Each tcjoin runs under timeout(1), so the test never hangs.
# usage: tests/cli/fifo_out.sh PATH/TO/tcjoin   (exit 0 pass, 1 fail, 77 skip)
set -u
bin=$1
tmp=$(mktemp -d)
reader=
trap '[ -n "$reader" ] && kill "$reader" 2>/dev/null; rm -rf "$tmp"' EXIT
command -v timeout >/dev/null 2>&1 || { echo "skipped: no timeout(1)"; exit 77; }
mkfifo "$tmp/p" 2>/dev/null || { echo "skipped: cannot make a FIFO here"; exit 77; }
fail=0
. "$(dirname "$0")/ready_wait.inc"
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# interrupt CMDS: run the commands in the background, wait until ready.csv
# (written by the command before the FIFO's) exists, let the FIFO command
# start, send SIGINT; sets status and ms (from SIGINT to exit). timeout
# passes the SIGINT on; --foreground, or it sends it to its process group
# as well, and a second Ctrl-C during a command ends tcjoin at once.
interrupt() {
    rm -f "$tmp/ready.csv"
    timeout --foreground -s KILL 30 "$bin" --db "$tmp/s.db" -e "$1" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    wait_ready
    t0=$(now_ms)
    kill -INT "$pid"
    wait "$pid"
    status=$?
    ms=$(($(now_ms) - t0))
}

# check_cancel CASE: the one cancel line, nothing said as an error, 130.
check_cancel() {
    if [ "$(cat "$tmp/err")" != "tcjoin: run cpu: cancelled" ]; then
        echo "$1: stderr is not the one cancel line:"; cat "$tmp/err"; fail=1
    fi
    [ $status -eq 130 ] || { echo "$1: exit $status, expected 130 (137: never ended)"; fail=1; }
    [ $ms -le 3000 ] || { echo "$1: $ms ms from SIGINT to exit"; fail=1; }
    grep -q '^eps 0.2$' "$tmp/out" && { echo "$1: batch mode went on after Ctrl-C"; fail=1; }
}

pre='gen uniform n=20000 d=4 seed=1; eps 0.3; export runs csv '"$tmp"'/ready.csv force'

# a. nobody opens the pipe
interrupt "$pre; run cpu mode=pairs out=$tmp/p; eps 0.2"
check_cancel "no reader"
[ $fail -eq 0 ] && echo "no reader: cancelled $ms ms after SIGINT, exit 130"

# b. a reader that never reads: the pairs fill the pipe and the write waits
sleep 30 <"$tmp/p" &
reader=$!
interrupt "$pre; run cpu mode=pairs out=$tmp/p; eps 0.2"
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
reader=
check_cancel "stalled reader"
[ $fail -eq 0 ] && echo "stalled reader: cancelled $ms ms after SIGINT, exit 130"

# c. the reader goes away after 100 bytes, of u32 pairs and of CSV
for fmt in bin32 csv; do
    (timeout 30 head -c 100 "$tmp/p" >/dev/null) &
    reader=$!
    timeout -s KILL 30 "$bin" --db "$tmp/s.db" \
        -e "gen uniform n=20000 d=4 seed=1; eps 0.3; run cpu mode=pairs out=$tmp/p format=$fmt; eps 0.2" \
        >"$tmp/out" 2>"$tmp/err"
    status=$?
    wait "$reader" 2>/dev/null
    reader=
    want="tcjoin: error: $tmp/p: the reader closed the pipe"
    if [ "$(cat "$tmp/err")" != "$want" ]; then
        echo "reader gone ($fmt): expected the one line '$want', got:"; cat "$tmp/err"; fail=1
    fi
    [ $status -eq 1 ] || { echo "reader gone ($fmt): exit $status, expected 1 (141: SIGPIPE)"; fail=1; }
    grep -q '^eps 0.2$' "$tmp/out" ||
        { echo "reader gone ($fmt): the next command did not run:"; cat "$tmp/out"; fail=1; }
done
[ $fail -eq 0 ] && echo "reader gone: one line, the script went on, exit 1"
[ $fail -eq 0 ] && echo "fifo_out: ok"
exit $fail
