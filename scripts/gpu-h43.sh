#!/bin/bash
# Issue 43's GPU check: DBSCAN's device passes off the grid (the row's
# PAIRS runs consumed on the device, kernels/kern_dbscan.cu), fasted and
# exact. Run on the device machine from the repo root; builds nothing:
#   bash scripts/gpu-h43.sh    (LIMIT=s: the budget, default 190;
#                               BASE=dir: a tcjoin of an earlier commit
#                               timed on the first set in the same run)
# Binaries: $BUILD (default /tmp/tcjoin-gpu, unpacked from
# build-gpu/bundle.tar.xz as scripts/gpu-check does): tcjoin, tests/g_dbscan,
# tests/g_curve.
# Output under $OUT (default /tmp/gpu-h43): logs, summary.txt; the table last.
# At most about $LIMIT s: each step's timeout is cut to what is left (rc 124:
# it ran out; "skipped: out of time": no time was left for it).
# TRACE=1: TCJOIN_TRACE's step timings in the summary.
# Steps (BENCH=0, CURVE=0 or SAN=0 leaves one out): 1. g_dbscan and g_curve
# (every case; TESTS="name:seconds ..." narrows);
# 2. COUNT against dbscan, fasted and exact, on uniform 10^6 x 128 (S = 64), gauss 10^6 x
# 128 (64 clusters), gauss 6·10^4 x 784 (16 clusters), and uniform
# 2·10^6 x 128 at the 10^6 set's eps (S ~ 128; 10^7 x 128 would take some
# 40 s a COUNT, 150 s a dbscan: over this script's budget); 3. memcheck
# and racecheck on the epilogue's and exact's device passes at small sizes.
set -u
OUT=${OUT:-/tmp/gpu-h43}
mkdir -p "$OUT"
if [ -z "${BUILD:-}" ] && [ ! -x /tmp/tcjoin-gpu/tcjoin ] && [ -f build-gpu/bundle.tar.xz ]; then
    rm -rf /tmp/tcjoin-gpu && mkdir -p /tmp/tcjoin-gpu && tar -C /tmp/tcjoin-gpu -xJf build-gpu/bundle.tar.xz
fi
B=${BUILD:-/tmp/tcjoin-gpu}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/cuda/lib
if [ -z "${TCJOIN_DATASETS:-}" ] && [ -d "$B/datasets" ]; then
    export TCJOIN_DATASETS=$(cd "$B/datasets" && pwd)
