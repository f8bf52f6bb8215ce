#!/bin/sh
# A kill -9 while `run ... mode=pairs out=FILE` runs leaves its temporary
# file (nothing can remove it then): it is named FILE.tcjoin-partial-XXXXXX,
# visible beside FILE, not a hidden file of hundreds of MB that ls does not
# show; FILE itself never appears partial. The next run to FILE is not
# disturbed by it.
. "$(dirname "$0")/lib.sh"
db=$dir/s.db
mkdir "$dir/o"
# The temporary file is made before the join starts (a refused name stops
# the command first), so it lives through the whole pass: 300,000 points
# take a few seconds here, about 1.4 million pairs (22 MB) stream into it.
"$bin" --db "$db" -e "gen uniform n=300000 d=2 seed=3; eps 0.003; run cpu mode=pairs out=$dir/o/p.bin format=bin64" \
    >"$dir/out" 2>"$dir/err" &
pid=$!
# kill once the temporary file exists
i=0
until [ -n "$(find "$dir/o" -name 'p.bin.tcjoin-partial-*' 2>/dev/null)" ]; do
    i=$((i + 1))
    [ $i -lt 600 ] || { kill -9 $pid; fail "no temporary file appeared: $(ls -A "$dir/o")"; }
    kill -0 $pid 2>/dev/null || fail "the run ended before it could be killed: $(cat "$dir/err")"
    sleep 0.01
done
kill -9 $pid
wait $pid 2>/dev/null
left=$(ls "$dir/o")
[ -e "$dir/o/p.bin" ] && fail "a partial p.bin appeared"
case $left in
p.bin.tcjoin-partial-*) ;;
*) fail "plain ls does not show the partial file: '$left' (ls -A: $(ls -A "$dir/o"))" ;;
esac
echo "kill -9 mid-write: '$left' left, visible beside p.bin"
"$bin" --db "$db" -e "gen uniform n=2000 d=2 seed=3; eps 0.02; run cpu mode=pairs out=$dir/o/p.bin format=bin64" \
    >"$dir/out" 2>"$dir/err" || fail "the next run: $(cat "$dir/err")"
[ -f "$dir/o/p.bin" ] || fail "the next run wrote no p.bin"
