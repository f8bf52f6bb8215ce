#!/bin/sh
# kill -9 at 20 random moments of a session that is writing runs: after each
# kill the log passes PRAGMA integrity_check, holds every run committed
# before that session started, and a later tcjoin opens and writes it.
. "$(dirname "$0")/lib.sh"
db=$dir/s.db
"$bin" --db "$db" -e 'gen uniform n=500 d=4; eps 0.1; run cpu' >/dev/null 2>&1 ||
    fail "the first session failed"
killed=0
for k in $(seq 1 20); do
    "$fdb" ids "$db" >"$dir/before" || fail "reading run ids before kill $k"
    # compare re-runs its engines (fresh), and d=64 keeps the grid index
    # out, so the session lasts well past the latest kill moment (about
    # 1.7 s on 2 cores; at d=8 a faster comparer ended it near 0.3 s).
    "$bin" --db "$db" -e "gen uniform n=8000 d=64 seed=$k; eps 1.8; run cpu; run cpu-fp16;
        compare cpu-fp16 cpu fresh; run cpu rows=0:1000; run cpu; run cpu-fp16; run cpu;
        compare cpu-fp16 cpu fresh; run cpu; run cpu-fp16; compare cpu-fp16 cpu fresh" \
        >/dev/null 2>&1 &
    pid=$!
    # A moment between 0 and 0.5 s: start-up, a run, a commit or in between.
    sleep "$(awk -v s="$k" 'BEGIN { srand(s * 7919); printf "%.3f", rand() * 0.5 }')"
    kill -9 "$pid" 2>/dev/null && killed=$((killed + 1))
    wait "$pid" 2>/dev/null
    check=$("$fdb" check "$db")
    [ "$check" = ok ] || fail "integrity_check after kill $k: $check"
    "$fdb" ids "$db" >"$dir/after" || fail "reading run ids after kill $k"
    lost=$(sort "$dir/before" | comm -23 - "$(sort "$dir/after" >"$dir/after.s"; echo "$dir/after.s")")
    [ -z "$lost" ] || fail "runs lost by kill $k: $lost"
done
# The kills must have hit running sessions, or this tested nothing.
[ "$killed" -ge 10 ] || fail "only $killed of 20 kills found the session still running"
"$bin" --db "$db" -e 'gen uniform n=100 d=2; eps 0.1; run cpu' >"$dir/out" 2>&1 ||
    fail "the log is not usable after the kills: $(cat "$dir/out")"
echo "20 kills ($killed mid-session), log intact, $(wc -l <"$dir/after") runs kept"