fi
export XDG_DATA_HOME=$(mktemp -d) XDG_STATE_HOME=$(mktemp -d)
# TRACE=1: the device passes' steps (TCJOIN_TRACE) in the summary
[ "${TRACE:-0}" = 1 ] && export TCJOIN_TRACE=1
summary=$OUT/summary.txt
: >"$summary"
row() { printf '%-34s %s\n' "$1" "$2" >>"$summary"; }
T0=$(date +%s)
LIMIT=${LIMIT:-190}
# Each step's limit: its own, or what is left of $LIMIT s if less (0: skip).
lim() {
    local left=$((LIMIT - ($(date +%s) - T0)))
    [ "$left" -lt 10 ] && { echo 0; return; }
    [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$OUT/gpu.txt" 2>&1
row gpu "$(head -n 1 "$OUT/gpu.txt")"

# 1. The GPU tests (g_dbscan: cases 4-6 are this issue's, 1-3 the grid
# path's; g_curve: the curve's rounds on the device).
G=$B/tests/g_dbscan
for t in ${TESTS:-g_dbscan:90 g_curve:120}; do
    name=${t%%:*}
    if [ -x "$B/tests/$name" ]; then
        timeout "$(lim "${t##*:}")" "$B/tests/$name" >"$OUT/$name.log" 2>&1
        row "$name" "exit=$? $(grep -c '^ok' "$OUT/$name.log") ok, $(grep -c '^not ok' "$OUT/$name.log") not ok, $(grep -c '^skip' "$OUT/$name.log") skipped"
        grep '^not ok' "$OUT/$name.log" | head -n 3 | while read -r l; do row "  failed" "$l"; done
    else
        row "$name" "missing: $B/tests/$name"
    fi
done

# 2. COUNT against dbscan (warm: each one's second run; the first dbscan
# also given, cold: its pair buffers made; seconds end to end).
X=$B/tcjoin
rt() { # last run record's time_s of engine $2 in log $1
    grep '"type":"run"' "$1" | grep "\"engine\":\"$2\"" | tail -n 1 |
        sed -E 's/.*"time_s":([0-9.e+-]+),"kernel_s".*/\1/'
}
dt() { # last dbscan record's time_s (and its passes') of engine $2 (head: the first, cold)
    grep '"type":"dbscan"' "$1" | grep "\"engine\":\"$2\"" | ${3:-tail} -n 1 |
        sed -E 's/.*\],"time_s":([0-9.e+-]+),"passes":\{"core":\{"time_s":([0-9.e+-]+).*"union":\{"time_s":([0-9.e+-]+).*"border":\{"time_s":([0-9.e+-]+).*/\1 \2 \3 \4/'
}
# stderr apart ($log.err): the traces, written unbuffered, would otherwise
# land inside the buffered JSON records and hide them from rt and dt
bench() { # name, gen command, eps command [, tcjoin]
    local log=$OUT/bench-$1.log L X=${4:-$X}
    L=$(lim 45)
    [ "$L" = 0 ] && { row "$1" "skipped: out of time"; return; }
    timeout "$L" "$X" --json --db "$OUT/h43.db" -e "$2; $3; run exact; run exact; run fasted; run fasted;
        dbscan minpts=10 engine=exact; dbscan minpts=10 engine=exact;
        dbscan minpts=10 engine=fasted; dbscan minpts=10 engine=fasted" >"$log" 2>"$log.err"
    local rc=$? ce cf de df e0 f0
    ce=$(rt "$log" exact)
    cf=$(rt "$log" fasted)
    de=$(dt "$log" exact)
    df=$(dt "$log" fasted)
    e0=$(dt "$log" exact head)
    f0=$(dt "$log" fasted head)
    row "$1 exact" "rc=$rc COUNT ${ce:-?} s, dbscan warm ${de%% *} s ($(echo "$ce $de" | awk '{if ($1 > 0) printf "%.1fx", $2 / $1}'); core/union/border ${de#* }), first ${e0%% *} s"
    row "$1 fasted" "rc=$rc COUNT ${cf:-?} s, dbscan warm ${df%% *} s ($(echo "$cf $df" | awk '{if ($1 > 0) printf "%.1fx", $2 / $1}'); core/union/border ${df#* }), first ${f0%% *} s"
    grep -m 1 -i 'error\|fail' "$log" "$log.err" | cut -c1-150 | while read -r l; do row "  $1" "$l"; done
    grep '^dbscan trace (ms)' "$log.err" | tail -n 2 | cut -c1-200 | while read -r l; do row "  $1" "$l"; done
}
if [ "${BENCH:-1}" = 1 ] && [ -x "$X" ]; then
    bench uniform-1e6x128-S64 "gen uniform n=1000000 d=128 seed=1" "sweep 64 engine=fasted use"
    E=$(grep '"type":"eps"' "$OUT/bench-uniform-1e6x128-S64.log" | tail -n 1 | sed -E 's/.*"eps":([0-9.e+-]+).*/\1/')
    [ -n "${BASE:-}" ] && [ -x "$BASE/tcjoin" ] &&
        bench base-uniform-1e6x128-S64 "gen uniform n=1000000 d=128 seed=1" "sweep 64 engine=fasted use" "$BASE/tcjoin"
    bench gauss-1e6x128-c64 "gen gauss n=1000000 d=128 seed=1 clusters=64" "sweep 64 engine=fasted use"
    bench gauss-6e4x784-c16 "gen gauss n=60000 d=784 seed=1 clusters=16" "sweep 64 engine=fasted use"
    [ -n "$E" ] && [ "$(lim 45)" = 45 ] &&
        bench "uniform-2e6x128-eps$E" "gen uniform n=2000000 d=128 seed=1" "eps $E"
fi
# 2b. `dbscan curve` against a COUNT join at eps = max (goal <= 4x), exact,
# on the uniform and the clustered 10^6 x 128 sets (twice: the second, warm,
# is the row's): its time, the core
# distances' and the forest's, the joins it took and how many kept their
# pairs on the device (CURVE=0 leaves it out; CURVE_HOST=1 runs it again
# in a process of its own under `set curve-route host`: every join's pairs
# through the host sink and the merging after each join on the host;
# CURVE_MNIST=1 adds the MNIST-like gauss 6·10^4 x 784, 16 clusters).
if [ "${CURVE:-1}" = 1 ] && [ -x "$X" ]; then
    for set in "uniform-1e6x128 gen uniform n=1000000 d=128 seed=1" \
        "gauss-1e6x128 gen gauss n=1000000 d=128 seed=1 clusters=64" \
        ${CURVE_MNIST:+"gauss-6e4x784 gen gauss n=60000 d=784 seed=1 clusters=16"}; do
        for how in dev ${CURVE_HOST:+host}; do
            name=${set%% *}$([ "$how" != dev ] && echo "-$how")
            route=auto
            [ "$how" = host ] && route=host
            L=$(lim 120)
            [ "$L" = 0 ] && { row "curve $name" "skipped: out of time"; continue; }
            timeout "$L" "$X" --json --db "$OUT/curve.db" -e "${set#* }; set curve-route $route;
                sweep 64 engine=fasted use; run exact; run exact;
                dbscan curve minpts=10 engine=exact; dbscan curve minpts=10 engine=exact" >"$OUT/curve-$name.log" 2>"$OUT/curve-$name.err"
            rc=$?
            c=$(rt "$OUT/curve-$name.log" exact)
            v=$(grep '"type":"dbscan_curve"' "$OUT/curve-$name.log" | tail -n 1 |
                sed -E 's/.*"rounds":([0-9]+),"rounds_device":([0-9]+).*"time_s":([0-9.e+-]+),"kdist_s":([0-9.e+-]+),"forest_s":([0-9.e+-]+).*/\3 \4 \5 \1 \2/')
            row "curve $name" "rc=$rc COUNT ${c:-?} s, curve ${v%% *} s ($(echo "$c $v" | awk '{if ($1 > 0 && NF >= 6) printf "%.1fx; core distances %s s, forest %s s, %s joins, %s on the device", $2 / $1, $3, $4, $5, $6}'))"
            grep -E '^dbscan curve .*trace' "$OUT/curve-$name.err" | tail -n 4 | cut -c1-200 | while read -r l; do row "  trace" "$l"; done
            # the k-distance's refinement joins summed (TCJOIN_TRACE)
            grep '^kdist refine join' "$OUT/curve-$name.err" | awk '
                { n++; rows += $6; pairs += $8; ms += $9
                  for (f = 11; f < NF; f += 2) ph[$f] += $(f + 1) }
                END { if (n) { printf "%d joins, %d rows, %d pairs, %.1f ms:", n, rows, pairs, ms
                      for (p in ph) printf " %s %.1f", p, ph[p]; printf "\n" } }' |
                while read -r l; do row "  kdist refine" "$l"; done
        done
    done
fi
# 3. Sanitizers on the new kernels at small sizes (G_DBSCAN_SMALL: d = 64,
# 700 rows): the pair consumer under fasted's and exact's PAIRS runs.
if [ "${SAN:-1}" = 1 ] && [ -x "$G" ] && command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
        for t in tensor_core_dbscan_equals_generic exact_pass_dbscan_equals_cpu; do
            L=$(lim 30)
            [ "$L" = 0 ] && { row "$tool ${t%%_dbscan*}" "skipped: out of time"; continue; }
            G_DBSCAN_SMALL=1 timeout "$L" compute-sanitizer --tool $tool --error-exitcode 9 \
                "$G" $t >"$OUT/san-$tool-$t.log" 2>&1
            rc=$?
            row "$tool ${t%%_dbscan*}" "exit=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^ok|^not ok' "$OUT/san-$tool-$t.log" | head -n 2 | tr '\n' ' ')"
        done
        # the curve's consumer (kernels/kern_curve.cu): its heaps' locks
        C=$B/tests/g_curve
        L=$(lim 150)
        [ -x "$C" ] && [ "$L" != 0 ] && {
            G_CURVE_SMALL=1 timeout "$L" compute-sanitizer --tool $tool --error-exitcode 9 \
                "$C" device_rounds_equal_the_sink >"$OUT/san-$tool-curve.log" 2>&1
            row "$tool curve" "exit=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^ok|^not ok' "$OUT/san-$tool-curve.log" | head -n 2 | tr '\n' ' ')"
        }
        # the merging after a join (kernels/kern_curve_merge.cu): global
        # memory only, so memcheck alone
        L=$(lim 150)
        [ "$tool" = memcheck ] && [ -x "$C" ] && [ "$L" != 0 ] && {
            G_CURVE_SMALL=1 timeout "$L" compute-sanitizer --tool $tool --error-exitcode 9 \
                "$C" device_merging_equals_the_host >"$OUT/san-$tool-merge.log" 2>&1
            row "$tool merge" "exit=$? $(grep -E 'ERROR SUMMARY|^ok|^not ok' "$OUT/san-$tool-merge.log" | head -n 2 | tr '\n' ' ')"
        }
    done
fi

row "total" "$(($(date +%s) - T0)) s"
cat "$summary"
