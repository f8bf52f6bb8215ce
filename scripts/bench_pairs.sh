#!/bin/sh
# The binary pair file's rate ("PAIRS at full speed"): one batch
# session on uniform n=1e6, d=128 (bench_fasted's data: seed 42) at S ~ 64,
# COUNT twice (cold, warm), PAIRS into /dev/null once (the pair buffers
# pinned), then PAIRS into a bin32 file, a bin64 file and /dev/null, and
# dd on the same disk for comparison.
#   sh scripts/bench_pairs.sh TCJOIN DIR [EPS] [N]
# DIR: where the files go (the disk measured). Prints one line per case:
#   case pairs bytes wall_s MB/s kernel_s d2h_s sink_s sink_MB/s
# wall: from the command's start to the next command's (the session log's
# command times: the run, the file's fsync and rename, the run record);
# MB/s = bytes / wall; sink MB/s = bytes / the sink's own time. The dd
# line: dd if=/dev/zero bs=16M count=256 conv=fdatasync into DIR.
set -u
T=$1
DIR=$2
E=${3:-3.677}
N=${4:-1000000}
X=${ENGINE:-fasted} # another engine: ENGINE=cpu (a check of this script without a GPU)
mkdir -p "$DIR"
DB=$DIR/bench-pairs.db
LOG=$DIR/bench-pairs.log
rm -f "$DB" "$DIR/pairs.bin"
"$T" --db "$DB" --json -e "gen uniform n=$N d=128 seed=42; eps $E;
    run $X mode=count; run $X mode=count; run $X mode=pairs out=/dev/null format=bin32;
    run $X mode=pairs out=$DIR/pairs.bin format=bin32 force; eps;
    run $X mode=pairs out=$DIR/pairs.bin format=bin64 force; eps;
    run $X mode=pairs out=/dev/null format=bin32; eps; history 14" >"$LOG" 2>&1
rm -f "$DIR/pairs.bin"
# Seconds from the start of the (last) command holding $1 to the next
# command's.
wall() {
    grep '"type":"history"' "$LOG" | awk -v pat="$1" '{
        t = $0; sub(/.*"at":"[0-9-]+T/, "", t); sub(/Z".*/, "", t); split(t, h, ":")
        at[NR] = h[1] * 3600 + h[2] * 60 + h[3]; ln[NR] = index($0, pat) > 0 }
        END { for (i = 1; i < NR; i++) if (ln[i]) w = at[i + 1] - at[i]; printf "%.3f", w }'
}
# case, run record number (count cold, count warm, null (the first PAIRS
# run: it pins the pair buffers), bin32, bin64, null),
# bytes a pair, wall seconds (- for none)
line() {
    grep '"type":"run"' "$LOG" | sed -n "$2p" | awk -v c="$1" -v rec="$3" -v w="$4" -v n="$N" '
        function num(k,   t) { t = $0; if (!sub(".*\"" k "\":", "", t)) return 0; sub(/[,}].*/, "", t); return t + 0 }
        { p = num("pairs"); b = p * rec; k = num("kernel_s"); d = num("d2h"); s = num("sink"); tt = num("time_s")
          if (w == "-") w = tt
          printf "%-12s pairs=%d S=%.2f bytes=%.0f wall_s=%.3f MB/s=%.0f run_s=%.3f kernel_s=%.3f d2h_s=%.3f sink_s=%.3f sink_MB/s=%.0f\n",
              c, p, (p - n) / n, b, w, (w > 0 ? b / w / 1e6 : 0), tt, k, d, s, (s > 0 ? b / s / 1e6 : 0) }'
}
line count 2 0 -
line bin32 4 8 "$(wall 'format=bin32 force')"
line bin64 5 16 "$(wall 'format=bin64 force')"
line null 6 8 "$(wall 'out=/dev/null')"
timeout 60 dd if=/dev/zero of="$DIR/dd.bin" bs=16M count=256 conv=fdatasync 2>&1 | tail -n 1 |
    sed 's/^/dd-fdatasync /'
rm -f "$DIR/dd.bin"
