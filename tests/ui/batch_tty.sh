#!/bin/sh
# Batch mode on a terminal (tmux): a long run shows one progress line on
# stderr (percent, rate, time left) that is erased when the run ends; Ctrl-C
# cancels it and the exit status is 130; an unusable --db makes the exit
# status non-zero. Exit 0 pass, 77 skip, else fail with the screen.
# usage: tests/ui/batch_tty.sh BUILD/tcjoin
set -u
bin=${1:-build/tcjoin}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
if ! command -v tmux >/dev/null 2>&1; then
    echo "skipped: tmux is not installed"
    exit 77
fi
[ -x "$bin" ] || { echo "no binary at $bin"; exit 1; }

tmp=$(mktemp -d)
t=
nserver=0
screen=$tmp/screen.txt
step=start
cleanup() { [ -n "$t" ] && $t kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
# start CMD: session b running CMD on a tmux server of its own (a socket
# per step). A server exits with its last session, and a new session on
# the same socket raced the dying server ("server exited unexpectedly"):
# the old server is killed and the new one never shares its socket.
start() {
    [ -n "$t" ] && $t kill-server >/dev/null 2>&1
    nserver=$((nserver + 1))
    t="tmux -L tcjoin-batch-test-$$-$nserver"
    $t new-session -d -s b -x 100 -y 20 "$1" || fail "tmux could not start the session"
}
capture() { $t capture-pane -p -t b >"$screen" 2>/dev/null; }
fail() {
    echo "FAIL at step '$step': $*"
    capture
    echo "---- screen ----"; cat "$screen"; echo "----------------"
    echo "FAIL at step '$step': $*" # again: the runner shows the last lines
    exit 1
}
# Waits scale with the load: on 2 cores shared with builds a step takes
# several times its idle time. The factor is the load per CPU (at least 1,
# at most 8), read at each wait; TCJOIN_UI_WAIT_SCALE overrides it.
wait_scale() {
    if [ -n "${TCJOIN_UI_WAIT_SCALE:-}" ]; then
        echo "$TCJOIN_UI_WAIT_SCALE"
        return
    fi
    awk -v n="$(nproc 2>/dev/null || echo 1)" \
        '{ s = int($1 / n + 0.999); print (s < 1 ? 1 : s > 8 ? 8 : s) }' /proc/loadavg 2>/dev/null ||
        echo 1
}
wait_for() {
    n=$(( ${2:-30} * 10 * $(wait_scale) ))
    while [ $n -gt 0 ]; do
        capture
        grep -Eq -- "$1" "$screen" && return 0
        sleep 0.1
        n=$((n - 1))
    done
    fail "screen never showed /$1/"
}

# A join long enough to be seen (tens of seconds on one core) and cancelled:
# brute force (set cpu-index off), which the grid index would cut short.
long="gen uniform n=200000 d=32 seed=1; eps 0.1; set threads 1; set cpu-index off; run cpu; eps 0.2"

step=progress
start "TERM=screen '$bin' --db '$tmp/s.db' -e '$long'; echo tcjoin-exited-\$?; sleep 60"
# percent, a bar, the rate and the time left, on one line
wait_for 'cpu +[0-9]+% \[#* *\] [0-9.]+ %/s, [0-9]+ (s|min) left' 60
[ "$(grep -c '%/s' "$screen")" -eq 1 ] || fail "more than one progress line"

step=cancel
$t send-keys -t b C-c
wait_for 'tcjoin-exited-' 30
grep -q 'tcjoin-exited-130' "$screen" || fail "Ctrl-C in batch mode did not exit 130"
grep -q 'cancelled' "$screen" || fail "no word of the cancellation"
grep -q '%/s' "$screen" && fail "the progress line was not erased"
grep -q '^eps 0.2' "$screen" && fail "batch mode went on after Ctrl-C"
sqlite3 "$tmp/s.db" 'select 1' >/dev/null 2>&1 &&
    [ "$(sqlite3 "$tmp/s.db" "select count(*) from runs where status = -6")" = 1 ] ||
    { command -v sqlite3 >/dev/null && fail "the cancelled run is not stored as cancelled"; }

step=plain-repl
# The line REPL shows the same progress line and Ctrl-C cancels the run
# without leaving.
start "TERM=screen TCJOIN_HISTORY='$tmp/h' '$bin' --plain --db '$tmp/p.db'; echo tcjoin-exited-\$?; sleep 60"
wait_for '^tcjoin>' 20
$t send-keys -t b -l "$long"
$t send-keys -t b Enter
wait_for 'cpu +[0-9]+% \[#* *\] [0-9.]+ %/s, [0-9]+ (s|min) left' 60
$t send-keys -t b C-c
wait_for 'run cpu: cancelled' 30
grep -q '%/s' "$screen" && fail "the progress line was not erased in the REPL"
$t send-keys -t b -l "quit"
$t send-keys -t b Enter
wait_for 'tcjoin-exited-0' 10

step=bad-db
mkdir "$tmp/dir.db"
start "TERM=screen '$bin' --db '$tmp/dir.db' -e 'eps 1'; echo tcjoin-exited-\$?; sleep 60"
wait_for 'tcjoin-exited-' 30
grep -q 'session log unavailable' "$screen" || fail "no word of the unusable --db"
grep -q 'tcjoin-exited-0' "$screen" && fail "an unusable --db in batch mode exited 0"
grep -q '^eps 1' "$screen" || fail "the commands did not run"
exit 0
