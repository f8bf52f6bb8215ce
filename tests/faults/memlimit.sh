#!/bin/sh
# A memory limit (ulimit -v) is memory tcjoin cannot have: what does not fit
# under it is one line and exit 1, never an abort or a silent exit 0. A
# script from /dev/zero under the limit used to end the session silently
# (getline's ENOMEM, exit 0); gen beyond the limit aborted ("out of memory
# allocating", exit 134) since only MemAvailable was looked at.
. "$(dirname "$0")/lib.sh"
db=$dir/s.db
"$bin" --db "$db" -e 'gen uniform n=10 d=2' >/dev/null 2>&1 || fail "creating the log"
limit=400000 # KiB: room for the process, not for 640 MB of values and the FP64 block

(ulimit -v $limit; exec "$bin" --db "$db" /dev/zero) >"$dir/out" 2>&1
status=$?
[ $status -eq 1 ] || fail "/dev/zero as the script under ulimit -v: exit $status: $(head -c 300 "$dir/out")"
[ "$(grep -c . "$dir/out")" = 1 ] || fail "/dev/zero: not one line: $(head -c 300 "$dir/out")"
grep -q "/dev/zero:1: line longer than 1 MiB" "$dir/out" || fail "/dev/zero: $(cat "$dir/out")"
echo "/dev/zero as the script under ulimit -v: exit 1, $(cat "$dir/out")"

(ulimit -v $limit; exec "$bin" --db "$db" -e 'gen uniform n=1e7 d=16') >"$dir/out" 2>&1
status=$?
[ $status -eq 1 ] || fail "gen beyond ulimit -v: exit $status: $(cat "$dir/out")"
[ "$(grep -c . "$dir/out")" = 1 ] || fail "gen beyond ulimit -v: not one line: $(cat "$dir/out")"
grep -q "gen uniform: needs 640.1 MB of memory for n=10000000 x d=16;" "$dir/out" ||
    fail "gen beyond ulimit -v: $(cat "$dir/out")"
echo "gen beyond ulimit -v: exit 1, $(cat "$dir/out")"
