#!/bin/sh
# Low-dimensional data: the FP64 grid path (`exact`, set exact-path grid)
# on uniform and clustered 3-D sets at S = 64, its index built on the
# device (kernels/grid_gpu.cuh). Per set: a cold COUNT run (upload +
# index + kernel) and a warm one (index and rows cached), each phase from
# the run's JSON record; dbscan minPts 10 twice (the second warm); then
# `sweep 64` and `kdist 4` (exact), each twice (cold, warm).
# usage: scripts/bench_grid.sh [BUILD] > table.md
# env:   SIZES (default "1000000 10000000 37000000 100000000"), S (default 64)
set -eu
cd "$(dirname "$0")/.." || exit 2
build=${1:-build}
bin="$build/tcjoin"
sizes=${SIZES:-1000000 10000000 37000000 100000000}
sel=${S:-64}
db=$(mktemp -u /tmp/tcjoin-bench-grid-XXXXXX.db)
trap 'rm -f "$db" "$db-wal" "$db-shm"' EXIT
[ -x "$bin" ] || { echo "bench_grid: $bin not built (make BUILD=$build)" >&2; exit 2; }

# One JSON record a line: the run records' phases.
ph() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p" | sed -n "${2}p"; }

echo "exact, exact-path grid, COUNT, S = $sel, $(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
echo
echo "| set | n | pairs | cold: h2d ms | cold: index ms | cold: kernel ms | cold: total s | warm: kernel ms | warm: total s | dbscan (10) s | dbscan warm s | clusters | sweep 64 cold / warm s (+ its sample) | kdist 4 cold / warm s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for kind in uniform gauss; do
    for n in $sizes; do
        # uniform in the unit cube: S = n (4/3) pi eps^3 away from the faces
        eps=$(awk -v n="$n" -v s="$sel" 'BEGIN { printf "%.6g", (3 * s / (4 * 3.14159265358979 * n)) ^ (1 / 3) }')
        gen="gen uniform n=$n d=3 seed=1"
        [ "$kind" = gauss ] && gen="gen gauss n=$n d=3 seed=1 clusters=64 sigma=0.05"
        out=$("$bin" --db "$db" --json -e "$gen; eps $eps; set exact-path grid; run exact; run exact; dbscan minpts=10 engine=exact; dbscan minpts=10 engine=exact; sweep 64 engine=exact; sweep 64 engine=exact; kdist 4 engine=exact; kdist 4 engine=exact" 2>&1) || {
            echo "| $kind | $n | failed: $(echo "$out" | tail -n 1) |"
            continue
        }
        runs=$(echo "$out" | grep '"engine":"exact"')
        pairs=$(echo "$runs" | sed -n 's/.*"pairs":\([0-9]*\).*/\1/p' | head -n 1)
        h2d=$(echo "$runs" | ph h2d 1)
        idx=$(echo "$runs" | ph index 1)
        k1=$(echo "$runs" | ph kernel_s 1)
        t1=$(echo "$runs" | ph time_s 1)
        k2=$(echo "$runs" | ph kernel_s 2)
        t2=$(echo "$runs" | ph time_s 2)
        dbs=$(echo "$out" | grep '"type":"dbscan"')
        db1=$(echo "$dbs" | sed -n 's/.*"clusters":[0-9]*.*"time_s":\([0-9.e+-]*\),"passes".*/\1/p' | sed -n 1p)
        db2=$(echo "$dbs" | sed -n 's/.*"clusters":[0-9]*.*"time_s":\([0-9.e+-]*\),"passes".*/\1/p' | sed -n 2p)
        ncl=$(echo "$dbs" | sed -n 's/.*"clusters":\([0-9]*\).*/\1/p' | sed -n 1p)
        ms() { awk -v v="${1:-0}" 'BEGIN { printf "%.2f", v * 1e3 }'; }
        # a record's first time_s (the sweep's and kdist's own, before their steps)
        rt() { echo "$out" | grep "\"type\":\"$1\"" | sed -n "${2}p" | sed 's/"time_s":\([0-9.e+-]*\).*/\1/; s/.*,//'; }
        smp() { echo "$out" | grep '"type":"sweep"' | sed -n "${1}p" | sed -n 's/.*"sample_time_s":\([0-9.e+-]*\).*/\1/p'; }
        sw="$(rt sweep 1) + $(smp 1) / $(rt sweep 2) + $(smp 2)"
        kd="$(rt kdist 1) / $(rt kdist 2)"
        echo "$dbs" | sed -n 's/.*"passes":\({[^}]*}[^}]*}[^}]*}}\).*/dbscan passes: \1/p' >&2
        echo "$runs" | grep '"mode":"perpoint"' | sed -n 's/.*"time_s":\([^,]*\),"kernel_s":\([^,]*\),"phases":\({[^}]*}\).*/dbscan core pass: time \1 kernel \2 \3/p' >&2
        echo "| $kind | $n | $pairs | $(ms "$h2d") | $(ms "$idx") | $(ms "$k1") | $t1 | $(ms "$k2") | $t2 | $db1 | $db2 | $ncl | $sw | $kd |"
    done
done
