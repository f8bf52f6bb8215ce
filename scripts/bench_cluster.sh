#!/bin/bash
# The ε-choosing commands against one COUNT, on the shared real sets and on
# generated ones, warm (the median of each command's runs after its first,
# in one process; REPS of them, 5, on the real sets): `run exact` (COUNT),
# `dbscan curve` at ε = max and `kdist K engine=exact`, at S = 32 and 64
# (the ε `sweep S engine=exact` finds), and on 10^6 x 128 uniform, 64
# Gaussian clusters, and the same clusters with 60% of the points uniform
# (mostly noise at max); then `sweep 64` from a fresh `gen
# uniform n=37000000 d=3` (no ε set), cold and warm, beside the same sweep
# after `eps` and a COUNT. Run on the device machine; builds
# nothing:
#   bash scripts/bench_cluster.sh [SECTION...]   (real, gen, sweep; default all)
# Binaries: $BUILD (default /tmp/tcjoin-gpu, unpacked from
# build-gpu/bundle.tar.xz as scripts/gpu-check does). Logs and the JSON
# records under $OUT (default /tmp/bench-cluster); TRACE=1 adds the
# trace (TCJOIN_TRACE: the run's host steps, DBSCAN's, the curve's and the
# k-distance's) on each log's .err. The table last (summary.txt).
set -u
OUT=${OUT:-/tmp/bench-cluster}
. "$(dirname "$0")/bench_env.inc"
[ "${TRACE:-0}" = 1 ] && export TCJOIN_TRACE=1
SECTIONS=${*:-real gen sweep}
has() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }

# time_s of the N-th record of type $2 in $1 (N: 2, the first warm one)
rec_t() { grep "\"type\":\"$2\"" "$1" | sed -n "${3:-2}p" | sed -E 's/.*"time_s":([0-9.e+-]+).*/\1/'; }
# the median time_s of the warm records (all but the first) of type $2 in $1
rec_med() {
    grep "\"type\":\"$2\"" "$1" | sed 1d | sed -E 's/.*"time_s":([0-9.e+-]+).*/\1/' | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.1fx", a / b; else print "?" }'; }
ms() { awk -v a="$1" 'BEGIN { if (a != "") printf "%.2f", a * 1000; else print "?" }'; }

# one set at one S: COUNT, curve and kdist each a cold run and $REPS warm
# ones, the median of the warm ones (a few milliseconds: one run varies by
# some 0.5 ms on the H200 host); K = minpts - 1
REPS=${REPS:-5}
one() { # name, load command, S, minpts
    local log=$OUT/$1-S$3.log c= v= k= i reps=$REPS
    case $2 in gen*) reps=3 ;; esac # 10^6 x 128: 0.1-1 s a run, steadier
    for i in $(seq 0 "$reps"); do
        c="$c run exact;"
        v="$v dbscan curve minpts=$4;"
        k="$k kdist $(($4 - 1)) engine=exact;"
    done
    timeout 300 "$X" --json --db "$OUT/$1.db" -e "$2; sweep $3 engine=exact use; $c $v $k" \
        >"$log" 2>"$log.err"
    local rc=$?
    c=$(rec_med "$log" run)
    v=$(rec_med "$log" dbscan_curve)
    k=$(rec_med "$log" kdist)
    row "| $1 | $3 | $(ms "$c") | $(ms "$v") ($(ratio "$v" "$c")) | $(ms "$k") ($(ratio "$k" "$c")) | rc=$rc"
}
row "| set | S | COUNT ms | curve ms (x COUNT) | kdist exact ms (x COUNT) | |"
row "|---|---|---|---|---|---|"
if has real; then
    for S in 32 64; do
        one sift5k "load $D/sift5k.fvecs" $S 10
        one letter "load $D/letter.csv cols=1-16" $S 10
        one htru2 "load $D/htru2.csv cols=0-7 header=1" $S 10
        one kitti "load $D/kitti_000000_xyzr.f32 format=raw dtype=f32 dim=4" $S 10
        one olivetti "load $D/olivetti_400x4096_u8.npy" $S 10
    done
fi
if has gen; then
    one uniform1e6 "gen uniform n=1000000 d=128 seed=1" 64 10
    one gauss1e6 "gen gauss n=1000000 d=128 seed=1 clusters=64" 64 10
    # mostly noise at max: 60% of the points uniform in the centres' box
    one noise1e6 "gen gauss n=1000000 d=128 seed=1 clusters=64 background=0.6" 64 10
fi
swf() { # each sweep record's fields that say where its time went
    grep '"type":"sweep"' "$1" | tr ',' '\n' | grep -E '"(engine|eps|est_eps|passes|time_s|sample_time_s|ref_engine|ref_time_s|status)"' |
        tr '\n' ' ' | sed 's/"engine"/\n  "engine"/g' | tee -a "$summary"
    echo | tee -a "$summary"
}
if has sweep; then
    # a user's start: gen, then sweep with no eps set; then again (warm)
    log=$OUT/sweep-fresh.log
    timeout 300 "$X" --json --db "$OUT/sw.db" -e "gen uniform n=37000000 d=3 seed=1; sweep 64; sweep 64" \
        >"$log" 2>"$log.err"
    row "sweep 64 fresh (gen uniform 3.7e7 x 3): rc=$? cold $(rec_t "$log" sweep 1) s, warm $(rec_t "$log" sweep 2) s"
    swf "$log"
    log=$OUT/sweep-preset.log
    timeout 300 "$X" --json --db "$OUT/sw2.db" -e "gen uniform n=37000000 d=3 seed=1; eps 0.0075; run exact; sweep 64; sweep 64" \
        >"$log" 2>"$log.err"
    row "sweep 64 after eps + COUNT: rc=$? $(rec_t "$log" sweep 1) s, $(rec_t "$log" sweep 2) s"
    swf "$log"
fi
