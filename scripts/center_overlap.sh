#!/bin/sh
# fasted's overlap (eq. 3) against the exact engine on every shared dataset
# at S ~ 10 and S ~ 100, with centring off and on: the table of
# docs/ACCURACY.md. Run on a GPU machine:
#   sh scripts/center_overlap.sh [TCJOIN] [DATASETS]
# LOCAL=1 prints instead, on the CPU, the kitti scan's overlap of cpu-fp16
# (FASTED's arithmetic emulated) against cpu with centring on and local
# (`set center local`: per grid cell).
set -u
T=${1:-build/tcjoin}
D=${2:-${TCJOIN_DATASETS:-../shared/datasets}}
export XDG_DATA_HOME=${XDG_DATA_HOME:-$(mktemp -d)} XDG_STATE_HOME=${XDG_STATE_HOME:-$(mktemp -d)}
if [ "${LOCAL:-0}" = 1 ]; then
    echo "| dataset | S | eps | cpu-fp16, centring on | cpu-fp16, centring local |"
    echo "|---|---|---|---|---|"
    for S in 10 100; do
        db=$(mktemp -u /tmp/center-overlap-XXXXXX.db)
        log=$("$T" --db "$db" -e "load $D/kitti_000000_xyzr.f32 dim=4; sweep $S engine=cpu use;
            set center on; compare cpu-fp16 cpu fresh; set center local; compare cpu-fp16 cpu fresh" 2>&1)
        eps=$(echo "$log" | sed -n 's/^eps \([0-9.e+-]*\) (from the sweep).*/\1/p' | head -n 1)
        ov=$(echo "$log" | sed -n 's/^  overlap \([0-9.]*\).*/\1/p' | tr '\n' ' ')
        set -- $ov
        echo "| kitti_000000_xyzr.f32 | $S | ${eps:-?} | ${1:-?} | ${2:-?} |"
        rm -f "$db" "$db-wal" "$db-shm"
    done
    exit 0
fi
echo "| dataset | S | eps | overlap, centring off | overlap, centring on |"
echo "|---|---|---|---|---|"
for spec in "htru2.csv" "letter.csv cols=-0" "sift5k.fvecs" "olivetti_400x4096_u8.npy" \
    "kitti_000000_xyzr.f32 dim=4"; do
    file=${spec%% *}
    opts=""
    [ "$spec" != "$file" ] && opts=${spec#* }
    for S in 10 100; do
        db=$(mktemp -u /tmp/center-overlap-XXXXXX.db)
        log=$("$T" --db "$db" -e "load $D/$file $opts; sweep $S use; set center off;
            compare fasted exact fresh; set center on; compare fasted exact fresh" 2>&1)
        eps=$(echo "$log" | sed -n 's/^eps \([0-9.e+-]*\) (from the sweep).*/\1/p' | head -n 1)
        ov=$(echo "$log" | sed -n 's/^  overlap \([0-9.]*\).*/\1/p' | tr '\n' ' ')
        set -- $ov
        echo "| $file | $S | ${eps:-?} | ${1:-?} | ${2:-?} |"
        rm -f "$db" "$db-wal" "$db-shm"
    done
done
