#!/bin/bash
# Issue 44 on the GPU (the lead runs it on an H200 from scripts/gpu-pack's
# bundle): the grid's k-distance, histogram and per-point tests against
# cpu/fp64, compute-sanitizer on the new kernels (small sizes), then the
# benchmark lines, a short table last; every step under `timeout`.
#   bash scripts/gpu-h44.sh            (B=/tmp/tcjoin-gpu, OUT=/tmp/gpu-h44)
# TESTS (name:seconds ...), SAN=0 (no sanitizers), BENCH3=0 (no n x 3
# benchmarks), BENCHD=0 (no d = 4 to 16 benchmarks), KINDS and DIMS
# narrow those. TCJOIN_TRACE=1 puts the grid DBSCAN's steps in the
# summary.
# Needs in the bundle: $B/tcjoin, $B/tests/g_grid_kdist, $B/tests/g_exact_grid,
# $B/tests/g_dbscan, $B/datasets/kitti_000000_xyzr.f32.
set -u
B=${B:-/tmp/tcjoin-gpu}
if [ ! -x "$B/tcjoin" ] && [ -f build-gpu/bundle.tar.xz ]; then
    rm -rf "$B" && mkdir -p "$B" && tar -C "$B" -xJf build-gpu/bundle.tar.xz
fi
DEST=${OUT:-/tmp/gpu-h44}
mkdir -p "$DEST"
L=$(mktemp -d /tmp/gpu-h44-logs.XXXXXX)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
[ -n "${TCJOIN_DATASETS:-}" ] || export TCJOIN_DATASETS=$B/datasets
export XDG_DATA_HOME=$(mktemp -d) XDG_STATE_HOME=$(mktemp -d)
sum=$L/summary.txt
: >"$sum"
row() { printf '%-34s %s\n' "$1" "$2" | tee -a "$sum"; }
T0=$(date +%s)
row gpu "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -n 1)"

