#!/bin/sh
# Dense low-dimensional data on the FP64 grid path (`exact`, exact-path
# grid): a halo set (gen halo: dense halos of power-law sizes in a
# uniform background) and a uniform one, d = 3, eps from `sweep S use`.
# Per set, with the grid's sub-cells on and then off (TCJOIN_GRID_DENSE=0,
# the same answers pair by pair) in the same run of this script: COUNT
# cold and warm, and dbscan at each minpts twice (the second warm), with
# the device passes' times (TCJOIN_TRACE's dbscan line) on stderr.
# usage: scripts/bench_dense.sh [BUILD] > table.md
# env:   N (default 37000000), S (default 32), MINPTS (default "2 5 10 50"),
#        SETS (default "halo uniform"; a set is a kind and its options
#        joined by commas: halo,radius=0.0005)
set -eu
cd "$(dirname "$0")/.." || exit 2
build=${1:-build}
bin="$build/tcjoin"
n=${N:-37000000}
sel=${S:-32}
mps=${MINPTS:-2 5 10 50}
sets=${SETS:-halo uniform}
db=$(mktemp -u /tmp/tcjoin-bench-dense-XXXXXX.db)
trap 'rm -f "$db" "$db-wal" "$db-shm"' EXIT
[ -x "$bin" ] || { echo "bench_dense: $bin not built (make BUILD=$build)" >&2; exit 2; }

echo "exact, exact-path grid, S = $sel, n = $n, d = 3, $(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
echo "| set | sub-cells | eps | pairs | COUNT cold s | COUNT warm s | pairs skipped | minpts | dbscan s | dbscan warm s | clusters | dense cells | dense rows |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for set in $sets; do
    for dense in on off; do
        cmd="gen $(echo "$set" | tr ',' ' ') n=$n d=3 seed=1; set exact-path grid; sweep $sel use engine=exact; run exact; run exact"
        for m in $mps; do
            cmd="$cmd; dbscan minpts=$m engine=exact; dbscan minpts=$m engine=exact"
        done
        val=1
        [ "$dense" = off ] && val=0
        out=$(TCJOIN_GRID_DENSE=$val TCJOIN_TRACE=1 "$bin" --db "$db" --json -e "$cmd" 2>/tmp/bench_dense.err) || {
            echo "| $set | $dense | failed: $(tail -n 1 /tmp/bench_dense.err) |"
            continue
        }
        grep 'dbscan trace' /tmp/bench_dense.err | sed "s/^/$set $dense: /" >&2 || true
        runs=$(echo "$out" | grep '"type":"run"' | grep '"mode":"count"')
        eps=$(echo "$runs" | sed -n 's/.*"eps":\([0-9.e+-]*\).*/\1/p' | head -n 1)
        pairs=$(echo "$runs" | sed -n 's/.*"pairs":\([0-9]*\).*/\1/p' | head -n 1)
        t1=$(echo "$runs" | sed -n 's/.*"time_s":\([0-9.e+-]*\).*/\1/p' | sed -n 1p)
        t2=$(echo "$runs" | sed -n 's/.*"time_s":\([0-9.e+-]*\).*/\1/p' | sed -n 2p)
        sk=$(echo "$runs" | sed -n 1p | sed -n 's/.*"counters":{[^}]*"pairs_skipped":\([0-9.e+]*\).*/\1/p')
        dbs=$(echo "$out" | grep '"type":"dbscan"')
        i=1
        for m in $mps; do
            a=$(echo "$dbs" | sed -n "${i}p" | sed -n 's/.*"time_s":\([0-9.e+-]*\),"passes".*/\1/p')
            b=$(echo "$dbs" | sed -n "$((i + 1))p" | sed -n 's/.*"time_s":\([0-9.e+-]*\),"passes".*/\1/p')
            ncl=$(echo "$dbs" | sed -n "${i}p" | sed -n 's/.*"minpts":[0-9]*,"clusters":\([0-9]*\).*/\1/p')
            dc=$(echo "$dbs" | sed -n "${i}p" | sed -n 's/.*"dense_cells":\([0-9]*\).*/\1/p')
            dr=$(echo "$dbs" | sed -n "${i}p" | sed -n 's/.*"dense_rows":\([0-9]*\).*/\1/p')
            echo "| $set | $dense | $eps | $pairs | $t1 | $t2 | ${sk:--} | $m | $a | $b | $ncl | ${dc:--} | ${dr:--} |"
            i=$((i + 2))
        done
    done
done
