#!/bin/sh
# CPU benchmarks (make bench; targets live here, never in tests):
#  1. the FP64 FMA peak of the cores, the direct form's limit and the join
#     kernel against both (build/bench/bench_cpu);
#  2. the cpu engine end to end, every instruction set the CPU has:
#     GFLOPS = 3 n^2 d / time (eps so large that nothing is cut short);
#  3. the grid index against brute force (the cpu engine with the index off)
#     on generated clouds (d = 3, 4, 8; N points, eps for S ~ 10) and on the
#     shared kitti scan.
# Wall-clock figures are best of REPS; on a machine shared with other work
# the CPU-time figures (user+sys of the process, less a run that only loads
# the data) say what the cores did while we had them.
# usage: scripts/bench_cpu.sh [BUILD]
# env:   REPS (default 3), N (cloud points, default 192000), BRUTE=0 skips
#        the brute-force runs of section 3, DATASETS (directory)
set -eu
cd "$(dirname "$0")/.." || exit 2
B=${1:-build}
reps=${REPS:-3}
npts=${N:-192000}
brute=${BRUTE:-1}
data=${DATASETS:-$(cd .. && pwd)/shared/datasets}
make --no-print-directory BUILD="$B" bench-cpu-build >/dev/null || exit 1
bin="$B/tcjoin"
tmp=$(mktemp -d /tmp/tcjoin-bench-cpu-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p" | head -n 1; }

# run SETUP CMD: one tcjoin process; sets kernel, total, pairs, sel, variant
# (of the run record) and cpu (user+sys seconds of the process)
run() {
    /usr/bin/time -f "%U %S" -o "$tmp/time" "$bin" --db "$tmp/s.db" --json -e "$1; $2" \
        >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    grep '"type":"run"' "$tmp/out" >"$tmp/rec"
    kernel=$(field kernel_s <"$tmp/rec")
    total=$(field time_s <"$tmp/rec")
    pairs=$(field pairs <"$tmp/rec")
    sel=$(field selectivity <"$tmp/rec")
    variant=$(sed -n 's/.*"variant":"\([^"]*\)".*/\1/p' "$tmp/rec")
    cpu=$(awk '{print $1 + $2}' "$tmp/time")
}
# setup_cpu SETUP: CPU seconds of loading alone (best of 2)
setup_cpu() {
    best=
    for _ in 1 2; do
        /usr/bin/time -f "%U %S" -o "$tmp/time" "$bin" --db "$tmp/s.db" -e "$1" >/dev/null 2>&1
        c=$(awk '{print $1 + $2}' "$tmp/time")
        best=$(awk -v a="$best" -v b="$c" 'BEGIN { print (a == "" || b < a) ? b : a }')
    done
    echo "$best"
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }

echo "## CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $(nproc) CPUs, $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
echo "### 1. Peak, form and kernel (build/bench/bench_cpu)"
echo
"$B/bench/bench_cpu" 0.5
peak=$("$B/bench/bench_cpu" 0.3 | awk -F'|' '/avx512|avx2/ { gsub(/ /, "", $3); sub(/\(.*/, "", $3); if ($3 + 0 > p) p = $3 + 0 } END { print p + 0 }')
echo
echo "### 2. The cpu engine, brute force (index off), count mode, every pair joined"
echo
echo "peak used below: $peak GFLOPS (the best FMA figure of section 1)"
echo
echo "| n x d | path | best wall s | GFLOPS (wall) | CPU s | GFLOPS (CPU time x $(nproc)) | of peak |"
echo "|---|---|---|---|---|---|---|"
for shape in "20000 128" "100000 32"; do
    set -- $shape
    n=$1 d=$2
    setup="gen uniform n=$n d=$d seed=1; eps 1000"
    base=$(setup_cpu "$setup")
    for path in scalar avx2 avx512; do
        case $path in
        avx2) grep -qw avx2 /proc/cpuinfo || continue ;;
        avx512) grep -qw avx512f /proc/cpuinfo || continue ;;
        esac
        # the big shape on the widest path and the scalar reference only
        if [ "$n" -gt 50000 ] && [ "$path" = avx2 ]; then continue; fi
        bw= bc=
        r=$reps
        [ "$path" = scalar ] && [ "$n" -gt 50000 ] && r=1
        for _ in $(seq "$r"); do
            run "$setup" "set cpu-simd $path; set cpu-index off; run cpu"
            bw=$(min "$bw" "$kernel")
            bc=$(min "$bc" "$(awk -v c="$cpu" -v b="$base" 'BEGIN { print c - b }')")
        done
        awk -v n="$n" -v d="$d" -v p="$path" -v w="$bw" -v c="$bc" -v pk="$peak" -v t="$(nproc)" 'BEGIN {
            f = 3 * n * n * d / 1e9
            printf "| %dx%d | %s | %.2f | %.1f | %.2f | %.1f | %.0f%% |\n", n, d, p, w, f / w, c, f / c * t, 100 * f / c * t / pk }'
    done