# 1. Tests (the grid's k-distance, histogram, sweep/curve; the grid join
#    every mode; DBSCAN's grid passes with the union/border pruning).
for t in ${TESTS:-g_grid_kdist:100 g_exact_grid:200 g_dbscan:60}; do
    name=${t%%:*} lim=${t##*:}
    if [ -x "$B/tests/$name" ]; then
        timeout "$lim" "$B/tests/$name" >"$L/$name.log" 2>&1
        rc=$?
        row "test $name" "ok=$(grep -c '^ok - ' "$L/$name.log") not_ok=$(grep -c '^not ok - ' "$L/$name.log") exit=$rc"
        grep '^not ok' "$L/$name.log" | head -n 5 | tee -a "$sum"
    else
        row "test $name" "missing"
    fi
done

# 2. compute-sanitizer on the new kernels: kd_grid_kernel, fg_join_kernel
#    with the shared-memory histogram and per-warp counts (grid_sanitizer_case),
#    and the union/border epilogues (g_dbscan's grid case).
[ "${SAN:-1}" = 1 ] && for tool in memcheck racecheck; do
    timeout "$([ "$tool" = racecheck ] && echo 240 || echo 40)" compute-sanitizer --tool "$tool" --error-exitcode 9 "$B/tests/g_grid_kdist" \
        grid_sanitizer_case >"$L/san-kd-$tool.log" 2>&1
    row "sanitizer grid $tool" "exit=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^ok|^not ok' "$L/san-kd-$tool.log" | head -n 2 | tr '\n' ' ')"
done
if [ "${SAN:-1}" = 1 ]; then
    timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/g_dbscan" \
        exact_grid_dbscan_equals_cpu >"$L/san-dbscan-memcheck.log" 2>&1
    row "sanitizer dbscan memcheck" "exit=$? $(grep -E 'ERROR SUMMARY|^ok|^not ok' "$L/san-dbscan-memcheck.log" | head -n 2 | tr '\n' ' ')"
fi

# 3. Benchmarks: uniform n x 3 at S ~ 64 (eps as scripts/bench_grid.sh:
#    S = n (4/3) pi eps^3 away from the faces), exact on the grid, each
#    command twice (cold, warm); then 10^6 x 8 (eps from a sweep), the
#    pass (brute force) against the grid over 6 of 8 dimensions.
# One field of the k-th JSON record of a type.
fld() { grep "\"type\":\"$1\"" "$3" | sed -n "${4}p" |
    sed -n -e "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p" -e "t" -e "s/.*\"$2\":\([^,}]*\).*/\1/p"; }
bench3() { # n, extra commands
    local n=$1 f=$L/bench-$1.log
    local eps
    eps=$(awk -v n="$n" 'BEGIN { printf "%.6g", (3 * 64 / (4 * 3.14159265358979 * n)) ^ (1 / 3) }')
    timeout 120 "$B/tcjoin" --db "$L/b$n.db" --json -e "gen uniform n=$n d=3 seed=1; \
eps $eps; set exact-path grid; run exact; run exact; run exact mode=perpoint; \
sweep 64 engine=exact; sweep 64 engine=exact; kdist 4 engine=exact; kdist 4 engine=exact; \
dbscan minpts=10 engine=exact; dbscan minpts=10 engine=exact$2" >"$f" 2>&1
    row "bench $n x 3 exit" "$? (eps $eps)"
    row "  COUNT cold/warm s" "$(fld run time_s "$f" 1) / $(fld run time_s "$f" 2) (kernel warm $(fld run kernel_s "$f" 2))"
    row "  PERPOINT warm s" "$(fld run time_s "$f" 3) (kernel $(fld run kernel_s "$f" 3))"
    row "  sweep 64 cold/warm s" "$(fld sweep time_s "$f" 1) / $(fld sweep time_s "$f" 2) + sample $(fld sweep sample_time_s "$f" 2), passes $(fld sweep passes "$f" 2), S $(fld sweep selectivity "$f" 2)"
    row "  kdist 4 cold/warm s" "$(fld kdist time_s "$f" 1) / $(fld kdist time_s "$f" 2) ($(fld kdist variant "$f" 2))"
    sed 's/,"passes".*//' "$f" >"$f.top"
    row "  dbscan cold/warm s" "$(fld dbscan time_s "$f.top" 1) / $(fld dbscan time_s "$f.top" 2), clusters $(fld dbscan clusters "$f" 2)"
    grep '"type":"dbscan"' "$f" | tail -n 1 | sed -n 's/.*"passes":\(.*\)/  dbscan passes: \1/p' | cut -c1-400 >>"$sum"
    grep '^dbscan trace' "$f" | tail -n 2 | sed 's/^/  /' >>"$sum"
    [ -n "$2" ] && row "  curve s" "$(fld curve time_s "$f" 1) + sample $(fld curve sample_time_s "$f" 1)"
    grep '"type":"error"' "$f" | head -n 3 | tee -a "$sum"
}
if [ "${BENCH3:-1}" = 1 ]; then
    bench3 10000000 "; curve engine=exact"
    bench3 37000000 ""
fi
# 4. d = 4 to 16 (uniform and 64 Gaussian clusters, 10^6 rows, S ~ 64,
#    eps from a sweep): the pass whole against the pass over the tile cut
#    (kern_tiles_run: the rows in k-d order, only the 256-row block pairs
#    whose boxes are within eps), each twice (cold, warm), then auto and a
#    dbscan through auto. DIMS, KINDS to narrow.
[ "${BENCHD:-1}" = 1 ] && for kind in ${KINDS:-uniform gauss}; do
    for d in ${DIMS:-4 8 16}; do
        f=$L/bench-$kind-d$d.log
        g="gen $kind n=1000000 d=$d seed=1"
        [ "$kind" = gauss ] && g="$g clusters=64"
        timeout 200 "$B/tcjoin" --db "$L/d$d$kind.db" --json -e "$g; \
sweep 64 engine=exact use; set exact-path pass; run exact; run exact; \
set exact-path tiles; run exact; run exact; set exact-path auto; run exact; \
dbscan minpts=16 engine=exact; dbscan minpts=16 engine=exact; \
sweep 64 engine=exact; kdist 4 engine=exact; kdist 4 engine=exact" >"$f" 2>&1
        row "bench 1e6 x $d $kind exit" "$? (eps $(fld eps eps "$f" 1), sweep $(fld sweep time_s "$f" 1) s)"
        row "  pass cold/warm s" "$(fld run time_s "$f" 1) / $(fld run time_s "$f" 2) (kernel $(fld run kernel_s "$f" 2))"
        row "  tiles cold/warm s" "$(fld run time_s "$f" 3) / $(fld run time_s "$f" 4) (kernel $(fld run kernel_s "$f" 4), work $(fld run tile_work "$f" 4), $(fld run variant "$f" 4))"
        row "  auto s, path" "$(fld run time_s "$f" 5), $(fld run path "$f" 5)"
        row "  pairs pass/tiles" "$(fld run pairs "$f" 2) / $(fld run pairs "$f" 4)"
        sed 's/,"passes".*//' "$f" >"$f.top"
        row "  dbscan cold/warm s" "$(fld dbscan time_s "$f.top" 1) / $(fld dbscan time_s "$f.top" 2), clusters $(fld dbscan clusters "$f" 2)"
        row "  sweep 64 cold/warm s" "$(fld sweep time_s "$f" 1) + sample $(fld sweep sample_time_s "$f" 1) / $(fld sweep time_s "$f" 2) + sample $(fld sweep sample_time_s "$f" 2)"
        row "  kdist 4 cold/warm s" "$(fld kdist time_s "$f.top" 1) / $(fld kdist time_s "$f.top" 2) ($(fld kdist variant "$f" 2))"
        grep '"type":"error"' "$f" | head -n 3 | tee -a "$sum"
    done
done
row "total seconds" "$(($(date +%s) - T0))"

tar -C "$L" -czf "$DEST/logs.tgz" --exclude='*.db*' .
cp "$sum" "$DEST/summary.txt"
echo "==== summary ===="
cat "$sum"
