#!/bin/sh
# A cancelled command is said one way, its name first: "tcjoin: WHO:
# cancelled" on stderr (never "error:"), and with --json a record of type
# cancelled carrying the same message. Commands are cancelled by Ctrl-C
# while their output, a FIFO nobody reads, waits for a reader: a wait that
# lasts until the SIGINT, so the test does not race the work.
# usage: tests/cli/cancel_wording.sh PATH/TO/tcjoin   (exit 0 pass, 1 fail, 77 skip)
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v timeout >/dev/null 2>&1 || { echo "skipped: no timeout(1)"; exit 77; }
mkfifo "$tmp/p" 2>/dev/null || { echo "skipped: cannot make a FIFO here"; exit 77; }
fail=0
. "$(dirname "$0")/ready_wait.inc"

# cancel [--json] CMD: gen, eps and a run, then ready.csv, then CMD; SIGINT
# once CMD waits on the FIFO, through timeout --foreground (without it the
# SIGINT also reaches tcjoin through the process group: a second Ctrl-C,
# which ends tcjoin at once). Sets status; stdout and stderr in out, err.
cancel() {
    json=
    [ "$1" = --json ] && { json=--json; shift; }
    rm -f "$tmp/ready.csv"
    # shellcheck disable=SC2086
    timeout --foreground -s KILL 30 "$bin" $json --db "$tmp/s.db" \
        -e "gen uniform n=500 d=4 seed=1; eps 0.3; run cpu; export runs csv $tmp/ready.csv force; $1" \
        >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    wait_ready
    kill -INT "$pid"
    wait "$pid"
    status=$?
}

# expect CMD LINE: CMD cancelled says exactly LINE on stderr, exit 130.
expect() {
    cancel "$1"
    if [ "$(cat "$tmp/err")" != "$2" ]; then
        echo "$1: expected '$2', got:"; cat "$tmp/err"; fail=1
    fi
    [ $status -eq 130 ] || { echo "$1: exit $status, expected 130"; fail=1; }
}

expect "run cpu mode=pairs out=$tmp/p" "tcjoin: run cpu: cancelled"
expect "run cpu mode=perpoint out=$tmp/p" "tcjoin: run cpu: cancelled"
expect "dbscan minpts=4 engine=cpu out=$tmp/p" "tcjoin: dbscan cpu: cancelled"
expect "curve 0 0.5 csv=$tmp/p" "tcjoin: curve: cancelled"
expect "export runs csv $tmp/p" "tcjoin: export: cancelled"

cmd="run cpu mode=pairs out=$tmp/p"
cancel --json "$cmd"
rec="{\"type\":\"cancelled\",\"message\":\"run cpu: cancelled\",\"command\":\"$cmd\",\"line\":null}"
grep -qxF "$rec" "$tmp/out" || { echo "--json: no record $rec in:"; cat "$tmp/out"; fail=1; }
grep -q '"type":"error"' "$tmp/out" && { echo "--json: a cancel given as an error record"; fail=1; }
[ "$(cat "$tmp/err")" = "tcjoin: run cpu: cancelled" ] ||
    { echo "--json: stderr:"; cat "$tmp/err"; fail=1; }

[ $fail -eq 0 ] && echo "cancel_wording: ok"
exit $fail