done
echo
echo "### 3. Grid index against brute force (cpu engine, count mode)"
echo
echo "| data | n | d | eps | S | index | brute s (wall) | brute CPU s | index s (wall, build included) | index CPU s | speedup (wall) | speedup (CPU) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
# name|setup|eps: clouds uniform in the unit cube, eps for S ~ 10 from the
# volume of the d-ball, times a factor for the neighbours lost at the
# cube's faces (measured at n = 192000: S 9.75, 9.23 and 5.88 without it);
# kitti at an eps measured to give S ~ 10
cases="cloud-d3|gen uniform n=$npts d=3 seed=3|$(awk -v n="$npts" 'BEGIN { print 1.008 * (10 * 3 / (4 * 3.141592653589793 * n)) ^ (1 / 3) }')
cloud-d4|gen uniform n=$npts d=4 seed=4|$(awk -v n="$npts" 'BEGIN { print 1.02 * (10 * 2 / (3.141592653589793 ^ 2 * n)) ^ (1 / 4) }')
cloud-d8|gen uniform n=$npts d=8 seed=8|$(awk -v n="$npts" 'BEGIN { print 1.069 * (10 * 24 / (3.141592653589793 ^ 4 * n)) ^ (1 / 8) }')
kitti|load $data/kitti_000000_xyzr.f32 format=raw dtype=f32 dim=4|0.2"
echo "$cases" | while IFS='|' read -r name setup eps; do
    base=$(setup_cpu "$setup")
    iw= ic=
    for _ in $(seq "$reps"); do
        run "$setup; eps $eps" "set cpu-index auto; run cpu"
        iw=$(min "$iw" "$total")
        ic=$(min "$ic" "$(awk -v c="$cpu" -v b="$base" 'BEGIN { print c - b }')")
    done
    ipairs=$pairs ivar=$(echo "$variant" | sed -n 's/.*\(grid k=[0-9]* ([0-9]* cells)\).*/\1/p')
    [ -n "$ivar" ] || ivar="not used"
    n=$(field n <"$tmp/rec") d=$(field d <"$tmp/rec")
    bw=- bc=- sw=- sc=-
    if [ "$brute" != 0 ]; then
        run "$setup; eps $eps" "set cpu-index off; run cpu"
        [ "$pairs" = "$ipairs" ] || { echo "bench_cpu: $name: index $ipairs pairs, brute $pairs" >&2; exit 1; }
        bw=$(awk -v t="$total" 'BEGIN { printf "%.2f", t }')
        bc=$(awk -v c="$cpu" -v b="$base" 'BEGIN { printf "%.2f", c - b }')
        sw=$(awk -v a="$bw" -v b="$iw" 'BEGIN { printf "%.0fx", a / b }')
        sc=$(awk -v a="$bc" -v b="$ic" 'BEGIN { printf "%.0fx", a / (b > 0.005 ? b : 0.005) }')
    fi
    printf "| %s | %s | %s | %.4g | %.2f | %s | %s | %s | %.3f | %.2f | %s | %s |\n" "$name" "$n" "$d" \
        "$eps" "$sel" "$ivar" "$bw" "$bc" "$iw" "$ic" "$sw" "$sc"
done
