#!/bin/sh
# `run cpu` on two rows of 2^24 values (128 MB as f32) holds memory bounded
# by the data: the rows once more beyond what gen needed, not a group of
# sixteen FP64 candidates a thread (5 GB). The pair counts are checked
# against two thresholds far on either side of the rows' distance, known from the
# from the uniform values: two points of [0,1)^d lie about sqrt(d/6) =
# 1672 apart (within 2 for d = 2^24), so eps 1e9 joins all 4 ordered
# pairs and eps 1 the 2 self-pairs only.
# usage: tests/cli/wide_rows.sh PATH/TO/tcjoin   (exit 0 pass, 77 skip, 1 fail)
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x /usr/bin/time ] || { echo "no /usr/bin/time to read the peak memory"; exit 77; }
if nm "$bin" 2>/dev/null | grep -q __asan_init || ldd "$bin" 2>/dev/null | grep -q libasan; then
    echo "AddressSanitizer build: its shadow and quarantine are not the program's memory"
    exit 77
fi
d=16777216
data_kb=$((2 * d * 4 / 1024))
peak() { # peak SCRIPT: the run's peak RSS in KiB into $kb
    /usr/bin/time -f "%M" "$bin" --db "$tmp/s.db" -e "$1" >"$tmp/out" 2>"$tmp/t" ||
        { echo "failed: $1: $(cat "$tmp/out" "$tmp/t")"; exit 1; }
    kb=$(tail -n 1 "$tmp/t")
}
peak "gen uniform n=2 d=$d seed=1"
base=$kb
peak "gen uniform n=2 d=$d seed=1; eps 1e9; run cpu; eps 1; run cpu"
run=$kb
bound=$((base + data_kb))
echo "gen alone $base KiB, with the joins $run KiB, bound $bound KiB (data $data_kb KiB)"
[ "$run" -le "$bound" ] || { echo "FAIL: run cpu took more than the data once more"; exit 1; }
grep -c "pairs 4," "$tmp/out" | grep -qx 1 || { echo "FAIL: eps 1e9 does not join all 4 pairs: $(cat "$tmp/out")"; exit 1; }
grep -c "pairs 2," "$tmp/out" | grep -qx 1 || { echo "FAIL: eps 1 does not join the 2 self-pairs only: $(cat "$tmp/out")"; exit 1; }
# With an eps set, the new dataset's extent (the eps-scale check) reads
# its columns a block at a time: no two rows of doubles (256 MB here).
peak "eps 1; gen uniform n=2 d=$d seed=1"
eg=$kb
echo "eps set, gen: $eg KiB (gen alone $base KiB)"
[ "$eg" -le $((base + data_kb / 2)) ] || { echo "FAIL: the eps check took rows of doubles"; exit 1; }
echo "wide_rows: ok"
