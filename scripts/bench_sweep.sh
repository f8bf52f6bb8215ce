#!/bin/sh
# eps search: passes and time of `sweep` (sample + histogram passes) against
# the bisection baseline (a full COUNT join per step, as the FASTED authors'
# scripts do), on generated data and ../shared/datasets.
# usage: scripts/bench_sweep.sh [BUILD] > table.md
# env:   ENGINE (default cpu), TARGETS (default 1,8,64,256,1000),
#        LIMIT (rows taken from each file, default 10000; 0 = all),
#        GEN_N (generated points, default 10000), DATASETS (directory)
set -eu
cd "$(dirname "$0")/.." || exit 2
build=${1:-build}
bin="$build/tcjoin"
engine=${ENGINE:-cpu}
targets=${TARGETS:-1,8,64,256,1000}
limit=${LIMIT:-10000}
gen_n=${GEN_N:-10000}
data=${DATASETS:-$(cd .. && pwd)/shared/datasets}
db=$(mktemp -u /tmp/tcjoin-bench-sweep-XXXXXX.db)
trap 'rm -f "$db" "$db-wal" "$db-shm"' EXIT
[ -x "$bin" ] || { echo "bench_sweep: $bin not built (make BUILD=$build)" >&2; exit 2; }

lim=""
[ "$limit" != 0 ] && lim="limit=$limit"

# name|load command
sets="uniform16|gen uniform n=$gen_n d=16 seed=1
gauss32|gen gauss n=$gen_n d=32 seed=2
letter|load $data/letter.csv cols=1- header=1 $lim
htru2|load $data/htru2.csv cols=0-7 header=1 $lim
sift5k|load $data/sift5k.fvecs $lim
kitti|load $data/kitti_000000_xyzr.f32 format=raw dtype=f32 dim=4 $lim"

# One JSON record per line; pick the sweep records' fields with sed.
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p"; }

echo "engine $engine, targets $targets, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
echo
echo "| data | n | target S | sweep: passes | sweep: S reached | sweep: s (+sample s) | bisect: passes | bisect: S reached | bisect: s |"
echo "|---|---|---|---|---|---|---|---|---|"
echo "$sets" | while IFS='|' read -r name load; do
    out=$("$bin" --db "$db" --json -e "$load; sweep $targets engine=$engine; sweep $targets engine=$engine method=bisect" 2>/dev/null || true)
    n=$(echo "$out" | grep '"type":"sweep"' | head -n 1 | field n)
    hist=$(echo "$out" | grep '"type":"sweep"' | grep '"method":"hist"')
    bis=$(echo "$out" | grep '"type":"sweep"' | grep '"method":"bisect"')
    k=1
    for t in $(echo "$targets" | tr ',' ' '); do
        h=$(echo "$hist" | sed -n "${k}p")
        b=$(echo "$bis" | sed -n "${k}p")
        hs=$(echo "$h" | field status)
        bs=$(echo "$b" | field status)
        printf '| %s | %s | %s | %s | %.6g%s | %.3f (+%.3f) | %s | %.6g%s | %.3f |\n' \
            "$name" "$n" "$t" "$(echo "$h" | field passes)" "$(echo "$h" | field selectivity)" \
            "$([ "$hs" = ok ] || echo " ($hs)")" "$(echo "$h" | field time_s)" \
            "$(echo "$h" | field sample_time_s)" "$(echo "$b" | field passes)" \
            "$(echo "$b" | field selectivity)" "$([ "$bs" = ok ] || echo " ($bs)")" \
            "$(echo "$b" | field time_s)"
        k=$((k + 1))
    done
done
